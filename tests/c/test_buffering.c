/* SPDX-License-Identifier: GPL-2.0-only */
/* test_buffering.c - the buffering bound and the runtime floor, from the cases shared
 * with Python. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "buffering.h"
#include "dlcheck.h"
#include "rules.h"

/* Every case of buffering.tsv: Q, T, P, N_c, then ok or violated and the smallest Q. */
static void test_buffering_table(void **state)
{
	struct rules_table t;
	int cases = 0;

	assert_non_null(rules_open(&t, "buffering.tsv"));
	while (rules_next(&t)) {
		uint64_t q, period, p, n, want_min, min;
		bool ok;

		if (t.n != 6)
			fail_msg("%s:%d: not a case", t.name, t.lineno);
		q = strtoull(t.field[0], NULL, 10);
		period = strtoull(t.field[1], NULL, 10);
		p = strtoull(t.field[2], NULL, 10);
		n = strtoull(t.field[3], NULL, 10);
		want_min = strtoull(t.field[5], NULL, 10);
		ok = buffering_ok(q, period, p, n);
		min = buffering_min_runtime(period, p, n);
		if (ok != !strcmp(t.field[4], "ok") || min != want_min)
			fail_msg("%s:%d: Q %s T %s P %s N_c %s: %s, smallest Q %llu", t.name,
				 t.lineno, t.field[0], t.field[1], t.field[2], t.field[3],
				 ok ? "ok" : "violated", (unsigned long long)min);
		cases++;
	}
	assert_true(cases >= 15);
}

/* Every case of runtime-floor.tsv against the kernel's smallest runtime. */
static void test_runtime_floor_table(void **state)
{
	struct rules_table t;
	int cases = 0;

	assert_non_null(rules_open(&t, "runtime-floor.tsv"));
	while (rules_next(&t)) {
		bool ok = strtoull(t.field[0], NULL, 10) >= DLCHECK_RUNTIME_MIN_NS;

		if (t.n != 2 || ok != !strcmp(t.field[1], "ok"))
			fail_msg("%s:%d: runtime %s ns %s", t.name, t.lineno, t.field[0],
				 ok ? "accepted" : "refused");
		cases++;
	}
	assert_true(cases >= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffering_table),
		cmocka_unit_test(test_runtime_floor_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
