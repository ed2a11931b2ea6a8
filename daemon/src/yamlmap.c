/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * yamlmap.c - table-driven reading of a YAML document; see yamlmap.h.
 *
 * The whole document is loaded first, then walked; every node keeps its marks, so an
 * error anywhere can point at the line and column of the offending key or value.
 */
#include "yamlmap.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int verror(struct yamlmap *c, yaml_mark_t mark, const char *fmt, va_list ap)
{
	int n = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->name, mark.line + 1,
			 mark.column + 1);

	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	return -EINVAL;
}

int yamlmap_error_at(struct yamlmap *c, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verror(c, mark, fmt, ap);
	va_end(ap);
	return rc;
}

int yamlmap_error(struct yamlmap *c, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verror(c, node->start_mark, fmt, ap);
	va_end(ap);
	return rc;
}

yaml_node_t *yamlmap_node(struct yamlmap *c, int index)
{
	return yaml_document_get_node(&c->doc, index);
}

const char *yamlmap_scalar(const yaml_node_t *node)
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
	s = yamlmap_scalar(node);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

const char *yamlmap_kind(const yaml_node_t *node)
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
int yamlmap_get_text(struct yamlmap *c, yaml_node_t *node, const char *what, const char **out)
{
	if (node->type != YAML_SCALAR_NODE || is_null(node))
		return yamlmap_error(c, node, "%s: expected a string, got %s", what,
				     yamlmap_kind(node));
	/* "x\0zz" would be read as "x" */
	if (strlen(yamlmap_scalar(node)) != node->data.scalar.length)
		return yamlmap_error(c, node, "%s: contains a NUL byte (\\0) at offset %zu",
				     what, strlen(yamlmap_scalar(node)));
	*out = yamlmap_scalar(node);
	return 0;
}

static int get_string(struct yamlmap *c, yaml_node_t *node, const char *what, char **out)
{
	const char *s = NULL;
	int rc = yamlmap_get_text(c, node, what, &s);

	if (rc)
		return rc;
	if (!*s)
		return yamlmap_error(c, node, "%s: must not be empty", what);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

int yamlmap_get_duration(struct yamlmap *c, yaml_node_t *node, const char *what, uint64_t *ns)
{
	const char *s = NULL, *why;
	int rc = yamlmap_get_text(c, node, what, &s);

	if (rc)
		return yamlmap_error(c, node, "%s: expected a duration such as 2ms, got %s", what,
				     yamlmap_kind(node));
	if (units_parse_duration(s, ns, &why))
		return yamlmap_error(c, node, "%s: '%s': %s", what, s, why);
	return 0;
}

/* A plain decimal integer in [min, max]. */
int yamlmap_get_uint(struct yamlmap *c, yaml_node_t *node, const char *what, unsigned long long min,
		     unsigned long long max, unsigned long long *out)
{
	const char *s, *p;
	unsigned long long v = 0;

	if (node->type != YAML_SCALAR_NODE || is_null(node))
		return yamlmap_error(c, node, "%s: expected an integer, got %s", what,
				     yamlmap_kind(node));
	s = yamlmap_scalar(node);
	if (!is_plain(node) || !*s)
		return yamlmap_error(c, node, "%s: expected an integer, got the string '%s'",
				     what, s);
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9') {
			if (*p == '-' && p == s)
				return yamlmap_error(c, node, "%s: must not be negative, got %s",
						     what, s);
			return yamlmap_error(c, node, "%s: expected an integer, got '%s'", what, s);
		}
		if (v > (max - (unsigned)(*p - '0')) / 10)
			return yamlmap_error(c, node, "%s: %s is too large (at most %llu)", what,
					     s, max);
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < min)
		return yamlmap_error(c, node, "%s: %s is too small (at least %llu)", what, s, min);
	*out = v;
	return 0;
}

static int get_bool(struct yamlmap *c, yaml_node_t *node, const char *what, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					   "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off", "Off", "OFF" };
	size_t i;

	if (is_plain(node)) {
		for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (!strcmp(yamlmap_scalar(node), yes[i])) {
				*out = true;
				return 0;
			}
			if (!strcmp(yamlmap_scalar(node), no[i])) {
				*out = false;
				return 0;
			}
		}
		if (!is_null(node))
			return yamlmap_error(c, node, "%s: expected true or false, got '%s'", what,
					     yamlmap_scalar(node));
	} else if (node->type == YAML_SCALAR_NODE) {
		return yamlmap_error(c, node, "%s: expected true or false, got the string '%s'",
				     what, yamlmap_scalar(node));
	}
	return yamlmap_error(c, node, "%s: expected true or false, got %s", what,
			     yamlmap_kind(node));
}

int yamlmap_get_double(struct yamlmap *c, yaml_node_t *node, const char *what, double *out)
{
	const char *s;
	char *end;
	double v;

	if (!is_plain(node) || is_null(node))
		return yamlmap_error(c, node, "%s: expected a number, got %s", what,
				     node->type == YAML_SCALAR_NODE && !is_null(node) ? "a string"
				     : yamlmap_kind(node));
	s = yamlmap_scalar(node);
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return yamlmap_error(c, node, "%s: expected a number, got '%s'", what, s);
	*out = v;
	return 0;
}

/* A scalar or a list of integers in [min, max] into a new int array of *@n. */
int yamlmap_one_or_list(struct yamlmap *c, yaml_node_t *node, const char *what,
			const char *expect, yaml_node_item_t **start, size_t *count)
{
	*start = NULL;
	*count = 1;
	if (node->type == YAML_SEQUENCE_NODE) {
		*start = node->data.sequence.items.start;
		*count = (size_t)(node->data.sequence.items.top - *start);
		if (!*count)
			return yamlmap_error(c, node, "%s: the list is empty", what);
	} else if (node->type != YAML_SCALAR_NODE) {
		return yamlmap_error(c, node, "%s: expected %s, got %s", what, expect,
				     yamlmap_kind(node));
	}
	return 0;
}

static int get_int_list(struct yamlmap *c, yaml_node_t *node, const char *what, int min, int max,
			int **out, size_t *n)
{
	yaml_node_item_t *start;
	unsigned long long v = 0;
	size_t count;
	int rc = yamlmap_one_or_list(c, node, what, "an integer or a list of integers", &start,
				     &count);

	if (rc)
		return rc;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (*n = 0; !rc && *n < count; (*n)++) {
		yaml_node_t *elem = start ? yamlmap_node(c, start[*n]) : node;

		if (elem->type != YAML_SCALAR_NODE)
			rc = yamlmap_error(c, elem, "%s: expected an integer in the list, got %s",
					   what, yamlmap_kind(elem));
		else
			rc = yamlmap_get_uint(c, elem, what, (unsigned long long)min,
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

static int name_at_cmp(const void *a, const void *b)
{
	const struct yamlmap_name *x = a, *y = b;
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
bool yamlmap_first_repeat(struct yamlmap_name *v, size_t n, size_t *dup, size_t *first)
{
	size_t i, g = 0;
	bool found = false;

	qsort(v, n, sizeof(*v), name_at_cmp);
	for (i = 1; i < n; i++) {
		if (strcmp(v[i].name, v[g].name)) {
			g = i;
			continue;
		}
		if (i == g + 1 && (!found || v[i].index < *dup)) {	/* the group's 1st */
			*dup = v[i].index;
			*first = v[g].index;
			found = true;
		}
	}
	return found;
}

/* Refuses a mapping that names one key twice (libyaml keeps both). */
static int check_keys(struct yamlmap *c, yaml_node_t *map, const char *where)
{
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t n = (size_t)(map->data.mapping.pairs.top - pairs), bad, i, dup = 0, first = 0;
	struct yamlmap_name *v;
	int rc = 0;

	/* the first offence in document order: a key that is not a scalar, or a repeat */
	for (bad = 0; bad < n; bad++)
		if (yamlmap_node(c, pairs[bad].key)->type != YAML_SCALAR_NODE)
			break;
	if (bad > 1) {
		v = malloc(bad * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < bad; i++) {
			v[i].name = yamlmap_scalar(yamlmap_node(c, pairs[i].key));
			v[i].index = i;
		}
		if (yamlmap_first_repeat(v, bad, &dup, &first)) {
			yaml_node_t *ka = yamlmap_node(c, pairs[dup].key);
			yaml_node_t *kf = yamlmap_node(c, pairs[first].key);

			rc = yamlmap_error(c, ka, "%s: duplicate key '%s' (first given at line "
					   "%zu)", where, yamlmap_scalar(ka), kf->start_mark.line + 1);
		}
		free(v);
		if (rc)
			return rc;
	}
	if (bad < n) {
		yaml_node_t *ka = yamlmap_node(c, pairs[bad].key);

		return yamlmap_error(c, ka, "%s: a key must be a plain name, got %s", where,
				     yamlmap_kind(ka));
	}
	return 0;
}

/* "a, b, c": the keys of a table, for messages. */
const char *yamlmap_key_list(const struct yamlmap_key *keys, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const struct yamlmap_key *k = keys; k->key && o < len; k++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", k == keys ? "" : ", ", k->key);
	return buf;
}

static int unknown_key(struct yamlmap *c, yaml_node_t *key, const char *where,
		       const struct yamlmap_key *keys)
{
	char known[256];

	return yamlmap_error(c, key, "%s: unknown key '%s' (known keys: %s)", where,
			     yamlmap_scalar(key), yamlmap_key_list(keys, known, sizeof(known)));
}

static const struct yamlmap_key *find_handler(const struct yamlmap_key *keys, const char *key)
{
	for (; keys->key; keys++)
		if (!strcmp(keys->key, key))
			return keys;
	return NULL;
}

/* A key whose value is a mapping of its own: "adaptive.gain" inside "target 'x'". */
static int walk_nested(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *val,
		       void *obj, const char *what)
{
	const struct yamlmap_mapping *sub = k->data;
	char prefix[YAMLMAP_WHAT_MAX + 1];

	if (val->type != YAML_MAPPING_NODE)
		return yamlmap_error(c, val, "%s: expected %s, got %s", what, sub->expect,
				     yamlmap_kind(val));
	snprintf(prefix, sizeof(prefix), "%s.", what);
	return yamlmap_walk(c, val, sub, obj, what, prefix, NULL);
}

/* netplan's process_mapping(): the keys first, then each value through its handler. */
int yamlmap_walk(struct yamlmap *c, yaml_node_t *map, const struct yamlmap_mapping *table,
		 void *obj, const char *where, const char *prefix, struct yamlmap_given *given)
{
	yaml_node_pair_t *pair;
	char what[YAMLMAP_WHAT_MAX];
	int rc = check_keys(c, map, where);

	for (pair = map->data.mapping.pairs.start; !rc && pair < map->data.mapping.pairs.top;
	     pair++) {
		yaml_node_t *key = yamlmap_node(c, pair->key), *val = yamlmap_node(c, pair->value);
		const struct yamlmap_key *k = find_handler(table->keys, yamlmap_scalar(key));

		if (!k)
			return unknown_key(c, key, where, table->keys);
		if (given)
			given[k - table->keys] = (struct yamlmap_given){ key, val };
		snprintf(what, sizeof(what), "%s%s", prefix, k->key);
		if (k->type == YAML_MAPPING_NODE)
			rc = walk_nested(c, k, val, obj, what);
		else
			rc = k->fn(c, k, key, val, obj, what);
	}
	if (!rc && table->done)
		rc = table->done(c, table, map, obj, where);
	return rc;
}

/* The value of @key in @map (a mapping without repeats), or NULL. */
yaml_node_t *yamlmap_value(struct yamlmap *c, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yamlmap_node(c, pair->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp(yamlmap_scalar(k), key))
			return yamlmap_node(c, pair->value);
	}
	return NULL;
}

/* A key read before the others (a target's name) or after them (the targets). */
int yamlmap_on_skip(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		    yaml_node_t *val, void *obj, const char *what)
{
	return 0;
}

int yamlmap_on_string(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what)
{
	return get_string(c, val, what, yamlmap_field(obj, k));
}

void yamlmap_free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

int yamlmap_on_string_list(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			   yaml_node_t *val, void *obj, const char *what)
{
	const struct yamlmap_int_list *r = k->data;
	char ***out = yamlmap_field(obj, k);
	size_t *n = (size_t *)((char *)obj + r->count_offset), count;
	yaml_node_item_t *start;
	int rc = yamlmap_one_or_list(c, val, what, "a string or a list of strings", &start,
				     &count);

	if (rc)
		return rc;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (*n = 0; !rc && *n < count; (*n)++)
		rc = get_string(c, start ? yamlmap_node(c, start[*n]) : val, what, &(*out)[*n]);
	if (rc) {
		yamlmap_free_strings(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int yamlmap_on_int_list(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what)
{
	const struct yamlmap_int_list *r = k->data;

	return get_int_list(c, val, what, r->min, r->max, yamlmap_field(obj, k),
			    (size_t *)((char *)obj + r->count_offset));
}

int yamlmap_on_bool(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		    yaml_node_t *val, void *obj, const char *what)
{
	return get_bool(c, val, what, yamlmap_field(obj, k));
}

/* A duration; with a rule, at least its minimum. */
int yamlmap_on_duration(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
			yaml_node_t *val, void *obj, const char *what)
{
	const struct yamlmap_duration_rule *r = k->data;
	uint64_t *ns = yamlmap_field(obj, k);
	int rc = yamlmap_get_duration(c, val, what, ns);

	if (!rc && r && *ns < r->min)
		rc = yamlmap_error(c, val, "%s: %s", what, r->why);
	return rc;
}

/* An integer in a range into a 32-bit field. */
int yamlmap_on_u32(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		   yaml_node_t *val, void *obj, const char *what)
{
	const struct yamlmap_range *r = k->data;
	unsigned long long v;
	int rc = yamlmap_get_uint(c, val, what, r->min, r->max, &v);

	if (!rc)
		*(uint32_t *)yamlmap_field(obj, k) = (uint32_t)v;
	return rc;
}

/* Which of the two words of @k's choice @val is: 0 or 1 in *@pick. */
int yamlmap_choose(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *val,
		   const char *what, int *pick)
{
	const struct yamlmap_choice *ch = k->data;
	const char *s = NULL;
	int rc = yamlmap_get_text(c, val, what, &s);

	if (rc)
		return rc;
	for (*pick = 0; *pick < 2; (*pick)++)
		if (!strcmp(s, ch->words[*pick]))
			return 0;
	return yamlmap_error(c, val, "%s: '%s' is not %s: use %s or %s", what, s, ch->noun,
			     ch->words[0], ch->words[1]);
}

/* A two-word choice into a bool: true for the second word. */
int yamlmap_on_choice(struct yamlmap *c, const struct yamlmap_key *k, yaml_node_t *key,
		      yaml_node_t *val, void *obj, const char *what)
{
	int pick, rc = yamlmap_choose(c, k, val, what, &pick);

	if (!rc)
		*(bool *)yamlmap_field(obj, k) = pick == 1;
	return rc;
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

static int syntax_error(struct yamlmap *c, yaml_parser_t *parser)
{
	yaml_mark_t mark = parser->problem_mark;
	const char *problem = parser->problem ? parser->problem : "cannot be read";

	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		snprintf(c->err, c->errlen, "%s: out of memory while reading", c->name);
		return -ENOMEM;
	case YAML_READER_ERROR:
		mark = mark_of_offset(c->buf, c->len, parser->problem_offset);
		return yamlmap_error_at(c, mark, "YAML error: %s", problem);
	default:
		if (parser->context)
			return yamlmap_error_at(c, mark, "YAML syntax error: %s %s (line %zu, "
						"column %zu)", problem, parser->context,
						parser->context_mark.line + 1,
						parser->context_mark.column + 1);
		return yamlmap_error_at(c, mark, "YAML syntax error: %s", problem);
	}
}

/* The depth of the collection an event opens or closes: +1, -1 or 0. */
static int depth_step(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return 1;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return -1;
	default:
		return 0;
	}
}

/*
 * Reads the whole stream as events, without building anything, and stops at the first
 * collection nested deeper than YAMLMAP_DEPTH_MAX or the event past YAMLMAP_EVENTS_MAX.
 * libyaml's scanner costs O(flow depth) per token: stopping at a small depth keeps the
 * work linear in the bytes read, and the event count bounds the document's node count
 * (its memory) before yaml_parser_load() builds it.
 */
static int prescan(struct yamlmap *c)
{
	yaml_parser_t p;
	yaml_event_t ev;
	size_t events = 0;
	int depth = 0, rc = 0;
	bool end = false;

	if (!yaml_parser_initialize(&p)) {
		snprintf(c->err, c->errlen, "%s: out of memory", c->name);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)c->buf, c->len);
	while (!rc && !end) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = syntax_error(c, &p);
			break;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		depth += depth_step(&ev);
		if (depth > YAMLMAP_DEPTH_MAX)
			rc = yamlmap_error_at(c, ev.start_mark, "collections nested more than %d "
					      "deep: refused before reading further",
					      YAMLMAP_DEPTH_MAX);
		else if (++events > YAMLMAP_EVENTS_MAX)
			rc = yamlmap_error_at(c, ev.start_mark, "more than %d YAML nodes and "
					      "collection ends: refused before reading further",
					      YAMLMAP_EVENTS_MAX);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

int yamlmap_open(struct yamlmap *c, const char *buf, size_t len, const char *name, char *err,
		 size_t errlen)
{
	int rc;

	*c = (struct yamlmap){ .name = name, .buf = buf, .len = len, .err = err,
			       .errlen = errlen };
	rc = prescan(c);
	if (rc)
		return rc;
	if (!yaml_parser_initialize(&c->parser)) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	c->parser_ready = true;
	yaml_parser_set_input_string(&c->parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&c->parser, &c->doc))
		return syntax_error(c, &c->parser);
	c->doc_loaded = true;
	return 0;
}

int yamlmap_expect_end(struct yamlmap *c, const char *why)
{
	yaml_document_t extra;
	yaml_node_t *more;
	int rc = 0;

	if (!yaml_parser_load(&c->parser, &extra))
		return syntax_error(c, &c->parser);
	more = yaml_document_get_root_node(&extra);
	if (more)
		rc = yamlmap_error(c, more, "a second YAML document: %s", why);
	yaml_document_delete(&extra);
	return rc;
}

yaml_node_t *yamlmap_root(struct yamlmap *c)
{
	return yaml_document_get_root_node(&c->doc);
}

void yamlmap_close(struct yamlmap *c)
{
	if (c->doc_loaded)
		yaml_document_delete(&c->doc);
	if (c->parser_ready)
		yaml_parser_delete(&c->parser);
	c->doc_loaded = c->parser_ready = false;
}
