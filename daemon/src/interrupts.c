/* SPDX-License-Identifier: GPL-2.0-only */
/* interrupts.c - the lines of /proc/interrupts: see interrupts.h. */
#include "interrupts.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define BLANKS " \t"

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool token_end(char c)
{
	return !c || c == ' ' || c == '\t' || c == '\n';
}

int interrupts_ncpu(const char *line)
{
	const char *p = line;
	int n = 0;

	for (;;) {
		p += strspn(p, BLANKS);
		if (token_end(*p))
			break;
		n++;
		while (!token_end(*p))
			p++;
	}
	return n ? n : -EINVAL;
}

int interrupts_line(const char *line, int ncpu, struct interrupts_row *row)
{
	const char *p = line + strspn(line, BLANKS);
	long long irq = 0;
	uint64_t sum = 0;

	if (!digit(*p))
		return 0;
	for (; digit(*p); p++) {
		irq = irq * 10 + (*p - '0');
		if (irq > INT32_MAX)
			return 0;
	}
	if (*p++ != ':')
		return 0;
	for (int i = 0; i < ncpu; i++) {
		uint64_t n = 0;

		p += strspn(p, BLANKS);
		if (token_end(*p))
			break;			/* the line ends before the last column */
		for (; digit(*p); p++)
			n = n * 10 + (uint64_t)(*p - '0');
		if (!token_end(*p))
			return -EINVAL;
		sum += n;
	}
	row->irq = (int)irq;
	row->sum = sum;
	row->rest = p + strspn(p, BLANKS);
	return 1;
}
