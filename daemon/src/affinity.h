/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * affinity.h - CPU affinities put back after irqres's cpuset changes.
 *
 * The kernel rewrites CPU affinities whenever the cpuset hierarchy changes (6.1 and 6.12
 * alike): making a group a partition root, turning it back into a member and removing it
 * give every task of the root cgroup the root's new effective CPUs (per-CPU kernel threads
 * excepted), and moving a task gives it the CPUs of its new group. An IRQ thread that
 * followed its IRQ to CPU 2 is then allowed on every CPU outside the partitions, and
 * stays so until its IRQ's affinity is set again, which may be never. irqres puts back
 * what its own changes disturbed:
 *  - an IRQ thread gets its IRQ's CPUs (discover_irq_cpus(): what the kernel itself gives
 *    the thread at an interrupt after the IRQ's affinity was set), as far as its cpuset
 *    allows - unless its IRQ never fired: such a thread still has the CPUs it was created
 *    with, and the kernel's rewrite is left alone (the recorded ones for a moved thread);
 *  - another thread irqres moved gets the affinity recorded before the move.
 * Only threads whose affinity changed during irqres's own operation are touched, and only
 * under the real /proc (irqres_paths.proc == "/proc"); the IRQ threads are watched only
 * over a real cgroup v2 hierarchy. Functions return 0 or -errno.
 */
#ifndef IRQRES_AFFINITY_H
#define IRQRES_AFFINITY_H

#include "irqres.h"

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

struct affinity_seen {
	pid_t pid;
	unsigned long long starttime;
	int irq;
	char comm[COMM_MAX];
	cpu_set_t cpus;
};

/* The IRQ threads' affinities before a change; zero-initialise it. */
struct affinity_watch {
	struct affinity_seen *v;
	size_t n, cap;
};

/* Notes the affinity of every IRQ thread. On failure the watch stays empty and the
 * change goes ahead unwatched. */
int affinity_watch_begin(struct affinity_watch *w);
/* Puts back each noted IRQ thread whose affinity changed since affinity_watch_begin()
 * and frees the watch; returns how many were put back. */
int affinity_watch_end(struct affinity_watch *w);

/* Puts back one thread irqres moved out of a partition: an IRQ thread its IRQ's CPUs,
 * another thread *recorded (when not empty). 1 when its affinity changed, 0 when it was
 * already so, it is gone (starttime differs), or its cpuset does not allow those CPUs
 * any more (logged), else -errno. */
int affinity_put_back(pid_t pid, unsigned long long starttime, const cpu_set_t *recorded);

#endif /* IRQRES_AFFINITY_H */
