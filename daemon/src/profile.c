/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.c - reads and validates a YAML profile (docs/profile.md).
 *
 * Each mapping of a profile (the profile, a target, its task, its adaptive settings) is a
 * table of its keys below, walked by yamlmap_walk(); the rules that involve several keys
 * of a target are checked after its walk, each in a small function of its own.
 */
#include "profile.h"
#include "buffering.h"
#include "softirqd.h"
#include "target_kind.h"
#include "units.h"
#include "yamlmap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROFILE_SIZE_MAX (1 << 20)	/* a profile is a small hand-written file */
#define IFACE_NAME_MAX 15		/* IFNAMSIZ - 1 */

static bool valid_target_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= TARGET_NAME_MAX)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* ---- Handlers: each reads one kind of value into the field its entry names ---- */

static int on_interface(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what)
{
	int rc = yamlmap_on_string(c, k, key, val, obj, what);
	const char *s = rc ? NULL : *(char **)yamlmap_field(obj, k);

	if (s && (strlen(s) > IFACE_NAME_MAX || strpbrk(s, "/ \t:") || !strcmp(s, ".") ||
		  !strcmp(s, "..")))
		rc = yamlmap_error(c, val, "%s: '%s' is not a network interface name (at most 15 "
				   "characters, no '/', ':' or blanks)", what, s);
	return rc;
}

static int on_driver(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		     yaml_node_t *val, void *obj, const char *what)
{
	int rc = yamlmap_on_string(c, k, key, val, obj, what);
	const char *s = rc ? NULL : *(char **)yamlmap_field(obj, k);

	if (s && strchr(s, '/'))
		rc = yamlmap_error(c, val, "%s: '%s' is not a driver name (no '/')", what, s);
	return rc;
}

static int on_cgroup(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		     yaml_node_t *val, void *obj, const char *what)
{
	int rc = yamlmap_on_string(c, k, key, val, obj, what);
	const char *s = rc ? NULL : *(char **)yamlmap_field(obj, k);

	if (s && s[0] != '/')
		rc = yamlmap_error(c, val, "%s: '%s' must be an absolute cgroup v2 path "
				   "starting with /", what, s);
	return rc;
}

/* A duration that will be a DL runtime: at least the kernel's minimum. */
static int on_runtime(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what)
{
	uint64_t *ns = yamlmap_field(obj, k);
	int rc = yamlmap_get_duration(c, val, what, ns);

	if (!rc && *ns < DLCHECK_RUNTIME_MIN_NS)
		rc = yamlmap_error(c, val, "%s: %s is below the kernel's minimum runtime of "
				   "1024ns", what, yamlmap_scalar(val));
	return rc;
}

static int on_gain(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what)
{
	double *gain = yamlmap_field(obj, k);
	int rc = yamlmap_get_double(c, val, what, gain);

	if (!rc && !(*gain > 0 && *gain <= 1))
		rc = yamlmap_error(c, val, "%s: %s is out of range: 0 < gain <= 1", what,
				   yamlmap_scalar(val));
	return rc;
}

static int on_version(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what)
{
	unsigned long long v;
	int rc = yamlmap_get_uint(c, val, what, 0, INT32_MAX, &v);

	if (!rc && v != 1)
		rc = yamlmap_error(c, val, "%s: %llu is not supported: this irqresd reads "
				   "version 1", what, v);
	return rc;
}

/* The same into an enum target_mode: MODE_STATIC or MODE_ADAPTIVE, in that order. */
static int on_mode(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what)
{
	int pick, rc = yamlmap_choose(c, k, val, what, &pick);

	if (!rc)
		*(enum target_mode *)yamlmap_field(obj, k) = pick ? MODE_ADAPTIVE : MODE_STATIC;
	return rc;
}

/* ---- The tables ---- */

#define TARGET_FIELD(f) offsetof(struct target, f)

static const struct yamlmap_duration_rule above_zero = { 1, "must be more than 0" };
static const struct yamlmap_duration_rule at_least_1us = { 1000, "must be at least 1us" };
static const struct yamlmap_range buffer_range = { 1, UINT32_MAX };
static const struct yamlmap_range window_range = { 1, PROFILE_ADAPTIVE_WINDOW_MAX };
static const struct yamlmap_int_list irq_rule = { 0, INT32_MAX, TARGET_FIELD(n_irqs) };
static const struct yamlmap_int_list pid_rule = { 1, INT32_MAX, TARGET_FIELD(n_pids) };
static const struct yamlmap_choice admission_choice = { "a choice", { "keep", "disable" } };
static const struct yamlmap_choice drift_choice = { "a choice", { "reapply", "report" } };
static const struct yamlmap_choice enforcement_choice = { "a choice", { "keep", "hrtick" } };
static const struct yamlmap_choice mode_choice = { "a mode", { "static", "adaptive" } };

_Static_assert(sizeof(pid_t) == sizeof(int), "task.pid is read as an int list");
_Static_assert(sizeof(unsigned int) == sizeof(uint32_t), "adaptive.window is a u32");

/* The fewest characters a name matched by fnmatch glob @g has ('*' none, '?' and a
 * bracket expression one, a backslash escape one). */
static size_t glob_min_len(const char *g)
{
	size_t n = 0;

	for (const char *p = g; *p; p++) {
		if (*p == '*')
			continue;
		n++;
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '[') {
			const char *q = p + 1 + (p[1] == '!' || p[1] == '^');

			q = strchr(q + (*q == ']'), ']');
			if (q)
				p = q;
		}
	}
	return n;
}

/* A comm glob of @globs that no thread name (at most COMM_MAX - 1 characters: the
 * kernel cuts longer ones) can match: an error at @node naming it. */
static int comm_globs_matchable(struct yamlmap *c, yaml_node_t *node, const char *where,
				const struct globs *globs)
{
	for (size_t i = 0; i < globs->n; i++)
		if (glob_min_len(globs->v[i]) > COMM_MAX - 1)
			return yamlmap_error(c, node, "%s.comm: '%s' can never match: the kernel "
					     "keeps at most %d characters of a thread's name (use "
					     "its first %d)", where, globs->v[i], COMM_MAX - 1,
					     COMM_MAX - 1);
	return 0;
}

static int task_done(struct yamlmap *c, const struct yamlmap_mapping *m, yaml_node_t *map,
		     void *obj, const char *where)
{
	const struct target *t = obj;
	char keys[64];
	int rc;

	/* init and irqresd itself are never reserved (match.c skips them in any case) */
	for (size_t i = 0; i < t->n_pids; i++)
		if (t->pids[i] == 1)
			return yamlmap_error(c, yamlmap_value(c, map, "pid"), "%s.pid: pid 1 is "
					     "init: irqres never changes its scheduling", where);
	for (size_t i = 0; i < t->task_comm.n; i++)
		if (!strcmp(t->task_comm.v[i], IRQRES_DAEMON_COMM))
			return yamlmap_error(c, yamlmap_value(c, map, "comm"), "%s.comm: '%s' is "
					     "irqresd itself: irqres never reserves its own "
					     "threads", where, t->task_comm.v[i]);
	rc = comm_globs_matchable(c, yamlmap_value(c, map, "comm"), where, &t->task_comm);
	if (rc)
		return rc;
	if (t->task_comm.n || t->pids || t->task_cgroup)
		return 0;
	return yamlmap_error(c, map, "%s: give at least one of %s", where,
			     yamlmap_key_list(m->keys, keys, sizeof(keys)));
}

static const struct yamlmap_int_list task_comm_rule = { 0, 0, TARGET_FIELD(task_comm.n) };

static const struct yamlmap_mapping task_mapping = {
	.expect = "a mapping of comm, pid and cgroup",
	.keys = (const struct yamlmap_key[]){
		{ "comm", YAML_NO_NODE, yamlmap_on_string_list, TARGET_FIELD(task_comm.v),
		  &task_comm_rule },
		{ "pid", YAML_NO_NODE, yamlmap_on_int_list, TARGET_FIELD(pids), &pid_rule },
		{ "cgroup", YAML_SCALAR_NODE, on_cgroup, TARGET_FIELD(task_cgroup), NULL },
		{ 0 },
	},
	.done = task_done,
};

static const struct yamlmap_int_list serves_pid_rule = { 1, INT32_MAX,
							  TARGET_FIELD(serves.n_pids) };
static const struct yamlmap_int_list serves_comm_rule = { 0, 0, TARGET_FIELD(serves.comm.n) };
static const struct yamlmap_int_list port_rule = { 1, 65535, TARGET_FIELD(serves.n_ports) };

static int serves_done(struct yamlmap *c, const struct yamlmap_mapping *m, yaml_node_t *map,
		       void *obj, const char *where)
{
	struct target *t = obj;
	char keys[64];
	int rc = comm_globs_matchable(c, yamlmap_value(c, map, "comm"), where,
				      &t->serves.comm);

	if (rc)
		return rc;
	if (t->serves.comm.n || t->serves.pids || t->serves.cgroup || t->serves.ports) {
		t->serves.given = true;
		return 0;
	}
	return yamlmap_error(c, map, "%s: give at least one of %s", where,
			     yamlmap_key_list(m->keys, keys, sizeof(keys)));
}

static const struct yamlmap_mapping serves_mapping = {
	.expect = "a mapping of comm, pid, cgroup and port",
	.keys = (const struct yamlmap_key[]){
		{ "comm", YAML_NO_NODE, yamlmap_on_string_list, TARGET_FIELD(serves.comm.v),
		  &serves_comm_rule },
		{ "pid", YAML_NO_NODE, yamlmap_on_int_list, TARGET_FIELD(serves.pids),
		  &serves_pid_rule },
		{ "cgroup", YAML_SCALAR_NODE, on_cgroup, TARGET_FIELD(serves.cgroup), NULL },
		{ "port", YAML_NO_NODE, yamlmap_on_int_list, TARGET_FIELD(serves.ports),
		  &port_rule },
		{ 0 },
	},
	.done = serves_done,
};

static const struct yamlmap_mapping adaptive_mapping = {
	.expect = "a mapping",
	.keys = (const struct yamlmap_key[]){
		{ "sample", YAML_SCALAR_NODE, yamlmap_on_duration, TARGET_FIELD(adaptive.sample_ns),
		  &at_least_1us },
		{ "gain", YAML_SCALAR_NODE, on_gain, TARGET_FIELD(adaptive.gain), NULL },
		{ "window", YAML_SCALAR_NODE, yamlmap_on_u32, TARGET_FIELD(adaptive.window),
		  &window_range },
		{ "default_job", YAML_SCALAR_NODE, yamlmap_on_duration,
		  TARGET_FIELD(adaptive.default_job_ns), &above_zero },
		{ "min_runtime", YAML_SCALAR_NODE, on_runtime,
		  TARGET_FIELD(adaptive.min_runtime_ns), NULL },
		{ "max_runtime", YAML_SCALAR_NODE, on_runtime,
		  TARGET_FIELD(adaptive.max_runtime_ns), NULL },
		{ "hysteresis", YAML_SCALAR_NODE, yamlmap_on_duration,
		  TARGET_FIELD(adaptive.hysteresis_ns), NULL },
		{ 0 },
	},
};

/* The names of per-CPU soft IRQ kthreads (softirqd.h): a name or a list into a mask. */
static int on_softirqd_kthreads(struct yamlmap *c, const struct yamlmap_key *k,
				yaml_node_t *key, yaml_node_t *val, void *obj, const char *what)
{
	unsigned int *mask = yamlmap_field(obj, k);
	yaml_node_item_t *start;
	char known[64];
	size_t count;
	int rc = yamlmap_one_or_list(c, val, what, "a kthread name or a list of them", &start,
				     &count);

	if (rc)
		return rc;
	softirqd_list(SOFTIRQD_ALL, known, sizeof(known));
	for (size_t i = 0; i < count; i++) {
		yaml_node_t *elem = start ? yamlmap_node(c, start[i]) : val;
		const char *name = NULL;
		int kind;

		rc = yamlmap_get_text(c, elem, what, &name);
		if (rc)
			return rc;
		kind = softirqd_lookup(name);
		if (kind < 0)
			return yamlmap_error(c, elem, "%s: '%s' is not a per-CPU soft IRQ kthread "
					     "(one of %s; the CPU goes in cpu)", what, name, known);
		*mask |= 1u << kind;
	}
	return 0;
}

static const struct yamlmap_int_list softirqd_cpu_rule = { 0, CPU_SETSIZE - 1,
							    TARGET_FIELD(n_softirqd_cpus) };

static int softirq_done(struct yamlmap *c, const struct yamlmap_mapping *m, yaml_node_t *map,
			void *obj, const char *where)
{
	struct target *t = obj;
	char keys[64];

	if (!t->softirqd_mask && !t->softirqd_cpus)
		return yamlmap_error(c, map, "%s: give at least one of %s", where,
				     yamlmap_key_list(m->keys, keys, sizeof(keys)));
	if (!t->softirqd_mask)
		t->softirqd_mask = SOFTIRQD_ALL;
	return 0;
}

static const struct yamlmap_mapping softirq_mapping = {
	.expect = "a mapping of kthreads and cpu",
	.keys = (const struct yamlmap_key[]){
		{ "kthreads", YAML_NO_NODE, on_softirqd_kthreads, TARGET_FIELD(softirqd_mask),
		  NULL },
		{ "cpu", YAML_NO_NODE, yamlmap_on_int_list, TARGET_FIELD(softirqd_cpus),
		  &softirqd_cpu_rule },
		{ 0 },
	},
	.done = softirq_done,
};

/* A target's keys, by index into its table (and its struct yamlmap_given array). */
enum target_key {
	T_NAME, T_INTERFACE, T_IRQ, T_ACTION, T_DRIVER, T_SECONDARY, T_TASK, T_RUNTIME,
	T_PERIOD, T_DEADLINE, T_MIN_INTERARRIVAL, T_BUFFER, T_MODE, T_ADAPTIVE, T_TAKE_OVER,
	T_SERVES, T_NAPI, T_THREADED_NAPI, T_WITH_NAPI, T_SOFTIRQ, T_NKEYS
};

static const struct yamlmap_key target_keys[T_NKEYS + 1] = {
	[T_NAME] = { "name", YAML_SCALAR_NODE, yamlmap_on_skip, 0, NULL },
	[T_INTERFACE] = { "interface", YAML_SCALAR_NODE, on_interface,
			  TARGET_FIELD(interface), NULL },
	[T_IRQ] = { "irq", YAML_NO_NODE, yamlmap_on_int_list, TARGET_FIELD(irqs), &irq_rule },
	[T_ACTION] = { "action", YAML_SCALAR_NODE, yamlmap_on_string,
		       TARGET_FIELD(action_glob), NULL },
	[T_DRIVER] = { "driver", YAML_SCALAR_NODE, on_driver, TARGET_FIELD(driver), NULL },
	[T_SECONDARY] = { "secondary", YAML_SCALAR_NODE, yamlmap_on_bool,
			  TARGET_FIELD(secondary), NULL },
	[T_TASK] = { "task", YAML_MAPPING_NODE, NULL, 0, &task_mapping },
	[T_RUNTIME] = { "runtime", YAML_SCALAR_NODE, yamlmap_on_duration,
			TARGET_FIELD(runtime_ns), NULL },
	[T_PERIOD] = { "period", YAML_SCALAR_NODE, yamlmap_on_duration,
		       TARGET_FIELD(period_ns), NULL },
	[T_DEADLINE] = { "deadline", YAML_SCALAR_NODE, yamlmap_on_duration,
			 TARGET_FIELD(deadline_ns), NULL },
	[T_MIN_INTERARRIVAL] = { "min_interarrival", YAML_SCALAR_NODE, yamlmap_on_duration,
				 TARGET_FIELD(min_interarrival_ns), &above_zero },
	[T_BUFFER] = { "buffer", YAML_SCALAR_NODE, yamlmap_on_u32, TARGET_FIELD(buffer),
		       &buffer_range },
	[T_MODE] = { "mode", YAML_SCALAR_NODE, on_mode, TARGET_FIELD(mode), &mode_choice },
	[T_ADAPTIVE] = { "adaptive", YAML_MAPPING_NODE, NULL, 0, &adaptive_mapping },
	[T_TAKE_OVER] = { "take_over", YAML_SCALAR_NODE, yamlmap_on_bool,
			  TARGET_FIELD(take_over), NULL },
	[T_SERVES] = { "serves", YAML_MAPPING_NODE, NULL, 0, &serves_mapping },
	[T_NAPI] = { "napi", YAML_SCALAR_NODE, on_interface, TARGET_FIELD(napi), NULL },
	[T_THREADED_NAPI] = { "threaded_napi", YAML_SCALAR_NODE, yamlmap_on_bool,
			      TARGET_FIELD(threaded_napi), NULL },
	[T_WITH_NAPI] = { "with_napi", YAML_SCALAR_NODE, yamlmap_on_bool,
			  TARGET_FIELD(with_napi), NULL },
	[T_SOFTIRQ] = { "softirq", YAML_MAPPING_NODE, NULL, 0, &softirq_mapping },
	[T_NKEYS] = { 0 },
};

static const struct yamlmap_mapping target_mapping = { .keys = target_keys };

enum root_key { R_VERSION, R_ADMISSION, R_DRIFT, R_ENFORCEMENT, R_TARGETS, R_NKEYS };

static const struct yamlmap_key root_keys[R_NKEYS + 1] = {
	[R_VERSION] = { "version", YAML_SCALAR_NODE, on_version, 0, NULL },
	[R_ADMISSION] = { "admission_control", YAML_SCALAR_NODE, yamlmap_on_choice,
			  offsetof(struct profile, admission_off), &admission_choice },
	[R_DRIFT] = { "drift", YAML_SCALAR_NODE, yamlmap_on_choice,
		      offsetof(struct profile, drift_report), &drift_choice },
	[R_ENFORCEMENT] = { "enforcement", YAML_SCALAR_NODE, yamlmap_on_choice,
			    offsetof(struct profile, hrtick), &enforcement_choice },
	[R_TARGETS] = { "targets", YAML_SEQUENCE_NODE, yamlmap_on_skip, 0, NULL },
	[R_NKEYS] = { 0 },
};

static const struct yamlmap_mapping root_mapping = { .keys = root_keys };

/* ---- Targets: the rules that involve several keys ---- */

static int missing_key(struct yamlmap *c, yaml_node_t *map, const char *where, const char *key)
{
	return yamlmap_error(c, map, "%s: missing required key '%s'", where, key);
}

static int line_of(const yaml_node_t *node)
{
	return node ? (int)node->start_mark.line + 1 : 0;
}

/* The IRQ selector given first in the file, or T_NKEYS. */
static enum target_key first_irq_selector(const struct yamlmap_given *g)
{
	static const enum target_key sel[] = { T_INTERFACE, T_IRQ, T_ACTION, T_DRIVER };
	enum target_key first = T_NKEYS;

	for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++)
		if (g[sel[i]].key && (first == T_NKEYS || g[sel[i]].key->start_mark.index <
				      g[first].key->start_mark.index))
			first = sel[i];
	return first;
}

/* The second of two selectors of different kinds, named with the first. */
static int two_kinds(struct yamlmap *c, const struct yamlmap_given *g, enum target_key a,
		     enum target_key b, const char *where)
{
	if (g[a].key->start_mark.index > g[b].key->start_mark.index) {
		enum target_key x = a;

		a = b;
		b = x;
	}
	return yamlmap_error(c, g[b].key, "%s: %s cannot be combined with %s (line %d): a "
			     "target selects IRQ threads, tasks, NAPI kthreads or soft IRQ "
			     "kthreads, one kind only", where, target_keys[b].key,
			     target_keys[a].key, line_of(g[a].key));
}

/* The kind a given selector key makes. */
static enum target_kind kind_of_key(enum target_key k)
{
	switch (k) {
	case T_TASK:
		return TARGET_TASK;
	case T_NAPI:
		return TARGET_NAPI;
	case T_SOFTIRQ:
		return TARGET_SOFTIRQ;
	default:
		return TARGET_IRQ;
	}
}

/* IRQ threads, tasks, NAPI kthreads or soft IRQ kthreads: one kind of selector. */
static int check_kind(struct yamlmap *c, yaml_node_t *map, struct target *t,
		      const struct yamlmap_given *g, const char *where)
{
	const enum target_key sel[] = { first_irq_selector(g), T_TASK, T_NAPI, T_SOFTIRQ };
	enum target_key first = T_NKEYS;
	yaml_node_t *cpu;

	for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++) {
		if (sel[i] == T_NKEYS || !g[sel[i]].key)
			continue;
		if (first != T_NKEYS)
			return two_kinds(c, g, first, sel[i], where);
		first = sel[i];
	}
	if (first == T_NKEYS)
		return yamlmap_error(c, map, "%s: no selector: give interface, irq, action or "
				     "driver (IRQ threads), task (user threads), napi (an "
				     "interface's NAPI kthreads) or softirq (per-CPU soft IRQ "
				     "kthreads)", where);
	t->kind = kind_of_key(first);
	if (t->kind != TARGET_IRQ && g[T_SECONDARY].key)
		return yamlmap_error(c, g[T_SECONDARY].key, "%s: secondary applies to IRQ "
				     "threads only, not to a %s target", where,
				     target_kind_of(t)->name);
	if (t->threaded_napi && !t->interface && !t->napi)
		return yamlmap_error(c, g[T_THREADED_NAPI].key, "%s: threaded_napi switches an "
				     "interface: it needs interface or napi in the target", where);
	if (t->with_napi && !t->interface)
		return yamlmap_error(c, g[T_WITH_NAPI].key, "%s: with_napi takes the NAPI "
				     "kthreads of the target's interface: it needs interface (a "
				     "napi target takes them alone)", where);
	t->interface_line = line_of(g[T_INTERFACE].key);
	t->irq_line = line_of(g[T_IRQ].key);
	t->driver_line = line_of(g[T_DRIVER].key);
	t->napi_line = line_of(g[T_NAPI].key);
	t->threaded_napi_line = line_of(g[T_THREADED_NAPI].key);
	t->with_napi_line = line_of(g[T_WITH_NAPI].key);
	cpu = g[T_SOFTIRQ].val ? yamlmap_value(c, g[T_SOFTIRQ].val, "cpu") : NULL;
	t->softirq_line = line_of(cpu ? cpu : g[T_SOFTIRQ].key);
	return 0;
}

/* A target with serves: and no reservation: its threads' priority follows whom they serve
 * (couple.h); the keys that shape a reservation have nothing to shape. */
static int check_coupled(struct yamlmap *c, struct target *t, const struct yamlmap_given *g,
			 const char *where)
{
	static const enum target_key dl_only[] = { T_MIN_INTERARRIVAL, T_BUFFER, T_MODE,
						   T_ADAPTIVE, T_TAKE_OVER };

	for (size_t i = 0; i < sizeof(dl_only) / sizeof(dl_only[0]); i++)
		if (g[dl_only[i]].key)
			return yamlmap_error(c, g[dl_only[i]].key, "%s: %s applies to a "
					     "reservation: give runtime and period too, or drop it "
					     "(without them the threads' SCHED_FIFO priority follows "
					     "the processes they serve)", where,
					     target_keys[dl_only[i]].key);
	t->coupled = true;
	return 0;
}

/* runtime <= deadline <= period, runtime above the kernel's minimum. */
static int check_times(struct yamlmap *c, yaml_node_t *map, struct target *t,
		       const struct yamlmap_given *g, const char *where)
{
	char q[UNITS_FMT_LEN], d[UNITS_FMT_LEN], p[UNITS_FMT_LEN];

	if (t->serves.given && !g[T_RUNTIME].val && !g[T_PERIOD].val && !g[T_DEADLINE].val)
		return check_coupled(c, t, g, where);
	if (!g[T_RUNTIME].val)
		return missing_key(c, map, where, "runtime");
	if (!g[T_PERIOD].val)
		return missing_key(c, map, where, "period");
	if (!g[T_DEADLINE].val)
		t->deadline_ns = t->period_ns;
	units_format_duration(t->runtime_ns, q, sizeof(q));
	units_format_duration(t->deadline_ns, d, sizeof(d));
	units_format_duration(t->period_ns, p, sizeof(p));
	if (t->runtime_ns < DLCHECK_RUNTIME_MIN_NS)
		return yamlmap_error(c, g[T_RUNTIME].val, "%s: runtime %s is below the kernel's "
				     "minimum of 1024ns", where, q);
	if (t->deadline_ns > t->period_ns)
		return yamlmap_error(c, g[T_DEADLINE].val, "%s: deadline %s exceeds the period %s "
				     "(runtime <= deadline <= period)", where, d, p);
	if (t->runtime_ns > t->deadline_ns)
		return yamlmap_error(c, g[T_RUNTIME].val, "%s: runtime %s exceeds the %s %s "
				     "(runtime <= deadline <= period)", where, q,
				     g[T_DEADLINE].val ? "deadline" : "period", d);
	return 0;
}

/* min_interarrival and buffer: IRQ targets only, and the buffering check. */
static int check_device(struct yamlmap *c, struct target *t, const struct yamlmap_given *g,
			const char *where)
{
	yaml_node_t *dev = g[T_MIN_INTERARRIVAL].val ? g[T_MIN_INTERARRIVAL].val
						     : g[T_BUFFER].val;
	unsigned long long delayed;
	char q[UNITS_FMT_LEN];

	if (dev && !target_kind_of(t)->device)
		return yamlmap_error(c, dev, "%s: min_interarrival and buffer describe a device: "
				     "IRQ and napi targets only, not a %s target", where,
				     target_kind_of(t)->name);
	if (profile_buffer_check(t, t->runtime_ns, t->period_ns) != PROFILE_BUFFER_VIOLATED)
		return 0;
	delayed = (t->period_ns - t->runtime_ns) / t->min_interarrival_ns;
	units_format_duration(t->period_ns - (uint64_t)t->buffer * t->min_interarrival_ns, q,
			      sizeof(q));
	return yamlmap_error(c, g[T_BUFFER].val, "%s: buffering check fails: (period - runtime) "
			     "/ min_interarrival = %llu interrupts may wait, the device holds "
			     "only buffer = %u; raise runtime to more than %s or shorten the "
			     "period", where, delayed, t->buffer, q);
}

/* The adaptive clamps: below the deadline, and min below max. */
static int check_adaptive(struct yamlmap *c, struct target *t, const struct yamlmap_given *g,
			  const char *where)
{
	yaml_node_t *min_node = yamlmap_value(c, g[T_ADAPTIVE].val, "min_runtime");
	yaml_node_t *max_node = yamlmap_value(c, g[T_ADAPTIVE].val, "max_runtime");
	char a[UNITS_FMT_LEN], b[UNITS_FMT_LEN];
	uint64_t lo, hi;

	if (g[T_ADAPTIVE].key && t->mode != MODE_ADAPTIVE)
		return yamlmap_error(c, g[T_ADAPTIVE].key, "%s: adaptive settings need mode: "
				     "adaptive", where);
	if (t->mode != MODE_ADAPTIVE)
		return 0;
	lo = profile_adaptive_min_runtime(t, t->period_ns);
	hi = profile_adaptive_max_runtime(t, t->period_ns);
	if (max_node && t->adaptive.max_runtime_ns > t->deadline_ns)
		return yamlmap_error(c, max_node, "%s: adaptive.max_runtime %s exceeds the "
				     "deadline %s", where, units_format_duration(
					     t->adaptive.max_runtime_ns, a, sizeof(a)),
				     units_format_duration(t->deadline_ns, b, sizeof(b)));
	if (lo <= hi)
		return 0;
	units_format_duration(lo, a, sizeof(a));
	units_format_duration(hi, b, sizeof(b));
	if (min_node && lo == t->adaptive.min_runtime_ns)
		return yamlmap_error(c, min_node, "%s: adaptive.min_runtime %s is above "
				     "adaptive.max_runtime %s", where, a, b);
	return yamlmap_error(c, max_node ? max_node : g[T_ADAPTIVE].key,
			     "%s: adaptive.max_runtime %s is below the buffering bound: the "
			     "budget must stay above period - buffer * min_interarrival, at "
			     "least %s", where, b, a);
}

static void target_defaults(struct target *t, yaml_node_t *node)
{
	t->line = (int)node->start_mark.line + 1;
	t->col = (int)node->start_mark.column + 1;
	t->secondary = true;
	t->mode = MODE_STATIC;
	t->adaptive = (struct adaptive_cfg){
		.sample_ns = PROFILE_ADAPTIVE_SAMPLE_NS,
		.gain = PROFILE_ADAPTIVE_GAIN,
		.window = PROFILE_ADAPTIVE_WINDOW,
		.default_job_ns = PROFILE_ADAPTIVE_DEFAULT_JOB_NS,
		.hysteresis_ns = PROFILE_ADAPTIVE_HYSTERESIS_NS,
	};
}

/* The target's name, read first: the messages about its other keys name it. */
static int target_name(struct yamlmap *c, yaml_node_t *node, size_t index, struct target *t)
{
	yaml_node_t *val = yamlmap_value(c, node, "name");
	char where[TARGET_NAME_MAX + 32];
	const char *name = NULL;
	int rc;

	snprintf(where, sizeof(where), "targets[%zu]", index);
	if (!val)
		return missing_key(c, node, where, "name");
	snprintf(where, sizeof(where), "targets[%zu]: name", index);
	rc = yamlmap_get_text(c, val, where, &name);
	if (rc)
		return rc;
	if (!valid_target_name(name))
		return yamlmap_error(c, val, "%s: '%s' is not a valid target name "
				     "([A-Za-z0-9_.-], 1 to 63 characters)", where, name);
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

static int parse_target(struct yamlmap *c, yaml_node_t *node, size_t index, struct target *t)
{
	struct yamlmap_given g[T_NKEYS] = { 0 };
	char where[TARGET_NAME_MAX + 32], prefix[TARGET_NAME_MAX + 40];
	int rc;

	target_defaults(t, node);
	if (node->type != YAML_MAPPING_NODE)
		return yamlmap_error(c, node, "targets[%zu]: expected a mapping (name, runtime, "
				     "period, ...), got %s", index, yamlmap_kind(node));
	rc = target_name(c, node, index, t);
	if (rc)
		return rc;
	snprintf(where, sizeof(where), "target '%s'", t->name);
	snprintf(prefix, sizeof(prefix), "%s: ", where);
	rc = yamlmap_walk(c, node, &target_mapping, t, where, prefix, g);
	if (!rc)
		rc = check_kind(c, node, t, g, where);
	if (!rc)
		rc = check_times(c, node, t, g, where);
	if (!rc)
		rc = check_device(c, t, g, where);
	if (!rc)
		rc = check_adaptive(c, t, g, where);
	return rc;
}

/* Refuses two targets of one name, naming the later one (sorted: no quadratic check). */
static int check_unique_names(struct yamlmap *c, yaml_node_t *list, struct profile *prof)
{
	size_t i, dup = 0, first = 0;
	struct yamlmap_name *v;
	int rc = 0;

	if (prof->n_targets < 2)
		return 0;
	v = malloc(prof->n_targets * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < prof->n_targets; i++)
		v[i] = (struct yamlmap_name){ prof->targets[i].name, i };
	if (yamlmap_first_repeat(v, prof->n_targets, &dup, &first))
		rc = yamlmap_error(c, yamlmap_node(c, list->data.sequence.items.start[dup]),
				   "target '%s': duplicate name (first used at line %d)",
				   prof->targets[dup].name, prof->targets[first].line);
	free(v);
	return rc;
}

static int parse_targets(struct yamlmap *c, yaml_node_t *node, struct profile *prof)
{
	yaml_node_item_t *item;
	size_t count, i, ids = 0;
	int rc;

	if (node->type != YAML_SEQUENCE_NODE)
		return yamlmap_error(c, node, "targets: expected a list of targets, got %s",
				     yamlmap_kind(node));
	count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	if (!count)
		return yamlmap_error(c, node, "targets: the list is empty: give at least one "
				     "target");
	if (count > PROFILE_TARGETS_MAX)
		return yamlmap_error(c, node, "targets: %zu targets, at most %d in one profile",
				     count, PROFILE_TARGETS_MAX);
	prof->targets = calloc(count, sizeof(*prof->targets));
	if (!prof->targets)
		return -ENOMEM;
	for (item = node->data.sequence.items.start, i = 0; i < count; item++, i++) {
		struct target *t = &prof->targets[i];

		prof->n_targets = i + 1;	/* so that profile_free() frees a partial one */
		rc = parse_target(c, yamlmap_node(c, *item), i, t);
		if (rc)
			return rc;
		ids += t->n_irqs + t->n_pids + t->task_comm.n + t->serves.n_pids +
		       t->serves.comm.n + t->serves.n_ports + t->n_softirqd_cpus;
		if (ids > PROFILE_IDS_MAX)
			return yamlmap_error(c, yamlmap_node(c, *item), "target '%s': irq, pid, "
					     "comm, port and cpu entries: %zu in the profile up to "
					     "here, at most %d in one profile", t->name, ids,
					     PROFILE_IDS_MAX);
	}
	return check_unique_names(c, node, prof);
}

static int parse_root(struct yamlmap *c, struct profile *prof)
{
	yaml_node_t *root = yamlmap_root(c);
	struct yamlmap_given g[R_NKEYS] = { 0 };
	int rc;

	if (!root)
		return yamlmap_error_at(c, (yaml_mark_t){ 0 }, "the profile is empty: it needs "
					"version: 1 and targets");
	if (root->type != YAML_MAPPING_NODE)
		return yamlmap_error(c, root, "a profile is a mapping with version and targets, "
				     "got %s", yamlmap_kind(root));
	rc = yamlmap_walk(c, root, &root_mapping, prof, "profile", "", g);
	if (rc)
		return rc;
	if (!g[R_VERSION].val)
		return missing_key(c, root, "profile", "version");
	if (!g[R_TARGETS].val)
		return missing_key(c, root, "profile", "targets");
	return parse_targets(c, g[R_TARGETS].val, prof);
}

int profile_parse(const char *buf, size_t len, const char *name, struct profile *prof,
		  char *err, size_t errlen)
{
	struct yamlmap c;
	int rc;

	name = name ? name : "<string>";
	memset(prof, 0, sizeof(*prof));
	if (errlen)
		err[0] = '\0';
	rc = yamlmap_open(&c, buf, len, name, err, errlen);
	if (!rc)
		rc = parse_root(&c, prof);
	if (!rc)
		rc = yamlmap_expect_end(&c, "a profile file holds one document");
	yamlmap_close(&c);
	if (!rc) {
		prof->path = strdup(name);
		if (!prof->path)
			rc = -ENOMEM;
	}
	if (rc) {
		if (rc == -ENOMEM && errlen && !err[0])
			snprintf(err, errlen, "%s: out of memory", name);
		profile_free(prof);
	}
	return rc;
}

static int not_regular(const char *path, mode_t mode, char *err, size_t errlen)
{
	const char *what = S_ISFIFO(mode) ? " (a FIFO)" : S_ISDIR(mode) ? " (a directory)" :
			   S_ISCHR(mode) ? " (a character device)" :
			   S_ISBLK(mode) ? " (a block device)" : S_ISSOCK(mode) ? " (a socket)" : "";

	snprintf(err, errlen, "%s: not a regular file%s: a profile must be one", path, what);
	return -EINVAL;
}

int profile_load(const char *path, struct profile *prof, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd, rc;

	memset(prof, 0, sizeof(*prof));
	/*
	 * A FIFO or a device must not block the daemon (socket, hotplug, watchdog) in open()
	 * or read(): look before opening, open non-blocking, and look again at what opened.
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return not_regular(path, st.st_mode, err, errlen);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(-rc));
		goto out_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = not_regular(path, st.st_mode, err, errlen);
		goto out_fd;
	}
	if (st.st_size > PROFILE_SIZE_MAX) {
		rc = -EFBIG;
		snprintf(err, errlen, "%s: too large for a profile (%lld bytes, at most %d)", path,
			 (long long)st.st_size, PROFILE_SIZE_MAX);
		goto out_fd;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out_fd;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
			goto out_buf;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	rc = profile_parse(buf, got, path, prof, err, errlen);
out_buf:
	free(buf);
out_fd:
	close(fd);
	return rc;
}

static void target_free(struct target *t)
{
	free(t->interface);
	free(t->irqs);
	free(t->action_glob);
	free(t->driver);
	yamlmap_free_strings(t->task_comm.v, t->task_comm.n);
	free(t->pids);
	free(t->task_cgroup);
	yamlmap_free_strings(t->serves.comm.v, t->serves.comm.n);
	free(t->serves.pids);
	free(t->serves.cgroup);
	free(t->serves.ports);
	free(t->napi);
	free(t->softirqd_cpus);
}

void profile_free(struct profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		target_free(&prof->targets[i]);
	free(prof->targets);
	free(prof->path);
	memset(prof, 0, sizeof(*prof));
}

bool profile_has_coupled(const struct profile *prof)
{
	for (size_t i = 0; i < prof->n_targets; i++)
		if (prof->targets[i].coupled)
			return true;
	return false;
}

int profile_find_target(const struct profile *prof, const char *name)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		if (!strcmp(prof->targets[i].name, name))
			return (int)i;
	return -1;
}

enum profile_buffer_verdict profile_buffer_check(const struct target *t, uint64_t runtime_ns,
						 uint64_t period_ns)
{
	if (!t->min_interarrival_ns || !t->buffer)
		return PROFILE_BUFFER_UNKNOWN;
	return buffering_ok(runtime_ns, period_ns, t->min_interarrival_ns, t->buffer)
		       ? PROFILE_BUFFER_OK
		       : PROFILE_BUFFER_VIOLATED;
}

const char *profile_buffer_verdict_name(enum profile_buffer_verdict v)
{
	switch (v) {
	case PROFILE_BUFFER_OK:
		return "ok";
	case PROFILE_BUFFER_VIOLATED:
		return "violated";
	default:
		return "unknown";
	}
}

/* D keeps its ratio to T when the period changes at run time. */
static uint64_t deadline_for(const struct target *t, uint64_t period_ns)
{
	if (!t->period_ns || period_ns == t->period_ns)
		return t->deadline_ns;
	return (uint64_t)((unsigned __int128)t->deadline_ns * period_ns / t->period_ns);
}

uint64_t profile_adaptive_min_runtime(const struct target *t, uint64_t period_ns)
{
	uint64_t lo = t->adaptive.min_runtime_ns ? t->adaptive.min_runtime_ns : 1000;

	if (t->min_interarrival_ns && t->buffer) {
		uint64_t need = buffering_min_runtime(period_ns, t->min_interarrival_ns,
						      t->buffer);

		if (need > lo)
			lo = need;
	}
	return lo < DLCHECK_RUNTIME_MIN_NS ? DLCHECK_RUNTIME_MIN_NS : lo;
}

uint64_t profile_adaptive_max_runtime(const struct target *t, uint64_t period_ns)
{
	if (t->adaptive.max_runtime_ns)
		return t->adaptive.max_runtime_ns;
	return deadline_for(t, period_ns);
}
