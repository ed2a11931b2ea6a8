/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * daemon.c - the run-time state of irqresd (daemon.h): resolving a profile against the
 * threads present, the managed set, applying and restoring, new threads from the proc
 * connector and the periodic rescan.
 */
#include "daemon.h"
#include "acct.h"
#include "plan_report.h"

#include "apply.h"
#include "apply_restore.h"
#include "array.h"
#include "cpuset.h"
#include "discover.h"
#include "dl.h"
#include "fileio.h"
#include "log.h"
#include "napiswitch.h"
#include "notify.h"
#include "owner.h"
#include "stats.h"
#include "target_kind.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TASK_RESCAN_EVERY 10	/* with the proc connector and cgroup selectors: every 10th */

uint64_t daemon_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- matching a profile against the threads present ---- */

/*
 * Scans, matches and plans prof. Returns 0 with a plan (feasible or not), -ENOENT with a
 * plan (it matches no thread at all; the plan's errors name each target), -EINVAL when
 * the profile cannot be resolved (two targets on one thread), or another -errno; err
 * says why. The plan carries the selector problems and unmatched targets (plan.h).
 */
int daemon_resolve(const struct profile *prof, struct match_list *matches, struct plan *plan,
		   char *err, size_t errlen)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	struct match_unmatched un = { 0 };
	char names[ERRLEN];
	int rc;

	memset(plan, 0, sizeof(*plan));
	rc = discover_scan_irq(&irq, match_needs_softirqd(prof));
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot list IRQ threads: %s", irqres_paths.proc,
			 strerror(-rc));
		goto out;
	}
	if (match_needs_tasks(prof)) {
		rc = discover_scan_tasks(&tasks);
		if (rc < 0) {
			snprintf(err, errlen, "%s: cannot list tasks: %s", irqres_paths.proc,
				 strerror(-rc));
			goto out;
		}
	}
	rc = match_profile(prof, &irq, match_needs_tasks(prof) ? &tasks : NULL, matches, &un,
			   err, errlen);
	if (rc < 0) {
		if (!err[0])
			snprintf(err, errlen, "%s: %s", prof->path, strerror(-rc));
		goto out;
	}
	rc = plan_build(prof, matches, plan);
	if (rc == 0)
		rc = plan_add_match_notes(plan, prof, &un);
	if (rc == 0)
		rc = napiswitch_plan_notes(plan, prof);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot build the plan: %s", prof->path, strerror(-rc));
		plan_free(plan);
		goto out;
	}
	if (matches->n == 0 && !profile_has_coupled(prof)) {
		names[0] = '\0';
		match_describe_unmatched(prof, &un, names, sizeof(names));
		snprintf(err, errlen, "%s: the profile matches no thread: %s", prof->path, names);
		rc = -ENOENT;
	}
out:
	match_unmatched_free(&un);
	discover_list_free(&tasks);
	discover_list_free(&irq);
	return rc;
}

/* The first reason an infeasible plan gives. */
static void plan_first_problem(const struct plan *plan, char *err, size_t errlen)
{
	const struct plan_item *it;

	if (plan->n_errors) {
		snprintf(err, errlen, "%s", plan->errors[0]);
		return;
	}
	it = plan_first_refusal(plan);
	if (it)
		snprintf(err, errlen, "%s (pid %d): %s", it->thread.comm, (int)it->thread.pid,
			 it->verdict);
	else
		snprintf(err, errlen, "the plan is not feasible");
}

/* ---- managed threads ---- */

struct managed *daemon_managed_find(struct daemon *d, pid_t pid)
{
	size_t i;

	for (i = 0; i < d->n_m; i++)
		if (d->m[i].thread.pid == pid)
			return &d->m[i];
	return NULL;
}

static int managed_add(struct daemon *d, size_t target, const struct thread_info *ti)
{
	struct managed *m;

	m = daemon_managed_find(d, ti->pid);
	if (!m) {
		if (ARRAY_RESERVE(d->m, d->cap_m, d->n_m + 1))
			return -ENOMEM;
		m = &d->m[d->n_m++];
	}
	m->target = target;
	m->thread = *ti;
	m->drift[0] = '\0';
	m->taken = false;
	m->own_budget = false;	/* its target's budget */
	return 0;
}

struct budget daemon_target_budget(const struct daemon *d, size_t ti)
{
	const struct target *t = &d->prof.targets[ti];

	return (struct budget){ t->runtime_ns, t->deadline_ns, t->period_ns };
}

struct budget daemon_budget(const struct daemon *d, const struct managed *m)
{
	return m->own_budget ? m->own : daemon_target_budget(d, m->target);
}

static void managed_remove(struct daemon *d, pid_t pid)
{
	struct managed *m = daemon_managed_find(d, pid);

	if (m)
		*m = d->m[--d->n_m];
	stats_thread_forget(pid);
}

/* Tries again the threads refused for admission whose time has come (refused.h). */
static enum hotplug_verdict check_thread(struct daemon *d, pid_t pid, bool from_rescan);

static void refused_retry(struct daemon *d)
{
	uint64_t now = daemon_now_ns();
	pid_t due[REFUSED_MAX];
	size_t n = refused_due(&d->refused, now, due);

	for (size_t i = 0; i < n; i++) {
		check_thread(d, due[i], true);
		refused_settle(&d->refused, due[i], now);
	}
}

/* ---- new threads waiting to run in their partition ---- */

#define PENDING_FIRST_NS NS_PER_MS
/* the longest a waiting thread runs unreserved after its first interrupt there; 16
 * sched_setattr tries a second for a thread of a device that stays quiet */
#define PENDING_DELAY_MAX_NS (64 * NS_PER_MS)

static struct pending *pending_find(struct daemon *d, pid_t pid)
{
	for (size_t i = 0; i < d->n_pending; i++)
		if (d->pending[i].ap.thread.pid == pid)
			return &d->pending[i];
	return NULL;
}

/* A thread apply_thread() or apply_plan() moved into its partition, whose ap is already in
 * the next free slot: the main loop tries again from t_ns on. */
static void pending_add(struct daemon *d, size_t target, uint64_t t_ns)
{
	struct pending *p = &d->pending[d->n_pending++];

	p->target = target;
	p->told = false;
	p->first_ns = t_ns;
	p->delay_ns = PENDING_FIRST_NS;
	p->next_ns = t_ns + p->delay_ns;
}

/* A pending thread is tried with its target's budget as it is now (a set-budget of the
 * target while it waits included): the apply's copy is only the request. */
static void pending_budget(const struct daemon *d, struct pending *p)
{
	struct budget b = daemon_target_budget(d, p->target);

	p->ap.runtime_ns = b.runtime_ns;
	p->ap.deadline_ns = b.deadline_ns;
	p->ap.period_ns = b.period_ns;
}

static void pending_remove(struct daemon *d, struct pending *p)
{
	*p = d->pending[--d->n_pending];
}

/* Every pending thread back as it was: the profile they were planned for goes. */
static void pending_cancel_all(struct daemon *d)
{
	while (d->n_pending) {
		struct pending *p = &d->pending[d->n_pending - 1];

		pr_info("%s (pid %d): no longer waited for: put back", p->ap.thread.comm,
			(int)p->ap.thread.pid);
		apply_pending_cancel(&d->st, &p->ap);
		d->n_pending--;
	}
}

int daemon_pending_timeout_ms(const struct daemon *d)
{
	uint64_t now = daemon_now_ns(), first = UINT64_MAX;

	for (size_t i = 0; i < d->n_pending; i++)
		if (d->pending[i].next_ns < first)
			first = d->pending[i].next_ns;
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + NS_PER_MS - 1) / NS_PER_MS);
}

static int managed_add(struct daemon *d, size_t target, const struct thread_info *ti);

void daemon_run_pending(struct daemon *d)
{
	for (size_t i = d->n_pending; i-- > 0;) {
		struct pending *p = &d->pending[i];
		const struct thread_info *ti = &p->ap.thread;
		const char *tname = d->prof.targets[p->target].name;
		uint64_t now = daemon_now_ns();
		int rc;

		if (now < p->next_ns)
			continue;
		pending_budget(d, p);
		rc = apply_pending_try(&p->ap, now - p->first_ns);
		if (rc == -EPERM) {	/* it has not run in its partition yet: no interrupt */
			if (!p->told && now - p->first_ns >= APPLY_MOVED_WAIT_NS) {
				pr_notice("%s (pid %d), target '%s': moved into cpuset partition %s "
					  "%llu ms ago, SCHED_DEADLINE is refused (EPERM) until it has "
					  "run there, at its next interrupt: irqresd keeps trying (if "
					  "%s/cpuset.cpus.partition does not read \"root\", it never "
					  "will)", ti->comm, (int)ti->pid, tname, p->ap.partition,
					  (unsigned long long)((now - p->first_ns) / NS_PER_MS),
					  p->ap.partition);
				p->told = true;
			}
			p->next_ns = now + p->delay_ns;
			if (p->delay_ns < PENDING_DELAY_MAX_NS)
				p->delay_ns *= 2;
			continue;
		}
		if (rc == 0) {
			rc = managed_add(d, p->target, ti);
			if (rc < 0)
				pr_err("%s (pid %d): %s", ti->comm, (int)ti->pid, strerror(-rc));
			pr_info("%s (pid %d): new thread reserved for target '%s'", ti->comm,
				(int)ti->pid, tname);
		} else if (rc == -ESRCH) {
			pr_notice("%s (pid %d) is gone: skipped", ti->comm, (int)ti->pid);
			apply_forget_thread(&d->st, ti->pid);
		} else {
			pr_warn("%s (pid %d), target '%s': not reserved: SCHED_DEADLINE refused in "
				"cpuset partition %s after %llu ms: %s%s; put back as it was",
				ti->comm, (int)ti->pid, tname, p->ap.partition,
				(unsigned long long)((now - p->first_ns) / NS_PER_MS), strerror(-rc),
				rc == -EBUSY ? " (admission control: other SCHED_DEADLINE tasks took "
				"the bandwidth meanwhile)" : "");
			apply_pending_cancel(&d->st, &p->ap);
			refused_note(&d->refused, ti->pid, ti->starttime, rc, daemon_now_ns());
		}
		pending_remove(d, p);
	}
}

/* ---- applying and restoring ---- */

void daemon_drop_profile(struct daemon *d)
{
	if (d->have_prof)
		profile_free(&d->prof);
	d->have_prof = false;
	couple_forget(&d->couple);	/* their records stay in the state, like the others' */
	acct_stop();
	d->n_m = 0;
	d->n_pending = 0;	/* their records stay in the state: restore puts them back */
	stats_fini();
	d->refused.n = 0;
}

int daemon_restore_everything(struct daemon *d)
{
	int rc;

	d->n_pending = 0;	/* recorded in the state like every other thread */
	rc = apply_restore_all(&d->st);

	if (rc < 0)
		pr_err("restore: not every thread could be put back: %s", strerror(-rc));
	else
		pr_info("restored %d thread%s", rc, rc == 1 ? "" : "s");
	return rc;
}

/*
 * Applies a profile, all or nothing: the file path (irqresd's own, -p) when text is NULL,
 * else the text a client sent (path only names it). The threads of the profile in force
 * that the new one does not take are restored. On success the new profile is in force;
 * on failure nothing changed. With may_wait (the daemon's own profile, at start and on
 * reload), a profile that matches no thread yet is put in force with a warning, and
 * hotplug fills it. With plan_out (a reply object), its "plan" member is written there.
 */
/* The plan of a resolved profile into the kernel (rc: daemon_resolve()'s). A daemon
 * (not --once) does not wait for threads that have not run in their new partition yet:
 * they go into pw (apply.h), and the main loop reserves them once they have. */
static int apply_resolved(struct daemon *d, int rc, struct plan *plan, bool may_wait,
			  struct apply_waiting *pw, char *err, size_t errlen)
{
	for (size_t i = 0; (rc == 0 || rc == -ENOENT) && i < plan->n_warnings; i++)
		pr_warn("%s", plan->warnings[i]);
	if (rc == -ENOENT && may_wait) {
		/* at boot a NIC's IRQ thread appears only when the link goes up */
		pr_warn("%s; irqresd waits for them to appear", err);
		err[0] = '\0';
		return 0;
	}
	if (rc)
		return rc;
	if (!plan->feasible) {
		plan_first_problem(plan, err, errlen);
		return -EBUSY;
	}
	return apply_plan(plan, &d->st, d->opt.once ? NULL : pw, err, errlen);
}

/* The old profile's threads that the new one (matches) does not take go back as found. */
static void restore_left_out(struct daemon *d, const struct match_list *matches)
{
	for (size_t i = 0; i < d->n_m; i++) {
		size_t k;
		int r;

		for (k = 0; k < matches->n; k++)
			if (matches->v[k].thread.pid == d->m[i].thread.pid)
				break;
		if (k < matches->n)
			continue;
		r = apply_restore_thread(&d->st, d->m[i].thread.pid);
		if (r < 0)
			pr_warn("%s (pid %d): cannot restore: %s", d->m[i].thread.comm,
				(int)d->m[i].thread.pid, strerror(-r));
	}
}

static bool is_waiting(const struct apply_waiting *pw, pid_t pid)
{
	for (size_t i = 0; i < pw->n; i++)
		if (pw->v[i].thread.pid == pid)
			return true;
	return false;
}

/* The new profile in force (taken from *prof) and its threads managed, or waited for
 * (pw: in d->pending's slots, in order). */
static int take_profile(struct daemon *d, const char *path, struct profile *prof,
			const struct match_list *matches, const struct apply_waiting *pw,
			char *err, size_t errlen)
{
	uint64_t now = daemon_now_ns();
	size_t n = matches->n - pw->n;

	daemon_drop_profile(d);
	d->prof = *prof;
	memset(prof, 0, sizeof(*prof));
	d->have_prof = true;
	for (size_t k = 0; k < matches->n; k++) {
		const struct match *m = &matches->v[k];
		int rc;

		if (is_waiting(pw, m->thread.pid))
			continue;
		rc = managed_add(d, m->target, &m->thread);
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
			return rc;
		}
	}
	for (size_t i = 0; i < pw->n && d->n_pending < PENDING_MAX; i++) {
		for (size_t k = 0; k < matches->n; k++) {
			if (matches->v[k].thread.pid != pw->v[i].thread.pid)
				continue;
			d->pending[d->n_pending].ap = pw->v[i];
			pending_add(d, matches->v[k].target, now);
			break;
		}
	}
	if (pw->n) {
		pr_info("%s: applied, %zu thread%s reserved, %zu waiting to run in %s partition "
			"first (irqres status lists them)", path, n, n == 1 ? "" : "s", pw->n,
			pw->n == 1 ? "its" : "their");
		notify_status("%s: %zu thread%s reserved, %zu waiting", path, n,
			      n == 1 ? "" : "s", pw->n);
		return 0;
	}
	pr_info("%s: applied, %zu thread%s reserved", path, n, n == 1 ? "" : "s");
	notify_status("%s: %zu thread%s reserved", path, n, n == 1 ? "" : "s");
	return 0;
}

/* A new profile in force: its coupled targets' threads at once (a daemon only). */
static void couple_applied(struct daemon *d, const char *path)
{
	if (d->opt.once)
		return;
	daemon_couple(d, NULL);
	if (!d->opt.rescan_ns && couple_needed(&d->prof))
		pr_warn("%s: --rescan 0: whom its targets serve is looked at this once, and "
			"coupled threads do not follow them", path);
}

/*
 * Applies a profile, all or nothing: the file path (irqresd's own, -p) when text is NULL,
 * else the text a client sent (path only names it). The threads of the profile in force
 * that the new one does not take are restored. On success the new profile is in force;
 * on failure nothing changed. With may_wait (the daemon's own profile, at start and on
 * reload), a profile that matches no thread yet is put in force with a warning, and
 * hotplug fills it. With plan_out (a reply object), its "plan" member is written there.
 */
int daemon_apply(struct daemon *d, const char *path, const char *text, size_t len,
		 bool may_wait, struct json *plan_out, char *err, size_t errlen)
{
	struct profile prof = { 0 };
	struct match_list matches = { 0 };
	struct apply_waiting pw = { 0 };
	size_t netdevs = d->st.n_netdevs;	/* those after: switched by this apply */
	struct plan plan;
	int rc;

	err[0] = '\0';
	rc = text ? profile_parse(text, len, path, &prof, err, errlen)
		  : profile_load(path, &prof, err, errlen);
	if (rc < 0)
		return rc;
	pending_cancel_all(d);	/* planned for the profile in force: the new plan decides */
	pw.max = PENDING_MAX;
	pw.v = calloc(pw.max, sizeof(*pw.v));
	if (!pw.v) {
		profile_free(&prof);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	/* threaded NAPI first: the NAPI kthreads it makes are found by the resolve */
	rc = napiswitch_on(&prof, &d->st, err, errlen);
	if (rc == 0) {
		rc = daemon_resolve(&prof, &matches, &plan, err, errlen);
		rc = apply_resolved(d, rc, &plan, may_wait, &pw, err, errlen);
		if (rc < 0)
			napiswitch_restore(&d->st, NULL, netdevs);
	} else {
		memset(&plan, 0, sizeof(plan));
	}
	if (rc >= 0) {
		restore_left_out(d, &matches);
		couple_release(&d->couple, &d->st);	/* the new profile's tick couples anew */
		rc = take_profile(d, path, &prof, &matches, &pw, err, errlen);
		if (rc == 0)
			couple_applied(d, path);
		plan.prof = &d->prof;	/* the plan's reply below names the targets */
		if (rc == 0 && !d->prof.hrtick)
			enforce_restore(&d->st);	/* held for the profile before */
		if (rc == 0)	/* the interfaces held for the profile before only */
			napiswitch_restore(&d->st, &d->prof, 0);
	}
	if (plan_out && rc == 0) {
		json_key(plan_out, "plan");
		plan_report_json(&plan, plan_out);
		json_key(plan_out, "waiting");	/* moved, reserved once they have run there */
		json_arr_begin(plan_out);
		for (size_t i = 0; i < pw.n; i++) {
			json_obj_begin(plan_out);
			json_kv_int(plan_out, "pid", pw.v[i].thread.pid);
			json_kv_str(plan_out, "comm", pw.v[i].thread.comm);
			json_kv_str(plan_out, "partition", pw.v[i].partition);
			json_obj_end(plan_out);
		}
		json_arr_end(plan_out);
	}
	plan_free(&plan);
	match_list_free(&matches);
	profile_free(&prof);
	free(pw.v);
	return rc;
}

/*
 * A new IRQ thread takes its IRQ's affinity itself only at its first interrupt (and
 * bypasses the root-domain check then), so the plan places it by the IRQ's effective
 * affinity (plan.h) and it is moved into that CPU's partition right away. Only while the
 * IRQ has no effective affinity yet (request_irq() creates the thread before it starts
 * the IRQ) are its CPUs unknown: the thread waits (retries) for that.
 */
static bool irq_cpus_known(const struct thread_info *ti)
{
	cpu_set_t cpus;

	return discover_irq_cpus(ti->irq, &cpus) != 1;
}

/* Whether a new IRQ thread is to be looked at later: the kernel has not finished it. */
static bool irq_thread_unfinished(const struct thread_info *ti)
{
	/* kthread_create() names the thread (a COMM event) just before the kernel makes it
	 * SCHED_FIFO itself: a reservation given in between would be overwritten */
	if (ti->policy == SCHED_OTHER)
		return true;
	return !irq_cpus_known(ti);	/* never started: the rescan plans with smp_affinity */
}

/* Reserves thread ti for target; logs and remembers a refusal. */
static void reserve_thread(struct daemon *d, const struct thread_info *ti, int target,
			   bool from_rescan, uint64_t t0)
{
	struct match m = { .target = (size_t)target, .thread = *ti };
	uint64_t t_read = daemon_now_ns(), t_apply;
	char err[ERRLEN] = "";
	int rc = apply_thread(&d->prof, &m, &d->st,
			      d->n_pending < PENDING_MAX ? &d->pending[d->n_pending].ap : NULL,
			      err, sizeof(err));

	t_apply = daemon_now_ns();
	if (rc == APPLY_PENDING) {	/* moved; the main loop tries again (apply.h) */
		pending_add(d, (size_t)target, t_apply);
		return;
	}
	if (rc < 0) {
		/* a retry after EBUSY was said the first time */
		if (refused_note(&d->refused, ti->pid, ti->starttime, rc, daemon_now_ns()))
			pr_debug("%s (pid %d), target '%s': still not reserved: %s", ti->comm,
				 (int)ti->pid, d->prof.targets[target].name,
				 err[0] ? err : strerror(-rc));
		else
			pr_warn("%s (pid %d), target '%s': not reserved: %s%s", ti->comm,
				(int)ti->pid, d->prof.targets[target].name,
				err[0] ? err : strerror(-rc), rc == -EBUSY ? "; irqresd tries "
				"again as bandwidth comes free" : "");
		return;
	}
	refused_forget(&d->refused, ti->pid, ti->starttime);
	rc = managed_add(d, (size_t)target, ti);
	if (rc < 0)
		pr_err("%s (pid %d): %s", ti->comm, (int)ti->pid, strerror(-rc));
	pr_info("%s (pid %d): new thread reserved for target '%s'%s", ti->comm, (int)ti->pid,
		d->prof.targets[target].name, from_rescan ? " (rescan)" : "");
	pr_debug("pid %d: read and matched in %" PRIu64 " us, applied in %" PRIu64 " us",
		 (int)ti->pid, (t_read - t0) / 1000, (t_apply - t_read) / 1000);
}

/* One new or renamed thread: reserve it when the profile selects it. */
static enum hotplug_verdict check_thread(struct daemon *d, pid_t pid, bool from_rescan)
{
	uint64_t t0 = daemon_now_ns();
	struct thread_info ti;
	char err[ERRLEN] = "";
	int target;

	if (!d->have_prof || daemon_managed_find(d, pid) || pending_find(d, pid))
		return HOTPLUG_DONE;
	if (discover_read(pid, &ti) < 0)
		return HOTPLUG_DONE;	/* gone already */
	/* a kernel thread is named right after kthreadd forks it */
	if (ti.kthread && strcmp(ti.comm, "kthreadd") == 0 && pid != 2)
		return HOTPLUG_AGAIN;
	if (refused_blocks(&d->refused, ti.pid, ti.starttime, daemon_now_ns()))
		return HOTPLUG_DONE;
	if (!from_rescan && ti.is_irq && irq_thread_unfinished(&ti))
		return HOTPLUG_AGAIN;
	target = match_find_target(&d->prof, &ti, err, sizeof(err));
	if (target == -ENOENT)
		return HOTPLUG_DONE;
	if (target < 0) {
		pr_warn("%s (pid %d): %s", ti.comm, (int)pid, err[0] ? err : strerror(-target));
		refused_note(&d->refused, ti.pid, ti.starttime, target, daemon_now_ns());
		return HOTPLUG_DONE;
	}
	reserve_thread(d, &ti, target, from_rescan, t0);
	return HOTPLUG_DONE;
}

static void forget_thread(struct daemon *d, pid_t pid)
{
	struct pending *p = pending_find(d, pid);

	if (p) {
		pr_debug("pid %d exited while it waited to run in %s: forgotten", (int)pid,
			 p->ap.partition);
		pending_remove(d, p);
		apply_forget_thread(&d->st, pid);
		return;
	}
	if (!daemon_managed_find(d, pid))
		return;
	pr_debug("pid %d exited: forgotten", (int)pid);
	managed_remove(d, pid);
	apply_forget_thread(&d->st, pid);
}

size_t daemon_forget_gone(struct daemon *d, int target)
{
	size_t i, n = 0;

	for (i = 0; i < d->n_m;) {
		if ((target >= 0 && d->m[i].target != (size_t)target) ||
		    discover_still_same(&d->m[i].thread) == 1) {
			i++;
			continue;
		}
		forget_thread(d, d->m[i].thread.pid);
		n++;
	}
	return n;
}

/*
 * A cheap first look at an event's thread (its comm, one small read) so that the many
 * threads a busy machine forks are dropped before discover_read() reads all of /proc/PID:
 * some target's kind must find the name possible (an IRQ target only takes a thread
 * named irq/... or kthreadd, not named yet; a task target with a comm glob one that
 * matches it).
 */
static bool may_match(struct daemon *d, pid_t pid)
{
	char path[300], comm[COMM_MAX + 2];
	size_t i;

	snprintf(path, sizeof(path), "%s/%d/comm", irqres_paths.proc, (int)pid);
	if (fileio_read(path, comm, sizeof(comm)) < 0)
		return false;	/* gone already */
	comm[strcspn(comm, "\n")] = '\0';
	for (i = 0; i < d->prof.n_targets; i++) {
		const struct target *t = &d->prof.targets[i];

		if (target_kind_of(t)->comm_may_match(t, comm))
			return true;
	}
	return false;
}

enum hotplug_verdict daemon_on_hotplug(void *ctx, enum hotplug_event ev, pid_t pid, pid_t ppid)
{
	struct daemon *d = ctx;

	switch (ev) {
	case HOTPLUG_EXIT:
		forget_thread(d, pid);
		return HOTPLUG_DONE;
	case HOTPLUG_OVERRUN:
		d->rescan_now = true;
		d->events_lost = true;
		return HOTPLUG_DONE;
	default:
		if (!d->have_prof || daemon_managed_find(d, pid) || !may_match(d, pid))
			return HOTPLUG_DONE;
		return check_thread(d, pid, false);
	}
}

/* Whether some target's threads can change without a proc event (moves between cgroups). */
static bool has_cgroup_selector(const struct profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		if (target_kind_of(&prof->targets[i])->changes_unseen(&prof->targets[i]))
			return true;
	return false;
}

/* ---- drift ---- */

static void sched_text(const struct dl_attr *a, char *buf, size_t len)
{
	dl_sched_text((int)a->sched_policy, (int)a->sched_priority, a->sched_nice,
		      a->sched_runtime, a->sched_deadline, a->sched_period, buf, len);
}

enum drift_kind { DRIFT_SCHED, DRIFT_CGROUP, DRIFT_IRQ };

/* What differs on m now ("" nothing; *kind: what kind of change); -ESRCH when the
 * thread is gone. */
static int managed_drift(struct daemon *d, const struct managed *m, char *what, size_t len,
			 enum drift_kind *kind)
{
	const struct state_thread *rec = state_find_thread(&d->st, m->thread.pid);
	struct budget b = daemon_budget(d, m);
	struct dl_attr want = { .sched_policy = SCHED_DEADLINE, .sched_runtime = b.runtime_ns,
				.sched_deadline = b.deadline_ns, .sched_period = b.period_ns };
	char now[96], exp[96], cg[CGROUP_PATH_MAX];
	struct dl_attr a;
	int rc;

	what[0] = '\0';
	*kind = DRIFT_SCHED;
	rc = dl_get(m->thread.pid, &a);
	if (rc < 0)
		return rc;
	if (a.sched_policy != SCHED_DEADLINE || a.sched_runtime != b.runtime_ns ||
	    a.sched_deadline != b.deadline_ns || a.sched_period != b.period_ns) {
		sched_text(&a, now, sizeof(now));
		sched_text(&want, exp, sizeof(exp));
		snprintf(what, len, "scheduling is %s, the reservation is %s", now, exp);
		return 0;
	}
	/* a thread recorded with no cgroup stayed where it was (PF_NO_SETAFFINITY) */
	if (rec && rec->partition[0] && rec->cgroup[0] &&
	    cpuset_pid_cgroup(m->thread.pid, cg, sizeof(cg)) == 0 &&
	    !(cg[0] == '/' && strcmp(cg + 1, rec->partition) == 0)) {
		snprintf(what, len, "cgroup is %.160s, irqres put it in /%s", cg, rec->partition);
		*kind = DRIFT_CGROUP;
	} else if (rec && rec->partition[0] && m->thread.irq >= 0 &&
		   owner_irq_moved(m->thread.irq, rec->partition, what, len)) {
		*kind = DRIFT_IRQ;
	}
	return 0;
}

/* Gives m its reservation back: the plan of one thread with m's budget, applied. */
static int managed_reapply(struct daemon *d, struct managed *m, char *err, size_t errlen)
{
	struct target tg = d->prof.targets[m->target];
	struct profile one = { .path = d->prof.path, .admission_off = d->prof.admission_off,
			       .targets = &tg, .n_targets = 1 };
	struct match mt = { .target = 0 };
	struct budget b = daemon_budget(d, m);
	int rc;

	rc = discover_read(m->thread.pid, &mt.thread);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read it again: %s", strerror(-rc));
		return rc;
	}
	tg.runtime_ns = b.runtime_ns;
	tg.deadline_ns = b.deadline_ns;
	tg.period_ns = b.period_ns;
	return apply_thread(&one, &mt, &d->st, NULL, err, errlen);
}

/*
 * Whether another irqresd or tool holds m now (owner.h): its scheduling is no longer
 * what a new thread has, nor irqres's. what gets who it is. Such a thread is left to it
 * (one owner per thread: no fight), and irqresd takes it back only when it is free again
 * (the scheduling a new thread has: drift, handled as the profile says) or back in line
 * (the holder gave back irqres's reservation, as another irqresd's restore does).
 */
static bool managed_taken(const struct managed *m, char *what, size_t len)
{
	struct thread_info now;
	struct owner o;
	size_t used = strlen(what);

	if (discover_read(m->thread.pid, &now) < 0 || owner_find(&now, false, &o) < 0 ||
	    o.kind == OWNER_NONE)
		return false;
	snprintf(what + used, len - used, "; %s", o.text);
	return true;
}

/* A drift that is never fought over, whatever the profile's drift says (another holder
 * took m, or its IRQ was moved): logged once, recorded in m; true when it is one. */
static bool drift_left_alone(struct managed *m, enum drift_kind kind, char *what,
			     size_t len, const char *tname)
{
	m->taken = kind == DRIFT_SCHED && managed_taken(m, what, len);
	if (!m->taken && kind != DRIFT_IRQ)
		return false;
	if (strcmp(m->drift, what) != 0)
		pr_warn("%s (pid %d), target '%s': %s behind irqresd's back: %s; left %s",
			m->thread.comm, (int)m->thread.pid, tname, m->taken ? "taken" : "changed",
			what, m->taken ? "to it (irqresd takes it back once it is free again)" :
			"as it is until the IRQ is back");
	snprintf(m->drift, sizeof(m->drift), "%s", what);
	return true;
}

int daemon_check_drift(struct daemon *d)
{
	char what[sizeof(d->m[0].drift)], err[ERRLEN];
	enum drift_kind kind;
	int n = 0;

	for (size_t i = 0; d->have_prof && i < d->n_m; i++) {
		struct managed *m = &d->m[i];
		const char *tname = d->prof.targets[m->target].name;

		if (managed_drift(d, m, what, sizeof(what), &kind) < 0 || !what[0]) {
			if (m->drift[0] && !what[0])
				pr_info("%s (pid %d), target '%s': back in line", m->thread.comm,
					(int)m->thread.pid, tname);
			m->drift[0] = '\0';
			m->taken = false;
			continue;
		}
		n++;
		if (drift_left_alone(m, kind, what, sizeof(what), tname))
			continue;
		if (d->prof.drift_report) {
			if (strcmp(m->drift, what) != 0)
				pr_warn("%s (pid %d), target '%s': changed behind irqresd's back: %s; "
					"left as it is (drift: report)", m->thread.comm,
					(int)m->thread.pid, tname, what);
			snprintf(m->drift, sizeof(m->drift), "%s", what);
			continue;
		}
		if (managed_reapply(d, m, err, sizeof(err)) == 0) {
			pr_warn("%s (pid %d), target '%s': changed behind irqresd's back: %s; "
				"reservation re-applied", m->thread.comm, (int)m->thread.pid, tname,
				what);
			m->drift[0] = '\0';
			continue;
		}
		if (strcmp(m->drift, what) != 0)
			pr_err("%s (pid %d), target '%s': changed behind irqresd's back: %s; cannot "
			       "re-apply: %s", m->thread.comm, (int)m->thread.pid, tname, what, err);
		snprintf(m->drift, sizeof(m->drift), "%s", what);
	}
	return n;
}

/*
 * The fallback: every thread the profile selects that the daemon does not manage yet.
 * IRQ threads (kthreadd's children) are cheap to list and are checked every time. All
 * user tasks are costly to list on a busy machine (and the loop waits meanwhile). While
 * the proc connector reports them (fork, exec, and renames by prctl or /proc/PID/comm
 * each send an event), they are listed only when events were lost, and every
 * TASK_RESCAN_EVERY rescans for cgroup selectors, which no event serves.
 */
void daemon_rescan(struct daemon *d)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	struct match_list matches = { 0 };
	char err[ERRLEN] = "";
	uint64_t t0 = daemon_now_ns();
	bool with_tasks;
	size_t i;
	int rc;

	if (!d->have_prof)
		return;
	with_tasks = match_needs_tasks(&d->prof) &&
		     (hotplug_fd(d->hp) < 0 || d->events_lost ||
		      (has_cgroup_selector(&d->prof) && d->n_rescans % TASK_RESCAN_EVERY == 0));
	d->events_lost = false;
	d->n_rescans++;
	daemon_forget_gone(d, -1);	/* threads gone while events were lost */
	refused_retry(d);
	daemon_check_drift(d);
	rc = discover_scan_irq(&irq, match_needs_softirqd(&d->prof));
	if (rc == 0 && with_tasks)
		rc = discover_scan_tasks(&tasks);
	if (rc == 0)	/* without the task list, task targets match nothing this time */
		rc = match_profile(&d->prof, &irq, &tasks, &matches, NULL, err, sizeof(err));
	if (rc < 0) {
		pr_debug("rescan: %s", err[0] ? err : strerror(-rc));
	} else {
		for (i = 0; i < matches.n; i++)
			if (!daemon_managed_find(d, matches.v[i].thread.pid))
				check_thread(d, matches.v[i].thread.pid, true);
	}
	pr_debug("rescan: %zu IRQ threads, %zu tasks, %" PRIu64 " us", irq.n, tasks.n,
		 (daemon_now_ns() - t0) / 1000);
	match_list_free(&matches);
	discover_list_free(&tasks);
	daemon_couple(d, rc < 0 ? NULL : &irq);	/* the same device threads, one scan */
	discover_list_free(&irq);
}

/* A thread a reservation target holds (or waits to): never coupled. */
static bool reserved_here(void *ctx, pid_t pid)
{
	struct daemon *d = ctx;

	return daemon_managed_find(d, pid) || pending_find(d, pid);
}

/* The threads whom the targets with serves: serve, as readers for accounting (acct.h). */
static struct acct_reader *acct_readers(const struct daemon *d, size_t *n)
{
	size_t i, k, total = 0;
	struct acct_reader *r;

	for (i = 0; i < d->couple.n_t; i++)
		total += d->couple.t[i].served.n;
	r = calloc(total ? total : 1, sizeof(*r));
	*n = 0;
	if (!r)
		return NULL;
	for (i = 0; i < d->couple.n_t; i++)
		for (k = 0; k < d->couple.t[i].served.n; k++) {
			const struct served *s = &d->couple.t[i].served.v[k];

			r[*n].pid = s->pid;
			snprintf(r[*n].comm, sizeof(r[*n].comm), "%s", s->comm);
			(*n)++;
		}
	return r;
}

/* The threads of the targets with serves: (coupled or reserved) to accounting (acct.h),
 * with the threads they serve. */
static void acct_follow(struct daemon *d)
{
	struct acct_thread *v = calloc(d->couple.n + d->n_m + 1, sizeof(*v));
	size_t i, n = 0, n_r = 0;
	struct acct_reader *r = acct_readers(d, &n_r);

	if (!v || !r) {
		pr_warn("accounting: %s", strerror(ENOMEM));
		free(v);
		free(r);
		return;
	}
	for (i = 0; i < d->couple.n; i++)
		v[n++] = (struct acct_thread){ d->couple.v[i].thread.pid, d->couple.v[i].target };
	for (i = 0; i < d->n_m; i++)
		if (d->prof.targets[d->m[i].target].serves.given)
			v[n++] = (struct acct_thread){ d->m[i].thread.pid, d->m[i].target };
	acct_update(v, n, r, n_r);
	free(v);
	free(r);
}

void daemon_couple(struct daemon *d, const struct thread_list *irq)
{
	uint64_t t0 = daemon_now_ns();

	if (!d->have_prof || !couple_needed(&d->prof))
		return;
	if (couple_tick(&d->couple, &d->prof, &d->st, reserved_here, d, irq) == 0)
		pr_debug("couple: %zu coupled thread%s, %" PRIu64 " us", d->couple.n,
			 d->couple.n == 1 ? "" : "s", (daemon_now_ns() - t0) / 1000);
	acct_follow(d);
}

int daemon_reload(struct daemon *d, char *err, size_t errlen)
{
	int rc;

	err[0] = '\0';
	if (!d->opt.profile) {
		pr_info("reload: irqresd has no profile of its own (-p): nothing to re-read");
		return 0;
	}
	notify_reloading();
	pr_info("reload: re-reading %s", d->opt.profile);
	rc = daemon_apply(d, d->opt.profile, NULL, 0, true, NULL, err, errlen);
	if (rc < 0) {
		pr_err("reload of %s refused, %s stays in force: %s", d->opt.profile,
		       d->have_prof ? d->prof.path : "no profile", err);
		notify_ready(NULL);
		notify_status("reload of %s refused: %.200s", d->opt.profile, err);
	} else {
		notify_ready(NULL);
		notify_status("%s: %zu thread%s reserved", d->prof.path, d->n_m,
			      d->n_m == 1 ? "" : "s");
	}
	return rc;
}
