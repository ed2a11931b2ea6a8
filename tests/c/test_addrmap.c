/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_addrmap.c - the address map of the live accounting: put, get, take, a reused
 * address's new value, the two keys that are not addresses, and growth that keeps every
 * live entry and drops those its keep rule refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "addrmap.h"

#define BASE 0xffff8aee81a00000ULL	/* addresses as the kernel's slab gives them */

static void test_put_get_take(void **state)
{
	struct addrmap m = { 0 };
	uint64_t v = 0;

	assert_false(addrmap_get(&m, BASE, &v));	/* empty, no table yet */
	assert_int_equal(addrmap_put(&m, BASE, 7), 0);
	assert_true(addrmap_get(&m, BASE, &v));
	assert_int_equal(v, 7);
	assert_int_equal(addrmap_put(&m, BASE, 9), 0);	/* the address again: the new value */
	assert_true(addrmap_take(&m, BASE, &v));
	assert_int_equal(v, 9);
	assert_false(addrmap_get(&m, BASE, &v));	/* taken once */
	assert_false(addrmap_take(&m, BASE, &v));
	assert_int_equal(addrmap_put(&m, 0, 1), -EINVAL);
	assert_int_equal(addrmap_put(&m, 1, 1), -EINVAL);
	assert_false(addrmap_get(&m, 1, &v));
	addrmap_free(&m);
}

static bool even(uint64_t val)
{
	return val % 2 == 0;
}

static void test_growth_keeps_the_live_and_drops_the_refused(void **state)
{
	struct addrmap m = { .keep = even };
	uint64_t i, v, n = 0;
	size_t cap;

	/* 256 bytes apart like skbs: the low bits alike. Odd values are refused at growth */
	for (i = 0; i < 10000; i++)
		assert_int_equal(addrmap_put(&m, BASE + 256 * i, i), 0);
	for (i = 0; i < 10000; i += 2) {		/* the even ones outlive every growth */
		assert_true(addrmap_get(&m, BASE + 256 * i, &v));
		assert_int_equal(v, i);
	}
	for (i = 1; i < 10000 && addrmap_get(&m, BASE + 256 * i, &v); i += 2)
		n++;
	assert_true(n < 5000);			/* some growth came after odd ones */
	cap = m.cap;
	for (i = 10000; m.cap == cap; i += 2)	/* even values until the next growth */
		assert_int_equal(addrmap_put(&m, BASE + 256 * i, i), 0);
	for (i = 1; i < 10000; i += 2)
		assert_false(addrmap_get(&m, BASE + 256 * i, &v));
	for (i = 0; i < 10000; i += 2)
		assert_true(addrmap_get(&m, BASE + 256 * i, &v));
	addrmap_free(&m);
	assert_null(m.key);
	assert_true(m.keep == even);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_take),
		cmocka_unit_test(test_growth_keeps_the_live_and_drops_the_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
