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

#define CHILDREN_MAX 32
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

/* The kernel gives the bandwidth of a SCHED_DEADLINE task that exits or leaves the
 * class back only at its 0-lag time, up to seconds later; a smaller reservation takes
 * effect at once. So a child is shrunk to the smallest reservation, then made
 * SCHED_OTHER (a task dying on 1 us every 100 ms would take minutes to exit). */
static inline void shrink(pid_t pid)
{
	struct dl_attr a;

	if (dl_get(pid, &a) == 0 && a.sched_policy == SCHED_DEADLINE)
		dl_set_deadline(pid, 1024, a.sched_period, a.sched_period);
}

/* Gives a child a non-deadline policy: SCHED_OTHER/BATCH/IDLE with nice, FIFO/RR with
 * priority (1..99).  Returns 0 or -errno. */
static inline int child_set_policy(pid_t pid, int policy, int priority, int nice)
{
	struct dl_attr a = { .sched_policy = (uint32_t)policy };

	switch (policy) {
	case SCHED_FIFO:
	case SCHED_RR:
		if (priority < 1 || priority > 99)
			return -EINVAL;
		a.sched_priority = (uint32_t)priority;
		break;
	case SCHED_OTHER:
	case SCHED_BATCH:
	case SCHED_IDLE:
		if (nice < -20 || nice > 19)
			return -EINVAL;
		a.sched_nice = nice;
		break;
	default:
		return -EINVAL;
	}
	return dl_set(pid, &a);
}

static inline void child_kill(pid_t pid)
{
	for (int i = 0; i < n_children; i++) {
		if (children[i] != pid)
			continue;
		shrink(pid);
		child_set_policy(pid, SCHED_OTHER, 0, 0);
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

/* Can this process give SCHED_DEADLINE to its children, with 0.6 CPU of bandwidth free?
 * (root, a kernel with it, and the shared host's other users leaving enough: waits up
 * to 5 s for them) */
static inline bool dl_capable(const char **why)
{
	for (int tries = 0; tries < 50; tries++) {
		pid_t pid = child_spawn("irqres-probe");
		int rc = pid > 0 ? dl_set_deadline(pid, 60000000, 100000000, 100000000) : -errno;

		child_kill(pid);
		if (rc == 0)
			return true;
		if (rc != -EBUSY) {
			*why = rc == -EPERM ? "SCHED_DEADLINE needs root (CAP_SYS_NICE)" :
			       "SCHED_DEADLINE unavailable on this kernel";
			return false;
		}
		usleep(100000);
	}
	*why = "other processes held the SCHED_DEADLINE bandwidth for 5 s";
	return false;
}

/* Fills the default root domain with SCHED_DEADLINE children until less than
 * leave_runtime/period is free, then frees leave_runtime/period: what is left lies in
 * [leave, 2 × leave). Returns the number of children made. */
static inline int dl_fill(uint64_t leave_runtime, uint64_t period)
{
	const uint64_t steps[] = { period / 2, period / 10, leave_runtime };
	int made = 0;
	pid_t last = 0;

	for (size_t i = 0; i < 3; i++) {
		for (;;) {
			pid_t pid = child_spawn("irqres-fill");

			if (pid <= 0)
				return made;
			if (dl_set_deadline(pid, steps[i], period, period)) {
				child_kill(pid);
				break;
			}
			made++;
			last = pid;
			if (n_children >= CHILDREN_MAX - 2)
				break;
		}
	}
	if (last)
		shrink(last);	/* frees its bandwidth at once */
	return made;
}

#define REQUIRE_DL() do { \
		const char *why_ = NULL; \
		if (!dl_capable(&why_)) { \
			fprintf(stderr, "skipped: %s\n", why_); \
			skip(); \
		} \
	} while (0)

#endif
