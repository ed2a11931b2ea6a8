/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stats.c - schedstat, context switches and interrupt counts under irqres_paths.proc.
 *
 * `stats` is asked once per controller tick for every managed thread, so the files are
 * opened once and kept: each request pread()s them at offset 0, which makes a proc
 * seq_file generate its text afresh. That saves the path walk and the open/close of two
 * files per thread. A kept fd belongs to the task it was opened for; when that task is
 * gone pread() fails with ESRCH and the fd is reopened by path once, in case the pid
 * now names another thread. stats_thread_forget() closes a thread's fds. At most half
 * of RLIMIT_NOFILE is kept open; threads beyond that are read by open/read/close.
 *
 * The context switch counts come from taskstats (generic netlink, TASKSTATS_CMD_GET by
 * pid: the same nvcsw/nivcsw that /proc/PID/status prints, for about half its cost)
 * when the kernel has it and irqresd may use it (CAP_NET_ADMIN); else, and for fixture
 * trees, from /proc/PID/status.
 */
#include "stats.h"
#include "array.h"
#include "interrupts.h"

#include "irqres.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum { F_SCHEDSTAT, F_STATUS, F_NUM };
static const char *const file_names[F_NUM] = { "schedstat", "status" };

struct kept {
	pid_t pid;
	int fd[F_NUM];
};

static struct {
	struct kept *k;
	size_t n, cap;
	size_t max;		/* threads whose fds may be kept; 0: not yet known */
	int interrupts_fd;
	char *buf;		/* one buffer for every read; grows to the largest file */
	size_t buf_cap;
	char root[sizeof(irqres_paths.proc)];	/* the proc root the fds were opened under */
	/* taskstats: the socket, the family id, whether it was tried, the last sequence */
	int ts_fd;
	uint16_t ts_family;
	bool ts_tried;
	uint32_t ts_seq;
} S = { .interrupts_fd = -1, .ts_fd = -1 };

static int proc_open(pid_t pid, const char *name)
{
	char path[320];
	int fd;

	if (pid > 0)
		snprintf(path, sizeof(path), "%s/%d/%s", irqres_paths.proc, (int)pid, name);
	else
		snprintf(path, sizeof(path), "%s/%s", irqres_paths.proc, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT && pid > 0 ? -ESRCH : -errno;
	return fd;
}

/* The whole file from offset 0 into S.buf, NUL-terminated; its length or -errno. */
static ssize_t read_whole(int fd)
{
	size_t len = 0;

	for (;;) {
		ssize_t r;

		/* pages at a time: /proc/interrupts takes a few */
		if (S.buf_cap - len < 2 && ARRAY_RESERVE(S.buf, S.buf_cap, len + 4096))
			return -ENOMEM;
		r = pread(fd, S.buf + len, S.buf_cap - len - 1, (off_t)len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	S.buf[len] = '\0';
	return (ssize_t)len;
}

/* ---- taskstats ---- */

struct genl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[64];
};

/* One request with one attribute; returns 0 or -errno. */
static int ts_send(uint16_t type, uint8_t cmd, uint16_t attr, const void *data, size_t len)
{
	struct genl_req m;
	struct nlattr *na;

	memset(&m, 0, sizeof(m));
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.n.nlmsg_type = type;
	m.n.nlmsg_flags = NLM_F_REQUEST;
	m.n.nlmsg_seq = ++S.ts_seq;
	m.g.cmd = cmd;
	m.g.version = 1;
	na = (struct nlattr *)((char *)&m + NLMSG_ALIGN(m.n.nlmsg_len));
	na->nla_type = attr;
	na->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)na + NLA_HDRLEN, data, len);
	m.n.nlmsg_len = NLMSG_ALIGN(m.n.nlmsg_len) + NLA_ALIGN(na->nla_len);
	while (send(S.ts_fd, &m, m.n.nlmsg_len, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* The reply to the last request into buf: the generic netlink payload and its length in
 * *len, or -errno (the kernel's own error, e.g. -ESRCH for a pid that is gone). */
static int ts_recv(char *buf, size_t cap, const struct nlattr **attrs, size_t *len)
{
	for (;;) {
		ssize_t r = recv(S.ts_fd, buf, cap, 0);
		const struct nlmsghdr *n = (const struct nlmsghdr *)buf;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!NLMSG_OK(n, (size_t)r))
			return -EBADMSG;
		if (n->nlmsg_seq != S.ts_seq)
			continue;	/* the answer to an earlier request given up on */
		if (n->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(n);

			return n->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error :
			       -EBADMSG;
		}
		if (n->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
			return -EBADMSG;
		*attrs = (const struct nlattr *)((const char *)NLMSG_DATA(n) + GENL_HDRLEN);
		*len = n->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		return 0;
	}
}

/* The attribute of type in [a, a + len), or NULL. */
static const struct nlattr *ts_attr(const struct nlattr *a, size_t len, uint16_t type)
{
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		size_t step = NLA_ALIGN(a->nla_len);

		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		if (step >= len)
			break;
		len -= step;
		a = (const struct nlattr *)((const char *)a + step);
	}
	return NULL;
}

/* Opens the socket and finds the TASKSTATS family, once; false when there is none. */
static bool ts_ready(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 1 };	/* the kernel answers at once; never hang */
	const struct nlattr *attrs, *id;
	char buf[1024];
	size_t len;

	if (S.ts_tried)
		return S.ts_fd >= 0;
	S.ts_tried = true;
	S.ts_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (S.ts_fd < 0)
		return false;
	if (bind(S.ts_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(S.ts_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    ts_send(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
		    sizeof(TASKSTATS_GENL_NAME)) < 0 ||
	    ts_recv(buf, sizeof(buf), &attrs, &len) < 0 ||
	    !(id = ts_attr(attrs, len, CTRL_ATTR_FAMILY_ID)) || id->nla_len < NLA_HDRLEN + 2)
		goto out_close;
	memcpy(&S.ts_family, (const char *)id + NLA_HDRLEN, sizeof(S.ts_family));
	return true;

out_close:
	close(S.ts_fd);
	S.ts_fd = -1;
	return false;
}

/* The switch counts of pid by taskstats. -ESRCH when it is gone; other errors mean
 * taskstats cannot be used here (the caller falls back to status). */
static int ts_switches(pid_t pid, struct thread_stats *st)
{
	const struct nlattr *attrs, *aggr, *ts;
	struct taskstats t;
	char buf[1024];
	uint32_t p = (uint32_t)pid;
	size_t len;
	int rc;

	rc = ts_send(S.ts_family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, &p, sizeof(p));
	if (!rc)
		rc = ts_recv(buf, sizeof(buf), &attrs, &len);
	if (rc)
		return rc;
	aggr = ts_attr(attrs, len, TASKSTATS_TYPE_AGGR_PID);
	if (!aggr)
		return -EBADMSG;
	ts = ts_attr((const struct nlattr *)((const char *)aggr + NLA_HDRLEN),
		     aggr->nla_len - NLA_HDRLEN, TASKSTATS_TYPE_STATS);
	if (!ts || ts->nla_len < NLA_HDRLEN + offsetof(struct taskstats, nivcsw) + 8)
		return -EBADMSG;
	len = (size_t)ts->nla_len - NLA_HDRLEN;	/* older kernels send a shorter struct */
	memset(&t, 0, sizeof(t));
	memcpy(&t, (const char *)ts + NLA_HDRLEN, len < sizeof(t) ? len : sizeof(t));
	st->voluntary_switches = t.nvcsw;
	st->involuntary_switches = t.nivcsw;
	return 0;
}

static void ts_close(void)
{
	if (S.ts_fd >= 0)
		close(S.ts_fd);
	S.ts_fd = -1;
	S.ts_tried = false;
}

bool stats_switches_by_taskstats(void)
{
	return irqres_paths_real_proc() && ts_ready();
}

/* ---- kept proc fds ---- */

static void kept_close(struct kept *k)
{
	int i;

	for (i = 0; i < F_NUM; i++)
		if (k->fd[i] >= 0)
			close(k->fd[i]);
}

/* Drops every kept fd when the proc root changed (tests point it at fixtures). */
static void check_root(void)
{
	if (strcmp(S.root, irqres_paths.proc) == 0)
		return;
	stats_fini();
	snprintf(S.root, sizeof(S.root), "%s", irqres_paths.proc);
}

/* Threads that may keep their fds: half of RLIMIT_NOFILE, the rest for everything else. */
static size_t kept_max(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 4096;
	return rl.rlim_cur / 2 / F_NUM;
}

/* The kept fds of pid, a new entry for it, or NULL when no more may be kept. */
static struct kept *kept_get(pid_t pid)
{
	size_t i;
	int f;

	for (i = 0; i < S.n; i++)
		if (S.k[i].pid == pid)
			return &S.k[i];
	if (!S.max)
		S.max = kept_max();
	if (S.n >= S.max)
		return NULL;
	if (ARRAY_RESERVE(S.k, S.cap, S.n + 1))
		return NULL;
	S.k[S.n].pid = pid;
	for (f = 0; f < F_NUM; f++)
		S.k[S.n].fd[f] = -1;
	return &S.k[S.n++];
}

/* File f of pid into S.buf by open, read, close. */
static ssize_t once_read(pid_t pid, int f)
{
	int fd = proc_open(pid, file_names[f]);
	ssize_t r;

	if (fd < 0)
		return fd;
	r = read_whole(fd);
	close(fd);
	return r;
}

/* File f of thread k into S.buf: the kept fd, reopened when missing or stale. */
static ssize_t kept_read(struct kept *k, int f)
{
	bool fresh = false;
	ssize_t r;

	for (;;) {
		if (k->fd[f] < 0) {
			int fd = proc_open(k->pid, file_names[f]);

			if (fd < 0)
				return fd;
			k->fd[f] = fd;
			fresh = true;
		}
		r = read_whole(k->fd[f]);
		if (r != -ESRCH || fresh)
			return r;
		close(k->fd[f]);	/* its task is gone; the pid may name a new one */
		k->fd[f] = -1;
	}
}

/* The number after "\n<key>" in S.buf ("voluntary_ctxt_switches:\t5000"). */
static int field_u64(const char *key, uint64_t *v)
{
	const char *p = strstr(S.buf, key);
	char *end;

	if (!p)
		return -EINVAL;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return errno ? -EINVAL : 0;
}

int stats_thread_read(pid_t pid, struct thread_stats *st)
{
	unsigned long long cpu, wait, slices;
	struct kept *k;
	ssize_t r;

	memset(st, 0, sizeof(*st));
	check_root();
	k = kept_get(pid);
	r = k ? kept_read(k, F_SCHEDSTAT) : once_read(pid, F_SCHEDSTAT);
	if (r < 0)
		goto fail;
	if (sscanf(S.buf, "%llu %llu %llu", &cpu, &wait, &slices) != 3)
		return -EINVAL;
	st->cpu_time_ns = cpu;
	st->wait_time_ns = wait;
	st->timeslices = slices;

	if (stats_switches_by_taskstats()) {
		r = ts_switches(pid, st);
		if (r == 0 || r == -ESRCH)
			goto out;
		pr_warn("taskstats: %s: the context switch counts come from /proc/PID/status "
			"from now on", strerror((int)-r));
		ts_close();
		S.ts_tried = true;	/* not again */
	}
	r = k ? kept_read(k, F_STATUS) : once_read(pid, F_STATUS);
	if (r < 0)
		goto fail;
	if (field_u64("\nvoluntary_ctxt_switches:", &st->voluntary_switches) < 0 ||
	    field_u64("\nnonvoluntary_ctxt_switches:", &st->involuntary_switches) < 0)
		return -EINVAL;
	return 0;
out:
	if (r == 0)
		return 0;
fail:
	if (r == -ESRCH)
		stats_thread_forget(pid);
	return (int)r;
}

void stats_thread_forget(pid_t pid)
{
	size_t i;

	for (i = 0; i < S.n; i++) {
		if (S.k[i].pid != pid)
			continue;
		kept_close(&S.k[i]);
		S.k[i] = S.k[--S.n];
		return;
	}
}

size_t stats_kept_fds(void)
{
	size_t i, n = S.interrupts_fd >= 0;
	int f;

	for (i = 0; i < S.n; i++)
		for (f = 0; f < F_NUM; f++)
			n += S.k[i].fd[f] >= 0;
	return n;
}

void stats_fini(void)
{
	size_t i;

	for (i = 0; i < S.n; i++)
		kept_close(&S.k[i]);
	free(S.k);
	S.k = NULL;
	S.n = S.cap = S.max = 0;
	if (S.interrupts_fd >= 0)
		close(S.interrupts_fd);
	S.interrupts_fd = -1;
	free(S.buf);
	S.buf = NULL;
	S.buf_cap = 0;
	ts_close();
}

static int counts_push(struct irq_counts *ic, int irq, uint64_t count)
{
	size_t irq_cap = ic->cap, count_cap = ic->cap;

	/* two arrays, one capacity: it grows once both have */
	if (ARRAY_RESERVE(ic->irq, irq_cap, ic->n + 1) ||
	    ARRAY_RESERVE(ic->count, count_cap, ic->n + 1))
		return -ENOMEM;
	ic->cap = irq_cap;
	ic->irq[ic->n] = irq;
	ic->count[ic->n] = count;
	ic->n++;
	return 0;
}

/*
 * /proc/interrupts (its lines: interrupts.h), read whole, once per call, through a kept
 * fd.
 */
int stats_irq_counts_read(struct irq_counts *ic)
{
	char *line, *next;
	int ncpu, rc;
	ssize_t r;

	ic->n = 0;
	check_root();
	if (S.interrupts_fd < 0) {
		rc = proc_open(0, "interrupts");
		if (rc < 0)
			return rc;
		S.interrupts_fd = rc;
	}
	r = read_whole(S.interrupts_fd);
	if (r < 0)
		return (int)r;
	line = S.buf;
	next = strchr(line, '\n');
	if (!next)
		return -EINVAL;
	*next = '\0';
	ncpu = interrupts_ncpu(line);
	if (ncpu < 0)
		return ncpu;
	for (line = next + 1; *line; line = next) {
		struct interrupts_row row;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (interrupts_line(line, ncpu, &row) != 1)
			continue;	/* not an IRQ, or counts that are not numbers */
		rc = counts_push(ic, row.irq, row.sum);
		if (rc < 0)
			return rc;
	}
	return 0;
}

uint64_t stats_irq_count(const struct irq_counts *ic, int irq)
{
	size_t i;

	for (i = 0; i < ic->n; i++)
		if (ic->irq[i] == irq)
			return ic->count[i];
	return 0;
}

void stats_irq_counts_free(struct irq_counts *ic)
{
	free(ic->irq);
	free(ic->count);
	memset(ic, 0, sizeof(*ic));
}
