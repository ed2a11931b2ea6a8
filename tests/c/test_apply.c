/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_apply.c - apply, undo and restore for real, on processes the test forks (root);
 * the cgroup tree and the sysctl are fixture files, never the host's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "apply.h"
#include "apply_restore.h"
#include "children.h"
#include "dl.h"
#include "fileio.h"
#include "fixtree.h"
#include "irqres.h"
#include "plan.h"
#include "state.h"

#define MS 1000000ULL

static struct target targets[2];
static struct profile prof;
static struct match mv[4];
static struct match_list ml;
static struct state st;
static char err[1024];

/*
 * The host kernel's own deadline accounting, put right before each test: 6.18 keeps the
 * bandwidth of children that left SCHED_DEADLINE asleep until it recounts, and refuses
 * reservations that fit meanwhile (docs/enforcement.md). Best effort: a write of the
 * value in force.
 */
static void host_dl_recount(void)
{
	char v[32] = "";
	FILE *f = fopen("/proc/sys/kernel/sched_rt_runtime_us", "r");

	if (!f)
		return;
	if (!fgets(v, sizeof(v), f))
		v[0] = '\0';
	fclose(f);
	f = v[0] ? fopen("/proc/sys/kernel/sched_rt_runtime_us", "w") : NULL;
	if (f) {
		fputs(v, f);
		fclose(f);
	}
}

static int setup(void **state)
{
	host_dl_recount();
	if (fixtree_setup(state))
		return -1;
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run", fixtree_root);
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/cgroup", fixtree_root);
	memset(targets, 0, sizeof(targets));
	memset(&prof, 0, sizeof(prof));
	snprintf(targets[0].name, sizeof(targets[0].name), "small");
	targets[0].kind = TARGET_TASK;
	targets[0].runtime_ns = 1 * MS;		/* 0.01 CPU: the host is shared */
	targets[0].period_ns = targets[0].deadline_ns = 100 * MS;
	snprintf(targets[1].name, sizeof(targets[1].name), "big");
	targets[1].kind = TARGET_TASK;
	targets[1].runtime_ns = 6 * MS;		/* 0.06 CPU */
	targets[1].period_ns = targets[1].deadline_ns = 100 * MS;
	prof.path = "test.yaml";
	prof.targets = targets;
	prof.n_targets = 2;
	memset(mv, 0, sizeof(mv));
	ml.v = mv;
	ml.n = 0;
	ml.cap = 4;
	err[0] = '\0';
	state_init(&st);
	return state_open(&st, err, sizeof(err)) ? -1 : 0;
}

static int teardown(void **state)
{
	children_kill_all();
	state_free(&st);
	irqres_paths_default();
	return fixtree_teardown(state);
}

/* A child with a given starting policy, matched by target. */
static pid_t matched_child(size_t target, int policy, int prio, int nice)
{
	pid_t pid = child_spawn("irqres-app");

	assert_true(pid > 0);
	assert_int_equal(child_set_policy(pid, policy, prio, nice), 0);
	mv[ml.n].target = target;
	child_info(pid, &mv[ml.n].thread);
	ml.n++;
	return pid;
}

static void assert_policy(pid_t pid, int policy, int prio, int nice)
{
	struct dl_attr a;

	assert_int_equal(dl_get(pid, &a), 0);
	assert_int_equal(a.sched_policy, policy);
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		assert_int_equal(a.sched_priority, prio);
	else if (policy != SCHED_DEADLINE)
		assert_int_equal(a.sched_nice, nice);
}

static void assert_dl(pid_t pid, uint64_t runtime, uint64_t deadline, uint64_t period)
{
	struct dl_attr a;

	assert_int_equal(dl_get(pid, &a), 0);
	assert_int_equal(a.sched_policy, SCHED_DEADLINE);
	assert_int_equal(a.sched_runtime, runtime);
	assert_int_equal(a.sched_deadline, deadline);
	assert_int_equal(a.sched_period, period);
}

static void test_apply_and_restore(void **unused)
{
	struct plan plan;
	pid_t a, b;

	REQUIRE_DL();
	a = matched_child(0, SCHED_OTHER, 0, 3);
	b = matched_child(0, SCHED_FIFO, 10, 0);
	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), 0);
	plan_free(&plan);
	assert_dl(a, 1 * MS, 100 * MS, 100 * MS);
	assert_dl(b, 1 * MS, 100 * MS, 100 * MS);
	assert_int_equal(st.n_threads, 2);
	assert_non_null(strstr(fixtree_read("run/state"), "policy=other priority=0 nice=3"));
	assert_non_null(strstr(fixtree_read("run/state"), "policy=fifo priority=10"));

	assert_int_equal(apply_restore_all(&st), 2);
	assert_policy(a, SCHED_OTHER, 0, 3);
	assert_policy(b, SCHED_FIFO, 10, 0);
	assert_true(state_empty(&st));
	assert_int_equal(access(fixtree_path("run/state"), F_OK), -1);
}

/* enforcement: hrtick on a fixture /sys whose sched features say NO_HRTICK_DL: switched
 * on (recorded first) by the apply, given back by the restore. */
static void test_hrtick_on_while_reserved(void **unused)
{
	struct plan plan;
	pid_t a;

	REQUIRE_DL();
	fixtree_file("sys/devices/system/cpu/online", "0-1\n");
	fixtree_file("sys/kernel/debug/sched/features", "START_DEBIT NO_HRTICK_DL\n");
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
	prof.hrtick = true;
	a = matched_child(0, SCHED_OTHER, 0, 0);
	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_true(plan.feasible);
	assert_int_equal(plan.enforce.action, ENFORCE_SWITCH_ON);
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), 0);
	plan_free(&plan);
	assert_dl(a, 1 * MS, 100 * MS, 100 * MS);
	assert_string_equal(fixtree_read("sys/kernel/debug/sched/features"), "HRTICK_DL");
	assert_non_null(strstr(fixtree_read("run/state"), "sched_feature name=HRTICK_DL was=0 "
			       "set=1 crc32="));
	assert_int_equal(apply_restore_all(&st), 1);
	assert_string_equal(fixtree_read("sys/kernel/debug/sched/features"), "NO_HRTICK_DL");
	assert_policy(a, SCHED_OTHER, 0, 0);
	assert_true(state_empty(&st));
	assert_int_equal(access(fixtree_path("run/state"), F_OK), -1);
}

/* Kills every child but a and b. */
static void kill_fillers(pid_t a, pid_t b)
{
	for (int i = n_children - 1; i >= 0; i--)
		if (children[i] != a && children[i] != b)
			child_kill(children[i]);
}

static void test_all_or_nothing(void **unused)
{
	char want[64];
	struct plan plan;
	pid_t a, b;
	int attempt;

	REQUIRE_DL();
	targets[1].runtime_ns = 50 * MS;	/* 0.5 CPU */
	a = matched_child(0, SCHED_FIFO, 20, 0);
	b = matched_child(1, SCHED_OTHER, 0, -2);
	snprintf(want, sizeof(want), "(pid %d): SCHED_DEADLINE refused: EBUSY", (int)b);
	/* The host is shared: another process may take bandwidth between the fill and the
	 * apply so that a is refused too. Every attempt must leave both as they were; at
	 * least one must see a applied and then undone because b was refused. */
	for (attempt = 0; attempt < 5; attempt++) {
		assert_int_equal(plan_build(&prof, &ml, &plan), 0);
		if (!plan.feasible) {	/* others hold the bandwidth just now */
			plan_free(&plan);
			usleep(200000);
			continue;
		}
		/* between plan and apply, others take the bandwidth: 0.02..0.04 CPU stays
		 * free, so a (0.01) still fits and b (0.5) not */
		assert_true(dl_fill(2 * MS, 100 * MS) > 0);
		assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), -EBUSY);
		plan_free(&plan);
		kill_fillers(a, b);
		assert_policy(a, SCHED_FIFO, 20, 0);
		assert_policy(b, SCHED_OTHER, 0, -2);
		assert_true(state_empty(&st));
		assert_null(strstr(fixtree_read("run/state"), "thread"));
		if (strstr(err, want))
			break;
		usleep(200000);
	}
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "50ms/100ms = 0.50 more bandwidth on CPUs 0-1"));
}

static void test_infeasible_plan_refused(void **unused)
{
	struct plan plan;
	pid_t a;

	REQUIRE_DL();
	targets[0].runtime_ns = 100 * MS;	/* 1.0 each: 2.0 > 1.9 */
	a = matched_child(0, SCHED_OTHER, 0, 0);
	matched_child(0, SCHED_OTHER, 0, 0);
	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_false(plan.feasible);
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "SCHED_DEADLINE refused: EBUSY: admission"));
	plan_free(&plan);
	assert_policy(a, SCHED_OTHER, 0, 0);
	assert_true(state_empty(&st));
}

static void test_gone_is_skipped(void **unused)
{
	struct plan plan;
	pid_t a, b;

	REQUIRE_DL();
	a = matched_child(0, SCHED_OTHER, 0, 0);
	b = matched_child(0, SCHED_OTHER, 0, 0);
	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	child_kill(a);
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), 0);
	plan_free(&plan);
	assert_dl(b, 1 * MS, 100 * MS, 100 * MS);
	assert_int_equal(st.n_threads, 1);
	assert_int_equal(apply_restore_all(&st), 1);
	assert_policy(b, SCHED_OTHER, 0, 0);
}

static void test_crash_then_fresh_process_restores(void **unused)
{
	struct plan plan;
	pid_t a, b, daemon;
	int status;

	REQUIRE_DL();
	a = matched_child(0, SCHED_FIFO, 33, 0);
	b = matched_child(1, SCHED_OTHER, 0, 5);
	daemon = fork();
	if (daemon == 0) {
		struct state s2;
		char e2[512];

		/* an irqresd that applies and dies without restoring */
		state_init(&s2);
		if (state_open(&s2, e2, sizeof(e2)) || plan_build(&prof, &ml, &plan) ||
		    apply_plan(&plan, &s2, NULL, e2, sizeof(e2)))
			_exit(1);
		_exit(0);
	}
	assert_int_equal(waitpid(daemon, &status, 0), daemon);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_dl(a, 1 * MS, 100 * MS, 100 * MS);
	assert_dl(b, 6 * MS, 100 * MS, 100 * MS);

	/* the next start finds the state file and puts both back */
	state_free(&st);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.n_threads, 2);
	assert_int_equal(apply_restore_all(&st), 2);
	assert_policy(a, SCHED_FIFO, 33, 0);
	assert_policy(b, SCHED_OTHER, 0, 5);
	assert_int_equal(access(fixtree_path("run/state"), F_OK), -1);
}

static void test_reused_pid_untouched(void **unused)
{
	struct state_thread rec = { .policy = SCHED_OTHER };
	pid_t a;

	REQUIRE_DL();
	a = child_spawn("irqres-other");
	assert_int_equal(dl_set_deadline(a, 1 * MS, 100 * MS, 100 * MS), 0);
	rec.pid = a;
	rec.starttime = child_starttime(a) + 1;	/* a different process had that pid */
	snprintf(rec.comm, sizeof(rec.comm), "old");
	assert_int_equal(state_add_thread(&st, &rec), 0);
	assert_int_equal(apply_restore_all(&st), 0);
	assert_dl(a, 1 * MS, 100 * MS, 100 * MS);	/* not touched */
	assert_true(state_empty(&st));
}

static void test_set_budget(void **unused)
{
	struct plan plan;
	pid_t a, b, pids[2];
	pid_t stranger;

	REQUIRE_DL();
	a = matched_child(0, SCHED_OTHER, 0, 0);
	b = matched_child(0, SCHED_OTHER, 0, 0);
	pids[0] = a;
	pids[1] = b;
	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), 0);
	plan_free(&plan);

	assert_int_equal(apply_set_budget(&st, pids, 2, 2 * MS, 0, 200 * MS, err, sizeof(err)),
			 0);
	assert_dl(a, 2 * MS, 200 * MS, 200 * MS);
	assert_dl(b, 2 * MS, 200 * MS, 200 * MS);
	assert_int_equal(apply_set_budget(&st, pids, 2, 1 * MS, 50 * MS, 200 * MS, err,
					  sizeof(err)), 0);
	assert_dl(a, 1 * MS, 50 * MS, 200 * MS);
	/* no deadline given: it keeps its ratio (1/4) to the new period */
	assert_int_equal(apply_set_budget(&st, pids, 1, 1 * MS, 0, 400 * MS, err, sizeof(err)),
			 0);
	assert_dl(a, 1 * MS, 100 * MS, 400 * MS);

	/* 2 × 0.99 does not fit in 1.9: refused before any change */
	assert_int_equal(apply_set_budget(&st, pids, 2, 99 * MS / 10, 0, 10 * MS, err,
					  sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "new budget refused: EBUSY: admission"));
	assert_dl(a, 1 * MS, 100 * MS, 400 * MS);
	assert_dl(b, 1 * MS, 50 * MS, 200 * MS);

	stranger = child_spawn("irqres-stranger");
	assert_int_equal(apply_set_budget(&st, &stranger, 1, 1 * MS, 0, 10 * MS, err,
					  sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "not a thread irqresd manages"));
	assert_int_equal(apply_set_budget(&st, pids, 2, 3 * MS, 0, 2 * MS, err, sizeof(err)),
			 -EINVAL);
	assert_policy(stranger, SCHED_OTHER, 0, 0);
	assert_int_equal(apply_restore_all(&st), 2);
	assert_policy(a, SCHED_OTHER, 0, 0);
}

static void test_apply_thread_hotplug(void **unused)
{
	struct match m = { .target = 1 };
	pid_t a;

	REQUIRE_DL();
	a = child_spawn("irqres-new");
	child_set_policy(a, SCHED_RR, 7, 0);
	child_info(a, &m.thread);
	assert_int_equal(apply_thread(&prof, &m, &st, NULL, err, sizeof(err)), 0);
	assert_dl(a, 6 * MS, 100 * MS, 100 * MS);
	assert_int_equal(apply_restore_thread(&st, a), 1);
	assert_policy(a, SCHED_RR, 7, 0);
	assert_int_equal(apply_restore_thread(&st, a), -ENOENT);
}

/* The only matched thread: a child pinned to CPU 0 at SCHED_FIFO 50. */
static pid_t pinned_child(void)
{
	pid_t a = child_spawn("irqres-pinned");
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	assert_int_equal(sched_setaffinity(a, sizeof(cpu0), &cpu0), 0);
	assert_int_equal(child_set_policy(a, SCHED_FIFO, 50, 0), 0);
	mv[0].target = 0;
	child_info(a, &mv[0].thread);
	ml.n = 1;
	return a;
}

/* The child's /proc/PID/<name>, read into buf. */
static void proc_read(pid_t a, const char *name, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)a, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
}

/* irqres reads a fixture /proc and /sys: the sysctls as files, CPUs 0-1 online (the
 * caller copies the child's files in). */
static void fixture_proc_sys(void)
{
	fixtree_file("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	fixtree_file("proc/sys/kernel/sched_rt_period_us", "1000000\n");
	fixtree_file("sys/devices/system/cpu/online", "0-1\n");
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
}

/* A pinned child with admission control off (a fixture sysctl): the real kernel still
 * checks, refuses with EPERM, and the apply undoes its sysctl write. */
static void test_pinned_eperm_undoes_sysctl(void **unused)
{
	char path[64], buf[1024];
	struct plan plan;
	pid_t a;

	REQUIRE_DL();
	a = pinned_child();

	/* a fixture /proc: the child's stat copied, the sysctls as files */
	proc_read(a, "stat", buf, sizeof(buf));
	snprintf(path, sizeof(path), "proc/%d/stat", (int)a);
	fixtree_file(path, buf);
	fixture_proc_sys();

	fixtree_file("sys/kernel/debug/sched/features", "NO_HRTICK_DL\n");
	prof.admission_off = true;
	prof.hrtick = true;	/* switched on, then given back with the rest */
	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_true(plan.feasible);
	assert_false(plan.items[0].needs_partition);
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), -EPERM);
	plan_free(&plan);
	assert_non_null(strstr(err, "SCHED_DEADLINE refused: EPERM: thread pinned to CPUs 0, "
			       "root domain spans 0-1"));
	assert_string_equal(fixtree_read("proc/sys/kernel/sched_rt_runtime_us"), "950000");
	assert_string_equal(fixtree_read("sys/kernel/debug/sched/features"), "NO_HRTICK_DL");
	assert_policy(a, SCHED_FIFO, 50, 0);
	assert_true(state_empty(&st));
}

/* pinned_child() on a fixture cgroup v2 tree without +cpuset; rel: the fixture file of
 * the cgroup.procs of its own cgroup. */
static pid_t pinned_child_on_cgroup_tree(char *rel, size_t len)
{
	char cg[CGROUP_PATH_MAX];
	pid_t a = pinned_child();

	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	fixtree_file("cgroup/cgroup.subtree_control", "memory\n");
	fixtree_file("cgroup/cpuset.mems.effective", "0\n");
	assert_int_equal(cpuset_pid_cgroup(a, cg, sizeof(cg)), 0);
	snprintf(rel, len, "cgroup%s/cgroup.procs", strcmp(cg, "/") ? cg : "");
	fixtree_file(rel, "");
	return a;
}

/* A pinned child on a fixture cgroup v2 tree: +cpuset, the partition and the move
 * happen (in plain files), the real kernel then refuses SCHED_DEADLINE with EPERM since
 * the host's root domain still spans every CPU, and everything is undone. */
static void test_partition_path_undone(void **unused)
{
	char rel[CGROUP_PATH_MAX + 32], pidstr[16];
	struct plan plan;
	pid_t a;

	REQUIRE_DL();
	a = pinned_child_on_cgroup_tree(rel, sizeof(rel));

	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_true(plan.feasible);
	assert_true(plan.items[0].needs_partition);
	assert_string_equal(plan.items[0].partition, "irqres.cpu0");
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), -EPERM);
	plan_free(&plan);
	assert_non_null(strstr(err, "was moved into cpuset partition irqres.cpu0, yet the kernel "
			       "still sees a larger root domain"));
	/* it went through the partition steps ... */
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cpuset.cpus"), "0");
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cpuset.cpus.partition"), "root");
	snprintf(pidstr, sizeof(pidstr), "%d", (int)a);
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cgroup.procs"), pidstr);
	/* ... and undid them: moved back, +cpuset taken back, nothing recorded */
	assert_string_equal(fixtree_read(rel), pidstr);
	assert_string_equal(fixtree_read("cgroup/cgroup.subtree_control"), "-cpuset");
	assert_policy(a, SCHED_FIFO, 50, 0);
	assert_true(state_empty(&st));
}

/* Copies the child's /proc/PID/{stat,cgroup} into the fixture /proc, its stat marked
 * PF_NO_SETAFFINITY (as the kernel marks IRQ threads from 7.x). */
static void fixture_proc_no_setaffinity(pid_t a)
{
	char path[64], buf[1024], out[1024], *rest;
	unsigned long flags;

	proc_read(a, "stat", buf, sizeof(buf));
	rest = strrchr(buf, ')');
	assert_non_null(rest);
	rest += 2;
	for (int i = 0; i < 6; i++)	/* state ppid pgrp session tty_nr tpgid, then flags */
		rest = strchr(rest, ' ') + 1;
	flags = strtoul(rest, NULL, 10) | FILEIO_PF_NO_SETAFFINITY;
	snprintf(out, sizeof(out), "%.*s%lu%s", (int)(rest - buf), buf, flags,
		 strchr(rest, ' '));
	snprintf(path, sizeof(path), "proc/%d/stat", (int)a);
	fixtree_file(path, out);
	proc_read(a, "cgroup", buf, sizeof(buf));
	snprintf(path, sizeof(path), "proc/%d/cgroup", (int)a);
	fixtree_file(path, buf);
	fixture_proc_sys();
	fixtree_file("sys/kernel/debug/sched/features", "NO_HRTICK_DL\n");
}

/* As above with the child marked PF_NO_SETAFFINITY: the partition of its CPU is made and
 * the child stays in its cgroup (the kernel would refuse the move; the partition is its
 * CPU's root domain all the same); the host's root domain still spans every CPU, so the
 * real kernel refuses with EPERM, and everything is undone. */
static void test_partition_unmovable_stays_undone(void **unused)
{
	char rel[CGROUP_PATH_MAX + 32], pidstr[16];
	struct plan plan;
	pid_t a;

	REQUIRE_DL();
	a = pinned_child_on_cgroup_tree(rel, sizeof(rel));
	snprintf(pidstr, sizeof(pidstr), "%d", (int)a);
	fixtree_file(rel, pidstr);
	fixture_proc_no_setaffinity(a);

	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_true(plan.feasible);
	assert_true(plan.items[0].no_setaffinity);
	assert_true(plan.items[0].needs_partition);
	assert_false(plan_item_moves(&plan.items[0]));
	assert_string_equal(plan.items[0].verdict, "ok");
	assert_int_equal(apply_plan(&plan, &st, NULL, err, sizeof(err)), -EPERM);
	plan_free(&plan);
	assert_non_null(strstr(err, "stays in its cgroup (PF_NO_SETAFFINITY) beside cpuset "
			       "partition irqres.cpu0"));
	/* the partition was made (its CPU), the child never written to it ... */
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cpuset.cpus"), "0");
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cgroup.procs"), "");
	assert_string_equal(fixtree_read(rel), pidstr);
	/* ... and all of it undone: the partition a member again (the fixture's plain
	 * directory cannot be removed), +cpuset taken back, nothing recorded */
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cpuset.cpus.partition"), "member");
	assert_string_equal(fixtree_read("cgroup/cgroup.subtree_control"), "-cpuset");
	assert_policy(a, SCHED_FIFO, 50, 0);
	assert_true(state_empty(&st));
}

/*
 * A new thread whose CPUs are those of a partition irqres made earlier (another thread's)
 * is moved into it and recorded, and restore moves it back, the partition staying. The
 * fixture machine has the host's CPUs plus one more, so that the partition of the child's
 * CPUs is a real subset in the plan while the host kernel admits the child as it is.
 */
static void test_apply_thread_joins_partition(void **unused)
{
	char cg[CGROUP_PATH_MAX], rel[CGROUP_PATH_MAX + 32], pidstr[16], part[CPUSET_NAME_MAX];
	char path[CPUSET_NAME_MAX + 48], cpus[64], online[64];
	struct match m = { .target = 1 };
	cpu_set_t all;
	int last = 0;
	pid_t a;

	REQUIRE_DL();
	a = child_spawn("irqres-hotplug");
	child_info(a, &m.thread);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &m.thread.affinity))
			last = cpu;
	assert_true(last + 1 < CPU_SETSIZE);
	all = m.thread.affinity;
	CPU_SET(last + 1, &all);
	assert_int_equal(cpuset_list_format(&all, online, sizeof(online)), 0);
	assert_int_equal(cpuset_list_format(&m.thread.affinity, cpus, sizeof(cpus)), 0);
	assert_int_equal(cpuset_partition_name(&m.thread.affinity, part, sizeof(part)), 0);

	fixtree_file("sys/devices/system/cpu/online", online);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
	fixtree_file("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	fixtree_file("cgroup/cgroup.subtree_control", "cpuset memory\n");
	fixtree_file("cgroup/cpuset.mems.effective", "0\n");
	snprintf(path, sizeof(path), "cgroup/%s/cpuset.cpus.partition", part);
	fixtree_file(path, "root\n");
	snprintf(path, sizeof(path), "cgroup/%s/cpuset.cpus", part);
	fixtree_file(path, cpus);
	snprintf(path, sizeof(path), "cgroup/%s/cpuset.cpus.effective", part);
	fixtree_file(path, cpus);
	snprintf(path, sizeof(path), "cgroup/%s/cgroup.procs", part);
	fixtree_file(path, "");
	assert_int_equal(cpuset_pid_cgroup(a, cg, sizeof(cg)), 0);
	snprintf(rel, sizeof(rel), "cgroup%s/cgroup.procs", strcmp(cg, "/") ? cg : "");
	fixtree_file(rel, "");
	snprintf(m.thread.cgroup, sizeof(m.thread.cgroup), "%s", cg);

	assert_int_equal(apply_thread(&prof, &m, &st, NULL, err, sizeof(err)), 0);
	assert_dl(a, 6 * MS, 100 * MS, 100 * MS);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)a);
	assert_string_equal(fixtree_read(path), pidstr);	/* moved in */
	assert_int_equal(st.n_threads, 1);
	assert_string_equal(st.threads[0].partition, part);
	assert_string_equal(st.threads[0].cgroup, cg);
	assert_non_null(state_find_partition(&st, part));
	assert_false(state_find_partition(&st, part)->created);
	assert_false(st.cpuset_added);		/* +cpuset was there already */

	assert_int_equal(apply_restore_thread(&st, a), 1);
	assert_policy(a, SCHED_OTHER, 0, 0);
	assert_string_equal(fixtree_read(rel), pidstr);	/* moved back */
	snprintf(path, sizeof(path), "cgroup/%s/cpuset.cpus.partition", part);
	assert_string_equal(fixtree_read(path), "root\n");	/* not irqres's to remove */
	assert_true(state_empty(&st));
}

/*
 * With pending (the daemon's hotplug path), the EPERM of a thread that has not run in
 * its new partition yet is not waited for: the thread stays moved and recorded, the
 * caller tries again (the real kernel keeps refusing here: the host's root domain spans
 * every CPU) and finally gives up, which puts the thread back out of the partition.
 */
static void test_pending_not_waited_for(void **unused)
{
	char rel[CGROUP_PATH_MAX + 32], pidstr[16];
	struct apply_pending p;
	pid_t a;

	REQUIRE_DL();
	a = pinned_child_on_cgroup_tree(rel, sizeof(rel));
	snprintf(pidstr, sizeof(pidstr), "%d", (int)a);

	assert_int_equal(apply_thread(&prof, &mv[0], &st, &p, err, sizeof(err)), APPLY_PENDING);
	assert_int_equal(p.thread.pid, a);
	assert_string_equal(p.partition, "irqres.cpu0");
	assert_int_equal(p.runtime_ns, 1 * MS);
	assert_int_equal(p.period_ns, 100 * MS);
	/* moved in and recorded, as a crash right now must find it */
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cgroup.procs"), pidstr);
	assert_non_null(state_find_thread(&st, a));
	assert_string_equal(state_find_thread(&st, a)->partition, "irqres.cpu0");
	assert_non_null(state_find_partition(&st, "irqres.cpu0"));
	assert_policy(a, SCHED_FIFO, 50, 0);

	assert_int_equal(apply_pending_try(&p, 5 * MS), -EPERM);
	apply_pending_cancel(&st, &p);
	assert_string_equal(fixtree_read(rel), pidstr);		/* moved back */
	assert_null(state_find_thread(&st, a));
	assert_policy(a, SCHED_FIFO, 50, 0);
	/* the partition and +cpuset stay recorded until restore-all (the fixture's
	 * cgroup.procs, a plain file, still names the thread: busy) */
	assert_non_null(state_find_partition(&st, "irqres.cpu0"));
	assert_true(st.cpuset_added);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * A whole apply with a list of waiting threads (the daemon's start, reload and apply)
 * does the same: the thread stays moved and recorded, the apply succeeds at once (no
 * wait in place) and names it; the caller tries again or gives up.
 */
static void test_apply_plan_lists_waiting_threads(void **unused)
{
	char rel[CGROUP_PATH_MAX + 32], pidstr[16];
	struct apply_pending slot[2];
	struct apply_waiting pw = { .v = slot, .max = 2 };
	struct plan plan;
	uint64_t t0;
	pid_t a;

	REQUIRE_DL();
	a = pinned_child_on_cgroup_tree(rel, sizeof(rel));
	snprintf(pidstr, sizeof(pidstr), "%d", (int)a);

	assert_int_equal(plan_build(&prof, &ml, &plan), 0);
	assert_true(plan.items[0].needs_partition);
	t0 = mono_ns();
	assert_int_equal(apply_plan(&plan, &st, &pw, err, sizeof(err)), 0);
	/* not waited for in place (that takes APPLY_MOVED_WAIT_NS of sleeps) */
	assert_true(mono_ns() - t0 < APPLY_MOVED_WAIT_NS / 2);
	plan_free(&plan);
	assert_int_equal(pw.n, 1);
	assert_int_equal(slot[0].thread.pid, a);
	assert_string_equal(slot[0].partition, "irqres.cpu0");
	assert_string_equal(fixtree_read("cgroup/irqres.cpu0/cgroup.procs"), pidstr);
	assert_non_null(state_find_thread(&st, a));
	assert_policy(a, SCHED_FIFO, 50, 0);

	assert_int_equal(apply_pending_try(&slot[0], 5 * MS), -EPERM);
	apply_pending_cancel(&st, &slot[0]);
	assert_string_equal(fixtree_read(rel), pidstr);		/* moved back */
	assert_null(state_find_thread(&st, a));
	assert_policy(a, SCHED_FIFO, 50, 0);
}

/* A pending thread that runs in its partition meanwhile is accepted; one gone, ESRCH. */
static void test_pending_accepted_or_gone(void **unused)
{
	struct apply_pending p = { .runtime_ns = 1 * MS, .deadline_ns = 100 * MS,
				   .period_ns = 100 * MS, .partition = "irqres.cpu0" };
	pid_t a;

	REQUIRE_DL();
	a = child_spawn("irqres-pending");
	child_info(a, &p.thread);
	assert_int_equal(apply_pending_try(&p, 3 * MS), 0);
	assert_dl(a, 1 * MS, 100 * MS, 100 * MS);
	child_kill(a);
	assert_int_equal(apply_pending_try(&p, 9 * MS), -ESRCH);
}

/* A recorded thread whose original cgroup has gone since goes back to the root cgroup. */
static void test_restore_cgroup_gone(void **unused)
{
	struct state_thread rec = { .policy = SCHED_OTHER, .nice = 4 };
	char pidstr[16];
	pid_t a;

	REQUIRE_DL();
	a = child_spawn("irqres-moved");
	rec.pid = a;
	rec.starttime = child_starttime(a);
	snprintf(rec.comm, sizeof(rec.comm), "moved");
	snprintf(rec.cgroup, sizeof(rec.cgroup), "/gone.slice/x.service");
	snprintf(rec.partition, sizeof(rec.partition), "irqres.cpu0");
	fixtree_file("cgroup/cgroup.procs", "");
	assert_int_equal(state_add_thread(&st, &rec), 0);
	assert_int_equal(dl_set_deadline(a, 1 * MS, 100 * MS, 100 * MS), 0);
	assert_int_equal(apply_restore_all(&st), 1);
	assert_policy(a, SCHED_OTHER, 0, 4);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)a);
	assert_string_equal(fixtree_read("cgroup/cgroup.procs"), pidstr);
	assert_true(state_empty(&st));
}

/*
 * A thread that exits takes the partition irqres made for it along (its CPUs go back to
 * the default root domain), unless the kernel still counts it there: then the partition
 * stays, quietly, until the next sweep (apply_thread() runs one before it plans). A
 * partition a recorded thread is still in is never swept.
 */
static void test_exited_thread_releases_its_partition(void **unused)
{
	struct state_thread rec = { .pid = 4242, .policy = SCHED_FIFO, .priority = 50 };
	struct state_thread keep = { .pid = 4243, .policy = SCHED_FIFO, .priority = 50 };

	snprintf(rec.comm, sizeof(rec.comm), "irq/11-eth0");
	snprintf(rec.cgroup, sizeof(rec.cgroup), "/");
	snprintf(rec.partition, sizeof(rec.partition), "irqres.cpu0");
	keep = rec;
	keep.pid = 4243;
	snprintf(keep.partition, sizeof(keep.partition), "irqres.cpu1");
	fixtree_file("cgroup/irqres.cpu0/cgroup.procs", "4242\n");	/* still dying */
	assert_int_equal(mkdir(fixtree_path("cgroup/irqres.cpu1"), 0755), 0);
	assert_int_equal(state_add_partition(&st, "irqres.cpu0", true), 0);
	assert_int_equal(state_add_partition(&st, "irqres.cpu1", true), 0);
	assert_int_equal(state_add_thread(&st, &rec), 0);
	assert_int_equal(state_add_thread(&st, &keep), 0);

	apply_forget_thread(&st, 4242);
	assert_null(state_find_thread(&st, 4242));
	assert_non_null(state_find_partition(&st, "irqres.cpu0"));	/* busy: kept */
	assert_int_equal(access(fixtree_path("cgroup/irqres.cpu0"), F_OK), 0);

	unlink(fixtree_path("cgroup/irqres.cpu0/cgroup.procs"));	/* reaped */
	apply_partitions_sweep(&st);
	assert_null(state_find_partition(&st, "irqres.cpu0"));
	assert_int_equal(access(fixtree_path("cgroup/irqres.cpu0"), F_OK), -1);
	assert_non_null(state_find_partition(&st, "irqres.cpu1"));	/* 4243 is in it */
	assert_int_equal(access(fixtree_path("cgroup/irqres.cpu1"), F_OK), 0);

	apply_forget_thread(&st, 4243);		/* empty: removed at once */
	assert_null(state_find_partition(&st, "irqres.cpu1"));
	assert_int_equal(access(fixtree_path("cgroup/irqres.cpu1"), F_OK), -1);
	assert_true(state_empty(&st));
}

/* How many times the state file was replaced (rename onto it) since @fd was set up. */
static int state_replacements(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			n += (ev->mask & IN_MOVED_TO) && ev->len && !strcmp(ev->name, "state");
			p += sizeof(*ev) + ev->len;
		}
	return n;
}

/*
 * Restoring n threads rewrites the state file once, not once per thread (which made a
 * stop of 2,000 threads take longer than TimeoutStopSec).
 */
static void test_restore_rewrites_once(void **unused)
{
	enum { N = 24 };
	pid_t pids[N];
	int fd, n;

	for (int i = 0; i < N; i++) {
		struct state_thread t = { .policy = SCHED_OTHER };
		struct thread_info ti;

		pids[i] = child_spawn("irqres-many");
		assert_true(pids[i] > 0);
		child_info(pids[i], &ti);
		t.pid = pids[i];
		t.starttime = ti.starttime;
		snprintf(t.comm, sizeof(t.comm), "%s", ti.comm);
		assert_int_equal(state_add_thread(&st, &t), 0);
	}
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(fd >= 0);
	/* with IN_CREATE (of the temp file) between them, the kernel cannot merge the
	 * renames into one event */
	assert_true(inotify_add_watch(fd, irqres_paths.run, IN_MOVED_TO | IN_CREATE) >= 0);
	assert_int_equal(apply_restore_all(&st), N);
	n = state_replacements(fd);
	if (n > 1)
		fail_msg("the state file was rewritten %d times for %d threads", n, N);
	close(fd);
	assert_true(state_empty(&st));
	assert_int_equal(access(st.path, F_OK), -1);
	for (int i = 0; i < N; i++)
		assert_policy(pids[i], SCHED_OTHER, 0, 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_apply_and_restore),
		T(test_hrtick_on_while_reserved),
		T(test_all_or_nothing),
		T(test_infeasible_plan_refused),
		T(test_gone_is_skipped),
		T(test_crash_then_fresh_process_restores),
		T(test_reused_pid_untouched),
		T(test_set_budget),
		T(test_apply_thread_hotplug),
		T(test_pinned_eperm_undoes_sysctl),
		T(test_partition_path_undone),
		T(test_partition_unmovable_stays_undone),
		T(test_pending_not_waited_for),
		T(test_pending_accepted_or_gone),
		T(test_restore_cgroup_gone),
		T(test_apply_thread_joins_partition),
		T(test_apply_plan_lists_waiting_threads),
		T(test_exited_thread_releases_its_partition),
		T(test_restore_rewrites_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
