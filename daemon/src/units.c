/* SPDX-License-Identifier: GPL-2.0-only */
/* units.c - durations with units as integer nanoseconds. */
#include "units.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct unit {
	const char *name;
	uint64_t scale;
} units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "\xc2\xb5s", 1000 },	/* µs */
	{ "ms", 1000000 },
	{ "s", 1000000000 },
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int fail(const char **why, const char *text, int err)
{
	if (why)
		*why = text;
	return err;
}

int units_parse_duration(const char *s, uint64_t *ns, const char **why)
{
	const char *p = s;
	unsigned __int128 whole = 0, frac = 0, frac_div = 1, value;
	bool digits = false, has_frac = false, overflow = false;
	uint64_t scale = 1;
	size_t i;

	if (!s)
		return fail(why, "no duration given", -EINVAL);
	while (is_blank(*p))
		p++;
	if (*p == '-')
		return fail(why, "a duration must not be negative", -EINVAL);
	for (; *p >= '0' && *p <= '9'; p++) {
		digits = true;
		whole = whole * 10 + (unsigned)(*p - '0');
		if (whole > UNITS_NS_MAX) {
			overflow = true;
			whole = (unsigned __int128)UNITS_NS_MAX + 1;
		}
	}
	if (*p == '.') {
		has_frac = true;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			digits = true;
			/* Beyond 10^-18 no unit can turn a digit into whole ns: keep it exact
			 * by remembering only whether a nonzero digit follows. */
			if (frac_div < (unsigned __int128)1000000000000000000ULL) {
				frac = frac * 10 + (unsigned)(*p - '0');
				frac_div *= 10;
			} else if (*p != '0') {
				return fail(why, "not a whole number of nanoseconds", -EINVAL);
			}
		}
	}
	if (!digits)
		return fail(why, "not a duration: use a number with a unit (ns, us, ms, s), e.g. 2ms",
			    -EINVAL);
	while (is_blank(*p))
		p++;
	if (*p) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].name);

			if (strncmp(p, units[i].name, n) == 0) {
				const char *q = p + n;

				while (is_blank(*q))
					q++;
				if (!*q) {
					scale = units[i].scale;
					p = q;
					break;
				}
			}
		}
		if (*p)
			return fail(why, "not a duration: use a number with a unit (ns, us, ms, s), e.g. 2ms",
				    -EINVAL);
	} else if (has_frac) {
		return fail(why, "a fraction needs a unit (ns, us, ms, s)", -EINVAL);
	}
	if (overflow)
		return fail(why, "too large (2^63 ns or more)", -ERANGE);
	if ((frac * scale) % frac_div)
		return fail(why, "not a whole number of nanoseconds", -EINVAL);
	value = whole * scale + frac * scale / frac_div;
	if (value > UNITS_NS_MAX)
		return fail(why, "too large (2^63 ns or more)", -ERANGE);
	*ns = (uint64_t)value;
	if (why)
		*why = NULL;
	return 0;
}

char *units_format_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct unit order[] = {
		{ "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 },
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint64_t scale = order[i].scale, rest = ns % scale;
		char frac[16];
		int width = 0;

		if (ns < scale)
			continue;
		if (!rest) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(ns / scale), order[i].name);
			return buf;
		}
		/* the digits of rest / scale after the point, trailing zeros dropped */
		for (uint64_t s = scale / 10; s && rest; s /= 10) {
			frac[width++] = (char)('0' + rest / s);
			rest %= s;
		}
		frac[width] = '\0';
		snprintf(buf, len, "%llu.%s%s", (unsigned long long)(ns / scale), frac, order[i].name);
		return buf;
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}
