/* SPDX-License-Identifier: GPL-2.0-only */
/* test_irqname.c - the IRQ thread name rule, from the cases shared with Python. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "irqname.h"
#include "rules.h"

/* Every case of irq-thread-names.tsv: comm, then irq, s or -, action; or "no". */
static void test_irqname_parse_table(void **state)
{
	struct rules_table t;
	int cases = 0;

	assert_non_null(rules_open(&t, "irq-thread-names.tsv"));
	while (rules_next(&t)) {
		struct irqname name = { .irq = -7 };
		const char *comm = t.field[0];
		int rc = irqname_parse(comm, &name);

		if (t.n == 2 && !strcmp(t.field[1], "no")) {
			if (rc != -EINVAL)
				fail_msg("%s:%d: '%s' read as IRQ %d, want not an IRQ thread",
					 t.name, t.lineno, comm, name.irq);
		} else if (t.n != 4) {
			fail_msg("%s:%d: not a case", t.name, t.lineno);
		} else if (rc || name.irq != atoi(t.field[1]) ||
			   name.secondary != !strcmp(t.field[2], "s") ||
			   strcmp(name.action, t.field[3])) {
			fail_msg("%s:%d: '%s' read as rc %d irq %d secondary %d action '%s'",
				 t.name, t.lineno, comm, rc, name.irq, name.secondary,
				 rc ? "" : name.action);
		}
		cases++;
	}
	assert_true(cases >= 20);
}

/* Every case of irq-thread-actions.tsv: comm, all actions, then s or -, served ones. */
static void test_irqname_own_actions_table(void **state)
{
	struct rules_table t;
	int cases = 0;

	assert_non_null(rules_open(&t, "irq-thread-actions.tsv"));
	while (rules_next(&t)) {
		char out[256];
		bool secondary = false;
		int rc;

		if (t.n != 4)
			fail_msg("%s:%d: not a case", t.name, t.lineno);
		rc = irqname_own_actions(t.field[0], t.field[1], out, sizeof(out), &secondary);
		if (rc || secondary != !strcmp(t.field[2], "s") || strcmp(out, t.field[3]))
			fail_msg("%s:%d: '%s' of '%s': rc %d secondary %d serves '%s'", t.name,
				 t.lineno, t.field[0], t.field[1], rc, secondary, rc ? "" : out);
		cases++;
	}
	assert_true(cases >= 10);
}

/* Not a name: -EINVAL; an output too short: -ENAMETOOLONG, never a cut list. */
static void test_irqname_own_actions_errors(void **state)
{
	char out[16];
	bool secondary;

	assert_int_equal(irqname_own_actions("kworker/0:1", "eth0", out, sizeof(out),
					     &secondary), -EINVAL);
	assert_int_equal(irqname_own_actions("irq/11-eth", "eth0,eth1", out, 5, &secondary),
			 -ENAMETOOLONG);
	assert_int_equal(irqname_own_actions("irq/11-x", "eth0,eth1", out, 5, &secondary),
			 -ENAMETOOLONG);
	assert_int_equal(irqname_own_actions("irq/11-eth", "eth0,eth1", out, sizeof(out),
					     &secondary), 0);
	assert_string_equal(out, "eth0,eth1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_irqname_parse_table),
		cmocka_unit_test(test_irqname_own_actions_table),
		cmocka_unit_test(test_irqname_own_actions_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
