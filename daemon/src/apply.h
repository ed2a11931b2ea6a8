/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * apply.h - puts a plan into the kernel, all or nothing (apply_restore.h takes it back
 * out).
 *
 * Every change is recorded in the state (state.h) before it is made. On any failure,
 * apply_plan() undoes what it already did, in reverse order, and returns the first error
 * with a message naming the thread and the way out. A thread that is gone (ESRCH) is
 * skipped with a note. Functions return 0 (or a count) or -errno; none exits.
 */
#ifndef IRQRES_APPLY_H
#define IRQRES_APPLY_H

#include "cpuset.h"
#include "irqres.h"
#include "plan.h"
#include "state.h"

#include <stddef.h>
#include <stdint.h>

/*
 * A thread moved into its cpuset partition is refused SCHED_DEADLINE with EPERM until it
 * has run there once (the kernel checks the root domain of the CPU it last ran on); an
 * IRQ thread runs at its next interrupt, which an idle device raises seldom (e1000: every
 * 2 s). apply_plan() without a list of waiting threads (irqresd --once, which leaves no
 * loop behind to try again) waits for that in place, up to APPLY_MOVED_WAIT_NS, since its
 * answer depends on it; with one it puts each such thread there instead. apply_thread()
 * with pending does not wait either: it returns APPLY_PENDING with the thread moved and
 * recorded in the state. Either way the caller tries again with
 * apply_pending_try() (irqresd: from its main loop, until the thread has run, saying so
 * once APPLY_MOVED_WAIT_NS have passed), or gives up with apply_pending_cancel() (the
 * thread put back as it was).
 */
#define APPLY_MOVED_WAIT_NS (1000 * 1000 * 1000ULL)
#define APPLY_PENDING 2

struct apply_pending {
	struct thread_info thread;
	char partition[CPUSET_NAME_MAX];
	uint64_t runtime_ns, deadline_ns, period_ns;
};

/* The threads of an apply that wait to run in their partition: v has room for max, the
 * apply sets n (0 on a failure: they went back with the rest). */
struct apply_waiting {
	struct apply_pending *v;
	size_t n, max;
};

/* Applies every item of a feasible plan (an infeasible one is refused with its first
 * verdict). With plan->admission_off, admission control is turned off first (warned,
 * recorded, restored). With pw (a daemon, whose main loop tries again), a thread moved
 * into its partition that has not run there yet is not waited for: it goes into pw and
 * the apply succeeds; without pw (or with pw full) it is waited for in
 * place, up to APPLY_MOVED_WAIT_NS, and then refused. */
int apply_plan(const struct plan *plan, struct state *st, struct apply_waiting *pw,
	       char *err, size_t errlen);

/* Applies one matched thread (hotplug): partition when needed, then SCHED_DEADLINE.
 * 0, 1 the thread is gone, APPLY_PENDING (only with pending), or -errno with err set. */
int apply_thread(const struct profile *prof, const struct match *m, struct state *st,
		 struct apply_pending *pending, char *err, size_t errlen);
/* sched_setattr again: 0 in force (logged), -EPERM not yet, -ESRCH the thread is gone
 * (or its pid was reused), another -errno refused. waited_ns only goes into the log. */
int apply_pending_try(const struct apply_pending *p, uint64_t waited_ns);
/* Gives up: the thread back out of the partition, its record forgotten (logged). */
void apply_pending_cancel(struct state *st, const struct apply_pending *p);

/* New budget for threads irqres manages, admission-checked for all of them at once
 * before any change; on a refusal every thread keeps its budget. deadline_ns 0 keeps
 * the deadline's ratio to the period. */
int apply_set_budget(struct state *st, const pid_t *pids, size_t n, uint64_t runtime_ns,
		     uint64_t deadline_ns, uint64_t period_ns, char *err, size_t errlen);

#endif /* IRQRES_APPLY_H */
