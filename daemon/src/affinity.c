/* SPDX-License-Identifier: GPL-2.0-only */
/* affinity.c - CPU affinities put back after irqres's cpuset changes; see affinity.h. */
#include "affinity.h"
#include "array.h"
#include "cpuset.h"
#include "discover.h"
#include "irqres.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

static bool real_proc(void)
{
	return strcmp(irqres_paths.proc, "/proc") == 0;
}

/* Only a real cgroup v2 hierarchy makes the kernel rewrite affinities: over a fixture
 * tree nothing is watched, so nothing of the machine is ever touched. */
static bool real_cgroup(void)
{
	struct statfs sf;

	return statfs(irqres_paths.cgroup, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Sets pid's affinity to want unless it is so already; what it was goes to *was.
 * 1 changed, 0 unchanged, -errno (-EINVAL: its cpuset allows none of want). */
static int set_cpus(pid_t pid, const cpu_set_t *want, cpu_set_t *was)
{
	if (sched_getaffinity(pid, sizeof(*was), was) < 0)
		return -errno;
	if (CPU_EQUAL(was, want))
		return 0;
	if (sched_setaffinity(pid, sizeof(*want), want) < 0)
		return -errno;
	return 1;
}

/*
 * Has IRQ irq ever fired (/sys/kernel/irq/N/per_cpu_count has a count above 0)? An IRQ
 * thread takes its IRQ's CPUs at an interrupt; until the first one it keeps the CPUs it
 * was created with, all of them. Unknown counts the same as fired.
 */
static bool irq_fired(int irq)
{
	char path[PATH_MAX], buf[4096];
	bool fired = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/kernel/irq/%d/per_cpu_count", irqres_paths.sys, irq);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	while (!fired && (n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n && !fired; i++)
			fired = buf[i] >= '1' && buf[i] <= '9';
	close(fd);
	return fired;
}

/* The CPUs an IRQ thread belongs on: its IRQ's once the IRQ has fired, else *before
 * (NULL: none to say). 0, or -ENOENT when there are none. */
static int irq_thread_cpus(int irq, const cpu_set_t *before, cpu_set_t *cpus)
{
	if (irq_fired(irq)) {
		if (discover_irq_cpus(irq, cpus) >= 0 && CPU_COUNT(cpus))
			return 0;
	} else if (before && CPU_COUNT(before)) {
		*cpus = *before;
		return 0;
	}
	return -ENOENT;
}

static int put(pid_t pid, const char *comm, const cpu_set_t *want)
{
	char a[128], b[128];
	cpu_set_t was;
	int rc = set_cpus(pid, want, &was);

	if (rc == 1)
		pr_info("%s (pid %d): CPU affinity back to %s (a cpuset change had made it %s)",
			comm, (int)pid, cpuset_list_str(want, a, sizeof(a)),
			cpuset_list_str(&was, b, sizeof(b)));
	else if (rc == -EINVAL)
		pr_notice("%s (pid %d): CPU affinity %s not put back: its cpuset allows none of "
			  "those CPUs now", comm, (int)pid, cpuset_list_str(want, a, sizeof(a)));
	else if (rc < 0 && rc != -ESRCH)
		pr_warn("%s (pid %d): CPU affinity %s not put back: %s", comm, (int)pid,
			cpuset_list_str(want, a, sizeof(a)), strerror(-rc));
	return rc;
}

int affinity_watch_begin(struct affinity_watch *w)
{
	struct thread_list l = { 0 };
	int rc;

	memset(w, 0, sizeof(*w));
	if (!real_proc() || !real_cgroup())
		return 0;
	rc = discover_scan_irq(&l);
	if (!rc && ARRAY_RESERVE(w->v, w->cap, l.n))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < l.n; i++) {
		struct affinity_seen *s = &w->v[w->n];

		s->pid = l.v[i].pid;
		s->starttime = l.v[i].starttime;
		s->irq = l.v[i].irq;
		memcpy(s->comm, l.v[i].comm, sizeof(s->comm));
		if (sched_getaffinity(s->pid, sizeof(s->cpus), &s->cpus) == 0)
			w->n++;
	}
	discover_list_free(&l);
	if (rc) {
		pr_warn("CPU affinities of IRQ threads not noted before a cpuset change: %s",
			strerror(-rc));
		free(w->v);
		memset(w, 0, sizeof(*w));
	}
	return rc;
}

int affinity_watch_end(struct affinity_watch *w)
{
	int fixed = 0;

	for (size_t i = 0; i < w->n; i++) {
		const struct affinity_seen *s = &w->v[i];
		struct thread_info ti = { .pid = s->pid, .starttime = s->starttime };
		cpu_set_t now, want;

		if (sched_getaffinity(s->pid, sizeof(now), &now) < 0 || CPU_EQUAL(&now, &s->cpus))
			continue;
		if (!discover_still_same(&ti) || irq_thread_cpus(s->irq, NULL, &want))
			continue;
		if (put(s->pid, s->comm, &want) == 1)
			fixed++;
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
	return fixed;
}

int affinity_put_back(pid_t pid, unsigned long long starttime, const cpu_set_t *recorded)
{
	struct thread_info ti;
	cpu_set_t want;
	int rc;

	if (!real_proc())
		return 0;
	rc = discover_read(pid, &ti);
	if (rc == -ESRCH || (!rc && ti.starttime != starttime))
		return 0;
	if (rc)
		return rc;
	if (ti.is_irq)
		rc = irq_thread_cpus(ti.irq, recorded, &want);
	else if (recorded && CPU_COUNT(recorded))
		want = *recorded;
	else
		rc = -ENOENT;
	if (rc)
		return 0;
	rc = put(pid, ti.comm, &want);
	return rc == -EINVAL || rc == -ESRCH ? 0 : rc;
}
