/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * requests.c - the control socket's request handlers and the JSON they reply with.
 */
#include "requests.h"
#include "plan_report.h"

#include "apply.h"
#include "cpuset.h"
#include "daemon.h"
#include "discover.h"
#include "dl.h"
#include "log.h"
#include "stats.h"
#include "acct.h"
#include "target_kind.h"
#include "thread_status.h"
#include "units.h"
#include "verify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- control requests ---- */

/* The IRQ of a thread, null for a task. */
static void write_irq(const struct thread_info *ti, struct json *j)
{
	if (ti->irq >= 0)
		json_kv_int(j, "irq", ti->irq);
	else
		json_kv_null(j, "irq");
}

static void write_thread(struct daemon *d, const struct managed *m, struct json *j)
{
	const struct thread_info *ti = &m->thread;
	struct state_thread *orig = state_find_thread(&d->st, ti->pid);
	struct budget b = daemon_budget(d, m);
	struct dl_attr now, reserved = { .sched_runtime = b.runtime_ns,
					 .sched_period = b.period_ns,
					 .sched_deadline = b.deadline_ns };
	char buf[ACTIONS_MAX], cpus[ACTIONS_MAX], *tok, *save;
	struct thread_status s = {
		.pid = ti->pid, .comm = ti->comm, .cpus = cpus, .reserved = &reserved,
		.orig_policy = orig ? orig->policy : ti->policy,
		.orig_priority = orig ? orig->priority : ti->priority,
		.partition = orig ? orig->partition : NULL,
	};

	if (cpuset_list_format(&ti->affinity, cpus, sizeof(cpus)) < 0)
		cpus[0] = '\0';
	if (dl_get(ti->pid, &now) == 0)
		s.now = &now;
	json_obj_begin(j);
	thread_status_members(&s, j);
	write_irq(ti, j);
	json_key(j, "actions");
	json_arr_begin(j);
	snprintf(buf, sizeof(buf), "%s", ti->actions);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		json_str(j, tok);
	json_arr_end(j);
	json_kv_bool(j, "secondary", ti->secondary);
	json_kv_str(j, "drift", m->drift[0] ? m->drift : NULL);
	json_kv_bool(j, "taken", m->taken);
	json_obj_end(j);
}

/* A thread moved into its partition whose SCHED_DEADLINE the kernel refuses until it has
 * run there (daemon.h, struct pending): recorded and restorable, not yet reserved. */
static void write_waiting(const struct daemon *d, const struct pending *p, struct json *j)
{
	const struct thread_info *ti = &p->ap.thread;
	struct budget b = daemon_target_budget(d, p->target);
	char cpus[ACTIONS_MAX];

	json_obj_begin(j);
	json_kv_int(j, "pid", ti->pid);
	json_kv_str(j, "comm", ti->comm);
	write_irq(ti, j);
	if (cpuset_list_format(&ti->affinity, cpus, sizeof(cpus)) < 0)
		cpus[0] = '\0';
	json_kv_str(j, "cpus", cpus);
	thread_status_cpuset(p->ap.partition, j);
	json_kv_uint(j, "runtime_ns", b.runtime_ns);
	json_kv_uint(j, "period_ns", b.period_ns);
	json_kv_uint(j, "deadline_ns", b.deadline_ns);
	json_kv_uint(j, "waiting_ns", daemon_now_ns() - p->first_ns);
	json_kv_str(j, "reason", "SCHED_DEADLINE is refused (EPERM) until the thread has run in "
		    "its cpuset partition once, at its next interrupt");
	json_obj_end(j);
}

static void write_target(struct daemon *d, size_t idx, struct json *j)
{
	const struct target *t = &d->prof.targets[idx];
	size_t i;

	json_obj_begin(j);
	json_kv_str(j, "name", t->name);
	json_kv_str(j, "kind", target_kind_of(t)->name);
	json_kv_str(j, "mode", t->mode == MODE_ADAPTIVE ? "adaptive" : "static");
	json_kv_uint(j, "runtime_ns", t->runtime_ns);
	json_kv_uint(j, "period_ns", t->period_ns);
	json_kv_uint(j, "deadline_ns", t->deadline_ns);
	if (t->min_interarrival_ns)
		json_kv_uint(j, "min_interarrival_ns", t->min_interarrival_ns);
	else
		json_kv_null(j, "min_interarrival_ns");
	if (t->buffer)
		json_kv_uint(j, "buffer", t->buffer);
	else
		json_kv_null(j, "buffer");
	if (t->mode == MODE_ADAPTIVE) {
		json_key(j, "adaptive");
		json_obj_begin(j);
		json_kv_uint(j, "sample_ns", t->adaptive.sample_ns);
		json_kv_double(j, "gain", t->adaptive.gain);
		json_kv_uint(j, "window", t->adaptive.window);
		json_kv_uint(j, "default_job_ns", t->adaptive.default_job_ns);
		json_kv_uint(j, "min_runtime_ns", profile_adaptive_min_runtime(t, t->period_ns));
		json_kv_uint(j, "max_runtime_ns", profile_adaptive_max_runtime(t, t->period_ns));
		json_kv_uint(j, "hysteresis_ns", t->adaptive.hysteresis_ns);
		json_obj_end(j);
	} else {
		json_kv_null(j, "adaptive");
	}
	json_key(j, "threads");
	json_arr_begin(j);
	for (i = 0; i < d->n_m; i++)
		if (d->m[i].target == idx)
			write_thread(d, &d->m[i], j);
	json_arr_end(j);
	json_key(j, "waiting");
	json_arr_begin(j);
	for (i = 0; i < d->n_pending; i++)
		if (d->pending[i].target == idx)
			write_waiting(d, &d->pending[i], j);
	json_arr_end(j);
	couple_status_json(&d->couple, &d->prof, idx, j);
	json_obj_end(j);
}

static int req_status(struct daemon *d, struct json *j)
{
	size_t i;

	json_kv_int(j, "schema_version", IRQRES_JSON_SCHEMA);
	json_kv_int(j, "pid", getpid());
	json_kv_str(j, "profile", d->have_prof ? d->prof.path : NULL);
	json_kv_str(j, "configured_profile", d->opt.profile);	/* what reload re-reads */
	json_kv_str(j, "admission_control",
		    d->have_prof && d->prof.admission_off ? "disable" : "keep");
	json_key(j, "enforcement");
	enforce_status_json(&d->st, d->have_prof && d->prof.hrtick, j);
	json_key(j, "targets");
	json_arr_begin(j);
	for (i = 0; d->have_prof && i < d->prof.n_targets; i++)
		write_target(d, i, j);
	json_arr_end(j);
	return 0;
}

/* The device-thread time per served process so far (acct.h), read up to now. */
static int stats_accounting(struct daemon *d, struct json *j)
{
	size_t n = d->have_prof ? d->prof.n_targets : 0;
	const char **names = calloc(n + 1, sizeof(*names));

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		names[i] = d->prof.targets[i].name;
	acct_drain();
	acct_json(j, names, n);
	free(names);
	return 0;
}

static int req_stats(struct daemon *d, struct json *j)
{
	struct irq_counts ic = { 0 };
	size_t i;
	int rc;

	rc = stats_irq_counts_read(&ic);
	if (rc < 0)
		pr_debug("%s/interrupts: %s", irqres_paths.proc, strerror(-rc));
	json_kv_int(j, "schema_version", IRQRES_JSON_SCHEMA);
	json_kv_uint(j, "time_ns", daemon_now_ns());
	json_key(j, "threads");
	json_arr_begin(j);
	for (i = 0; i < d->n_m; i++) {
		const struct managed *m = &d->m[i];
		struct thread_stats ts;
		struct dl_attr attr;

		if (stats_thread_read(m->thread.pid, &ts) < 0 || dl_get(m->thread.pid, &attr) < 0)
			continue;	/* exited; the exit event will forget it */
		json_obj_begin(j);
		json_kv_int(j, "pid", m->thread.pid);
		json_kv_str(j, "comm", m->thread.comm);
		json_kv_str(j, "target", d->prof.targets[m->target].name);
		json_key(j, "irqs");
		json_arr_begin(j);
		if (m->thread.irq >= 0)
			json_int(j, m->thread.irq);
		json_arr_end(j);
		json_kv_uint(j, "irq_count",
			     m->thread.irq >= 0 ? stats_irq_count(&ic, m->thread.irq) : 0);
		json_kv_str(j, "policy", dl_policy_name((int)attr.sched_policy));
		json_kv_uint(j, "runtime_ns", attr.sched_runtime);
		json_kv_uint(j, "period_ns", attr.sched_period);
		json_kv_uint(j, "deadline_ns", attr.sched_deadline);
		json_kv_uint(j, "cpu_time_ns", ts.cpu_time_ns);
		json_kv_uint(j, "wait_time_ns", ts.wait_time_ns);
		json_kv_uint(j, "timeslices", ts.timeslices);
		json_kv_uint(j, "voluntary_switches", ts.voluntary_switches);
		json_kv_uint(j, "involuntary_switches", ts.involuntary_switches);
		json_obj_end(j);
	}
	json_arr_end(j);
	stats_irq_counts_free(&ic);
	return stats_accounting(d, j);
}

/* What a set-budget request names: one managed thread (*m) or a target (*ti >= 0), and
 * the budget in force there. */
static int budget_subject(struct daemon *d, const struct ctl_request *req,
			  struct managed **m, int *ti, uint64_t *old_period,
			  uint64_t *old_deadline, char *err, size_t errlen)
{
	if (!d->have_prof) {
		snprintf(err, errlen, "set-budget %s: no profile is loaded", req->target);
		return -ENOENT;
	}
	if (req->pid) {
		*m = daemon_managed_find(d, req->pid);
		if (!*m) {
			snprintf(err, errlen, "set-budget %s: pid %d is not a thread irqresd manages",
				 req->target, (int)req->pid);
			return -ENOENT;
		}
		*old_period = daemon_budget(d, *m).period_ns;
		*old_deadline = daemon_budget(d, *m).deadline_ns;
		return 0;
	}
	*ti = profile_find_target(&d->prof, req->target);
	if (*ti < 0) {
		snprintf(err, errlen, "set-budget %s: no such target in %s", req->target,
			 d->prof.path);
		return -ENOENT;
	}
	*old_period = d->prof.targets[*ti].period_ns;
	*old_deadline = d->prof.targets[*ti].deadline_ns;
	return 0;
}

/* The new budget, where the one copy of it lives: a target's own (its threads, those
 * still waiting to run in their partition and those that appear later read it there),
 * or the one thread's of a set-budget pid:N. */
static void budget_commit(struct daemon *d, int ti, const pid_t *pids, size_t n,
			  uint64_t runtime, uint64_t deadline, uint64_t period)
{
	if (ti >= 0) {
		d->prof.targets[ti].runtime_ns = runtime;
		d->prof.targets[ti].period_ns = period;
		d->prof.targets[ti].deadline_ns = deadline;
	}
	for (size_t i = 0; i < n; i++) {
		struct managed *x = daemon_managed_find(d, pids[i]);

		x->own_budget = ti < 0;	/* a target's threads all took the target's */
		x->own = (struct budget){ runtime, deadline, period };
	}
}

static void budget_reply(const struct ctl_request *req, uint64_t period, uint64_t deadline,
			 uint64_t old_deadline, const pid_t *pids, size_t n, struct json *j)
{
	json_kv_str(j, "target", req->target);
	json_kv_uint(j, "runtime_ns", req->runtime_ns);
	json_kv_uint(j, "period_ns", period);
	json_kv_uint(j, "deadline_ns", deadline);
	/* never silently: a new period moves the deadline with it (D keeps its ratio to T) */
	json_kv_bool(j, "deadline_scaled", deadline != old_deadline);
	json_kv_uint(j, "old_deadline_ns", old_deadline);
	json_key(j, "pids");
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		json_int(j, pids[i]);
	json_arr_end(j);
}

static int req_set_budget(struct daemon *d, const struct ctl_request *req, struct json *j,
			  char *err, size_t errlen)
{
	struct managed *m = NULL;
	uint64_t period, deadline, old_period, old_deadline;
	char q[UNITS_FMT_LEN], dl[UNITS_FMT_LEN], tp[UNITS_FMT_LEN], odl[UNITS_FMT_LEN];
	pid_t *pids = NULL;
	size_t n = 0, i;
	int rc, ti = -1;

	rc = budget_subject(d, req, &m, &ti, &old_period, &old_deadline, err, errlen);
	if (rc)
		return rc;
	/* a thread of the target that exited since the last event or rescan (--no-netlink,
	 * lost events) is forgotten now, not reported as a failure of the others' budget */
	if (ti >= 0)
		daemon_forget_gone(d, ti);
	period = req->period_ns ? req->period_ns : old_period;
	deadline = dl_deadline_rescale(old_deadline, old_period, period);
	units_format_duration(req->runtime_ns, q, sizeof(q));
	units_format_duration(deadline, dl, sizeof(dl));
	units_format_duration(period, tp, sizeof(tp));
	units_format_duration(old_deadline, odl, sizeof(odl));
	if (req->runtime_ns > deadline) {
		snprintf(err, errlen, "set-budget %s: runtime %s is larger than the deadline %s "
			 "(period %s%s%s)", req->target, q, dl, tp,
			 deadline != old_deadline ? "; the deadline keeps its ratio to the period, "
			 "it was " : "", deadline != old_deadline ? odl : "");
		return -EINVAL;
	}
	pids = calloc(d->n_m ? d->n_m : 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < d->n_m; i++)
		if (m ? &d->m[i] == m : d->m[i].target == (size_t)ti)
			pids[n++] = d->m[i].thread.pid;
	rc = n ? apply_set_budget(&d->st, pids, n, req->runtime_ns, deadline, period, err,
				  errlen) : 0;
	if (rc < 0) {
		free(pids);
		return rc;
	}
	budget_commit(d, ti, pids, n, req->runtime_ns, deadline, period);
	pr_info("set-budget %s: runtime %s, deadline %s, period %s on %zu thread%s%s%s%s",
		req->target, q, dl, tp, n, n == 1 ? "" : "s",
		deadline != old_deadline ? " (deadline scaled with the period from " : "",
		deadline != old_deadline ? odl : "", deadline != old_deadline ? ")" : "");
	budget_reply(req, period, deadline, old_deadline, pids, n, j);
	free(pids);
	return 0;
}

static int req_plan(const struct ctl_request *req, struct json *j, char *err, size_t errlen)
{
	struct profile prof = { 0 };
	struct match_list matches = { 0 };
	struct plan plan;
	int rc;

	rc = profile_parse(req->body, req->body_len, req->name, &prof, err, errlen);
	if (rc < 0)
		return rc;
	rc = daemon_resolve(&prof, &matches, &plan, err, errlen);
	if (rc == 0 || rc == -ENOENT) {	/* nothing matches: the plan's errors say so */
		json_key(j, "plan");
		plan_report_json(&plan, j);
		rc = 0;
	}
	plan_free(&plan);
	match_list_free(&matches);
	profile_free(&prof);
	return rc;
}

/* Does a managed thread hold another reservation than its target's (a set-budget pid:N)? */
static bool own_budget(const struct daemon *d, const struct managed *m)
{
	struct budget b = daemon_budget(d, m), t = daemon_target_budget(d, m->target);

	return b.runtime_ns != t.runtime_ns || b.deadline_ns != t.deadline_ns ||
	       b.period_ns != t.period_ns;
}

/* The threads with a budget of their own, for verify: *n of them (NULL with *n > 0: no
 * memory). */
static struct verify_budget *set_budgets(const struct daemon *d, size_t *n)
{
	struct verify_budget *b;
	size_t k = 0;

	*n = 0;
	for (size_t i = 0; i < d->n_m; i++)
		*n += own_budget(d, &d->m[i]);
	b = *n ? calloc(*n, sizeof(*b)) : NULL;
	for (size_t i = 0; b && i < d->n_m; i++)
		if (own_budget(d, &d->m[i])) {
			struct budget own = daemon_budget(d, &d->m[i]);

			b[k++] = (struct verify_budget){ d->m[i].thread.pid, own.runtime_ns,
							 own.deadline_ns, own.period_ns };
		}
	return b;
}

static int req_verify(struct daemon *d, const struct ctl_request *req, struct json *j,
		      char *err, size_t errlen)
{
	struct profile given = { 0 };
	const struct profile *prof = &d->prof;
	struct verify_budget *budgets;
	struct verify_result res;
	size_t n = 0;
	int rc;

	if (req->body) {
		rc = profile_parse(req->body, req->body_len, req->name, &given, err, errlen);
		if (rc < 0)
			return rc;
		prof = &given;
	} else if (!d->have_prof) {
		snprintf(err, errlen, "verify: irqresd has no profile in force: name one "
			 "(irqres verify PROFILE)");
		return -ENOENT;
	}
	budgets = prof == &d->prof ? set_budgets(d, &n) : NULL;
	if (prof == &d->prof && n && !budgets) {
		profile_free(&given);
		return -ENOMEM;
	}
	rc = verify_profile(prof, budgets, n, &res, err, errlen);
	free(budgets);
	if (rc == 0) {
		verify_write_json(prof, &res, j);
		verify_result_free(&res);
	}
	profile_free(&given);
	return rc;
}

int requests_handle(void *ctx, const struct ctl_request *req, struct json *j, char *err,
		    size_t errlen)
{
	struct daemon *d = ctx;
	int rc;

	switch (req->verb) {
	case CTL_PING:
		json_kv_str(j, "version", IRQRES_VERSION);
		return 0;
	case CTL_STATUS:
		return req_status(d, j);
	case CTL_STATS:
		return req_stats(d, j);
	case CTL_SET_BUDGET:
		return req_set_budget(d, req, j, err, errlen);
	case CTL_PLAN:
		return req_plan(req, j, err, errlen);
	case CTL_APPLY:
		return daemon_apply(d, req->name, req->body, req->body_len, false, j, err, errlen);
	case CTL_VERIFY:
		return req_verify(d, req, j, err, errlen);
	case CTL_RELOAD:
		rc = daemon_reload(d, err, errlen);
		if (rc < 0)
			return rc;
		json_kv_str(j, "profile", d->have_prof ? d->prof.path : NULL);
		return 0;
	case CTL_RESTORE:
		rc = daemon_restore_everything(d);
		if (rc < 0) {
			snprintf(err, errlen, "restore: not every thread could be put back: %s "
				 "(see the log)", strerror(-rc));
			return rc;
		}
		daemon_drop_profile(d);
		json_kv_int(j, "restored", rc);
		return 0;
	}
	snprintf(err, errlen, "unhandled request");
	return -EINVAL;
}
