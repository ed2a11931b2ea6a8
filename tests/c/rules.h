/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rules.h - reads the shared case tables of tests/data/rules/ (tab-separated, # comments),
 * which tests/python/test_rules.py reads too: one table pins the C and the Python home of
 * a rule to the same answers.
 */
#ifndef IRQRES_TEST_RULES_H
#define IRQRES_TEST_RULES_H

#include <stdio.h>
#include <string.h>

#define RULES_DIR "../data/rules/"
#define RULES_FIELDS 8

struct rules_table {
	FILE *f;
	const char *name;
	int lineno;
	char line[1024];
	char *field[RULES_FIELDS];	/* "<empty>" read as "" */
	int n;
};

static inline FILE *rules_open(struct rules_table *t, const char *name)
{
	char path[256];

	memset(t, 0, sizeof(*t));
	t->name = name;
	snprintf(path, sizeof(path), RULES_DIR "%s", name);
	t->f = fopen(path, "r");
	return t->f;
}

/* The next case of @t split into its fields; 0 at the end of the table. */
static inline int rules_next(struct rules_table *t)
{
	while (fgets(t->line, sizeof(t->line), t->f)) {
		char *p = t->line, *save = NULL;

		t->lineno++;
		t->line[strcspn(t->line, "\n")] = '\0';
		if (!t->line[0] || t->line[0] == '#')
			continue;
		t->n = 0;
		for (p = strtok_r(p, "\t", &save); p && t->n < RULES_FIELDS;
		     p = strtok_r(NULL, "\t", &save))
			t->field[t->n++] = strcmp(p, "<empty>") ? p : "";
		return 1;
	}
	fclose(t->f);
	t->f = NULL;
	return 0;
}

#endif
