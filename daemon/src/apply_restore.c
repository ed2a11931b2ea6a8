/* SPDX-License-Identifier: GPL-2.0-only */
/* apply_restore.c - what apply.c changed, given back; see apply_restore.h. */
#include "apply_restore.h"
#include "affinity.h"
#include "array.h"
#include "cpuset.h"
#include "discover.h"
#include "dl.h"
#include "enforce.h"
#include "log.h"
#include "napiswitch.h"
#include "plan.h"
#include "rt_runtime.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Removes a partition irqres created once no recorded thread is in it any more. quiet:
 * a thread that has just exited can still hold it for a moment; it is kept without a
 * word and removed by a later apply_partitions_sweep(). */
static void partition_release(struct state *st, const char *name, bool quiet)
{
	struct state_partition *p = state_find_partition(st, name);

	if (!p)
		return;
	for (size_t i = 0; i < st->n_threads; i++)
		if (strcmp(st->threads[i].partition, name) == 0)
			return;
	if (p->created && affinity_partition_remove(st, name) == -EBUSY) {
		if (!quiet)
			pr_warn("cpuset partition %s still holds tasks irqres did not put there: "
				"kept", name);
		return;
	}
	state_forget_partition(st, name);
}

void apply_recount(const char *partition)
{
	char err[512];

	if (cpuset_partition_recount(partition, err, sizeof(err)))
		pr_err("%s", err);
	else
		pr_info("cpuset partition %s: the kernel counted the deadline bandwidth of its "
			"root domains again (a thread beside it changed)", partition);
}

void apply_forget_thread(struct state *st, pid_t pid)
{
	struct state_thread *t = state_find_thread(st, pid);
	char part[CPUSET_NAME_MAX];

	if (!t)
		return;
	snprintf(part, sizeof(part), "%s", t->partition);
	state_forget_thread(st, pid);
	if (part[0])
		partition_release(st, part, true);
}

void apply_partitions_sweep(struct state *st)
{
	for (size_t i = st->n_parts; i-- > 0;) {
		char name[CPUSET_NAME_MAX];

		snprintf(name, sizeof(name), "%s", st->parts[i].name);
		partition_release(st, name, true);
	}
}

/* The attributes a record says the thread had. */
static void recorded_attr(const struct state_thread *t, struct dl_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->sched_policy = (uint32_t)t->policy;
	a->sched_flags = t->flags & SCHED_FLAG_RESET_ON_FORK;
	if (t->policy == SCHED_FIFO || t->policy == SCHED_RR) {
		a->sched_priority = (uint32_t)t->priority;
	} else if (t->policy == SCHED_DEADLINE) {
		a->sched_runtime = t->dl_runtime_ns;
		a->sched_deadline = t->dl_deadline_ns;
		a->sched_period = t->dl_period_ns;
	} else {
		a->sched_nice = t->nice;
	}
}

/* Back into its cgroup of before, or the root cgroup when that is gone. */
static int recorded_cgroup(const struct state_thread *t, pid_t pid)
{
	char err[512];
	int rc = cpuset_move(pid, t->cgroup, err, sizeof(err));

	if (rc == -ENOENT) {
		pr_warn("%s (pid %d): its cgroup %s is gone; it goes to the root cgroup", t->comm,
			(int)pid, t->cgroup);
		rc = cpuset_move(pid, "/", err, sizeof(err));
	}
	if (rc && rc != -ESRCH)
		pr_err("%s (pid %d): %s", t->comm, (int)pid, err);
	return rc;
}

/* apply_restore_thread(), but a partition that kept its count of the change of a thread
 * beside it (apply_recount()) is named in @recount ("" none) for the caller to recount. */
static int restore_thread(struct state *st, pid_t pid, char recount[CPUSET_NAME_MAX])
{
	struct state_thread *t = state_find_thread(st, pid);
	char part[CPUSET_NAME_MAX];
	unsigned long long starttime;
	cpu_set_t affinity;
	bool moved, stayed;
	struct dl_attr a;
	int rc;

	recount[0] = '\0';
	if (!t)
		return -ENOENT;
	snprintf(part, sizeof(part), "%s", t->partition);
	stayed = part[0] && !t->cgroup[0];
	starttime = t->starttime;
	affinity = t->affinity;
	if (!discover_still_same(&(struct thread_info){ .pid = pid,
						     .starttime = t->starttime })) {
		pr_info("%s (pid %d) is gone (or its pid was reused): nothing to restore", t->comm,
			(int)pid);
		state_forget_thread(st, pid);
		partition_release(st, part, false);
		return 0;
	}
	recorded_attr(t, &a);
	/* the policy first: a DL thread could not leave its partition with its bandwidth */
	rc = dl_set(pid, &a);
	if (rc && rc != -ESRCH) {
		pr_err("%s (pid %d): cannot put back %s: %s", t->comm, (int)pid,
		       dl_policy_name(t->policy), strerror(-rc));
		return rc;
	}
	moved = !rc && part[0] && t->cgroup[0];
	if (moved) {
		rc = recorded_cgroup(t, pid);
		if (rc && rc != -ESRCH)
			return rc;
	}
	if (rc == 0)
		pr_info("%s (pid %d): restored to %s", t->comm, (int)pid, dl_policy_name(t->policy));
	else
		pr_info("%s (pid %d) is gone: nothing to restore", t->comm, (int)pid);
	state_forget_thread(st, pid);
	partition_release(st, part, false);
	/* kept for other threads: its count took this change */
	if (stayed && rc == 0 && state_find_partition(st, part) && plan_dl_counts_by_cgroup())
		snprintf(recount, CPUSET_NAME_MAX, "%s", part);
	if (moved && rc == 0) {	/* once its partition is gone, if it goes */
		affinity_put_back(pid, starttime, &affinity);
		affinity_owed_save(st);
	}
	return rc == 0 ? 1 : 0;
}

int apply_restore_thread(struct state *st, pid_t pid)
{
	char recount[CPUSET_NAME_MAX];
	int rc = restore_thread(st, pid, recount);

	if (recount[0])
		apply_recount(recount);
	return rc;
}

/* The partitions restore-all's threads left to recount, once each, that are still there:
 * those it removed were rebuilt by their removal. */
static void recount_kept(char (*names)[CPUSET_NAME_MAX], size_t n)
{
	char dir[PATH_MAX];

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(names[j], names[i]) == 0;
		if (!seen && cpuset_group_dir(names[i], dir, sizeof(dir)) == 0 &&
		    access(dir, F_OK) == 0)
			apply_recount(names[i]);
	}
}

/* Removes the partitions irqres created and forgets them; -errno of the first failure. */
static int partitions_restore(struct state *st)
{
	int first = 0;

	for (size_t i = st->n_parts; i-- > 0;) {
		struct state_partition *p = &st->parts[i];
		char name[CPUSET_NAME_MAX];
		int rc = 0;

		snprintf(name, sizeof(name), "%s", p->name);
		if (p->created)
			rc = affinity_partition_remove(st, name);
		if (rc && rc != -ENOENT) {
			if (!first)
				first = rc;
			continue;
		}
		state_forget_partition(st, name);
	}
	return first;
}

/* The records of the threads irqres moved into partitions (*n of them; free the array). */
static struct state_thread *moved_threads(const struct state *st, size_t *n)
{
	struct state_thread *v = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 0; i < st->n_threads; i++)
		if (st->threads[i].partition[0] && st->threads[i].cgroup[0] &&
		    !ARRAY_RESERVE(v, cap, *n + 1))
			v[(*n)++] = st->threads[i];
	return v;
}

int apply_restore_all(struct state *st)
{
	/* to put their affinity back at the end: each partition's removal rewrites the
	 * affinity of every task in the root cgroup */
	size_t n_moved;
	struct state_thread *moved = moved_threads(st, &n_moved);
	char (*recount)[CPUSET_NAME_MAX] = calloc(st->n_threads ? st->n_threads : 1,
						  sizeof(*recount));
	size_t n_recount = 0;
	int restored = 0, first = 0, rc;

	affinity_owed_load(st);		/* an earlier run's, after a crash or --once */
	/* one rewrite of the state file for the threads, not one per thread: a record
	 * still in the file after a crash here only restores its thread once more */
	state_batch_begin(st);
	for (size_t i = st->n_threads; i-- > 0;) {
		char part[CPUSET_NAME_MAX] = "";

		rc = i < st->n_threads ? restore_thread(st, st->threads[i].pid, part) : 0;
		if (part[0] && recount)
			snprintf(recount[n_recount++], CPUSET_NAME_MAX, "%s", part);
		else if (part[0])	/* no memory to defer it */
			apply_recount(part);
		if (rc > 0)
			restored++;
		else if (rc < 0 && !first)
			first = rc;
	}
	state_batch_end(st);
	rc = partitions_restore(st);
	if (rc && !first)
		first = rc;
	if (recount)
		recount_kept(recount, n_recount);
	free(recount);
	if (st->cpuset_added && st->n_parts == 0) {
		cpuset_disable();	/* which rewrites the affinity of every task in a group */
		state_clear_cpuset_added(st);
	}
	for (size_t i = 0; i < n_moved; i++)
		affinity_put_back(moved[i].pid, moved[i].starttime, &moved[i].affinity);
	free(moved);
	if (st->n_parts == 0)
		affinity_owed_settle();
	affinity_owed_save(st);
	rc = enforce_restore(st);	/* HRTICK_DL, when irqres switched it */
	first = first ? first : rc;
	rc = napiswitch_restore(st, NULL, 0);	/* after the NAPI kthreads' own records */
	first = first ? first : rc;
	if (st->rt_runtime_saved) {
		rc = rt_runtime_restore(st, st->rt_runtime_us);
		if (rc && !first)
			first = rc;
	}
	if (state_empty(st))
		state_remove(st);
	return first ? first : restored;
}
