/* SPDX-License-Identifier: GPL-2.0-only */
/* test_salvage.c - a damaged state file's lost partition records, found in the cgroup tree. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fixtree.h"
#include "irqres.h"
#include "salvage.h"
#include "state.h"

/* The partition record (line 2) damaged: one byte of it changed after it was written. */
#define DAMAGED "# irqres state 2\n" \
	"partition irqres.cpu1 created=1 crc32=00000000\n"

static int setup(void **state)
{
	if (fixtree_setup_roots(state))
		return -1;
	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	fixtree_file("cgroup/irqres.cpu1/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/irqres.cpu1/cpuset.cpus.effective", "1\n");
	fixtree_file("cgroup/irqres.cpu2/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/irqres.cpu2/cpuset.cpus.effective", "2\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.effective", "3\n");
	fixtree_file("cgroup/system.slice/cpuset.cpus.partition", "member\n");
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

/* The partitions irqres owns that no good record names are restored like recorded ones;
 * the others' (rt.slice) are not, and the file stays byte for byte. */
static void test_owned_partitions_adopted(void **unused)
{
	struct state st;
	char err[512] = "";
	bool seen1 = false, seen2 = false;

	fixtree_file("run/state", DAMAGED "partition irqres.cpu2 created=0\n");
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_true(st.damaged > 0);
	assert_true(st.frozen);
	assert_int_equal(st.n_parts, 0);

	assert_int_equal(salvage_begin(&st), 0);
	salvage_end();
	assert_int_equal(st.n_parts, 2);
	for (size_t i = 0; i < st.n_parts; i++) {
		assert_true(st.parts[i].created);
		seen1 |= strcmp(st.parts[i].name, "irqres.cpu1") == 0;
		seen2 |= strcmp(st.parts[i].name, "irqres.cpu2") == 0;
	}
	assert_true(seen1 && seen2);
	assert_string_equal(fixtree_read("run/state"), DAMAGED "partition irqres.cpu2 created=0\n");
	state_free(&st);
}

/* A partition a good record names keeps that record (created=0: not irqres's to remove). */
static void test_recorded_partition_kept(void **unused)
{
	struct state st;

	state_init(&st);
	assert_int_equal(state_add_partition(&st, "irqres.cpu2", false), 0);
	assert_int_equal(salvage_begin(&st), 0);
	salvage_end();
	assert_int_equal(st.n_parts, 2);
	assert_false(state_find_partition(&st, "irqres.cpu2")->created);
	assert_true(state_find_partition(&st, "irqres.cpu1")->created);
	assert_null(state_find_partition(&st, "rt.slice"));
	state_free(&st);
}

/* No cgroup v2 root: nothing to adopt, no error. */
static void test_no_cgroup(void **unused)
{
	struct state st;

	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/none", fixtree_root);
	state_init(&st);
	assert_int_equal(salvage_begin(&st), 0);
	salvage_end();
	assert_int_equal(st.n_parts, 0);
	state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_owned_partitions_adopted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recorded_partition_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_cgroup, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
