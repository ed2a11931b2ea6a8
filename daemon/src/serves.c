/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serves.c - the processes a target's threads serve, found by task selectors or by the
 * sockets bound to a port; and the priority rule that follows them (serves.h).
 */
#include "serves.h"
#include "array.h"
#include "match.h"
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

static bool inode_in(const struct inode_set *s, unsigned long inode)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == inode)
			return true;
	return false;
}

/* Whether process @pid has one of @s's sockets open. A process that exits meanwhile or
 * whose fds irqresd may not read holds none. */
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
		found = sscanf(link, "socket:[%lu]", &inode) == 1 && inode_in(s, inode);
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

/* Every process of the proc root that holds one of @s's sockets, ascending. */
static int socket_holders(const struct inode_set *s, pid_t **pids, size_t *n_pids)
{
	size_t cap = 0;
	struct dirent *de;
	DIR *dir;
	int rc = 0;

	dir = opendir(irqres_paths.proc);
	if (!dir)
		return -errno;
	while (!rc && (de = readdir(dir)) != NULL) {
		pid_t pid = pid_of(de->d_name);

		if (!pid || !holds_socket(pid, s))
			continue;
		rc = ARRAY_RESERVE(*pids, cap, *n_pids + 1);
		if (!rc)
			(*pids)[(*n_pids)++] = pid;
	}
	closedir(dir);
	return rc;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int serves_port_pids(const int *ports, size_t n, pid_t **pids, size_t *n_pids)
{
	struct inode_set s = { 0 };
	int rc;

	*pids = NULL;
	*n_pids = 0;
	rc = sockdiag_bound_inodes(ports, n, &s.v, &s.n, &s.cap);
	if (!rc && s.n)
		rc = socket_holders(&s, pids, n_pids);
	free(s.v);
	if (rc) {
		free(*pids);
		*pids = NULL;
		*n_pids = 0;
		return rc;
	}
	if (*n_pids > 1)
		qsort(*pids, *n_pids, sizeof(**pids), cmp_pid);
	return 0;
}

static bool pid_listed(const pid_t *pids, size_t n, pid_t pid)
{
	return bsearch(&pid, pids, n, sizeof(*pids), cmp_pid) != NULL;
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
		struct served_list *out)
{
	pid_t *holders = NULL;
	size_t n_holders = 0;
	int rc = 0;

	if (!sel->given || !tasks)
		return 0;
	if (sel->n_ports) {
		rc = serves_port_pids(sel->ports, sel->n_ports, &holders, &n_holders);
		if (rc || !n_holders)
			goto out;
	}
	for (size_t i = 0; !rc && i < tasks->n; i++) {
		const struct thread_info *ti = &tasks->v[i];

		if (!match_task_selects(&sel->comm, sel->pids, sel->n_pids, sel->cgroup, ti))
			continue;
		if (sel->n_ports && !pid_listed(holders, n_holders, ti->tgid))
			continue;
		rc = served_push(out, ti);
	}
out:
	free(holders);
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
