/* SPDX-License-Identifier: GPL-2.0-only */
/* test_plan.c - root domains, the kernel's admission arithmetic, verdicts, output. */
#include <errno.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "children.h"
#include "discover.h"
#include "dl.h"
#include "fixtree.h"
#include "irqres.h"
#include "json.h"
#include "plan.h"
#include "plan_report.h"
#include "state.h"

#define MS 1000000ULL

static struct target targets[2];
static struct profile prof;
static struct match mv[4];
static struct match_list ml;
static struct plan_env env;

/* A 2-CPU machine at the default RT limit (950000/1000000 us), no partitions possible. */
static int setup(void **state)
{
	if (fixtree_setup(state))
		return -1;
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/cgroup", fixtree_root);
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run", fixtree_root);
	memset(targets, 0, sizeof(targets));
	memset(&prof, 0, sizeof(prof));
	memset(mv, 0, sizeof(mv));
	memset(&env, 0, sizeof(env));
	snprintf(targets[0].name, sizeof(targets[0].name), "nic");
	targets[0].runtime_ns = 2 * MS;
	targets[0].period_ns = 10 * MS;
	targets[0].deadline_ns = 10 * MS;
	snprintf(targets[1].name, sizeof(targets[1].name), "player");
	targets[1].kind = TARGET_TASK;
	targets[1].runtime_ns = 20 * MS;
	targets[1].period_ns = 40 * MS;
	targets[1].deadline_ns = 40 * MS;
	targets[1].line = 9;
	targets[1].col = 5;
	prof.path = "test.yaml";
	prof.targets = targets;
	prof.n_targets = 2;
	ml.v = mv;
	ml.n = 0;
	ml.cap = 4;
	CPU_SET(0, &env.online);
	CPU_SET(1, &env.online);
	env.rt_runtime_us = 950000;
	env.rt_period_us = 1000000;
	snprintf(env.partition_err, sizeof(env.partition_err),
		 "no cgroup v2 at /sys/fs/cgroup (test)");
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	children_kill_all();
	return fixtree_teardown(state);
}

static struct match *add_thread(size_t target, pid_t pid, const char *comm, int irq,
				const int *cpus, int ncpus)
{
	struct match *m = &mv[ml.n++];

	m->target = target;
	m->thread.pid = pid;
	m->thread.irq = irq;
	m->thread.policy = irq >= 0 ? SCHED_FIFO : SCHED_OTHER;
	m->thread.priority = irq >= 0 ? 50 : 0;
	snprintf(m->thread.comm, sizeof(m->thread.comm), "%s", comm);
	CPU_ZERO(&m->thread.affinity);
	for (int i = 0; i < ncpus; i++)
		CPU_SET(cpus[i], &m->thread.affinity);
	return m;
}

static const int cpu0[] = { 0 }, both[] = { 0, 1 };

/* ti recorded in irqres's own state file (RUN_DIR/state). */
static void record_own(const struct thread_info *ti)
{
	struct state st;
	struct state_thread t = { .pid = ti->pid, .starttime = ti->starttime,
				  .policy = SCHED_FIFO, .priority = 50 };
	char err[256];

	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	snprintf(t.comm, sizeof(t.comm), "%s", ti->comm);
	assert_int_equal(state_add_thread(&st, &t), 0);
	state_free(&st);
}

static struct plan_dltask dl_tasks[4];

static void add_dl(pid_t pid, const int *cpus, int ncpus, uint64_t runtime, uint64_t period)
{
	struct plan_dltask *t = &dl_tasks[env.n_dl++];

	t->pid = pid;
	CPU_ZERO(&t->cpus);
	for (int i = 0; i < ncpus; i++)
		CPU_SET(cpus[i], &t->cpus);
	t->bw = dl_to_ratio(period, runtime);
	env.dl = dl_tasks;
}

static void test_admission_boundary(void **unused)
{
	struct plan plan;

	/* capacity: to_ratio(1 s, 0.95 s) = 996147 per CPU, 1992294 for 2 CPUs.
	 * 0.9 (943718) already in use + two 0.5 (524288 each) = 1992294: admitted exactly */
	targets[1].runtime_ns = 20 * MS;
	add_dl(900, both, 2, 9 * MS, 10 * MS);
	add_thread(1, 501, "player", -1, both, 2);
	add_thread(1, 502, "player2", -1, both, 2);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 1);
	assert_int_equal(plan.domains[0].cap_bw, 1992294);
	assert_int_equal(plan.domains[0].existing_bw, 943718);
	assert_int_equal(plan.domains[0].new_bw, 1048576);
	assert_true(plan.domains[0].ok);
	assert_string_equal(plan.items[0].verdict, "ok");
	assert_int_equal(plan.items[0].refusal, 0);
	assert_null(plan_first_refusal(&plan));
	assert_false(plan.items[0].needs_partition);
	plan_free(&plan);

	/* one more nanosecond of runtime tips it over, as in the kernel */
	targets[1].runtime_ns = 20 * MS + 100;
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_false(plan.domains[0].ok);
	assert_false(plan.items[1].ok);
	assert_non_null(strstr(plan.items[1].verdict, "EBUSY: admission: "));
	assert_int_equal(plan.items[1].refusal, EBUSY);
	assert_ptr_equal(plan_first_refusal(&plan), &plan.items[0]);
	assert_non_null(strstr(plan.items[1].verdict, "= 0.50 more bandwidth on CPUs 0-1, in use "
			       "1.40 of 1.90"));
	assert_int_equal(plan.n_errors, 2);
	assert_non_null(strstr(plan.errors[1], "player2 (pid 502): EBUSY"));
	plan_free(&plan);
}

/* set-budget's plan: the same admission rule for threads with no profile behind them */
static void test_budget_plan(void **unused)
{
	struct thread_info ti[2] = { 0 };
	struct plan plan;

	add_dl(900, both, 2, 9 * MS, 10 * MS);
	for (int i = 0; i < 2; i++) {
		ti[i].pid = 501 + i;
		ti[i].irq = -1;
		CPU_SET(0, &ti[i].affinity);
		CPU_SET(1, &ti[i].affinity);
		snprintf(ti[i].comm, sizeof(ti[i].comm), "player%d", i);
	}
	assert_int_equal(plan_build_budget(ti, 2, 20 * MS, 0, 40 * MS, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_null(plan.prof);
	assert_int_equal(plan.items[0].deadline_ns, 40 * MS);
	assert_int_equal(plan.domains[0].new_bw, 1048576);
	plan_free(&plan);

	assert_int_equal(plan_build_budget(ti, 2, 20 * MS + 100, 30 * MS, 40 * MS, &env, &plan),
			 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].deadline_ns, 30 * MS);
	assert_ptr_equal(plan_first_refusal(&plan), &plan.items[0]);
	assert_int_equal(plan.items[0].refusal, EBUSY);
	assert_non_null(strstr(plan.items[0].verdict, "EBUSY: admission: "));
	plan_free(&plan);
}

static void test_replaced_threads_not_counted(void **unused)
{
	struct plan plan;

	/* pid 501 is already SCHED_DEADLINE 0.9: the plan replaces it, so it is not counted */
	add_dl(501, both, 2, 9 * MS, 10 * MS);
	add_dl(902, both, 2, 9 * MS, 10 * MS);
	add_thread(1, 501, "player", -1, both, 2);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.domains[0].existing_bw, 943718);
	plan_free(&plan);
}

static void test_pinned_no_partition(void **unused)
{
	struct plan plan;
	struct json j;

	add_thread(0, 105, "irq/11-eth0", 11, cpu0, 1);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_true(plan.items[0].needs_partition);
	assert_string_equal(plan.items[0].partition, "irqres.cpu0");
	assert_string_equal(plan.items[0].verdict,
			    "EPERM: thread pinned to CPU 0, root domain spans 0-1; cpuset partition "
			    "irqres.cpu0 could not be created: no cgroup v2 at /sys/fs/cgroup (test)");
	assert_string_equal(plan.errors[0],
			    "irq/11-eth0 (pid 105): EPERM: thread pinned to CPU 0, root domain spans "
			    "0-1; cpuset partition irqres.cpu0 could not be created: no cgroup v2 at "
			    "/sys/fs/cgroup (test)");

	json_init(&j);
	plan_report_json(&plan, &j);
	assert_int_equal(json_error(&j), 0);
	assert_non_null(strstr(json_buf(&j), "{\"profile\":\"test.yaml\",\"feasible\":false,"
			       "\"summary\":\"the kernel will NOT accept it\",\"items\":[{"
			       "\"target\":\"nic\",\"kind\":\"irq\","
			       "\"pid\":105,\"comm\":\"irq/11-eth0\",\"irq\":11,\"cpus\":\"0\","
			       "\"old_policy\":\"fifo\",\"old_priority\":50,\"old_nice\":0,"
			       "\"new_policy\":\"deadline\",\"runtime_ns\":2000000,"
			       "\"deadline_ns\":10000000,\"period_ns\":10000000,\"bw\":0.2,"
			       "\"needs_partition\":true,\"moves_into_partition\":true,"
			       "\"partition\":\"irqres.cpu0\","
			       "\"cpuset\":\""));
	assert_non_null(strstr(json_buf(&j), "/cgroup/irqres.cpu0\",\"buffer_check\":\"unknown\","
			       "\"verdict\":\"EPERM: thread pinned"));
	assert_non_null(strstr(json_buf(&j), "\"domains\":[{\"cpus\":\"0-1\",\"partition\":null,"
			       "\"new\":false,\"isolated\":false,\"capacity\":1.9,"));
	assert_non_null(strstr(json_buf(&j), "\"warnings\":[],\"errors\":[\"irq/11-eth0 (pid 105)"));
	json_fini(&j);
	plan_free(&plan);
}

static void test_pinned_with_partition(void **unused)
{
	struct plan plan;
	FILE *f;
	char *text = NULL;
	size_t len = 0;

	env.partitions_possible = true;
	add_dl(900, both, 2, 4 * MS, 10 * MS);		/* stays in the default domain */
	add_thread(0, 105, "irq/11-eth0", 11, cpu0, 1);
	add_thread(0, 106, "irq/12-eth0", 12, cpu0, 1);	/* shares the partition */
	add_thread(1, 501, "mpv", -1, both, 2);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 2);
	/* the default domain shrinks to CPU 1 and keeps the existing 0.4 */
	assert_string_equal(plan.domains[0].partition, "");
	assert_int_equal(plan.domains[0].ncpus, 1);
	assert_true(CPU_ISSET(1, &plan.domains[0].cpus));
	assert_int_equal(plan.domains[0].cap_bw, 996147);
	assert_int_equal(plan.domains[0].existing_bw, dl_to_ratio(10 * MS, 4 * MS));
	assert_int_equal(plan.domains[0].new_bw, 524288);	/* mpv 20/40 */
	assert_string_equal(plan.domains[1].partition, "irqres.cpu0");
	assert_true(plan.domains[1].is_new);
	assert_int_equal(plan.domains[1].new_bw, 2 * dl_to_ratio(10 * MS, 2 * MS));
	assert_int_equal(plan.items[0].domain, 1);
	assert_int_equal(plan.items[1].domain, 1);
	assert_int_equal(plan.items[2].domain, 0);
	assert_true(plan.items[0].needs_partition);
	assert_false(plan.items[2].needs_partition);
	assert_int_equal(plan.n_warnings, 1);
	assert_non_null(strstr(plan.warnings[0], "cpuset partition irqres.cpu0 will take CPUs 0 "
			       "out of the default root domain: tasks of the root cgroup"));

	f = open_memstream(&text, &len);
	plan_report_text(&plan, f);
	fclose(f);
	assert_non_null(strstr(text, "Plan for test.yaml: the kernel will accept it"));
	assert_non_null(strstr(text, "irq/11-eth0"));
	assert_non_null(strstr(text, "fifo 50"));
	/* one column order everywhere: runtime, deadline, period (analysis/irqres/plan.py) */
	assert_non_null(strstr(text, "\nTARGET  THREAD       PID  IRQ  CPUS  NOW           RUNTIME"
			       "  DEADLINE  PERIOD  BW     PARTITION    BUFFER   VERDICT\n"));
	assert_non_null(strstr(text, "\nnic     irq/11-eth0  105  11   0     fifo 50       2ms    "
			       "  10ms      10ms    0.200  irqres.cpu0  unknown  ok\n"));
	assert_non_null(strstr(text, "\nplayer  mpv          501  -    0-1   other nice 0  20ms   "
			       "  40ms      40ms    0.500  -            unknown  ok\n"));
	assert_non_null(strstr(text, "\n0            irqres.cpu0 (new)  0.950     0.000     0.400"
			       "  0.400  yes\n"));
	assert_non_null(strstr(text, "irqres.cpu0 (new)"));
	assert_non_null(strstr(text, "\nwarning: cpuset partition irqres.cpu0 will take CPUs 0"));
	free(text);
	plan_free(&plan);

	/* the same with the default domain too full for the shrink: refused */
	dl_tasks[0].bw = dl_to_ratio(10 * MS, 8 * MS);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_false(plan.domains[0].ok);
	assert_true(plan.items[0].ok);
	assert_non_null(strstr(plan.items[2].verdict, "EBUSY: admission: 20ms/40ms = 0.50 more "
			       "bandwidth on CPUs 1, in use 0.80 of 0.95"));
	plan_free(&plan);
}

static void test_no_setaffinity_and_admission_off(void **unused)
{
	struct plan plan;

	env.partitions_possible = true;
	fixtree_file("proc/105/stat", "105 (irq/11-eth0) S 2 0 0 0 -1 77594688 0 0 0 0 0 0 0 0 "
		     "-51 0 1 0 300 0 0\n");
	add_thread(0, 105, "irq/11-eth0", 11, cpu0, 1);
	/* before 6.19 the kernel counts it where it runs: the plan has nothing to warn of */
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_false(plan_item_moves(&plan.items[0]));
	assert_int_equal(plan.n_warnings, 1);	/* the partition's */
	assert_non_null(strstr(plan.warnings[0], "cpuset partition irqres.cpu0 will take"));
	plan_free(&plan);
	/* from 6.19 it counts it in the domain of its cgroup's CPUs: said */
	env.dl_counts_by_cgroup = true;
	/* it cannot move into the partition of its CPU, and need not: it stays beside it */
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_true(plan.items[0].no_setaffinity);
	assert_true(plan.items[0].needs_partition);
	assert_false(plan_item_moves(&plan.items[0]));
	assert_string_equal(plan.items[0].partition, "irqres.cpu0");
	assert_string_equal(plan.items[0].verdict, "ok");
	assert_int_equal(plan.n_warnings, 2);	/* this one and the partition's */
	assert_non_null(strstr(plan.warnings[0], "irq/11-eth0 (pid 105) stays in cgroup "));
	assert_non_null(strstr(plan.warnings[0], "beside cpuset partition irqres.cpu0 "
			       "(PF_NO_SETAFFINITY"));
	assert_non_null(strstr(plan.warnings[1], "cpuset partition irqres.cpu0 will take"));
	plan_free(&plan);

	/* where no partition can be made, the refusal names the way out */
	env.partitions_possible = false;
	snprintf(env.partition_err, sizeof(env.partition_err), "no cpuset controller");
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_non_null(strstr(plan.items[0].verdict, "EPERM: thread pinned to CPU 0, root domain "
			       "spans 0-1; cpuset partition irqres.cpu0 could not be created"));
	assert_int_equal(plan.items[0].refusal, EPERM);
	plan_free(&plan);
	env.partitions_possible = true;

	prof.admission_off = true;
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	assert_true(plan.domains[0].unlimited);
	assert_non_null(strstr(plan.warnings[0], "admission control will be turned off"));
	plan_free(&plan);
}

/* From 6.19 the kernel counts a thread that stays beside its partition in the domain of
 * its cgroup's CPUs, but checks a new budget against the partition's count, which lacks
 * it: a budget lowered by more than that count is refused (measured on 7.3). */
static void test_staying_thread_budget_floor(void **unused)
{
	struct thread_info ti = { .pid = 105, .irq = 11 };
	struct cpuset_part part = { .name = "irqres.cpu0", .valid = true, .owned = true };
	struct plan plan;

	fixtree_file("proc/105/stat", "105 (irq/11-eth0) S 2 0 0 0 -1 77594688 0 0 0 0 0 0 0 0 "
		     "-51 0 1 0 300 0 0\n");
	CPU_SET(0, &part.cpus);
	env.parts = &part;
	env.n_parts = 1;
	env.partitions_possible = true;
	env.dl_counts_by_cgroup = true;
	add_dl(105, cpu0, 1, 4500 * 1000, 10 * MS);		/* 471859 */
	env.kernel_total_bw[0] = 52428;			/* CPU 0's fair server alone */
	env.kernel_total_bw[1] = 52428 + 471859;
	CPU_SET(0, &env.kernel_bw_cpus);
	CPU_SET(1, &env.kernel_bw_cpus);
	snprintf(ti.comm, sizeof(ti.comm), "irq/11-eth0");
	snprintf(ti.cgroup, sizeof(ti.cgroup), "/");
	CPU_SET(0, &ti.affinity);
	ti.policy = SCHED_DEADLINE;
	/* down to 500us: 419431 below what it holds, more than CPU 0's count */
	assert_int_equal(plan_build_budget(&ti, 1, 500 * 1000, 0, 10 * MS, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].refusal, EBUSY);
	assert_non_null(strstr(plan.items[0].verdict, "EBUSY: the kernel counts this thread (0.45 "
			       "of a CPU now) in the domain of its cgroup's CPUs, not in irqres.cpu0 "
			       "where it runs, but checks a new budget against CPUs 0, whose count "
			       "(0.05) lacks it: it refuses any runtime below 4.000006ms every "
			       "10ms"));
	plan_free(&plan);
	/* at that floor (0.45 - 0.05 of a CPU, rounded up to a runtime): accepted; 1 ns less
	 * is one unit of bandwidth less, refused. Accepted, the kernel charges the change to
	 * CPU 0's count, which lacks the thread: irqresd has the partition count again */
	assert_int_equal(plan_build_budget(&ti, 1, 4000006, 0, 10 * MS, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_string_equal(plan.items[0].recount, "irqres.cpu0");
	plan_free(&plan);
	/* a kernel that counts it where it runs takes the change where it counts it */
	env.dl_counts_by_cgroup = false;
	assert_int_equal(plan_build_budget(&ti, 1, 4000006, 0, 10 * MS, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_string_equal(plan.items[0].recount, "");
	plan_free(&plan);
	env.dl_counts_by_cgroup = true;
	assert_int_equal(plan_build_budget(&ti, 1, 4000005, 0, 10 * MS, &env, &plan), 0);
	assert_false(plan.feasible);
	plan_free(&plan);
	/* what set-budget reads for that (it reads no SCHED_DEADLINE task otherwise): the
	 * kernel's counts and the thread's present budget, only where they set a floor */
	struct plan_env seen = { .dl_counts_by_cgroup = false };
	struct dl_attr now = { .sched_policy = SCHED_DEADLINE, .sched_runtime = 4500 * 1000,
			       .sched_period = 10 * MS };

	fixtree_file("sys/kernel/debug/sched/debug", "dl_rq[0]:\n  .dl_nr_running : 1\n"
		     "  .dl_bw->bw                     : 1048576\n"
		     "  .dl_bw->total_bw               : 52428\n");
	assert_int_equal(plan_env_for_budget(&seen, &ti, &now, 1), 0);
	assert_int_equal(seen.n_dl, 0);
	assert_false(CPU_ISSET(0, &seen.kernel_bw_cpus));
	seen.dl_counts_by_cgroup = true;
	assert_int_equal(plan_env_for_budget(&seen, &ti, &now, 1), 0);
	assert_int_equal(seen.n_dl, 1);
	assert_int_equal(seen.dl[0].pid, 105);
	assert_int_equal(seen.dl[0].bw, 471859);
	assert_true(CPU_ISSET(0, &seen.kernel_bw_cpus));
	assert_int_equal(seen.kernel_total_bw[0], 52428);
	plan_env_free(&seen);
	/* a kernel that counts it where it runs: no floor */
	env.dl_counts_by_cgroup = false;
	env.kernel_total_bw[0] = 52428 + 471859;
	assert_int_equal(plan_build_budget(&ti, 1, 500 * 1000, 0, 10 * MS, &env, &plan), 0);
	assert_true(plan.feasible);
	plan_free(&plan);
	env.parts = NULL;
	env.n_parts = 0;
}

static void test_buffering_and_empty(void **unused)
{
	struct plan plan;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	/* (T - Q)/P = 8ms/50us = 160 >= N_c = 100 */
	targets[1].min_interarrival_ns = 50000;
	targets[1].buffer = 100;
	targets[1].runtime_ns = 2 * MS;
	targets[1].period_ns = targets[1].deadline_ns = 10 * MS;
	add_thread(1, 501, "mpv", -1, both, 2);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].buffer_check, PROFILE_BUFFER_VIOLATED);
	assert_non_null(strstr(plan.items[0].verdict, "buffering check violated"));
	assert_int_equal(plan.items[0].refusal, EINVAL);
	plan_free(&plan);

	targets[1].buffer = 161;
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.items[0].buffer_check, PROFILE_BUFFER_OK);
	plan_free(&plan);

	/* nothing matched: named per target, never blamed on the kernel */
	ml.n = 0;
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan_add_match_notes(&plan, &prof, &(struct match_unmatched){
		.v = (size_t[]){ 1 }, .n = 1 }), 0);
	assert_string_equal(plan.errors[0], "test.yaml:9:5: target 'player' matches no thread");
	assert_string_equal(plan_report_summary(&plan), "REFUSED: the profile matches no thread");
	f = open_memstream(&text, &len);
	plan_report_text(&plan, f);
	fclose(f);
	assert_string_equal(text, "Plan for test.yaml: REFUSED: the profile matches no thread\n\n"
			    "no thread matched\n\nerror: test.yaml:9:5: target 'player' matches "
			    "no thread\n");
	free(text);
	plan_free(&plan);
}

static void set_cpus(cpu_set_t *set, const int *cpus, int n)
{
	CPU_ZERO(set);
	for (int i = 0; i < n; i++)
		CPU_SET(cpus[i], set);
}

static bool cpus_are(const cpu_set_t *set, const int *cpus, int n)
{
	cpu_set_t want;

	set_cpus(&want, cpus, n);
	return CPU_EQUAL(set, &want);
}

/* A new IRQ thread may still run on every CPU: the kernel pins it at its first
 * interrupt. The plan takes its IRQ's effective affinity instead. */
static void test_irq_thread_planned_by_irq_affinity(void **unused)
{
	static struct cpuset_part part = { .name = "irqres.cpu0", .valid = true, .owned = true };
	struct plan plan;
	cpu_set_t c;

	env.partitions_possible = true;
	fixtree_file("proc/irq/11/effective_affinity_list", "0\n");
	fixtree_file("proc/irq/11/smp_affinity_list", "0-1\n");
	add_thread(0, 105, "irq/11-eth0", 11, both, 2);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_true(cpus_are(&plan.items[0].cpus, cpu0, 1));
	assert_true(plan.items[0].needs_partition);
	assert_string_equal(plan.items[0].partition, "irqres.cpu0");
	assert_true(plan.domains[plan.items[0].domain].is_new);
	plan_free(&plan);

	/* the partition exists already (an earlier thread of this IRQ): it joins it */
	set_cpus(&part.cpus, cpu0, 1);
	env.parts = &part;
	env.n_parts = 1;
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_true(plan.items[0].needs_partition);
	assert_string_equal(plan.items[0].partition, "irqres.cpu0");
	assert_false(plan.domains[plan.items[0].domain].is_new);
	plan_free(&plan);
	env.parts = NULL;
	env.n_parts = 0;

	/* not started yet (empty effective affinity): smp_affinity_list, and the hotplug
	 * path waits (discover: 1) */
	fixtree_file("proc/irq/11/effective_affinity_list", "\n");
	assert_int_equal(discover_irq_cpus(11, &c), 1);
	assert_true(cpus_are(&c, both, 2));
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	plan_free(&plan);

	/* no effective affinity file (the kernel has none): smp_affinity_list */
	unlink(fixtree_path("proc/irq/11/effective_affinity_list"));
	fixtree_file("proc/irq/11/smp_affinity_list", "1\n");
	assert_int_equal(discover_irq_cpus(11, &c), 0);
	assert_true(cpus_are(&c, (const int[]){ 1 }, 1));
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_string_equal(plan.items[0].partition, "irqres.cpu1");
	plan_free(&plan);

	/* no /proc/irq/11 at all: the thread's own affinity */
	unlink(fixtree_path("proc/irq/11/smp_affinity_list"));
	assert_int_equal(discover_irq_cpus(11, &c), -ENOENT);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(cpus_are(&plan.items[0].cpus, both, 2));
	assert_false(plan.items[0].needs_partition);
	plan_free(&plan);
}

static void online(int n)
{
	CPU_ZERO(&env.online);
	for (int i = 0; i < n; i++)
		CPU_SET(i, &env.online);
}

static const char *warning_with(const struct plan *plan, const char *text)
{
	for (size_t i = 0; i < plan->n_warnings; i++)
		if (strstr(plan->warnings[i], text))
			return plan->warnings[i];
	return NULL;
}

/* A plan for just two IRQ threads, on CPUs a and b. */
static void plan_two(struct plan *plan, const int *a, int na, const int *b, int nb)
{
	ml.n = 0;
	add_thread(0, 105, "irq/24-ens5", 24, a, na);
	add_thread(0, 106, "irq/25-ens5", 25, b, nb);
	assert_int_equal(plan_build_env(&prof, &ml, &env, plan), 0);
}

/* Partitions for every CPU would leave the root cgroup none: the kernel refuses the last
 * one. The lowest CPU's threads stay in the default domain, which is then their CPU. */
static void test_partitions_leave_the_default_domain_a_cpu(void **unused)
{
	const int c1[] = { 1 }, c2[] = { 2 }, c12[] = { 1, 2 }, c02[] = { 0, 2 };
	struct plan plan;
	FILE *f;
	char *text = NULL;
	size_t len = 0;

	/* 2 CPUs, queue threads on both */
	env.partitions_possible = true;
	add_thread(0, 105, "irq/24-ens5", 24, cpu0, 1);
	add_thread(0, 106, "irq/25-ens5", 25, c1, 1);
	add_thread(0, 107, "irq/26-ens5", 26, cpu0, 1);
	add_thread(0, 108, "irq/27-ens5", 27, c1, 1);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 2);
	assert_string_equal(plan.domains[0].partition, "");
	assert_true(cpus_are(&plan.domains[0].cpus, cpu0, 1));
	assert_string_equal(plan.domains[1].partition, "irqres.cpu1");
	assert_true(plan.domains[1].is_new);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(plan.items[i].needs_partition, i % 2 == 1);
		assert_int_equal(plan.items[i].domain, i % 2);
		assert_string_equal(plan.items[i].partition, i % 2 ? "irqres.cpu1" : "");
	}
	assert_int_equal(plan.domains[0].new_bw, 2 * dl_to_ratio(10 * MS, 2 * MS));
	assert_non_null(warning_with(&plan, "CPU 0 stays in the default root domain (no cpuset "
				     "partition irqres.cpu0): partitions for every CPU would leave "
				     "the root cgroup's tasks none"));
	assert_non_null(warning_with(&plan, "irqres.cpu1 will take CPUs 1 out"));
	f = open_memstream(&text, &len);
	plan_report_text(&plan, f);
	fclose(f);
	assert_non_null(strstr(text, "warning: CPU 0 stays in the default root domain"));
	assert_non_null(strstr(text, "warning: cpuset partition irqres.cpu1 will take CPUs 1 out "
			       "of the default root domain: tasks of the root cgroup (all that are "
			       "in no partition) will no longer run there"));
	free(text);
	plan_free(&plan);

	/* irqres.cpu1 exists from an earlier start: the default domain is CPU 0 already */
	{
		static struct cpuset_part part = { .name = "irqres.cpu1", .valid = true,
						   .owned = true };

		set_cpus(&part.cpus, c1, 1);
		env.parts = &part;
		env.n_parts = 1;
		snprintf(mv[1].thread.cgroup, sizeof(mv[1].thread.cgroup), "/irqres.cpu1");
		snprintf(mv[3].thread.cgroup, sizeof(mv[3].thread.cgroup), "/irqres.cpu1");
		assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
		assert_true(plan.feasible);
		for (int i = 0; i < 4; i++)
			assert_false(plan.items[i].needs_partition);
		assert_int_equal(plan.n_warnings, 0);
		plan_free(&plan);
		env.parts = NULL;
		env.n_parts = 0;
	}

	/* 4 CPUs, threads on 0 and 2: both partitions, the default domain keeps 1 and 3 */
	online(4);
	plan_two(&plan, cpu0, 1, c2, 1);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 3);
	assert_true(cpus_are(&plan.domains[0].cpus, (const int[]){ 1, 3 }, 2));
	assert_true(plan.items[0].needs_partition);
	assert_true(plan.items[1].needs_partition);
	assert_null(warning_with(&plan, "stays in the default"));
	plan_free(&plan);

	/* 3 CPUs, threads on each: partitions for 1 and 2, CPU 0's thread stays */
	online(3);
	add_thread(0, 107, "irq/26-ens5", 26, c1, 1);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	assert_string_equal(plan.items[1].partition, "irqres.cpu2");
	assert_string_equal(plan.items[2].partition, "irqres.cpu1");
	assert_true(cpus_are(&plan.domains[plan.items[0].domain].cpus, cpu0, 1));
	plan_free(&plan);

	/* 3 CPUs, threads on 0 and on 1-2: the lowest CPU is kept, a two-CPU partition made */
	plan_two(&plan, cpu0, 1, c12, 2);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	assert_string_equal(plan.items[1].partition, "irqres.cpu1-2");
	plan_free(&plan);

	/* threads whose CPUs overlap cannot both have a partition: said, not attempted */
	plan_two(&plan, c02, 2, c12, 2);
	assert_false(plan.feasible);
	assert_non_null(strstr(plan.items[1].verdict, "cpuset partition irqres.cpu1-2 would "
			       "overlap partition irqres.cpu0,2 of another thread"));
	plan_free(&plan);
}

static void test_env_from_fixture(void **unused)
{
	struct plan_env e;
	struct plan plan;

	fixtree_file("sys/devices/system/cpu/online", "0-3\n");
	fixtree_file("sys/devices/system/cpu/isolated", "3\n");
	fixtree_file("proc/sys/kernel/sched_rt_runtime_us", "-1\n");
	fixtree_file("proc/sys/kernel/sched_rt_period_us", "1000000\n");
	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu\n");
	fixtree_file("cgroup/irqres.cpu2/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/irqres.cpu2/cpuset.cpus.effective", "2\n");
	fixtree_file("sys/kernel/debug/sched/fair_server/cpu0/runtime", "50000000\n");
	fixtree_file("sys/kernel/debug/sched/fair_server/cpu0/period", "1000000000\n");
	fixtree_file("sys/kernel/debug/sched/fair_server/cpu1/runtime", "50000000\n");
	fixtree_file("sys/kernel/debug/sched/fair_server/cpu1/period", "1000000000\n");
	assert_int_equal(plan_env_read(&e, true), 0);
	assert_int_equal(e.server_bw[0], dl_to_ratio(1000000000, 50000000));
	assert_int_equal(e.server_bw[2], 0);
	assert_int_equal(CPU_COUNT(&e.online), 4);
	assert_true(CPU_ISSET(3, &e.isolated));
	assert_int_equal(e.rt_runtime_us, -1);
	assert_true(e.partitions_possible);
	assert_int_equal(e.n_parts, 1);

	/* a thread pinned to CPU 2 is in irqres.cpu2's domain: no new partition, but it
	 * joins that one (its cgroup is not irqres.cpu2's), as the first apply would do */
	add_thread(0, 105, "irq/11-eth0", 11, (const int[]){ 2 }, 1);
	add_thread(1, 501, "mpv", -1, (const int[]){ 0, 1, 2, 3 }, 4);
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 3);
	assert_string_equal(plan.domains[0].partition, "irqres.cpu2");
	assert_int_equal(plan.domains[1].ncpus, 2);	/* 0-1: 2 in a partition, 3 isolated */
	assert_false(plan.domains[1].isolated);
	assert_true(plan.domains[2].isolated);		/* 3: the isolated CPUs' own */
	assert_int_equal(plan.domains[2].ncpus, 1);
	assert_true(plan.domains[1].unlimited);
	/* the servers of CPUs 0 and 1 count as bandwidth in use */
	assert_int_equal(plan.domains[1].existing_bw, 2 * dl_to_ratio(1000000000, 50000000));
	assert_int_equal(plan.domains[0].existing_bw, 0);
	assert_true(plan.items[0].needs_partition);
	assert_string_equal(plan.items[0].partition, "irqres.cpu2");
	assert_false(plan.items[1].needs_partition);
	assert_int_equal(plan.items[0].domain, 0);
	assert_int_equal(plan.items[1].domain, 1);
	assert_string_equal(plan.items[0].verdict, "ok");
	plan_free(&plan);

	/* already in the partition's cgroup: nothing to move */
	snprintf(mv[0].thread.cgroup, sizeof(mv[0].thread.cgroup), "/irqres.cpu2");
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	assert_string_equal(plan.items[0].partition, "");
	plan_free(&plan);

	/* a partition irqres does not own is not joined: the thread stays where it is */
	fixtree_file("cgroup/rt.slice/cpuset.cpus.partition", "root\n");
	fixtree_file("cgroup/rt.slice/cpuset.cpus.effective", "1\n");
	plan_env_free(&e);
	assert_int_equal(plan_env_read(&e, true), 0);
	mv[0].thread.cgroup[0] = '\0';
	CPU_ZERO(&mv[0].thread.affinity);
	CPU_SET(1, &mv[0].thread.affinity);
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_string_equal(plan.domains[plan.items[0].domain].partition, "rt.slice");
	assert_false(plan.items[0].needs_partition);
	plan_free(&plan);
	plan_env_free(&e);

	/* the quick read reuses the limits read a moment ago; a full one and one after
	 * plan_limits_changed() read them again */
	unlink(fixtree_path("proc/sys/kernel/sched_rt_period_us"));
	assert_int_equal(plan_env_read(&e, false), 0);
	assert_int_equal(e.rt_period_us, 1000000);
	plan_env_free(&e);
	assert_int_equal(plan_env_read(&e, true), -ENOENT);
	fixtree_file("proc/sys/kernel/sched_rt_period_us", "1000000\n");
	assert_int_equal(plan_env_read(&e, true), 0);
	plan_env_free(&e);
	unlink(fixtree_path("proc/sys/kernel/sched_rt_period_us"));
	plan_limits_changed();
	assert_int_equal(plan_env_read(&e, false), -ENOENT);
	unlink(fixtree_path("sys/devices/system/cpu/online"));
	assert_int_equal(plan_env_read(&e, false), -ENOENT);
}

/*
 * CPUs isolcpus=domain isolated are one root domain of their own (the kernel's
 * def_root_domain), which a thread pinned to all of them covers; a thread pinned to some
 * of them cannot be given one by a partition (the kernel builds no domain for them).
 */
static void test_isolated_cpus_are_one_root_domain(void **unused)
{
	struct plan_env e;
	struct plan plan;

	fixtree_file("sys/devices/system/cpu/online", "0-3\n");
	fixtree_file("sys/devices/system/cpu/isolated", "3\n");
	fixtree_file("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	fixtree_file("proc/sys/kernel/sched_rt_period_us", "1000000\n");
	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu\n");
	assert_int_equal(plan_env_read(&e, true), 0);
	add_thread(0, 105, "irq/11-eth0", 11, (const int[]){ 3 }, 1);
	add_thread(1, 501, "mpv", -1, (const int[]){ 0, 1, 2 }, 3);
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 2);
	assert_false(plan.items[0].needs_partition);
	assert_true(plan.domains[plan.items[0].domain].isolated);
	assert_int_equal(plan.domains[plan.items[0].domain].ncpus, 1);
	assert_false(plan.domains[plan.items[1].domain].isolated);
	assert_int_equal(plan.domains[plan.items[1].domain].ncpus, 3);
	plan_free(&plan);
	plan_env_free(&e);

	/* two isolated CPUs, the thread pinned to one of them: refused, and why */
	fixtree_file("sys/devices/system/cpu/isolated", "2-3\n");
	assert_int_equal(plan_env_read(&e, true), 0);
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.items[0].refusal, EPERM);
	assert_non_null(strstr(plan.items[0].verdict, "root domain spans 2-3; its CPU is "
			       "isolated (isolcpus=domain)"));
	plan_free(&plan);
	plan_env_free(&e);
}

static void test_env_counts_real_deadline_tasks(void **unused)
{
	struct plan_env e;
	pid_t pid;
	bool seen = false;

	REQUIRE_DL();
	irqres_paths_default();
	pid = child_spawn("irqres-dl");
	assert_int_equal(dl_set_deadline(pid, 1 * MS, 100 * MS, 100 * MS), 0);
	assert_int_equal(plan_env_read(&e, true), 0);
	for (size_t i = 0; i < e.n_dl; i++) {
		if (e.dl[i].pid != pid)
			continue;
		seen = true;
		assert_int_equal(e.dl[i].bw, dl_to_ratio(100 * MS, 1 * MS));
	}
	assert_true(seen);
	plan_env_free(&e);
	child_kill(pid);
}


/*
 * The files of two real kernels, captured in the VM suite's guest (tests/vm,
 * test_admission.py) while irqresd held irq/11-eth0 at 2ms/10ms in partition irqres.cpu0
 * (fixtures/plan/<kernel>/: debugfs sched/debug and fair_server, the RT limits, the
 * partition). The fill task pinned to CPU 0 beside the NIC thread may take exactly what
 * the kernel's dl_bw->total_bw leaves: on 6.1 that is the NIC thread alone (the kernel
 * accepted 786432 ns every 2^20 ns there and refused 786433); on 6.12 the CPU's fair
 * server (50ms/1s = 52428) is in the count as well.
 */
static void plan_kernel_fixture(const char *kernel, pid_t nic_pid, int64_t total0,
				int64_t total1, uint64_t server)
{
	static const uint64_t fill_t = 1ULL << 20;
	struct plan_env e;
	struct plan plan;
	uint64_t limit;
	struct match *nic, *fill;

	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "fixtures/plan/%s/proc", kernel);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "fixtures/plan/%s/sys", kernel);
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "fixtures/plan/%s/cgroup",
		 kernel);
	plan_limits_changed();
	assert_int_equal(plan_env_read(&e, true), 0);
	assert_true(CPU_ISSET(0, &e.kernel_bw_cpus) && CPU_ISSET(1, &e.kernel_bw_cpus));
	assert_int_equal(e.kernel_cap_bw[0], 996147);
	assert_int_equal(e.kernel_total_bw[0], total0);
	assert_int_equal(e.kernel_total_bw[1], total1);
	assert_int_equal(e.server_bw[0], server);
	assert_int_equal(e.server_bw[1], server);
	assert_int_equal(e.n_parts, 1);
	/* the NIC thread as the scan finds it: SCHED_DEADLINE 2ms/10ms on CPU 0 */
	e.dl = calloc(1, sizeof(*e.dl));
	assert_non_null(e.dl);
	e.n_dl = 1;
	e.dl[0].pid = nic_pid;
	CPU_SET(0, &e.dl[0].cpus);
	e.dl[0].bw = dl_to_ratio(10 * MS, 2 * MS);

	nic = add_thread(0, nic_pid, "irq/11-eth0", 11, cpu0, 1);
	nic->thread.policy = SCHED_DEADLINE;
	snprintf(nic->thread.cgroup, sizeof(nic->thread.cgroup), "/irqres.cpu0");
	record_own(&nic->thread);	/* irqresd reserved it: its own to plan again */
	fill = add_thread(1, 600, "python3", -1, cpu0, 1);
	snprintf(fill->thread.cgroup, sizeof(fill->thread.cgroup), "/irqres.cpu0");
	/* what CPU 0's root domain leaves for the fill task once the NIC thread is in */
	limit = 996147 - (uint64_t)total0;
	targets[1].period_ns = targets[1].deadline_ns = fill_t;
	targets[1].runtime_ns = limit;
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.n_domains, 2);
	assert_string_equal(plan.domains[0].partition, "irqres.cpu0");
	assert_int_equal(plan.domains[0].source, PLAN_BW_KERNEL);
	/* the kernel's count less the NIC thread, which the plan replaces */
	assert_int_equal(plan.domains[0].existing_bw, (uint64_t)total0 - 209715);
	assert_int_equal(plan.domains[0].servers_bw, server);
	assert_int_equal(plan.domains[0].existing_bw + plan.domains[0].new_bw, 996147);
	assert_false(plan.items[1].needs_partition);
	assert_int_equal(plan.domains[1].source, PLAN_BW_KERNEL);
	assert_int_equal(plan.domains[1].existing_bw, (uint64_t)total1);
	plan_free(&plan);

	/* one nanosecond more: EBUSY, as the kernel answered */
	targets[1].runtime_ns = limit + 1;
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_false(plan.feasible);
	assert_non_null(strstr(plan.items[1].verdict, "EBUSY: admission"));
	plan_free(&plan);

	/* a new partition for CPU 1 (the fill task moved there): its bandwidth is what the
	 * kernel counts on rebuilding it, the CPU's server and the tasks that will be in it;
	 * CPU 0's domain, untouched, stays on the kernel's count */
	CPU_ZERO(&fill->thread.affinity);
	CPU_SET(1, &fill->thread.affinity);
	fill->thread.cgroup[0] = '\0';
	nic->thread.cgroup[0] = '\0';
	targets[1].runtime_ns = 996147 - server;
	CPU_ZERO(&e.online);
	for (int cpu = 0; cpu < 3; cpu++)
		CPU_SET(cpu, &e.online);
	e.kernel_total_bw[2] = total1;
	e.server_bw[2] = server;
	CPU_SET(2, &e.kernel_bw_cpus);
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	for (size_t i = 0; i < plan.n_domains; i++) {
		const struct plan_domain *dm = &plan.domains[i];

		if (dm->is_new) {
			assert_int_equal(dm->source, PLAN_BW_COUNTED);
			assert_int_equal(dm->existing_bw, server);
		} else if (!dm->partition[0]) {
			assert_true(dm->shrunk);
			assert_int_equal(dm->source, PLAN_BW_COUNTED);
		} else {
			assert_int_equal(dm->source, PLAN_BW_KERNEL);
		}
	}
	assert_true(plan.feasible);
	plan_free(&plan);
	targets[1].runtime_ns++;
	assert_int_equal(plan_build_env(&prof, &ml, &e, &plan), 0);
	assert_false(plan.feasible);
	plan_free(&plan);
	plan_env_free(&e);
	plan_limits_changed();
}

static void test_kernel_6_1_files(void **unused)
{
	plan_kernel_fixture("6.1", 295, 209715, 0, 0);
}

static void test_kernel_6_12_files(void **unused)
{
	/* 262143 = the NIC thread's 209715 + the fair server's 52428 */
	plan_kernel_fixture("6.12", 357, 262143, 52428, 52428);
}

/* A root domain whose count the kernel holds higher than what is visible (here: a task
 * that left SCHED_DEADLINE while asleep, whose bandwidth the kernel keeps): the plan
 * follows the kernel, not the tasks it can see. */
static void test_kernel_count_wins(void **unused)
{
	struct plan plan;

	/* 1.72 CPUs held of 1.90: 0.5 more does not fit, though no task is visible */
	env.kernel_total_bw[0] = env.kernel_total_bw[1] = 1800000;
	CPU_SET(0, &env.kernel_bw_cpus);
	CPU_SET(1, &env.kernel_bw_cpus);
	add_thread(1, 501, "player", -1, both, 2);
	assert_int_equal(plan_build_env(&prof, &ml, &env, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(plan.domains[0].source, PLAN_BW_KERNEL);
	assert_int_equal(plan.domains[0].existing_bw, 1800000);
	assert_int_equal(plan.domains[0].tasks_bw, 0);
	plan_free(&plan);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_admission_boundary),
		T(test_budget_plan),
		T(test_replaced_threads_not_counted),
		T(test_pinned_no_partition),
		T(test_pinned_with_partition),
		T(test_no_setaffinity_and_admission_off),
		T(test_staying_thread_budget_floor),
		T(test_buffering_and_empty),
		T(test_irq_thread_planned_by_irq_affinity),
		T(test_partitions_leave_the_default_domain_a_cpu),
		T(test_env_from_fixture),
		T(test_isolated_cpus_are_one_root_domain),
		T(test_env_counts_real_deadline_tasks),
		T(test_kernel_6_1_files),
		T(test_kernel_6_12_files),
		T(test_kernel_count_wins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
