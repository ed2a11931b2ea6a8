/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * addrmap.c - kernel address -> value; see addrmap.h.
 */
#include "addrmap.h"

#include <errno.h>
#include <stdlib.h>

#define EMPTY 0
#define GONE 1		/* a removed entry: probing goes on past it */

static size_t slot(size_t cap, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

static bool kept(const struct addrmap *m, size_t i)
{
	return m->key[i] > GONE && (!m->keep || m->keep(m->val[i]));
}

/* Rehashes the kept entries into a table four times their number (at least 64). */
static int grow(struct addrmap *m)
{
	struct addrmap n = { .keep = m->keep, .cap = 64 };
	size_t i, live = 0;

	for (i = 0; i < m->cap; i++)
		live += kept(m, i);
	while (n.cap < 4 * (live + 1))
		n.cap *= 2;
	n.key = calloc(n.cap, sizeof(*n.key));
	n.val = calloc(n.cap, sizeof(*n.val));
	if (!n.key || !n.val) {
		free(n.key);
		free(n.val);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!kept(m, i))
			continue;
		for (j = slot(n.cap, m->key[i]); n.key[j]; j = (j + 1) & (n.cap - 1))
			;
		n.key[j] = m->key[i];
		n.val[j] = m->val[i];
		n.used++;
	}
	free(m->key);
	free(m->val);
	*m = n;
	return 0;
}

static size_t find(const struct addrmap *m, uint64_t key)
{
	size_t j;

	if (!m->cap || key <= GONE)
		return SIZE_MAX;
	for (j = slot(m->cap, key); m->key[j] != EMPTY; j = (j + 1) & (m->cap - 1))
		if (m->key[j] == key)
			return j;
	return SIZE_MAX;
}

int addrmap_put(struct addrmap *m, uint64_t key, uint64_t val)
{
	size_t j = find(m, key);

	if (key <= GONE)
		return -EINVAL;
	if (j != SIZE_MAX) {
		m->val[j] = val;
		return 0;
	}
	if (2 * (m->used + 1) > m->cap && grow(m) < 0)
		return -ENOMEM;
	for (j = slot(m->cap, key); m->key[j] > GONE; j = (j + 1) & (m->cap - 1))
		;
	m->used += m->key[j] == EMPTY;
	m->key[j] = key;
	m->val[j] = val;
	return 0;
}

bool addrmap_get(const struct addrmap *m, uint64_t key, uint64_t *val)
{
	size_t j = find(m, key);

	if (j == SIZE_MAX)
		return false;
	*val = m->val[j];
	return true;
}

bool addrmap_take(struct addrmap *m, uint64_t key, uint64_t *val)
{
	size_t j = find(m, key);

	if (j == SIZE_MAX)
		return false;
	*val = m->val[j];
	m->key[j] = GONE;
	return true;
}

void addrmap_free(struct addrmap *m)
{
	free(m->key);
	free(m->val);
	m->key = m->val = NULL;
	m->cap = m->used = 0;
}
