/* SPDX-License-Identifier: GPL-2.0-only */
/* test_dlcheck.c - the kernel's SCHED_DEADLINE parameter rules, and the plan refusing
 * what they refuse. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dlcheck.h"
#include "fixtree.h"
#include "irqres.h"
#include "plan.h"

#define US 1000ULL
#define MS 1000000ULL

static int setup(void **state)
{
	if (fixtree_setup(state))
		return -1;
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

/* The period limits come from /proc/sys/kernel; without the files, the kernel's
 * defaults. */
static void test_limits_read(void **unused)
{
	struct dlcheck_limits l;

	dlcheck_limits_read(&l);
	assert_int_equal(l.period_min_ns, 100 * US);
	assert_int_equal(l.period_max_ns, 4194304 * US);
	fixtree_file("proc/sys/kernel/sched_deadline_period_min_us", "1000\n");
	fixtree_file("proc/sys/kernel/sched_deadline_period_max_us", "2000000\n");
	dlcheck_limits_read(&l);
	assert_int_equal(l.period_min_ns, 1 * MS);
	assert_int_equal(l.period_max_ns, 2000 * MS);
}

static void test_rules(void **unused)
{
	static const struct {
		uint64_t q, d, t;
		const char *why;
	} cases[] = {
		{ 1 * MS, 10 * MS, 10 * MS, NULL },
		{ 1024, 100 * US, 100 * US, NULL },
		{ 1 * MS, 4194304 * US, 4194304 * US, NULL },
		{ 1023, 10 * MS, 10 * MS, "runtime 1.023us is below the kernel's minimum of 1024ns" },
		{ 1 * MS, 1ULL << 63, 1ULL << 63, "is not below 2^63 ns" },
		{ 2 * MS, 1 * MS, 10 * MS, "runtime 2ms is larger than the deadline 1ms" },
		{ 1 * MS, 20 * MS, 10 * MS, "deadline 20ms is larger than the period 10ms" },
		{ 10 * US, 50 * US, 50 * US, "period 50us is below the kernel's minimum 100us "
		  "(sched_deadline_period_min_us 100)" },
		{ 1 * MS, 5000 * MS, 5000 * MS, "period 5s is above the kernel's maximum "
		  "4.194304s (sched_deadline_period_max_us 4194304)" },
		{ 1 * MS, 10 * MS, (1ULL << 63) - 1, "period 9223372036.854775807s is above the "
		  "kernel's maximum" },
	};
	struct dlcheck_limits l;
	char why[256];

	dlcheck_limits_read(&l);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = dlcheck_params(&l, cases[i].q, cases[i].d, cases[i].t, why, sizeof(why));

		if (!cases[i].why) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, -EINVAL);
		if (!strstr(why, cases[i].why))
			fail_msg("case %zu: got '%s', want '%s'", i, why, cases[i].why);
	}
}

/* The plan refuses what the kernel would, naming the target and the limit; the same for
 * set-budget's plan, and the limits follow the settable /proc root. */
static void test_plan_refuses(void **unused)
{
	struct target t = { .name = "nic", .runtime_ns = 1 * MS, .deadline_ns = 5000 * MS,
			    .period_ns = 5000 * MS, .kind = TARGET_TASK };
	struct profile prof = { .path = "p.yaml", .targets = &t, .n_targets = 1 };
	struct match m = { .target = 0 };
	struct match_list ml = { .v = &m, .n = 1, .cap = 1 };
	struct plan_env env = { .rt_runtime_us = 950000, .rt_period_us = 1000000 };
	struct plan plan;

	CPU_SET(0, &env.online);
	CPU_SET(1, &env.online);
	m.thread.pid = 501;
	m.thread.irq = -1;
	snprintf(m.thread.comm, sizeof(m.thread.comm), "player");
	CPU_SET(0, &m.thread.affinity);
	CPU_SET(1, &m.thread.affinity);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].refusal, EINVAL);
	assert_string_equal(plan.items[0].verdict, "EINVAL: target 'nic': period 5s is above the "
			    "kernel's maximum 4.194304s (sched_deadline_period_max_us 4194304)");
	plan_free(&plan);

	fixtree_file("proc/sys/kernel/sched_deadline_period_max_us", "8000000\n");
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	plan_free(&plan);

	assert_int_equal(plan_build_budget(&m.thread, 1, 10 * US, 50 * US, 50 * US, &env, &plan),
			 0);
	assert_false(plan.feasible);
	assert_string_equal(plan_first_refusal(&plan)->verdict, "EINVAL: period 50us is below the "
			    "kernel's minimum 100us (sched_deadline_period_min_us 100)");
	plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_limits_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_refuses, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
