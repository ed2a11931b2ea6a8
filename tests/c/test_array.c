/* SPDX-License-Identifier: GPL-2.0-only */
/* test_array.c - growable arrays: growth, failure leaves the array as it was, strings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"

static void test_reserve(void **unused)
{
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	for (uint64_t i = 0; i < 1000; i++) {
		assert_int_equal(ARRAY_RESERVE(v, cap, n + 1), 0);
		assert_true(cap >= n + 1);
		v[n++] = i * i;
	}
	assert_int_equal(cap, 1024);	/* doubled from ARRAY_MIN_CAP */
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i * i);
	/* room already there: nothing moves */
	{
		uint64_t *before = v;

		assert_int_equal(ARRAY_RESERVE(v, cap, 1024), 0);
		assert_ptr_equal(v, before);
	}
	/* a size that cannot exist: refused, the array intact */
	assert_int_equal(ARRAY_RESERVE(v, cap, SIZE_MAX / 4), -ENOMEM);
	assert_int_equal(cap, 1024);
	assert_int_equal(v[999], 999 * 999);
	free(v);
}

static void test_strings(void **unused)
{
	char **v = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 20; i++)
		assert_int_equal(array_printf(&v, &n, &cap, "item %d of %s", i, "twenty"), 0);
	assert_int_equal(n, 20);
	assert_string_equal(v[0], "item 0 of twenty");
	assert_string_equal(v[19], "item 19 of twenty");
	array_free_strings(&v, &n, &cap);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_int_equal(cap, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
