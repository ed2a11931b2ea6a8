/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serves.c - the processes a target's threads serve, found by task selectors or by the
 * sockets bound to a port; and the priority rule that follows them (serves.h).
 */
#include "serves.h"
#include "array.h"
#include "log.h"
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

static bool port_in(const int *ports, size_t n, unsigned int port)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned int)ports[i] == port)
			return true;
	return false;
}

/* One line of /proc/net/{udp,tcp}[6]: "sl: LOCAL_ADDR:PORT REM ST TX:RX TR:WHEN RETR UID
 * TIMEOUT INODE ..." (hex port). 1 with the inode when its local port is one of @ports. */
static int net_line(const char *line, const int *ports, size_t n, unsigned long *inode)
{
	char local[64];
	unsigned int port;
	const char *colon;

	if (sscanf(line, " %*s %63s %*s %*s %*s %*s %*s %*s %*s %lu", local, inode) != 2)
		return 0;	/* the header line */
	colon = strrchr(local, ':');
	if (!colon || sscanf(colon + 1, "%x", &port) != 1)
		return 0;
	return port_in(ports, n, port) && *inode != 0;
}

/* The inodes of sockets bound to one of @ports, from one /proc/net file. */
static int net_file_inodes(const char *name, const int *ports, size_t n, struct inode_set *s)
{
	char path[PATH_MAX], line[512];
	unsigned long inode;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/net/%s", irqres_paths.proc, name);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;	/* no IPv6: no udp6 */
	while (!rc && fgets(line, sizeof(line), f)) {
		if (!net_line(line, ports, n, &inode))
			continue;
		rc = ARRAY_RESERVE(s->v, s->cap, s->n + 1);
		if (!rc)
			s->v[s->n++] = inode;
	}
	fclose(f);
	return rc;
}

/* The inodes of the sockets bound to one of @ports: from the kernel's socket
 * diagnostics on the live /proc (sockdiag.h: one walk of the TCP hash tables where
 * /proc/net/tcp makes several), else (a kernel without them, or another proc root) from
 * its net/ files: the same sockets either way. */
static int bound_inodes(const int *ports, size_t n, struct inode_set *s)
{
	static const char *const files[] = { "udp", "udp6", "tcp", "tcp6" };
	int rc = -ENOENT;

	if (irqres_paths_real_proc()) {
		rc = sockdiag_bound_inodes(ports, n, &s->v, &s->n, &s->cap);
		if (!rc || rc == -ENOMEM)
			return rc;
		pr_debug("sockets on the serves: ports: no socket diagnostics (%s), reading "
			 "%s/net", strerror(-rc), irqres_paths.proc);
		s->n = 0;
	}
	rc = 0;
	for (size_t i = 0; !rc && i < sizeof(files) / sizeof(files[0]); i++)
		rc = net_file_inodes(files[i], ports, n, s);
	return rc;
}

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
	rc = bound_inodes(ports, n, &s);
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
