/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * discover.c - finds IRQ threads and user threads in /proc.
 *
 * Speed: an IRQ-thread scan lists kthreadd's children (/proc/2/task/2/children) and reads
 * only their stat files, so it costs the same with 10 or 10,000 user tasks; everything
 * else of a thread (status, cgroup, actions) is read only once it is known to be an IRQ
 * thread.  Without that file it walks /proc and reads every process's stat.
 */
#include "discover.h"
#include "array.h"
#include "cpuset.h"
#include "dl.h"
#include "fileio.h"
#include "irqname.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PF_KTHREAD 0x00200000
#define KTHREADD_PID 2
#define STATUS_BUF 4096
#define CHILDREN_BUF 65536
#define DIR_LEN 320		/* a thread's directory: proc root + /PID/task/TID */
#define PATH_LEN (DIR_LEN + 64)

/* A thread that vanished between listing and reading is ESRCH, not an error. */
static int gone(ssize_t rc)
{
	return rc == -ENOENT ? -ESRCH : (int)rc;
}

/* @dir is the thread's directory: /proc/TID or /proc/PID/task/TID. */
static int read_stat(const char *dir, struct fileio_stat *sf)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "%s/stat", dir);
	return gone(fileio_stat_read(path, sf));
}

/* Tgid and Cpus_allowed_list of /proc/PID/status. */
static int read_status(const char *dir, struct thread_info *ti)
{
	char path[PATH_LEN], buf[STATUS_BUF], *line;
	ssize_t rc;

	snprintf(path, sizeof(path), "%s/status", dir);
	rc = fileio_read(path, buf, sizeof(buf));
	if (rc < 0)
		return gone(rc);
	ti->tgid = ti->pid;
	line = strstr(buf, "\nTgid:");
	if (line)
		ti->tgid = (pid_t)strtol(line + 6, NULL, 10);
	line = strstr(buf, "\nCpus_allowed_list:");
	if (!line)
		return -EINVAL;
	line += strlen("\nCpus_allowed_list:");
	while (*line == ' ' || *line == '\t')
		line++;
	return cpuset_list_parse(line, &ti->affinity);
}

/* The cgroup v2 path: the "0::" line of /proc/PID/cgroup. */
static int read_cgroup(const char *dir, struct thread_info *ti)
{
	char path[PATH_LEN];
	int rc;

	ti->cgroup[0] = '\0';
	snprintf(path, sizeof(path), "%s/cgroup", dir);
	rc = fileio_cgroup_read(path, ti->cgroup, sizeof(ti->cgroup));
	if (rc == -ENODATA)
		ti->cgroup[0] = '\0';	/* cgroup v1 only: unknown */
	return rc == -ENODATA || rc == -ENAMETOOLONG ? 0 : gone(rc);
}

int discover_irq_cpus(int irq, cpu_set_t *cpus)
{
	char path[PATH_LEN];
	int rc;

	snprintf(path, sizeof(path), "%s/irq/%d/effective_affinity_list", irqres_paths.proc, irq);
	rc = cpuset_list_read(path, cpus);
	if (rc == 0 && CPU_COUNT(cpus) > 0)
		return 0;
	snprintf(path, sizeof(path), "%s/irq/%d/smp_affinity_list", irqres_paths.proc, irq);
	if (cpuset_list_read(path, cpus) < 0 || CPU_COUNT(cpus) == 0)
		return rc < 0 ? rc : -ENOENT;
	return rc == 0 ? 1 : 0;		/* empty effective affinity: not started yet */
}

int discover_irq_actions(int irq, char *buf, size_t len)
{
	char path[PATH_LEN];
	struct dirent *de;
	size_t used = 0;
	ssize_t rc;
	DIR *d;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/kernel/irq/%d/actions", irqres_paths.sys, irq);
	rc = fileio_read(path, buf, len);
	if (rc >= 0) {
		char *nl = strchr(buf, '\n');

		if (nl)
			*nl = '\0';
		return 0;
	}
	/* Fallback: the action directories of /proc/irq/N/ (files are its settings). */
	snprintf(path, sizeof(path), "%s/irq/%d", irqres_paths.proc, irq);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR) {
			struct stat st;
			char sub[PATH_LEN + 256];

			if (de->d_type != DT_UNKNOWN)
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			if (stat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
		}
		if (used + n + 2 > len)
			break;
		if (used)
			buf[used++] = ',';
		memcpy(buf + used, de->d_name, n + 1);
		used += n;
	}
	closedir(d);
	return 0;
}

bool discover_napi_comm(unsigned long flags, pid_t ppid, const char *comm)
{
	return (flags & PF_KTHREAD) && ppid == KTHREADD_PID && strncmp(comm, "napi/", 5) == 0;
}

bool discover_softirqd_comm(unsigned long flags, pid_t ppid, const char *comm,
			    enum softirqd_kind *kind, int *cpu)
{
	return (flags & PF_KTHREAD) && ppid == KTHREADD_PID && !softirqd_parse(comm, kind, cpu);
}

/*
 * Everything but stat, for a thread whose stat is already in @sf.  With the real /proc
 * and a known @tgid, sched_getaffinity() replaces reading /proc/TID/status, which costs
 * several times more.
 */
static int read_rest(const char *dir, pid_t pid, pid_t tgid, const struct fileio_stat *sf,
		     struct thread_info *ti)
{
	enum softirqd_kind kind = SOFTIRQD_N;
	struct irqname name;
	int rc;

	memset(ti, 0, sizeof(*ti));
	ti->pid = pid;
	ti->starttime = sf->starttime;
	memcpy(ti->comm, sf->comm, sizeof(ti->comm));
	ti->kthread = sf->flags & PF_KTHREAD;
	ti->policy = sf->policy;
	ti->priority = sf->rt_priority;
	ti->nice = sf->nice;
	ti->irq = -1;
	ti->is_napi = discover_napi_comm(sf->flags, sf->ppid, ti->comm);
	ti->is_softirqd = discover_softirqd_comm(sf->flags, sf->ppid, ti->comm, &kind,
						 &ti->softirqd_cpu);
	ti->softirqd_kind = kind;
	if (ti->kthread && sf->ppid == KTHREADD_PID && !irqname_parse(ti->comm, &name)) {
		char all[ACTIONS_MAX];

		ti->is_irq = true;
		ti->irq = name.irq;
		ti->secondary = name.secondary;
		/* each action of a shared IRQ has its own thread: keep the ones it names */
		if (!discover_irq_actions(ti->irq, all, sizeof(all)) && all[0])
			irqname_own_actions(ti->comm, all, ti->actions, sizeof(ti->actions),
					    &ti->secondary);	/* a subset of all: fits */
		else	/* no sysfs or /proc/irq entry (yet): the comm's name, maybe cut */
			snprintf(ti->actions, sizeof(ti->actions), "%s", name.action);
	}
	if (tgid > 0 && irqres_paths_real_proc()) {
		ti->tgid = tgid;
		if (sched_getaffinity(pid, sizeof(ti->affinity), &ti->affinity) < 0)
			return -errno;
	} else {
		rc = read_status(dir, ti);
		if (rc)
			return rc;
	}
	rc = read_cgroup(dir, ti);
	if (rc)
		return rc;
	/*
	 * DL parameters come from sched_getattr: /proc/PID/sched shows only the remaining
	 * runtime and the absolute deadline of the current period.  Fixture trees have none.
	 */
	if (ti->policy == SCHED_DEADLINE && irqres_paths_real_proc()) {
		struct dl_attr a;

		rc = dl_get(pid, &a);
		if (rc)
			return rc;
		ti->dl_runtime_ns = a.sched_runtime;
		ti->dl_deadline_ns = a.sched_deadline;
		ti->dl_period_ns = a.sched_period;
	}
	return 0;
}

static void thread_dir(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "%s/%d", irqres_paths.proc, pid);
}

int discover_read(pid_t pid, struct thread_info *ti)
{
	char dir[DIR_LEN];
	struct fileio_stat sf;
	int rc;

	if (pid <= 0)
		return -EINVAL;
	thread_dir(dir, sizeof(dir), pid);
	rc = read_stat(dir, &sf);
	if (rc)
		return rc;
	return read_rest(dir, pid, 0, &sf, ti);
}

int discover_still_same(const struct thread_info *ti)
{
	char dir[DIR_LEN];
	struct fileio_stat sf;

	thread_dir(dir, sizeof(dir), ti->pid);
	return !read_stat(dir, &sf) && sf.starttime == ti->starttime;
}

/* In a scan: a thread that vanished, or whose files make no sense, is skipped. */
static int skip_or_fail(int rc)
{
	return rc == -ESRCH || rc == -EINVAL ? 0 : rc;
}

int discover_list_push(struct thread_list *list, const struct thread_info *ti)
{
	if (ARRAY_RESERVE(list->v, list->cap, list->n + 1))
		return -ENOMEM;
	list->v[list->n++] = *ti;
	return 0;
}

void discover_list_free(struct thread_list *list)
{
	free(list->v);
	list->v = NULL;
	list->n = list->cap = 0;
}

/* Which kthreads a scan keeps. */
enum scan_what {
	SCAN_DEVICE,		/* IRQ and NAPI kthreads */
	SCAN_DEVICE_SOFTIRQD,	/* and the per-CPU soft IRQ kthreads */
	SCAN_MOVABLE,		/* every kthread without PF_NO_SETAFFINITY */
};

/* Whether a scan for @what keeps the kthread whose stat is @sf. */
static bool scan_keeps(enum scan_what what, const struct fileio_stat *sf)
{
	struct irqname name;
	enum softirqd_kind kind;
	int cpu;

	switch (what) {
	case SCAN_DEVICE_SOFTIRQD:
		if (discover_softirqd_comm(sf->flags, sf->ppid, sf->comm, &kind, &cpu))
			return true;
		/* fall through */
	case SCAN_DEVICE:
		return !irqname_parse(sf->comm, &name) ||
		       discover_napi_comm(sf->flags, sf->ppid, sf->comm);
	case SCAN_MOVABLE:
		return !(sf->flags & FILEIO_PF_NO_SETAFFINITY);
	}
	return false;
}

/* Adds @pid to @list when it is a kernel thread, child of kthreadd, that a scan for @what
 * keeps.  Vanished threads are skipped. */
static int consider_kthread(pid_t pid, struct thread_list *list, enum scan_what what)
{
	char dir[DIR_LEN];
	struct fileio_stat sf;
	struct thread_info ti;
	int rc;

	thread_dir(dir, sizeof(dir), pid);
	rc = read_stat(dir, &sf);
	if (rc)
		return skip_or_fail(rc);
	if (!(sf.flags & PF_KTHREAD) || sf.ppid != KTHREADD_PID)
		return 0;
	if (!scan_keeps(what, &sf))
		return 0;
	rc = read_rest(dir, pid, pid, &sf, &ti);
	if (rc)
		return skip_or_fail(rc);
	return discover_list_push(list, &ti);
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct thread_info *)a)->pid, y = ((const struct thread_info *)b)->pid;

	return (x > y) - (x < y);
}

/* Scans give threads in pid order, whatever order the directory had. */
static void sort_from(struct thread_list *list, size_t start)
{
	if (list->n > start)
		qsort(list->v + start, list->n - start, sizeof(*list->v), by_pid);
}

static pid_t dir_pid(const char *name)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)name[0]))
		return 0;
	v = strtol(name, &end, 10);
	return *end || v <= 0 || v > INT32_MAX ? 0 : (pid_t)v;
}

static int scan_children(struct thread_list *list, const char *path, enum scan_what what)
{
	char *buf = malloc(CHILDREN_BUF), *p, *end;
	ssize_t n;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	n = fileio_read(path, buf, CHILDREN_BUF);
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	if ((size_t)n + 1 >= CHILDREN_BUF) {
		rc = -E2BIG;	/* an enormous number of kernel threads: walk /proc instead */
		goto out;
	}
	for (p = buf; *p && !rc; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid > 0)
			rc = consider_kthread((pid_t)pid, list, what);
	}
out:
	free(buf);
	return rc;
}

static int scan_kthreads(struct thread_list *list, enum scan_what what)
{
	char path[PATH_LEN];
	struct dirent *de;
	size_t start = list->n;
	int rc;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/task/%d/children", irqres_paths.proc, KTHREADD_PID,
		 KTHREADD_PID);
	rc = scan_children(list, path, what);
	if (rc != -ENOENT && rc != -E2BIG) {
		sort_from(list, start);
		return rc;
	}
	list->n = start;
	snprintf(path, sizeof(path), "%s", irqres_paths.proc);
	d = opendir(path);
	if (!d)
		return -errno;
	rc = 0;
	while (!rc && (de = readdir(d))) {
		pid_t pid = dir_pid(de->d_name);

		if (pid)
			rc = consider_kthread(pid, list, what);
	}
	closedir(d);
	sort_from(list, start);
	return rc;
}

int discover_scan_irq(struct thread_list *list, bool softirqd)
{
	return scan_kthreads(list, softirqd ? SCAN_DEVICE_SOFTIRQD : SCAN_DEVICE);
}

int discover_scan_kthreads(struct thread_list *list)
{
	return scan_kthreads(list, SCAN_MOVABLE);
}

/* Every user thread of process @pid. */
static int scan_process_tasks(pid_t pid, struct thread_list *list)
{
	char dir[DIR_LEN], tdir[DIR_LEN + 16];
	struct fileio_stat sf;
	struct dirent *de;
	int rc;
	DIR *d;

	/* a kernel thread is a process of one thread: one stat tells */
	thread_dir(dir, sizeof(dir), pid);
	rc = read_stat(dir, &sf);
	if (rc || (sf.flags & PF_KTHREAD))
		return skip_or_fail(rc);
	if (sf.num_threads == 1) {
		struct thread_info ti;

		rc = read_rest(dir, pid, pid, &sf, &ti);
		return rc ? skip_or_fail(rc) : discover_list_push(list, &ti);
	}
	snprintf(dir, sizeof(dir), "%s/%d/task", irqres_paths.proc, pid);
	d = opendir(dir);
	if (!d)
		return 0;	/* exited meanwhile */
	while (!rc && (de = readdir(d))) {
		pid_t tid = dir_pid(de->d_name);
		struct thread_info ti;

		if (!tid)
			continue;
		snprintf(tdir, sizeof(tdir), "%s/%d", dir, tid);
		rc = read_stat(tdir, &sf);
		if (!rc && !(sf.flags & PF_KTHREAD)) {
			rc = read_rest(tdir, tid, pid, &sf, &ti);
			if (!rc)
				rc = discover_list_push(list, &ti);
		}
		rc = skip_or_fail(rc);
	}
	closedir(d);
	return rc;
}

int discover_scan_tasks(struct thread_list *list)
{
	size_t start = list->n;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	d = opendir(irqres_paths.proc);
	if (!d)
		return -errno;
	while (!rc && (de = readdir(d))) {
		pid_t pid = dir_pid(de->d_name);

		if (pid)
			rc = scan_process_tasks(pid, list);
	}
	closedir(d);
	sort_from(list, start);
	return rc;
}

int discover_scan_tasks_of(const pid_t *tgids, size_t n, struct thread_list *list)
{
	size_t start = list->n;
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++)
		rc = scan_process_tasks(tgids[i], list);
	sort_from(list, start);
	return rc;
}
