/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_units.c - libFuzzer harness: any text as a duration.
 *
 * A duration either parses to at most UNITS_NS_MAX nanoseconds, and then its formatted
 * form parses back to the same value, or is refused with a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[256], fmt[UNITS_FMT_LEN];
	const char *why = NULL;
	uint64_t ns = 0, back = 0;

	if (size >= sizeof(text) || memchr(data, '\0', size))
		return -1;
	memcpy(text, data, size);
	text[size] = '\0';
	if (units_parse_duration(text, &ns, &why) < 0) {
		if (!why || !why[0])
			abort();
		return 0;
	}
	if (ns > UNITS_NS_MAX)
		abort();
	if (!units_format_duration(ns, fmt, sizeof(fmt)) ||
	    units_parse_duration(fmt, &back, &why) < 0 || back != ns)
		abort();
	return 0;
}
