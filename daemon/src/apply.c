/* SPDX-License-Identifier: GPL-2.0-only */
/* apply.c - plans into the kernel, all or nothing (a failed apply undone); see apply.h. */
#include "apply.h"
#include "apply_restore.h"
#include "affinity.h"
#include "array.h"
#include "cpuset.h"
#include "discover.h"
#include "dl.h"
#include "fileio.h"
#include "log.h"
#include "rt_runtime.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What one apply changed, to undo it in reverse order. */
enum undo_kind { UNDO_RT_RUNTIME, UNDO_CPUSET_ADDED, UNDO_PARTITION, UNDO_THREAD };

struct undo {
	enum undo_kind kind;
	pid_t pid;
	bool new_record;		/* the state record was made by this apply */
	bool moved;
	bool attr_set;
	struct dl_attr prev;		/* attributes before this apply */
	char prev_cgroup[CGROUP_PATH_MAX];
	unsigned long long starttime;
	cpu_set_t prev_affinity;
	char name[CPUSET_NAME_MAX];
	bool created;
	long long rt_runtime_us;
};

struct undo_log {
	struct undo *v;
	size_t n, cap;
};

static struct undo *undo_push(struct undo_log *u, enum undo_kind kind)
{
	if (ARRAY_RESERVE(u->v, u->cap, u->n + 1))
		return NULL;
	memset(&u->v[u->n], 0, sizeof(u->v[u->n]));
	u->v[u->n].kind = kind;
	return &u->v[u->n++];
}

static const char *errname(int err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case ESRCH: return "ESRCH";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	default: return "error";
	}
}

/* The state record of a thread as the kernel has it now. */
static int snapshot(const struct thread_info *ti, const char *partition,
		    struct state_thread *t, struct dl_attr *now)
{
	int rc = dl_get(ti->pid, now);

	if (rc)
		return rc;
	memset(t, 0, sizeof(*t));
	t->pid = ti->pid;
	t->starttime = ti->starttime;
	snprintf(t->comm, sizeof(t->comm), "%s", ti->comm);
	t->policy = (int)now->sched_policy;
	t->priority = (int)now->sched_priority;
	t->nice = now->sched_nice;
	t->dl_runtime_ns = now->sched_runtime;
	t->dl_deadline_ns = now->sched_deadline;
	t->dl_period_ns = now->sched_period;
	t->flags = now->sched_flags;
	/*
	 * Its affinity of before irqres: what a partition of irqres's took from it and is
	 * still owed, else as discovered, before this apply made its first partition (which
	 * rewrote the affinity of every task outside partitions: a task pinned to a CPU that
	 * an earlier item partitioned has the root's CPUs by now).
	 */
	if (!affinity_owed(ti->pid, ti->starttime, &t->affinity)) {
		t->affinity = ti->affinity;
		if (!CPU_COUNT(&t->affinity) &&
		    sched_getaffinity(ti->pid, sizeof(t->affinity), &t->affinity) < 0)
			CPU_ZERO(&t->affinity);
	}
	if (partition[0] && cpuset_pid_cgroup(ti->pid, t->cgroup, sizeof(t->cgroup)))
		t->cgroup[0] = '\0';
	snprintf(t->partition, sizeof(t->partition), "%s", partition);
	return 0;
}

/* ---- undo ---- */

static void undo_thread(const struct undo *x, struct state *st)
{
	char err[512];
	int rc;

	if (x->attr_set && (rc = dl_set(x->pid, &x->prev)) && rc != -ESRCH)
		pr_err("pid %d: cannot put its scheduling policy back: %s", (int)x->pid,
		       strerror(-rc));
	if (x->moved && x->prev_cgroup[0] &&
	    (rc = cpuset_move(x->pid, x->prev_cgroup, err, sizeof(err))) && rc != -ESRCH)
		pr_err("%s", err);
	if (x->new_record)
		state_forget_thread(st, x->pid);
	if (x->attr_set || x->moved)
		pr_info("pid %d put back as it was", (int)x->pid);
}

static void undo_all(struct undo_log *u, struct state *st)
{
	for (size_t i = u->n; i-- > 0;) {
		struct undo *x = &u->v[i];

		switch (x->kind) {
		case UNDO_THREAD:
			undo_thread(x, st);
			break;
		case UNDO_PARTITION:
			if (x->created)
				affinity_partition_remove(st, x->name);
			state_forget_partition(st, x->name);
			break;
		case UNDO_CPUSET_ADDED:
			cpuset_disable();
			state_clear_cpuset_added(st);
			break;
		case UNDO_RT_RUNTIME:
			if (rt_runtime_restore(st, x->rt_runtime_us))
				state_clear_rt_runtime(st);
			break;
		}
	}
	/* after the partitions are gone: their removal rewrites root tasks' affinities */
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].kind == UNDO_THREAD && u->v[i].moved)
			affinity_put_back(u->v[i].pid, u->v[i].starttime, &u->v[i].prev_affinity);
	affinity_owed_save(st);
	free(u->v);
	u->v = NULL;
	u->n = u->cap = 0;
}

/* ---- apply ---- */

static int admission_off(struct state *st, struct undo_log *u, char *err, size_t errlen)
{
	long long cur;
	int rc = rt_runtime_read(&cur);
	struct undo *x;

	if (rc) {
		snprintf(err, errlen, "cannot read sched_rt_runtime_us: %s", strerror(-rc));
		return rc;
	}
	if (cur == -1)
		return 0;
	rc = state_set_rt_runtime(st, cur);
	if (rc) {
		snprintf(err, errlen, "cannot record sched_rt_runtime_us in the state file: %s",
			 strerror(-rc));
		return rc;
	}
	x = undo_push(u, UNDO_RT_RUNTIME);
	if (!x)
		return -ENOMEM;
	x->rt_runtime_us = cur;
	rc = rt_runtime_write(-1);
	if (rc) {
		snprintf(err, errlen, "cannot turn admission control off (sched_rt_runtime_us = "
			 "-1): %s", strerror(-rc));
		return rc;
	}
	pr_warn("admission control turned OFF as the profile asks (sched_rt_runtime_us was %lld, "
		"now -1): SCHED_DEADLINE bandwidth is no longer checked until irqres restores it",
		cur);
	return 0;
}

/* +cpuset and the partition of one item, once per apply. */
static int partition_ready(const struct plan_item *it, struct state *st, struct undo_log *u,
			   char *why, size_t whylen)
{
	char dir[PATH_MAX], name[CPUSET_NAME_MAX];
	cpu_set_t cpus;
	struct stat sb;
	bool added = false, created = false, existed;
	struct undo *x;
	int rc;

	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].kind == UNDO_PARTITION && strcmp(u->v[i].name, it->partition) == 0)
			return 0;
	if (!st->cpuset_added) {
		rc = state_set_cpuset_added(st);	/* recorded before the write */
		if (rc) {
			snprintf(why, whylen, "cannot record the state: %s", strerror(-rc));
			return rc;
		}
		rc = cpuset_enable(&added, why, whylen);
		if (rc || !added)
			state_clear_cpuset_added(st);
		if (rc)
			return rc;
		if (added && !(x = undo_push(u, UNDO_CPUSET_ADDED))) {
			cpuset_disable();
			state_clear_cpuset_added(st);
			return -ENOMEM;
		}
	}
	rc = cpuset_group_dir(it->partition, dir, sizeof(dir));
	if (rc)
		return rc;
	existed = stat(dir, &sb) == 0;
	rc = state_add_partition(st, it->partition, !existed);
	if (rc) {
		snprintf(why, whylen, "cannot record the state: %s", strerror(-rc));
		return rc;
	}
	x = undo_push(u, UNDO_PARTITION);
	if (!x)
		return -ENOMEM;
	snprintf(x->name, sizeof(x->name), "%s", it->partition);
	CPU_ZERO(&cpus);
	if (cpuset_list_parse(it->partition + strlen(CPUSET_PREFIX), &cpus))
		return -EINVAL;
	rc = affinity_partition_create(st, &cpus, name, sizeof(name), &created, why, whylen);
	x->created = created;
	return rc;
}

/*
 * The kernel checks a SCHED_DEADLINE request against the root domain of the CPU the
 * thread last ran on (6.1 and 6.12 alike, docs/vm.md): a sleeping thread just moved into
 * a partition is refused with EPERM until it has run there once. An IRQ thread runs at
 * its next interrupt - soon for a busy device, and the reason a freshly hotplugged
 * thread, or one that ran elsewhere after a restore, is refused when irqresd is quick.
 * A whole apply waits here for at most APPLY_MOVED_WAIT_NS before reporting the refusal;
 * the daemon's main loop waits for a hotplugged thread without a bound (apply.h).
 */
static int dl_set_after_move(const struct thread_info *ti, const struct plan_item *it)
{
	unsigned int delay_us = 1000, waited_us = 0;
	int rc = dl_set_deadline(ti->pid, it->runtime_ns, it->deadline_ns, it->period_ns);

	while (rc == -EPERM && waited_us < APPLY_MOVED_WAIT_NS / 1000) {
		usleep(delay_us);
		waited_us += delay_us;
		if (delay_us < 128000)
			delay_us *= 2;
		rc = dl_set_deadline(ti->pid, it->runtime_ns, it->deadline_ns, it->period_ns);
	}
	if (waited_us && !rc)
		pr_info("%s (pid %d): accepted after %u ms, once it had run in %s", ti->comm,
			(int)ti->pid, waited_us / 1000,
			it->partition[0] ? it->partition : "its root domain");
	return rc;
}

/*
 * The CPU a thread last ran on when that CPU is outside the item's root domain, else -1.
 * A thread that needs no partition can still be there: a NAPI kthread or a task that
 * slept on a CPU a partition has since taken out of the default domain keeps that CPU
 * until it runs again, and the kernel refuses it EPERM meanwhile (docs/receive-path.md).
 */
static int last_cpu_outside(const struct plan *plan, const struct plan_item *it)
{
	char path[PATH_MAX];
	struct fileio_stat st;

	if (it->domain < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%d/stat", irqres_paths.proc, (int)it->thread.pid);
	if (fileio_stat_read(path, &st) || st.processor < 0 || st.processor >= CPU_SETSIZE)
		return -1;
	return CPU_ISSET(st.processor, &plan->domains[it->domain].cpus) ? -1 : st.processor;
}

/* The item's CPUs and those of its root domain ("?" for none), for messages. */
static void item_cpus(const struct plan *plan, const struct plan_item *it, char *a,
		      char *span, size_t len)
{
	cpuset_list_format(&it->cpus, a, len);
	if (it->domain >= 0)
		cpuset_list_format(&plan->domains[it->domain].cpus, span, len);
	else
		snprintf(span, len, "?");
}

/* Why the kernel refused SCHED_DEADLINE for item (rc < 0), naming the way out. */
static void item_refusal(const struct plan *plan, const struct plan_item *it, int rc,
			 char *err, size_t errlen)
{
	const struct thread_info *ti = &it->thread;
	const struct plan_domain *d = it->domain >= 0 ? &plan->domains[it->domain] : NULL;
	char a[64], span[64], q[UNITS_FMT_LEN], t[UNITS_FMT_LEN];
	int cpu;

	item_cpus(plan, it, a, span, sizeof(a));
	units_format_duration(it->runtime_ns, q, sizeof(q));
	units_format_duration(it->period_ns, t, sizeof(t));
	if (rc == -EBUSY)
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE refused: EBUSY: admission "
			 "control: %s/%s = %.2f more bandwidth on CPUs %s, the plan counted %.2f of "
			 "%.2f in use (other SCHED_DEADLINE tasks took the rest meanwhile?); lower "
			 "the runtimes or free bandwidth", ti->comm, (int)ti->pid, q, t,
			 (double)it->bw / DL_BW_UNIT, span,
			 d ? (double)(d->existing_bw + d->new_bw) / DL_BW_UNIT : 0.0,
			 d ? (double)d->cap_bw / DL_BW_UNIT : 0.0);
	else if (rc == -EPERM && it->needs_partition && !plan_item_moves(it))
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE refused: EPERM: thread "
			 "pinned to CPUs %s stays in its cgroup (PF_NO_SETAFFINITY) beside cpuset "
			 "partition %s of its CPUs, yet the kernel still sees a larger root "
			 "domain (does %s/cpuset.cpus.partition read \"root\"? is the thread "
			 "still pinned there?); the other way out is admission_control: disable",
			 ti->comm, (int)ti->pid, a, it->partition, it->partition);
	else if (rc == -EPERM && it->needs_partition)
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE refused: EPERM: thread "
			 "pinned to CPUs %s was moved into cpuset partition %s, yet the kernel "
			 "still sees a larger root domain after %llums (has the thread not run "
			 "there since - no interrupt? does %s/cpuset.cpus.partition read "
			 "\"root\"?); the other way out is admission_control: disable",
			 ti->comm, (int)ti->pid, a, it->partition,
			 (unsigned long long)(APPLY_MOVED_WAIT_NS / 1000000), it->partition);
	else if (rc == -EPERM && (cpu = last_cpu_outside(plan, it)) >= 0)
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE refused: EPERM: it last ran "
			 "on CPU %d, outside its root domain (CPUs %s), and has not run since "
			 "(waited %llums): the kernel checks the domain of the CPU a thread last "
			 "ran on; it is accepted once it has run there (an IRQ thread at its next "
			 "interrupt, a NAPI kthread at its next poll): apply again then",
			 ti->comm, (int)ti->pid, cpu, span,
			 (unsigned long long)(APPLY_MOVED_WAIT_NS / 1000000));
	else if (rc == -EPERM)
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE refused: EPERM: thread "
			 "pinned to CPUs %s, root domain spans %s; it needs a cpuset partition "
			 "of its own (cgroup v2 with the cpuset controller) or "
			 "admission_control: disable", ti->comm, (int)ti->pid, a, span);
	else
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE %s/%s refused: %s: %s", ti->comm,
			 (int)ti->pid, q, t, errname(-rc), strerror(-rc));
}

/* Records the thread's attributes in the state and the undo log (*xp its entry), after
 * readying its partition (the outcome in *part_rc). 1 when the thread is gone. */
static int item_record(const struct plan_item *it, struct state *st, struct undo_log *u,
		       char *why, size_t whylen, int *part_rc, struct undo **xp, char *err,
		       size_t errlen)
{
	const struct thread_info *ti = &it->thread;
	struct state_thread rec;
	struct dl_attr now;
	struct undo *x;
	int rc = snapshot(ti, it->needs_partition ? it->partition : "", &rec, &now);

	if (rc == -ESRCH)
		return 1;
	if (rc) {
		snprintf(err, errlen, "%s (pid %d): cannot read its scheduling attributes: %s",
			 ti->comm, (int)ti->pid, strerror(-rc));
		return rc;
	}
	/* the partition's own undo entries first: x must not move afterwards */
	if (it->needs_partition)
		*part_rc = partition_ready(it, st, u, why, whylen);
	x = undo_push(u, UNDO_THREAD);
	if (!x)
		return -ENOMEM;
	x->pid = ti->pid;
	x->prev = now;
	x->starttime = ti->starttime;
	x->prev_affinity = rec.affinity;
	x->new_record = !state_find_thread(st, ti->pid);
	if (!plan_item_moves(it))	/* it stays where it is: no cgroup to go back to */
		rec.cgroup[0] = '\0';
	snprintf(x->prev_cgroup, sizeof(x->prev_cgroup), "%s", rec.cgroup);
	*xp = x;
	rc = state_add_thread(st, &rec);
	if (rc) {
		x->new_record = false;
		snprintf(err, errlen, "%s (pid %d): cannot record its original attributes in %s: %s",
			 ti->comm, (int)ti->pid, st->path, strerror(-rc));
	}
	return rc;
}

/* Moves the thread into its partition, once that is ready (part_rc 0). A thread that
 * cannot move (PF_NO_SETAFFINITY) stays where it is: the partition of the CPUs it is
 * pinned to is its root domain all the same. */
static int item_move(const struct plan *plan, const struct plan_item *it, int part_rc,
		     struct undo *x, char *why, size_t whylen, char *err, size_t errlen)
{
	char cg[CPUSET_NAME_MAX + 2], a[64], span[64];
	int rc = part_rc;

	snprintf(cg, sizeof(cg), "/%s", it->partition);
	if (!rc && plan_item_moves(it)) {
		rc = cpuset_move(it->thread.pid, cg, why, whylen);
		x->moved = rc == 0;
	}
	if (rc && rc != -ESRCH) {
		item_cpus(plan, it, a, span, sizeof(a));
		snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE needs cpuset partition %s "
			 "(the thread is pinned to CPUs %s, its root domain spans %s), which "
			 "could not be used: %s", it->thread.comm, (int)it->thread.pid,
			 it->partition, a, span, why);
	}
	return rc;
}

static int item_gone(const struct thread_info *ti)
{
	pr_notice("%s (pid %d) is gone: skipped", ti->comm, (int)ti->pid);
	return 1;
}

/* A thread moved into its partition that has not run there yet: the caller's main loop
 * tries again (apply.h). */
static int item_pending(const struct plan_item *it, struct apply_pending *pending)
{
	const struct thread_info *ti = &it->thread;

	memset(pending, 0, sizeof(*pending));
	pending->thread = *ti;
	snprintf(pending->partition, sizeof(pending->partition), "%s", it->partition);
	pending->runtime_ns = it->runtime_ns;
	pending->deadline_ns = it->deadline_ns;
	pending->period_ns = it->period_ns;
	pr_debug("%s (pid %d): not run in %s yet (EPERM): tried again later", ti->comm,
		 (int)ti->pid, it->partition);
	return APPLY_PENDING;
}

/* One item: record, partition, move, sched_setattr. 1 when the thread is gone;
 * APPLY_PENDING when pending was given and the thread waits to run in its partition. */
static int apply_item(const struct plan *plan, const struct plan_item *it, struct state *st,
		      struct undo_log *u, struct apply_pending *pending, char *err,
		      size_t errlen)
{
	const struct thread_info *ti = &it->thread;
	char why[512] = "", q[UNITS_FMT_LEN], t[UNITS_FMT_LEN];
	struct undo *x = NULL;
	int rc, part_rc = 0;

	if (!discover_still_same(ti))
		return item_gone(ti);
	rc = item_record(it, st, u, why, sizeof(why), &part_rc, &x, err, errlen);
	if (rc == 1)
		return item_gone(ti);
	if (rc)
		return rc;
	if (it->needs_partition) {
		rc = item_move(plan, it, part_rc, x, why, sizeof(why), err, errlen);
		if (!rc && pending) {
			rc = dl_set_deadline(ti->pid, it->runtime_ns, it->deadline_ns,
					     it->period_ns);
			if (rc == -EPERM)	/* moved and recorded: tried again later */
				return item_pending(it, pending);
		} else if (!rc) {
			rc = dl_set_after_move(ti, it);
		} else if (rc != -ESRCH) {
			return rc;
		}
	} else {
		rc = dl_set_deadline(ti->pid, it->runtime_ns, it->deadline_ns, it->period_ns);
		if (rc == -EPERM && last_cpu_outside(plan, it) >= 0)
			rc = dl_set_after_move(ti, it);
	}
	if (rc == -ESRCH)
		return item_gone(ti);
	if (rc) {
		item_refusal(plan, it, rc, err, errlen);
		return rc;
	}
	x->attr_set = true;
	pr_info("%s (pid %d): SCHED_DEADLINE %s/%s%s%s", ti->comm, (int)ti->pid,
		units_format_duration(it->runtime_ns, q, sizeof(q)),
		units_format_duration(it->period_ns, t, sizeof(t)),
		it->needs_partition ? " in " : "", it->needs_partition ? it->partition : "");
	return 0;
}

/* apply_recount() of each partition beside which the plan changed a thread the kernel
 * counts elsewhere (plan.h, plan_item.recount), once. */
static void recount_partitions(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_items; i++) {
		const char *name = plan->items[i].recount;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(plan->items[j].recount, name) == 0;
		if (name[0] && plan->items[i].ok && !seen)
			apply_recount(name);
	}
}

/* pw: where the threads that wait to run in their partition go (NULL: waited for in
 * place, see apply.h); on success pw->n says how many do. */
static int plan_run(const struct plan *plan, struct state *st, struct apply_waiting *pw,
		    char *err, size_t errlen)
{
	struct undo_log u = { 0 };
	size_t done = 0;
	bool hrtick = false;
	int rc = 0;

	if (pw)
		pw->n = 0;

	if (!plan->feasible) {
		const struct plan_item *it = plan_first_refusal(plan);

		if (it) {
			snprintf(err, errlen, "%s (pid %d): SCHED_DEADLINE refused: %s",
				 it->thread.comm, (int)it->thread.pid, it->verdict);
			return -it->refusal;
		}
		snprintf(err, errlen, "%s", plan->n_errors ? plan->errors[0] :
			 "the plan is not feasible");
		return -EINVAL;
	}
	for (size_t i = 0; i < plan->n_warnings; i++)	/* what it costs, e.g. partitions */
		pr_notice("plan: %s", plan->warnings[i]);
	if (plan->admission_off) {
		rc = admission_off(st, &u, err, errlen);
		if (rc)
			goto out_undo;
	}
	rc = enforce_apply(&plan->enforce, st, &hrtick, err, errlen);
	if (rc)
		goto out_undo;
	/* threads going into partitions first: a thread staying in the default root domain
	 * covers it only once the new partitions have taken their CPUs out of it */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < plan->n_items; i++) {
			if (plan->items[i].needs_partition != (pass == 0))
				continue;
			rc = apply_item(plan, &plan->items[i], st, &u,
					pw && pw->n < pw->max ? &pw->v[pw->n] : NULL, err, errlen);
			if (rc < 0)
				goto out_undo;
			if (rc == APPLY_PENDING)	/* moved and recorded: the caller tries again */
				pw->n++;
			done += rc == 0;
		}
	}
	free(u.v);
	recount_partitions(plan);
	if (pw && pw->n)
		pr_info("plan applied: %zu thread(s) with SCHED_DEADLINE, %zu waiting to run in "
			"their partition first", done, pw->n);
	else
		pr_info("plan applied: %zu thread(s) with SCHED_DEADLINE", done);
	return 0;

out_undo:
	pr_err("%s", err);
	pr_notice("undoing this apply: every thread goes back as it was");
	undo_all(&u, st);
	if (hrtick)	/* switched on by this apply */
		enforce_restore(st);
	if (pw)
		pw->n = 0;	/* put back with the rest: none waits */
	return rc;
}

int apply_plan(const struct plan *plan, struct state *st, struct apply_waiting *pw, char *err,
	       size_t errlen)
{
	return plan_run(plan, st, pw, err, errlen);
}

int apply_thread(const struct profile *prof, const struct match *m, struct state *st,
		 struct apply_pending *pending, char *err, size_t errlen)
{
	struct match_list one = { .v = (struct match *)m, .n = 1, .cap = 1 };
	struct apply_waiting one_waiting = { .v = pending, .max = 1 };
	struct plan_env env;
	struct plan plan;
	int rc;

	apply_partitions_sweep(st);	/* the CPUs of threads gone count as free again */
	rc = plan_env_read(&env, false);	/* fast: the kernel checks the bandwidth */

	if (rc) {
		snprintf(err, errlen, "%s (pid %d): cannot read the system's CPUs and limits: %s",
			 m->thread.comm, (int)m->thread.pid, strerror(-rc));
		return rc;
	}
	rc = plan_build_env(prof, &one, &env, &plan);
	plan_env_free(&env);
	if (rc) {
		snprintf(err, errlen, "%s (pid %d): cannot plan: %s", m->thread.comm,
			 (int)m->thread.pid, strerror(-rc));
		return rc;
	}
	rc = plan_run(&plan, st, plan.n_items == 1 && pending ? &one_waiting : NULL, err, errlen);
	plan_free(&plan);
	return rc == 0 && one_waiting.n ? APPLY_PENDING : rc;
}

int apply_pending_try(const struct apply_pending *p, uint64_t waited_ns)
{
	const struct thread_info *ti = &p->thread;
	int rc;

	if (!discover_still_same(ti))
		return -ESRCH;
	rc = dl_set_deadline(ti->pid, p->runtime_ns, p->deadline_ns, p->period_ns);
	if (!rc)
		pr_info("%s (pid %d): SCHED_DEADLINE accepted after %llu ms, once it had run in %s",
			ti->comm, (int)ti->pid, (unsigned long long)(waited_ns / 1000000),
			p->partition);
	return rc;
}

void apply_pending_cancel(struct state *st, const struct apply_pending *p)
{
	if (apply_restore_thread(st, p->thread.pid) < 0)	/* logged; restore-all retries */
		pr_warn("%s (pid %d): stays recorded in %s", p->thread.comm, (int)p->thread.pid,
			st->path);
}

/* ---- set-budget ---- */

/* The threads a new budget is for, as they are now: what the plan needs, and their
 * attributes to put back on a refusal. */
static int budget_threads(struct state *st, const pid_t *pids, size_t n,
			  struct thread_info *ti, struct dl_attr *prev, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		const struct state_thread *rec = state_find_thread(st, pids[i]);
		int rc;

		if (!rec) {
			snprintf(err, errlen, "pid %d: not a thread irqresd manages", (int)pids[i]);
			return -ENOENT;
		}
		rc = dl_get(pids[i], &prev[i]);
		if (!rc && sched_getaffinity(pids[i], sizeof(ti[i].affinity), &ti[i].affinity) < 0)
			rc = -errno;
		if (rc) {
			snprintf(err, errlen, "%s (pid %d): %s", rec->comm, (int)pids[i],
				 rc == -ESRCH ? "gone" : strerror(-rc));
			return rc;
		}
		ti[i].pid = pids[i];
		ti[i].irq = -1;
		ti[i].policy = (int)prev[i].sched_policy;
		snprintf(ti[i].comm, sizeof(ti[i].comm), "%s", rec->comm);
	}
	return 0;
}

/*
 * The plan's admission rule for the new budget of every thread at once. No scan of every
 * thread for SCHED_DEADLINE ones (tens of ms with many tasks, and the controller calls
 * this every few periods): the plan checks the new budgets against the capacity, the
 * kernel checks the rest, and a refusal rolls back.
 */
static int budget_admitted(const struct thread_info *ti, const struct dl_attr *prev, size_t n,
			   const struct dl_attr *b, struct plan *plan, char *err, size_t errlen)
{
	const struct plan_item *it;
	struct plan_env env;
	int rc = plan_env_read(&env, false);

	if (!rc)
		rc = plan_env_for_budget(&env, ti, prev, n);
	if (rc) {
		snprintf(err, errlen, "set-budget: cannot read the system's CPUs and limits: %s",
			 strerror(-rc));
		plan_env_free(&env);
		return rc;
	}
	rc = plan_build_budget(ti, n, b->sched_runtime, b->sched_deadline, b->sched_period, &env,
			       plan);
	plan_env_free(&env);
	if (rc)
		return rc;
	it = plan_first_refusal(plan);
	if (it) {
		snprintf(err, errlen, "%s (pid %d): new budget refused: %s", it->thread.comm,
			 (int)it->thread.pid, it->verdict);
		rc = -it->refusal;
	}
	return rc;
}

/* Why the kernel gave EBUSY for the new budget b of thread ti (old: what it had). */
static void budget_ebusy(const struct thread_info *ti, const struct dl_attr *old,
			 const struct dl_attr *b, size_t n, char *err, size_t errlen)
{
	char q[UNITS_FMT_LEN], t[UNITS_FMT_LEN];
	/* Q/T <= Q0/T0, in integers: a budget that asks for less bandwidth */
	bool smaller = old->sched_policy == SCHED_DEADLINE && old->sched_period &&
		(unsigned __int128)b->sched_runtime * old->sched_period <=
		(unsigned __int128)old->sched_runtime * b->sched_period;

	units_format_duration(b->sched_runtime, q, sizeof(q));
	units_format_duration(b->sched_period, t, sizeof(t));
	if (smaller)
		snprintf(err, errlen, "%s (pid %d): new budget refused: EBUSY: the kernel refused "
			 "%s/%s although it asks for less bandwidth than the budget in force: its "
			 "SCHED_DEADLINE accounting for this root domain holds less than this "
			 "thread's own reservation (a kernel accounting error); every thread keeps "
			 "its budget", ti->comm, (int)ti->pid, q, t);
	else
		snprintf(err, errlen, "%s (pid %d): new budget refused: EBUSY: admission control: "
			 "%s/%s for %zu thread(s) does not fit beside the SCHED_DEADLINE tasks "
			 "already present; every thread keeps its budget", ti->comm, (int)ti->pid,
			 q, t, n);
}

/* Gives every thread budget b; on the first refusal puts back those already changed. */
static int budget_write(const struct thread_info *ti, const struct dl_attr *prev, size_t n,
			const struct dl_attr *b, char *err, size_t errlen)
{
	size_t done;
	int rc = 0;

	for (done = 0; done < n; done++) {
		rc = dl_set_deadline(ti[done].pid, b->sched_runtime, b->sched_deadline,
				     b->sched_period);
		if (rc)
			break;
	}
	if (rc == -EBUSY)
		budget_ebusy(&ti[done], &prev[done], b, n, err, errlen);
	else if (rc)
		snprintf(err, errlen, "%s (pid %d): new budget refused by the kernel: %s: %s",
			 ti[done].comm, (int)ti[done].pid, errname(-rc), strerror(-rc));
	if (rc)
		while (done-- > 0)
			dl_set(ti[done].pid, &prev[done]);
	return rc;
}

/* 0 < runtime <= deadline <= period (deadline 0: chosen later) for at least one thread */
static bool budget_valid(size_t n, const struct dl_attr *b)
{
	if (n == 0 || b->sched_runtime == 0 || b->sched_period < b->sched_runtime)
		return false;
	return !b->sched_deadline || (b->sched_deadline >= b->sched_runtime &&
				      b->sched_deadline <= b->sched_period);
}

int apply_set_budget(struct state *st, const pid_t *pids, size_t n, uint64_t runtime_ns,
		     uint64_t deadline_ns, uint64_t period_ns, char *err, size_t errlen)
{
	struct dl_attr b = { .sched_runtime = runtime_ns, .sched_deadline = deadline_ns,
			     .sched_period = period_ns };
	struct thread_info *ti = NULL;
	struct dl_attr *prev = NULL;
	struct plan plan = { 0 };
	int rc;

	if (!budget_valid(n, &b)) {
		snprintf(err, errlen, "set-budget: need runtime <= deadline <= period and at least "
			 "one thread");
		return -EINVAL;
	}
	ti = calloc(n, sizeof(*ti));
	prev = calloc(n, sizeof(*prev));
	rc = ti && prev ? budget_threads(st, pids, n, ti, prev, err, errlen) : -ENOMEM;
	if (rc)
		goto out_free;
	if (!deadline_ns) {	/* the deadline keeps its ratio to the period (first thread's) */
		bool dl = prev[0].sched_policy == SCHED_DEADLINE;

		b.sched_deadline = dl_deadline_rescale(dl ? prev[0].sched_deadline : 0,
						       dl ? prev[0].sched_period : 0, period_ns);
		if (b.sched_deadline < runtime_ns)
			b.sched_deadline = runtime_ns;
	}
	rc = budget_admitted(ti, prev, n, &b, &plan, err, errlen);
	if (!rc)
		rc = budget_write(ti, prev, n, &b, err, errlen);
	if (!rc) {
		pr_info("new budget %llu/%llu/%llu ns for %zu thread(s)",
			(unsigned long long)runtime_ns, (unsigned long long)b.sched_deadline,
			(unsigned long long)period_ns, n);
		recount_partitions(&plan);
	}
	plan_free(&plan);
out_free:
	free(ti);
	free(prev);
	return rc;
}
