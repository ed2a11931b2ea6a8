/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * utf8.h - UTF-8 validation (RFC 3629): what the control socket accepts in a request
 * word and what the JSON writer may copy into a reply unchanged.
 *
 * Valid means shortest form, no UTF-16 surrogates (U+D800..U+DFFF), at most U+10FFFF.
 */
#ifndef IRQRES_UTF8_H
#define IRQRES_UTF8_H

#include <stddef.h>

/*
 * Length (1..4) of the valid UTF-8 sequence at the start of s (n bytes available),
 * or 0 when s does not start with one (a stray continuation byte, an overlong form, a
 * surrogate, a code point above U+10FFFF, or a sequence cut by the end of s).
 */
size_t utf8_seq_len(const char *s, size_t n);

/* The offset of the first byte of s that is not part of valid UTF-8, or n when all is. */
size_t utf8_check(const char *s, size_t n);

#endif /* IRQRES_UTF8_H */
