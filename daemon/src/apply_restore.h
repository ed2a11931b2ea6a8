/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * apply_restore.h - gives back what apply.h changed, from the records in the state
 * (state.h): each thread's scheduling policy, cgroup and affinity of before, the cpuset
 * partitions irqres created, +cpuset if irqres enabled it, HRTICK_DL and admission
 * control.  Restore is best effort: a failure is logged and the next item is put back
 * all the same; none exits.  Functions return 0 (or a count) or -errno.
 */
#ifndef IRQRES_APPLY_RESTORE_H
#define IRQRES_APPLY_RESTORE_H

#include "state.h"

#include <sys/types.h>

/* Puts one recorded thread back (policy, cgroup) and forgets it. A thread gone or whose
 * pid was reused is only forgotten, with a log line. */
int apply_restore_thread(struct state *st, pid_t pid);
/* A thread that exited: forgets its record and removes the partition irqres created for
 * it when no recorded thread is left in it (kept while the kernel still counts the dying
 * thread). apply_partitions_sweep() removes every such partition that is empty now;
 * apply_thread() calls it first, so a hotplugged thread is planned without them. */
void apply_forget_thread(struct state *st, pid_t pid);
void apply_partitions_sweep(struct state *st);

/*
 * From 6.19 the kernel counts a thread staying beside a partition (PF_NO_SETAFFINITY) in
 * the root cgroup's domain, yet checks a change of its policy or budget against the
 * partition's domain, where it runs, and charges the change there: after irqres changed
 * one, the partition is made to count again (cpuset_partition_recount()), so that its
 * count is again what the next plan reads (docs/vm.md, "What 7.3 changes"). A failure is
 * logged; the partition's state is then what verify reports.
 */
void apply_recount(const char *partition);

/* Best effort, everything: threads in reverse order, partitions irqres created,
 * +cpuset if irqres enabled it, admission control; deletes the state file when all
 * went back. Returns the number of threads restored, or -errno of the first failure. */
int apply_restore_all(struct state *st);

#endif /* IRQRES_APPLY_RESTORE_H */
