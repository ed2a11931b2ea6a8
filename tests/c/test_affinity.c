/* SPDX-License-Identifier: GPL-2.0-only */
/* test_affinity.c - affinities put back, on processes the test forks (never anything else). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "affinity.h"
#include "children.h"
#include "discover.h"
#include "fixtree.h"

static int teardown(void **unused)
{
	children_kill_all();
	return 0;
}

static int online_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	return sched_getaffinity(0, sizeof(*set), set);
}

static void test_put_back_a_moved_task(void **unused)
{
	cpu_set_t mine, one, now;
	struct thread_info ti;
	pid_t pid = child_spawn("irqres-aff");
	int cpu = -1;

	assert_true(pid > 0);
	assert_int_equal(online_cpus(&mine), 0);
	if (CPU_COUNT(&mine) < 2)
		skip();	/* a change needs two CPUs */
	for (int c = CPU_SETSIZE - 1; c >= 0 && cpu < 0; c--)
		if (CPU_ISSET(c, &mine))
			cpu = c;
	assert_int_equal(discover_read(pid, &ti), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* as a cpuset change leaves it: every CPU; what irqres recorded: one */
	assert_int_equal(sched_setaffinity(pid, sizeof(mine), &mine), 0);
	assert_int_equal(affinity_put_back(pid, ti.starttime, &one), 1);
	assert_int_equal(sched_getaffinity(pid, sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&now, &one));
	/* already so: nothing to do */
	assert_int_equal(affinity_put_back(pid, ti.starttime, &one), 0);
	/* a reused pid (another starttime) is never touched */
	assert_int_equal(sched_setaffinity(pid, sizeof(mine), &mine), 0);
	assert_int_equal(affinity_put_back(pid, ti.starttime + 1, &one), 0);
	assert_int_equal(sched_getaffinity(pid, sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&now, &mine));
	/* nothing recorded: left as it is */
	CPU_ZERO(&now);
	assert_int_equal(affinity_put_back(pid, ti.starttime, &now), 0);
	assert_int_equal(affinity_put_back(pid, ti.starttime, NULL), 0);
	/* gone: nothing */
	child_kill(pid);
	assert_int_equal(affinity_put_back(pid, ti.starttime, &one), 0);
}

/* The machine's own IRQ threads are only read: with no cpuset change between begin and
 * end, none is put back (none is touched). */
static void test_watch_touches_nothing_unchanged(void **unused)
{
	struct affinity_watch w;

	assert_int_equal(affinity_watch_begin(&w), 0);
	assert_int_equal(affinity_watch_end(&w), 0);
	assert_null(w.v);
	assert_int_equal(w.n, 0);
}

/* The owed records of a state file left by a crash, on children the test forks: given
 * back when nothing else changed them since (seen= what irqres left, or not known), left
 * alone when someone else did or the pid is another process now; then all forgotten. */
static void test_settle_gives_back_a_crashed_runs_owed_cpus(void **unused)
{
	struct state st;
	struct thread_info ti[3];
	cpu_set_t mine, one, other, now;
	pid_t pid[3];
	int hi = -1, lo = -1;

	assert_int_equal(online_cpus(&mine), 0);
	if (CPU_COUNT(&mine) < 2)
		skip();	/* a change needs two CPUs */
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &mine)) {
			lo = lo < 0 ? c : lo;
			hi = c;
		}
	CPU_ZERO(&one);
	CPU_SET(hi, &one);
	CPU_ZERO(&other);
	CPU_SET(lo, &other);
	state_init(&st);
	st.owed = calloc(3, sizeof(*st.owed));
	assert_non_null(st.owed);
	st.n_owed = st.cap_owed = 3;
	for (int i = 0; i < 3; i++) {
		pid[i] = child_spawn("irqres-owed");
		assert_true(pid[i] > 0);
		assert_int_equal(discover_read(pid[i], &ti[i]), 0);
		/* as a partition's removal leaves them: every CPU */
		assert_int_equal(sched_setaffinity(pid[i], sizeof(mine), &mine), 0);
		st.owed[i].pid = pid[i];
		st.owed[i].starttime = ti[i].starttime;
		st.owed[i].cpus = one;
	}
	st.owed[0].seen = mine;			/* irqres left it so: given back */
	/* [1]: seen not known (the crash came during the change): given back */
	st.owed[2].seen = other;		/* someone else changed it since: theirs */
	st.owed[2].starttime++;			/* and another process by now */
	affinity_owed_load(&st);
	affinity_owed_settle();
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sched_getaffinity(pid[i], sizeof(now), &now), 0);
		assert_true(CPU_EQUAL(&now, i < 2 ? &one : &mine));
	}
	/* forgotten: nothing owed any more */
	assert_int_equal(affinity_owed(pid[0], ti[0].starttime, &now), 0);
	st.owed[2].starttime--;
	affinity_owed_load(&st);
	affinity_owed_settle();		/* seen is not what it has: left alone */
	assert_int_equal(sched_getaffinity(pid[2], sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&now, &mine));
	state_free(&st);
}

static struct state_owed noted(const char *comm, int cpu_a, int cpu_b)
{
	struct state_owed s = { .pid = 1000, .starttime = 42 };

	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	CPU_ZERO(&s.cpus);
	CPU_SET(cpu_a, &s.cpus);
	CPU_SET(cpu_b, &s.cpus);
	return s;
}

/* A partition holds CPU 1: the root has CPU 0 alone. The sender's NIC's IRQ (10) was
 * moved to CPU 0 meanwhile and its thread followed it; removing the partition gives
 * every root task both CPUs. The thread keeps CPU 0, its IRQ's; a thread whose IRQ is
 * on CPU 1, or no IRQ thread, with the root's CPUs follows the root; one with fewer
 * than the root keeps its own. */
static void test_an_irq_thread_keeps_its_irq_s_cpus_that_were_all_the_root_had(void **unused)
{
	struct affinity_watch w = { 0 };
	struct state_owed eth1 = noted("irq/10-eth1", 0, 0), other = noted("irq/11-eth0", 0, 0);
	struct state_owed kworker = noted("kworker/0:1", 0, 0), one = noted("irq/11-eth0", 1, 1);
	cpu_set_t want;

	fixtree_file("proc/irq/10/effective_affinity_list", "0\n");
	fixtree_file("proc/irq/10/smp_affinity_list", "0\n");
	fixtree_file("proc/irq/11/effective_affinity_list", "1\n");
	fixtree_file("proc/irq/11/smp_affinity_list", "0-1\n");
	CPU_ZERO(&w.root);
	CPU_SET(0, &w.root);
	assert_int_equal(affinity_intended(&w, &eth1, &want), 0);
	assert_true(CPU_EQUAL(&want, &eth1.cpus));
	assert_int_equal(affinity_intended(&w, &other, &want), -ENOENT);
	assert_int_equal(affinity_intended(&w, &kworker, &want), -ENOENT);
	CPU_SET(1, &w.root);		/* no partition: the root has both */
	assert_int_equal(affinity_intended(&w, &one, &want), 0);
	assert_true(CPU_EQUAL(&want, &one.cpus));
}

static int fixtree_done(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_put_back_a_moved_task, teardown),
		cmocka_unit_test(test_watch_touches_nothing_unchanged),
		cmocka_unit_test_teardown(test_settle_gives_back_a_crashed_runs_owed_cpus, teardown),
		cmocka_unit_test_setup_teardown(
			test_an_irq_thread_keeps_its_irq_s_cpus_that_were_all_the_root_had,
			fixtree_setup_roots, fixtree_done),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
