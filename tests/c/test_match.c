/* SPDX-License-Identifier: GPL-2.0-only */
/* test_match.c - targets resolved to threads on the fixture machine of fixtures/discover. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "discover.h"
#include "fixtree.h"
#include "match.h"
#include "profile.h"
#include "target_kind.h"

#define FIX "fixtures/discover"

struct world {
	struct thread_list irq, tasks;
};

static int setup(void **state)
{
	static struct world w;

	memset(&w, 0, sizeof(w));
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), FIX "/proc");
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), FIX "/sys");
	if (discover_scan_irq(&w.irq, true) || discover_scan_tasks(&w.tasks))
		return -1;
	*state = &w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	discover_list_free(&w->irq);
	discover_list_free(&w->tasks);
	irqres_paths_default();
	return 0;
}

static void parse(struct profile *p, const char *body)
{
	char text[2048], err[512];

	snprintf(text, sizeof(text), "version: 1\ntargets:\n%s", body);
	if (profile_parse(text, strlen(text), "t.yaml", p, err, sizeof(err)))
		fail_msg("%s", err);
}

/* The pids a one-target profile selects, space separated and sorted as found. */
static const char *pids_of(struct world *w, const char *target_body)
{
	static char out[256];
	struct match_list m = { 0 };
	struct match_unmatched u = { 0 };
	struct profile p;
	char err[512], body[1024];
	size_t i, n = 0;

	snprintf(body, sizeof(body), "  - name: t\n%s    runtime: 1ms\n    period: 10ms\n",
		 target_body);
	parse(&p, body);
	if (match_profile(&p, &w->irq, &w->tasks, &m, &u, err, sizeof(err)))
		fail_msg("%s", err);
	out[0] = '\0';
	for (i = 0; i < m.n; i++) {
		assert_int_equal(m.v[i].target, 0);
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%d", i ? " " : "",
				      m.v[i].thread.pid);
	}
	/* a target that selects nothing is reported */
	assert_int_equal(u.n, m.n ? 0 : 1);
	match_list_free(&m);
	match_unmatched_free(&u);
	profile_free(&p);
	return out;
}

static void test_match_interface(void **state)
{
	struct world *w = *state;

	/* multi-queue NIC: every MSI-X IRQ of the device */
	assert_string_equal(pids_of(w, "    interface: eth0\n"), "109 110 111");
	/* virtio NIC: the MSI-X IRQs of the PCI parent of virtio2 */
	assert_string_equal(pids_of(w, "    interface: eth1\n"), "106 107 108");
	assert_string_equal(pids_of(w, "    interface: eth1\n    action: 'virtio2-input.*'\n"),
			    "107");
	/* a legacy IRQ shared with USB: only the NIC's own thread */
	assert_string_equal(pids_of(w, "    interface: eth2\n"), "101");
	/* no such interface; an interface without a device */
	assert_string_equal(pids_of(w, "    interface: eth9\n"), "");
	assert_string_equal(pids_of(w, "    interface: lo\n"), "");
}

/* A kthread like the fixture's kworker 50 (a child of @ppid) with another pid and name. */
static void clone_kthread(int pid, const char *comm, int ppid)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s/proc; cp -a 50 %d; mv %d/task/50 %d/task/%d; "
		 "for d in %d %d/task/%d; do "
		 "sed -i 's|^50 (kworker/0:1) S 2 |%d (%s) S %d |' $d/stat; "
		 "sed -i 's|^Name:.*|Name:\t%s|; s|^Pid:.*|Pid:\t%d|; s|^Tgid:.*|Tgid:\t%d|; "
		 "s|^PPid:.*|PPid:\t%d|' $d/status; echo '%s' > $d/comm; done; "
		 "[ %d != 2 ] || sed -i 's|$| %d|' 2/task/2/children",
		 fixtree_root, pid, pid, pid, pid, pid, pid, pid, pid, comm, ppid, comm, pid, pid,
		 ppid, comm, ppid, pid);
	assert_int_equal(system(cmd), 0);
}

/* A writable copy of the fixture machine, to add threads to (clone_kthread). */
static void copy_open(void)
{
	char cmd[512];

	assert_int_equal(fixtree_setup(NULL), 0);
	snprintf(cmd, sizeof(cmd), "cp -a " FIX "/proc " FIX "/sys %s/", fixtree_root);
	assert_int_equal(system(cmd), 0);
}

/* The copy scanned as the world of a test (after its threads were added). */
static void copy_scan(struct world *w)
{
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
	assert_int_equal(discover_scan_irq(&w->irq, true), 0);
	assert_int_equal(discover_scan_tasks(&w->tasks), 0);
}

/* The copy gone, the group's fixture machine back. */
static void copy_close(struct world *w)
{
	discover_list_free(&w->irq);
	discover_list_free(&w->tasks);
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), FIX "/proc");
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), FIX "/sys");
	fixtree_teardown(NULL);
}

/* napi: the threaded NAPI kthreads of one interface, listed with the IRQ threads; an
 * IRQ target takes them only with with_napi (its interface's), a napi target nothing
 * else. */
static void test_match_napi(void **state)
{
	struct world w = { 0 };

	copy_open();
	clone_kthread(114, "napi/eth0-8193", 2);
	clone_kthread(115, "napi/eth0-8194", 2);
	clone_kthread(116, "napi/eth2-8195", 2);
	clone_kthread(117, "napi/eth0-1", 1);	/* not kthreadd's: a user process so named */
	fixtree_file("sys/class/net/eth0/ifindex", "2\n");
	fixtree_file("sys/class/net/eth0/threaded", "1\n");
	fixtree_file("sys/class/net/eth2/ifindex", "4\n");
	copy_scan(&w);

	assert_string_equal(pids_of(&w, "    napi: eth0\n"), "114 115");
	assert_string_equal(pids_of(&w, "    napi: eth2\n"), "116");
	assert_string_equal(pids_of(&w, "    napi: eth9\n"), "");
	/* the IRQ selectors as before: NAPI kthreads are no IRQ threads */
	assert_string_equal(pids_of(&w, "    interface: eth0\n"), "109 110 111");
	assert_string_equal(pids_of(&w, "    action: '*'\n"),
			    "101 102 103 104 105 106 107 108 109 110 111 112 113");
	/* with_napi: the interface's IRQ threads and its NAPI kthreads, the device's path */
	assert_string_equal(pids_of(&w, "    interface: eth0\n    with_napi: true\n"),
			    "109 110 111 114 115");
	assert_string_equal(pids_of(&w, "    interface: eth0\n    with_napi: false\n"),
			    "109 110 111");
	/* a NAPI kthread that appears later (threaded switched on): hotplug's one look */
	struct thread_info ti;
	struct profile p;

	parse(&p, "  - name: nic\n    interface: eth0\n    runtime: 1ms\n    period: 10ms\n"
		  "  - name: poll\n    napi: eth0\n    runtime: 1ms\n    period: 10ms\n");
	assert_int_equal(discover_read(115, &ti), 0);
	assert_true(ti.is_napi && !ti.is_irq);
	assert_int_equal(match_thread(&p, 0, &ti), 0);
	assert_int_equal(match_thread(&p, 1, &ti), 1);
	assert_int_equal(match_find_target(&p, &ti, NULL, 0), 1);
	assert_int_equal(discover_read(116, &ti), 0);	/* eth2's */
	assert_int_equal(match_find_target(&p, &ti, NULL, 0), -ENOENT);
	profile_free(&p);
	parse(&p, "  - name: nic\n    interface: eth0\n    with_napi: true\n    runtime: 1ms\n"
		  "    period: 10ms\n");
	assert_int_equal(discover_read(115, &ti), 0);
	assert_int_equal(match_find_target(&p, &ti, NULL, 0), 0);
	assert_true(target_kind_of(&p.targets[0])->may_take(&ti));
	assert_true(target_kind_of(&p.targets[0])->comm_may_match(&p.targets[0],
								     "napi/eth0-8194"));
	assert_int_equal(discover_read(116, &ti), 0);	/* eth2's: not this interface's */
	assert_int_equal(match_find_target(&p, &ti, NULL, 0), -ENOENT);
	profile_free(&p);
	copy_close(&w);
}

/* The per-CPU soft IRQ kthreads, by name and CPU; listed only when a profile asks. */
static void test_match_softirq(void **state)
{
	struct world w = { 0 };
	struct thread_list plain = { 0 };
	struct match_problem probs[4];
	struct thread_info ti;
	struct profile p;

	copy_open();
	clone_kthread(60, "ktimers/0", 2);
	clone_kthread(61, "ksoftirqd/1", 2);
	clone_kthread(62, "ktimers/1", 2);
	clone_kthread(63, "backlog_napi/1", 2);
	clone_kthread(64, "ksoftirqd/01", 2);	/* no such name: the kernel writes no 0 */
	clone_kthread(65, "ksoftirqd/2", 1);	/* not kthreadd's child */
	fixtree_file("sys/devices/system/cpu/cpu0/online", "1\n");
	fixtree_file("sys/devices/system/cpu/cpu1/online", "1\n");
	copy_scan(&w);

	assert_string_equal(pids_of(&w, "    softirq:\n      cpu: 0\n"), "51 60");
	assert_string_equal(pids_of(&w, "    softirq:\n      cpu: [1]\n"), "61 62 63");
	assert_string_equal(pids_of(&w, "    softirq:\n      kthreads: ksoftirqd\n"), "51 61");
	assert_string_equal(pids_of(&w, "    softirq:\n      kthreads: [ktimers, backlog_napi]\n"
				    "      cpu: [1, 0]\n"), "60 62 63");
	assert_string_equal(pids_of(&w, "    softirq:\n      cpu: 7\n"), "");
	/* the IRQ selectors as before: they take none of them */
	assert_string_equal(pids_of(&w, "    action: '*'\n"),
			    "101 102 103 104 105 106 107 108 109 110 111 112 113");
	/* a scan for the device's threads alone leaves them out */
	assert_int_equal(discover_scan_irq(&plain, false), 0);
	for (size_t i = 0; i < plain.n; i++)
		assert_false(plain.v[i].is_softirqd);
	assert_int_equal(plain.n + 5, w.irq.n);
	/* a CPU that comes up later: hotplug's one look at its new kthread */
	parse(&p, "  - name: sirq\n    softirq:\n      cpu: 1\n    runtime: 1ms\n"
		  "    period: 10ms\n");
	assert_int_equal(discover_read(61, &ti), 0);
	assert_true(ti.is_softirqd && !ti.is_irq && !ti.is_napi);
	assert_int_equal(ti.softirqd_cpu, 1);
	assert_int_equal(match_find_target(&p, &ti, NULL, 0), 0);
	assert_int_equal(discover_read(60, &ti), 0);	/* CPU 0's */
	assert_int_equal(match_find_target(&p, &ti, NULL, 0), -ENOENT);
	assert_int_equal(discover_read(65, &ti), 0);	/* the impostor */
	assert_false(ti.is_softirqd);
	assert_int_equal(match_selector_problems(NULL, &p.targets[0], probs, 4), 0);
	profile_free(&p);
	/* a CPU this machine does not have is a selector problem, named with its line */
	parse(&p, "  - name: sirq\n    softirq:\n      cpu: [1, 9]\n    runtime: 1ms\n"
		  "    period: 10ms\n");
	assert_int_equal(match_selector_problems(NULL, &p.targets[0], probs, 4), 1);
	assert_int_equal(probs[0].line, 5);
	assert_non_null(strstr(probs[0].text, "CPU 9 does not exist (no "));
	profile_free(&p);
	discover_list_free(&plain);
	copy_close(&w);
}

static void test_match_irq_action(void **state)
{
	struct world *w = *state;

	assert_string_equal(pids_of(w, "    irq: 19\n"), "103 104");
	assert_string_equal(pids_of(w, "    irq: 19\n    secondary: false\n"), "103");
	assert_string_equal(pids_of(w, "    irq: [11, 45]\n"), "101 102 110");
	assert_string_equal(pids_of(w, "    irq: 12\n"), "");	/* the impostor's number */
	/* the full action name behind the cut comm irq/128-mlx5_co */
	assert_string_equal(pids_of(w, "    action: 'mlx5_comp0@pci:*'\n"), "105");
	assert_string_equal(pids_of(w, "    action: 'eth0*'\n"), "109 110 111");
	/* the user process named irq/11-eth0 is never an IRQ thread */
	assert_string_equal(pids_of(w, "    action: 'eth0'\n"), "109");
	/* selectors combine with AND */
	assert_string_equal(pids_of(w, "    interface: eth0\n    irq: [45, 11]\n"), "110");
	assert_string_equal(pids_of(w, "    action: '*'\n    secondary: false\n"),
			    "101 102 103 105 106 107 108 109 110 111 112 113");
	assert_string_equal(pids_of(w, "    action: 'gpio_key*'\n"), "113");
}

static void test_match_driver(void **state)
{
	struct world *w = *state;

	assert_string_equal(pids_of(w, "    driver: ixgbe\n"), "109 110 111");
	assert_string_equal(pids_of(w, "    driver: virtio_net\n"), "106 107 108");
	assert_string_equal(pids_of(w, "    driver: virtio-pci\n"), "106 107 108");
	assert_string_equal(pids_of(w, "    driver: ehci_pci\n"), "103 104");
	assert_string_equal(pids_of(w, "    driver: mlx5_core\n"), "105");
	/* a shared legacy IRQ: every thread of it; narrow with action */
	assert_string_equal(pids_of(w, "    driver: e1000\n"), "101 102");
	assert_string_equal(pids_of(w, "    driver: e1000\n    action: eth2\n"), "101");
	assert_string_equal(pids_of(w, "    driver: uhci-hcd\n    action: 'uhci*'\n"), "102");
	assert_string_equal(pids_of(w, "    driver: e100\n"), "");
	assert_string_equal(pids_of(w, "    driver: acpi\n"), "");	/* no PCI device */
}

static void test_match_task(void **state)
{
	struct world *w = *state;

	assert_string_equal(pids_of(w, "    task:\n      comm: 'mpv*'\n"), "300 301");
	/* a process id selects all its threads */
	/* a list of globs: any of them */
	assert_string_equal(pids_of(w, "    task:\n      comm: [sshd, 'mpv*', nothing]\n"),
			    "300 301 400");
	assert_string_equal(pids_of(w, "    task:\n      pid: 300\n"), "300 301 302");
	assert_string_equal(pids_of(w, "    task:\n      pid: [302, 400]\n"), "302 400");
	assert_string_equal(pids_of(w, "    task:\n      cgroup: /user.slice\n"),
			    "200 201 202 300 301 302");
	assert_string_equal(pids_of(w, "    task:\n      cgroup: /user.slice/\n"),
			    "200 201 202 300 301 302");
	/* the prefix is a path: /user.slice/mpv is not /user.slice/mpv.scope */
	assert_string_equal(pids_of(w, "    task:\n      cgroup: /user.slice/mpv\n"), "");
	assert_string_equal(pids_of(w, "    task:\n      cgroup: /\n      comm: sshd\n"), "400");
	/* never kernel threads, whatever their name */
	assert_string_equal(pids_of(w, "    task:\n      comm: 'irq/*'\n"), "200 201 202");
	assert_string_equal(pids_of(w, "    task:\n      pid: [2, 50, 101]\n"), "");
	assert_string_equal(pids_of(w, "    task:\n      comm: 'mpv*'\n      cgroup: /system.slice\n"),
			    "");
}

static void test_match_profile_file(void **state)
{
	struct world *w = *state;
	struct match_list m = { 0 };
	struct match_unmatched u = { 0 };
	struct profile p;
	char err[512], desc[256] = "";
	static const struct {
		size_t target;
		pid_t pid;
	} want[] = {
		{ 0, 109 }, { 0, 110 }, { 0, 111 }, { 1, 107 }, { 2, 101 }, { 3, 103 },
		{ 4, 105 }, { 5, 300 }, { 5, 301 },
	};
	size_t i;

	assert_int_equal(profile_load("fixtures/match/machine.yaml", &p, err, sizeof(err)), 0);
	assert_true(match_needs_tasks(&p));
	assert_int_equal(match_profile(&p, &w->irq, &w->tasks, &m, &u, err, sizeof(err)), 0);
	assert_int_equal(m.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < m.n; i++) {
		assert_int_equal(m.v[i].target, want[i].target);
		assert_int_equal(m.v[i].thread.pid, want[i].pid);
	}
	assert_string_equal(m.v[4].thread.comm, "irq/11-eth2");
	assert_int_equal(u.n, 1);
	assert_int_equal(u.v[0], 6);
	match_describe_unmatched(&p, &u, desc, sizeof(desc));
	assert_string_equal(desc, "'gone' (fixtures/match/machine.yaml:31:5)");

	/* task targets need the task list */
	assert_int_equal(match_profile(&p, &w->irq, NULL, &m, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "fixtures/match/machine.yaml: task targets need the list of "
				 "user threads");
	assert_int_equal(m.n, sizeof(want) / sizeof(want[0]));	/* untouched */
	match_list_free(&m);
	match_unmatched_free(&u);
	profile_free(&p);
}

static void test_match_twice(void **state)
{
	struct world *w = *state;
	struct match_list m = { 0 };
	struct match_unmatched u = { 0 };
	struct thread_info ti;
	struct profile p;
	char err[512];

	parse(&p, "  - name: nic\n    interface: eth2\n    runtime: 1ms\n    period: 10ms\n"
		  "  - name: legacy\n    irq: [11, 9]\n    runtime: 1ms\n    period: 10ms\n");
	assert_false(match_needs_tasks(&p));
	assert_int_equal(match_profile(&p, &w->irq, NULL, &m, &u, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "irq/11-eth2 (pid 101) is selected by target 'nic' (t.yaml:3:5) "
				 "and by target 'legacy' (t.yaml:7:5): a thread takes one "
				 "reservation; narrow one of the targets");
	assert_int_equal(m.n, 0);
	assert_int_equal(u.n, 0);

	/* hotplug: which target takes one new thread */
	assert_int_equal(discover_read(101, &ti), 0);
	assert_int_equal(match_find_target(&p, &ti, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "target 'nic' (t.yaml:3:5) and by target 'legacy'"));
	assert_int_equal(discover_read(112, &ti), 0);
	assert_int_equal(match_find_target(&p, &ti, err, sizeof(err)), 1);
	assert_int_equal(match_thread(&p, 0, &ti), 0);
	assert_int_equal(match_thread(&p, 1, &ti), 1);
	assert_int_equal(match_thread(&p, 2, &ti), -EINVAL);
	assert_int_equal(discover_read(200, &ti), 0);	/* the impostor */
	assert_int_equal(match_find_target(&p, &ti, err, sizeof(err)), -ENOENT);
	profile_free(&p);
}

/* Selectors that name what the machine does not have are named, with their line. */
static void test_match_selector_problems(void **state)
{
	struct match_problem pr[8];
	struct profile p;

	parse(&p, "  - name: ok\n    interface: eth2\n    irq: [11, 19]\n    driver: e1000\n"
		  "    runtime: 1ms\n    period: 10ms\n"
		  "  - name: bad\n    interface: eth9\n    irq: [11, 999]\n    driver: r8169\n"
		  "    runtime: 1ms\n    period: 10ms\n"
		  "  - name: lo\n    interface: lo\n    runtime: 1ms\n    period: 10ms\n"
		  "  - name: task\n    task:\n      comm: x\n    runtime: 1ms\n    period: 10ms\n");
	if (match_selector_problems(NULL, &p.targets[0], pr, 8) != 0)
		fail_msg("%s", pr[0].text);
	assert_int_equal(match_selector_problems(NULL, &p.targets[1], pr, 8), 3);
	assert_int_equal(pr[0].line, 10);
	assert_string_equal(pr[0].text, "interface 'eth9' does not exist (no "
			    FIX "/sys/class/net/eth9)");
	assert_int_equal(pr[1].line, 11);
	assert_string_equal(pr[1].text, "IRQ 999 does not exist (not in " FIX "/proc/interrupts)");
	assert_int_equal(pr[2].line, 12);
	assert_string_equal(pr[2].text, "driver 'r8169' owns no IRQ (no PCI device with an IRQ "
			    "is bound to it)");
	assert_int_equal(match_selector_problems(NULL, &p.targets[1], pr, 1), 1);
	assert_int_equal(match_selector_problems(NULL, &p.targets[2], pr, 8), 1);
	assert_non_null(strstr(pr[0].text, "interface 'lo' has no IRQ"));
	assert_int_equal(match_selector_problems(NULL, &p.targets[3], pr, 8), 0);
	profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_napi),
		cmocka_unit_test(test_match_softirq),
		cmocka_unit_test(test_match_interface),
		cmocka_unit_test(test_match_irq_action),
		cmocka_unit_test(test_match_driver),
		cmocka_unit_test(test_match_task),
		cmocka_unit_test(test_match_profile_file),
		cmocka_unit_test(test_match_twice),
		cmocka_unit_test(test_match_selector_problems),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
