/* SPDX-License-Identifier: GPL-2.0-only */
/* test_cpuset.c - cgroup v2 cpuset partitions on a fixture tree of plain files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cpuset.h"
#include "fixtree.h"
#include "irqres.h"

#define PF_KTHREAD_NOAFF "77594688"	/* PF_KTHREAD | PF_NO_SETAFFINITY | PF_NOFREEZE */

static int setup(void **state)
{
	if (fixtree_setup(state))
		return -1;
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/cgroup", fixtree_root);
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	fixtree_file("cgroup/cgroup.subtree_control", "memory pids\n");
	fixtree_file("cgroup/cgroup.procs", "1\n");
	fixtree_file("cgroup/cpuset.mems.effective", "0\n");
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

static void roundtrip(const char *in, const char *want)
{
	cpu_set_t s;
	char buf[128];

	assert_int_equal(cpuset_list_parse(in, &s), 0);
	assert_int_equal(cpuset_list_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_cpulist(void **unused)
{
	cpu_set_t s;
	char small[4];

	roundtrip("0-3,6,8-9\n", "0-3,6,8-9");
	roundtrip("5", "5");
	roundtrip("0,1,2", "0-2");
	roundtrip("", "");
	assert_int_equal(cpuset_list_parse("1-", &s), -EINVAL);
	assert_int_equal(cpuset_list_parse("3-1", &s), -EINVAL);
	assert_int_equal(cpuset_list_parse("a", &s), -EINVAL);
	assert_int_equal(cpuset_list_parse("1;2", &s), -EINVAL);
	assert_int_equal(cpuset_list_parse("99999", &s), -EINVAL);
	assert_int_equal(cpuset_list_parse("0-2,10-12", &s), 0);
	assert_int_equal(cpuset_list_format(&s, small, sizeof(small)), -ENOSPC);
}

static void test_check(void **unused)
{
	char err[512] = "";

	assert_int_equal(cpuset_check(err, sizeof(err)), 0);

	fixtree_file("cgroup/cgroup.controllers", "cpu io memory pids\n");
	assert_int_equal(cpuset_check(err, sizeof(err)), -EOPNOTSUPP);
	assert_non_null(strstr(err, "cpuset controller unavailable"));
	assert_non_null(strstr(err, "cpu io memory pids"));

	unlink(fixtree_path("cgroup/cgroup.controllers"));
	assert_int_equal(cpuset_check(err, sizeof(err)), -EOPNOTSUPP);
	assert_non_null(strstr(err, "no cgroup v2 at"));
	assert_non_null(strstr(err, fixtree_root));
}

static void test_enable(void **unused)
{
	char err[512] = "";
	bool added;

	assert_int_equal(cpuset_enable(&added, err, sizeof(err)), 0);
	assert_true(added);
	assert_string_equal(fixtree_read("cgroup/cgroup.subtree_control"), "+cpuset");

	fixtree_file("cgroup/cgroup.subtree_control", "cpuset memory\n");
	assert_int_equal(cpuset_enable(&added, err, sizeof(err)), 0);
	assert_false(added);
	assert_string_equal(fixtree_read("cgroup/cgroup.subtree_control"), "cpuset memory\n");

	assert_int_equal(cpuset_disable(), 0);
	assert_string_equal(fixtree_read("cgroup/cgroup.subtree_control"), "-cpuset");
}

static void test_partition_create_reuse_remove(void **unused)
{
	char err[512] = "", name[CPUSET_NAME_MAX];
	bool created;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	assert_int_equal(cpuset_partition_create(&cpus, name, sizeof(name), &created, err,
						 sizeof(err)), 0);
	assert_string_equal(name, "irqres.cpu1");
	assert_true(created);
	assert_string_equal(fixtree_read("cgroup/irqres.cpu1/cpuset.cpus"), "1");
	assert_string_equal(fixtree_read("cgroup/irqres.cpu1/cpuset.mems"), "0");
	assert_string_equal(fixtree_read("cgroup/irqres.cpu1/cpuset.cpus.partition"), "root");

	/* the second time it is reused, not written again */
	fixtree_file("cgroup/irqres.cpu1/cpuset.cpus.effective", "1\n");
	fixtree_file("cgroup/irqres.cpu1/cpuset.cpus.partition", "root\n");
	assert_int_equal(cpuset_partition_create(&cpus, name, sizeof(name), &created, err,
						 sizeof(err)), 0);
	assert_false(created);
	assert_string_equal(fixtree_read("cgroup/irqres.cpu1/cpuset.cpus.partition"), "root\n");

	/* counted again: a member, then a root, as the kernel read it back */
	assert_int_equal(cpuset_partition_recount("irqres.cpu1", err, sizeof(err)), 0);
	assert_string_equal(fixtree_read("cgroup/irqres.cpu1/cpuset.cpus.partition"), "root");
	/* a partition that is not there: said, with the write that failed */
	assert_int_equal(cpuset_partition_recount("irqres.cpu9", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cpuset partition irqres.cpu9: writing \"member\""));

	/* a pid in it: kept */
	fixtree_file("cgroup/irqres.cpu1/cgroup.procs", "105\n");
	assert_int_equal(cpuset_partition_remove("irqres.cpu1"), -EBUSY);
	/* never a group irqres does not own */
	assert_int_equal(cpuset_partition_remove("system.slice"), -EINVAL);
	assert_int_equal(cpuset_partition_remove("irqres.cpu1/../x"), -EINVAL);
	/* emptied: made a member first, so that the kernel gives the CPUs back (and rewrites
	 * affinities) within that write, not later in rmdir's offline work; a fixture group
	 * holds plain files, so its rmdir then fails */
	fixtree_file("cgroup/irqres.cpu1/cgroup.procs", "");
	assert_int_equal(cpuset_partition_remove("irqres.cpu1"), -ENOTEMPTY);
	assert_string_equal(fixtree_read("cgroup/irqres.cpu1/cpuset.cpus.partition"), "member");
	/* an empty group (no interface files in a fixture tree) goes */
	mkdir(fixtree_path("cgroup/irqres.cpu3"), 0755);
	assert_int_equal(cpuset_partition_remove("irqres.cpu3"), 0);
	assert_int_equal(access(fixtree_path("cgroup/irqres.cpu3"), F_OK), -1);
}

static void test_partition_invalid(void **unused)
{
	char err[512] = "", name[CPUSET_NAME_MAX];
	bool created;
	cpu_set_t cpus;

	/* cpuset.cpus.partition that does not read back "root" (the kernel says "root
	 * invalid (...)"): a symlink to /dev/null reads back empty */
	mkdir(fixtree_path("cgroup/irqres.cpu0"), 0755);
	assert_int_equal(symlink("/dev/null", fixtree_path("cgroup/irqres.cpu0/cpuset.cpus.partition")),
			 0);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	assert_int_equal(cpuset_partition_create(&cpus, name, sizeof(name), &created, err,
						 sizeof(err)), -EINVAL);
	assert_false(created);
	assert_non_null(strstr(err, "cpuset partition irqres.cpu0 is invalid"));

	/* no cgroup root at all: mkdir fails and says where */
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/none", fixtree_root);
	assert_int_equal(cpuset_partition_create(&cpus, name, sizeof(name), &created, err,
						 sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "could not be created: mkdir"));
}

static void test_partitions_scan(void **unused)
{
	struct cpuset_part *p;
	size_t n;
	int found = 0;

	fixtree_file("cgroup/irqres.cpu1/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/irqres.cpu1/cpuset.cpus.effective", "1\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.partition",
		     "root invalid (Cpu list in cpuset.cpus not exclusive)\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus", "2-3\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.effective", "\n");
	fixtree_file("cgroup/system.slice/cpuset.cpus.partition", "member\n");
	assert_int_equal(cpuset_partitions_scan(&p, &n), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].name, "irqres.cpu1") == 0) {
			assert_true(p[i].valid);
			assert_true(p[i].owned);
			assert_int_equal(CPU_COUNT(&p[i].cpus), 1);
			assert_true(CPU_ISSET(1, &p[i].cpus));
			found++;
		} else {
			assert_string_equal(p[i].name, "rt.slice");
			assert_false(p[i].valid);
			assert_false(p[i].owned);
			assert_true(CPU_ISSET(2, &p[i].cpus) && CPU_ISSET(3, &p[i].cpus));
			found++;
		}
	}
	assert_int_equal(found, 2);
	free(p);
}

static void test_move_and_cgroup(void **unused)
{
	char err[512] = "", cg[CGROUP_PATH_MAX];

	fixtree_file("proc/105/cgroup", "12:cpuset:/\n0::/system.slice/net.service\n");
	assert_int_equal(cpuset_pid_cgroup(105, cg, sizeof(cg)), 0);
	assert_string_equal(cg, "/system.slice/net.service");
	assert_int_equal(cpuset_pid_cgroup(106, cg, sizeof(cg)), -ESRCH);
	fixtree_file("proc/107/cgroup", "4:cpuset:/\n");
	assert_int_equal(cpuset_pid_cgroup(107, cg, sizeof(cg)), -ENOENT);

	fixtree_file("cgroup/irqres.cpu0/cgroup.procs", "");
	assert_int_equal(cpuset_move(105, "/irqres.cpu0", err, sizeof(err)), 0);
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cgroup.procs"), "105");
	assert_int_equal(cpuset_move(105, "/", err, sizeof(err)), 0);
	assert_string_equal(fixtree_read("cgroup/cgroup.procs"), "105");
}

static void test_move_no_setaffinity(void **unused)
{
	char err[512] = "";

	/* cgroup.procs refusing the pid with EINVAL as the kernel does for
	 * PF_NO_SETAFFINITY threads: /proc/self/oom_score_adj refuses 4242 with EINVAL */
	mkdir(fixtree_path("cgroup/irqres.cpu0"), 0755);
	assert_int_equal(symlink("/proc/self/oom_score_adj",
				 fixtree_path("cgroup/irqres.cpu0/cgroup.procs")), 0);
	fixtree_file("proc/4242/stat", "4242 (irq/11-eth0) S 2 0 0 0 -1 " PF_KTHREAD_NOAFF
		     " 0 0 0 0 0 0 0 0 -51 0 1 0 300 0 0\n");
	assert_int_equal(cpuset_move(4242, "/irqres.cpu0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pid 4242 cannot be moved into"));
	assert_non_null(strstr(err, "PF_NO_SETAFFINITY"));
	assert_non_null(strstr(err, "admission_control: disable"));
	assert_int_equal(cpuset_pid_movable(4242), 0);

	/* the same refusal for a thread without the flag names only the errno */
	fixtree_file("proc/4243/stat", "4243 (irq/12-eth1) S 2 0 0 0 -1 2129984"
		     " 0 0 0 0 0 0 0 0 -51 0 1 0 300 0 0\n");
	assert_int_equal(cpuset_move(4243, "/irqres.cpu0", err, sizeof(err)), -EINVAL);
	assert_null(strstr(err, "PF_NO_SETAFFINITY"));
	assert_non_null(strstr(err, "Invalid argument"));
	assert_int_equal(cpuset_pid_movable(4243), 1);
	assert_int_equal(cpuset_pid_movable(4244), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partition_create_reuse_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partition_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partitions_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_and_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_no_setaffinity, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
