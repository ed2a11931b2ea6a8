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

static const char *const error_text[] = {
	[UNITS_OK] = NULL,
	[UNITS_ERR_UNIT] = "a number needs a unit (ns, us, ms, s), e.g. 2ms; only 0 may go without",
	[UNITS_ERR_NEGATIVE] = "a duration must not be negative",
	[UNITS_ERR_FRACTION] = "not a whole number of nanoseconds",
	[UNITS_ERR_RANGE] = "too large (2^63 ns or more)",
	[UNITS_ERR_SYNTAX] = "not a duration: use a number with a unit (ns, us, ms, s), e.g. 2ms",
};

static int fail(const char **why, enum units_error *cls, enum units_error e)
{
	if (why)
		*why = error_text[e];
	if (cls)
		*cls = e;
	if (e == UNITS_OK)
		return 0;
	return e == UNITS_ERR_RANGE ? -ERANGE : -EINVAL;
}

/* A decimal number as written: whole and fractional part, exactly. */
struct number {
	unsigned __int128 whole, frac, frac_div;
	bool digits;		/* any digit at all */
	bool overflow;		/* whole part past UNITS_NS_MAX */
	bool sub_ns;		/* a nonzero digit beyond 10^-18 */
};

/* Reads "123.456" from *pp on, leaving *pp after it. */
static void scan_number(const char **pp, struct number *n)
{
	const char *p = *pp;

	memset(n, 0, sizeof(*n));
	n->frac_div = 1;
	for (; *p >= '0' && *p <= '9'; p++) {
		n->digits = true;
		n->whole = n->whole * 10 + (unsigned)(*p - '0');
		if (n->whole > UNITS_NS_MAX) {
			n->overflow = true;
			n->whole = (unsigned __int128)UNITS_NS_MAX + 1;
		}
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			n->digits = true;
			/* Beyond 10^-18 no unit can turn a digit into whole ns: keep it exact
			 * by remembering only whether a nonzero digit follows. */
			if (n->frac_div < (unsigned __int128)1000000000000000000ULL) {
				n->frac = n->frac * 10 + (unsigned)(*p - '0');
				n->frac_div *= 10;
			} else if (*p != '0') {
				n->sub_ns = true;
			}
		}
	}
	*pp = p;
}

/* The unit that p is (blanks after it allowed): its scale, or 0 for none. */
static uint64_t scan_unit(const char *p)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);
		const char *q = p + n;

		if (strncmp(p, units[i].name, n) != 0)
			continue;
		while (is_blank(*q))
			q++;
		if (!*q)
			return units[i].scale;
	}
	return 0;
}

int units_parse(const char *s, uint64_t *ns, const char **why, enum units_error *cls)
{
	const char *p = s;
	struct number n;
	unsigned __int128 value;
	uint64_t scale = 1;

	if (!s)
		return fail(why, cls, UNITS_ERR_SYNTAX);
	while (is_blank(*p))
		p++;
	if (*p == '-')
		return fail(why, cls, UNITS_ERR_NEGATIVE);
	scan_number(&p, &n);
	if (!n.digits)
		return fail(why, cls, UNITS_ERR_SYNTAX);
	while (is_blank(*p))
		p++;
	if (*p) {
		scale = scan_unit(p);
		if (!scale)
			return fail(why, cls, UNITS_ERR_SYNTAX);
	} else if (n.whole || n.frac || n.sub_ns || n.overflow || strchr(s, '.')) {
		/* a bare number: only an exact "0" (with blanks) is a duration */
		return fail(why, cls, UNITS_ERR_UNIT);
	}
	if (n.overflow)
		return fail(why, cls, UNITS_ERR_RANGE);
	if (n.sub_ns || (n.frac * scale) % n.frac_div)
		return fail(why, cls, UNITS_ERR_FRACTION);
	value = n.whole * scale + n.frac * scale / n.frac_div;
	if (value > UNITS_NS_MAX)
		return fail(why, cls, UNITS_ERR_RANGE);
	*ns = (uint64_t)value;
	return fail(why, cls, UNITS_OK);
}

int units_parse_duration(const char *s, uint64_t *ns, const char **why)
{
	return units_parse(s, ns, why, NULL);
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
