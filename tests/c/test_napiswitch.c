/* SPDX-License-Identifier: GPL-2.0-only */
/* test_napiswitch.c - threaded_napi: the switch of /sys/class/net/IF/threaded, recorded in
 * the state file before it is made, given back, refused with the cause named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "fixtree.h"
#include "napiswitch.h"
#include "profile.h"
#include "state.h"

static const char two_ifaces[] =
	"version: 1\ntargets:\n"
	"  - name: nic\n    interface: eth0\n    threaded_napi: true\n"
	"    runtime: 1ms\n    period: 10ms\n"
	"  - name: poll1\n    napi: eth1\n    threaded_napi: true\n"
	"    runtime: 2ms\n    period: 10ms\n";

static int setup(void **state)
{
	if (fixtree_setup_roots(state))
		return -1;
	mkdir(fixtree_path("run"), 0755);
	fixtree_file("sys/class/net/eth0/threaded", "0\n");
	fixtree_file("sys/class/net/eth1/threaded", "0\n");
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

static void load(const char *text, struct profile *p)
{
	char err[512];

	assert_int_equal(profile_parse(text, strlen(text), "p.yaml", p, err, sizeof(err)), 0);
}

/* Switched on, recorded first; given back and forgotten on restore. */
static void test_on_and_back(void **unused)
{
	struct profile p;
	struct state st, crashed;
	char err[512] = "";

	load(two_ifaces, &p);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(napiswitch_on(&p, &st, err, sizeof(err)), 0);
	assert_string_equal(fixtree_read("sys/class/net/eth0/threaded"), "1");
	assert_string_equal(fixtree_read("sys/class/net/eth1/threaded"), "1");
	assert_int_equal(st.n_netdevs, 2);
	/* what a crash leaves: the state file names both, with the value before */
	state_init(&crashed);
	assert_int_equal(state_open(&crashed, err, sizeof(err)), 0);
	assert_int_equal(crashed.n_netdevs, 2);
	assert_int_equal(state_find_netdev(&crashed, "eth1")->was, 0);
	/* applying again (a reload) neither records nor writes twice */
	assert_int_equal(napiswitch_on(&p, &st, err, sizeof(err)), 0);
	assert_int_equal(st.n_netdevs, 2);
	/* the restore after the crash gives both back and leaves no state file */
	assert_int_equal(napiswitch_restore(&crashed, NULL, 0), 0);
	assert_string_equal(fixtree_read("sys/class/net/eth0/threaded"), "0");
	assert_string_equal(fixtree_read("sys/class/net/eth1/threaded"), "0");
	assert_int_equal(crashed.n_netdevs, 0);
	assert_true(state_empty(&crashed));
	assert_int_equal(access(crashed.path, F_OK), -1);
	state_free(&crashed);
	state_free(&st);
	profile_free(&p);
}

/* An interface threaded already is left alone: not recorded, not given "back". */
static void test_threaded_already(void **unused)
{
	struct profile p;
	struct state st;
	char err[512] = "";

	fixtree_file("sys/class/net/eth1/threaded", "2\n");	/* busy polling, 6.17+ */
	load(two_ifaces, &p);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(napiswitch_on(&p, &st, err, sizeof(err)), 0);
	assert_int_equal(st.n_netdevs, 1);
	assert_string_equal(st.netdevs[0].ifname, "eth0");
	assert_int_equal(napiswitch_restore(&st, NULL, 0), 0);
	assert_string_equal(fixtree_read("sys/class/net/eth0/threaded"), "0");
	assert_string_equal(fixtree_read("sys/class/net/eth1/threaded"), "2\n");
	state_free(&st);
	profile_free(&p);
}

/* A value someone else set since is left; a profile that still asks keeps its interface. */
static void test_restore_leaves_others(void **unused)
{
	static const char only_eth1[] =
		"version: 1\ntargets:\n  - name: poll1\n    napi: eth1\n    threaded_napi: true\n"
		"    runtime: 2ms\n    period: 10ms\n";
	struct profile p, keep;
	struct state st;
	char err[512] = "";

	load(two_ifaces, &p);
	load(only_eth1, &keep);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(napiswitch_on(&p, &st, err, sizeof(err)), 0);
	fixtree_file("sys/class/net/eth0/threaded", "0\n");	/* someone switched it off */
	assert_int_equal(napiswitch_restore(&st, &keep, 0), 0);
	assert_int_equal(st.n_netdevs, 1);			/* eth1: still held */
	assert_string_equal(st.netdevs[0].ifname, "eth1");
	assert_string_equal(fixtree_read("sys/class/net/eth1/threaded"), "1");
	fixtree_file("sys/class/net/eth0/threaded", "1\n");	/* and on again: not irqres's */
	assert_int_equal(napiswitch_restore(&st, NULL, 0), 0);
	assert_string_equal(fixtree_read("sys/class/net/eth0/threaded"), "1\n");
	assert_string_equal(fixtree_read("sys/class/net/eth1/threaded"), "0");
	state_free(&st);
	profile_free(&keep);
	profile_free(&p);
}

/* Each bad interface is refused naming it, its target and the cause, and nothing is
 * changed: not the good interface before it either. */
static void test_refused(void **unused)
{
	static const struct {
		const char *setup;	/* what eth1 is */
		int rc;
		const char *cause;
	} cases[] = {
		{ "gone", -ENODEV, "no such interface" },
		{ "no threaded", -ENOENT, "the kernel has no threaded NAPI" },
		{ "read-only", -EACCES, "the threaded file is not writable" },
		{ "garbage", -EINVAL, "holds no value 0, 1 or 2" },
	};
	char err[512], want[512];
	struct profile p;
	struct state st;

	load(two_ifaces, &p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixtree_file("sys/class/net/eth1/threaded", "0\n");
		chmod(fixtree_path("sys/class/net/eth1/threaded"), 0644);
		if (i == 0 || i == 1)
			unlink(fixtree_path("sys/class/net/eth1/threaded"));
		if (i == 0)
			rmdir(fixtree_path("sys/class/net/eth1"));
		if (i == 2)
			chmod(fixtree_path("sys/class/net/eth1/threaded"), 0444);
		if (i == 3)
			fixtree_file("sys/class/net/eth1/threaded", "on\n");
		state_init(&st);
		assert_int_equal(state_open(&st, err, sizeof(err)), 0);
		err[0] = '\0';
		assert_int_equal(napiswitch_on(&p, &st, err, sizeof(err)), cases[i].rc);
		snprintf(want, sizeof(want), "interface 'eth1' (target 'poll1', threaded_napi: "
			 "true): cannot switch to threaded NAPI: ");
		if (strncmp(err, want, strlen(want)) || !strstr(err, cases[i].cause)) {
			print_error("case %s: got '%s'\n", cases[i].setup, err);
			fail();
		}
		assert_string_equal(fixtree_read("sys/class/net/eth0/threaded"), "0\n");
		assert_int_equal(st.n_netdevs, 0);
		assert_int_equal(access(st.path, F_OK), -1);
		state_free(&st);
		mkdir(fixtree_path("sys/class/net/eth1"), 0755);
	}
	profile_free(&p);
}

/* The plan says what applying will switch, and refuses what it cannot. */
static void test_plan_notes(void **unused)
{
	struct plan plan = { .feasible = true };
	struct profile p;

	load(two_ifaces, &p);
	fixtree_file("sys/class/net/eth1/threaded", "1\n");
	assert_int_equal(napiswitch_plan_notes(&plan, &p), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_errors, 0);
	assert_int_equal(plan.n_warnings, 1);	/* eth0 only: eth1 is threaded already */
	assert_non_null(strstr(plan.warnings[0], "interface 'eth0': threaded NAPI is off "
					     "(threaded 0): applying switches it on (target 'nic')"));
	plan_free(&plan);

	plan = (struct plan){ .feasible = true };
	unlink(fixtree_path("sys/class/net/eth1/threaded"));
	assert_int_equal(napiswitch_plan_notes(&plan, &p), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.n_errors, 1);
	assert_non_null(strstr(plan.errors[0], "p.yaml: interface 'eth1' (target 'poll1'"));
	plan_free(&plan);
	profile_free(&p);
}

/* A kthread named as napi/eth0-8193 in state @state, with run count @runs (0: no
 * schedstat file, a kernel without schedstats). */
static void napi_kthread(char state, int runs)
{
	char line[256];

	snprintf(line, sizeof(line), "321 (napi/eth0-8193) %c 2 0 0 0 -1 2129984 0 0 0 0 0 0 "
		 "0 0 20 0 1 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0\n", state);
	fixtree_file("proc/321/stat", line);
	unlink(fixtree_path("proc/321/schedstat"));
	if (runs) {
		snprintf(line, sizeof(line), "146228 175205 %d\n", runs);
		fixtree_file("proc/321/schedstat", line);
	}
}

/* A kthread the switch made is started once it has run since its first wake-up; until
 * then the kernel refuses to move it into a cgroup (EINVAL). */
static void test_started(void **unused)
{
	char pending[64] = "";

	fixtree_file("sys/class/net/eth0/ifindex", "2\n");
	fixtree_file("sys/class/net/eth0/threaded", "1\n");
	mkdir(fixtree_path("proc"), 0755);
	assert_int_equal(napiswitch_started("eth0", pending, sizeof(pending)), 1); /* none */
	napi_kthread('D', 1);	/* made, asleep in kthread() until woken */
	assert_int_equal(napiswitch_started("eth0", pending, sizeof(pending)), 0);
	assert_string_equal(pending, "napi/eth0-8193 (pid 321)");
	napi_kthread('R', 2);	/* woken: its first run may not have begun */
	assert_int_equal(napiswitch_started("eth0", NULL, 0), 0);
	napi_kthread('S', 2);	/* ran, and sleeps in its poll loop */
	assert_int_equal(napiswitch_started("eth0", NULL, 0), 1);
	napi_kthread('R', 7);	/* polling */
	assert_int_equal(napiswitch_started("eth0", NULL, 0), 1);
	napi_kthread('D', 0);	/* no schedstat: by the state alone */
	assert_int_equal(napiswitch_started("eth0", NULL, 0), 0);
	napi_kthread('S', 0);
	assert_int_equal(napiswitch_started("eth0", NULL, 0), 1);
	/* a switch whose kthread never runs waits NAPISWITCH_SETTLE_MS, then goes on */
	struct profile p;
	struct state st;
	char err[512] = "";

	fixtree_file("sys/class/net/eth0/threaded", "0\n");
	napi_kthread('D', 1);
	load(two_ifaces, &p);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(napiswitch_on(&p, &st, err, sizeof(err)), 0);
	assert_string_equal(fixtree_read("sys/class/net/eth0/threaded"), "1");
	assert_int_equal(napiswitch_restore(&st, NULL, 0), 0);
	state_free(&st);
	profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_on_and_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threaded_already, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_leaves_others, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_notes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_started, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
