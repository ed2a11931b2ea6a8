/* SPDX-License-Identifier: GPL-2.0-only */
/* plan_env.c - the system as the plan sees it: CPUs, limits, partitions, the
 * SCHED_DEADLINE tasks and the kernel's own counts; see plan.h. */
#include "plan.h"
#include "array.h"
#include "cpuset.h"
#include "dl.h"
#include "dlserver.h"
#include "enforce.h"
#include "fileio.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCHED_FLAG_SUGOV 0x10000000ULL	/* schedutil workers: no bandwidth accounted */

static int dl_push(struct plan_env *env, const struct plan_dltask *t)
{
	if (ARRAY_RESERVE(env->dl, env->dl_cap, env->n_dl + 1))
		return -ENOMEM;
	env->dl[env->n_dl++] = *t;
	return 0;
}

/* Every SCHED_DEADLINE thread, its bandwidth and affinity. sched_getattr per thread
 * id costs a few microseconds, four times less than reading its stat file; so the
 * scan asks the kernel, which only makes sense for the live /proc (a fixture tree's
 * pids are not the kernel's). */
static int scan_dl(struct plan_env *env)
{
	DIR *pd;
	struct dirent *p;
	int rc = 0;

	if (!irqres_paths_real_proc())
		return 0;
	pd = opendir(irqres_paths.proc);
	if (!pd)
		return -errno;
	while (!rc && (p = readdir(pd)) != NULL) {
		char dir[PATH_MAX];
		DIR *td;
		struct dirent *t;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s/task", irqres_paths.proc, p->d_name);
		td = opendir(dir);
		if (!td)
			continue;	/* exited meanwhile */
		while (!rc && (t = readdir(td)) != NULL) {
			struct plan_dltask dt = { 0 };
			struct dl_attr a;

			if (t->d_name[0] < '1' || t->d_name[0] > '9')
				continue;
			dt.pid = atoi(t->d_name);
			if (dl_get(dt.pid, &a) || a.sched_policy != SCHED_DEADLINE ||
			    (a.sched_flags & SCHED_FLAG_SUGOV))
				continue;
			if (sched_getaffinity(dt.pid, sizeof(dt.cpus), &dt.cpus) < 0)
				continue;
			dt.bw = dl_to_ratio(a.sched_period ? a.sched_period : a.sched_deadline,
					    a.sched_runtime);
			rc = dl_push(env, &dt);
		}
		closedir(td);
	}
	closedir(pd);
	return rc;
}

/* sched_rt_{runtime,period}_us: reading them costs milliseconds with many tasks (the
 * kernel's handler takes its locks), so the quick path (hotplug, set-budget) reuses
 * values read less than a second ago; a full read refreshes them. */
static struct {
	bool valid;
	char root[sizeof(irqres_paths.proc)];
	long long runtime_us, period_us;
	struct timespec at;
} limits;

void plan_limits_changed(void)
{
	limits.valid = false;
}

static int read_limits(struct plan_env *env, bool fresh)
{
	char path[PATH_MAX];
	struct timespec now;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!fresh && limits.valid && strcmp(limits.root, irqres_paths.proc) == 0 &&
	    now.tv_sec - limits.at.tv_sec < 1) {
		env->rt_runtime_us = limits.runtime_us;
		env->rt_period_us = limits.period_us;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_rt_runtime_us", irqres_paths.proc);
	rc = fileio_read_ll(path, &env->rt_runtime_us);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/sys/kernel/sched_rt_period_us", irqres_paths.proc);
		rc = fileio_read_ll(path, &env->rt_period_us);
	}
	if (rc || env->rt_period_us <= 0) {
		pr_err("cannot read %s: %s", path, rc ? strerror(-rc) : "not a period");
		limits.valid = false;
		return rc ? rc : -EINVAL;
	}
	limits.valid = true;
	snprintf(limits.root, sizeof(limits.root), "%s", irqres_paths.proc);
	limits.runtime_us = env->rt_runtime_us;
	limits.period_us = env->rt_period_us;
	limits.at = now;
	return 0;
}

/*
 * The kernel's own root-domain accounting: <sys>/kernel/debug/sched/debug prints, per
 * CPU, the dl_bw of the CPU's root domain (kernel/sched/debug.c print_dl_rq()):
 *     dl_rq[1]:
 *       .dl_bw->bw                     : 996147
 *       .dl_bw->total_bw               : 262143
 * (6.1 to 7.3 alike). This is what __dl_overflow() compares with, deadline servers and
 * all; a missing or unreadable file (no debugfs) leaves kernel_bw_cpus empty.
 */
static void read_kernel_bw(struct plan_env *env)
{
	char path[PATH_MAX], line[256];
	int cpu = -1;
	FILE *f;

	CPU_ZERO(&env->kernel_bw_cpus);
	snprintf(path, sizeof(path), "%s/kernel/debug/sched/debug", irqres_paths.sys);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");
		long long v;
		int n;

		if (sscanf(p, "dl_rq[%d]:", &n) == 1) {
			cpu = n >= 0 && n < CPU_SETSIZE ? n : -1;
		} else if (cpu >= 0 && sscanf(p, ".dl_bw->bw : %lld", &v) == 1) {
			env->kernel_cap_bw[cpu] = v;
		} else if (cpu >= 0 && sscanf(p, ".dl_bw->total_bw : %lld", &v) == 1) {
			env->kernel_total_bw[cpu] = v;
			CPU_SET(cpu, &env->kernel_bw_cpus);
		} else if (p[0] != '.') {
			cpu = -1;	/* the next section */
		}
	}
	fclose(f);
}

bool plan_dl_counts_by_cgroup(void)
{
	int major, minor;

	if (irqres_kernel_release(&major, &minor))
		return true;
	return major > 6 || (major == 6 && minor >= 19);
}

int plan_env_read(struct plan_env *env, bool with_dl)
{
	char path[PATH_MAX];
	int rc;

	memset(env, 0, sizeof(*env));
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", irqres_paths.sys);
	rc = cpuset_list_read(path, &env->online);
	if (rc) {
		pr_err("cannot read the online CPUs from %s: %s", path, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/devices/system/cpu/isolated", irqres_paths.sys);
	if (cpuset_list_read(path, &env->isolated))
		CPU_ZERO(&env->isolated);
	rc = read_limits(env, with_dl);
	if (rc)
		return rc;
	env->dl_counts_by_cgroup = plan_dl_counts_by_cgroup();
	env->partitions_possible = cpuset_check(env->partition_err,
						sizeof(env->partition_err)) == 0;
	if (env->partitions_possible) {
		rc = cpuset_partitions_scan(&env->parts, &env->n_parts);
		if (rc) {
			pr_err("cannot list the cpuset partitions under %s: %s",
			       irqres_paths.cgroup, strerror(-rc));
			goto out_free;
		}
	}
	if (with_dl) {
		rc = dlserver_read(&env->online, env->server_bw, &env->servers);
		if (rc) {
			pr_err("cannot list the deadline servers in %s/kernel/debug/sched: %s",
			       irqres_paths.sys, strerror(-rc));
			goto out_free;
		}
		read_kernel_bw(env);
		enforce_env_read(&env->enforce);
		env->enforce_read = true;
		rc = scan_dl(env);
		if (rc) {
			pr_err("cannot list the SCHED_DEADLINE threads: %s", strerror(-rc));
			goto out_free;
		}
	}
	return 0;

out_free:
	plan_env_free(env);
	return rc;
}

int plan_env_for_budget(struct plan_env *env, const struct thread_info *threads,
			const struct dl_attr *now, size_t n)
{
	bool staying = false;
	int rc = 0;

	for (size_t i = 0; env->dl_counts_by_cgroup && i < n && !staying; i++)
		staying = cpuset_pid_movable(threads[i].pid) == 0;
	if (!staying)
		return 0;
	read_kernel_bw(env);
	for (size_t i = 0; !rc && i < n; i++) {
		struct plan_dltask t = { .pid = threads[i].pid, .cpus = threads[i].affinity };

		if (now[i].sched_policy != SCHED_DEADLINE || !now[i].sched_period)
			continue;
		t.bw = dl_to_ratio(now[i].sched_period, now[i].sched_runtime);
		rc = dl_push(env, &t);
	}
	return rc;
}

void plan_env_free(struct plan_env *env)
{
	free(env->parts);
	free(env->dl);
	env->parts = NULL;
	env->dl = NULL;
	env->n_parts = env->n_dl = env->dl_cap = 0;
}

