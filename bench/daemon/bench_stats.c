/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_stats.c - irqresd's per-thread cost of a `stats` request: stats_thread_read()
 * (schedstat + context switches) plus sched_getattr(), over N sleeping children this
 * program forks, and over the host's irq/<N>-<action> threads (only read, never changed).
 * "kept" reads through the fds stats keeps open between requests; "cold" drops them
 * before every sweep, so each read opens and closes its files as irqresd did before.
 * Prints the median over runs of the per-thread time of one sweep, in ns.
 *
 *   make -C bench/daemon && bench/daemon/bench_stats [-n 50] [-r 200]
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dl.h"
#include "irqres.h"
#include "stats.h"

#define MAX_PIDS 4096

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median ns per thread of one sweep over pids, kept or cold. */
static uint64_t sweep(const pid_t *pids, int n, int runs, bool cold, uint64_t *samples)
{
	int r, i;

	for (r = 0; r < runs; r++) {
		uint64_t t0;

		if (cold)
			stats_fini();
		t0 = now();
		for (i = 0; i < n; i++) {
			struct thread_stats st;
			struct dl_attr attr;

			if (stats_thread_read(pids[i], &st) < 0 || dl_get(pids[i], &attr) < 0) {
				fprintf(stderr, "pid %d: cannot read its stats\n", (int)pids[i]);
				exit(1);
			}
		}
		samples[r] = (now() - t0) / (uint64_t)n;
	}
	qsort(samples, (size_t)runs, sizeof(*samples), cmp_u64);
	return samples[runs / 2];
}

/* The host's IRQ threads (comm irq/...), read only. */
static int irq_threads(pid_t *pids, int max)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		char path[300], comm[64] = "";
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strncmp(comm, "irq/", 4) == 0)
			pids[n++] = atoi(de->d_name);
		fclose(f);
	}
	closedir(dir);
	return n;
}

int main(int argc, char **argv)
{
	static pid_t pids[MAX_PIDS];
	int n = 50, runs = 200, opt, i, n_irq;
	uint64_t *samples;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n children] [-r runs]\n", argv[0]);
			return 2;
		}
	}
	if (n < 1 || n > MAX_PIDS || runs < 1) {
		fprintf(stderr, "-n must be 1..%d and -r at least 1\n", MAX_PIDS);
		return 2;
	}
	samples = calloc((size_t)runs, sizeof(*samples));
	if (!samples)
		return 1;
	irqres_paths_default();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		pids[i] = pid;
	}
	printf("| threads | n | cold: open, read, close (ns/thread) | kept fds, pread (ns/thread) |\n");
	printf("|---|---|---|---|\n");
	printf("| sleeping children (user tasks) | %d | %llu | %llu |\n", n,
	       (unsigned long long)sweep(pids, n, runs, true, samples),
	       (unsigned long long)sweep(pids, n, runs, false, samples));
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	stats_fini();
	n_irq = irq_threads(pids, MAX_PIDS);
	if (n_irq > 0)
		printf("| host irq/* kernel threads (read only) | %d | %llu | %llu |\n", n_irq,
		       (unsigned long long)sweep(pids, n_irq, runs, true, samples),
		       (unsigned long long)sweep(pids, n_irq, runs, false, samples));
	stats_fini();
	free(samples);
	return 0;
}
