/* SPDX-License-Identifier: GPL-2.0-only */
/* test_selfsched.c - the test process steps out of SCHED_FIFO and back. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dl.h"
#include "selfsched.h"

static void set_own(uint32_t policy, uint32_t prio, uint64_t flags)
{
	struct dl_attr a = { .size = sizeof(a), .sched_policy = policy,
			     .sched_priority = prio, .sched_flags = flags };

	assert_int_equal(dl_set(0, &a), 0);
}

static int back_to_other(void **unused)
{
	(void)unused;
	set_own(SCHED_OTHER, 0, 0);
	return 0;
}

static void test_other_is_left_alone(void **unused)
{
	struct selfsched s;
	struct dl_attr a;

	(void)unused;
	set_own(SCHED_OTHER, 0, 0);
	assert_int_equal(selfsched_fair(&s), 0);
	assert_false(s.changed);
	assert_int_equal(selfsched_back(&s), 0);
	assert_int_equal(dl_get(0, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_OTHER);
}

static void test_fifo_steps_out_and_back(void **unused)
{
	struct dl_attr fifo = { .size = sizeof(fifo), .sched_policy = SCHED_FIFO,
				.sched_priority = 1, .sched_flags = SCHED_FLAG_RESET_ON_FORK };
	struct selfsched s;
	struct dl_attr a;

	(void)unused;
	if (dl_set(0, &fifo) == -EPERM)
		skip();		/* not root, no CAP_SYS_NICE */
	assert_int_equal(selfsched_fair(&s), 0);
	assert_true(s.changed);
	assert_int_equal(dl_get(0, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_OTHER);
	assert_int_equal(a.sched_flags & SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_RESET_ON_FORK);
	assert_int_equal(selfsched_back(&s), 0);
	assert_int_equal(dl_get(0, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_FIFO);
	assert_int_equal(a.sched_priority, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_is_left_alone),
		cmocka_unit_test_teardown(test_fifo_steps_out_and_back, back_to_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
