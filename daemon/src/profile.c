/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.c - reads and validates a YAML profile with libyaml's document API.
 *
 * The whole document is loaded first, then walked; every node keeps its marks, so an
 * error anywhere can point at the line and column of the offending key or value.
 */
#include "profile.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define PROFILE_SIZE_MAX (1 << 20)	/* a profile is a small hand-written file */
#define IFACE_NAME_MAX 15		/* IFNAMSIZ - 1 */

struct pctx {
	const char *name;		/* the file name used in messages */
	const char *buf;		/* the text, to place reader errors */
	size_t len;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int errat_mark(struct pctx *c, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int errat(struct pctx *c, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int verrat(struct pctx *c, yaml_mark_t mark, const char *fmt, va_list ap)
{
	int n = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->name, mark.line + 1,
			 mark.column + 1);

	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	return -EINVAL;
}

static int errat_mark(struct pctx *c, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verrat(c, mark, fmt, ap);
	va_end(ap);
	return rc;
}

static int errat(struct pctx *c, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verrat(c, node->start_mark, fmt, ap);
	va_end(ap);
	return rc;
}

static yaml_node_t *node_at(struct pctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

static const char *scalar(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

static bool is_plain(const yaml_node_t *node)
{
	return node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* A plain empty scalar, "~" or "null": a key given without a value. */
static bool is_null(const yaml_node_t *node)
{
	const char *s;

	if (!is_plain(node))
		return false;
	s = scalar(node);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static const char *node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return is_null(node) ? "no value" : "a scalar";
	}
}

/* The value of a scalar that must carry text. */
static int get_text(struct pctx *c, yaml_node_t *node, const char *what, const char **out)
{
	if (node->type != YAML_SCALAR_NODE || is_null(node))
		return errat(c, node, "%s: expected a string, got %s", what, node_kind(node));
	*out = scalar(node);
	return 0;
}

static int get_string(struct pctx *c, yaml_node_t *node, const char *what, char **out)
{
	const char *s = NULL;
	int rc = get_text(c, node, what, &s);

	if (rc)
		return rc;
	if (!*s)
		return errat(c, node, "%s: must not be empty", what);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int get_duration(struct pctx *c, yaml_node_t *node, const char *what, uint64_t *ns)
{
	const char *s = NULL, *why;
	int rc = get_text(c, node, what, &s);

	if (rc)
		return errat(c, node, "%s: expected a duration such as 2ms, got %s", what,
			     node_kind(node));
	if (units_parse_duration(s, ns, &why))
		return errat(c, node, "%s: '%s': %s", what, s, why);
	return 0;
}

/* A plain decimal integer in [min, max]. */
static int get_uint(struct pctx *c, yaml_node_t *node, const char *what, unsigned long long min,
		    unsigned long long max, unsigned long long *out)
{
	const char *s, *p;
	unsigned long long v = 0;

	if (node->type != YAML_SCALAR_NODE || is_null(node))
		return errat(c, node, "%s: expected an integer, got %s", what, node_kind(node));
	s = scalar(node);
	if (!is_plain(node) || !*s)
		return errat(c, node, "%s: expected an integer, got the string '%s'", what, s);
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9') {
			if (*p == '-' && p == s)
				return errat(c, node, "%s: must not be negative, got %s", what, s);
			return errat(c, node, "%s: expected an integer, got '%s'", what, s);
		}
		if (v > (max - (unsigned)(*p - '0')) / 10)
			return errat(c, node, "%s: %s is too large (at most %llu)", what, s, max);
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < min)
		return errat(c, node, "%s: %s is too small (at least %llu)", what, s, min);
	*out = v;
	return 0;
}

static int get_bool(struct pctx *c, yaml_node_t *node, const char *what, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					   "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off", "Off", "OFF" };
	size_t i;

	if (is_plain(node)) {
		for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (!strcmp(scalar(node), yes[i])) {
				*out = true;
				return 0;
			}
			if (!strcmp(scalar(node), no[i])) {
				*out = false;
				return 0;
			}
		}
		if (!is_null(node))
			return errat(c, node, "%s: expected true or false, got '%s'", what,
				     scalar(node));
	} else if (node->type == YAML_SCALAR_NODE) {
		return errat(c, node, "%s: expected true or false, got the string '%s'", what,
			     scalar(node));
	}
	return errat(c, node, "%s: expected true or false, got %s", what, node_kind(node));
}

/* A duration that will be a DL runtime: at least the kernel's minimum. */
static int get_runtime(struct pctx *c, yaml_node_t *node, const char *what, uint64_t *ns)
{
	int rc = get_duration(c, node, what, ns);

	if (!rc && *ns < PROFILE_RUNTIME_MIN_NS)
		rc = errat(c, node, "%s: %s is below the kernel's minimum runtime of 1024ns", what,
			   scalar(node));
	return rc;
}

static int get_double(struct pctx *c, yaml_node_t *node, const char *what, double *out)
{
	const char *s;
	char *end;
	double v;

	if (!is_plain(node) || is_null(node))
		return errat(c, node, "%s: expected a number, got %s", what,
			     node->type == YAML_SCALAR_NODE && !is_null(node) ? "a string"
									       : node_kind(node));
	s = scalar(node);
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return errat(c, node, "%s: expected a number, got '%s'", what, s);
	*out = v;
	return 0;
}

/*
 * A scalar or a list of integers in [min, max] into a new int array.  Used for `irq` and
 * `task.pid`.
 */
static int get_int_list(struct pctx *c, yaml_node_t *node, const char *what, int min, int max,
			int **out, size_t *n)
{
	yaml_node_item_t *start = node->data.sequence.items.start;
	unsigned long long v = 0;
	size_t count;
	int rc = 0;

	if (node->type == YAML_SCALAR_NODE) {
		start = NULL;
		count = 1;
	} else if (node->type == YAML_SEQUENCE_NODE) {
		count = (size_t)(node->data.sequence.items.top - start);
		if (!count)
			return errat(c, node, "%s: the list is empty", what);
	} else {
		return errat(c, node, "%s: expected an integer or a list of integers, got %s",
			     what, node_kind(node));
	}
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (*n = 0; !rc && *n < count; (*n)++) {
		yaml_node_t *elem = start ? node_at(c, start[*n]) : node;

		if (elem->type != YAML_SCALAR_NODE)
			rc = errat(c, elem, "%s: expected an integer in the list, got %s", what,
				   node_kind(elem));
		else
			rc = get_uint(c, elem, what, (unsigned long long)min,
				      (unsigned long long)max, &v);
		(*out)[*n] = (int)v;
	}
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

struct name_at {
	const char *name;
	size_t index;		/* in document order */
};

static int name_at_cmp(const void *a, const void *b)
{
	const struct name_at *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (d)
		return d;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Sorts v and finds the first name, in document order, that repeats an earlier one:
 * true with the indexes of the repeat and of its first use. O(n log n), so that a
 * profile of many keys cannot stall the daemon (a pairwise check of 60,000 keys took
 * 90 s).
 */
static bool first_repeat(struct name_at *v, size_t n, size_t *dup, size_t *first)
{
	size_t i, g = 0;
	bool found = false;

	qsort(v, n, sizeof(*v), name_at_cmp);
	for (i = 1; i < n; i++) {
		if (strcmp(v[i].name, v[g].name)) {
			g = i;
			continue;
		}
		if (i == g + 1 && (!found || v[i].index < *dup)) {	/* the group's 1st repeat */
			*dup = v[i].index;
			*first = v[g].index;
			found = true;
		}
	}
	return found;
}

/* Refuses a mapping that names one key twice (libyaml keeps both). */
static int check_unique_keys(struct pctx *c, yaml_node_t *map, const char *where)
{
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t n = (size_t)(map->data.mapping.pairs.top - pairs), bad, i, dup = 0, first = 0;
	struct name_at *v;
	int rc = 0;

	/* the first offence in document order: a key that is not a scalar, or a repeat */
	for (bad = 0; bad < n; bad++)
		if (node_at(c, pairs[bad].key)->type != YAML_SCALAR_NODE)
			break;
	if (bad > 1) {
		v = malloc(bad * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < bad; i++)
			v[i] = (struct name_at){ scalar(node_at(c, pairs[i].key)), i };
		if (first_repeat(v, bad, &dup, &first)) {
			yaml_node_t *ka = node_at(c, pairs[dup].key);

			rc = errat(c, ka, "%s: duplicate key '%s' (first given at line %zu)", where,
				   scalar(ka), node_at(c, pairs[first].key)->start_mark.line + 1);
		}
		free(v);
		if (rc)
			return rc;
	}
	if (bad < n) {
		yaml_node_t *ka = node_at(c, pairs[bad].key);

		return errat(c, ka, "%s: a key must be a plain name, got %s", where,
			     node_kind(ka));
	}
	return 0;
}

static bool valid_target_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= TARGET_NAME_MAX)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/*
 * ---- The mapping walker ----
 *
 * Each mapping of the profile is described by a table of its keys, as netplan's parse.c
 * does: {key, node type, handler, offset, rule}.  One function, map_walk(), checks the
 * keys (plain names, no repeats), finds each key's handler in the table, and hands it
 * the value and the field to fill; messages about unknown keys list the table.
 */
struct key_handler;

/* Reads @val (the value of @key) into the field of @obj the entry names; @what names the
 * value in messages ("target 'nic': runtime"). */
typedef int (*key_fn)(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what);

struct key_handler {
	const char *key;		/* NULL ends a table */
	yaml_node_type_t type;		/* YAML_MAPPING_NODE: @data is the struct mapping that
					 * map_walk() walks; else @fn checks the value itself */
	key_fn fn;
	size_t offset;			/* of the field @fn fills, in the walked object */
	const void *data;		/* @fn's rule: a range, the choices, a sub-mapping */
};

/* A mapping: its keys, and the rules that involve several of them. */
struct mapping {
	const char *expect;		/* what a value of this mapping is, for type errors */
	const struct key_handler *keys;
	int (*done)(struct pctx *c, const struct mapping *m, yaml_node_t *map, void *obj,
		    const char *where);
};

/* Where a key of a mapping was given (NULL when not), by its handler's index. */
struct given {
	yaml_node_t *key, *val;
};

#define WHAT_MAX (TARGET_NAME_MAX + 64)

static void *field(void *obj, const struct key_handler *h)
{
	return (char *)obj + h->offset;
}

/* "a, b, c": the keys of a table, for messages. */
static const char *key_list(const struct key_handler *keys, const char *last_sep, char *buf,
			    size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const struct key_handler *h = keys; h->key && o < len; h++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", h == keys ? "" :
				      h[1].key ? ", " : last_sep, h->key);
	return buf;
}

static int unknown_key(struct pctx *c, yaml_node_t *key, const char *where,
		       const struct key_handler *keys)
{
	char known[256];

	return errat(c, key, "%s: unknown key '%s' (known keys: %s)", where, scalar(key),
		     key_list(keys, ", ", known, sizeof(known)));
}

static const struct key_handler *find_handler(const struct key_handler *keys, const char *key)
{
	for (; keys->key; keys++)
		if (!strcmp(keys->key, key))
			return keys;
	return NULL;
}

static int map_walk(struct pctx *c, yaml_node_t *map, const struct mapping *m, void *obj,
		    const char *where, const char *prefix, struct given *given);

/* A key whose value is a mapping of its own: "adaptive.gain" inside "target 'x'". */
static int walk_nested(struct pctx *c, const struct key_handler *h, yaml_node_t *val,
		       void *obj, const char *what)
{
	const struct mapping *sub = h->data;
	char prefix[WHAT_MAX + 1];

	if (val->type != YAML_MAPPING_NODE)
		return errat(c, val, "%s: expected %s, got %s", what, sub->expect,
			     node_kind(val));
	snprintf(prefix, sizeof(prefix), "%s.", what);
	return map_walk(c, val, sub, obj, what, prefix, NULL);
}

/*
 * Walks @map with the table of @m into @obj: first the keys (plain, none twice), then
 * every value through its handler in document order, then @m's cross-key rules.  @where
 * names the mapping ("target 'nic'"), @prefix starts the name of each value ("target
 * 'nic': "); @given, when not NULL, receives where each key was given.
 */
static int map_walk(struct pctx *c, yaml_node_t *map, const struct mapping *m, void *obj,
		    const char *where, const char *prefix, struct given *given)
{
	yaml_node_pair_t *pair;
	char what[WHAT_MAX];
	int rc = check_unique_keys(c, map, where);

	for (pair = map->data.mapping.pairs.start; !rc && pair < map->data.mapping.pairs.top;
	     pair++) {
		yaml_node_t *key = node_at(c, pair->key), *val = node_at(c, pair->value);
		const struct key_handler *h = find_handler(m->keys, scalar(key));

		if (!h)
			return unknown_key(c, key, where, m->keys);
		if (given)
			given[h - m->keys] = (struct given){ key, val };
		snprintf(what, sizeof(what), "%s%s", prefix, h->key);
		if (h->type == YAML_MAPPING_NODE)
			rc = walk_nested(c, h, val, obj, what);
		else
			rc = h->fn(c, h, key, val, obj, what);
	}
	if (!rc && m->done)
		rc = m->done(c, m, map, obj, where);
	return rc;
}

/* The value of @key in @map (a mapping without repeats), or NULL. */
static yaml_node_t *map_value(struct pctx *c, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(c, pair->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
			return node_at(c, pair->value);
	}
	return NULL;
}

/* ---- Handlers: each reads one kind of value into the field its entry names ---- */

/* A duration's rule: the smallest value, and what to say below it. */
struct duration_rule {
	uint64_t min;
	const char *why;
};

struct uint_range {
	unsigned long long min, max;
};

struct int_list_rule {
	int min, max;
	size_t count_offset;		/* of the size_t that receives the length */
};

/* One of two words; the first is the default. */
struct choice {
	const char *noun;		/* "a choice", "a mode" */
	const char *words[2];
};

/* A key read before the others (a target's name) or after them (the targets). */
static int on_elsewhere(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what)
{
	return 0;
}

static int on_string(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		     yaml_node_t *val, void *obj, const char *what)
{
	return get_string(c, val, what, field(obj, h));
}

static int on_interface(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what)
{
	int rc = on_string(c, h, key, val, obj, what);
	const char *s = rc ? NULL : *(char **)field(obj, h);

	if (s && (strlen(s) > IFACE_NAME_MAX || strpbrk(s, "/ \t:") || !strcmp(s, ".") ||
		  !strcmp(s, "..")))
		rc = errat(c, val, "%s: '%s' is not a network interface name (at most 15 "
			   "characters, no '/', ':' or blanks)", what, s);
	return rc;
}

static int on_driver(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		     yaml_node_t *val, void *obj, const char *what)
{
	int rc = on_string(c, h, key, val, obj, what);
	const char *s = rc ? NULL : *(char **)field(obj, h);

	if (s && strchr(s, '/'))
		rc = errat(c, val, "%s: '%s' is not a driver name (no '/')", what, s);
	return rc;
}

static int on_cgroup(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		     yaml_node_t *val, void *obj, const char *what)
{
	int rc = on_string(c, h, key, val, obj, what);
	const char *s = rc ? NULL : *(char **)field(obj, h);

	if (s && s[0] != '/')
		rc = errat(c, val, "%s: '%s' must be an absolute cgroup v2 path starting with /",
			   what, s);
	return rc;
}

static int on_int_list(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		       yaml_node_t *val, void *obj, const char *what)
{
	const struct int_list_rule *r = h->data;

	return get_int_list(c, val, what, r->min, r->max, field(obj, h),
			    (size_t *)((char *)obj + r->count_offset));
}

static int on_bool(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what)
{
	return get_bool(c, val, what, field(obj, h));
}

/* A duration; with a rule, at least its minimum. */
static int on_duration(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		       yaml_node_t *val, void *obj, const char *what)
{
	const struct duration_rule *r = h->data;
	uint64_t *ns = field(obj, h);
	int rc = get_duration(c, val, what, ns);

	if (!rc && r && *ns < r->min)
		rc = errat(c, val, "%s: %s", what, r->why);
	return rc;
}

/* A duration that will be a DL runtime: at least the kernel's minimum. */
static int on_runtime(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what)
{
	return get_runtime(c, val, what, field(obj, h));
}

/* An integer in a range into a 32-bit field. */
static int on_u32(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		  yaml_node_t *val, void *obj, const char *what)
{
	const struct uint_range *r = h->data;
	unsigned long long v;
	int rc = get_uint(c, val, what, r->min, r->max, &v);

	if (!rc)
		*(uint32_t *)field(obj, h) = (uint32_t)v;
	return rc;
}

static int on_gain(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what)
{
	double *gain = field(obj, h);
	int rc = get_double(c, val, what, gain);

	if (!rc && !(*gain > 0 && *gain <= 1))
		rc = errat(c, val, "%s: %s is out of range: 0 < gain <= 1", what, scalar(val));
	return rc;
}

static int on_version(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what)
{
	unsigned long long v;
	int rc = get_uint(c, val, what, 0, INT32_MAX, &v);

	if (!rc && v != 1)
		rc = errat(c, val, "%s: %llu is not supported: this irqresd reads version 1",
			   what, v);
	return rc;
}

/* Which of the two words of @h's choice @val is: 0 or 1 in *@pick. */
static int choose(struct pctx *c, const struct key_handler *h, yaml_node_t *val,
		  const char *what, int *pick)
{
	const struct choice *ch = h->data;
	const char *s = NULL;
	int rc = get_text(c, val, what, &s);

	if (rc)
		return rc;
	for (*pick = 0; *pick < 2; (*pick)++)
		if (!strcmp(s, ch->words[*pick]))
			return 0;
	return errat(c, val, "%s: '%s' is not %s: use %s or %s", what, s, ch->noun,
		     ch->words[0], ch->words[1]);
}

/* A two-word choice into a bool: true for the second word. */
static int on_choice(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		     yaml_node_t *val, void *obj, const char *what)
{
	int pick, rc = choose(c, h, val, what, &pick);

	if (!rc)
		*(bool *)field(obj, h) = pick == 1;
	return rc;
}

/* The same into an enum target_mode: MODE_STATIC or MODE_ADAPTIVE, in that order. */
static int on_mode(struct pctx *c, const struct key_handler *h, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what)
{
	int pick, rc = choose(c, h, val, what, &pick);

	if (!rc)
		*(enum target_mode *)field(obj, h) = pick ? MODE_ADAPTIVE : MODE_STATIC;
	return rc;
}

/* ---- The tables ---- */

#define TARGET_FIELD(f) offsetof(struct target, f)

static const struct duration_rule above_zero = { 1, "must be more than 0" };
static const struct duration_rule at_least_1us = { 1000, "must be at least 1us" };
static const struct uint_range buffer_range = { 1, UINT32_MAX };
static const struct uint_range window_range = { 1, PROFILE_ADAPTIVE_WINDOW_MAX };
static const struct int_list_rule irq_rule = { 0, INT32_MAX, TARGET_FIELD(n_irqs) };
static const struct int_list_rule pid_rule = { 1, INT32_MAX, TARGET_FIELD(n_pids) };
static const struct choice admission_choice = { "a choice", { "keep", "disable" } };
static const struct choice drift_choice = { "a choice", { "reapply", "report" } };
static const struct choice mode_choice = { "a mode", { "static", "adaptive" } };

_Static_assert(sizeof(pid_t) == sizeof(int), "task.pid is read as an int list");
_Static_assert(sizeof(unsigned int) == sizeof(uint32_t), "adaptive.window is a u32");

static int task_done(struct pctx *c, const struct mapping *m, yaml_node_t *map, void *obj,
		     const char *where)
{
	const struct target *t = obj;
	char keys[64];

	if (t->task_comm || t->pids || t->task_cgroup)
		return 0;
	return errat(c, map, "%s: give at least one of %s", where,
		     key_list(m->keys, ", ", keys, sizeof(keys)));
}

static const struct mapping task_mapping = {
	.expect = "a mapping of comm, pid and cgroup",
	.keys = (const struct key_handler[]){
		{ "comm", YAML_SCALAR_NODE, on_string, TARGET_FIELD(task_comm), NULL },
		{ "pid", YAML_NO_NODE, on_int_list, TARGET_FIELD(pids), &pid_rule },
		{ "cgroup", YAML_SCALAR_NODE, on_cgroup, TARGET_FIELD(task_cgroup), NULL },
		{ NULL },
	},
	.done = task_done,
};

static const struct mapping adaptive_mapping = {
	.expect = "a mapping",
	.keys = (const struct key_handler[]){
		{ "sample", YAML_SCALAR_NODE, on_duration, TARGET_FIELD(adaptive.sample_ns),
		  &at_least_1us },
		{ "gain", YAML_SCALAR_NODE, on_gain, TARGET_FIELD(adaptive.gain), NULL },
		{ "window", YAML_SCALAR_NODE, on_u32, TARGET_FIELD(adaptive.window),
		  &window_range },
		{ "default_job", YAML_SCALAR_NODE, on_duration,
		  TARGET_FIELD(adaptive.default_job_ns), &above_zero },
		{ "min_runtime", YAML_SCALAR_NODE, on_runtime,
		  TARGET_FIELD(adaptive.min_runtime_ns), NULL },
		{ "max_runtime", YAML_SCALAR_NODE, on_runtime,
		  TARGET_FIELD(adaptive.max_runtime_ns), NULL },
		{ "hysteresis", YAML_SCALAR_NODE, on_duration,
		  TARGET_FIELD(adaptive.hysteresis_ns), NULL },
		{ NULL },
	},
};

/* A target's keys, by index into its table (and its struct given array). */
enum target_key {
	T_NAME, T_INTERFACE, T_IRQ, T_ACTION, T_DRIVER, T_SECONDARY, T_TASK, T_RUNTIME,
	T_PERIOD, T_DEADLINE, T_MIN_INTERARRIVAL, T_BUFFER, T_MODE, T_ADAPTIVE, T_NKEYS
};

static const struct key_handler target_keys[T_NKEYS + 1] = {
	[T_NAME] = { "name", YAML_SCALAR_NODE, on_elsewhere, 0, NULL },
	[T_INTERFACE] = { "interface", YAML_SCALAR_NODE, on_interface, TARGET_FIELD(interface),
			  NULL },
	[T_IRQ] = { "irq", YAML_NO_NODE, on_int_list, TARGET_FIELD(irqs), &irq_rule },
	[T_ACTION] = { "action", YAML_SCALAR_NODE, on_string, TARGET_FIELD(action_glob), NULL },
	[T_DRIVER] = { "driver", YAML_SCALAR_NODE, on_driver, TARGET_FIELD(driver), NULL },
	[T_SECONDARY] = { "secondary", YAML_SCALAR_NODE, on_bool, TARGET_FIELD(secondary),
			  NULL },
	[T_TASK] = { "task", YAML_MAPPING_NODE, NULL, 0, &task_mapping },
	[T_RUNTIME] = { "runtime", YAML_SCALAR_NODE, on_duration, TARGET_FIELD(runtime_ns),
			NULL },
	[T_PERIOD] = { "period", YAML_SCALAR_NODE, on_duration, TARGET_FIELD(period_ns), NULL },
	[T_DEADLINE] = { "deadline", YAML_SCALAR_NODE, on_duration, TARGET_FIELD(deadline_ns),
			 NULL },
	[T_MIN_INTERARRIVAL] = { "min_interarrival", YAML_SCALAR_NODE, on_duration,
				 TARGET_FIELD(min_interarrival_ns), &above_zero },
	[T_BUFFER] = { "buffer", YAML_SCALAR_NODE, on_u32, TARGET_FIELD(buffer), &buffer_range },
	[T_MODE] = { "mode", YAML_SCALAR_NODE, on_mode, TARGET_FIELD(mode), &mode_choice },
	[T_ADAPTIVE] = { "adaptive", YAML_MAPPING_NODE, NULL, 0, &adaptive_mapping },
	[T_NKEYS] = { NULL },
};

static const struct mapping target_mapping = { .keys = target_keys };

enum root_key { R_VERSION, R_ADMISSION, R_DRIFT, R_TARGETS, R_NKEYS };

static const struct key_handler root_keys[R_NKEYS + 1] = {
	[R_VERSION] = { "version", YAML_SCALAR_NODE, on_version, 0, NULL },
	[R_ADMISSION] = { "admission_control", YAML_SCALAR_NODE, on_choice,
			  offsetof(struct profile, admission_off), &admission_choice },
	[R_DRIFT] = { "drift", YAML_SCALAR_NODE, on_choice,
		      offsetof(struct profile, drift_report), &drift_choice },
	[R_TARGETS] = { "targets", YAML_SEQUENCE_NODE, on_elsewhere, 0, NULL },
	[R_NKEYS] = { NULL },
};

static const struct mapping root_mapping = { .keys = root_keys };

/* ---- Targets: the rules that involve several keys ---- */

static int missing_key(struct pctx *c, yaml_node_t *map, const char *where, const char *key)
{
	return errat(c, map, "%s: missing required key '%s'", where, key);
}

static int line_of(const yaml_node_t *node)
{
	return node ? (int)node->start_mark.line + 1 : 0;
}

/* The IRQ selector given first in the file, or T_NKEYS. */
static enum target_key first_irq_selector(const struct given *g)
{
	static const enum target_key sel[] = { T_INTERFACE, T_IRQ, T_ACTION, T_DRIVER };
	enum target_key first = T_NKEYS;

	for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++)
		if (g[sel[i]].key && (first == T_NKEYS || g[sel[i]].key->start_mark.index <
							      g[first].key->start_mark.index))
			first = sel[i];
	return first;
}

/* IRQ threads or tasks, never both. */
static int check_kind(struct pctx *c, yaml_node_t *map, struct target *t, const struct given *g,
		      const char *where)
{
	enum target_key sel = first_irq_selector(g);

	if (sel != T_NKEYS && g[T_TASK].key)
		return errat(c, g[T_TASK].key, "%s: task cannot be combined with the IRQ selector "
			     "'%s' (line %d): a target selects IRQ threads or tasks, not both",
			     where, target_keys[sel].key, line_of(g[sel].key));
	if (sel == T_NKEYS && !g[T_TASK].key)
		return errat(c, map, "%s: no selector: give interface, irq, action or driver "
			     "(IRQ threads) or task (user threads)", where);
	if (g[T_TASK].key && g[T_SECONDARY].key)
		return errat(c, g[T_SECONDARY].key, "%s: secondary applies to IRQ threads only, "
			     "not to a task target", where);
	t->kind = g[T_TASK].key ? TARGET_TASK : TARGET_IRQ;
	t->interface_line = line_of(g[T_INTERFACE].key);
	t->irq_line = line_of(g[T_IRQ].key);
	t->driver_line = line_of(g[T_DRIVER].key);
	return 0;
}

/* runtime <= deadline <= period, runtime above the kernel's minimum. */
static int check_times(struct pctx *c, yaml_node_t *map, struct target *t, const struct given *g,
		       const char *where)
{
	char a[UNITS_FMT_LEN], b[UNITS_FMT_LEN];

	if (!g[T_RUNTIME].val)
		return missing_key(c, map, where, "runtime");
	if (!g[T_PERIOD].val)
		return missing_key(c, map, where, "period");
	if (!g[T_DEADLINE].val)
		t->deadline_ns = t->period_ns;
	if (t->runtime_ns < PROFILE_RUNTIME_MIN_NS)
		return errat(c, g[T_RUNTIME].val, "%s: runtime %s is below the kernel's minimum "
			     "of 1024ns", where, units_format_duration(t->runtime_ns, a, sizeof(a)));
	if (t->deadline_ns > t->period_ns)
		return errat(c, g[T_DEADLINE].val, "%s: deadline %s exceeds the period %s "
			     "(runtime <= deadline <= period)", where,
			     units_format_duration(t->deadline_ns, a, sizeof(a)),
			     units_format_duration(t->period_ns, b, sizeof(b)));
	if (t->runtime_ns > t->deadline_ns)
		return errat(c, g[T_RUNTIME].val, "%s: runtime %s exceeds the %s %s "
			     "(runtime <= deadline <= period)", where,
			     units_format_duration(t->runtime_ns, a, sizeof(a)),
			     g[T_DEADLINE].val ? "deadline" : "period",
			     units_format_duration(t->deadline_ns, b, sizeof(b)));
	return 0;
}

/* min_interarrival and buffer: IRQ targets only, and the buffering check. */
static int check_device(struct pctx *c, struct target *t, const struct given *g,
			const char *where)
{
	yaml_node_t *dev = g[T_MIN_INTERARRIVAL].val ? g[T_MIN_INTERARRIVAL].val : g[T_BUFFER].val;
	char a[UNITS_FMT_LEN];

	if (dev && t->kind == TARGET_TASK)
		return errat(c, dev, "%s: min_interarrival and buffer describe a device: IRQ "
			     "targets only", where);
	if (profile_buffer_check(t, t->runtime_ns, t->period_ns) == PROFILE_BUFFER_VIOLATED) {
		unsigned long long delayed = (t->period_ns - t->runtime_ns) / t->min_interarrival_ns;

		return errat(c, g[T_BUFFER].val, "%s: buffering check fails: (period - runtime) / "
			     "min_interarrival = %llu interrupts may wait, the device holds only "
			     "buffer = %u; raise runtime to more than %s or shorten the period",
			     where, delayed, t->buffer,
			     units_format_duration(t->period_ns - (uint64_t)t->buffer *
						   t->min_interarrival_ns, a, sizeof(a)));
	}
	return 0;
}

/* The adaptive clamps: below the deadline, and min below max. */
static int check_adaptive(struct pctx *c, struct target *t, const struct given *g,
			  const char *where)
{
	yaml_node_t *min_node = map_value(c, g[T_ADAPTIVE].val, "min_runtime");
	yaml_node_t *max_node = map_value(c, g[T_ADAPTIVE].val, "max_runtime");
	char a[UNITS_FMT_LEN], b[UNITS_FMT_LEN];
	uint64_t lo, hi;

	if (g[T_ADAPTIVE].key && t->mode != MODE_ADAPTIVE)
		return errat(c, g[T_ADAPTIVE].key, "%s: adaptive settings need mode: adaptive",
			     where);
	if (t->mode != MODE_ADAPTIVE)
		return 0;
	lo = profile_adaptive_min_runtime(t, t->period_ns);
	hi = profile_adaptive_max_runtime(t, t->period_ns);
	if (max_node && t->adaptive.max_runtime_ns > t->deadline_ns)
		return errat(c, max_node, "%s: adaptive.max_runtime %s exceeds the deadline %s",
			     where, units_format_duration(t->adaptive.max_runtime_ns, a, sizeof(a)),
			     units_format_duration(t->deadline_ns, b, sizeof(b)));
	if (lo > hi && min_node && lo == t->adaptive.min_runtime_ns)
		return errat(c, min_node,
			     "%s: adaptive.min_runtime %s is above adaptive.max_runtime %s",
			     where, units_format_duration(lo, a, sizeof(a)),
			     units_format_duration(hi, b, sizeof(b)));
	if (lo > hi)
		return errat(c, max_node ? max_node : g[T_ADAPTIVE].key,
			     "%s: adaptive.max_runtime %s is below the buffering bound: the "
			     "budget must stay above period - buffer * min_interarrival, at "
			     "least %s", where, units_format_duration(hi, a, sizeof(a)),
			     units_format_duration(lo, b, sizeof(b)));
	return 0;
}

static void target_defaults(struct target *t, yaml_node_t *node)
{
	t->line = (int)node->start_mark.line + 1;
	t->col = (int)node->start_mark.column + 1;
	t->secondary = true;
	t->mode = MODE_STATIC;
	t->adaptive = (struct adaptive_cfg){
		.sample_ns = PROFILE_ADAPTIVE_SAMPLE_NS,
		.gain = PROFILE_ADAPTIVE_GAIN,
		.window = PROFILE_ADAPTIVE_WINDOW,
		.default_job_ns = PROFILE_ADAPTIVE_DEFAULT_JOB_NS,
		.hysteresis_ns = PROFILE_ADAPTIVE_HYSTERESIS_NS,
	};
}

/* The target's name, read first: the messages about its other keys name it. */
static int target_name(struct pctx *c, yaml_node_t *node, size_t index, struct target *t)
{
	yaml_node_t *val = map_value(c, node, "name");
	char where[TARGET_NAME_MAX + 32];
	const char *name = NULL;
	int rc;

	snprintf(where, sizeof(where), "targets[%zu]", index);
	if (!val)
		return missing_key(c, node, where, "name");
	snprintf(where, sizeof(where), "targets[%zu]: name", index);
	rc = get_text(c, val, where, &name);
	if (rc)
		return rc;
	if (!valid_target_name(name))
		return errat(c, val, "%s: '%s' is not a valid target name "
			     "([A-Za-z0-9_.-], 1 to 63 characters)", where, name);
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

static int parse_target(struct pctx *c, yaml_node_t *node, size_t index, struct target *t)
{
	struct given g[T_NKEYS] = { { NULL } };
	char where[TARGET_NAME_MAX + 32], prefix[TARGET_NAME_MAX + 40];
	int rc;

	target_defaults(t, node);
	if (node->type != YAML_MAPPING_NODE)
		return errat(c, node, "targets[%zu]: expected a mapping (name, runtime, period, "
			     "...), got %s", index, node_kind(node));
	rc = target_name(c, node, index, t);
	if (rc)
		return rc;
	snprintf(where, sizeof(where), "target '%s'", t->name);
	snprintf(prefix, sizeof(prefix), "%s: ", where);
	rc = map_walk(c, node, &target_mapping, t, where, prefix, g);
	if (!rc)
		rc = check_kind(c, node, t, g, where);
	if (!rc)
		rc = check_times(c, node, t, g, where);
	if (!rc)
		rc = check_device(c, t, g, where);
	if (!rc)
		rc = check_adaptive(c, t, g, where);
	return rc;
}

/* Refuses two targets of one name, naming the later one (sorted: no quadratic check). */
static int check_unique_names(struct pctx *c, yaml_node_t *list, struct profile *prof)
{
	size_t i, dup = 0, first = 0;
	struct name_at *v;
	int rc = 0;

	if (prof->n_targets < 2)
		return 0;
	v = malloc(prof->n_targets * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < prof->n_targets; i++)
		v[i] = (struct name_at){ prof->targets[i].name, i };
	if (first_repeat(v, prof->n_targets, &dup, &first))
		rc = errat(c, node_at(c, list->data.sequence.items.start[dup]),
			   "target '%s': duplicate name (first used at line %d)",
			   prof->targets[dup].name, prof->targets[first].line);
	free(v);
	return rc;
}

static int parse_targets(struct pctx *c, yaml_node_t *node, struct profile *prof)
{
	yaml_node_item_t *item;
	size_t count, i;
	int rc;

	if (node->type != YAML_SEQUENCE_NODE)
		return errat(c, node, "targets: expected a list of targets, got %s", node_kind(node));
	count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	if (!count)
		return errat(c, node, "targets: the list is empty: give at least one target");
	prof->targets = calloc(count, sizeof(*prof->targets));
	if (!prof->targets)
		return -ENOMEM;
	for (item = node->data.sequence.items.start, i = 0; i < count; item++, i++) {
		prof->n_targets = i + 1;	/* so that profile_free() frees a partial one */
		rc = parse_target(c, node_at(c, *item), i, &prof->targets[i]);
		if (rc)
			return rc;
	}
	return check_unique_names(c, node, prof);
}

static int parse_root(struct pctx *c, struct profile *prof)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc);
	struct given g[R_NKEYS] = { { NULL } };
	int rc;

	if (!root)
		return errat_mark(c, (yaml_mark_t){ 0 }, "the profile is empty: it needs version: 1 "
				  "and targets");
	if (root->type != YAML_MAPPING_NODE)
		return errat(c, root, "a profile is a mapping with version and targets, got %s",
			     node_kind(root));
	rc = map_walk(c, root, &root_mapping, prof, "profile", "", g);
	if (rc)
		return rc;
	if (!g[R_VERSION].val)
		return missing_key(c, root, "profile", "version");
	if (!g[R_TARGETS].val)
		return missing_key(c, root, "profile", "targets");
	return parse_targets(c, g[R_TARGETS].val, prof);
}

/* Line and column (0-based) of byte @offset of the text, for reader errors. */
static yaml_mark_t mark_of_offset(const char *buf, size_t len, size_t offset)
{
	yaml_mark_t m = { .index = offset };
	size_t i;

	for (i = 0; i < offset && i < len; i++) {
		if (buf[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			m.column++;
		}
	}
	return m;
}

static int syntax_error(struct pctx *c, yaml_parser_t *parser)
{
	yaml_mark_t mark = parser->problem_mark;
	const char *problem = parser->problem ? parser->problem : "cannot be read";

	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		snprintf(c->err, c->errlen, "%s: out of memory while reading", c->name);
		return -ENOMEM;
	case YAML_READER_ERROR:
		mark = mark_of_offset(c->buf, c->len, parser->problem_offset);
		return errat_mark(c, mark, "YAML error: %s", problem);
	default:
		if (parser->context)
			return errat_mark(c, mark, "YAML syntax error: %s %s (line %zu, column %zu)",
					  problem, parser->context, parser->context_mark.line + 1,
					  parser->context_mark.column + 1);
		return errat_mark(c, mark, "YAML syntax error: %s", problem);
	}
}

int profile_parse(const char *buf, size_t len, const char *name, struct profile *prof,
		  char *err, size_t errlen)
{
	struct pctx c = { .name = name ? name : "<string>", .buf = buf, .len = len,
			  .err = err, .errlen = errlen };
	yaml_document_t doc, extra;
	yaml_parser_t parser;
	yaml_node_t *more;
	int rc;

	memset(prof, 0, sizeof(*prof));
	if (errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "%s: out of memory", c.name);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = syntax_error(&c, &parser);
		goto out_parser;
	}
	c.doc = &doc;
	rc = parse_root(&c, prof);
	if (rc)
		goto out_doc;
	/* One profile per file: a second document would be silently ignored otherwise. */
	if (!yaml_parser_load(&parser, &extra)) {
		rc = syntax_error(&c, &parser);
		goto out_doc;
	}
	more = yaml_document_get_root_node(&extra);
	if (more)
		rc = errat(&c, more, "a second YAML document: a profile file holds one document");
	yaml_document_delete(&extra);
	if (rc)
		goto out_doc;
	prof->path = strdup(c.name);
	if (!prof->path)
		rc = -ENOMEM;
out_doc:
	yaml_document_delete(&doc);
out_parser:
	yaml_parser_delete(&parser);
	if (rc) {
		if (rc == -ENOMEM && errlen && !err[0])
			snprintf(err, errlen, "%s: out of memory", c.name);
		profile_free(prof);
	}
	return rc;
}

static int not_regular(const char *path, mode_t mode, char *err, size_t errlen)
{
	const char *what = S_ISFIFO(mode) ? " (a FIFO)" : S_ISDIR(mode) ? " (a directory)" :
			   S_ISCHR(mode) ? " (a character device)" :
			   S_ISBLK(mode) ? " (a block device)" : S_ISSOCK(mode) ? " (a socket)" : "";

	snprintf(err, errlen, "%s: not a regular file%s: a profile must be one", path, what);
	return -EINVAL;
}

int profile_load(const char *path, struct profile *prof, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd, rc;

	memset(prof, 0, sizeof(*prof));
	/*
	 * A FIFO or a device must not block the daemon (socket, hotplug, watchdog) in open()
	 * or read(): look before opening, open non-blocking, and look again at what opened.
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return not_regular(path, st.st_mode, err, errlen);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(-rc));
		goto out_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = not_regular(path, st.st_mode, err, errlen);
		goto out_fd;
	}
	if (st.st_size > PROFILE_SIZE_MAX) {
		rc = -EFBIG;
		snprintf(err, errlen, "%s: too large for a profile (%lld bytes, at most %d)", path,
			 (long long)st.st_size, PROFILE_SIZE_MAX);
		goto out_fd;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out_fd;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
			goto out_buf;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	rc = profile_parse(buf, got, path, prof, err, errlen);
out_buf:
	free(buf);
out_fd:
	close(fd);
	return rc;
}

static void target_free(struct target *t)
{
	free(t->interface);
	free(t->irqs);
	free(t->action_glob);
	free(t->driver);
	free(t->task_comm);
	free(t->pids);
	free(t->task_cgroup);
}

void profile_free(struct profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		target_free(&prof->targets[i]);
	free(prof->targets);
	free(prof->path);
	memset(prof, 0, sizeof(*prof));
}

int profile_find_target(const struct profile *prof, const char *name)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		if (!strcmp(prof->targets[i].name, name))
			return (int)i;
	return -1;
}

enum profile_buffer_verdict profile_buffer_check(const struct target *t, uint64_t runtime_ns,
						 uint64_t period_ns)
{
	if (!t->min_interarrival_ns || !t->buffer)
		return PROFILE_BUFFER_UNKNOWN;
	if (runtime_ns >= period_ns)
		return PROFILE_BUFFER_OK;
	/* (T - Q)/P < N_c  <=>  T - Q < N_c * P, exact in 128 bits */
	return (unsigned __int128)(period_ns - runtime_ns) <
			       (unsigned __int128)t->buffer * t->min_interarrival_ns
		       ? PROFILE_BUFFER_OK
		       : PROFILE_BUFFER_VIOLATED;
}

const char *profile_buffer_verdict_name(enum profile_buffer_verdict v)
{
	switch (v) {
	case PROFILE_BUFFER_OK:
		return "ok";
	case PROFILE_BUFFER_VIOLATED:
		return "violated";
	default:
		return "unknown";
	}
}

/* D keeps its ratio to T when the period changes at run time. */
static uint64_t deadline_for(const struct target *t, uint64_t period_ns)
{
	if (!t->period_ns || period_ns == t->period_ns)
		return t->deadline_ns;
	return (uint64_t)((unsigned __int128)t->deadline_ns * period_ns / t->period_ns);
}

uint64_t profile_adaptive_min_runtime(const struct target *t, uint64_t period_ns)
{
	uint64_t lo = t->adaptive.min_runtime_ns ? t->adaptive.min_runtime_ns : 1000;

	if (t->min_interarrival_ns && t->buffer) {
		unsigned __int128 held = (unsigned __int128)t->buffer * t->min_interarrival_ns;

		/* smallest Q with T - Q < N_c * P */
		if (held < period_ns && period_ns - (uint64_t)held + 1 > lo)
			lo = period_ns - (uint64_t)held + 1;
	}
	return lo < PROFILE_RUNTIME_MIN_NS ? PROFILE_RUNTIME_MIN_NS : lo;
}

uint64_t profile_adaptive_max_runtime(const struct target *t, uint64_t period_ns)
{
	if (t->adaptive.max_runtime_ns)
		return t->adaptive.max_runtime_ns;
	return deadline_for(t, period_ns);
}
