/* SPDX-License-Identifier: GPL-2.0-only */
/* test_yamlmap.c - the table-driven YAML mapping walker, on a small format of its own. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "yamlmap.h"

/* A format with one of each kind of key: a nested mapping, a choice, a list, a range. */
struct thing {
	char *label;
	bool loud;
	uint32_t count;
	uint64_t wait_ns;
	int *ids;
	size_t n_ids;
	bool inner_on;
	unsigned done_calls;
	size_t inner_line;		/* where "inner" was given (from struct yamlmap_given) */
	bool inner_is_map, later_is_list;
};

static const struct yamlmap_range count_range = { 1, 10 };
static const struct yamlmap_int_list id_rule = { 0, 99, offsetof(struct thing, n_ids) };
static const struct yamlmap_choice volume = { "a volume", { "quiet", "loud" } };
static const struct yamlmap_duration_rule some_wait = { 1000, "must be at least 1us" };

static int inner_done(struct yamlmap *c, const struct yamlmap_mapping *m, yaml_node_t *map,
		      void *obj, const char *where)
{
	((struct thing *)obj)->done_calls++;
	return 0;
}

static const struct yamlmap_mapping inner = {
	.expect = "a mapping of on",
	.keys = (const struct yamlmap_key[]){
		{ "on", YAML_SCALAR_NODE, yamlmap_on_bool, offsetof(struct thing, inner_on), NULL },
		{ 0 },
	},
	.done = inner_done,
};

enum { K_LABEL, K_VOLUME, K_COUNT, K_WAIT, K_IDS, K_INNER, K_LATER, K_N };

static const struct yamlmap_key thing_keys[K_N + 1] = {
	[K_LABEL] = { "label", YAML_SCALAR_NODE, yamlmap_on_string, offsetof(struct thing, label),
		      NULL },
	[K_VOLUME] = { "volume", YAML_SCALAR_NODE, yamlmap_on_choice,
		       offsetof(struct thing, loud), &volume },
	[K_COUNT] = { "count", YAML_SCALAR_NODE, yamlmap_on_u32, offsetof(struct thing, count),
		      &count_range },
	[K_WAIT] = { "wait", YAML_SCALAR_NODE, yamlmap_on_duration,
		     offsetof(struct thing, wait_ns), &some_wait },
	[K_IDS] = { "ids", YAML_NO_NODE, yamlmap_on_int_list, offsetof(struct thing, ids),
		    &id_rule },
	[K_INNER] = { "inner", YAML_MAPPING_NODE, NULL, 0, &inner },
	[K_LATER] = { "later", YAML_SEQUENCE_NODE, yamlmap_on_skip, 0, NULL },
	[K_N] = { 0 },
};

static const struct yamlmap_mapping thing_mapping = { .keys = thing_keys };

/* Walks @text's root as a thing named "thing"; the message (or "") into @err. */
static int walk(const char *text, struct thing *t, struct yamlmap_given *g, char *err,
		size_t errlen)
{
	struct yamlmap c;
	int rc;

	memset(t, 0, sizeof(*t));
	err[0] = '\0';
	rc = yamlmap_open(&c, text, strlen(text), "t.yaml", err, errlen);
	if (!rc)
		rc = yamlmap_walk(&c, yamlmap_root(&c), &thing_mapping, t, "thing", "thing: ", g);
	if (!rc)
		rc = yamlmap_expect_end(&c, "one thing per file");
	if (!rc && g && g[K_INNER].key) {	/* the nodes live until yamlmap_close() */
		t->inner_line = g[K_INNER].key->start_mark.line + 1;
		t->inner_is_map = g[K_INNER].val->type == YAML_MAPPING_NODE;
		t->later_is_list = g[K_LATER].val && g[K_LATER].val->type == YAML_SEQUENCE_NODE;
	}
	yamlmap_close(&c);
	return rc;
}

static void test_yamlmap_reads_every_kind(void **state)
{
	static const char text[] = "label: x\nvolume: loud\ncount: 3\nwait: 2us\nids: [4, 5]\n"
				   "inner: {on: yes}\nlater: [1]\n";
	struct yamlmap_given g[K_N] = { 0 };
	struct thing t;
	char err[256];

	assert_int_equal(walk(text, &t, g, err, sizeof(err)), 0);
	assert_string_equal(t.label, "x");
	assert_true(t.loud);
	assert_int_equal(t.count, 3);
	assert_int_equal(t.wait_ns, 2000);
	assert_int_equal(t.n_ids, 2);
	assert_int_equal(t.ids[1], 5);
	assert_true(t.inner_on);
	assert_int_equal(t.done_calls, 1);
	/* where each key was given: line 6 holds inner, its value is a mapping */
	assert_int_equal(t.inner_line, 6);
	assert_true(t.inner_is_map);
	assert_true(t.later_is_list);
	free(t.label);
	free(t.ids);
}

static void test_yamlmap_refusals(void **state)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "label: x\nlabel: y\n",
		  "t.yaml:2:1: thing: duplicate key 'label' (first given at line 1)" },
		{ "colour: red\n",
		  "t.yaml:1:1: thing: unknown key 'colour' (known keys: label, volume, count, wait, "
		  "ids, inner, later)" },
		{ "inner: {off: 1}\n", "t.yaml:1:9: thing: inner: unknown key 'off' (known keys: on)" },
		{ "inner: 1\n", "t.yaml:1:8: thing: inner: expected a mapping of on, got a scalar" },
		{ "inner: {on: maybe}\n",
		  "t.yaml:1:13: thing: inner.on: expected true or false, got 'maybe'" },
		{ "volume: medium\n",
		  "t.yaml:1:9: thing: volume: 'medium' is not a volume: use quiet or loud" },
		{ "count: 11\n", "t.yaml:1:8: thing: count: 11 is too large (at most 10)" },
		{ "wait: 10ns\n", "t.yaml:1:7: thing: wait: must be at least 1us" },
		{ "ids: [1, 100]\n", "t.yaml:1:10: thing: ids: 100 is too large (at most 99)" },
		{ "label: ''\n", "t.yaml:1:8: thing: label: must not be empty" },
		{ "[a]: 1\n", "t.yaml:1:1: thing: a key must be a plain name, got a list" },
		{ "label: x\n---\nlabel: y\n",
		  "t.yaml:3:1: a second YAML document: one thing per file" },
		{ "label: [x\n",
		  "t.yaml:2:1: YAML syntax error: did not find expected ',' or ']' while parsing a "
		  "flow sequence (line 1, column 8)" },
	};
	size_t i, failed = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct thing t;
		char err[256];
		int rc = walk(cases[i].text, &t, NULL, err, sizeof(err));

		if (rc != -EINVAL || strcmp(err, cases[i].message)) {
			print_error("case %zu: rc %d\n  got:  %s\n  want: %s\n", i, rc, err,
				    cases[i].message);
			failed++;
		}
		free(t.label);
		free(t.ids);
	}
	assert_int_equal(failed, 0);
}

static void test_yamlmap_helpers(void **state)
{
	struct yamlmap_name v[] = { { "b", 0 }, { "a", 1 }, { "c", 2 }, { "a", 3 }, { "b", 4 } };
	size_t dup = 0, first = 0;
	char buf[64];

	/* the first repeat in document order is 'a' at 3, first given at 1 */
	assert_true(yamlmap_first_repeat(v, 5, &dup, &first));
	assert_int_equal(dup, 3);
	assert_int_equal(first, 1);
	/* it sorts v: none repeats among three others */
	v[0].name = "x";
	v[1].name = "y";
	v[2].name = "z";
	assert_false(yamlmap_first_repeat(v, 3, &dup, &first));
	assert_string_equal(yamlmap_key_list(inner.keys, buf, sizeof(buf)), "on");
	assert_string_equal(yamlmap_key_list(thing_keys, buf, 20), "label, volume, coun");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yamlmap_reads_every_kind),
		cmocka_unit_test(test_yamlmap_refusals),
		cmocka_unit_test(test_yamlmap_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
