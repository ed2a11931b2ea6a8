/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.c - reads and validates a YAML profile with libyaml's document API.
 *
 * The whole document is loaded first, then walked; every node keeps its marks, so an
 * error anywhere can point at the line and column of the offending key or value.
 */
#include "profile.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define PROFILE_SIZE_MAX (1 << 20)	/* a profile is a small hand-written file */
#define IFACE_NAME_MAX 15		/* IFNAMSIZ - 1 */

struct pctx {
	const char *name;		/* the file name used in messages */
	const char *buf;		/* the text, to place reader errors */
	size_t len;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

/* Where one key of a target was given, for messages about combinations of keys. */
struct target_keys {
	yaml_node_t *node;		/* the target's mapping */
	yaml_node_t *name, *runtime, *period, *deadline, *min_interarrival, *buffer;
	yaml_node_t *mode, *adaptive, *task, *secondary;
	yaml_node_t *irq_sel;		/* the first IRQ selector given */
	const char *irq_sel_key;
	yaml_node_t *min_runtime, *max_runtime;
};

static int errat_mark(struct pctx *c, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int errat(struct pctx *c, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int verrat(struct pctx *c, yaml_mark_t mark, const char *fmt, va_list ap)
{
	int n = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->name, mark.line + 1,
			 mark.column + 1);

	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	return -EINVAL;
}

static int errat_mark(struct pctx *c, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verrat(c, mark, fmt, ap);
	va_end(ap);
	return rc;
}

static int errat(struct pctx *c, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verrat(c, node->start_mark, fmt, ap);
	va_end(ap);
	return rc;
}

static yaml_node_t *node_at(struct pctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

static const char *scalar(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

static bool is_plain(const yaml_node_t *node)
{
	return node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* A plain empty scalar, "~" or "null": a key given without a value. */
static bool is_null(const yaml_node_t *node)
{
	const char *s;

	if (!is_plain(node))
		return false;
	s = scalar(node);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static const char *node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return is_null(node) ? "no value" : "a scalar";
	}
}

/* The value of a scalar that must carry text. */
static int get_text(struct pctx *c, yaml_node_t *node, const char *what, const char **out)
{
	if (node->type != YAML_SCALAR_NODE || is_null(node))
		return errat(c, node, "%s: expected a string, got %s", what, node_kind(node));
	*out = scalar(node);
	return 0;
}

static int get_string(struct pctx *c, yaml_node_t *node, const char *what, char **out)
{
	const char *s = NULL;
	int rc = get_text(c, node, what, &s);

	if (rc)
		return rc;
	if (!*s)
		return errat(c, node, "%s: must not be empty", what);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int get_duration(struct pctx *c, yaml_node_t *node, const char *what, uint64_t *ns)
{
	const char *s = NULL, *why;
	int rc = get_text(c, node, what, &s);

	if (rc)
		return errat(c, node, "%s: expected a duration such as 2ms, got %s", what,
			     node_kind(node));
	if (units_parse_duration(s, ns, &why))
		return errat(c, node, "%s: '%s': %s", what, s, why);
	return 0;
}

/* A plain decimal integer in [min, max]. */
static int get_uint(struct pctx *c, yaml_node_t *node, const char *what, unsigned long long min,
		    unsigned long long max, unsigned long long *out)
{
	const char *s, *p;
	unsigned long long v = 0;

	if (node->type != YAML_SCALAR_NODE || is_null(node))
		return errat(c, node, "%s: expected an integer, got %s", what, node_kind(node));
	s = scalar(node);
	if (!is_plain(node) || !*s)
		return errat(c, node, "%s: expected an integer, got the string '%s'", what, s);
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9') {
			if (*p == '-' && p == s)
				return errat(c, node, "%s: must not be negative, got %s", what, s);
			return errat(c, node, "%s: expected an integer, got '%s'", what, s);
		}
		if (v > (max - (unsigned)(*p - '0')) / 10)
			return errat(c, node, "%s: %s is too large (at most %llu)", what, s, max);
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < min)
		return errat(c, node, "%s: %s is too small (at least %llu)", what, s, min);
	*out = v;
	return 0;
}

static int get_bool(struct pctx *c, yaml_node_t *node, const char *what, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					   "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off", "Off", "OFF" };
	size_t i;

	if (is_plain(node)) {
		for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (!strcmp(scalar(node), yes[i])) {
				*out = true;
				return 0;
			}
			if (!strcmp(scalar(node), no[i])) {
				*out = false;
				return 0;
			}
		}
		if (!is_null(node))
			return errat(c, node, "%s: expected true or false, got '%s'", what,
				     scalar(node));
	} else if (node->type == YAML_SCALAR_NODE) {
		return errat(c, node, "%s: expected true or false, got the string '%s'", what,
			     scalar(node));
	}
	return errat(c, node, "%s: expected true or false, got %s", what, node_kind(node));
}

/* A duration that will be a DL runtime: at least the kernel's minimum. */
static int get_runtime(struct pctx *c, yaml_node_t *node, const char *what, uint64_t *ns)
{
	int rc = get_duration(c, node, what, ns);

	if (!rc && *ns < PROFILE_RUNTIME_MIN_NS)
		rc = errat(c, node, "%s: %s is below the kernel's minimum runtime of 1024ns", what,
			   scalar(node));
	return rc;
}

static int get_double(struct pctx *c, yaml_node_t *node, const char *what, double *out)
{
	const char *s;
	char *end;
	double v;

	if (!is_plain(node) || is_null(node))
		return errat(c, node, "%s: expected a number, got %s", what,
			     node->type == YAML_SCALAR_NODE && !is_null(node) ? "a string"
									       : node_kind(node));
	s = scalar(node);
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return errat(c, node, "%s: expected a number, got '%s'", what, s);
	*out = v;
	return 0;
}

/*
 * A scalar or a list of integers in [min, max] into a new array.  Used for `irq` and
 * `task.pid`.
 */
static int get_int_list(struct pctx *c, yaml_node_t *node, const char *what, long long min,
			long long max, long long **out, size_t *n)
{
	yaml_node_item_t *item;
	unsigned long long v;
	size_t count, i = 0;
	int rc;

	if (node->type == YAML_SCALAR_NODE) {
		rc = get_uint(c, node, what, (unsigned long long)min, (unsigned long long)max, &v);
		if (rc)
			return rc;
		*out = malloc(sizeof(**out));
		if (!*out)
			return -ENOMEM;
		(*out)[0] = (long long)v;
		*n = 1;
		return 0;
	}
	if (node->type != YAML_SEQUENCE_NODE)
		return errat(c, node, "%s: expected an integer or a list of integers, got %s",
			     what, node_kind(node));
	count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	if (!count)
		return errat(c, node, "%s: the list is empty", what);
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (item = node->data.sequence.items.start; item < node->data.sequence.items.top; item++) {
		yaml_node_t *elem = node_at(c, *item);

		if (elem->type != YAML_SCALAR_NODE) {
			free(*out);
			*out = NULL;
			return errat(c, elem, "%s: expected an integer in the list, got %s", what,
				     node_kind(elem));
		}
		rc = get_uint(c, elem, what, (unsigned long long)min, (unsigned long long)max, &v);
		if (rc) {
			free(*out);
			*out = NULL;
			return rc;
		}
		(*out)[i++] = (long long)v;
	}
	*n = count;
	return 0;
}

struct name_at {
	const char *name;
	size_t index;		/* in document order */
};

static int name_at_cmp(const void *a, const void *b)
{
	const struct name_at *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (d)
		return d;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Sorts v and finds the first name, in document order, that repeats an earlier one:
 * true with the indexes of the repeat and of its first use. O(n log n), so that a
 * profile of many keys cannot stall the daemon (a pairwise check of 60,000 keys took
 * 90 s).
 */
static bool first_repeat(struct name_at *v, size_t n, size_t *dup, size_t *first)
{
	size_t i, g = 0;
	bool found = false;

	qsort(v, n, sizeof(*v), name_at_cmp);
	for (i = 1; i < n; i++) {
		if (strcmp(v[i].name, v[g].name)) {
			g = i;
			continue;
		}
		if (i == g + 1 && (!found || v[i].index < *dup)) {	/* the group's 1st repeat */
			*dup = v[i].index;
			*first = v[g].index;
			found = true;
		}
	}
	return found;
}

/* Refuses a mapping that names one key twice (libyaml keeps both). */
static int check_unique_keys(struct pctx *c, yaml_node_t *map, const char *where)
{
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t n = (size_t)(map->data.mapping.pairs.top - pairs), bad, i, dup = 0, first = 0;
	struct name_at *v;
	int rc = 0;

	/* the first offence in document order: a key that is not a scalar, or a repeat */
	for (bad = 0; bad < n; bad++)
		if (node_at(c, pairs[bad].key)->type != YAML_SCALAR_NODE)
			break;
	if (bad > 1) {
		v = malloc(bad * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < bad; i++)
			v[i] = (struct name_at){ scalar(node_at(c, pairs[i].key)), i };
		if (first_repeat(v, bad, &dup, &first)) {
			yaml_node_t *ka = node_at(c, pairs[dup].key);

			rc = errat(c, ka, "%s: duplicate key '%s' (first given at line %zu)", where,
				   scalar(ka), node_at(c, pairs[first].key)->start_mark.line + 1);
		}
		free(v);
		if (rc)
			return rc;
	}
	if (bad < n) {
		yaml_node_t *ka = node_at(c, pairs[bad].key);

		return errat(c, ka, "%s: a key must be a plain name, got %s", where,
			     node_kind(ka));
	}
	return 0;
}

static int unknown_key(struct pctx *c, yaml_node_t *key, const char *where, const char *known)
{
	return errat(c, key, "%s: unknown key '%s' (known keys: %s)", where, scalar(key), known);
}

static bool valid_target_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= TARGET_NAME_MAX)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int parse_task(struct pctx *c, yaml_node_t *node, struct target *t, const char *where)
{
	char what[TARGET_NAME_MAX + 64];
	yaml_node_pair_t *pair;
	int rc;

	if (node->type != YAML_MAPPING_NODE)
		return errat(c, node, "%s: task: expected a mapping of comm, pid and cgroup, got %s",
			     where, node_kind(node));
	snprintf(what, sizeof(what), "%s: task", where);
	rc = check_unique_keys(c, node, what);
	if (rc)
		return rc;
	for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = node_at(c, pair->key), *val = node_at(c, pair->value);
		const char *k = scalar(key);

		snprintf(what, sizeof(what), "%s: task.%s", where, k);
		if (!strcmp(k, "comm")) {
			rc = get_string(c, val, what, &t->task_comm);
		} else if (!strcmp(k, "pid")) {
			long long *v = NULL;
			size_t i;

			rc = get_int_list(c, val, what, 1, INT32_MAX, &v, &t->n_pids);
			if (!rc) {
				t->pids = calloc(t->n_pids, sizeof(*t->pids));
				if (!t->pids)
					rc = -ENOMEM;
				for (i = 0; !rc && i < t->n_pids; i++)
					t->pids[i] = (pid_t)v[i];
				free(v);
			}
		} else if (!strcmp(k, "cgroup")) {
			rc = get_string(c, val, what, &t->task_cgroup);
			if (!rc && t->task_cgroup[0] != '/')
				rc = errat(c, val, "%s: '%s' must be an absolute cgroup v2 path "
					   "starting with /", what, t->task_cgroup);
		} else {
			snprintf(what, sizeof(what), "%s: task", where);
			rc = unknown_key(c, key, what, "comm, pid, cgroup");
		}
		if (rc)
			return rc;
	}
	if (!t->task_comm && !t->pids && !t->task_cgroup)
		return errat(c, node, "%s: task: give at least one of comm, pid, cgroup", where);
	return 0;
}

static int parse_adaptive(struct pctx *c, yaml_node_t *node, struct target *t,
			  struct target_keys *tk, const char *where)
{
	char what[TARGET_NAME_MAX + 64];
	yaml_node_pair_t *pair;
	unsigned long long v;
	int rc;

	if (node->type != YAML_MAPPING_NODE)
		return errat(c, node, "%s: adaptive: expected a mapping, got %s", where,
			     node_kind(node));
	snprintf(what, sizeof(what), "%s: adaptive", where);
	rc = check_unique_keys(c, node, what);
	if (rc)
		return rc;
	for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = node_at(c, pair->key), *val = node_at(c, pair->value);
		struct adaptive_cfg *a = &t->adaptive;
		const char *k = scalar(key);

		snprintf(what, sizeof(what), "%s: adaptive.%s", where, k);
		if (!strcmp(k, "sample")) {
			rc = get_duration(c, val, what, &a->sample_ns);
			if (!rc && a->sample_ns < 1000)
				rc = errat(c, val, "%s: must be at least 1us", what);
		} else if (!strcmp(k, "gain")) {
			rc = get_double(c, val, what, &a->gain);
			if (!rc && !(a->gain > 0 && a->gain <= 1))
				rc = errat(c, val, "%s: %s is out of range: 0 < gain <= 1", what,
					   scalar(val));
		} else if (!strcmp(k, "window")) {
			rc = get_uint(c, val, what, 1, PROFILE_ADAPTIVE_WINDOW_MAX, &v);
			a->window = (unsigned int)v;
		} else if (!strcmp(k, "default_job")) {
			rc = get_duration(c, val, what, &a->default_job_ns);
			if (!rc && !a->default_job_ns)
				rc = errat(c, val, "%s: must be more than 0", what);
		} else if (!strcmp(k, "min_runtime")) {
			tk->min_runtime = val;
			rc = get_runtime(c, val, what, &a->min_runtime_ns);
		} else if (!strcmp(k, "max_runtime")) {
			tk->max_runtime = val;
			rc = get_runtime(c, val, what, &a->max_runtime_ns);
		} else if (!strcmp(k, "hysteresis")) {
			rc = get_duration(c, val, what, &a->hysteresis_ns);
		} else {
			snprintf(what, sizeof(what), "%s: adaptive", where);
			rc = unknown_key(c, key, what,
					 "sample, gain, window, default_job, min_runtime, "
					 "max_runtime, hysteresis");
		}
		if (rc)
			return rc;
	}
	return 0;
}

static void set_irq_selector(struct target_keys *tk, yaml_node_t *key, const char *name)
{
	if (!tk->irq_sel) {
		tk->irq_sel = key;
		tk->irq_sel_key = name;
	}
}

/* One key of a target; the target's name is already known. */
static int parse_target_key(struct pctx *c, yaml_node_t *key, yaml_node_t *val, struct target *t,
			    struct target_keys *tk, const char *where)
{
	char what[TARGET_NAME_MAX + 64];
	const char *k = scalar(key);
	unsigned long long v;
	int rc;

	snprintf(what, sizeof(what), "%s: %s", where, k);
	if (!strcmp(k, "name"))
		return 0;
	if (!strcmp(k, "interface")) {
		set_irq_selector(tk, key, "interface");
		t->interface_line = (int)key->start_mark.line + 1;
		rc = get_string(c, val, what, &t->interface);
		if (!rc && (strlen(t->interface) > IFACE_NAME_MAX ||
			    strpbrk(t->interface, "/ \t:") || !strcmp(t->interface, ".") ||
			    !strcmp(t->interface, "..")))
			rc = errat(c, val, "%s: '%s' is not a network interface name (at most 15 "
				   "characters, no '/', ':' or blanks)", what, t->interface);
		return rc;
	}
	if (!strcmp(k, "irq")) {
		long long *irqs = NULL;
		size_t i;

		set_irq_selector(tk, key, "irq");
		t->irq_line = (int)key->start_mark.line + 1;
		rc = get_int_list(c, val, what, 0, INT32_MAX, &irqs, &t->n_irqs);
		if (rc)
			return rc;
		t->irqs = calloc(t->n_irqs, sizeof(*t->irqs));
		if (!t->irqs) {
			free(irqs);
			return -ENOMEM;
		}
		for (i = 0; i < t->n_irqs; i++)
			t->irqs[i] = (int)irqs[i];
		free(irqs);
		return 0;
	}
	if (!strcmp(k, "action")) {
		set_irq_selector(tk, key, "action");
		return get_string(c, val, what, &t->action_glob);
	}
	if (!strcmp(k, "driver")) {
		set_irq_selector(tk, key, "driver");
		t->driver_line = (int)key->start_mark.line + 1;
		rc = get_string(c, val, what, &t->driver);
		if (!rc && strchr(t->driver, '/'))
			rc = errat(c, val, "%s: '%s' is not a driver name (no '/')", what, t->driver);
		return rc;
	}
	if (!strcmp(k, "secondary")) {
		tk->secondary = key;
		return get_bool(c, val, what, &t->secondary);
	}
	if (!strcmp(k, "task")) {
		tk->task = key;
		return parse_task(c, val, t, where);
	}
	if (!strcmp(k, "runtime")) {
		tk->runtime = val;
		return get_duration(c, val, what, &t->runtime_ns);
	}
	if (!strcmp(k, "period")) {
		tk->period = val;
		return get_duration(c, val, what, &t->period_ns);
	}
	if (!strcmp(k, "deadline")) {
		tk->deadline = val;
		return get_duration(c, val, what, &t->deadline_ns);
	}
	if (!strcmp(k, "min_interarrival")) {
		tk->min_interarrival = val;
		rc = get_duration(c, val, what, &t->min_interarrival_ns);
		if (!rc && !t->min_interarrival_ns)
			rc = errat(c, val, "%s: must be more than 0", what);
		return rc;
	}
	if (!strcmp(k, "buffer")) {
		tk->buffer = val;
		rc = get_uint(c, val, what, 1, UINT32_MAX, &v);
		t->buffer = (uint32_t)v;
		return rc;
	}
	if (!strcmp(k, "mode")) {
		const char *s;

		tk->mode = val;
		rc = get_text(c, val, what, &s);
		if (rc)
			return rc;
		if (!strcmp(s, "static"))
			t->mode = MODE_STATIC;
		else if (!strcmp(s, "adaptive"))
			t->mode = MODE_ADAPTIVE;
		else
			return errat(c, val, "%s: '%s' is not a mode: use static or adaptive", what, s);
		return 0;
	}
	if (!strcmp(k, "adaptive")) {
		tk->adaptive = key;
		return parse_adaptive(c, val, t, tk, where);
	}
	return unknown_key(c, key, where,
			   "name, interface, irq, action, driver, secondary, task, runtime, period, "
			   "deadline, min_interarrival, buffer, mode, adaptive");
}

static int missing_key(struct pctx *c, yaml_node_t *map, const char *where, const char *key)
{
	return errat(c, map, "%s: missing required key '%s'", where, key);
}

/* The rules that involve several keys of one target. */
static int check_target(struct pctx *c, struct target *t, struct target_keys *tk,
			const char *where)
{
	char a[UNITS_FMT_LEN], b[UNITS_FMT_LEN];

	if (tk->irq_sel && tk->task)
		return errat(c, tk->task, "%s: task cannot be combined with the IRQ selector '%s' "
			     "(line %zu): a target selects IRQ threads or tasks, not both", where,
			     tk->irq_sel_key, tk->irq_sel->start_mark.line + 1);
	if (!tk->irq_sel && !tk->task)
		return errat(c, tk->node, "%s: no selector: give interface, irq, action or driver "
			     "(IRQ threads) or task (user threads)", where);
	if (tk->task && tk->secondary)
		return errat(c, tk->secondary, "%s: secondary applies to IRQ threads only, not to "
			     "a task target", where);
	t->kind = tk->task ? TARGET_TASK : TARGET_IRQ;

	if (!tk->runtime)
		return missing_key(c, tk->node, where, "runtime");
	if (!tk->period)
		return missing_key(c, tk->node, where, "period");
	if (!tk->deadline)
		t->deadline_ns = t->period_ns;
	if (t->runtime_ns < PROFILE_RUNTIME_MIN_NS)
		return errat(c, tk->runtime, "%s: runtime %s is below the kernel's minimum of 1024ns",
			     where, units_format_duration(t->runtime_ns, a, sizeof(a)));
	if (t->deadline_ns > t->period_ns)
		return errat(c, tk->deadline, "%s: deadline %s exceeds the period %s "
			     "(runtime <= deadline <= period)", where,
			     units_format_duration(t->deadline_ns, a, sizeof(a)),
			     units_format_duration(t->period_ns, b, sizeof(b)));
	if (t->runtime_ns > t->deadline_ns)
		return errat(c, tk->runtime, "%s: runtime %s exceeds the %s %s "
			     "(runtime <= deadline <= period)", where,
			     units_format_duration(t->runtime_ns, a, sizeof(a)),
			     tk->deadline ? "deadline" : "period",
			     units_format_duration(t->deadline_ns, b, sizeof(b)));
	if ((tk->min_interarrival || tk->buffer) && t->kind == TARGET_TASK)
		return errat(c, tk->min_interarrival ? tk->min_interarrival : tk->buffer,
			     "%s: min_interarrival and buffer describe a device: IRQ targets only",
			     where);
	if (profile_buffer_check(t, t->runtime_ns, t->period_ns) == PROFILE_BUFFER_VIOLATED) {
		unsigned long long delayed = (t->period_ns - t->runtime_ns) / t->min_interarrival_ns;

		return errat(c, tk->buffer, "%s: buffering check fails: (period - runtime) / "
			     "min_interarrival = %llu interrupts may wait, the device holds only "
			     "buffer = %u; raise runtime to more than %s or shorten the period",
			     where, delayed, t->buffer,
			     units_format_duration(t->period_ns - (uint64_t)t->buffer *
						   t->min_interarrival_ns, a, sizeof(a)));
	}
	if (tk->adaptive && t->mode != MODE_ADAPTIVE)
		return errat(c, tk->adaptive, "%s: adaptive settings need mode: adaptive", where);
	if (t->mode == MODE_ADAPTIVE) {
		uint64_t lo = profile_adaptive_min_runtime(t, t->period_ns);
		uint64_t hi = profile_adaptive_max_runtime(t, t->period_ns);

		if (tk->max_runtime && t->adaptive.max_runtime_ns > t->deadline_ns)
			return errat(c, tk->max_runtime, "%s: adaptive.max_runtime %s exceeds the "
				     "deadline %s", where,
				     units_format_duration(t->adaptive.max_runtime_ns, a, sizeof(a)),
				     units_format_duration(t->deadline_ns, b, sizeof(b)));
		if (lo > hi && tk->min_runtime && lo == t->adaptive.min_runtime_ns)
			return errat(c, tk->min_runtime,
				     "%s: adaptive.min_runtime %s is above adaptive.max_runtime %s",
				     where, units_format_duration(lo, a, sizeof(a)),
				     units_format_duration(hi, b, sizeof(b)));
		if (lo > hi)
			return errat(c, tk->max_runtime ? tk->max_runtime : tk->adaptive,
				     "%s: adaptive.max_runtime %s is below the buffering bound: the "
				     "budget must stay above period - buffer * min_interarrival, at "
				     "least %s", where, units_format_duration(hi, a, sizeof(a)),
				     units_format_duration(lo, b, sizeof(b)));
	}
	return 0;
}

static int parse_target(struct pctx *c, yaml_node_t *node, size_t index, struct target *t)
{
	struct target_keys tk = { .node = node };
	char where[TARGET_NAME_MAX + 32];
	yaml_node_pair_t *pair;
	const char *name;
	int rc;

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
	snprintf(where, sizeof(where), "targets[%zu]", index);
	if (node->type != YAML_MAPPING_NODE)
		return errat(c, node, "%s: expected a mapping (name, runtime, period, ...), got %s",
			     where, node_kind(node));
	for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = node_at(c, pair->key);

		if (!tk.name && key->type == YAML_SCALAR_NODE && !strcmp(scalar(key), "name"))
			tk.name = node_at(c, pair->value);
	}
	if (!tk.name)
		return missing_key(c, node, where, "name");
	snprintf(where, sizeof(where), "targets[%zu]: name", index);
	rc = get_text(c, tk.name, where, &name);
	if (rc)
		return rc;
	if (!valid_target_name(name))
		return errat(c, tk.name, "%s: '%s' is not a valid target name "
			     "([A-Za-z0-9_.-], 1 to 63 characters)", where, name);
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(where, sizeof(where), "target '%s'", name);
	rc = check_unique_keys(c, node, where);
	if (rc)
		return rc;

	for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
		rc = parse_target_key(c, node_at(c, pair->key), node_at(c, pair->value), t, &tk,
				      where);
		if (rc)
			return rc;
	}
	return check_target(c, t, &tk, where);
}

/* Refuses two targets of one name, naming the later one (sorted: no quadratic check). */
static int check_unique_names(struct pctx *c, yaml_node_t *list, struct profile *prof)
{
	size_t i, dup = 0, first = 0;
	struct name_at *v;
	int rc = 0;

	if (prof->n_targets < 2)
		return 0;
	v = malloc(prof->n_targets * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < prof->n_targets; i++)
		v[i] = (struct name_at){ prof->targets[i].name, i };
	if (first_repeat(v, prof->n_targets, &dup, &first))
		rc = errat(c, node_at(c, list->data.sequence.items.start[dup]),
			   "target '%s': duplicate name (first used at line %d)",
			   prof->targets[dup].name, prof->targets[first].line);
	free(v);
	return rc;
}

static int parse_targets(struct pctx *c, yaml_node_t *node, struct profile *prof)
{
	yaml_node_item_t *item;
	size_t count, i;
	int rc;

	if (node->type != YAML_SEQUENCE_NODE)
		return errat(c, node, "targets: expected a list of targets, got %s", node_kind(node));
	count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	if (!count)
		return errat(c, node, "targets: the list is empty: give at least one target");
	prof->targets = calloc(count, sizeof(*prof->targets));
	if (!prof->targets)
		return -ENOMEM;
	for (item = node->data.sequence.items.start, i = 0; i < count; item++, i++) {
		yaml_node_t *tn = node_at(c, *item);

		prof->n_targets = i + 1;	/* so that profile_free() frees a partial one */
		rc = parse_target(c, tn, i, &prof->targets[i]);
		if (rc)
			return rc;
	}
	return check_unique_names(c, node, prof);
}

static int parse_root(struct pctx *c, struct profile *prof)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc), *targets = NULL, *version = NULL;
	yaml_node_pair_t *pair;
	unsigned long long v;
	int rc;

	if (!root)
		return errat_mark(c, (yaml_mark_t){ 0 }, "the profile is empty: it needs version: 1 "
				  "and targets");
	if (root->type != YAML_MAPPING_NODE)
		return errat(c, root, "a profile is a mapping with version and targets, got %s",
			     node_kind(root));
	rc = check_unique_keys(c, root, "profile");
	if (rc)
		return rc;
	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = node_at(c, pair->key), *val = node_at(c, pair->value);
		const char *k = scalar(key), *s;

		if (!strcmp(k, "version")) {
			version = val;
			rc = get_uint(c, val, "version", 0, INT32_MAX, &v);
			if (!rc && v != 1)
				rc = errat(c, val, "version: %llu is not supported: this irqresd "
					   "reads version 1", v);
		} else if (!strcmp(k, "admission_control")) {
			rc = get_text(c, val, "admission_control", &s);
			if (!rc && !strcmp(s, "disable"))
				prof->admission_off = true;
			else if (!rc && strcmp(s, "keep"))
				rc = errat(c, val, "admission_control: '%s' is not a choice: use keep "
					   "or disable", s);
		} else if (!strcmp(k, "drift")) {
			rc = get_text(c, val, "drift", &s);
			if (!rc && !strcmp(s, "report"))
				prof->drift_report = true;
			else if (!rc && strcmp(s, "reapply"))
				rc = errat(c, val, "drift: '%s' is not a choice: use reapply or "
					   "report", s);
		} else if (!strcmp(k, "targets")) {
			targets = val;
		} else {
			rc = unknown_key(c, key, "profile", "version, admission_control, drift, "
					 "targets");
		}
		if (rc)
			return rc;
	}
	if (!version)
		return missing_key(c, root, "profile", "version");
	if (!targets)
		return missing_key(c, root, "profile", "targets");
	return parse_targets(c, targets, prof);
}

/* Line and column (0-based) of byte @offset of the text, for reader errors. */
static yaml_mark_t mark_of_offset(const char *buf, size_t len, size_t offset)
{
	yaml_mark_t m = { .index = offset };
	size_t i;

	for (i = 0; i < offset && i < len; i++) {
		if (buf[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			m.column++;
		}
	}
	return m;
}

static int syntax_error(struct pctx *c, yaml_parser_t *parser)
{
	yaml_mark_t mark = parser->problem_mark;
	const char *problem = parser->problem ? parser->problem : "cannot be read";

	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		snprintf(c->err, c->errlen, "%s: out of memory while reading", c->name);
		return -ENOMEM;
	case YAML_READER_ERROR:
		mark = mark_of_offset(c->buf, c->len, parser->problem_offset);
		return errat_mark(c, mark, "YAML error: %s", problem);
	default:
		if (parser->context)
			return errat_mark(c, mark, "YAML syntax error: %s %s (line %zu, column %zu)",
					  problem, parser->context, parser->context_mark.line + 1,
					  parser->context_mark.column + 1);
		return errat_mark(c, mark, "YAML syntax error: %s", problem);
	}
}

int profile_parse(const char *buf, size_t len, const char *name, struct profile *prof,
		  char *err, size_t errlen)
{
	struct pctx c = { .name = name ? name : "<string>", .buf = buf, .len = len,
			  .err = err, .errlen = errlen };
	yaml_document_t doc, extra;
	yaml_parser_t parser;
	yaml_node_t *more;
	int rc;

	memset(prof, 0, sizeof(*prof));
	if (errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "%s: out of memory", c.name);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = syntax_error(&c, &parser);
		goto out_parser;
	}
	c.doc = &doc;
	rc = parse_root(&c, prof);
	if (rc)
		goto out_doc;
	/* One profile per file: a second document would be silently ignored otherwise. */
	if (!yaml_parser_load(&parser, &extra)) {
		rc = syntax_error(&c, &parser);
		goto out_doc;
	}
	more = yaml_document_get_root_node(&extra);
	if (more)
		rc = errat(&c, more, "a second YAML document: a profile file holds one document");
	yaml_document_delete(&extra);
	if (rc)
		goto out_doc;
	prof->path = strdup(c.name);
	if (!prof->path)
		rc = -ENOMEM;
out_doc:
	yaml_document_delete(&doc);
out_parser:
	yaml_parser_delete(&parser);
	if (rc) {
		if (rc == -ENOMEM && errlen && !err[0])
			snprintf(err, errlen, "%s: out of memory", c.name);
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
	free(t->task_comm);
	free(t->pids);
	free(t->task_cgroup);
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
	if (runtime_ns >= period_ns)
		return PROFILE_BUFFER_OK;
	/* (T - Q)/P < N_c  <=>  T - Q < N_c * P, exact in 128 bits */
	return (unsigned __int128)(period_ns - runtime_ns) <
			       (unsigned __int128)t->buffer * t->min_interarrival_ns
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
		unsigned __int128 held = (unsigned __int128)t->buffer * t->min_interarrival_ns;

		/* smallest Q with T - Q < N_c * P */
		if (held < period_ns && period_ns - (uint64_t)held + 1 > lo)
			lo = period_ns - (uint64_t)held + 1;
	}
	return lo < PROFILE_RUNTIME_MIN_NS ? PROFILE_RUNTIME_MIN_NS : lo;
}

uint64_t profile_adaptive_max_runtime(const struct target *t, uint64_t period_ns)
{
	if (t->adaptive.max_runtime_ns)
		return t->adaptive.max_runtime_ns;
	return deadline_for(t, period_ns);
}
