/* SPDX-License-Identifier: GPL-2.0-only */
/* test_hotplug.c - proc connector events for a child this test forks; retry back-off. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hotplug.h"

struct seen {
	pid_t child;
	bool fork, comm, exec, exit;
	int retries, again_left;
};

static enum hotplug_verdict record(void *ctx, enum hotplug_event ev, pid_t pid, pid_t ppid)
{
	struct seen *s = ctx;

	if (pid != s->child)
		return HOTPLUG_DONE;
	switch (ev) {
	case HOTPLUG_FORK:
		s->fork = true;
		assert_int_equal(ppid, getpid());
		break;
	case HOTPLUG_COMM: s->comm = true; break;
	case HOTPLUG_EXEC: s->exec = true; break;
	case HOTPLUG_EXIT: s->exit = true; break;
	case HOTPLUG_RETRY: s->retries++; break;
	default: break;
	}
	if (s->again_left > 0 && ev != HOTPLUG_EXIT) {
		s->again_left--;
		return HOTPLUG_AGAIN;
	}
	return HOTPLUG_DONE;
}

static void pump(struct hotplug *hp, int ms)
{
	struct pollfd p = { .fd = hotplug_fd(hp), .events = POLLIN };
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int to = hotplug_retry_timeout_ms(hp);

		if (poll(&p, p.fd >= 0, to < 0 || to > 10 ? 10 : to) > 0)
			assert_true(hotplug_dispatch(hp) >= 0);
		hotplug_run_retries(hp);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			return;
	}
}

static void test_events_of_a_child(void **state)
{
	struct seen s = { 0 };
	struct hotplug *hp;
	int rc, status;

	rc = hotplug_init(&hp, true, record, &s);
	if (rc == -EPERM || rc == -EPROTONOSUPPORT || rc == -EACCES) {
		hotplug_fini(hp);
		skip();	/* no CAP_NET_ADMIN or no proc connector in this kernel */
	}
	assert_int_equal(rc, 0);
	assert_true(hotplug_fd(hp) >= 0);
	s.again_left = 3;	/* ask for three retries of the new child */
	s.child = fork();
	assert_true(s.child >= 0);
	if (s.child == 0) {
		usleep(20000);
		prctl(PR_SET_NAME, "hotplug-test");
		usleep(20000);
		execl("/bin/true", "true", (char *)NULL);
		_exit(1);
	}
	pump(hp, 200);
	assert_int_equal(waitpid(s.child, &status, 0), s.child);
	pump(hp, 50);
	assert_true(s.fork);
	assert_true(s.comm);
	assert_true(s.exec);
	assert_true(s.exit);
	assert_true(s.retries >= 1);
	assert_int_equal(hotplug_retry_timeout_ms(hp), -1);	/* nothing left pending */
	hotplug_fini(hp);
}

static void test_retry_backoff_gives_up(void **state)
{
	struct seen s = { .child = 777777, .again_left = 1000 };
	struct hotplug *hp;
	struct timespec t0, t;
	long ms;

	assert_int_equal(hotplug_init(&hp, false, record, &s), 0);
	assert_int_equal(hotplug_fd(hp), -1);
	assert_int_equal(hotplug_retry_timeout_ms(hp), -1);
	assert_int_equal(hotplug_retry_add(hp, 777777), 0);
	assert_true(hotplug_retry_timeout_ms(hp) >= 0 && hotplug_retry_timeout_ms(hp) <= 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (hotplug_retry_timeout_ms(hp) >= 0)
		pump(hp, 5);
	clock_gettime(CLOCK_MONOTONIC, &t);
	ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
	/* 1, 2, 4, ... ms: a handful of calls, then it is left to the rescan */
	assert_true(s.retries >= 5 && s.retries <= 10);
	assert_true(ms >= (long)(HOTPLUG_RETRY_MAX_NS / 1000000) &&
		    ms < 3 * (long)(HOTPLUG_RETRY_MAX_NS / 1000000));
	hotplug_fini(hp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_of_a_child),
		cmocka_unit_test(test_retry_backoff_gives_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
