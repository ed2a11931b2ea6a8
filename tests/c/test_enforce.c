/* SPDX-License-Identifier: GPL-2.0-only */
/* test_enforce.c - budget enforcement: the facts (sched features, HZ, hrtimers), the plan's
 * verdict and warnings, the HRTICK_DL switch and its state record (crash restore). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "enforce.h"
#include "fixtree.h"
#include "irqres.h"
#include "json.h"
#include "plan.h"
#include "plan_report.h"
#include "state.h"

#define MS 1000000ULL
#define FEATURES "sys/kernel/debug/sched/features"
#define FEATURES_OFF "GENTLE_FAIR_SLEEPERS START_DEBIT NO_HRTICK NO_HRTICK_DL DOUBLE_TICK\n"
#define FEATURES_ON "GENTLE_FAIR_SLEEPERS START_DEBIT NO_HRTICK HRTICK_DL DOUBLE_TICK\n"
/* /proc/timer_list as 6.1 prints it, cut to the lines enforce.c reads: 702.79 s after
 * boot at HZ=250 (jiffies - 2^32 = 250 * (702.79 - 300) - 62) */
#define TIMER_LIST(hres) \
	"Timer List Version: v0.9\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 702790591504 nsecs\n\n" \
	"cpu: 0\n clock 0:\n  .base:       000000000d3d60f4\n  .index:      0\n" \
	"  .resolution: 1 nsecs\n  .offset:     0 nsecs\n" \
	"  .hres_active    : 1\n  .nr_events      : 9001\n" \
	"jiffies: 4295067931\n" \
	"cpu: 1\n clock 0:\n  .resolution: 1 nsecs\n  .hres_active    : " hres "\n" \
	"jiffies: 4295067931\n"

static int setup(void **state)
{
	if (fixtree_setup(state))
		return -1;
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run", fixtree_root);
	enforce_set_boot_dir(fixtree_path("boot"));
	fixtree_file("proc/sys/kernel/osrelease", "6.1.0-50-rt-amd64\n");
	fixtree_file("boot/config-6.1.0-50-rt-amd64", "CONFIG_HIGH_RES_TIMERS=y\n"
		     "# CONFIG_HZ_1000 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"
		     "CONFIG_SCHED_HRTICK=y\n");
	fixtree_file("proc/timer_list", TIMER_LIST("1"));
	fixtree_file(FEATURES, FEATURES_OFF);
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	enforce_set_boot_dir("/boot");
	return fixtree_teardown(state);
}

static void test_features_parse(void **unused)
{
	assert_int_equal(enforce_features_parse(FEATURES_OFF, "HRTICK_DL"), 0);
	assert_int_equal(enforce_features_parse(FEATURES_ON, "HRTICK_DL"), 1);
	assert_int_equal(enforce_features_parse(FEATURES_ON, "HRTICK"), 0);	/* NO_HRTICK */
	assert_int_equal(enforce_features_parse("HRTICK NO_HRTICK_DLX\n", "HRTICK_DL"), -ENOENT);
	assert_int_equal(enforce_features_parse("", "HRTICK_DL"), -ENOENT);
}

static void test_env_from_fixture(void **unused)
{
	struct enforce_env e;

	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, 0);
	assert_string_equal(e.features_path, fixtree_path(FEATURES));
	assert_int_equal(e.hz, 250);
	assert_string_equal(e.hz_source, fixtree_path("boot/config-6.1.0-50-rt-amd64"));
	assert_int_equal(e.hres, 1);
	assert_int_equal(e.hres_ns, 1);
	assert_int_equal(e.sched_hrtick, 1);

	fixtree_file(FEATURES, FEATURES_ON);
	fixtree_file("proc/timer_list", TIMER_LIST("0"));
	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, 1);
	assert_int_equal(e.hres, 0);	/* CPU 1 runs without high-resolution timers */
}

static void test_features_missing_or_unreadable(void **unused)
{
	struct enforce_env e;

	/* debugfs not mounted: an empty directory */
	remove(fixtree_path(FEATURES));
	remove(fixtree_path("sys/kernel/debug/sched"));
	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, -1);
	assert_non_null(strstr(e.features_err, "debugfs is not mounted at"));
	assert_non_null(strstr(e.features_err, "sys/kernel/debug"));

	/* mounted, no features file (CONFIG_SCHED_DEBUG off) */
	fixtree_file("sys/kernel/debug/tracing/trace", "");
	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, -1);
	assert_non_null(strstr(e.features_err, "sched/features: no such file"));

	/* before 5.13 the file was sched_features */
	fixtree_file("sys/kernel/debug/sched_features", FEATURES_ON);
	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, 1);
	assert_string_equal(e.features_path, fixtree_path("sys/kernel/debug/sched_features"));
	remove(fixtree_path("sys/kernel/debug/sched_features"));

	/* unreadable: a directory where the file should be */
	mkdir(fixtree_path("sys/kernel/debug/sched"), 0755);
	mkdir(fixtree_path(FEATURES), 0755);
	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, -1);
	assert_non_null(strstr(e.features_err, "cannot read"));
	rmdir(fixtree_path(FEATURES));

	/* a kernel without the feature */
	fixtree_file(FEATURES, "GENTLE_FAIR_SLEEPERS NO_HRTICK\n");
	enforce_env_read(&e);
	assert_int_equal(e.hrtick_dl, -1);
	assert_non_null(strstr(e.features_err, "lists no HRTICK_DL"));
}

static void test_hz_measured(void **unused)
{
	struct enforce_env e;

	/* the host's numbers: 702.79 s, 100635 jiffies after 2^32 */
	assert_int_equal(enforce_hz_from_jiffies(4295067931ULL, 702790591504ULL), 250);
	/* jiffies = 2^32 - 300 * HZ + HZ * t */
	assert_int_equal(enforce_hz_from_jiffies(4294967296ULL + 1000 * 3600,
						 3900ULL * 1000000000), 1000);
	assert_int_equal(enforce_hz_from_jiffies(4294967296ULL + 300 * 3600,
						 3900ULL * 1000000000), 300);
	assert_int_equal(enforce_hz_from_jiffies(4294967296ULL + 100 * 50,
						 350ULL * 1000000000), 100);
	/* about the 300th second every HZ gives about 2^32: not one value */
	assert_int_equal(enforce_hz_from_jiffies(4294967296ULL + 100, 301ULL * 1000000000), 0);
	/* nothing that fits */
	assert_int_equal(enforce_hz_from_jiffies(4294967296ULL + 500000, 700ULL * 1000000000), 0);

	remove(fixtree_path("boot/config-6.1.0-50-rt-amd64"));
	enforce_env_read(&e);
	assert_int_equal(e.hz, 250);
	assert_non_null(strstr(e.hz_source, "measured"));
	assert_int_equal(e.sched_hrtick, -1);
	remove(fixtree_path("proc/timer_list"));
	enforce_env_read(&e);
	assert_int_equal(e.hz, 0);
	assert_int_equal(e.hres, -1);
}

static void test_decide_and_warnings(void **unused)
{
	struct enforce_env e;
	struct enforce_plan p;
	char note[640];

	enforce_env_read(&e);
	enforce_decide(&e, false, &p);
	assert_int_equal(p.mode, ENFORCE_TICK);
	assert_int_equal(p.action, ENFORCE_KEEP);
	assert_int_equal(p.granule_ns, 4 * MS);
	/* Q = 1ms < 2 ticks */
	assert_int_equal(enforce_budget_note(&p, 1 * MS, 5 * MS, note, sizeof(note)), 1);
	assert_string_equal(note, "Q = 1ms, T = 5ms: enforced at the tick (4ms), so a period "
			    "may take up to 5ms (100% of T where Q/T promises 20%): Q is under 2 "
			    "granules; enforcement: hrtick in the profile enforces it by an "
			    "hrtimer");
	/* Q = 8ms is 2 ticks, but 4ms is over 10 % of T = 30ms */
	assert_int_equal(enforce_budget_note(&p, 8 * MS, 30 * MS, note, sizeof(note)), 1);
	assert_non_null(strstr(note, "a granule is over 10% of T"));
	/* the boundary: Q = 2 ticks and a tick = 10 % of T */
	assert_int_equal(enforce_budget_note(&p, 8 * MS, 40 * MS, note, sizeof(note)), 0);
	assert_int_equal(enforce_budget_note(&p, 9 * MS, 100 * MS, note, sizeof(note)), 0);

	enforce_decide(&e, true, &p);
	assert_int_equal(p.mode, ENFORCE_HRTICK);
	assert_int_equal(p.action, ENFORCE_SWITCH_ON);
	assert_int_equal(p.granule_ns, ENFORCE_HRTICK_MIN_NS);
	assert_int_equal(enforce_budget_note(&p, 1 * MS, 5 * MS, note, sizeof(note)), 0);
	assert_int_equal(enforce_budget_note(&p, 15000, 5 * MS, note, sizeof(note)), 1);

	e.hrtick_dl = 1;
	enforce_decide(&e, false, &p);	/* on already, kept: the hrtick enforces */
	assert_int_equal(p.mode, ENFORCE_HRTICK);
	enforce_decide(&e, true, &p);
	assert_int_equal(p.action, ENFORCE_ALREADY_ON);

	e.hres = 0;	/* HRTICK_DL on changes nothing then */
	enforce_decide(&e, false, &p);
	assert_int_equal(p.mode, ENFORCE_TICK);
	enforce_decide(&e, true, &p);
	assert_int_equal(p.action, ENFORCE_IMPOSSIBLE);
	assert_non_null(strstr(p.why, "high-resolution timers are not active"));
	e.hres = 1;
	e.sched_hrtick = 0;
	enforce_decide(&e, true, &p);
	assert_int_equal(p.action, ENFORCE_IMPOSSIBLE);
	assert_non_null(strstr(p.why, "CONFIG_SCHED_HRTICK"));
}

/* ---- the switch and its state record ---- */

static struct state st;

static void open_state(void)
{
	char err[256] = "";

	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
}

static void test_switch_and_crash_restore(void **unused)
{
	struct enforce_env e;
	struct enforce_plan p;
	char err[512] = "";

	open_state();
	assert_int_equal(enforce_hrtick_on(&st, err, sizeof(err)), 0);
	/* recorded before the write, in the state file */
	assert_non_null(strstr(fixtree_read("run/state"),
			       "sched_feature name=HRTICK_DL was=0 set=1 crc32="));
	assert_int_equal(enforce_features_parse(fixtree_read(FEATURES), "HRTICK_DL"), 1);
	assert_false(state_empty(&st));
	/* a second apply changes nothing */
	assert_int_equal(enforce_hrtick_on(&st, err, sizeof(err)), 0);
	/* a profile without enforcement: hrtick now gives it back (tick enforcement then) */
	enforce_env_read(&e);
	enforce_decide(&e, false, &p);
	assert_int_equal(p.action, ENFORCE_GIVE_BACK);
	assert_int_equal(p.mode, ENFORCE_TICK);
	enforce_decide(&e, true, &p);
	assert_int_equal(p.action, ENFORCE_ALREADY_ON);
	state_free(&st);	/* the crash: memory lost, the file stays */

	open_state();		/* the next start (or irqresd --restore) loads it */
	assert_true(st.feature_saved);
	assert_string_equal(st.feature.name, "HRTICK_DL");
	assert_int_equal(st.feature.was, 0);
	assert_int_equal(st.feature.set, 1);
	assert_int_equal(enforce_restore(&st), 0);
	assert_int_equal(enforce_features_parse(fixtree_read(FEATURES), "HRTICK_DL"), 0);
	assert_false(st.feature_saved);
	assert_true(state_empty(&st));
	assert_int_equal(access(fixtree_path("run/state"), F_OK), -1);	/* nothing left */
	enforce_env_read(&e);
	enforce_decide(&e, false, &p);
	assert_int_equal(p.action, ENFORCE_KEEP);
	state_free(&st);
}

static void test_restore_obeys_a_change_since(void **unused)
{
	char err[512] = "";

	open_state();
	assert_int_equal(enforce_hrtick_on(&st, err, sizeof(err)), 0);
	fixtree_file(FEATURES, "SOMEONE NO_HRTICK_DL\n");	/* the admin turned it off */
	/* an apply while irqres holds the record leaves the admin's choice */
	assert_int_equal(enforce_hrtick_on(&st, err, sizeof(err)), 0);
	assert_string_equal(fixtree_read(FEATURES), "SOMEONE NO_HRTICK_DL\n");
	assert_int_equal(enforce_restore(&st), 0);
	assert_string_equal(fixtree_read(FEATURES), "SOMEONE NO_HRTICK_DL\n");	/* untouched */
	assert_false(st.feature_saved);
	state_free(&st);
}

static void test_switch_not_needed_or_impossible(void **unused)
{
	char err[512] = "";

	open_state();
	fixtree_file(FEATURES, FEATURES_ON);	/* on already: nothing to record */
	assert_int_equal(enforce_hrtick_on(&st, err, sizeof(err)), 0);
	assert_false(st.feature_saved);
	assert_int_equal(access(fixtree_path("run/state"), F_OK), -1);

	remove(fixtree_path(FEATURES));
	remove(fixtree_path("sys/kernel/debug/sched"));
	assert_int_equal(enforce_hrtick_on(&st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "enforcement: hrtick: debugfs is not mounted at"));
	assert_false(st.feature_saved);
	assert_int_equal(access(fixtree_path("run/state"), F_OK), -1);

	/* a record whose feature cannot be read now stays for a later restore */
	st.feature_saved = true;
	snprintf(st.feature.name, sizeof(st.feature.name), "HRTICK_DL");
	st.feature.set = 1;
	assert_int_equal(enforce_restore(&st), -ENOENT);
	assert_true(st.feature_saved);
	state_free(&st);
}

static void test_state_record_bad_lines(void **unused)
{
	char err[256] = "";

	fixtree_file("run/state", "# irqres state 1\nsched_feature name=HRTICK_DL was=2 set=1\n"
		     "sched_feature name=HRTICK_DL set=1\n"
		     "sched_feature name=HRTICK_DL was=0 set=1\n"
		     "sched_feature name=HRTICK_DL was=1 set=0\n");
	state_init(&st);
	assert_int_equal(state_load(&st, fixtree_path("run/state"), err, sizeof(err)), 2);
	assert_non_null(strstr(err, ":2: bad was"));
	assert_true(st.feature_saved);
	assert_int_equal(st.feature.was, 0);	/* the first good record holds the original */
	state_free(&st);
}

/* ---- the plan ---- */

static struct target tg;
static struct profile prof;
static struct match mv[1];
static struct match_list ml = { mv, 1, 1 };

static void plan_for(bool hrtick, struct plan *plan)
{
	struct plan_env env = { 0 };

	memset(&tg, 0, sizeof(tg));
	memset(mv, 0, sizeof(mv));
	snprintf(tg.name, sizeof(tg.name), "nic");
	tg.kind = TARGET_TASK;
	tg.runtime_ns = 1 * MS;
	tg.period_ns = tg.deadline_ns = 5 * MS;
	prof = (struct profile){ .path = "test.yaml", .targets = &tg, .n_targets = 1,
				 .hrtick = hrtick };
	mv[0].thread.pid = 4242;
	mv[0].thread.irq = -1;
	snprintf(mv[0].thread.comm, sizeof(mv[0].thread.comm), "busy");
	CPU_SET(0, &mv[0].thread.affinity);
	CPU_SET(1, &mv[0].thread.affinity);
	CPU_SET(0, &env.online);
	CPU_SET(1, &env.online);
	env.rt_runtime_us = 950000;
	env.rt_period_us = 1000000;
	enforce_env_read(&env.enforce);
	env.enforce_read = true;
	assert_int_equal(plan_build_env(&prof, &ml, &env, plan), 0);
}

static char *text_of(const struct plan *plan)
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	plan_report_text(plan, f);
	fclose(f);
	return buf;
}

static void test_plan_report(void **unused)
{
	struct plan plan;
	struct json j;
	const char *text;

	plan_for(false, &plan);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_warnings, 1);
	assert_non_null(strstr(plan.warnings[0], "target 'nic': Q = 1ms, T = 5ms: enforced at "
			       "the tick (4ms)"));
	text = text_of(&plan);
	assert_non_null(strstr(text, "\nBudget enforcement: at the scheduler tick, a budget may "
			       "overrun by up to 4ms per period\n  HZ=250 ("));
	assert_non_null(strstr(text, "  HRTICK_DL: off ("));
	json_init(&j);
	plan_report_json(&plan, &j);
	assert_int_equal(json_error(&j), 0);
	assert_non_null(strstr(json_buf(&j), "\"verdict\":\"ok\",\"owner\":null,\"overrun_max_ns\":4000000}"));
	assert_non_null(strstr(json_buf(&j), "\"enforcement\":{\"mode\":\"tick\",\"requested\":"
			       "false,\"action\":\"keep\",\"impossible\":null,\"granularity_ns\":"
			       "4000000,\"overrun_max_ns\":4000000,\"hz\":250,"));
	assert_non_null(strstr(json_buf(&j), "\"hres_active\":true,\"hrtimer_resolution_ns\":1,"
			       "\"hrtick_dl\":false,"));
	json_fini(&j);
	plan_free(&plan);

	plan_for(true, &plan);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_warnings, 0);
	text = text_of(&plan);
	assert_non_null(strstr(text, "Budget enforcement: by the hrtick (an hrtimer at the "
			       "runtime left), a budget may overrun by up to 10us per period\n"));
	assert_non_null(strstr(text, "  enforcement: hrtick: irqres switches HRTICK_DL on"));
	json_init(&j);
	plan_report_json(&plan, &j);
	assert_non_null(strstr(json_buf(&j), "\"enforcement\":{\"mode\":\"hrtick\",\"requested\":"
			       "true,\"action\":\"switch-on\",\"impossible\":null,"
			       "\"granularity_ns\":10000,"));
	json_fini(&j);
	plan_free(&plan);
	/* the dry run changed nothing */
	assert_string_equal(fixtree_read(FEATURES), FEATURES_OFF);

	/* debugfs not mounted: the profile's hrtick cannot be had, the plan is refused */
	remove(fixtree_path(FEATURES));
	remove(fixtree_path("sys/kernel/debug/sched"));
	plan_for(true, &plan);
	assert_false(plan.feasible);
	assert_int_equal(plan.n_errors, 1);
	assert_non_null(strstr(plan.errors[0], "test.yaml: enforcement: hrtick: debugfs is not "
			       "mounted at"));
	json_init(&j);
	plan_report_json(&plan, &j);
	assert_non_null(strstr(json_buf(&j), "\"action\":\"impossible\",\"impossible\":"
			       "\"debugfs is not mounted at"));
	json_fini(&j);
	plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features_parse),
		cmocka_unit_test_setup_teardown(test_env_from_fixture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_features_missing_or_unreadable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hz_measured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decide_and_warnings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switch_and_crash_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_obeys_a_change_since, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_switch_not_needed_or_impossible, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state_record_bad_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_report, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
