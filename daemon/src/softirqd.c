/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softirqd.c - the names of the per-CPU soft IRQ kthreads.
 */
#include "softirqd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *const names[SOFTIRQD_N] = {
	[SOFTIRQD_KSOFTIRQD] = "ksoftirqd",
	[SOFTIRQD_KTIMERS] = "ktimers",
	[SOFTIRQD_BACKLOG_NAPI] = "backlog_napi",
};

const char *softirqd_name(enum softirqd_kind kind)
{
	return (unsigned int)kind < SOFTIRQD_N ? names[kind] : NULL;
}

int softirqd_lookup(const char *name)
{
	for (int k = 0; k < SOFTIRQD_N; k++)
		if (!strcmp(names[k], name))
			return k;
	return -1;
}

/* A CPU number as the kernel writes it: decimal digits, no leading zero, below INT_MAX. */
static int cpu_number(const char *s, int *cpu)
{
	long long v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -EINVAL;
	}
	*cpu = (int)v;
	return 0;
}

int softirqd_parse(const char *comm, enum softirqd_kind *kind, int *cpu)
{
	for (int k = 0; k < SOFTIRQD_N; k++) {
		size_t n = strlen(names[k]);

		if (!strncmp(comm, names[k], n) && comm[n] == '/' && !cpu_number(comm + n + 1, cpu)) {
			*kind = (enum softirqd_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

bool softirqd_comm_may_be(const char *comm)
{
	enum softirqd_kind kind;
	int cpu;

	return !softirqd_parse(comm, &kind, &cpu) || !strcmp(comm, "kthreadd");
}

const char *softirqd_list(unsigned int mask, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int k = 0; k < SOFTIRQD_N && used < len; k++)
		if (mask & (1u << k))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 names[k]);
	return buf;
}
