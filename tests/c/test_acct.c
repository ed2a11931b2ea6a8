/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_acct.c - the live accounting when it cannot run (no tracefs, a directory that is
 * not one: a clear error, logged once, nothing left behind) and the removal of the
 * instances of irqresd processes that are gone; the rule fed events by hand
 * (acct.h): time split by the packets each served thread read, the wake-up rule
 * when none was read, the kernel's charge over the switches'. The instance itself needs
 * a real tracefs: tests/integration/test_live_accounting.py.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "acct.h"

static char dir[64];

static int make_dir(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_acct.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int remove_dir(void **state)
{
	char cmd[128];

	acct_stop();
	acct_set_tracing_dir(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static size_t entries(const char *path)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dp = opendir(path);

	assert_non_null(dp);
	while ((de = readdir(dp)))
		n += de->d_name[0] != '.';
	closedir(dp);
	return n;
}

static void test_no_tracefs(void **state)
{
	const struct acct_thread t = { 4242, 0 };
	char missing[128];

	snprintf(missing, sizeof(missing), "%s/not-mounted", dir);
	acct_set_tracing_dir(missing);
	assert_int_equal(acct_update(&t, 1, NULL, 0), -ENOENT);
	assert_false(acct_running());
	assert_non_null(strstr(acct_error(), missing));
	assert_non_null(strstr(acct_error(), "No such file or directory"));
	/* once: the next ticks neither try again nor fail again */
	assert_int_equal(acct_update(&t, 1, NULL, 0), 0);
	acct_drain();
	acct_stop();
	assert_string_equal(acct_error(), "");
}

static void test_not_a_tracefs(void **state)
{
	const struct acct_thread t = { 4242, 0 };
	char inst[128];

	snprintf(inst, sizeof(inst), "%s/instances", dir);
	assert_int_equal(mkdir(inst, 0755), 0);
	acct_set_tracing_dir(dir);
	assert_true(acct_update(&t, 1, NULL, 0) < 0);
	assert_false(acct_running());
	assert_non_null(strstr(acct_error(), "reading the sched events' formats"));
	assert_int_equal(entries(inst), 0);	/* the instance it made is gone again */
}

static void test_nothing_to_follow_makes_nothing(void **state)
{
	acct_set_tracing_dir(dir);
	assert_int_equal(acct_update(NULL, 0, NULL, 0), 0);
	assert_false(acct_running());
	assert_string_equal(acct_error(), "");
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void test_clean_stale(void **state)
{
	char path[192];
	const char *names[3];
	char gone[32], mine[32];

	snprintf(gone, sizeof(gone), "irqresd-%d", (int)dead_pid());
	snprintf(mine, sizeof(mine), "irqresd-%d", (int)getpid());
	names[0] = gone;
	names[1] = mine;
	names[2] = "irqresd-x1";	/* not a pid: not ours to judge */
	snprintf(path, sizeof(path), "%s/instances", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/instances/%s", dir, names[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	acct_set_tracing_dir(dir);
	assert_int_equal(acct_clean_stale(), 1);
	snprintf(path, sizeof(path), "%s/instances/%s", dir, gone);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/instances", dir);
	assert_int_equal(entries(path), 2);
}


/* ---- the rule, fed by hand ---- */

#define DEV 100
#define R1 201
#define R2 202
#define SLEEP 0x1ULL
#define HARDIRQ 0x08

static const struct acct_thread the_dev = { DEV, 0 };
static const struct acct_reader readers[] = { { R2, "recv2" }, { R1, "recv1" } };

static int follow(void **state)
{
	assert_int_equal(acct_feed_follow(&the_dev, 1, readers, 2), 0);
	acct_feed_switch(DEV, SLEEP, 0, 1000);	/* its first sleep: whole from now on */
	return 0;
}

static int unfollow(void **state)
{
	acct_stop();
	return 0;
}

static const struct acct_total *total_of(pid_t pid)
{
	size_t n, i;
	const struct acct_total *t = acct_totals(&n);

	for (i = 0; i < n; i++)
		if (t[i].pid == pid)
			return &t[i];
	return NULL;
}

static uint64_t time_of(pid_t pid)
{
	const struct acct_total *t = total_of(pid);

	return t ? t->time_ns : 0;
}

/* One activation from @start to @end that does nothing but run. */
static void activation(uint64_t start, uint64_t end)
{
	acct_feed_switch(0, 0, DEV, start);
	acct_feed_switch(DEV, SLEEP, 0, end);
}

static void test_time_follows_the_packets_read(void **state)
{
	acct_feed_switch(0, 0, DEV, 2000);
	acct_feed_waking(DEV, R1, "recv1", 0);	/* R2 is awake: not woken */
	acct_feed_deliver(DEV, 0xa1, 0);
	acct_feed_deliver(DEV, 0xa2, 0);
	acct_feed_deliver(DEV, 0xa3, 0);
	acct_feed_read(R1, 0xa1);		/* read while the thread still runs */
	acct_feed_switch(DEV, SLEEP, 0, 3000);
	assert_null(total_of(R1));		/* waits for its packets' reads */
	acct_feed_read(R2, 0xa2);
	acct_feed_read(R2, 0xa2);		/* the same skb copied again: one packet */
	acct_feed_read(R2, 0xa3);		/* the last: charged now */
	assert_int_equal(time_of(R1) + time_of(R2), 1000);
	assert_int_equal(time_of(R1), 334);	/* 1000/3, with the remainder (lowest pid) */
	assert_int_equal(time_of(R2), 666);
	assert_int_equal(total_of(R1)->packets, 1);
	assert_int_equal(total_of(R2)->packets, 2);
	assert_int_equal(total_of(R1)->wakeups, 1);
	assert_int_equal(total_of(R2)->wakeups, 0);
}

static void test_unread_packets_fall_back_to_wakeups_after_the_grace(void **state)
{
	acct_feed_switch(0, 0, DEV, 2000);
	acct_feed_waking(DEV, R2, "recv2", 0);
	acct_feed_deliver(DEV, 0xb1, 0);	/* read by nobody followed */
	acct_feed_switch(DEV, SLEEP, 0, 2500);
	acct_feed_read(999, 0xb1);		/* not a served thread: not a read */
	acct_feed_flush(2500 + ACCT_GRACE_NS - 1);
	assert_null(total_of(R2));
	acct_feed_flush(2500 + ACCT_GRACE_NS);
	assert_int_equal(time_of(R2), 500);
	assert_int_equal(total_of(R2)->packets, 0);
}

static void test_a_reused_address_belongs_to_its_last_delivery(void **state)
{
	acct_feed_switch(0, 0, DEV, 2000);
	acct_feed_deliver(DEV, 0xc1, 0);
	acct_feed_switch(DEV, SLEEP, 0, 2100);
	acct_feed_read(R1, 0xc1);		/* first activation: R1's, 100 ns */
	acct_feed_switch(0, 0, DEV, 3000);
	acct_feed_deliver(DEV, 0xc1, 0);	/* the freed skb's memory again */
	acct_feed_switch(DEV, SLEEP, 0, 3300);
	acct_feed_read(R2, 0xc1);		/* second: R2's, 300 ns */
	assert_int_equal(time_of(R1), 100);
	assert_int_equal(time_of(R2), 300);
}

static void test_kernel_charge_over_switches_and_hard_irq_deliveries_ignored(void **state)
{
	acct_feed_switch(0, 0, DEV, 2000);
	acct_feed_deliver(DEV, 0xd1, HARDIRQ);	/* another interrupt's, on top of it */
	acct_feed_deliver(DEV, 0xd2, 0);
	acct_feed_charge(DEV, 700);
	acct_feed_charge(R1, 5000);		/* not the thread's */
	acct_feed_charge(DEV, 550);
	acct_feed_switch(DEV, SLEEP, 0, 3000);	/* 1000 ns between switches */
	acct_feed_read(R1, 0xd1);
	acct_feed_read(R2, 0xd2);
	assert_null(total_of(R1));
	assert_int_equal(time_of(R2), 1250);
	activation(4000, 4400);			/* no charge traced, nobody: switches' */
	assert_int_equal(time_of(ACCT_NOBODY), 400);
}

static void test_packets_to_a_socket_go_to_its_latest_reader(void **state)
{
	acct_feed_recv(R1, 0x51, 512);		/* R1 reads socket 0x51 */
	acct_feed_recv(R2, 0x52, -11);		/* nothing read (EAGAIN): not its reader */
	acct_feed_switch(0, 0, DEV, 2000);
	acct_feed_ready(DEV, 0x51, 0);
	acct_feed_ready(DEV, 0x52, 0);		/* no reader known: not counted */
	acct_feed_ready(DEV, 0x51, HARDIRQ);	/* another interrupt's */
	acct_feed_switch(DEV, SLEEP, 0, 2600);	/* nothing outstanding: charged at once */
	assert_int_equal(time_of(R1), 600);
	assert_int_equal(total_of(R1)->packets, 1);
	acct_feed_recv(R2, 0x51, 512);		/* the socket changed hands */
	acct_feed_recv(R2, 0x52, 512);
	acct_feed_switch(0, 0, DEV, 3000);
	acct_feed_ready(DEV, 0x51, 0);
	acct_feed_ready(DEV, 0x52, 0);
	acct_feed_switch(DEV, SLEEP, 0, 3400);
	assert_int_equal(time_of(R1), 600);
	assert_int_equal(time_of(R2), 400);
	assert_int_equal(total_of(R2)->packets, 2);
}

static void test_too_many_served_threads_leave_it_to_wakeups(void **state)
{
	struct acct_reader many[ACCT_MAX_READERS + 1];

	for (size_t i = 0; i < ACCT_MAX_READERS + 1; i++)
		many[i] = (struct acct_reader){ .pid = (pid_t)(R1 + i) };
	assert_int_equal(acct_feed_follow(&the_dev, 1, many, ACCT_MAX_READERS + 1), 0);
	acct_feed_recv(R2, 0x61, 512);
	activation(2000, 2100);
	acct_feed_switch(0, 0, DEV, 3000);
	acct_feed_waking(DEV, R1, "recv1", 0);
	acct_feed_ready(DEV, 0x61, 0);		/* R2's socket: not matched */
	acct_feed_switch(DEV, SLEEP, 0, 3500);
	assert_null(total_of(R2));
	assert_int_equal(time_of(R1), 500);
	assert_int_equal(acct_feed_follow(&the_dev, 1, many, ACCT_MAX_READERS), 0);
	acct_feed_recv(R2, 0x61, 512);		/* within the limit again: matched */
	acct_feed_switch(0, 0, DEV, 4000);
	acct_feed_ready(DEV, 0x61, 0);
	acct_feed_switch(DEV, SLEEP, 0, 4300);
	assert_int_equal(time_of(R2), 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_tracefs, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_not_a_tracefs, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_nothing_to_follow_makes_nothing, make_dir,
						remove_dir),
		cmocka_unit_test_setup_teardown(test_clean_stale, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_time_follows_the_packets_read, follow,
						unfollow),
		cmocka_unit_test_setup_teardown(
			test_unread_packets_fall_back_to_wakeups_after_the_grace, follow, unfollow),
		cmocka_unit_test_setup_teardown(test_a_reused_address_belongs_to_its_last_delivery,
						follow, unfollow),
		cmocka_unit_test_setup_teardown(
			test_kernel_charge_over_switches_and_hard_irq_deliveries_ignored, follow,
			unfollow),
		cmocka_unit_test_setup_teardown(test_packets_to_a_socket_go_to_its_latest_reader,
						follow, unfollow),
		cmocka_unit_test_setup_teardown(test_too_many_served_threads_leave_it_to_wakeups,
						follow, unfollow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
