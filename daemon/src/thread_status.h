/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * thread_status.h - one reserved thread as status JSON shows it, written in one place.
 *
 * The daemon's status reply (docs/protocol.md, THREAD and WAITING) and irqresd --status
 * --json (the threads RUN_DIR/state records, when no daemon runs) describe a thread with
 * the same members: pid, comm, cpus, its scheduling now (policy and, under
 * SCHED_DEADLINE, runtime_ns/period_ns/deadline_ns in ns), its scheduling of before
 * (orig_policy, orig_priority) and "cpuset", the cgroup directory of the partition irqres
 * moved it into (null: none).  Each caller adds the members only it knows (the status
 * reply: irq, actions, secondary, drift, taken; --status: alive).
 */
#ifndef IRQRES_THREAD_STATUS_H
#define IRQRES_THREAD_STATUS_H

#include "dl.h"
#include "json.h"

#include <sys/types.h>

struct thread_status {
	pid_t pid;
	const char *comm;
	const char *cpus;		/* its CPU list, "" when unknown */
	const struct dl_attr *now;	/* its scheduling now; NULL: gone ("policy":"gone") */
	const struct dl_attr *reserved;	/* the budget written when gone; NULL: none */
	int orig_policy, orig_priority;	/* its scheduling before irqres */
	const char *partition;		/* its partition's cgroup path, "" or NULL: none */
};

/* Writes the members of @s into the object the caller has opened in @j. */
void thread_status_members(const struct thread_status *s, struct json *j);

/* Writes the "cpuset" member: the cgroup directory of @partition (its cgroup path when
 * the directory name does not fit), null when @partition is "" or NULL. */
void thread_status_cpuset(const char *partition, struct json *j);

#endif /* IRQRES_THREAD_STATUS_H */
