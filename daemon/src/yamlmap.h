/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * yamlmap.h - table-driven reading of a YAML document with libyaml's document API.
 *
 * The pattern is netplan's parse.c: each mapping of a file format is a table of its keys,
 * {key, node type, handler, offset, rule}, and one function, yamlmap_walk(), walks any
 * mapping with its table: it refuses keys that are not plain names or that repeat
 * (O(n log n), whatever the number of keys), hands each value to its key's handler with
 * the field to fill, and names the known keys, from the table, when a key is unknown.
 *
 * Every error is one line "file:line:col: message" (1-based, from libyaml's marks) in the
 * caller's buffer; functions return 0 or -errno (-EINVAL for a refused document).
 */
#ifndef IRQRES_YAMLMAP_H
#define IRQRES_YAMLMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#define YAMLMAP_WHAT_MAX 160		/* "target 'name': adaptive.min_runtime" */
/*
 * Bounds on the work one document can cause, checked on a stream of events before the
 * document is built: collections nested deeper, or more events (scalars, aliases,
 * collection starts and ends) in the whole stream, refuse it with file:line:col.
 */
#define YAMLMAP_DEPTH_MAX 32
#define YAMLMAP_EVENTS_MAX 65536

/* One document being read, and where its errors go. */
struct yamlmap {
	const char *name;		/* the file name used in messages */
	const char *buf;		/* the text, to place reader errors */
	size_t len;
	yaml_parser_t parser;
	yaml_document_t doc;
	bool parser_ready, doc_loaded;
	char *err;
	size_t errlen;
};

/*
 * Loads the first document of @buf; @name stands for the file in messages.  On failure
 * @err holds the syntax error, or the bound (YAMLMAP_*_MAX) the stream went past.
 * yamlmap_close() is needed either way.
 */
int yamlmap_open(struct yamlmap *c, const char *buf, size_t len, const char *name, char *err,
		 size_t errlen);
/* Refuses a second document after the first (it would be silently ignored). */
int yamlmap_expect_end(struct yamlmap *c, const char *why);
void yamlmap_close(struct yamlmap *c);
/* The root node of the first document, NULL when the document is empty. */
yaml_node_t *yamlmap_root(struct yamlmap *c);

/* Writes "file:line:col: message" for @node (or @mark) into the error buffer: -EINVAL. */
int yamlmap_error(struct yamlmap *c, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int yamlmap_error_at(struct yamlmap *c, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

yaml_node_t *yamlmap_node(struct yamlmap *c, int index);
const char *yamlmap_scalar(const yaml_node_t *node);
/* "a mapping", "a list", "a scalar" or "no value", for messages. */
const char *yamlmap_kind(const yaml_node_t *node);

/* Scalar values; @what names the value in messages ("target 'nic': runtime"). */
int yamlmap_get_text(struct yamlmap *c, yaml_node_t *node, const char *what, const char **out);
int yamlmap_get_duration(struct yamlmap *c, yaml_node_t *node, const char *what, uint64_t *ns);
/* A plain decimal integer in [min, max]. */
int yamlmap_get_uint(struct yamlmap *c, yaml_node_t *node, const char *what,
		     unsigned long long min, unsigned long long max, unsigned long long *out);
int yamlmap_get_double(struct yamlmap *c, yaml_node_t *node, const char *what, double *out);
/* A value given as one scalar or a non-empty list: *@start NULL and *@count 1 for the
 * scalar (@node itself), else the list's items; an empty list or a mapping is an error
 * naming @what and @expect ("an integer or a list of integers"). */
int yamlmap_one_or_list(struct yamlmap *c, yaml_node_t *node, const char *what,
			const char *expect, yaml_node_item_t **start, size_t *count);

/* A name and its place in document order, for yamlmap_first_repeat(). */
struct yamlmap_name {
	const char *name;
	size_t index;
};

/*
 * Sorts @v and finds the first name, in document order, that repeats an earlier one:
 * true with the indexes of the repeat and of its first use.  O(n log n).
 */
bool yamlmap_first_repeat(struct yamlmap_name *v, size_t n, size_t *dup, size_t *first);

struct yamlmap_key;

/* Reads @val (the value of @key) into the field of @obj that @k names; @what names the
 * value in messages. */
typedef int (*yamlmap_fn)(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			  yaml_node_t *val, void *obj, const char *what);

/* One key of a mapping. */
struct yamlmap_key {
	const char *key;		/* NULL ends a table */
	yaml_node_type_t type;		/* YAML_MAPPING_NODE: @data is the struct yamlmap_mapping
					 * yamlmap_walk() walks; else @fn checks the value */
	yamlmap_fn fn;
	size_t offset;			/* of the field @fn fills, in the walked object */
	const void *data;		/* @fn's rule: a range, the choices, a sub-mapping */
};

/* A mapping: its keys, and the rules that involve several of them. */
struct yamlmap_mapping {
	const char *expect;		/* what a value of this mapping is, for type errors */
	const struct yamlmap_key *keys;
	/* run after every key was read; @where names the mapping */
	int (*done)(struct yamlmap *c, const struct yamlmap_mapping *table, yaml_node_t *map,
		    void *obj, const char *where);
};

/* Where a key of a mapping was given (NULLs when not), by its index in the table. */
struct yamlmap_given {
	yaml_node_t *key, *val;
};

/*
 * Walks @map with the table of @table into @obj: first the keys (plain, none twice), then
 * each value through its handler in document order, then @table's done().  @where names
 * the mapping ("target 'nic'"), @prefix starts the name of each value ("target 'nic': ");
 * a value that is a mapping of its own is named "<what>.<key>".  @given, when not NULL,
 * has one entry per key of the table and receives where each key was given.
 */
int yamlmap_walk(struct yamlmap *c, yaml_node_t *map, const struct yamlmap_mapping *table,
		 void *obj, const char *where, const char *prefix, struct yamlmap_given *given);
/* The value of @key in @map (a walked mapping), or NULL; @map may be NULL. */
yaml_node_t *yamlmap_value(struct yamlmap *c, yaml_node_t *map, const char *key);
/* "a, b, c": the keys of a table, for messages. */
const char *yamlmap_key_list(const struct yamlmap_key *keys, char *buf, size_t len);

static inline void *yamlmap_field(void *obj, const struct yamlmap_key *k)
{
	return (char *)obj + k->offset;
}

/* ---- Handlers for the common kinds of values, and their rules (@data) ---- */

/* The smallest duration, and what to say below it. */
struct yamlmap_duration_rule {
	uint64_t min;
	const char *why;
};

/* An integer's range. */
struct yamlmap_range {
	unsigned long long min, max;
};

/* A scalar or list of ints in [min, max]: the field is an int *, its length a size_t. */
struct yamlmap_int_list {
	int min, max;
	size_t count_offset;		/* of the size_t that receives the length */
};

/* One of two words; the first is the default. */
struct yamlmap_choice {
	const char *noun;		/* "a choice", "a mode" */
	const char *words[2];
};

/* A key read by the caller before or after the walk (nothing to do during it). */
int yamlmap_on_skip(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		    yaml_node_t *val, void *obj, const char *what);
/* A non-empty string, strdup'ed into a char *. */
int yamlmap_on_string(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what);
/* One non-empty string or a non-empty list of them, strdup'ed into a char ** (freed with
 * yamlmap_free_strings); rule: struct yamlmap_int_list, of which only count_offset. */
int yamlmap_on_string_list(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			   yaml_node_t *val, void *obj, const char *what);
void yamlmap_free_strings(char **v, size_t n);
/* rule: struct yamlmap_int_list. */
int yamlmap_on_int_list(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what);
/* true/false, yes/no, on/off into a bool. */
int yamlmap_on_bool(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		    yaml_node_t *val, void *obj, const char *what);
/* A duration (units.h) into a uint64_t of ns; rule (optional): its minimum. */
int yamlmap_on_duration(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what);
/* An integer into a uint32_t; rule: struct yamlmap_range. */
int yamlmap_on_u32(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what);
/* A two-word choice into a bool: true for the second word; rule: struct yamlmap_choice. */
int yamlmap_on_choice(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what);
/* Which word of @k's choice @val is: 0 or 1 in *@pick (for other field types). */
int yamlmap_choose(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *val,
		   const char *what, int *pick);

#endif /* IRQRES_YAMLMAP_H */
