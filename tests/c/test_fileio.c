/* SPDX-License-Identifier: GPL-2.0-only */
/* test_fileio.c - small files: whole, one value, one number, one write, /proc/PID/stat. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fileio.h"
#include "fixtree.h"

static void test_read(void **unused)
{
	char buf[8];
	long long v;

	fixtree_file("a", "0-3\n \n");
	assert_int_equal(fileio_read(fixtree_path("a"), buf, sizeof(buf)), 6);
	assert_string_equal(buf, "0-3\n \n");
	assert_int_equal(fileio_read_value(fixtree_path("a"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0-3");
	/* a longer file is cut, never overrun */
	fixtree_file("long", "0123456789");
	assert_int_equal(fileio_read(fixtree_path("long"), buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0123456");
	assert_int_equal(fileio_read(fixtree_path("none"), buf, sizeof(buf)), -ENOENT);

	fixtree_file("n", " -1\n");
	assert_int_equal(fileio_read_ll(fixtree_path("n"), &v), 0);
	assert_int_equal(v, -1);
	fixtree_file("n", "950000 us\n");
	assert_int_equal(fileio_read_ll(fixtree_path("n"), &v), 0);
	assert_int_equal(v, 950000);
	fixtree_file("n", "max\n");
	assert_int_equal(fileio_read_ll(fixtree_path("n"), &v), -EINVAL);
	assert_int_equal(fileio_read_ll(fixtree_path("none"), &v), -ENOENT);
}

static void test_write(void **unused)
{
	assert_int_equal(fileio_write(fixtree_path("w"), "+cpuset", false), -ENOENT);
	assert_int_equal(fileio_write(fixtree_path("w"), "+cpuset", true), 0);
	assert_string_equal(fixtree_read("w"), "+cpuset");
	/* one value replaces the file's content */
	assert_int_equal(fileio_write(fixtree_path("w"), "-1", false), 0);
	assert_string_equal(fixtree_read("w"), "-1");
	assert_int_equal(fileio_write(fixtree_path("no/such/dir"), "1", true), -ENOENT);
}

static void test_stat(void **unused)
{
	struct fileio_stat st;
	char buf[256];

	/* a comm with blanks and ')' ends at the last ')' */
	fixtree_file("stat", "105 (irq/11-a) b) S 2 0 0 0 -1 69238848 0 0 0 0 0 0 0 0 -51 0 1 0 "
		     "300 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 3 50 1 "
		     "0 0 0\n");
	assert_int_equal(fileio_stat_read(fixtree_path("stat"), &st), 0);
	assert_string_equal(st.comm, "irq/11-a) b");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 2);
	assert_true(st.flags & FILEIO_PF_NO_SETAFFINITY);
	assert_int_equal(st.nice, 0);
	assert_int_equal(st.num_threads, 1);
	assert_int_equal(st.starttime, 300);
	assert_int_equal(st.processor, 3);	/* the CPU it last ran on */
	assert_int_equal(st.rt_priority, 50);
	assert_int_equal(st.policy, 1);
	/* cut before starttime: not a stat file */
	snprintf(buf, sizeof(buf), "7 (x) S 1 0 0 0 -1 0 0 0\n");
	assert_int_equal(fileio_stat_parse(buf, &st), -EINVAL);
	snprintf(buf, sizeof(buf), "7 x S 1\n");
	assert_int_equal(fileio_stat_parse(buf, &st), -EINVAL);
	assert_int_equal(fileio_stat_read(fixtree_path("none"), &st), -ENOENT);
}

static void test_cgroup(void **unused)
{
	char cg[16];

	fixtree_file("cg", "12:cpuset:/v1\n0::/irqres.cpu0\n");
	assert_int_equal(fileio_cgroup_read(fixtree_path("cg"), cg, sizeof(cg)), 0);
	assert_string_equal(cg, "/irqres.cpu0");
	fixtree_file("cg", "0::/\n");
	assert_int_equal(fileio_cgroup_read(fixtree_path("cg"), cg, sizeof(cg)), 0);
	assert_string_equal(cg, "/");
	/* cgroup v1 only: no v2 path */
	fixtree_file("cg", "12:cpuset:/v1\n");
	assert_int_equal(fileio_cgroup_read(fixtree_path("cg"), cg, sizeof(cg)), -ENODATA);
	fixtree_file("cg", "0::/system.slice/a-long-name.service\n");
	assert_int_equal(fileio_cgroup_read(fixtree_path("cg"), cg, sizeof(cg)), -ENAMETOOLONG);
	assert_int_equal(fileio_cgroup_read(fixtree_path("none"), cg, sizeof(cg)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read, fixtree_setup, fixtree_teardown),
		cmocka_unit_test_setup_teardown(test_write, fixtree_setup, fixtree_teardown),
		cmocka_unit_test_setup_teardown(test_stat, fixtree_setup, fixtree_teardown),
		cmocka_unit_test_setup_teardown(test_cgroup, fixtree_setup, fixtree_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
