/* SPDX-License-Identifier: GPL-2.0-only */
/* test_units.c - durations with units. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "units.h"

static uint64_t parse_ok(const char *s)
{
	uint64_t ns = 12345;
	const char *why = "unset";
	int rc = units_parse_duration(s, &ns, &why);

	if (rc)
		fail_msg("'%s' refused: %s", s, why);
	assert_null(why);
	return ns;
}

static const char *parse_err(const char *s, int want)
{
	uint64_t ns = 777;
	const char *why = NULL;

	assert_int_equal(units_parse_duration(s, &ns, &why), want);
	assert_int_equal(ns, 777);	/* untouched on error */
	assert_non_null(why);
	return why;
}

static void test_units_parse(void **state)
{
	assert_int_equal(parse_ok("2ms"), 2000000);
	assert_int_equal(parse_ok("500us"), 500000);
	assert_int_equal(parse_ok("500\xc2\xb5s"), 500000);
	assert_int_equal(parse_ok("1.5ms"), 1500000);
	assert_int_equal(parse_ok("10ns"), 10);
	assert_int_equal(parse_ok("1s"), 1000000000);
	assert_int_equal(parse_ok("0.000000001s"), 1);
	assert_int_equal(parse_ok(".5us"), 500);
	assert_int_equal(parse_ok("2.ms"), 2000000);
	assert_int_equal(parse_ok("1024"), 1024);
	assert_int_equal(parse_ok("0"), 0);
	assert_int_equal(parse_ok(" 20 ms "), 20000000);
	assert_int_equal(parse_ok("1.250000000000000000000ms"), 1250000);
	assert_int_equal(parse_ok("9223372036854775807"), INT64_MAX);
	assert_int_equal(parse_ok("9223372036.854775807s"), INT64_MAX);
}

static void test_units_parse_errors(void **state)
{
	assert_string_equal(parse_err("-2ms", -EINVAL), "a duration must not be negative");
	assert_string_equal(parse_err(" -1", -EINVAL), "a duration must not be negative");
	assert_string_equal(parse_err("1.5ns", -EINVAL), "not a whole number of nanoseconds");
	assert_string_equal(parse_err("0.0000000015s", -EINVAL),
			    "not a whole number of nanoseconds");
	assert_string_equal(parse_err("1.0000000000000000000001ms", -EINVAL),
			    "not a whole number of nanoseconds");
	assert_string_equal(parse_err("1.5", -EINVAL), "a fraction needs a unit (ns, us, ms, s)");
	assert_non_null(strstr(parse_err("2 min", -EINVAL), "use a number with a unit"));
	assert_non_null(strstr(parse_err("ms", -EINVAL), "not a duration"));
	assert_non_null(strstr(parse_err("", -EINVAL), "not a duration"));
	assert_non_null(strstr(parse_err("2ms2", -EINVAL), "not a duration"));
	assert_non_null(strstr(parse_err("0x10", -EINVAL), "not a duration"));
	assert_non_null(strstr(parse_err("1e3ns", -EINVAL), "not a duration"));
	assert_non_null(strstr(parse_err(".", -EINVAL), "not a duration"));
	assert_non_null(strstr(parse_err("9223372036854775808", -ERANGE), "too large"));
	assert_non_null(strstr(parse_err("9223372036.854775808s", -ERANGE), "too large"));
	assert_non_null(strstr(parse_err("10000000000s", -ERANGE), "too large"));
	assert_non_null(strstr(parse_err("99999999999999999999999999999ms", -ERANGE),
			       "too large"));
	assert_int_equal(units_parse_duration(NULL, &(uint64_t){ 0 }, NULL), -EINVAL);
}

static void test_units_format(void **state)
{
	static const struct {
		uint64_t ns;
		const char *text;
	} cases[] = {
		{ 0, "0ns" }, { 750, "750ns" }, { 1000, "1us" }, { 1500, "1.5us" },
		{ 2000000, "2ms" }, { 1500000, "1.5ms" }, { 1234567, "1.234567ms" },
		{ 1000000000, "1s" }, { 1000000001, "1.000000001s" }, { 100000000, "100ms" },
		{ INT64_MAX, "9223372036.854775807s" },
	};
	char buf[UNITS_FMT_LEN];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t back = 0;

		assert_string_equal(units_format_duration(cases[i].ns, buf, sizeof(buf)),
				    cases[i].text);
		assert_int_equal(units_parse_duration(buf, &back, NULL), 0);
		assert_int_equal(back, cases[i].ns);
	}
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
		cmocka_unit_test(test_units_parse),
		cmocka_unit_test(test_units_parse_errors),
		cmocka_unit_test(test_units_format),
		cmocka_unit_test(test_units_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
