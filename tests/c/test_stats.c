/* SPDX-License-Identifier: GPL-2.0-only */
/* test_stats.c - schedstat, context switches and /proc/interrupts on a fixture tree. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "children.h"
#include "irqres.h"
#include "stats.h"

static int use_fixture(void **state)
{
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "fixtures/stats/proc");
	return 0;
}

static int use_default(void **state)
{
	irqres_paths_default();
	return 0;
}

static int done(void **state)
{
	children_kill_all();
	stats_fini();
	irqres_paths_default();
	return 0;
}

static void test_thread(void **state)
{
	struct thread_stats st;

	assert_int_equal(stats_thread_read(105, &st), 0);
	assert_int_equal(st.cpu_time_ns, 1234567890ULL);
	assert_int_equal(st.wait_time_ns, 98765);
	assert_int_equal(st.timeslices, 4321);
	assert_int_equal(st.voluntary_switches, 5000);
	assert_int_equal(st.involuntary_switches, 17);
}

static void test_thread_gone_or_bad(void **state)
{
	struct thread_stats st;

	assert_int_equal(stats_thread_read(4242, &st), -ESRCH);
	assert_int_equal(stats_thread_read(200, &st), -EINVAL);
}

static void test_interrupts(void **state)
{
	struct irq_counts ic = { 0 };

	assert_int_equal(stats_irq_counts_read(&ic), 0);
	assert_int_equal(ic.n, 5);		/* NMI, LOC, ERR, MIS are not IRQ lines */
	assert_int_equal(stats_irq_count(&ic, 0), 45);
	assert_int_equal(stats_irq_count(&ic, 11), 123456 + 654321);
	assert_int_equal(stats_irq_count(&ic, 24), 0);
	assert_int_equal(stats_irq_count(&ic, 25), 8000000000ULL);	/* no 32-bit wrap */
	assert_int_equal(stats_irq_count(&ic, 99), 0);		/* not listed */
	/* reading again replaces, not appends */
	assert_int_equal(stats_irq_counts_read(&ic), 0);
	assert_int_equal(ic.n, 5);
	stats_irq_counts_free(&ic);
}

static void test_real_proc(void **state)
{
	struct thread_stats st;
	struct irq_counts ic = { 0 };

	/* this very process: it has run, so it has cpu time and at least one timeslice */
	assert_int_equal(stats_thread_read(getpid(), &st), 0);
	assert_true(st.cpu_time_ns > 0);
	assert_true(st.timeslices > 0);
	assert_int_equal(stats_irq_counts_read(&ic), 0);
	assert_true(ic.n > 0);
	stats_irq_counts_free(&ic);
}

/* Kept fds: a second read of the same fds shows new counts; gone and forgotten threads close. */
static void test_kept_fds(void **state)
{
	struct thread_stats a, b, c;
	pid_t child = child_spawn("irqres-stats");
	size_t per;
	int i;

	assert_true(child > 0);
	stats_fini();
	assert_int_equal(stats_kept_fds(), 0);
	assert_int_equal(stats_thread_read(getpid(), &a), 0);
	per = stats_switches_by_taskstats() ? 1 : 2;	/* schedstat (+ status) */
	assert_int_equal(stats_kept_fds(), per);
	for (i = 0; i < 5; i++)
		usleep(1000);		/* five voluntary switches at least */
	assert_int_equal(stats_thread_read(getpid(), &b), 0);
	assert_int_equal(stats_kept_fds(), per);	/* the same fds, read again */
	assert_true(b.voluntary_switches >= a.voluntary_switches + 5);
	assert_true(b.cpu_time_ns > a.cpu_time_ns);

	assert_int_equal(stats_thread_read(child, &c), 0);
	assert_int_equal(stats_kept_fds(), 2 * per);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(stats_thread_read(child, &c), -ESRCH);
	assert_int_equal(stats_kept_fds(), per);	/* the gone thread's fds are closed */

	stats_thread_forget(getpid());
	assert_int_equal(stats_kept_fds(), 0);
	stats_thread_forget(getpid());		/* twice is harmless */
}

/* With a low RLIMIT_NOFILE, half of it is kept open and the other threads still read. */
static void test_kept_fds_capped(void **state)
{
	struct rlimit old, low;
	struct thread_stats st;
	pid_t pids[12];
	size_t per;
	int i;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 20;		/* 10 fds kept: 5 threads */
	stats_fini();
	for (i = 0; i < 12; i++) {
		pids[i] = child_spawn("irqres-stats");
		assert_true(pids[i] > 0);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	for (i = 0; i < 12; i++)
		assert_int_equal(stats_thread_read(pids[i], &st), 0);
	per = stats_switches_by_taskstats() ? 1 : 2;
	assert_int_equal(stats_kept_fds(), 5 * per);
	for (i = 0; i < 12; i++)		/* a second request: the same, nothing more opened */
		assert_int_equal(stats_thread_read(pids[i], &st), 0);
	assert_int_equal(stats_kept_fds(), 5 * per);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	stats_thread_forget(pids[0]);	/* a slot is free: the next new thread keeps its fds */
	assert_int_equal(stats_thread_read(pids[11], &st), 0);
	assert_int_equal(stats_kept_fds(), 5 * per);
}

/* The voluntary switches of pid per its status, or -1. */
static long long status_voluntary(pid_t pid)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "voluntary_ctxt_switches: %lld", &v);
	fclose(f);
	return v;
}

/* The counts of a child asleep in pause(), as stats reads them and as its status says. */
static void test_switches_match_status(void **state)
{
	pid_t child = child_spawn("irqres-stats");
	unsigned long long vol = 0, invol = 0;
	struct thread_stats st;
	char path[64], line[256];
	long long before;
	FILE *f;
	int i;

	assert_true(child > 0);
	/* asleep in pause() for good once its count stays put (slow under valgrind) */
	for (i = 0, before = -2; i < 500; i++) {
		long long now;

		usleep(20000);
		now = status_voluntary(child);
		if (now > 0 && now == before)
			break;
		before = now;
	}
	stats_fini();
	assert_int_equal(stats_thread_read(child, &st), 0);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)child);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "voluntary_ctxt_switches: %llu", &vol);
		sscanf(line, "nonvoluntary_ctxt_switches: %llu", &invol);
	}
	fclose(f);
	fprintf(stderr, "switch counts from %s: %llu / %llu\n",
		stats_switches_by_taskstats() ? "taskstats" : "status", vol, invol);
	assert_true(vol > 0);
	assert_int_equal(st.voluntary_switches, vol);
	assert_int_equal(st.involuntary_switches, invol);
	/* gone: taskstats says so as status would */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(stats_thread_read(child, &st), -ESRCH);
}

/* A new proc root (fixtures, here) drops the fds kept under the old one. */
static void test_root_change(void **state)
{
	struct thread_stats st;
	struct irq_counts ic = { 0 };

	stats_fini();
	assert_int_equal(stats_thread_read(getpid(), &st), 0);
	assert_int_equal(stats_irq_counts_read(&ic), 0);
	assert_int_equal(stats_kept_fds(), stats_switches_by_taskstats() ? 2 : 3);
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "fixtures/stats/proc");
	assert_false(stats_switches_by_taskstats());	/* a fixture: status it is */
	assert_int_equal(stats_thread_read(105, &st), 0);
	assert_int_equal(st.voluntary_switches, 5000);
	assert_int_equal(stats_kept_fds(), 2);
	assert_int_equal(stats_irq_counts_read(&ic), 0);
	assert_int_equal(stats_irq_count(&ic, 11), 123456 + 654321);
	assert_int_equal(stats_kept_fds(), 3);
	stats_irq_counts_free(&ic);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_thread, use_fixture, use_default),
		cmocka_unit_test_setup_teardown(test_thread_gone_or_bad, use_fixture, use_default),
		cmocka_unit_test_setup_teardown(test_interrupts, use_fixture, use_default),
		cmocka_unit_test_setup_teardown(test_real_proc, use_default, use_default),
		cmocka_unit_test_setup_teardown(test_kept_fds, use_default, done),
		cmocka_unit_test_setup_teardown(test_root_change, use_default, done),
		cmocka_unit_test_setup_teardown(test_kept_fds_capped, use_default, done),
		cmocka_unit_test_setup_teardown(test_switches_match_status, use_default, done),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
