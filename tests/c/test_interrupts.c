/* SPDX-License-Identifier: GPL-2.0-only */
/* test_interrupts.c - the lines of /proc/interrupts, from the samples shared with Python. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "interrupts.h"
#include "rules.h"

static const char *const SAMPLES[] = { "x86", "cpu-hot-removed", "arm64-gic", "long-actions",
				       "odd" };

/* Parses sample @name.txt as the daemon does, each result checked against @name.expected. */
static void check_sample(const char *name)
{
	char path[128], line[1024], got[2][32];
	struct rules_table exp;
	int lineno = 1, ncpu;
	FILE *f;

	snprintf(path, sizeof(path), RULES_DIR "proc-interrupts/%s.txt", name);
	f = fopen(path, "r");
	assert_non_null(f);
	snprintf(path, sizeof(path), "proc-interrupts/%s.expected", name);
	assert_non_null(rules_open(&exp, path));
	assert_non_null(fgets(line, sizeof(line), f));
	ncpu = interrupts_ncpu(line);
	assert_true(rules_next(&exp));
	if (strcmp(exp.field[0], "cpus") || ncpu != atoi(exp.field[1]))
		fail_msg("%s: %d CPU columns, want %s", name, ncpu, exp.field[1]);
	while (fgets(line, sizeof(line), f)) {
		struct interrupts_row row;
		int rc = interrupts_line(line, ncpu, &row);

		lineno++;
		if (rc == 0)
			continue;
		if (!rules_next(&exp))
			fail_msg("%s:%d: an IRQ line beyond the expected ones", name, lineno);
		if (rc < 0) {
			snprintf(got[0], sizeof(got[0]), "error");
			snprintf(got[1], sizeof(got[1]), "%d", lineno);
		} else {
			snprintf(got[0], sizeof(got[0]), "%d", row.irq);
			snprintf(got[1], sizeof(got[1]), "%llu", (unsigned long long)row.sum);
		}
		if (exp.n != 2 || strcmp(got[0], exp.field[0]) || strcmp(got[1], exp.field[1]))
			fail_msg("%s:%d: read as '%s %s', want '%s %s'", name, lineno, got[0],
				 got[1], exp.field[0], exp.field[1]);
	}
	fclose(f);
	assert_false(rules_next(&exp));
}

static void test_interrupts_samples(void **state)
{
	for (size_t i = 0; i < sizeof(SAMPLES) / sizeof(SAMPLES[0]); i++)
		check_sample(SAMPLES[i]);
}

/* What follows the counts: the chip, hardware IRQ, trigger and actions. */
static void test_interrupts_rest(void **state)
{
	struct interrupts_row row;

	assert_int_equal(interrupts_line(" 11:  10  20  GICv3  27 Level  arch_timer\n", 2, &row),
			 1);
	assert_int_equal(row.irq, 11);
	assert_int_equal(row.sum, 30);
	assert_string_equal(row.rest, "GICv3  27 Level  arch_timer\n");
	assert_int_equal(interrupts_ncpu("   \n"), -EINVAL);
	assert_int_equal(interrupts_ncpu(" CPU0 CPU2\tCPU3 \n"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interrupts_samples),
		cmocka_unit_test(test_interrupts_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
