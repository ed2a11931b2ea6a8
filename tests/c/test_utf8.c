/* SPDX-License-Identifier: GPL-2.0-only */
/* test_utf8.c - UTF-8 validation against an independent decoder, sequence by sequence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "utf8.h"

/* Reference: decode by the bit patterns, then check the length is the shortest, no
 * surrogate, at most U+10FFFF (RFC 3629 section 3). */
static size_t ref_len(const unsigned char *u, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (!n)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if ((u[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = u[0] & 0x1f;
	} else if ((u[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = u[0] & 0x0f;
	} else if ((u[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = u[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
		return 0;
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

static void check(const unsigned char *u, size_t n)
{
	size_t got = utf8_seq_len((const char *)u, n), want = ref_len(u, n);

	if (got != want)
		fail_msg("%02x %02x %02x %02x (n %zu): got %zu, want %zu", u[0], n > 1 ? u[1] : 0,
			 n > 2 ? u[2] : 0, n > 3 ? u[3] : 0, n, got, want);
}

static void test_every_short_sequence(void **state)
{
	static const unsigned char tails[] = { 0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0,
					       0xbf, 0xc0, 0xff };
	unsigned char u[4];
	unsigned a, b, c, d;

	for (a = 0; a < 256; a++) {
		u[0] = (unsigned char)a;
		check(u, 1);
		for (b = 0; b < 256; b++) {
			u[1] = (unsigned char)b;
			check(u, 2);
			for (c = 0; c < sizeof(tails); c++) {
				u[2] = tails[c];
				check(u, 3);
				for (d = 0; d < sizeof(tails); d++) {
					u[3] = tails[d];
					check(u, 4);
				}
			}
		}
	}
}

static void test_check_offsets(void **state)
{
	assert_int_equal(utf8_check("", 0), 0);
	assert_int_equal(utf8_check("rel.yaml", 8), 8);
	assert_int_equal(utf8_check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14), 14);
	assert_int_equal(utf8_check("rel.yam\xff\xff\xff\xffl", 12), 7);
	assert_int_equal(utf8_check("ab\xc3", 3), 2);			/* cut */
	assert_int_equal(utf8_check("\xc0\xaf", 2), 0);			/* overlong '/' */
	assert_int_equal(utf8_check("x\xed\xa0\x80", 4), 1);		/* surrogate */
	assert_int_equal(utf8_check("xy\xf4\x90\x80\x80", 6), 2);	/* > U+10FFFF */
	assert_int_equal(utf8_check("a\0b", 3), 3);			/* NUL is ASCII */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_short_sequence),
		cmocka_unit_test(test_check_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
