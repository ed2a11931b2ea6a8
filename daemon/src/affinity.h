/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * affinity.h - CPU affinities put back after irqres's cpuset changes.
 *
 * The kernel rewrites CPU affinities whenever the cpuset hierarchy changes (6.1 and 6.12
 * alike): making a group a partition root, turning it back into a member and removing it
 * give every task of the root cgroup the root's new CPUs (per-CPU kernel threads
 * excepted), and moving a task gives it the CPUs of its new group. An IRQ thread that
 * followed its IRQ to CPU 2 would then be allowed on every CPU outside the partitions,
 * and stay so after they are gone. irqres gives back what its own changes took:
 *  - around each partition change, every kernel thread that may be moved (IRQ threads,
 *    and others bound to a CPU, such as a workqueue's rescuer, which keeps the CPU it last
 *    worked on) with fewer CPUs than the root had
 *    before the change keeps (or gets back) those CPUs, as far as its cgroup allows; what
 *    it cannot have while a partition holds its CPUs is given back at a later change,
 *    when the partition goes. An IRQ thread whose CPUs are exactly its IRQ's keeps them
 *    even when the root had no other CPU (its IRQ moved there while a partition held
 *    the rest): the removal's rewrite would give it every CPU. Such a thread's CPUs are remembered while any partition
 *    exists (the root's CPUs can shrink to exactly a thread's own), and forgotten when
 *    someone else changes them meanwhile. A thread with all of the root's CPUs follows
 *    the root: the kernel's rewrite is what it would have had;
 *  - a thread irqres moved back out of a partition gets the affinity its state record
 *    kept from before the move.
 * Only threads whose affinity changed during irqres's own change are touched, and only
 * under the real /proc over a real cgroup v2 hierarchy. What is owed is kept in the state
 * file too (its owed records), written before each change with what the change may take
 * and after it with what it took, so the restore after a crash (or after --once) gives
 * it back as a stop would. Functions return 0 or -errno.
 */
#ifndef IRQRES_AFFINITY_H
#define IRQRES_AFFINITY_H

#include "irqres.h"
#include "state.h"

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

/* The IRQ threads' affinities (in .cpus; .seen unused), and the root's CPUs, before a
 * change. */
struct affinity_watch {
	struct state_owed *v;
	size_t n, cap;
	cpu_set_t root;
};

/* cpuset_partition_create() and cpuset_partition_remove() with the affinities they
 * rewrite given back as above, and what is owed recorded in st before and after. */
int affinity_partition_create(struct state *st, const cpu_set_t *cpus, char *name,
			      size_t namelen, bool *created, char *err, size_t errlen);
int affinity_partition_remove(struct state *st, const char *name);

/* The steps of those. Notes the affinity of every IRQ thread; on failure the watch stays
 * empty and the change goes ahead unwatched. */
int affinity_watch_begin(struct affinity_watch *w);
/* Records in st, before the change, what it may take: the owed CPUs and those of every
 * noted thread with fewer CPUs than the root (seen not known yet). */
int affinity_watch_save(const struct affinity_watch *w, struct state *st);
/* Gives back what the change took from each noted IRQ thread (see above) and frees the
 * watch; returns how many threads have all of it back. */
int affinity_watch_end(struct affinity_watch *w);

/* What the noted thread s is to have after the change w watched: 0 and *want, or
 * -ENOENT when it follows the root (the kernel's rewrite stands). An IRQ thread whose
 * CPUs are exactly its IRQ's keeps them even when they were all the root had. */
int affinity_intended(const struct affinity_watch *w, const struct state_owed *s,
		      cpu_set_t *want);

/* Records what is owed now in st (after a change, or a put-back). */
int affinity_owed_save(struct state *st);
/* Adds st's owed records (a state file of an earlier run) to what is owed. */
void affinity_owed_load(const struct state *st);
/* Once irqres's partitions are gone: gives every thread still owed its CPUs back unless
 * someone else changed them since (as far as its cgroup allows), and forgets them all. */
void affinity_owed_settle(void);

/* On (a restore from a damaged state file, salvage.h): an IRQ thread a change rewrites
 * that has at least the root's CPUs and nothing owed is given the CPUs its IRQ is handled
 * on (once the IRQ is started) instead of following the root: its owed record may be lost. */
void affinity_rederive_irq(bool on);

/* Gives a thread irqres moved out of a partition its recorded affinity (nothing when
 * *recorded is empty). 1 when its affinity changed to it, 0 when it was already so, it
 * is gone (another starttime), or its cgroup allows only part of it now (logged; owed
 * for an IRQ thread), else -errno. */
int affinity_put_back(pid_t pid, unsigned long long starttime, const cpu_set_t *recorded);
/* 1 with the CPUs a partition took from this IRQ thread and irqres still owes it (what
 * a state record must keep as its affinity of before), 0 when none are owed. */
int affinity_owed(pid_t pid, unsigned long long starttime, cpu_set_t *cpus);

#endif /* IRQRES_AFFINITY_H */
