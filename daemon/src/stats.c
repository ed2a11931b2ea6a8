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
 */
#include "stats.h"

#include "irqres.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
} S = { .interrupts_fd = -1 };

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

		if (S.buf_cap - len < 2) {
			size_t cap = S.buf_cap ? S.buf_cap * 2 : 4096;
			char *b = realloc(S.buf, cap);

			if (!b)
				return -ENOMEM;
			S.buf = b;
			S.buf_cap = cap;
		}
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
	if (S.n == S.cap) {
		size_t cap = S.cap ? S.cap * 2 : 32;
		struct kept *k = realloc(S.k, cap * sizeof(*k));

		if (!k)
			return NULL;
		S.k = k;
		S.cap = cap;
	}
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

	r = k ? kept_read(k, F_STATUS) : once_read(pid, F_STATUS);
	if (r < 0)
		goto fail;
	if (field_u64("\nvoluntary_ctxt_switches:", &st->voluntary_switches) < 0 ||
	    field_u64("\nnonvoluntary_ctxt_switches:", &st->involuntary_switches) < 0)
		return -EINVAL;
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
}

static int counts_push(struct irq_counts *ic, int irq, uint64_t count)
{
	if (ic->n == ic->cap) {
		size_t cap = ic->cap ? ic->cap * 2 : 64;
		int *irqs = realloc(ic->irq, cap * sizeof(*irqs));
		uint64_t *counts;

		if (!irqs)
			return -ENOMEM;
		ic->irq = irqs;
		counts = realloc(ic->count, cap * sizeof(*counts));
		if (!counts)
			return -ENOMEM;
		ic->count = counts;
		ic->cap = cap;
	}
	ic->irq[ic->n] = irq;
	ic->count[ic->n] = count;
	ic->n++;
	return 0;
}

/*
 * /proc/interrupts: a header of CPU names, then one line per IRQ:
 *   " 11:      1234       567   IO-APIC  11-fasteoi   eth0"
 * Only lines whose label is a number are IRQs (NMI:, LOC:, ERR: ... are not).
 * The file is read whole, once per call, through a kept fd.
 */
int stats_irq_counts_read(struct irq_counts *ic)
{
	char *line, *next, *p, *end;
	int ncpu = 0, i, rc;
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
	for (p = line; (p = strstr(p, "CPU")); p += 3)
		ncpu++;
	if (ncpu == 0)
		return -EINVAL;
	for (line = next + 1; *line; line = next) {
		unsigned long irq;
		uint64_t sum = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!isdigit((unsigned char)*p))
			continue;
		errno = 0;
		irq = strtoul(p, &end, 10);
		if (*end != ':' || errno || irq > INT32_MAX)
			continue;
		p = end + 1;
		for (i = 0; i < ncpu; i++) {
			unsigned long long c;

			while (*p == ' ' || *p == '\t')
				p++;
			if (!isdigit((unsigned char)*p))
				break;
			c = strtoull(p, &end, 10);
			sum += c;
			p = end;
		}
		rc = counts_push(ic, (int)irq, sum);
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
