/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * statefields.h - the key=value fields of the state file's records (state.c).
 *
 * One table per record holds every key=value field: its key, where it lives in the
 * record's struct, and how it is read and written, so the writer and the reader cannot
 * disagree and a message about an unknown key lists the known ones.
 */
#ifndef IRQRES_STATEFIELDS_H
#define IRQRES_STATEFIELDS_H

#include "irqres.h"

#include <stdbool.h>
#include <stddef.h>

struct statefield;

struct statefield_type {
	/* 0, or -errno when @val is not a valid value of @f */
	int (*parse)(const struct statefield *f, const char *val, void *dst);
	void (*format)(const struct statefield *f, const void *src, char *buf, size_t len);
};

struct statefield {
	const char *key;
	const struct statefield_type *type;
	size_t offset;			/* in the record's struct */
	long long min, max;		/* an int field's range; a text field's size in max */
	bool required;
	const char *why;		/* the message for a bad value; NULL: "bad <key>" */
};

/* A record's table of fields. */
struct statefields {
	const char *word;		/* the record's first word */
	const struct statefield *v;
	size_t n;			/* at most 32 */
};

#define STATEFIELDS(word, t) { word, t, sizeof(t) / sizeof(t[0]) }

/* int (min..max), uint64_t, text (escaped, max bytes), policy name, CPU list */
extern const struct statefield_type statefield_int, statefield_u64, statefield_text,
	statefield_policy, statefield_cpus;

/* A decimal in min..max: 0 or -EINVAL. */
int statefield_parse_ll(const char *s, long long min, long long max, long long *out);
/* "<word> key=value ...\n": every field of the table, in its order. */
void statefields_format(const struct statefields *fs, const void *rec, char *buf, size_t len);
/* The rest of a record's line (strtok_r() state @save) into @rec, every required field
 * present: 0, or -EINVAL with the cause in @why. */
int statefields_read(const struct statefields *fs, void *rec, char **save, char *why,
		     size_t whylen);

#endif
