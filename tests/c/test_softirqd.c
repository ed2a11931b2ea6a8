/* SPDX-License-Identifier: GPL-2.0-only */
/* test_softirqd.c - the names of the per-CPU soft IRQ kthreads, from the cases shared with
 * Python. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rules.h"
#include "softirqd.h"

/* Every case of softirq-kthread.tsv: comm, then kthread and cpu; or "no". */
static void test_softirqd_parse_table(void **state)
{
	struct rules_table t;
	int cases = 0;

	assert_non_null(rules_open(&t, "softirq-kthread.tsv"));
	while (rules_next(&t)) {
		enum softirqd_kind kind = SOFTIRQD_N;
		int cpu = -7, rc = softirqd_parse(t.field[0], &kind, &cpu);

		if (t.n == 2 && !strcmp(t.field[1], "no")) {
			if (rc != -EINVAL)
				fail_msg("%s:%d: '%s' read as %s/%d, want none", t.name, t.lineno,
					 t.field[0], softirqd_name(kind), cpu);
		} else if (t.n != 3) {
			fail_msg("%s:%d: not a case", t.name, t.lineno);
		} else if (rc || strcmp(softirqd_name(kind), t.field[1]) ||
			   cpu != atoi(t.field[2])) {
			fail_msg("%s:%d: '%s' read as rc %d %s/%d", t.name, t.lineno, t.field[0], rc,
				 rc ? "" : softirqd_name(kind), cpu);
		}
		cases++;
	}
	assert_true(cases >= 20);
}

/* Names and the list of a mask, as messages and the profile use them. */
static void test_softirqd_names(void **state)
{
	char buf[64];

	for (int k = 0; k < SOFTIRQD_N; k++)
		assert_int_equal(softirqd_lookup(softirqd_name((enum softirqd_kind)k)), k);
	assert_int_equal(softirqd_lookup("ksoftirqd/0"), -1);
	assert_int_equal(softirqd_lookup(""), -1);
	assert_null(softirqd_name(SOFTIRQD_N));
	assert_string_equal(softirqd_list(SOFTIRQD_ALL, buf, sizeof(buf)),
			    "ksoftirqd, ktimers, backlog_napi");
	assert_string_equal(softirqd_list(1u << SOFTIRQD_KTIMERS, buf, sizeof(buf)), "ktimers");
	assert_string_equal(softirqd_list(0, buf, sizeof(buf)), "");
	assert_string_equal(softirqd_list(SOFTIRQD_ALL, buf, 12), "ksoftirqd, ");
	assert_true(softirqd_comm_may_be("kthreadd"));
	assert_true(softirqd_comm_may_be("ktimers/3"));
	assert_false(softirqd_comm_may_be("kworker/3:0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_softirqd_parse_table),
		cmocka_unit_test(test_softirqd_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
