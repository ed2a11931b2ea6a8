/* SPDX-License-Identifier: GPL-2.0-only */
/* pidset.c - a sorted set of ids; see pidset.h. */
#include "pidset.h"
#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pidset_add(struct pidset *s, pid_t pid)
{
	if (ARRAY_RESERVE(s->v, s->cap, s->n + 1))
		return -ENOMEM;
	s->v[s->n++] = pid;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

void pidset_sort(struct pidset *s)
{
	size_t n = 0;

	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_pid);
	for (size_t i = 0; i < s->n; i++)
		if (!n || s->v[n - 1] != s->v[i])
			s->v[n++] = s->v[i];
	s->n = n;
}

bool pidset_has(const pid_t *v, size_t n, pid_t pid)
{
	return n && bsearch(&pid, v, n, sizeof(*v), cmp_pid) != NULL;
}

void pidset_free(struct pidset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
