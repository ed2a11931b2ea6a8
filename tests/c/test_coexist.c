// SPDX-License-Identifier: GPL-2.0-only
/* irqres beside the tools RT machines run (docs/coexistence.md), on fixture trees:
 * tuned's realtime profile (sched_rt_runtime_us = -1), a partition systemd made
 * (CPUSetPartition=), an IRQ that irqbalance moved off its partition. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpuset.h"
#include "fixtree.h"
#include "irqres.h"
#include "json.h"
#include "owner.h"
#include "plan.h"
#include "plan_report.h"

#define MS 1000000ULL

static struct target targets[3];
static struct profile prof = { .path = "p.yaml", .targets = targets };
static struct match mv[3];
static struct match_list ml = { .v = mv, .cap = 3 };

static int setup(void **state)
{
	if (fixtree_setup_roots(state))
		return -1;
	fixtree_file("proc/sys/kernel/sched_rt_period_us", "1000000\n");
	fixtree_file("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu\n");
	memset(targets, 0, sizeof(targets));
	memset(mv, 0, sizeof(mv));
	prof.n_targets = 0;
	ml.n = 0;
	plan_limits_changed();
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	plan_limits_changed();
	return fixtree_teardown(state);
}

/* A target of Q/T selecting one thread: a task (irq < 0) or IRQ thread irq. */
static struct match *add(const char *comm, pid_t pid, int irq, const char *cpus,
			 uint64_t q, uint64_t t)
{
	struct target *tg = &targets[prof.n_targets];
	struct match *m = &mv[ml.n++];

	snprintf(tg->name, sizeof(tg->name), "t%zu", prof.n_targets);
	tg->kind = irq >= 0 ? TARGET_IRQ : TARGET_TASK;
	tg->runtime_ns = q;
	tg->deadline_ns = tg->period_ns = t;
	m->target = prof.n_targets++;
	m->thread.pid = pid;
	m->thread.irq = irq;
	m->thread.is_irq = irq >= 0;
	m->thread.policy = irq >= 0 ? SCHED_FIFO : SCHED_OTHER;
	m->thread.priority = irq >= 0 ? 50 : 0;
	snprintf(m->thread.comm, sizeof(m->thread.comm), "%s", comm);
	assert_int_equal(cpuset_list_parse(cpus, &m->thread.affinity), 0);
	return m;
}

static bool has_warning(const struct plan *plan, const char *text)
{
	for (size_t i = 0; i < plan->n_warnings; i++)
		if (strstr(plan->warnings[i], text))
			return true;
	return false;
}

static void build(struct plan *plan)
{
	struct plan_env env;

	assert_int_equal(plan_env_read(&env, true), 0);
	assert_int_equal(plan_build_env(&prof, &ml, &env, plan), 0);
	plan_env_free(&env);
}

/* tuned's realtime profile: the kernel admits everything, the plan says so loudly. */
static void test_tuned_realtime_admission_off(void **state)
{
	struct plan plan;
	struct json j;

	(void)state;
	fixtree_file("sys/devices/system/cpu/online", "0-1\n");
	for (int i = 0; i < 3; i++)	/* 2.7 CPUs of reservations on 2 CPUs */
		add("app", 300 + i, -1, "0-1", 9 * MS, 10 * MS);
	/* with admission on, the kernel would refuse the third */
	build(&plan);
	assert_false(plan.feasible);
	assert_false(plan.kernel_admission_off);
	assert_false(has_warning(&plan, "ADMISSION CONTROL IS OFF"));
	plan_free(&plan);

	fixtree_file("proc/sys/kernel/sched_rt_runtime_us", "-1\n");
	plan_limits_changed();
	build(&plan);
	assert_true(plan.feasible);	/* as the kernel will */
	assert_true(plan.kernel_admission_off);
	assert_true(plan.domains[0].unlimited);
	assert_true(has_warning(&plan, "ADMISSION CONTROL IS OFF: kernel.sched_rt_runtime_us is "
				"-1 (tuned's realtime profile sets it): the kernel accepts every "
				"SCHED_DEADLINE reservation whatever the bandwidth"));
	assert_true(has_warning(&plan, "CPUs 0-1: the SCHED_DEADLINE reservations add up to 2.70 "
				"CPUs, more than the 2 there"));
	assert_string_equal(plan_report_summary(&plan), "the kernel will accept it, but "
			    "ADMISSION CONTROL IS OFF (sched_rt_runtime_us = -1): no reservation "
			    "is guaranteed");
	json_init(&j);
	plan_report_json(&plan, &j);
	assert_int_equal(json_error(&j), 0);
	assert_non_null(strstr(json_buf(&j), "\"kernel_admission\":\"off\","
			       "\"warnings\":[\"ADMISSION CONTROL IS OFF"));
	assert_non_null(strstr(json_buf(&j), "ADMISSION CONTROL IS OFF"));
	json_fini(&j);
	plan_free(&plan);

	/* within the CPUs: the loud warning, no overload */
	ml.n = 1;
	prof.n_targets = 1;
	build(&plan);
	assert_true(has_warning(&plan, "ADMISSION CONTROL IS OFF"));
	assert_false(has_warning(&plan, "add up to"));
	plan_free(&plan);
}

/* A partition systemd made (CPUSetPartition=): used as the kernel's root domain, never
 * split, joined, rewritten or removed. */
static void test_systemd_partition_untouched(void **state)
{
	struct plan plan;
	struct match *m;

	(void)state;
	fixtree_file("sys/devices/system/cpu/online", "0-3\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus", "1-2\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.effective", "1-2\n");
	fixtree_file("proc/irq/11/effective_affinity_list", "1\n");
	m = add("irq/11-eth0", 105, 11, "1", 2 * MS, 10 * MS);
	build(&plan);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].refusal, EPERM);
	assert_string_equal(plan.items[0].verdict, "EPERM: thread pinned to CPU 1, root domain "
			    "spans 1-2; its CPUs belong to cpuset partition rt.slice, which irqres "
			    "does not split");
	for (size_t i = 0; i < plan.n_domains; i++)
		assert_false(plan.domains[i].is_new);
	plan_free(&plan);

	/* a thread on all of its CPUs takes SCHED_DEADLINE there, nothing moved */
	fixtree_file("proc/irq/11/effective_affinity_list", "1-2\n");
	assert_int_equal(cpuset_list_parse("1-2", &m->thread.affinity), 0);
	build(&plan);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	assert_string_equal(plan.domains[plan.items[0].domain].partition, "rt.slice");
	plan_free(&plan);

	/* irqres removes only its own partitions (irqres.*): systemd's stays as it was */
	assert_int_equal(cpuset_partition_remove("rt.slice"), -EINVAL);
	assert_string_equal(fixtree_read("cgroup/rt.slice/cpuset.cpus.partition"), "root\n");
	assert_string_equal(fixtree_read("cgroup/rt.slice/cpuset.cpus"), "1-2\n");
}

/* irqbalance moved a reserved thread's IRQ off its partition: named, so that the drift
 * check reports it (and leaves it: irqres does not move IRQs). */
static void test_irqbalance_moved_irq(void **state)
{
	char what[400];

	(void)state;
	fixtree_file("proc/irq/11/effective_affinity_list", "1\n");
	what[0] = '\0';
	assert_int_equal(owner_irq_moved(11, "irqres.cpu1", what, sizeof(what)), 0);
	assert_string_equal(what, "");
	fixtree_file("proc/irq/11/effective_affinity_list", "0\n");
	assert_int_equal(owner_irq_moved(11, "irqres.cpu1", what, sizeof(what)), 1);
	assert_string_equal(what, "IRQ 11 fires on CPUs 0 now, outside cpuset partition "
			    "irqres.cpu1: its affinity was changed (irqbalance, or a write to "
			    "/proc/irq/11/smp_affinity), and its thread follows it at its next "
			    "interrupt, out of its root domain; irqresd does not move IRQs back (ban "
			    "the IRQ from irqbalance: --banirq=11)");
	/* within a wider partition, or a partition not named by its CPUs: nothing to say */
	assert_int_equal(owner_irq_moved(11, "irqres.cpu0-1", what, sizeof(what)), 0);
	assert_int_equal(owner_irq_moved(11, "rt.slice", what, sizeof(what)), 0);
	/* an IRQ not started yet (no effective affinity): not known, not moved */
	fixtree_file("proc/irq/11/effective_affinity_list", "\n");
	fixtree_file("proc/irq/11/smp_affinity_list", "0\n");
	assert_int_equal(owner_irq_moved(11, "irqres.cpu1", what, sizeof(what)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tuned_realtime_admission_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_systemd_partition_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_irqbalance_moved_irq, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
