/* SPDX-License-Identifier: GPL-2.0-only */
/* irqname.c - the name rule of IRQ threads: see irqname.h. */
#include "irqname.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

int irqname_parse(const char *comm, struct irqname *out)
{
	const char *p = comm + 4;
	long long n = 0;

	if (strncmp(comm, "irq/", 4) || !digit(*p))
		return -EINVAL;
	for (; digit(*p); p++) {
		n = n * 10 + (*p - '0');
		if (n > INT32_MAX)
			return -EINVAL;
	}
	if (*p != '-')
		return -EINVAL;
	out->irq = (int)n;
	out->secondary = !strncmp(p, "-s-", 3);
	out->action = p + (out->secondary ? 3 : 1);
	return 0;
}

/* Whether one of the comma-separated names of @all starts with the @n bytes of @prefix. */
static bool any_starts_with(const char *all, const char *prefix, size_t n)
{
	const char *name = all;

	while (*name) {
		size_t len = strcspn(name, ",");

		if (len >= n && !strncmp(name, prefix, n))
			return true;
		name += len + (name[len] == ',');
	}
	return false;
}

/* Appends the names of @all that start with @prefix to @out; 0 or -ENAMETOOLONG. */
static int keep_matching(const char *all, const char *prefix, char *out, size_t len)
{
	size_t n = strlen(prefix), used = 0;
	const char *name = all;

	out[0] = '\0';
	while (*name) {
		size_t nlen = strcspn(name, ",");

		if (nlen >= n && !strncmp(name, prefix, n)) {
			if (used + !!used + nlen + 1 > len)
				return -ENAMETOOLONG;
			if (used)
				out[used++] = ',';
			memcpy(out + used, name, nlen);
			used += nlen;
			out[used] = '\0';
		}
		name += nlen + (name[nlen] == ',');
	}
	return 0;
}

int irqname_own_actions(const char *comm, const char *all, char *out, size_t len,
			bool *secondary)
{
	struct irqname in;
	const char *action;
	int rc;

	if (irqname_parse(comm, &in))
		return -EINVAL;
	if (!len)
		return -ENAMETOOLONG;
	action = in.action;
	if (in.secondary && any_starts_with(all, action - 2, strlen(action - 2))) {
		in.secondary = false;
		action -= 2;
	}
	*secondary = in.secondary;
	rc = keep_matching(all, action, out, len);
	if (rc || out[0])
		return rc;
	if (strlen(all) + 1 > len)	/* the comm names none of them: all */
		return -ENAMETOOLONG;
	memcpy(out, all, strlen(all) + 1);
	return 0;
}
