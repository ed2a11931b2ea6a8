// SPDX-License-Identifier: GPL-2.0-only
/* owner.c on fixture trees: the kernel's defaults, irqres's own state, another irqresd
 * found through the RUN_DIR/lock it holds open, and the plan's verdict on each. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtree.h"
#include "irqres.h"
#include "json.h"
#include "owner.h"
#include "plan.h"
#include "plan_report.h"
#include "state.h"

#define MS 1000000ULL

static struct thread_info irq_thread(int policy, int prio, bool secondary)
{
	struct thread_info ti = { .pid = 105, .starttime = 777, .is_irq = true, .irq = 11,
				  .kthread = true, .policy = policy, .priority = prio,
				  .secondary = secondary };

	snprintf(ti.comm, sizeof(ti.comm), "irq/11-eth0");
	return ti;
}

static int setup(void **state)
{
	if (fixtree_setup_roots(state))
		return -1;
	fixtree_file("proc/1/comm", "systemd\n");
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

/* ti recorded in the state file of run dir rel (under the fixture root). */
static void record(const char *rel, const struct thread_info *ti)
{
	struct irqres_paths keep = irqres_paths;
	struct state st;
	struct state_thread t = { .pid = ti->pid, .starttime = ti->starttime,
				  .policy = SCHED_FIFO, .priority = 50 };
	char err[256];

	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/%s", fixtree_root, rel);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	snprintf(t.comm, sizeof(t.comm), "%s", ti->comm);
	assert_int_equal(state_add_thread(&st, &t), 0);
	state_free(&st);
	irqres_paths = keep;
}

/* A running irqresd (pid) whose fd 3 is the lock of run dir rel. */
static void other_daemon(int pid, const char *rel)
{
	char p[64], lock[300];

	snprintf(p, sizeof(p), "proc/%d/comm", pid);
	fixtree_file(p, "irqresd\n");
	snprintf(p, sizeof(p), "proc/%d/fd/0", pid);
	fixtree_file(p, "");	/* a plain file: no lock */
	snprintf(lock, sizeof(lock), "%s/%s/lock", fixtree_root, rel);
	snprintf(p, sizeof(p), "proc/%d/fd/3", pid);
	assert_int_equal(symlink(lock, fixtree_path(p)), 0);
}

static void test_fresh_rule(void **state)
{
	struct thread_info task = { .pid = 300, .policy = SCHED_OTHER };

	(void)state;
	assert_true(owner_sched_fresh(&(struct thread_info){ .is_irq = true,
							     .policy = SCHED_OTHER }));
	assert_true(owner_sched_fresh(&(struct thread_info){ .is_irq = true,
		.policy = SCHED_FIFO, .priority = 50 }));
	assert_true(owner_sched_fresh(&(struct thread_info){ .is_irq = true, .secondary = true,
		.policy = SCHED_FIFO, .priority = 49 }));
	/* tuna / tuned's scheduler plugin: another priority or RR; stalld: DEADLINE */
	assert_false(owner_sched_fresh(&(struct thread_info){ .is_irq = true,
		.policy = SCHED_FIFO, .priority = 90 }));
	assert_false(owner_sched_fresh(&(struct thread_info){ .is_irq = true,
		.policy = SCHED_RR, .priority = 50 }));
	assert_false(owner_sched_fresh(&(struct thread_info){ .is_irq = true,
		.policy = SCHED_DEADLINE }));
	/* a task's own FIFO/RR is its choice; DEADLINE is someone's reservation */
	assert_true(owner_sched_fresh(&task));
	task.policy = SCHED_FIFO;
	task.priority = 10;
	assert_true(owner_sched_fresh(&task));
	task.policy = SCHED_DEADLINE;
	assert_false(owner_sched_fresh(&task));
}

static void test_owners(void **state)
{
	struct thread_info ti = irq_thread(SCHED_DEADLINE, 0, false);
	struct owner o;
	char want[400];

	(void)state;
	ti.dl_runtime_ns = 2 * MS;
	ti.dl_deadline_ns = ti.dl_period_ns = 10 * MS;
	/* nobody records it: another tool */
	assert_int_equal(owner_find(&ti, true, &o), 0);
	assert_int_equal(o.kind, OWNER_TOOL);
	assert_string_equal(o.sched, "deadline 2ms/10ms/10ms");
	assert_non_null(strstr(o.text, "set by another tool: scheduling is deadline "
			       "2ms/10ms/10ms, which the kernel does not give a new IRQ thread"));
	/* irqres's own state records it: its own, unless asked about others only */
	record("run", &ti);
	assert_int_equal(owner_find(&ti, true, &o), 0);
	assert_int_equal(o.kind, OWNER_NONE);
	assert_int_equal(owner_find(&ti, false, &o), 0);
	assert_int_equal(o.kind, OWNER_TOOL);
	/* another irqresd, running (its lock open), records it: named, even over our own */
	record("other", &ti);
	other_daemon(4242, "other");
	assert_int_equal(owner_find(&ti, true, &o), 0);
	assert_int_equal(o.kind, OWNER_IRQRESD);
	assert_int_equal(o.daemon_pid, 4242);
	snprintf(want, sizeof(want), "%s/other", fixtree_root);
	assert_string_equal(o.run_dir, want);
	snprintf(want, sizeof(want), "reserved by another irqresd (pid 4242, run dir %s/other):"
		 " scheduling is deadline 2ms/10ms/10ms", fixtree_root);
	assert_string_equal(o.text, want);
	/* the same pid reused by a new thread is not its */
	ti.starttime++;
	assert_int_equal(owner_find(&ti, false, &o), 0);
	assert_int_equal(o.kind, OWNER_TOOL);
	/* an irqresd of our own run dir is ourselves */
	ti.starttime--;
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/other", fixtree_root);
	assert_int_equal(owner_find(&ti, true, &o), 0);
	assert_int_equal(o.kind, OWNER_NONE);
	/* a fresh thread is nobody's, whatever the files say */
	ti = irq_thread(SCHED_FIFO, 50, false);
	assert_int_equal(owner_find(&ti, false, &o), 0);
	assert_int_equal(o.kind, OWNER_NONE);
}

/* The plan refuses a thread someone else holds and names it; take_over takes it. */
static void test_plan_verdict(void **state)
{
	struct target tg = { .name = "nic", .runtime_ns = 1 * MS, .deadline_ns = 10 * MS,
			     .period_ns = 10 * MS };
	struct profile prof = { .path = "p.yaml", .targets = &tg, .n_targets = 1 };
	struct match m = { .target = 0, .thread = irq_thread(SCHED_FIFO, 85, false) };
	struct match_list ml = { .v = &m, .n = 1, .cap = 1 };
	struct plan_env env = { .rt_runtime_us = 950000, .rt_period_us = 1000000 };
	struct plan plan;
	struct json j;
	const char *out;

	(void)state;
	CPU_SET(0, &env.online);
	CPU_SET(0, &m.thread.affinity);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].refusal, EBUSY);
	assert_string_equal(plan.items[0].verdict, "taken: set by another tool: scheduling is "
			    "fifo 85, which the kernel does not give a new IRQ thread and no "
			    "running irqresd records (stalld's SCHED_DEADLINE boost, chrt, tuna, "
			    "tuned's scheduler plugin); irqres leaves it alone (take_over: true in "
			    "the target takes it)");
	assert_string_equal(plan_report_summary(&plan),
			    "REFUSED: another irqresd or tool holds a thread it selects");
	json_init(&j);
	plan_report_json(&plan, &j);
	assert_int_equal(json_error(&j), 0);
	out = json_buf(&j);
	assert_non_null(strstr(out, "\"owner\":{\"kind\":\"tool\",\"pid\":null,\"run_dir\":null,"
			       "\"scheduling\":\"fifo 85\",\"text\":\"set by another tool"));
	json_fini(&j);
	plan_free(&plan);

	tg.take_over = true;
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_warnings, 1);
	assert_non_null(strstr(plan.warnings[0], "irq/11-eth0 (pid 105): take_over: taken from "
			       "its holder, set by another tool: scheduling is fifo 85"));
	plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_rule),
		cmocka_unit_test_setup_teardown(test_owners, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_verdict, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
