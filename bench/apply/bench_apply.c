/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_apply.c - what irqresd's kernel side costs per call, with many tasks present.
 *
 * Spawns N sleeping processes of its own, then times, over several runs:
 *   plan_env_read(dl)   the environment with the scan for SCHED_DEADLINE tasks
 *                       (apply, plan, set-budget)
 *   plan_env_read       the environment without that scan (a hotplugged thread)
 *   apply_thread        one hotplugged thread: plan, state record (fsync), sched_setattr;
 *                       restored after each run (not timed)
 *   apply_set_budget    a new budget for one managed thread
 *   apply+restore       apply_plan then apply_restore_all of one thread
 * and prints median, p90, min and max in microseconds. Only processes it spawns are
 * changed; the state file lives in a temp directory under DIR (default /run: tmpfs on
 * a normal system, so its fsyncs are cheap; on a disk they are not).
 *
 * usage: bench_apply [-n TASKS] [-r RUNS] [-d DIR]
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "dl.h"
#include "log.h"
#include "plan.h"
#include "state.h"

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_i64);
	printf("| %-18s | %5d | %9.1f | %9.1f | %9.1f | %9.1f |\n", what, n, v[n / 2] / 1e3,
	       v[(n * 9) / 10] / 1e3, v[0] / 1e3, v[n - 1] / 1e3);
}

static pid_t spawn(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static unsigned long long starttime(pid_t pid)
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

int main(int argc, char **argv)
{
	int ntasks = 10000, runs = 101, opt;
	pid_t *tasks, me;
	int64_t *t;
	struct target tg = { .name = "bench", .kind = TARGET_TASK, .runtime_ns = 1000000,
			     .period_ns = 100000000, .deadline_ns = 100000000 };
	struct profile prof = { .path = "bench", .targets = &tg, .n_targets = 1 };
	struct match m = { .target = 0 };
	struct match_list ml = { .v = &m, .n = 1, .cap = 1 };
	struct state st;
	struct plan_env env;
	struct plan plan;
	char err[1024], run[200];
	const char *dir = "/run";

	while ((opt = getopt(argc, argv, "n:r:d:")) != -1) {
		if (opt == 'n')
			ntasks = atoi(optarg);
		else if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 'd')
			dir = optarg;
		else {
			fprintf(stderr, "usage: bench_apply [-n TASKS] [-r RUNS] [-d DIR]\n");
			return 2;
		}
	}
	if (ntasks < 0 || runs < 1) {
		fprintf(stderr, "bench_apply: -n needs >= 0 and -r >= 1\n");
		return 2;
	}
	if ((size_t)snprintf(run, sizeof(run), "%s/irqres-bench-XXXXXX", dir) >= sizeof(run)) {
		fprintf(stderr, "bench_apply: -d path too long\n");
		return 2;
	}
	log_init("bench_apply", false);
	log_set_sink(LOG_SINK_SYSLOG);	/* keep the table clean */
	if (!mkdtemp(run)) {
		perror(run);
		return 1;
	}
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s", run);
	tasks = calloc((size_t)ntasks, sizeof(*tasks));
	t = calloc((size_t)runs, sizeof(*t));
	for (int i = 0; i < ntasks; i++)
		tasks[i] = spawn();
	me = spawn();
	m.thread.pid = m.thread.tgid = me;
	m.thread.irq = -1;
	m.thread.starttime = starttime(me);
	snprintf(m.thread.comm, sizeof(m.thread.comm), "bench-child");
	sched_getaffinity(me, sizeof(m.thread.affinity), &m.thread.affinity);
	state_init(&st);
	if (state_open(&st, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}

	printf("%d sleeping processes present, %d runs, state file in %s\n\n", ntasks, runs, dir);
	printf("| call               |  runs | median us |    p90 us |    min us |    max us |\n");
	printf("|---|---|---|---|---|---|\n");
	for (int i = 0; i < runs; i++) {
		int64_t a = now_ns();

		plan_env_read(&env, true);
		t[i] = now_ns() - a;
		plan_env_free(&env);
	}
	report("plan_env_read(dl)", t, runs);
	for (int i = 0; i < runs; i++) {
		int64_t a = now_ns();

		plan_env_read(&env, false);
		t[i] = now_ns() - a;
		plan_env_free(&env);
	}
	report("plan_env_read", t, runs);
	for (int i = 0; i < runs; i++) {
		int64_t a = now_ns();
		int rc = apply_thread(&prof, &m, &st, err, sizeof(err));

		t[i] = now_ns() - a;
		if (rc) {
			fprintf(stderr, "apply_thread: %s\n", err);
			return 1;
		}
		apply_restore_all(&st);
	}
	report("apply_thread", t, runs);
	if (apply_thread(&prof, &m, &st, err, sizeof(err)) == 0) {
		for (int i = 0; i < runs; i++) {
			int64_t a = now_ns();
			int rc = apply_set_budget(&st, &me, 1, 1000000 + (uint64_t)(i % 2) * 1000, 0,
						  100000000, err, sizeof(err));

			t[i] = now_ns() - a;
			if (rc) {
				fprintf(stderr, "apply_set_budget: %s\n", err);
				return 1;
			}
		}
		report("apply_set_budget", t, runs);
		apply_restore_all(&st);
	}
	for (int i = 0; i < runs; i++) {
		int64_t a = now_ns();

		if (plan_build(&prof, &ml, &plan) || apply_plan(&plan, &st, err, sizeof(err))) {
			fprintf(stderr, "apply: %s\n", err);
			return 1;
		}
		apply_restore_all(&st);
		t[i] = now_ns() - a;
		plan_free(&plan);
	}
	report("plan+apply+restore", t, runs);

	kill(me, SIGKILL);
	waitpid(me, NULL, 0);
	for (int i = 0; i < ntasks; i++) {
		kill(tasks[i], SIGKILL);
		waitpid(tasks[i], NULL, 0);
	}
	state_remove(&st);
	state_free(&st);
	rmdir(run);
	free(tasks);
	free(t);
	return 0;
}
