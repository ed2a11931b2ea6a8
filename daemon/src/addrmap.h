/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * addrmap.h - a map from kernel addresses (an skb's, a socket's) to a 64-bit value, for
 * the live accounting's per-packet and per-socket lookups: open addressing, O(1) on
 * average. Keys 0 and 1 are not addresses and cannot be stored. When it grows, the
 * entries whose value @keep refuses are dropped, so a map of short-lived values stays
 * the size of the live ones. Functions return 0 or -errno.
 */
#ifndef IRQRES_ADDRMAP_H
#define IRQRES_ADDRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addrmap {
	uint64_t *key, *val;
	size_t cap, used;	/* used: slots holding a key or a removed one */
	bool (*keep)(uint64_t val);	/* NULL: every entry is kept */
};

/* @key now maps to @val (a key already there takes the new value). -EINVAL for 0, 1. */
int addrmap_put(struct addrmap *m, uint64_t key, uint64_t val);
/* Whether @key is there, its value in *@val. */
bool addrmap_get(const struct addrmap *m, uint64_t key, uint64_t *val);
/* addrmap_get(), and the entry removed. */
bool addrmap_take(struct addrmap *m, uint64_t key, uint64_t *val);
/* Frees the slots; the map is empty (its @keep stays). */
void addrmap_free(struct addrmap *m);

#endif /* IRQRES_ADDRMAP_H */
