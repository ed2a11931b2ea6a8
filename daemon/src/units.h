/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * units.h - durations with units ("2ms", "500us", "1.5ms", "10ns", "1s") as integer ns.
 *
 * Syntax (the same as analysis/irqres/units.py): optional blanks, a decimal number
 * ("2", "1.5", ".5", "2."), optional blanks, an optional unit ns | us | µs | ms | s,
 * optional blanks.  A bare number is nanoseconds and must then be an integer.  The value
 * must be a whole number of nanoseconds and below 2^63; negative values are refused.
 */
#ifndef IRQRES_UNITS_H
#define IRQRES_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_NS_MAX ((uint64_t)INT64_MAX)	/* largest duration accepted: 2^63 - 1 ns */
#define UNITS_FMT_LEN 32			/* enough for any formatted duration */

/*
 * Parses @s into *@ns.  Returns 0, or -EINVAL (not a duration, negative, fraction of a
 * nanosecond, fraction without unit) or -ERANGE (2^63 ns or more).  When @why is not
 * NULL it is set to a static text naming the cause ("not a duration: use a number with
 * a unit (ns, us, ms, s), e.g. 2ms", ...).
 */
int units_parse_duration(const char *s, uint64_t *ns, const char **why);

/*
 * Formats @ns exactly with the largest unit it reaches: 2000000 -> "2ms",
 * 1500000 -> "1.5ms", 1234567 -> "1.234567ms", 750 -> "750ns", 0 -> "0ns".
 * units_parse_duration() reads the result back to the same value.  Returns @buf.
 */
char *units_format_duration(uint64_t ns, char *buf, size_t len);

#endif
