/* SPDX-License-Identifier: GPL-2.0-only */
/* test_pidset.c - a set of ids: sorted once, each id once, looked up by bisection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pidset.h"

static void test_sort_and_has(void **state)
{
	static const pid_t in[] = { 40, 7, 300, 7, 1, 40, 40 };
	static const pid_t want[] = { 1, 7, 40, 300 };
	struct pidset s = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		assert_int_equal(pidset_add(&s, in[i]), 0);
	pidset_sort(&s);
	assert_int_equal(s.n, 4);
	assert_memory_equal(s.v, want, sizeof(want));
	for (size_t i = 0; i < 4; i++)
		assert_true(pidset_has(s.v, s.n, want[i]));
	assert_false(pidset_has(s.v, s.n, 0));
	assert_false(pidset_has(s.v, s.n, 8));
	assert_false(pidset_has(s.v, s.n, 301));
	pidset_free(&s);
	assert_null(s.v);
	assert_int_equal(s.n, 0);
	pidset_sort(&s);			/* empty: nothing to do */
	assert_false(pidset_has(NULL, 0, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sort_and_has),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
