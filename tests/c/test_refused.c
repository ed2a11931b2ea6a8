/* SPDX-License-Identifier: GPL-2.0-only */
/* test_refused.c - the list of refused hotplugged threads and its retries after EBUSY. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>

#include "refused.h"

#define S 1000000000ULL

static void test_refusal_kinds(void **unused)
{
	static struct refused_list l;
	pid_t due[REFUSED_MAX];

	(void)unused;
	assert_false(refused_note(&l, 10, 5, -EPERM, 0));
	assert_false(refused_note(&l, 11, 5, -EBUSY, 0));
	/* EPERM: for good; EBUSY: blocked until 1 s later */
	assert_true(refused_blocks(&l, 10, 5, 100 * S));
	assert_true(refused_blocks(&l, 11, 5, S - 1));
	assert_false(refused_blocks(&l, 11, 5, S));
	assert_false(refused_blocks(&l, 11, 6, 0));	/* a reused pid is another thread */
	assert_int_equal(refused_due(&l, S, due), 1);
	assert_int_equal(due[0], 11);
	/* refused again at 1 s: due at 3 s, then 7 s, ..., and never more than 32 s apart */
	assert_true(refused_note(&l, 11, 5, -EBUSY, S));
	assert_int_equal(refused_due(&l, 3 * S - 1, due), 0);
	assert_int_equal(refused_due(&l, 3 * S, due), 1);
	refused_settle(&l, 11, 3 * S);	/* not refused again: forgotten */
	assert_false(refused_blocks(&l, 11, 5, 0));
	assert_int_equal(l.n, 1);
	for (int i = 0; i < 10; i++)
		refused_note(&l, 12, 1, -EBUSY, 0);
	assert_int_equal(l.v[1].delay_ns, REFUSED_RETRY_MAX_NS);
	/* settled after a try that refused it again: kept */
	refused_settle(&l, 12, 0);
	assert_int_equal(l.n, 2);
	refused_forget(&l, 12, 1);
	refused_forget(&l, 10, 5);
	assert_int_equal(l.n, 0);
}

static void test_oldest_forgotten(void **unused)
{
	static struct refused_list l;

	(void)unused;
	for (pid_t p = 1; p <= REFUSED_MAX + 1; p++)
		refused_note(&l, p, 0, -EPERM, 0);
	assert_int_equal(l.n, REFUSED_MAX);
	assert_false(refused_blocks(&l, 1, 0, 0));
	assert_true(refused_blocks(&l, REFUSED_MAX + 1, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusal_kinds),
		cmocka_unit_test(test_oldest_forgotten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
