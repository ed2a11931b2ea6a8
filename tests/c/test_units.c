/* SPDX-License-Identifier: GPL-2.0-only */
/* test_units.c - durations with units. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "units.h"

#define DATA_DIR "../data/units/"

/* The class names of the case files' error:<class>, as irqres.units names them too. */
static const char *error_name(enum units_error cls)
{
	static const char *const name[] = {
		[UNITS_OK] = "ok", [UNITS_ERR_UNIT] = "unit", [UNITS_ERR_NEGATIVE] = "negative",
		[UNITS_ERR_FRACTION] = "fraction", [UNITS_ERR_RANGE] = "range",
		[UNITS_ERR_SYNTAX] = "syntax",
	};

	return (size_t)cls < sizeof(name) / sizeof(name[0]) ? name[cls] : "?";
}

/* The next case line of a data file, comments and empty lines skipped; NULL at the end. */
static char *next_case(FILE *f, char *line, size_t len, int *lineno)
{
	while (fgets(line, (int)len, f)) {
		(*lineno)++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] && line[0] != '#')
			return line;
	}
	return NULL;
}

/* Every case of durations-parse.txt: |text|ns or |text|error:<class>. */
static void test_units_parse_file(void **state)
{
	FILE *f = fopen(DATA_DIR "durations-parse.txt", "r");
	char line[512];
	int lineno = 0, cases = 0;

	assert_non_null(f);
	while (next_case(f, line, sizeof(line), &lineno)) {
		char *first = strchr(line, '|'), *last = strrchr(line, '|');
		const char *want, *why = "unset";
		enum units_error cls = UNITS_OK;
		uint64_t ns = 777;
		int rc;

		if (!first || first == last)
			fail_msg("durations-parse.txt:%d: not a case: %s", lineno, line);
		*last = '\0';
		want = last + 1;
		rc = units_parse(first + 1, &ns, &why, &cls);
		if (strncmp(want, "error:", 6) == 0) {
			if (rc == 0)
				fail_msg("durations-parse.txt:%d: '%s' accepted as %llu ns, want %s",
					 lineno, first + 1, (unsigned long long)ns, want);
			if (strcmp(error_name(cls), want + 6) != 0)
				fail_msg("durations-parse.txt:%d: '%s' refused as %s (%s), want %s",
					 lineno, first + 1, error_name(cls), why, want);
			assert_int_equal(rc, cls == UNITS_ERR_RANGE ? -ERANGE : -EINVAL);
			assert_non_null(why);
			assert_int_equal(ns, 777);	/* untouched on error */
		} else {
			if (rc != 0)
				fail_msg("durations-parse.txt:%d: '%s' refused: %s", lineno, first + 1,
					 why);
			if (ns != strtoull(want, NULL, 10))
				fail_msg("durations-parse.txt:%d: '%s' read as %llu ns, want %s", lineno,
					 first + 1, (unsigned long long)ns, want);
			assert_null(why);
		}
		cases++;
	}
	fclose(f);
	assert_true(cases >= 40);
}

/* Every case of durations-format.txt: ns|text, and the text parses back. */
static void test_units_format_file(void **state)
{
	FILE *f = fopen(DATA_DIR "durations-format.txt", "r");
	char line[512], buf[UNITS_FMT_LEN];
	int lineno = 0, cases = 0;

	assert_non_null(f);
	while (next_case(f, line, sizeof(line), &lineno)) {
		char *bar = strchr(line, '|');
		uint64_t ns, back = 0;

		if (!bar)
			fail_msg("durations-format.txt:%d: not a case: %s", lineno, line);
		*bar = '\0';
		ns = strtoull(line, NULL, 10);
		units_format_duration(ns, buf, sizeof(buf));
		if (strcmp(buf, bar + 1) != 0)
			fail_msg("durations-format.txt:%d: %s formatted as '%s', want '%s'", lineno,
				 line, buf, bar + 1);
		assert_int_equal(units_parse_duration(buf, &back, NULL), 0);
		assert_int_equal(back, ns);
		cases++;
	}
	fclose(f);
	assert_true(cases >= 10);
}

/* The messages name the cause; callers print them beside the text as typed. */
static void test_units_messages(void **state)
{
	const char *why = NULL;
	uint64_t ns = 0;

	assert_int_equal(units_parse_duration("3", &ns, &why), -EINVAL);
	assert_non_null(strstr(why, "needs a unit"));
	assert_int_equal(units_parse_duration("-1ms", &ns, &why), -EINVAL);
	assert_string_equal(why, "a duration must not be negative");
	assert_int_equal(units_parse_duration("3msec", &ns, &why), -EINVAL);
	assert_non_null(strstr(why, "use a number with a unit"));
	assert_int_equal(units_parse_duration("10000000000s", &ns, &why), -ERANGE);
	assert_non_null(strstr(why, "too large"));
	assert_int_equal(units_parse_duration(NULL, &ns, NULL), -EINVAL);
	assert_string_equal(error_name(UNITS_ERR_FRACTION), "fraction");
}

/* Every value formats to a text that parses back to itself. */
static void test_units_round_trip(void **state)
{
	char buf[UNITS_FMT_LEN];
	uint64_t x = 88172645463325252ULL;
	int i;

	for (i = 0; i < 20000; i++) {
		uint64_t ns, back = 0;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ns = (x >> (i % 64)) & INT64_MAX;
		units_format_duration(ns, buf, sizeof(buf));
		assert_int_equal(units_parse_duration(buf, &back, NULL), 0);
		assert_int_equal(back, ns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_parse_file),
		cmocka_unit_test(test_units_format_file),
		cmocka_unit_test(test_units_messages),
		cmocka_unit_test(test_units_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
