/* SPDX-License-Identifier: GPL-2.0-only */
/* test_target_kind.c - every kind of target has a whole table of operations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "target_kind.h"

/* Far above any number of kinds: the walk stops at the first value that is no kind. */
#define KINDS_MAX 64

/* Each kind's table: its own value, a unique name, every operation given. */
static void test_target_kind_tables_complete(void **state)
{
	const char *names[KINDS_MAX];
	int k, j;

	for (k = 0; k < KINDS_MAX && target_kind_ops((enum target_kind)k); k++) {
		const struct target_kind_ops *ops = target_kind_ops((enum target_kind)k);

		assert_int_equal(ops->kind, k);
		assert_non_null(ops->name);
		assert_true(ops->name[0] != '\0');
		assert_true(ops->threads == TARGET_THREADS_IRQ ||
			    ops->threads == TARGET_THREADS_SOFTIRQD ||
			    ops->threads == TARGET_THREADS_TASKS);
		assert_non_null(ops->may_take);
		assert_non_null(ops->comm_may_match);
		assert_non_null(ops->changes_unseen);
		for (j = 0; j < k; j++)
			assert_string_not_equal(names[j], ops->name);
		names[k] = ops->name;
	}
	assert_true(k < KINDS_MAX);
	/* the kinds are numbered from 0 without gaps: the four of today at least */
	assert_true(k >= 4);
	assert_non_null(target_kind_ops(TARGET_IRQ));
	assert_non_null(target_kind_ops(TARGET_TASK));
	assert_non_null(target_kind_ops(TARGET_NAPI));
	assert_non_null(target_kind_ops(TARGET_SOFTIRQ));
}

/* The status JSON's names of the kinds. */
static void test_target_kind_names(void **state)
{
	assert_string_equal(target_kind_ops(TARGET_IRQ)->name, "irq");
	assert_string_equal(target_kind_ops(TARGET_TASK)->name, "task");
	assert_string_equal(target_kind_ops(TARGET_NAPI)->name, "napi");
	assert_string_equal(target_kind_ops(TARGET_SOFTIRQ)->name, "softirq");
}

/* IRQ targets take IRQ threads only, task targets no kernel thread. */
static void test_target_kind_may_take(void **state)
{
	struct thread_info irq = { .kthread = true, .is_irq = true, .irq = 11 };
	struct thread_info kworker = { .kthread = true, .irq = -1 };
	struct thread_info user = { .irq = -1 };

	assert_true(target_kind_ops(TARGET_IRQ)->may_take(&irq));
	assert_false(target_kind_ops(TARGET_IRQ)->may_take(&kworker));
	assert_false(target_kind_ops(TARGET_IRQ)->may_take(&user));
	assert_false(target_kind_ops(TARGET_TASK)->may_take(&irq));
	assert_false(target_kind_ops(TARGET_TASK)->may_take(&kworker));
	assert_true(target_kind_ops(TARGET_TASK)->may_take(&user));
	/* napi targets: threaded NAPI kthreads only */
	struct thread_info napi = { .kthread = true, .is_napi = true, .irq = -1 };

	assert_true(target_kind_ops(TARGET_NAPI)->may_take(&napi));
	assert_false(target_kind_ops(TARGET_NAPI)->may_take(&irq));
	assert_false(target_kind_ops(TARGET_NAPI)->may_take(&kworker));
	assert_false(target_kind_ops(TARGET_NAPI)->may_take(&user));
	/* an IRQ target may: with with_napi, its interface's (match.c decides) */
	assert_true(target_kind_ops(TARGET_IRQ)->may_take(&napi));
	assert_false(target_kind_ops(TARGET_TASK)->may_take(&napi));
	/* softirq targets: the per-CPU soft IRQ kthreads only */
	struct thread_info ksoftirqd = { .kthread = true, .is_softirqd = true, .irq = -1 };

	assert_true(target_kind_ops(TARGET_SOFTIRQ)->may_take(&ksoftirqd));
	assert_false(target_kind_ops(TARGET_SOFTIRQ)->may_take(&irq));
	assert_false(target_kind_ops(TARGET_SOFTIRQ)->may_take(&napi));
	assert_false(target_kind_ops(TARGET_SOFTIRQ)->may_take(&kworker));
	assert_false(target_kind_ops(TARGET_SOFTIRQ)->may_take(&user));
	assert_false(target_kind_ops(TARGET_IRQ)->may_take(&ksoftirqd));
	assert_false(target_kind_ops(TARGET_TASK)->may_take(&ksoftirqd));
	assert_false(target_kind_ops(TARGET_NAPI)->may_take(&ksoftirqd));
}

/* The first look at a new thread's name, and the selections a rescan alone sees. */
static void test_target_kind_comm_and_unseen(void **state)
{
	struct target irq = { .kind = TARGET_IRQ };
	struct target any = { .kind = TARGET_TASK };
	char *globs[] = { "rt-*", "ctl" };
	struct target glob = { .kind = TARGET_TASK, .task_comm = { globs, 2 } };
	struct target cg = { .kind = TARGET_TASK, .task_cgroup = (char *)"/rt.slice" };

	assert_true(target_kind_of(&irq)->comm_may_match(&irq, "irq/11-eth0"));
	assert_true(target_kind_of(&irq)->comm_may_match(&irq, "kthreadd"));
	assert_false(target_kind_of(&irq)->comm_may_match(&irq, "rt-app"));
	assert_true(target_kind_of(&any)->comm_may_match(&any, "anything"));
	assert_true(target_kind_of(&glob)->comm_may_match(&glob, "rt-app"));
	assert_true(target_kind_of(&glob)->comm_may_match(&glob, "ctl"));
	assert_false(target_kind_of(&glob)->comm_may_match(&glob, "ctl2"));
	assert_false(target_kind_of(&glob)->comm_may_match(&glob, "irq/11-eth0"));
	assert_false(target_kind_of(&irq)->changes_unseen(&irq));
	assert_false(target_kind_of(&glob)->changes_unseen(&glob));
	assert_true(target_kind_of(&cg)->changes_unseen(&cg));
	/* a NAPI kthread appears when threaded goes to 1: kthreadd's fork, then its name */
	struct target napi = { .kind = TARGET_NAPI, .napi = (char *)"eth0" };

	assert_true(target_kind_of(&napi)->comm_may_match(&napi, "napi/eth0-8193"));
	assert_true(target_kind_of(&napi)->comm_may_match(&napi, "kthreadd"));
	assert_false(target_kind_of(&napi)->comm_may_match(&napi, "irq/11-eth0"));
	assert_false(target_kind_of(&irq)->comm_may_match(&irq, "napi/eth0-8193"));
	struct target device = { .kind = TARGET_IRQ, .interface = (char *)"eth0",
				 .with_napi = true };

	assert_true(target_kind_of(&device)->comm_may_match(&device, "napi/eth0-8193"));
	assert_true(target_kind_of(&device)->comm_may_match(&device, "irq/11-eth0"));
	assert_false(target_kind_of(&napi)->changes_unseen(&napi));
	/* ksoftirqd/N is made when CPU N first comes up */
	struct target sirq = { .kind = TARGET_SOFTIRQ };

	assert_true(target_kind_of(&sirq)->comm_may_match(&sirq, "ksoftirqd/3"));
	assert_true(target_kind_of(&sirq)->comm_may_match(&sirq, "backlog_napi/0"));
	assert_true(target_kind_of(&sirq)->comm_may_match(&sirq, "kthreadd"));
	assert_false(target_kind_of(&sirq)->comm_may_match(&sirq, "ksoftirqd"));
	assert_false(target_kind_of(&sirq)->comm_may_match(&sirq, "irq/11-eth0"));
	assert_false(target_kind_of(&sirq)->changes_unseen(&sirq));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_kind_tables_complete),
		cmocka_unit_test(test_target_kind_names),
		cmocka_unit_test(test_target_kind_may_take),
		cmocka_unit_test(test_target_kind_comm_and_unseen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
