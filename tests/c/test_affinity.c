/* SPDX-License-Identifier: GPL-2.0-only */
/* test_affinity.c - affinities put back, on processes the test forks (never anything else). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "affinity.h"
#include "children.h"
#include "discover.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_put_back_a_moved_task, teardown),
		cmocka_unit_test(test_watch_touches_nothing_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
