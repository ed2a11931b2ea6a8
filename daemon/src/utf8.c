/* SPDX-License-Identifier: GPL-2.0-only */
/* utf8.c - UTF-8 validation (RFC 3629 section 4, the table of well-formed sequences). */
#include "utf8.h"

static int cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t utf8_seq_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (n == 0)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		len = 2;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		len = 3;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		len = 4;
	else
		return 0;	/* 0x80..0xc1 (continuation, overlong 2-byte) and 0xf5..0xff */
	if (n < len)
		return 0;
	/* the second byte's range rules out overlongs, surrogates and > U+10FFFF */
	switch (u[0]) {
	case 0xe0: lo = 0xa0; break;
	case 0xed: hi = 0x9f; break;
	case 0xf0: lo = 0x90; break;
	case 0xf4: hi = 0x8f; break;
	default: break;
	}
	if (u[1] < lo || u[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (!cont(u[i]))
			return 0;
	return len;
}

size_t utf8_check(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		k = utf8_seq_len(s + i, n - i);
		if (!k)
			return i;
		i += k;
	}
	return n;
}
