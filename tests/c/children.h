/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * children.h - processes the C tests fork to change for real (never anything else):
 * each child sleeps in pause() until the test kills it.
 */
#ifndef IRQRES_TEST_CHILDREN_H
#define IRQRES_TEST_CHILDREN_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dl.h"
#include "irqres.h"

#define CHILDREN_MAX 16
static pid_t children[CHILDREN_MAX];
static int n_children;

/* A child that sleeps; with policy >= 0 it starts as policy/prio/nice (set by the parent). */
static inline pid_t child_spawn(const char *name)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, name);
		for (;;)
			pause();
	}
	if (pid > 0 && n_children < CHILDREN_MAX)
		children[n_children++] = pid;
	return pid;
}

static inline void child_kill(pid_t pid)
{
	for (int i = 0; i < n_children; i++) {
		if (children[i] != pid)
			continue;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		children[i] = children[--n_children];
		return;
	}
}

static inline void children_kill_all(void)
{
	while (n_children > 0)
		child_kill(children[0]);
}

/* /proc/PID/stat field 22. */
static inline unsigned long long child_starttime(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long st = 0;
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p)
		sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
		       "%*s %*s %*s %llu", &st);
	return st;
}

/* A thread_info of a child as discovery would give it (a user thread). */
static inline void child_info(pid_t pid, struct thread_info *ti)
{
	struct dl_attr a;

	memset(ti, 0, sizeof(*ti));
	ti->pid = ti->tgid = pid;
	ti->starttime = child_starttime(pid);
	ti->irq = -1;
	snprintf(ti->comm, sizeof(ti->comm), "child-%d", (int)pid);
	sched_getaffinity(pid, sizeof(ti->affinity), &ti->affinity);
	if (dl_get(pid, &a) == 0) {
		ti->policy = (int)a.sched_policy;
		ti->priority = (int)a.sched_priority;
		ti->nice = a.sched_nice;
	}
}

/* Can this process give SCHED_DEADLINE to its children? (root and a kernel with it) */
static inline bool dl_capable(const char **why)
{
	pid_t pid = child_spawn("irqres-probe");
	int rc = pid > 0 ? dl_set_deadline(pid, 100000, 1000000, 1000000) : -errno;

	child_kill(pid);
	if (rc == -EPERM)
		*why = "SCHED_DEADLINE needs root (CAP_SYS_NICE)";
	else if (rc)
		*why = "SCHED_DEADLINE unavailable on this kernel";
	return rc == 0;
}

#define REQUIRE_DL() do { \
		const char *why_ = NULL; \
		if (!dl_capable(&why_)) { \
			fprintf(stderr, "skipped: %s\n", why_); \
			skip(); \
		} \
	} while (0)

#endif
