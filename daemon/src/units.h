/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * units.h - durations with units ("2ms", "500us", "1.5ms", "10ns", "1s") as integer ns.
 *
 * The grammar is the one of tests/data/units/durations-parse.txt, shared with
 * analysis/irqres/units.py: optional blanks, a decimal number ("2", "1.5", ".5", "2."),
 * optional blanks, a unit ns | us | µs | ms | s (case-sensitive), optional blanks.  A
 * unit is required for every nonzero value; "0" alone is the only bare number.  The value
 * must be a whole number of nanoseconds below 2^63; a minus sign is refused.
 */
#ifndef IRQRES_UNITS_H
#define IRQRES_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_NS_MAX ((uint64_t)INT64_MAX)	/* largest duration accepted: 2^63 - 1 ns */
#define UNITS_FMT_LEN 32			/* enough for any formatted duration */

/* Why a text is not a duration (the classes of durations-parse.txt). */
enum units_error {
	UNITS_OK,
	UNITS_ERR_UNIT,		/* a nonzero number without a unit */
	UNITS_ERR_NEGATIVE,	/* a minus sign */
	UNITS_ERR_FRACTION,	/* not a whole number of nanoseconds */
	UNITS_ERR_RANGE,	/* 2^63 ns or more */
	UNITS_ERR_SYNTAX,	/* anything else that is not <number>[blanks]<unit> */
};

/*
 * Parses @s into *@ns (untouched on error).  Returns 0, or -EINVAL (-ERANGE for
 * UNITS_ERR_RANGE).  When @why is not NULL it is set to a static text naming the cause
 * ("a number needs a unit (ns, us, ms, s), e.g. 2ms", ...) or NULL on success; when @cls
 * is not NULL it gets the class.  Messages should repeat @s beside @why.
 */
int units_parse(const char *s, uint64_t *ns, const char **why, enum units_error *cls);
int units_parse_duration(const char *s, uint64_t *ns, const char **why);

/*
 * Formats @ns exactly with the largest unit it reaches: 2000000 -> "2ms",
 * 1500000 -> "1.5ms", 1234567 -> "1.234567ms", 750 -> "750ns", 0 -> "0ns".
 * units_parse_duration() reads the result back to the same value.  Returns @buf.
 */
char *units_format_duration(uint64_t ns, char *buf, size_t len);

#endif
