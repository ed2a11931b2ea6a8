/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serves.h - the processes a target's threads serve (a target's `serves:`,
 * docs/process-aware.md), and the priority rule that couples a device thread to them.
 *
 * The task selectors of `serves:` (comm glob, pid, cgroup prefix) are the task targets'
 * own rule (match_task_selects). `port` finds the receivers live: the sockets bound to a
 * local UDP or TCP port (their inodes, sockdiag.h), and the processes whose /proc/PID/fd
 * holds one of them (socket:[INODE]); every thread of such a process is served. All
 * given selectors must hold. Functions return 0 or -errno.
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
 * order of @tasks. When @sel has ports, @holders[0..n_holders) are the processes holding
 * their sockets (serves_port_holders, ascending); they are ignored otherwise. A selector
 * that matches nothing serves nobody: 0 with nothing appended.
 */
int serves_find(const struct serves_sel *sel, const struct thread_list *tasks,
		const pid_t *holders, size_t n_holders, struct served_list *out);

/*
 * What the last look for a port's processes found (serves_port_holders); zeroed before
 * the first look. A profile's change of ports changes the sockets: the cache cannot
 * answer for other ports than its own.
 */
struct serves_cache {
	unsigned long *inodes;		/* the ports' sockets then, ascending */
	size_t n_inodes;
	pid_t *seen;			/* every process then, ascending */
	size_t n_seen;
	pid_t *holders;			/* those holding one of the sockets, ascending */
	size_t n_holders;
	unsigned int since_full;	/* looks since every process's files were read */
};

/* At most this many looks in a row read only what changed (see below). */
#define SERVES_FULL_EVERY 10

/*
 * The process ids (tgids) holding a socket bound to a local port among @ports[0..n),
 * into @c->holders (ascending). Every process's open files are read when the ports'
 * sockets are not those of the last look, and at every SERVES_FULL_EVERY-th look; in
 * between only those of the last holders and of processes new since (a fork inherits
 * its parent's sockets). So a process given a socket while it runs (over a UNIX socket,
 * pidfd_getfd) is found within SERVES_FULL_EVERY looks; a new socket on a port (a new
 * receiver binding it) at once. On an error @c is emptied (the next look is full).
 */
int serves_port_holders(const int *ports, size_t n, struct serves_cache *c);

void serves_cache_free(struct serves_cache *c);

/*
 * The mapping rule (docs/process-aware.md): the SCHED_FIFO priority a thread that serves
 * @l takes: the highest SCHED_FIFO/SCHED_RR priority among them, at least
 * SERVES_FIFO_FLOOR (a served SCHED_OTHER, BATCH, IDLE or DEADLINE thread counts as the
 * floor); 0 when @l is empty: the thread goes back to its own scheduling.
 */
int serves_fifo_priority(const struct served_list *l);

void serves_list_free(struct served_list *l);

#endif /* IRQRES_SERVES_H */
