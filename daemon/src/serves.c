/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serves.c - the processes a target's threads serve, found by task selectors or by the
 * sockets bound to a port; and the priority rule that follows them (serves.h).
 */
#include "serves.h"
#include "array.h"
#include "match.h"
#include "pidset.h"
#include "sockdiag.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct inode_set {
	unsigned long *v;
	size_t n, cap;
};

static int cmp_inode(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return (x > y) - (x < y);
}

/* Whether process @pid has one of @s's sockets (ascending) open. A process that exits
 * meanwhile or whose fds irqresd may not read holds none. */
static bool holds_socket(pid_t pid, const struct inode_set *s)
{
	char path[PATH_MAX], link[64];
	struct dirent *de;
	unsigned long inode;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/fd", irqres_paths.proc, (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir)) != NULL) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		found = sscanf(link, "socket:[%lu]", &inode) == 1 &&
			bsearch(&inode, s->v, s->n, sizeof(*s->v), cmp_inode);
	}
	closedir(dir);
	return found;
}

static pid_t pid_of(const char *name)
{
	char *end;
	long v;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	errno = 0;
	v = strtol(name, &end, 10);
	return *end || errno || v > INT_MAX ? 0 : (pid_t)v;
}

/*
 * Every process of the proc root into @seen, and those holding one of @s's sockets into
 * @holders, both ascending. Unless @full, only the processes that held one at the last
 * look (@c) or are new since have their files read: the others held none then.
 */
static int socket_holders(const struct inode_set *s, const struct serves_cache *c, bool full,
			  struct pidset *seen, struct pidset *holders)
{
	struct dirent *de;
	DIR *dir;
	int rc = 0;

	dir = opendir(irqres_paths.proc);
	if (!dir)
		return -errno;
	while (!rc && (de = readdir(dir)) != NULL) {
		pid_t pid = pid_of(de->d_name);

		if (!pid)
			continue;
		rc = pidset_add(seen, pid);
		if (rc || !(full || pidset_has(c->holders, c->n_holders, pid) ||
			    !pidset_has(c->seen, c->n_seen, pid)))
			continue;
		if (holds_socket(pid, s))
			rc = pidset_add(holders, pid);
	}
	closedir(dir);
	pidset_sort(seen);
	pidset_sort(holders);
	return rc;
}

static bool same_inodes(const struct serves_cache *c, const struct inode_set *s)
{
	return c->n_inodes == s->n && (!s->n || !memcmp(c->inodes, s->v, s->n * sizeof(*s->v)));
}

int serves_port_holders(const int *ports, size_t n, struct serves_cache *c)
{
	struct inode_set s = { 0 };
	struct pidset seen = { 0 }, holders = { 0 };
	bool full;
	int rc;

	rc = sockdiag_bound_inodes(ports, n, &s.v, &s.n, &s.cap);
	if (!rc && s.n > 1)
		qsort(s.v, s.n, sizeof(*s.v), cmp_inode);
	full = !same_inodes(c, &s) || c->since_full + 1 >= SERVES_FULL_EVERY;
	if (!rc && s.n)
		rc = socket_holders(&s, c, full, &seen, &holders);
	if (rc) {
		free(s.v);
		pidset_free(&seen);
		pidset_free(&holders);
		serves_cache_free(c);	/* the next look reads every process's files */
		return rc;
	}
	serves_cache_free(c);
	*c = (struct serves_cache){ s.v, s.n, seen.v, seen.n, holders.v, holders.n,
				    full ? 0 : c->since_full + 1 };
	return 0;
}

void serves_cache_free(struct serves_cache *c)
{
	free(c->inodes);
	free(c->seen);
	free(c->holders);
	*c = (struct serves_cache){ .since_full = c->since_full };
}

static int served_push(struct served_list *out, const struct thread_info *ti)
{
	struct served *s;

	if (ARRAY_RESERVE(out->v, out->cap, out->n + 1))
		return -ENOMEM;
	s = &out->v[out->n++];
	s->pid = ti->pid;
	s->tgid = ti->tgid;
	snprintf(s->comm, sizeof(s->comm), "%s", ti->comm);
	s->policy = ti->policy;
	s->priority = ti->priority;
	return 0;
}

int serves_find(const struct serves_sel *sel, const struct thread_list *tasks,
		const pid_t *holders, size_t n_holders, struct served_list *out)
{
	int rc = 0;

	if (!sel->given || !tasks)
		return 0;
	for (size_t i = 0; !rc && i < tasks->n; i++) {
		const struct thread_info *ti = &tasks->v[i];

		if (!match_task_selects(&sel->comm, sel->pids, sel->n_pids, sel->cgroup, ti))
			continue;
		if (sel->n_ports && !pidset_has(holders, n_holders, ti->tgid))
			continue;
		rc = served_push(out, ti);
	}
	return rc;
}

int serves_fifo_priority(const struct served_list *l)
{
	int prio = 0;

	for (size_t i = 0; i < l->n; i++) {
		int p = SERVES_FIFO_FLOOR;

		if ((l->v[i].policy == SCHED_FIFO || l->v[i].policy == SCHED_RR) &&
		    l->v[i].priority > p)
			p = l->v[i].priority;
		if (p > prio)
			prio = p;
	}
	return prio;
}

void serves_list_free(struct served_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
