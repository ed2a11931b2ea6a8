/* SPDX-License-Identifier: GPL-2.0-only */
/* test_dlserver.c - every deadline server debugfs shows, and whether it holds bandwidth. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "dl.h"
#include "dlserver.h"
#include "fixtree.h"
#include "irqres.h"
#include "plan.h"

#define SCHED "sys/kernel/debug/sched/"
#define MS 1000000ULL

static void server(const char *name, int cpu, const char *runtime, const char *period)
{
	char rel[256];

	snprintf(rel, sizeof(rel), SCHED "%s/cpu%d/runtime", name, cpu);
	fixtree_file(rel, runtime);
	snprintf(rel, sizeof(rel), SCHED "%s/cpu%d/period", name, cpu);
	fixtree_file(rel, period);
}

static cpu_set_t cpus(int n)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	for (int i = 0; i < n; i++)
		CPU_SET(i, &s);
	return s;
}

/* 7.0/7.1: fair_server and ext_server both reserved at boot, 50 ms / 1 s each. */
static void test_fair_and_ext(void **unused)
{
	cpu_set_t online = cpus(2);
	uint64_t bw[CPU_SETSIZE] = { 0 };
	struct dlserver_set set;
	char desc[128];

	for (int c = 0; c < 2; c++) {
		server("fair_server", c, "50000000\n", "1000000000\n");
		server("ext_server", c, "50000000\n", "1000000000\n");
	}
	fixtree_file(SCHED "debug", "dl_rq[0]:\n");
	fixtree_file(SCHED "features", "NO_HRTICK_DL\n");
	assert_int_equal(dlserver_read(&online, bw, &set), 0);
	assert_int_equal(bw[0], 2 * dl_to_ratio(1000 * MS, 50 * MS));
	assert_int_equal(bw[1], 2 * dl_to_ratio(1000 * MS, 50 * MS));
	assert_int_equal(bw[2], 0);
	assert_int_equal(set.n, 2);
	assert_string_equal(set.name[0], "ext_server");	/* sorted */
	assert_string_equal(set.name[1], "fair_server");
	dlserver_set_str(&set, desc, sizeof(desc));
	assert_string_equal(desc, "ext_server, fair_server");
}

/* 7.2+: ext_server's parameters are removed while no BPF scheduler runs (runtime and
 * period 0): present, holding nothing. A server of another name is counted too; a CPU
 * offline is not; a directory that is not a server is not read. */
static void test_inactive_and_unknown_servers(void **unused)
{
	cpu_set_t online = cpus(3);
	uint64_t bw[CPU_SETSIZE] = { 0 };
	struct dlserver_set set;
	char desc[160];

	CPU_CLR(1, &online);
	for (int c = 0; c < 3; c++) {
		server("fair_server", c, "50000000\n", "1000000000\n");
		server("ext_server", c, "0\n", "0\n");
	}
	server("rt_server", 0, "10000000\n", "100000000\n");
	server("rt_server", 2, "0\n", "100000000\n");
	server("domains", 0, "10000000\n", "100000000\n");
	assert_int_equal(dlserver_read(&online, bw, &set), 0);
	assert_int_equal(bw[0], dl_to_ratio(1000 * MS, 50 * MS) + dl_to_ratio(100 * MS, 10 * MS));
	assert_int_equal(bw[1], 0);
	assert_int_equal(bw[2], dl_to_ratio(1000 * MS, 50 * MS));
	assert_int_equal(set.n, 3);
	assert_int_equal(set.reserved_cpus[0], 0);	/* ext_server */
	assert_int_equal(set.reserved_cpus[1], 2);	/* fair_server */
	assert_int_equal(set.reserved_cpus[2], 1);	/* rt_server */
	dlserver_set_str(&set, desc, sizeof(desc));
	assert_string_equal(desc, "ext_server (no bandwidth), fair_server, rt_server");
}

/* 7.2+: ext_server keeps showing 50 ms / 1 s but holds bandwidth only while a BPF
 * scheduler is loaded (Debian's 7.3.4: dl_bw->total_bw 104856 on 2 CPUs = the two fair
 * servers alone). 7.0 and 7.1 reserve it at boot. */
static void test_ext_server_follows_sched_ext(void **unused)
{
	cpu_set_t online = cpus(2);
	uint64_t fair = dl_to_ratio(1000 * MS, 50 * MS);
	struct dlserver_set set;
	char desc[128];
	static const struct {
		const char *release, *state;
		uint64_t want;
	} cases[] = {
		{ "7.3.4+deb13-rt-amd64\n", "disabled\n", 1 },
		{ "7.3.4+deb13-rt-amd64\n", "enabled\n", 2 },
		{ "7.3.4+deb13-rt-amd64\n", "disabling\n", 2 },
		{ "7.2.13+deb14-rt-amd64\n", "disabled\n", 1 },
		{ "7.1.2\n", "disabled\n", 2 },
		{ "8.0.0\n", "disabled\n", 1 },
		{ "7.3.4\n", NULL, 2 },	/* no state to read: counted */
	};

	for (int c = 0; c < 2; c++) {
		server("fair_server", c, "50000000\n", "1000000000\n");
		server("ext_server", c, "50000000\n", "1000000000\n");
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t bw[CPU_SETSIZE] = { 0 };

		fixtree_file("proc/sys/kernel/osrelease", cases[i].release);
		if (cases[i].state)
			fixtree_file("sys/kernel/sched_ext/state", cases[i].state);
		else
			unlink(fixtree_path("sys/kernel/sched_ext/state"));
		assert_int_equal(dlserver_read(&online, bw, &set), 0);
		assert_int_equal(bw[0], cases[i].want * fair);
		assert_int_equal(bw[1], cases[i].want * fair);
		dlserver_set_str(&set, desc, sizeof(desc));
		assert_string_equal(desc, cases[i].want == 1 ? "ext_server (no bandwidth), fair_server"
						       : "ext_server, fair_server");
	}
}

/* The files of Debian's 7.3.4 guest (fixtures/dlserver/7.3/, from test_admission[7.3]
 * with no SCHED_DEADLINE task yet): fair_server and ext_server show 50 ms / 1 s on both
 * CPUs, sched_ext is "disabled", and the kernel's count of the root domain of CPUs 0-1
 * (sched/debug, dl_bw->total_bw) is 104856: the two fair servers, which is what the
 * servers must add up to. */
static void test_debian_7_3_guest(void **unused)
{
	cpu_set_t online = cpus(2);
	uint64_t bw[CPU_SETSIZE] = { 0 };
	struct dlserver_set set;

	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "fixtures/dlserver/7.3/proc");
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "fixtures/dlserver/7.3/sys");
	assert_int_equal(dlserver_read(&online, bw, &set), 0);
	assert_int_equal(set.n, 2);
	assert_int_equal(set.reserved_cpus[0], 0);	/* ext_server */
	assert_int_equal(set.reserved_cpus[1], 2);	/* fair_server */
	assert_int_equal(bw[0] + bw[1], 104856);
}

/* 6.1 (no server) and no debugfs: nothing, and not an error. */
static void test_no_servers(void **unused)
{
	cpu_set_t online = cpus(2);
	uint64_t bw[CPU_SETSIZE] = { 0 };
	struct dlserver_set set;
	char desc[32];

	assert_int_equal(dlserver_read(&online, bw, &set), 0);
	assert_int_equal(set.n, 0);
	fixtree_file(SCHED "features", "NO_HRTICK_DL\n");
	assert_int_equal(dlserver_read(&online, bw, &set), 0);
	assert_int_equal(set.n, 0);
	assert_int_equal(bw[0], 0);
	dlserver_set_str(&set, desc, sizeof(desc));
	assert_string_equal(desc, "none");
}

/* The plan counts the ext_server of 7.0 in the domains it builds: a partition for CPU 1
 * has existing = fair + ext servers of CPU 1. */
static void test_plan_counts_every_server(void **unused)
{
	struct plan_env e;

	fixtree_file("sys/devices/system/cpu/online", "0-1\n");
	fixtree_file("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	fixtree_file("proc/sys/kernel/sched_rt_period_us", "1000000\n");
	for (int c = 0; c < 2; c++) {
		server("fair_server", c, "50000000\n", "1000000000\n");
		server("ext_server", c, "50000000\n", "1000000000\n");
	}
	assert_int_equal(plan_env_read(&e, true), 0);
	assert_int_equal(e.server_bw[1], 2 * dl_to_ratio(1000 * MS, 50 * MS));
	assert_int_equal(e.servers.n, 2);
	plan_env_free(&e);
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fixtree_setup_roots, teardown)
	const struct CMUnitTest tests[] = {
		T(test_fair_and_ext),
		T(test_inactive_and_unknown_servers),
		T(test_ext_server_follows_sched_ext),
		T(test_debian_7_3_guest),
		T(test_no_servers),
		T(test_plan_counts_every_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
