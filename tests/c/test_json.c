/* SPDX-License-Identifier: GPL-2.0-only */
/* test_json.c - the JSON writer: nesting, separators, escaping, numbers, errors. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"
#include "utf8.h"

static void test_nested(void **state)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j);
	json_kv_bool(&j, "ok", true);
	json_key(&j, "threads");
	json_arr_begin(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "pid", 105);
	json_kv_null(&j, "cpuset");
	json_obj_end(&j);
	json_obj_begin(&j);
	json_obj_end(&j);
	json_arr_end(&j);
	json_key(&j, "irqs");
	json_arr_begin(&j);
	json_int(&j, 11);
	json_int(&j, -19);
	json_arr_end(&j);
	json_kv_uint(&j, "big", UINT64_MAX);
	json_kv_int(&j, "min", INT64_MIN);
	json_obj_end(&j);
	assert_int_equal(json_error(&j), 0);
	assert_string_equal(json_buf(&j),
		"{\"ok\":true,\"threads\":[{\"pid\":105,\"cpuset\":null},{}],\"irqs\":[11,-19],"
		"\"big\":18446744073709551615,\"min\":-9223372036854775808}");
	assert_int_equal(json_len(&j), strlen(json_buf(&j)));
	json_fini(&j);
}

static void test_escaping(void **state)
{
	struct json j;
	const char raw[] = "a\"b\\c\n\t\r\b\f\x01\x1f\x7f/\xc3\xa9";

	json_init(&j);
	json_arr_begin(&j);
	json_str(&j, raw);
	json_strn(&j, "x\0y", 3);
	json_str(&j, NULL);
	json_arr_end(&j);
	assert_int_equal(json_error(&j), 0);
	assert_string_equal(json_buf(&j),
		"[\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f/\xc3\xa9\",\"x\\u0000y\",null]");
	json_fini(&j);
}

/* Whatever the bytes (a comm is any 15 bytes), the output is UTF-8 and stays JSON. */
static void test_not_utf8(void **state)
{
	struct json j;
	char raw[64];
	unsigned int seed = 7;
	size_t i, k;

	json_init(&j);
	json_arr_begin(&j);
	json_str(&j, "caf\xc3\xa9");			/* valid: copied */
	json_str(&j, "\xe2\x82\xac\xf0\x9f\x98\x80");
	json_str(&j, "irq/9-\xff\xfe");			/* invalid bytes: U+FFFD each */
	json_str(&j, "a\xc3");				/* cut sequence */
	json_str(&j, "\xc0\xaf\xed\xa0\x80");		/* overlong, surrogate */
	json_arr_end(&j);
	assert_int_equal(json_error(&j), 0);
	assert_string_equal(json_buf(&j),
		"[\"caf\xc3\xa9\",\"\xe2\x82\xac\xf0\x9f\x98\x80\",\"irq/9-\\ufffd\\ufffd\","
		"\"a\\ufffd\",\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"]");

	for (k = 0; k < 20000; k++) {
		size_t n = rand_r(&seed) % sizeof(raw);

		for (i = 0; i < n; i++)
			raw[i] = (char)(rand_r(&seed) & 0xff);
		json_reset(&j);
		json_strn(&j, raw, n);
		assert_int_equal(json_error(&j), 0);
		assert_int_equal(utf8_check(json_buf(&j), json_len(&j)), json_len(&j));
		for (i = 0; i < json_len(&j); i++)	/* no raw control byte survives */
			assert_true((unsigned char)json_buf(&j)[i] >= 0x20);
	}
	json_fini(&j);
}

static void test_doubles(void **state)
{
	struct json j;

	json_init(&j);
	json_arr_begin(&j);
	json_double(&j, 0.95);
	json_double(&j, 0.0);
	json_double(&j, 2.0);
	json_double(&j, 0.1 + 0.2);
	json_double(&j, NAN);
	json_double(&j, INFINITY);
	json_double(&j, -1.5e-9);
	json_arr_end(&j);
	assert_int_equal(json_error(&j), 0);
	assert_string_equal(json_buf(&j),
		"[0.95,0.0,2.0,0.30000000000000004,null,null,-1.5e-09]");
	json_fini(&j);
}

static void test_misuse(void **state)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j);
	json_key(&j, "k");
	json_obj_end(&j);		/* a key without a value */
	assert_int_equal(json_error(&j), -EINVAL);
	json_reset(&j);
	json_obj_begin(&j);
	json_int(&j, 1);		/* a value without a key */
	assert_int_equal(json_error(&j), -EINVAL);
	json_reset(&j);
	assert_int_equal(json_error(&j), 0);
	assert_string_equal(json_buf(&j), "");

	json_arr_begin(&j);
	json_key(&j, "k");		/* a key in an array */
	assert_int_equal(json_error(&j), -EINVAL);
	json_reset(&j);

	json_arr_begin(&j);
	json_obj_end(&j);		/* the wrong bracket */
	assert_int_equal(json_error(&j), -EINVAL);
	json_reset(&j);
	json_obj_end(&j);		/* closing nothing */
	assert_int_equal(json_error(&j), -EINVAL);
	json_reset(&j);

	json_obj_begin(&j);		/* unclosed */
	assert_int_equal(json_error(&j), -EINVAL);
	json_obj_end(&j);
	assert_int_equal(json_error(&j), 0);
	json_fini(&j);
}

static void test_depth_and_growth(void **state)
{
	struct json j;
	int i;

	json_init(&j);
	for (i = 0; i < JSON_DEPTH_MAX; i++)
		json_arr_begin(&j);
	assert_int_equal(j.err, 0);
	json_arr_begin(&j);
	assert_int_equal(json_error(&j), -EINVAL);
	json_reset(&j);

	json_arr_begin(&j);
	for (i = 0; i < 100000; i++)
		json_int(&j, i);
	json_arr_end(&j);
	assert_int_equal(json_error(&j), 0);
	assert_int_equal(json_buf(&j)[json_len(&j) - 1], ']');
	assert_non_null(strstr(json_buf(&j), ",99998,99999]"));
	json_fini(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_not_utf8),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_depth_and_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
