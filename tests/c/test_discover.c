/* SPDX-License-Identifier: GPL-2.0-only */
/* test_discover.c - thread discovery on fixture trees and on this host's own /proc. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover.h"
#include "dl.h"

#define FIX "fixtures/discover"

static int use_fixture(void **state)
{
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), FIX "/proc");
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), FIX "/sys");
	return 0;
}

static int use_host(void **state)
{
	irqres_paths_default();
	return 0;
}

static const struct thread_info *find(const struct thread_list *l, pid_t pid)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].pid == pid)
			return &l->v[i];
	return NULL;
}

static void assert_cpus(const cpu_set_t *set, const char *want)
{
	char got[64] = "";
	size_t n = 0;
	int cpu;

	for (cpu = 0; cpu < 8; cpu++)
		if (CPU_ISSET(cpu, set))
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%d", n ? "," : "", cpu);
	assert_string_equal(got, want);
}

static void check_irq_threads(const struct thread_list *l)
{
	static const pid_t want[] = { 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112,
				      113 };
	const struct thread_info *t;
	size_t i;

	assert_int_equal(l->n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < l->n; i++) {
		t = find(l, want[i]);
		assert_non_null(t);
		assert_true(t->is_irq);
		assert_true(t->kthread);
		assert_int_equal(t->tgid, t->pid);
	}
	/* not IRQ threads: a kworker, a user process named irq/11-eth0, a user process
	 * whose parent is kthreadd */
	assert_null(find(l, 50));
	assert_null(find(l, 200));
	assert_null(find(l, 201));

	/* a shared IRQ: one thread per action, each with its own action */
	t = find(l, 101);
	assert_int_equal(t->irq, 11);
	assert_string_equal(t->comm, "irq/11-eth2");
	assert_string_equal(t->actions, "eth2");
	assert_false(t->secondary);
	assert_int_equal(t->policy, SCHED_FIFO);
	assert_int_equal(t->priority, 50);
	assert_cpus(&t->affinity, "0");
	assert_string_equal(t->cgroup, "/");
	assert_string_equal(find(l, 102)->actions, "uhci_hcd:usb3");

	/* forced threading: the primary and the secondary (comm cut) thread of IRQ 19 */
	t = find(l, 103);
	assert_int_equal(t->irq, 19);
	assert_false(t->secondary);
	assert_string_equal(t->actions, "ehci_hcd:usb1");
	t = find(l, 104);
	assert_string_equal(t->comm, "irq/19-s-ehci_h");
	assert_int_equal(t->irq, 19);
	assert_true(t->secondary);
	assert_string_equal(t->actions, "ehci_hcd:usb1");
	assert_int_equal(t->priority, 49);
	assert_cpus(&t->affinity, "1");

	/* comm cut at 15 characters, no /sys/kernel/irq/128: actions from /proc/irq/128/ */
	t = find(l, 105);
	assert_string_equal(t->comm, "irq/128-mlx5_co");
	assert_int_equal(t->irq, 128);
	assert_string_equal(t->actions, "mlx5_comp0@pci:0000:af:00.0");

	/* multi-queue NICs */
	assert_string_equal(find(l, 106)->actions, "virtio2-config");
	assert_string_equal(find(l, 107)->actions, "virtio2-input.0");
	assert_int_equal(find(l, 107)->irq, 38);
	assert_string_equal(find(l, 108)->actions, "virtio2-output.0");
	assert_string_equal(find(l, 109)->actions, "eth0");
	t = find(l, 110);
	assert_string_equal(t->comm, "irq/45-eth0-TxR");
	assert_string_equal(t->actions, "eth0-TxRx-0");

	/* already SCHED_DEADLINE, in a partition */
	t = find(l, 111);
	assert_int_equal(t->policy, SCHED_DEADLINE);
	assert_string_equal(t->cgroup, "/irqres.cpu1");
	assert_string_equal(t->actions, "eth0-TxRx-1");

	t = find(l, 112);
	assert_string_equal(t->actions, "acpi");
	assert_cpus(&t->affinity, "0,1");

	/* no action listed anywhere: the name in the comm (cut at 15 characters) */
	t = find(l, 113);
	assert_int_equal(t->irq, 77);
	assert_string_equal(t->actions, "gpio_key");
}

static void test_discover_scan_irq_children(void **state)
{
	struct thread_list l = { 0 };

	assert_int_equal(discover_scan_irq(&l, false), 0);
	check_irq_threads(&l);
	discover_list_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

/* Without /proc/2/task/2/children the scan walks /proc and finds the same threads. */
static void test_discover_scan_irq_walk(void **state)
{
	struct thread_list l = { 0 };

	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), FIX "/proc-walk");
	assert_int_equal(discover_scan_irq(&l, false), 0);
	check_irq_threads(&l);
	discover_list_free(&l);
}

/* Every kernel thread that may be moved: the IRQ threads and kworker/0:1, bound to CPU 0;
 * not ksoftirqd/0, a per-CPU thread (PF_NO_SETAFFINITY) whose CPUs no cpuset changes. */
static void test_discover_scan_kthreads(void **state)
{
	struct thread_list l = { 0 };
	const struct thread_info *t;

	(void)state;
	assert_int_equal(discover_scan_kthreads(&l), 0);
	assert_int_equal(l.n, 14);
	t = find(&l, 50);
	assert_non_null(t);
	assert_true(t->kthread);
	assert_false(t->is_irq);
	assert_cpus(&t->affinity, "0");
	assert_null(find(&l, 51));
	for (pid_t pid = 101; pid <= 113; pid++)
		assert_true(find(&l, pid) && find(&l, pid)->is_irq);
	discover_list_free(&l);
}

static void test_discover_scan_irq_no_proc(void **state)
{
	struct thread_list l = { 0 };

	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), FIX "/missing");
	assert_int_equal(discover_scan_irq(&l, false), -ENOENT);
	assert_int_equal(l.n, 0);
	discover_list_free(&l);
}

static void test_discover_scan_tasks(void **state)
{
	static const pid_t want[] = { 1, 200, 201, 202, 300, 301, 302, 400 };
	struct thread_list l = { 0 };
	const struct thread_info *t;
	size_t i;

	assert_int_equal(discover_scan_tasks(&l), 0);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < l.n; i++) {
		assert_non_null(find(&l, want[i]));
		assert_false(find(&l, want[i])->kthread);
		assert_false(find(&l, want[i])->is_irq);
		assert_int_equal(find(&l, want[i])->irq, -1);
	}
	t = find(&l, 301);
	assert_string_equal(t->comm, "mpv/vo");
	assert_int_equal(t->tgid, 300);
	assert_int_equal(t->nice, -5);
	assert_string_equal(t->cgroup, "/user.slice/mpv.scope");
	assert_int_equal(t->policy, SCHED_OTHER);
	assert_int_equal(find(&l, 302)->tgid, 300);
	assert_true(find(&l, 302)->starttime != find(&l, 300)->starttime);
	t = find(&l, 200);
	assert_string_equal(t->comm, "irq/11-eth0");
	assert_string_equal(t->actions, "");
	/* the comm ends at the last ')' of stat, whatever the name holds */
	t = find(&l, 202);
	assert_string_equal(t->comm, "irq/13-x) S 2 0");
	assert_false(t->kthread);
	assert_int_equal(t->policy, SCHED_OTHER);
	discover_list_free(&l);
}

/* Only the named processes: each of their user threads, in pid order, as the full scan
 * has them; a process gone or a kernel thread adds nothing. */
static void test_discover_scan_tasks_of(void **state)
{
	static const pid_t procs[] = { 2, 300, 400, 999 };	/* kthreadd, mpv, ..., gone */
	static const pid_t want[] = { 300, 301, 302, 400 };
	struct thread_list all = { 0 }, l = { 0 };
	size_t i;

	assert_int_equal(discover_scan_tasks(&all), 0);
	assert_int_equal(discover_scan_tasks_of(procs, 4, &l), 0);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < l.n; i++) {
		assert_int_equal(l.v[i].pid, want[i]);
		assert_memory_equal(&l.v[i], find(&all, want[i]), sizeof(l.v[i]));
	}
	discover_list_free(&l);
	assert_int_equal(discover_scan_tasks_of(NULL, 0, &l), 0);
	assert_int_equal(l.n, 0);
	discover_list_free(&all);
}

static void test_discover_thread_read(void **state)
{
	struct thread_info ti;

	assert_int_equal(discover_read(50, &ti), 0);
	assert_true(ti.kthread);
	assert_false(ti.is_irq);
	assert_string_equal(ti.comm, "kworker/0:1");

	assert_int_equal(discover_read(200, &ti), 0);
	assert_false(ti.kthread);
	assert_false(ti.is_irq);
	assert_int_equal(ti.irq, -1);

	assert_int_equal(discover_read(201, &ti), 0);
	assert_false(ti.is_irq);

	assert_int_equal(discover_read(110, &ti), 0);
	assert_true(ti.is_irq);
	assert_int_equal(ti.irq, 45);
	assert_string_equal(ti.actions, "eth0-TxRx-0");
	assert_int_equal(discover_still_same(&ti), 1);
	ti.starttime++;
	assert_int_equal(discover_still_same(&ti), 0);
	ti.pid = 999;
	assert_int_equal(discover_still_same(&ti), 0);

	assert_int_equal(discover_read(999, &ti), -ESRCH);
	assert_int_equal(discover_read(0, &ti), -EINVAL);
	assert_int_equal(discover_read(-4, &ti), -EINVAL);
}

static void test_discover_irq_actions(void **state)
{
	char buf[ACTIONS_MAX];

	assert_int_equal(discover_irq_actions(11, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "eth2,uhci_hcd:usb3");
	assert_int_equal(discover_irq_actions(128, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "mlx5_comp0@pci:0000:af:00.0");
	assert_int_equal(discover_irq_actions(77, buf, sizeof(buf)), -ENOENT);
}

static void test_discover_list_push(void **state)
{
	struct thread_list l = { 0 };
	struct thread_info ti = { .pid = 1 };
	int i;

	for (i = 0; i < 1000; i++) {
		ti.pid = i + 1;
		assert_int_equal(discover_list_push(&l, &ti), 0);
	}
	assert_int_equal(l.n, 1000);
	assert_true(l.cap >= 1000);
	assert_int_equal(l.v[999].pid, 1000);
	discover_list_free(&l);
	discover_list_free(&l);
}

/* A process of this test that names itself irq/11-eth0 and sleeps. */
static pid_t spawn_impostor(void)
{
	int pipefd[2];
	pid_t child;
	char c;

	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "irq/11-eth0");
		close(pipefd[0]);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	return child;
}

static void reap(pid_t child)
{
	struct thread_info ti;
	int status;

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	assert_int_equal(discover_read(child, &ti), -ESRCH);
}

/*
 * On this host's real /proc: a process of this test named irq/11-eth0 is a task, never
 * an IRQ thread.  The host's own threads are only read.
 */
static void test_discover_host_impostor(void **state)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	const struct thread_info *t;
	pid_t child = spawn_impostor();
	size_t i;

	assert_int_equal(discover_scan_irq(&irq, false), 0);
	for (i = 0; i < irq.n; i++) {
		assert_true(irq.v[i].is_irq);
		assert_true(irq.v[i].kthread);
		assert_int_equal(strncmp(irq.v[i].comm, "irq/", 4), 0);
		assert_true(irq.v[i].irq >= 0);
	}
	assert_null(find(&irq, child));

	assert_int_equal(discover_scan_tasks(&tasks), 0);
	t = find(&tasks, child);
	assert_non_null(t);
	assert_string_equal(t->comm, "irq/11-eth0");
	assert_false(t->is_irq);
	assert_false(t->kthread);
	assert_int_equal(t->tgid, child);
	assert_true(CPU_COUNT(&t->affinity) > 0);
	assert_true(t->cgroup[0] == '/' || t->cgroup[0] == '\0');
	assert_non_null(find(&tasks, getpid()));
	for (i = 0; i < tasks.n; i++)
		assert_false(tasks.v[i].kthread);
	reap(child);
	discover_list_free(&irq);
	discover_list_free(&tasks);
}

/* discover_read sees a SCHED_DEADLINE reservation that this test gives its own child. */
static void test_discover_host_deadline(void **state)
{
	pid_t child = spawn_impostor();
	struct thread_info ti;
	int rc;

	/* 0.1 % of a CPU: admitted unless the machine's DL bandwidth is all taken */
	rc = dl_set_deadline(child, 100000, 50000000, 100000000);
	if (rc) {
		reap(child);
		print_message("SCHED_DEADLINE refused for a child of this test (%s): "
			      "DL parameters not checked\n", strerror(-rc));
		skip();
	}
	assert_int_equal(discover_read(child, &ti), 0);
	assert_int_equal(ti.policy, SCHED_DEADLINE);
	assert_int_equal(ti.dl_runtime_ns, 100000);
	assert_int_equal(ti.dl_deadline_ns, 50000000);
	assert_int_equal(ti.dl_period_ns, 100000000);
	assert_int_equal(ti.priority, 0);
	reap(child);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_discover_scan_irq_children, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_scan_irq_walk, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_scan_kthreads, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_scan_irq_no_proc, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_scan_tasks, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_scan_tasks_of, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_thread_read, use_fixture, use_host),
		cmocka_unit_test_setup_teardown(test_discover_irq_actions, use_fixture, use_host),
		cmocka_unit_test(test_discover_list_push),
		cmocka_unit_test_setup_teardown(test_discover_host_impostor, use_host, use_host),
		cmocka_unit_test_setup_teardown(test_discover_host_deadline, use_host, use_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
