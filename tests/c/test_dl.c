/* SPDX-License-Identifier: GPL-2.0-only */
/* test_dl.c - sched_getattr/sched_setattr on processes the test forks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "children.h"
#include "dl.h"

static void test_to_ratio(void **unused)
{
	/* the kernel's to_ratio(): (runtime << 20) / period, truncated */
	assert_int_equal(dl_to_ratio(10000000, 2000000), 209715);	/* 0.2 */
	assert_int_equal(dl_to_ratio(1000000000, 950000000), 996147);	/* default RT limit */
	assert_int_equal(dl_to_ratio(100, 100), DL_BW_UNIT);
	assert_int_equal(dl_to_ratio(0, 100), 0);
	/* no overflow for the largest periods */
	assert_int_equal(dl_to_ratio(UINT64_MAX, UINT64_MAX), DL_BW_UNIT);
}

static void test_deadline_rescale(void **unused)
{
	/* D keeps its ratio to T: 2.5/10 of 40ms */
	assert_int_equal(dl_deadline_rescale(2500000, 10000000, 40000000), 10000000);
	/* same period: kept; none before: the new period */
	assert_int_equal(dl_deadline_rescale(7, 10, 10), 7);
	assert_int_equal(dl_deadline_rescale(0, 0, 40), 40);
	assert_int_equal(dl_deadline_rescale(0, 10, 10), 10);
	/* never past the new period, no overflow for the largest values */
	assert_int_equal(dl_deadline_rescale(20, 10, 30), 30);
	assert_int_equal(dl_deadline_rescale(UINT64_MAX, UINT64_MAX, UINT64_MAX / 2),
			 UINT64_MAX / 2);
}

static void test_policy_names(void **unused)
{
	const char *names[] = { "other", "fifo", "rr", "batch", "idle", "deadline" };

	for (size_t i = 0; i < 6; i++)
		assert_string_equal(dl_policy_name(dl_policy_from_name(names[i])), names[i]);
	assert_int_equal(dl_policy_from_name("deadline"), SCHED_DEADLINE);
	assert_int_equal(dl_policy_from_name("realtime"), -EINVAL);
	assert_string_equal(dl_policy_name(42), "unknown");
}

static void test_bad_arguments(void **unused)
{
	assert_int_equal(dl_set_deadline(getpid(), 0, 10, 10), -EINVAL);
	assert_int_equal(dl_set_deadline(getpid(), 20, 10, 30), -EINVAL);
	assert_int_equal(dl_set_deadline(getpid(), 10, 30, 20), -EINVAL);
	assert_int_equal(child_set_policy(getpid(), SCHED_FIFO, 0, 0), -EINVAL);
	assert_int_equal(child_set_policy(getpid(), SCHED_OTHER, 0, 20), -EINVAL);
	assert_int_equal(child_set_policy(getpid(), SCHED_DEADLINE, 0, 0), -EINVAL);
}

static void test_gone(void **unused)
{
	struct dl_attr a;
	pid_t pid = child_spawn("irqres-gone");

	child_kill(pid);
	assert_int_equal(dl_get(pid, &a), -ESRCH);
	assert_int_equal(dl_set_deadline(pid, 100000, 1000000, 1000000), -ESRCH);
}

static void test_deadline_and_back(void **unused)
{
	struct dl_attr a;
	pid_t pid;

	REQUIRE_DL();
	pid = child_spawn("irqres-dl");
	assert_int_equal(child_set_policy(pid, SCHED_OTHER, 0, 7), 0);
	assert_int_equal(dl_get(pid, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_OTHER);
	assert_int_equal(a.sched_nice, 7);

	assert_int_equal(dl_set_deadline(pid, 2000000, 8000000, 10000000), 0);
	assert_int_equal(dl_get(pid, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_DEADLINE);
	assert_int_equal(a.sched_runtime, 2000000);
	assert_int_equal(a.sched_deadline, 8000000);
	assert_int_equal(a.sched_period, 10000000);
	assert_true(a.sched_flags & SCHED_FLAG_RESET_ON_FORK);

	assert_int_equal(child_set_policy(pid, SCHED_FIFO, 42, 0), 0);
	assert_int_equal(dl_get(pid, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_FIFO);
	assert_int_equal(a.sched_priority, 42);

	assert_int_equal(dl_set_deadline(pid, 1000000, 10000000, 10000000), 0);
	assert_int_equal(child_set_policy(pid, SCHED_OTHER, 0, -3), 0);
	assert_int_equal(dl_get(pid, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_OTHER);
	assert_int_equal(a.sched_nice, -3);
	child_kill(pid);
}

static void test_kernel_minimum_runtime(void **unused)
{
	pid_t pid;

	REQUIRE_DL();
	pid = child_spawn("irqres-dl");
	/* a runtime below the kernel's 1024 ns minimum is refused with EINVAL */
	assert_int_equal(dl_set_deadline(pid, 100, 1000, 1000), -EINVAL);
	child_kill(pid);
}

static int teardown(void **unused)
{
	children_kill_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_to_ratio),
		cmocka_unit_test(test_deadline_rescale),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_gone),
		cmocka_unit_test_teardown(test_deadline_and_back, teardown),
		cmocka_unit_test_teardown(test_kernel_minimum_runtime, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
