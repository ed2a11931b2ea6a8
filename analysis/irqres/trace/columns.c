// SPDX-License-Identifier: GPL-2.0-only
/* Growable columns and names deduplicated per key: see columns.h. */
#include "columns.h"

#include <stdlib.h>
#include <string.h>

int col_grow(struct col *c)
{
	size_t cap = c->cap ? c->cap * 2 : 4096;
	char *p = realloc(c->data, cap * c->size);

	if (!p)
		return -ENOMEM;
	c->data = p;
	c->cap = cap;
	return 0;
}

void col_clear(struct col *c)
{
	free(c->data);
	c->data = NULL;
	c->len = c->cap = 0;
}

static int names_rehash(struct names *n, size_t nslots)
{
	int32_t *keys = malloc(nslots * sizeof(*keys));
	int32_t *idx = malloc(nslots * sizeof(*idx));

	if (!keys || !idx) {
		free(keys);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nslots; i++)
		idx[i] = -1;
	for (size_t i = 0; i < n->nslots; i++) {
		if (n->slot_idx[i] < 0)
			continue;
		size_t h = ((uint32_t)n->slot_key[i] * 2654435761u) & (nslots - 1);
		while (idx[h] >= 0)
			h = (h + 1) & (nslots - 1);
		keys[h] = n->slot_key[i];
		idx[h] = n->slot_idx[i];
	}
	free(n->slot_key);
	free(n->slot_idx);
	n->slot_key = keys;
	n->slot_idx = idx;
	n->nslots = nslots;
	return 0;
}

static int name_is(const struct name_entry *e, const char *name, size_t len)
{
	return e->len == len && memcmp(e->name, name, len) == 0;
}

int names_note(struct names *n, int32_t key, const char *name, size_t len)
{
	int32_t prev = -1;
	size_t h;

	if ((n->used + 1) * 2 > n->nslots && names_rehash(n, n->nslots ? n->nslots * 2 : 1024))
		return -ENOMEM;
	h = ((uint32_t)key * 2654435761u) & (n->nslots - 1);
	while (n->slot_idx[h] >= 0) {
		if (n->slot_key[h] == key) {
			/* pid 0 is swapper/0, swapper/1, ...: look at every name of the key */
			prev = n->slot_idx[h];
			for (int32_t i = prev; i >= 0; i = n->v[i].prev)
				if (name_is(&n->v[i], name, len))
					return i;
			break;
		}
		h = (h + 1) & (n->nslots - 1);
	}
	if (n->len == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 256;
		struct name_entry *p = realloc(n->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		n->v = p;
		n->cap = cap;
	}
	char *copy = strndup(name, len);

	if (!copy)
		return -ENOMEM;
	n->v[n->len].key = key;
	n->v[n->len].prev = prev;
	n->v[n->len].len = len;
	n->v[n->len].name = copy;
	if (n->slot_idx[h] < 0)
		n->used++;
	n->slot_key[h] = key;
	n->slot_idx[h] = (int32_t)n->len;
	return (int)n->len++;
}

void names_free(struct names *n)
{
	for (size_t i = 0; i < n->len; i++)
		free(n->v[i].name);
	free(n->raw);
	free(n->v);
	free(n->slot_key);
	free(n->slot_idx);
	free(n->born_ts.data);
	free(n->born_cpu.data);
	memset(n, 0, sizeof(*n));
}

int names_cache(struct names *n)
{
	n->raw = malloc(RAW_SLOTS * sizeof(*n->raw));
	if (!n->raw)
		return -ENOMEM;
	for (int i = 0; i < RAW_SLOTS; i++)
		n->raw[i].idx = -1;
	return 0;
}
