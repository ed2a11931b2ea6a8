/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Growable columns of fixed-size values, and names deduplicated per key (pid -> comm,
 * irq -> handler name): the storage the decoder fills.
 */
#ifndef IRQRES_TRACE_COLUMNS_H
#define IRQRES_TRACE_COLUMNS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct col {
	char *data;
	size_t len;  /* elements */
	size_t cap;  /* elements */
	size_t size; /* bytes per element */
};

/* Double @c's capacity (4096 elements at first). 0 or -ENOMEM. */
int col_grow(struct col *c);

static inline int col_push64(struct col *c, int64_t v)
{
	if (c->len == c->cap && col_grow(c))
		return -ENOMEM;
	((int64_t *)c->data)[c->len++] = v;
	return 0;
}

static inline int col_push32(struct col *c, int32_t v)
{
	if (c->len == c->cap && col_grow(c))
		return -ENOMEM;
	((int32_t *)c->data)[c->len++] = v;
	return 0;
}

/* Free @c's array and leave it empty (its element size stays). */
void col_clear(struct col *c);

struct name_entry {
	int32_t key;
	int32_t prev; /* the previous pair with the same key, -1 for none */
	size_t len;
	char *name;
};

/*
 * A direct-mapped cache in front of names_note for fixed-size name fields (comm[16]):
 * the raw bytes last seen for a key and their pair. Equal raw bytes are the same name,
 * so a hit skips measuring, hashing and comparing it (two comms per sched_switch).
 */
enum { RAW_MAX = 16, RAW_SLOTS = 4096 };

struct raw_slot {
	int32_t key;
	int32_t idx;  /* pair index, -1 for an empty slot */
	int32_t size; /* bytes of raw that hold the field */
	char raw[RAW_MAX];
};

struct names {
	struct raw_slot *raw; /* RAW_SLOTS entries, or NULL when not used */
	struct name_entry *v; /* every distinct (key, name) pair, in order of appearance */
	size_t len, cap;
	int32_t *slot_key;    /* open addressing: key -> index of its latest pair */
	int32_t *slot_idx;
	size_t nslots;        /* power of two */
	size_t used;
	/* parallel reading: (ts, cpu) of the record where each pair first appeared */
	struct col born_ts, born_cpu;
};

/*
 * Remember that @key carries @name (@len bytes, not NUL-terminated). Returns the index
 * of the (key, name) pair, or -ENOMEM.
 */
int names_note(struct names *n, int32_t key, const char *name, size_t len);

/* Set up @n's raw cache (see struct raw_slot). 0 or -ENOMEM. */
int names_cache(struct names *n);

void names_free(struct names *n);

#endif
