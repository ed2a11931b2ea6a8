/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serves.h - the processes a target's threads serve (a target's `serves:`,
 * docs/process-aware.md), and the priority rule that couples a device thread to them.
 *
 * The task selectors of `serves:` (comm glob, pid, cgroup prefix) are the task targets'
 * own rule (match_task_selects). `port` finds the receivers live: the sockets bound to a
 * local UDP or TCP port in /proc/net/{udp,udp6,tcp,tcp6} (their inodes), and the
 * processes whose /proc/PID/fd holds one of them (socket:[INODE]); every thread of such
 * a process is served. All given selectors must hold. Functions return 0 or -errno.
 */
#ifndef IRQRES_SERVES_H
#define IRQRES_SERVES_H

#include "irqres.h"

#include <stddef.h>

#define SERVES_FIFO_FLOOR 1	/* the lowest SCHED_FIFO priority a coupled thread takes */

/* One served thread as found. */
struct served {
	pid_t pid, tgid;
	char comm[COMM_MAX];
	int policy, priority;
};

struct served_list {
	struct served *v;
	size_t n, cap;
};

/*
 * The threads of @tasks (discover_scan_tasks) that @sel selects, appended to @out in the
 * order of @tasks. Sockets are looked up only when @sel has ports. A selector that
 * matches nothing serves nobody: 0 with nothing appended.
 */
int serves_find(const struct serves_sel *sel, const struct thread_list *tasks,
		struct served_list *out);

/*
 * The process ids (tgids) holding a socket bound to a local port among @ports[0..n),
 * ascending, into *@pids (malloc'd, *@n_pids of them; NULL when none).
 */
int serves_port_pids(const int *ports, size_t n, pid_t **pids, size_t *n_pids);

/*
 * The mapping rule (docs/process-aware.md): the SCHED_FIFO priority a thread that serves
 * @l takes: the highest SCHED_FIFO/SCHED_RR priority among them, at least
 * SERVES_FIFO_FLOOR (a served SCHED_OTHER, BATCH, IDLE or DEADLINE thread counts as the
 * floor); 0 when @l is empty: the thread goes back to its own scheduling.
 */
int serves_fifo_priority(const struct served_list *l);

void serves_list_free(struct served_list *l);

#endif /* IRQRES_SERVES_H */
