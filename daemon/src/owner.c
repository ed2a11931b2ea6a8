/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * owner.c - whose a thread is (owner.h): the kernel's defaults, RUN_DIR/state of this
 * irqresd, and the state files of the other irqresd processes running.
 */
#include "owner.h"

#include "cpuset.h"
#include "discover.h"
#include "dl.h"
#include "fileio.h"
#include "state.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IRQ_THREAD_PRIO 50		/* sched_set_fifo(): MAX_RT_PRIO / 2 */
#define IRQ_THREAD_PRIO_SECONDARY 49	/* sched_set_fifo_secondary() */

bool owner_sched_fresh(const struct thread_info *ti)
{
	if (!ti->is_irq)
		return ti->policy != SCHED_DEADLINE;
	if (ti->policy == SCHED_OTHER)
		return true;	/* not yet made FIFO by the kernel */
	return ti->policy == SCHED_FIFO &&
	       ti->priority == (ti->secondary ? IRQ_THREAD_PRIO_SECONDARY : IRQ_THREAD_PRIO);
}

/* Whether the state file at path records ti (same pid and starttime). */
static bool state_records(const char *path, const struct thread_info *ti)
{
	struct state st;
	const struct state_thread *t;
	char err[256];
	bool found;

	state_init(&st);
	if (state_load(&st, path, err, sizeof(err)) < 0) {
		state_free(&st);
		return false;
	}
	t = state_find_thread(&st, ti->pid);
	found = t && t->starttime == ti->starttime;
	state_free(&st);
	return found;
}

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (realpath(a, ra) && realpath(b, rb))
		return strcmp(ra, rb) == 0;
	return strcmp(a, b) == 0;
}

/* The run dir of irqresd process pid (the directory of the RUN_DIR/lock it holds open)
 * into dir: 0, or -ENOENT when it holds none. */
static int daemon_run_dir(const char *pid, char *dir, size_t len)
{
	char fds[PATH_MAX], link[PATH_MAX + 300], target[PATH_MAX];
	struct dirent *e;
	int rc = -ENOENT;
	DIR *dp;

	snprintf(fds, sizeof(fds), "%s/%s/fd", irqres_paths.proc, pid);
	dp = opendir(fds);
	if (!dp)
		return -errno;
	while (rc && (e = readdir(dp))) {
		ssize_t n;
		char *slash;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", fds, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		slash = strrchr(target, '/');
		if (!slash || strcmp(slash, "/lock") != 0 || slash == target)
			continue;
		*slash = '\0';
		if (strlen(target) < len) {
			snprintf(dir, len, "%s", target);
			rc = 0;
		}
	}
	closedir(dp);
	return rc;
}

static bool is_pid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Another running irqresd whose state file records ti: 1 with o filled, 0 none. */
static int other_daemon(const struct thread_info *ti, struct owner *o)
{
	char path[600], comm[32], dir[sizeof(o->run_dir)];
	struct dirent *e;
	int found = 0;
	DIR *dp = opendir(irqres_paths.proc);

	if (!dp)
		return 0;
	while (!found && (e = readdir(dp))) {
		if (!is_pid(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", irqres_paths.proc, e->d_name);
		if (fileio_read(path, comm, sizeof(comm)) < 0 || strcmp(comm, "irqresd\n") != 0)
			continue;
		if (daemon_run_dir(e->d_name, dir, sizeof(dir)) < 0 ||
		    same_dir(dir, irqres_paths.run))
			continue;
		snprintf(path, sizeof(path), "%s/state", dir);
		if (!state_records(path, ti))
			continue;
		o->kind = OWNER_IRQRESD;
		o->daemon_pid = (pid_t)atoi(e->d_name);
		snprintf(o->run_dir, sizeof(o->run_dir), "%s", dir);
		found = 1;
	}
	closedir(dp);
	return found;
}

int owner_find(const struct thread_info *ti, bool own, struct owner *o)
{
	char path[sizeof(irqres_paths.run) + 8];

	memset(o, 0, sizeof(*o));
	if (owner_sched_fresh(ti))
		return 0;
	dl_sched_text(ti->policy, ti->priority, ti->nice, ti->dl_runtime_ns, ti->dl_deadline_ns,
		      ti->dl_period_ns, o->sched, sizeof(o->sched));
	if (other_daemon(ti, o)) {
		snprintf(o->text, sizeof(o->text), "reserved by another irqresd (pid %d, run dir "
			 "%s): scheduling is %s", (int)o->daemon_pid, o->run_dir, o->sched);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/state", irqres_paths.run);
	if (own && state_records(path, ti))
		return 0;
	o->kind = OWNER_TOOL;
	snprintf(o->text, sizeof(o->text), "set by another tool: scheduling is %s, which the "
		 "kernel does not give a new %s and no running irqresd records (stalld's "
		 "SCHED_DEADLINE boost, chrt, tuna, tuned's scheduler plugin)", o->sched,
		 ti->is_irq ? "IRQ thread" : "task");
	return 0;
}

int owner_irq_moved(int irq, const char *partition, char *what, size_t len)
{
	size_t plen = strlen(CPUSET_PREFIX);
	cpu_set_t part, now, out;
	char cpus[64];

	if (strncmp(partition, CPUSET_PREFIX, plen) != 0 ||
	    cpuset_list_parse(partition + plen, &part) < 0 || discover_irq_cpus(irq, &now) != 0)
		return 0;
	CPU_AND(&out, &now, &part);
	if (CPU_EQUAL(&out, &now))
		return 0;
	snprintf(what, len, "IRQ %d fires on CPUs %s now, outside cpuset partition %s: its "
		 "affinity was changed (irqbalance, or a write to /proc/irq/%d/smp_affinity), "
		 "and its thread follows it at its next interrupt, out of its root domain; "
		 "irqresd does not move IRQs back (ban the IRQ from irqbalance: --banirq=%d)",
		 irq, cpuset_list_str(&now, cpus, sizeof(cpus)), partition, irq, irq);
	return 1;
}
