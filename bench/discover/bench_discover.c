/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_discover.c - how long irqresd's thread discovery takes with many tasks present.
 *
 * Spawns N sleeping processes (or threads) of its own, then times, over several runs:
 *   discover_scan_irq   the IRQ-thread scan (kthreadd's children file: the normal path)
 *   scan_irq_walk       the same scan when /proc/2/task/2/children is missing (the
 *                       fallback that walks /proc), on a view of /proc made of symlinks
 *   discover_scan_tasks every user thread (what `task` targets need)
 *   discover_read       one thread (what a hotplug event costs)
 * and prints median, p90, min and max in microseconds.  It only reads the host's /proc;
 * every process it spawns dies with it (PR_SET_PDEATHSIG) and is killed and reaped at
 * the end.
 *
 * usage: bench_discover [-n TASKS] [-t] [-r RUNS]
 *   -n TASKS  tasks to spawn (default 10000)
 *   -t        spawn threads of one process instead of processes
 *   -r RUNS   runs of each scan (default 101; the task scan and the walk use RUNS/5 + 1)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "discover.h"

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

static void report(const char *what, int64_t *ns, int runs, size_t found)
{
	qsort(ns, (size_t)runs, sizeof(*ns), cmp_i64);
	printf("%-20s runs %4d  found %6zu  median %9.1f us  p90 %9.1f us  min %9.1f us  "
	       "max %9.1f us\n", what, runs, found, ns[runs / 2] / 1e3, ns[(runs * 9) / 10] / 1e3,
	       ns[0] / 1e3, ns[runs - 1] / 1e3);
}

typedef int (*scan_fn)(struct thread_list *);

static int time_scan(const char *what, scan_fn fn, int runs)
{
	int64_t *ns = calloc((size_t)runs, sizeof(*ns));
	size_t found = 0;
	int i, rc = 0;

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < runs && !rc; i++) {
		struct thread_list l = { 0 };
		int64_t t0 = now_ns();

		rc = fn(&l);
		ns[i] = now_ns() - t0;
		found = l.n;
		discover_list_free(&l);
	}
	if (rc)
		fprintf(stderr, "bench_discover: %s: %s\n", what, strerror(-rc));
	else
		report(what, ns, runs, found);
	free(ns);
	return rc;
}

static int read_self(struct thread_list *l)
{
	struct thread_info ti;
	int rc = discover_read(getpid(), &ti);

	return rc ? rc : discover_list_push(l, &ti);
}

/*
 * A view of /proc without kthreadd's children file: a directory of symlinks to
 * /proc/PID, except 2/, which holds only links to kthreadd's stat, status and cgroup.
 */
static int make_walk_view(const char *dir)
{
	static const char *const files[] = { "stat", "status", "cgroup" };
	char from[300], to[600];
	struct dirent *de;
	DIR *d;
	size_t i;

	if (mkdir(dir, 0700) < 0)
		return -errno;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(from, sizeof(from), "/proc/%s", de->d_name);
		snprintf(to, sizeof(to), "%s/%s", dir, de->d_name);
		if (!strcmp(de->d_name, "2")) {
			mkdir(to, 0700);
			for (i = 0; i < 3; i++) {
				snprintf(from, sizeof(from), "/proc/2/%s", files[i]);
				snprintf(to, sizeof(to), "%s/2/%s", dir, files[i]);
				symlink(from, to);
			}
			continue;
		}
		symlink(from, to);
	}
	closedir(d);
	return 0;
}

static void remove_walk_view(const char *dir)
{
	char path[600];
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t i;
	static const char *const files[] = { "stat", "status", "cgroup" };

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "2"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/2/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/2", dir);
	rmdir(path);
	rmdir(dir);
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* Starts @n sleeping processes; their pids go to @pids.  Returns how many started. */
static int spawn_processes(int n, pid_t *pids)
{
	pid_t parent = getpid();
	int i;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "bench_discover: fork %d: %s\n", i, strerror(errno));
			break;
		}
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			for (;;)
				pause();
		}
		pids[i] = pid;
	}
	return i;
}

static int spawn_threads(int n)
{
	pthread_attr_t attr;
	pthread_t t;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		int rc = pthread_create(&t, &attr, sleeper, NULL);

		if (rc) {
			fprintf(stderr, "bench_discover: thread %d: %s\n", i, strerror(rc));
			break;
		}
	}
	pthread_attr_destroy(&attr);
	return i;
}

int main(int argc, char **argv)
{
	int n = 10000, runs = 101, opt, started, i, rc = 0;
	bool threads = false;
	pid_t *pids = NULL;
	char view[64];

	while ((opt = getopt(argc, argv, "n:tr:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 't':
			threads = true;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n TASKS] [-t] [-r RUNS]\n", argv[0]);
			return 2;
		}
	}
	if (n < 0 || runs < 1) {
		fprintf(stderr, "bench_discover: -n must be >= 0 and -r >= 1\n");
		return 2;
	}
	if (threads) {
		started = spawn_threads(n);
	} else {
		pids = calloc((size_t)n + 1, sizeof(*pids));
		if (!pids)
			return 1;
		started = spawn_processes(n, pids);
	}
	printf("spawned %d sleeping %s; tasks on this machine: see found by discover_scan_tasks\n",
	       started, threads ? "threads" : "processes");
	if (started < n)
		rc = 1;

	irqres_paths_default();
	if (!rc)
		rc = time_scan("discover_scan_irq", discover_scan_irq, runs);
	if (!rc)
		rc = time_scan("discover_scan_tasks", discover_scan_tasks, runs / 5 + 1);
	if (!rc)
		rc = time_scan("discover_read", read_self, runs);
	if (!rc) {
		snprintf(view, sizeof(view), "/tmp/bench-discover.%d", getpid());
		rc = make_walk_view(view);
		if (!rc) {
			snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s", view);
			rc = time_scan("scan_irq_walk", discover_scan_irq, runs / 5 + 1);
			irqres_paths_default();
		} else {
			fprintf(stderr, "bench_discover: %s: %s\n", view, strerror(-rc));
		}
		remove_walk_view(view);
	}

	if (!threads) {
		for (i = 0; i < started; i++)
			kill(pids[i], SIGKILL);
		for (i = 0; i < started; i++)
			waitpid(pids[i], NULL, 0);
		free(pids);
	}
	return rc ? 1 : 0;
}
