/* SPDX-License-Identifier: GPL-2.0-only */
/* test_profile.c - the profile parser: every rule of docs/profile.md, good and bad files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "profile.h"
#include "yamlmap.h"

#define HEAD "version: 1\ntargets:\n  - name: nic\n"
#define NIC HEAD "    interface: eth0\n"
#define QT "    runtime: 2ms\n    period: 10ms\n"

static void test_profile_full_file(void **state)
{
	struct profile p;
	char err[512];
	const struct target *t;

	assert_int_equal(profile_load("fixtures/profile/full.yaml", &p, err, sizeof(err)), 0);
	assert_string_equal(p.path, "fixtures/profile/full.yaml");
	assert_true(p.admission_off);
	assert_true(p.drift_report);
	assert_int_equal(p.n_targets, 4);

	t = &p.targets[0];
	assert_string_equal(t->name, "nic");
	assert_int_equal(t->kind, TARGET_IRQ);
	assert_int_equal(t->line, 5);
	assert_int_equal(t->col, 5);
	assert_string_equal(t->interface, "eth0");
	assert_int_equal(t->n_irqs, 2);
	assert_int_equal(t->irqs[0], 11);
	assert_int_equal(t->irqs[1], 19);
	assert_string_equal(t->action_glob, "eth0*");
	assert_string_equal(t->driver, "e1000");
	assert_false(t->secondary);
	assert_int_equal(t->runtime_ns, 2000000);
	assert_int_equal(t->period_ns, 10000000);
	assert_int_equal(t->deadline_ns, 8000000);
	assert_int_equal(t->min_interarrival_ns, 50000);
	assert_int_equal(t->buffer, 256);
	assert_int_equal(t->mode, MODE_ADAPTIVE);
	assert_int_equal(t->adaptive.sample_ns, 5000000);
	assert_true(t->adaptive.gain == 0.5);
	assert_int_equal(t->adaptive.window, 50);
	assert_int_equal(t->adaptive.default_job_ns, 30000);
	assert_int_equal(t->adaptive.min_runtime_ns, 500000);
	assert_int_equal(t->adaptive.max_runtime_ns, 7000000);
	assert_int_equal(t->adaptive.hysteresis_ns, 40000);
	assert_int_equal(t->task_comm.n, 0);

	t = &p.targets[1];
	assert_string_equal(t->name, "player");
	assert_int_equal(t->kind, TARGET_TASK);
	assert_int_equal(t->line, 26);
	assert_int_equal(t->task_comm.n, 1);
	assert_string_equal(t->task_comm.v[0], "mpv*");
	assert_int_equal(t->n_pids, 2);
	assert_int_equal(t->pids[0], 1234);
	assert_int_equal(t->pids[1], 99);
	assert_string_equal(t->task_cgroup, "/app.slice");
	assert_int_equal(t->deadline_ns, 40000000);	/* default: the period */
	assert_null(t->interface);
	assert_int_equal(t->n_irqs, 0);

	t = &p.targets[2];
	assert_string_equal(t->name, "disk.1");
	assert_int_equal(t->n_irqs, 1);
	assert_int_equal(t->irqs[0], 14);
	assert_int_equal(t->runtime_ns, 1500000);
	assert_int_equal(t->period_ns, 100000000);
	assert_true(t->secondary);			/* default */
	assert_int_equal(t->mode, MODE_STATIC);
	assert_false(t->serves.given);

	t = &p.targets[3];
	assert_string_equal(t->name, "rx");
	assert_true(t->coupled);			/* serves: without runtime, period */
	assert_int_equal(t->serves.n_ports, 1);
	assert_int_equal(t->serves.ports[0], 5000);
	assert_int_equal(t->serves.comm.n, 2);		/* one glob or a list */
	assert_string_equal(t->serves.comm.v[0], "rtp-*");
	assert_string_equal(t->serves.comm.v[1], "rx");
	assert_int_equal(t->serves.pids[0], 42);
	assert_string_equal(t->serves.cgroup, "/media.slice");

	assert_int_equal(profile_find_target(&p, "player"), 1);
	assert_int_equal(profile_find_target(&p, "nope"), -1);
	profile_free(&p);
	assert_null(p.targets);
	profile_free(&p);	/* safe twice */
}

static void test_profile_defaults(void **state)
{
	static const char text[] = NIC QT "    mode: adaptive\n";
	struct profile p;
	char err[512];
	const struct target *t;

	assert_int_equal(profile_parse(text, strlen(text), NULL, &p, err, sizeof(err)), 0);
	assert_string_equal(p.path, "<string>");
	assert_false(p.admission_off);
	assert_false(p.drift_report);
	assert_false(p.hrtick);		/* enforcement: keep */
	t = &p.targets[0];
	assert_true(t->secondary);
	assert_int_equal(t->deadline_ns, 10000000);
	assert_int_equal(t->min_interarrival_ns, 0);
	assert_int_equal(t->buffer, 0);
	assert_int_equal(t->adaptive.sample_ns, 10000000);
	assert_true(t->adaptive.gain == 0.25);
	assert_int_equal(t->adaptive.window, 100);
	assert_int_equal(t->adaptive.default_job_ns, PROFILE_ADAPTIVE_DEFAULT_JOB_NS);
	assert_int_equal(t->adaptive.min_runtime_ns, 0);
	assert_int_equal(t->adaptive.max_runtime_ns, 0);
	/* derived clamps: 1us raised to the kernel minimum, and the deadline */
	assert_int_equal(profile_adaptive_min_runtime(t, t->period_ns), 1024);
	assert_int_equal(profile_adaptive_max_runtime(t, t->period_ns), 10000000);
	assert_int_equal(profile_adaptive_max_runtime(t, 20000000), 20000000);
	assert_int_equal(profile_buffer_check(t, t->runtime_ns, t->period_ns),
			 PROFILE_BUFFER_UNKNOWN);
	assert_string_equal(profile_buffer_verdict_name(PROFILE_BUFFER_UNKNOWN), "unknown");
	profile_free(&p);
}

/* serves: parsed; without runtime and period the target is coupled, with them reserved */
static void test_profile_serves(void **state)
{
	static const char text[] = HEAD "    interface: eth0\n    serves:\n      comm: \"rx*\"\n"
		"      pid: [7, 8]\n      cgroup: /app.slice\n      port: [5000, 5001]\n"
		"  - name: disk\n    irq: 14\n" QT "    serves: {port: 80}\n"
		"  - name: plain\n    irq: 15\n" QT;
	struct profile p;
	char err[512];
	const struct target *t;

	assert_int_equal(profile_parse(text, strlen(text), "s.yaml", &p, err, sizeof(err)), 0);
	t = &p.targets[0];
	assert_true(t->serves.given);
	assert_true(t->coupled);
	assert_int_equal(t->serves.comm.n, 1);
	assert_string_equal(t->serves.comm.v[0], "rx*");
	assert_int_equal(t->serves.n_pids, 2);
	assert_int_equal(t->serves.pids[1], 8);
	assert_string_equal(t->serves.cgroup, "/app.slice");
	assert_int_equal(t->serves.n_ports, 2);
	assert_int_equal(t->serves.ports[0], 5000);
	assert_int_equal(t->runtime_ns, 0);
	t = &p.targets[1];
	assert_true(t->serves.given);
	assert_false(t->coupled);
	assert_int_equal(t->runtime_ns, 2000000);
	assert_false(p.targets[2].serves.given);
	assert_false(p.targets[2].coupled);
	assert_true(profile_has_coupled(&p));
	profile_free(&p);
}

static void test_profile_buffering(void **state)
{
	/* (T - Q)/P = (10ms - 2ms)/50us = 160 < 256 */
	static const char text[] = NIC QT "    min_interarrival: 50us\n    buffer: 256\n"
				   "    mode: adaptive\n";
	struct profile p;
	char err[512];
	const struct target *t;

	assert_int_equal(profile_parse(text, strlen(text), "x.yaml", &p, err, sizeof(err)), 0);
	t = &p.targets[0];
	assert_int_equal(profile_buffer_check(t, 2000000, 10000000), PROFILE_BUFFER_OK);
	/* T - Q = 12.8ms = 256 * 50us: not strictly less */
	assert_int_equal(profile_buffer_check(t, 2000000, 14800000), PROFILE_BUFFER_VIOLATED);
	assert_int_equal(profile_buffer_check(t, 2000001, 14800000), PROFILE_BUFFER_OK);
	assert_string_equal(profile_buffer_verdict_name(PROFILE_BUFFER_OK), "ok");
	assert_string_equal(profile_buffer_verdict_name(PROFILE_BUFFER_VIOLATED), "violated");
	/* smallest Q with (T - Q) < N_c P: 10ms - 12.8ms < 0: the kernel minimum */
	assert_int_equal(profile_adaptive_min_runtime(t, 10000000), 1024);
	/* at T = 20ms: Q > 20ms - 12.8ms = 7.2ms */
	assert_int_equal(profile_adaptive_min_runtime(t, 20000000), 7200001);
	/* a given min_runtime counts when it is above the buffering bound, not below */
	p.targets[0].adaptive.min_runtime_ns = 8000000;
	assert_int_equal(profile_adaptive_min_runtime(t, 20000000), 8000000);
	p.targets[0].adaptive.min_runtime_ns = 5000000;
	assert_int_equal(profile_adaptive_min_runtime(t, 20000000), 7200001);
	assert_int_equal(profile_adaptive_min_runtime(t, 10000000), 5000000);
	profile_free(&p);
}

struct bad_case {
	const char *text;
	const char *message;
};

static const struct bad_case bad_cases[] = {
	/* the document */
	{ "", "bad.yaml:1:1: the profile is empty: it needs version: 1 and targets" },
	{ "- 1\n", "bad.yaml:1:1: a profile is a mapping with version and targets, got a list" },
	{ "targets: []\n", "bad.yaml:1:1: profile: missing required key 'version'" },
	{ "version: 1\n", "bad.yaml:1:1: profile: missing required key 'targets'" },
	{ "version: 2\ntargets: []\n",
	  "bad.yaml:1:10: version: 2 is not supported: this irqresd reads version 1" },
	{ "version: '1'\n", "bad.yaml:1:10: version: expected an integer, got the string '1'" },
	{ "version: 1\nversion: 1\n",
	  "bad.yaml:2:1: profile: duplicate key 'version' (first given at line 1)" },
	/* the first repeat in document order is named, with its first use */
	{ "version: 1\ntargets: []\ntargets: []\nversion: 1\n",
	  "bad.yaml:3:1: profile: duplicate key 'targets' (first given at line 2)" },
	{ "version: 1\n? [a]\n: 1\nversion: 1\n",
	  "bad.yaml:2:3: profile: a key must be a plain name, got a list" },
	{ "version: 1\nversion: 1\n? [a]\n: 1\n",
	  "bad.yaml:2:1: profile: duplicate key 'version' (first given at line 1)" },
	{ "version: 1\ntarget: []\n",
	  "bad.yaml:2:1: profile: unknown key 'target' (known keys: version, admission_control, "
	  "drift, enforcement, targets)" },
	{ "version: 1\nenforcement: hrtick_dl\ntargets: []\n",
	  "bad.yaml:2:14: enforcement: 'hrtick_dl' is not a choice: use keep or hrtick" },
	{ "version: 1\nenforcement: [hrtick]\ntargets: []\n",
	  "bad.yaml:2:14: enforcement: expected a string, got a list" },
	{ "version: 1\ndrift: fix\ntargets: []\n",
	  "bad.yaml:2:8: drift: 'fix' is not a choice: use reapply or report" },
	{ "version: 1\nadmission_control: off\ntargets: []\n",
	  "bad.yaml:2:20: admission_control: 'off' is not a choice: use keep or disable" },
	{ "version: 1\ntargets: []\n",
	  "bad.yaml:2:10: targets: the list is empty: give at least one target" },
	{ "version: 1\ntargets:\n  nic: 1\n",
	  "bad.yaml:3:3: targets: expected a list of targets, got a mapping" },
	{ "version: 1\ntargets:\n  - nic\n",
	  "bad.yaml:3:5: targets[0]: expected a mapping (name, runtime, period, ...), got a scalar" },
	{ "version: 1\n[a]: 1\n", "bad.yaml:2:1: profile: a key must be a plain name, got a list" },
	{ NIC QT "---\nversion: 1\n",
	  "bad.yaml:8:1: a second YAML document: a profile file holds one document" },
	/* names */
	{ "version: 1\ntargets:\n  - runtime: 2ms\n",
	  "bad.yaml:3:5: targets[0]: missing required key 'name'" },
	{ "version: 1\ntargets:\n  - name: \"a b\"\n",
	  "bad.yaml:3:11: targets[0]: name: 'a b' is not a valid target name ([A-Za-z0-9_.-], 1 to "
	  "63 characters)" },
	{ "version: 1\ntargets:\n  - name: "
	  "a234567890123456789012345678901234567890123456789012345678901234\n",
	  "bad.yaml:3:11: targets[0]: name: "
	  "'a234567890123456789012345678901234567890123456789012345678901234' is not a valid "
	  "target name ([A-Za-z0-9_.-], 1 to 63 characters)" },
	{ "version: 1\ntargets:\n  - name: [x]\n",
	  "bad.yaml:3:11: targets[0]: name: expected a string, got a list" },
	{ "version: 1\ntargets:\n  - name:\n    irq: 1\n",
	  "bad.yaml:3:10: targets[0]: name: expected a string, got no value" },
	{ NIC QT "  - name: nic\n    irq: 3\n" QT,
	  "bad.yaml:7:5: target 'nic': duplicate name (first used at line 3)" },
	/* keys and types */
	{ NIC QT "    priority: 5\n",
	  "bad.yaml:7:5: target 'nic': unknown key 'priority' (known keys: name, interface, irq, "
	  "action, driver, secondary, task, runtime, period, deadline, min_interarrival, buffer, "
	  "mode, adaptive, take_over, serves, napi, threaded_napi, with_napi, softirq)" },
	{ NIC QT "    runtime: 3ms\n",
	  "bad.yaml:7:5: target 'nic': duplicate key 'runtime' (first given at line 5)" },
	{ HEAD "    interface: [eth0]\n" QT,
	  "bad.yaml:4:16: target 'nic': interface: expected a string, got a list" },
	{ HEAD "    interface: eth0/1\n" QT,
	  "bad.yaml:4:16: target 'nic': interface: 'eth0/1' is not a network interface name "
	  "(at most 15 characters, no '/', ':' or blanks)" },
	{ HEAD "    interface: abcdefghijklmnop\n" QT,
	  "bad.yaml:4:16: target 'nic': interface: 'abcdefghijklmnop' is not a network interface "
	  "name (at most 15 characters, no '/', ':' or blanks)" },
	{ HEAD "    interface: ''\n" QT, "bad.yaml:4:16: target 'nic': interface: must not be empty" },
	{ HEAD "    irq: -1\n" QT, "bad.yaml:4:10: target 'nic': irq: must not be negative, got -1" },
	{ HEAD "    irq: [11, x]\n" QT, "bad.yaml:4:15: target 'nic': irq: expected an integer, got 'x'" },
	{ HEAD "    irq: [11, [2]]\n" QT,
	  "bad.yaml:4:15: target 'nic': irq: expected an integer in the list, got a list" },
	{ HEAD "    irq: []\n" QT, "bad.yaml:4:10: target 'nic': irq: the list is empty" },
	{ HEAD "    irq: {a: 1}\n" QT,
	  "bad.yaml:4:10: target 'nic': irq: expected an integer or a list of integers, got a "
	  "mapping" },
	{ HEAD "    irq: 99999999999\n" QT,
	  "bad.yaml:4:10: target 'nic': irq: 99999999999 is too large (at most 2147483647)" },
	{ HEAD "    irq: 1.5\n" QT, "bad.yaml:4:10: target 'nic': irq: expected an integer, got '1.5'" },
	{ HEAD "    driver: pci/e1000\n" QT,
	  "bad.yaml:4:13: target 'nic': driver: 'pci/e1000' is not a driver name (no '/')" },
	{ NIC QT "    secondary: maybe\n",
	  "bad.yaml:7:16: target 'nic': secondary: expected true or false, got 'maybe'" },
	{ NIC QT "    secondary: \"false\"\n",
	  "bad.yaml:7:16: target 'nic': secondary: expected true or false, got the string 'false'" },
	{ NIC QT "    secondary:\n",
	  "bad.yaml:7:15: target 'nic': secondary: expected true or false, got no value" },
	/* selectors */
	{ HEAD QT, "bad.yaml:3:5: target 'nic': no selector: give interface, irq, action or driver "
		   "(IRQ threads), task (user threads), napi (an interface's NAPI kthreads) or "
		   "softirq (per-CPU soft IRQ kthreads)" },
	{ NIC "    task:\n      comm: mpv\n" QT,
	  "bad.yaml:5:5: target 'nic': task cannot be combined with interface (line 4): a target "
	  "selects IRQ threads, tasks, NAPI kthreads or soft IRQ kthreads, one kind only" },
	{ HEAD "    napi: eth0\n    irq: 11\n" QT,
	  "bad.yaml:5:5: target 'nic': irq cannot be combined with napi (line 4): a target "
	  "selects IRQ threads, tasks, NAPI kthreads or soft IRQ kthreads, one kind only" },
	{ HEAD "    task:\n      comm: mpv\n    napi: eth0\n" QT,
	  "bad.yaml:6:5: target 'nic': napi cannot be combined with task (line 4): a target "
	  "selects IRQ threads, tasks, NAPI kthreads or soft IRQ kthreads, one kind only" },
	/* softirq: per-CPU soft IRQ kthreads */
	{ HEAD "    softirq:\n      cpu: 0\n    irq: 11\n" QT,
	  "bad.yaml:6:5: target 'nic': irq cannot be combined with softirq (line 4): a target "
	  "selects IRQ threads, tasks, NAPI kthreads or soft IRQ kthreads, one kind only" },
	{ HEAD "    napi: eth0\n    softirq:\n      cpu: 0\n" QT,
	  "bad.yaml:5:5: target 'nic': softirq cannot be combined with napi (line 4): a target "
	  "selects IRQ threads, tasks, NAPI kthreads or soft IRQ kthreads, one kind only" },
	{ HEAD "    softirq:\n      kthreads: ksoftirq\n" QT,
	  "bad.yaml:5:17: target 'nic': softirq.kthreads: 'ksoftirq' is not a per-CPU soft IRQ "
	  "kthread (one of ksoftirqd, ktimers, backlog_napi; the CPU goes in cpu)" },
	{ HEAD "    softirq:\n      kthreads: [ktimers, ksoftirqd/0]\n" QT,
	  "bad.yaml:5:27: target 'nic': softirq.kthreads: 'ksoftirqd/0' is not a per-CPU soft "
	  "IRQ kthread (one of ksoftirqd, ktimers, backlog_napi; the CPU goes in cpu)" },
	{ HEAD "    softirq:\n      kthreads: []\n" QT,
	  "bad.yaml:5:17: target 'nic': softirq.kthreads: the list is empty" },
	{ HEAD "    softirq:\n      kthreads: {a: 1}\n" QT,
	  "bad.yaml:5:17: target 'nic': softirq.kthreads: expected a kthread name or a list of "
	  "them, got a mapping" },
	{ HEAD "    softirq:\n      cpu: -1\n" QT,
	  "bad.yaml:5:12: target 'nic': softirq.cpu: must not be negative, got -1" },
	{ HEAD "    softirq:\n      cpu: 1024\n" QT,
	  "bad.yaml:5:12: target 'nic': softirq.cpu: 1024 is too large (at most 1023)" },
	{ HEAD "    softirq: {}\n" QT,
	  "bad.yaml:4:14: target 'nic': softirq: give at least one of kthreads, cpu" },
	{ HEAD "    softirq: ksoftirqd\n" QT,
	  "bad.yaml:4:14: target 'nic': softirq: expected a mapping of kthreads and cpu, got a "
	  "scalar" },
	{ HEAD "    softirq:\n      cpu: 0\n      pid: 3\n" QT,
	  "bad.yaml:6:7: target 'nic': softirq: unknown key 'pid' (known keys: kthreads, cpu)" },
	{ HEAD "    softirq:\n      cpu: 0\n    secondary: false\n" QT,
	  "bad.yaml:6:5: target 'nic': secondary applies to IRQ threads only, not to a softirq "
	  "target" },
	{ HEAD "    softirq:\n      cpu: 0\n    threaded_napi: true\n" QT,
	  "bad.yaml:6:5: target 'nic': threaded_napi switches an interface: it needs interface or "
	  "napi in the target" },
	{ HEAD "    softirq:\n      cpu: 0\n" QT "    min_interarrival: 50us\n",
	  "bad.yaml:8:23: target 'nic': min_interarrival and buffer describe a device: IRQ and "
	  "napi targets only, not a softirq target" },
	{ HEAD "    napi: eth0\n    secondary: true\n" QT,
	  "bad.yaml:5:5: target 'nic': secondary applies to IRQ threads only, not to a napi target" },
	{ HEAD "    napi: eth0/1\n" QT,
	  "bad.yaml:4:11: target 'nic': napi: 'eth0/1' is not a network interface name "
	  "(at most 15 characters, no '/', ':' or blanks)" },
	{ HEAD "    irq: 11\n    threaded_napi: true\n" QT,
	  "bad.yaml:5:5: target 'nic': threaded_napi switches an interface: it needs interface or "
	  "napi in the target" },
	{ HEAD "    task:\n      comm: mpv\n    threaded_napi: true\n" QT,
	  "bad.yaml:6:5: target 'nic': threaded_napi switches an interface: it needs interface or "
	  "napi in the target" },
	{ HEAD "    irq: 11\n    with_napi: true\n" QT,
	  "bad.yaml:5:5: target 'nic': with_napi takes the NAPI kthreads of the target's "
	  "interface: it needs interface (a napi target takes them alone)" },
	{ HEAD "    napi: eth0\n    with_napi: true\n" QT,
	  "bad.yaml:5:5: target 'nic': with_napi takes the NAPI kthreads of the target's "
	  "interface: it needs interface (a napi target takes them alone)" },
	{ NIC "    with_napi: 1\n" QT,
	  "bad.yaml:5:16: target 'nic': with_napi: expected true or false, got '1'" },
	{ HEAD "    napi: eth0\n    threaded_napi: maybe\n" QT,
	  "bad.yaml:5:20: target 'nic': threaded_napi: expected true or false, got 'maybe'" },
	{ HEAD "    task:\n      comm: mpv\n    secondary: true\n" QT,
	  "bad.yaml:6:5: target 'nic': secondary applies to IRQ threads only, not to a task target" },
	{ HEAD "    task: {}\n" QT,
	  "bad.yaml:4:11: target 'nic': task: give at least one of comm, pid, cgroup" },
	{ HEAD "    task:\n      pid: [7, 1]\n" QT,
	  "bad.yaml:5:12: target 'nic': task.pid: pid 1 is init: irqres never changes its "
	  "scheduling" },
	{ HEAD "    task:\n      comm: [mpv, abcdefghijklmnop]\n" QT,
	  "bad.yaml:5:13: target 'nic': task.comm: 'abcdefghijklmnop' can never match: the "
	  "kernel keeps at most 15 characters of a thread's name (use its first 15)" },
	{ HEAD "    interface: eth0\n    serves:\n      comm: \"[ab]?cdefghijklmno*p\"\n",
	  "bad.yaml:6:13: target 'nic': serves.comm: '[ab]?cdefghijklmno*p' can never match: "
	  "the kernel keeps at most 15 characters of a thread's name (use its first 15)" },
	{ HEAD "    task:\n      comm: irqresd\n" QT,
	  "bad.yaml:5:13: target 'nic': task.comm: 'irqresd' is irqresd itself: irqres never "
	  "reserves its own threads" },
	{ HEAD "    task:\n      comm: \"x\\0zz\"\n" QT,
	  "bad.yaml:5:13: target 'nic': task.comm: contains a NUL byte (\\0) at offset 1" },
	{ HEAD "    task: mpv\n" QT,
	  "bad.yaml:4:11: target 'nic': task: expected a mapping of comm, pid and cgroup, got a "
	  "scalar" },
	{ HEAD "    task:\n      name: mpv\n" QT,
	  "bad.yaml:5:7: target 'nic': task: unknown key 'name' (known keys: comm, pid, cgroup)" },
	{ HEAD "    task:\n      pid: 0\n" QT,
	  "bad.yaml:5:12: target 'nic': task.pid: 0 is too small (at least 1)" },
	{ HEAD "    task:\n      cgroup: app.slice\n" QT,
	  "bad.yaml:5:15: target 'nic': task.cgroup: 'app.slice' must be an absolute cgroup v2 path "
	  "starting with /" },
	{ HEAD "    task:\n      comm: x\n      comm: y\n" QT,
	  "bad.yaml:6:7: target 'nic': task: duplicate key 'comm' (first given at line 5)" },
	{ HEAD "    task:\n      comm: x\n" QT "    buffer: 10\n",
	  "bad.yaml:8:13: target 'nic': min_interarrival and buffer describe a device: IRQ and "
	  "napi targets only, not a task target" },
	/* durations and their rules */
	{ NIC "    period: 10ms\n", "bad.yaml:3:5: target 'nic': missing required key 'runtime'" },
	/* serves: a task selector or ports; without runtime and period nothing shapes a
	 * reservation, and half a reservation is still refused */
	{ NIC "    serves: {}\n",
	  "bad.yaml:5:13: target 'nic': serves: give at least one of comm, pid, cgroup, port" },
	{ NIC "    serves: {prot: 5000}\n",
	  "bad.yaml:5:14: target 'nic': serves: unknown key 'prot' (known keys: comm, pid, "
	  "cgroup, port)" },
	{ NIC "    serves: {comm: []}\n",
	  "bad.yaml:5:20: target 'nic': serves.comm: the list is empty" },
	{ NIC "    serves: {comm: [rx, '']}\n",
	  "bad.yaml:5:25: target 'nic': serves.comm: must not be empty" },
	{ NIC "    serves: {comm: [rx, {a: 1}]}\n",
	  "bad.yaml:5:25: target 'nic': serves.comm: expected a string, got a mapping" },
	{ NIC "    serves: {port: 70000}\n",
	  "bad.yaml:5:20: target 'nic': serves.port: 70000 is too large (at most 65535)" },
	{ NIC "    serves: {cgroup: app.slice}\n",
	  "bad.yaml:5:22: target 'nic': serves.cgroup: 'app.slice' must be an absolute cgroup "
	  "v2 path starting with /" },
	{ NIC "    serves: [rx]\n",
	  "bad.yaml:5:13: target 'nic': serves: expected a mapping of comm, pid, cgroup and "
	  "port, got a list" },
	{ NIC "    serves: {comm: rx}\n    buffer: 256\n",
	  "bad.yaml:6:5: target 'nic': buffer applies to a reservation: give runtime and "
	  "period too, or drop it (without them the threads' SCHED_FIFO priority follows the "
	  "processes they serve)" },
	{ NIC "    serves: {comm: rx}\n    runtime: 2ms\n",
	  "bad.yaml:3:5: target 'nic': missing required key 'period'" },
	{ NIC "    runtime: 2ms\n", "bad.yaml:3:5: target 'nic': missing required key 'period'" },
	{ NIC "    runtime: -2ms\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime: '-2ms': a duration must not be negative" },
	{ NIC "    runtime: 2 min\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime: '2 min': not a duration: use a number with a unit "
	  "(ns, us, ms, s), e.g. 2ms" },
	{ NIC "    runtime: 2000000\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime: '2000000': a number needs a unit (ns, us, ms, s), "
	  "e.g. 2ms; only 0 may go without" },
	{ NIC "    runtime: 2ms\n    period: 10ms\n    deadline: 20ms\n",
	  "bad.yaml:7:15: target 'nic': deadline 20ms exceeds the period 10ms (runtime <= deadline "
	  "<= period)" },
	{ NIC "    runtime: 1.5ns\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime: '1.5ns': not a whole number of nanoseconds" },
	{ NIC "    runtime: 2ms\n    period: 10000000000s\n",
	  "bad.yaml:6:13: target 'nic': period: '10000000000s': too large (2^63 ns or more)" },
	{ NIC "    runtime: [2ms]\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime: expected a duration such as 2ms, got a list" },
	{ NIC "    runtime: 1000ns\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime 1us is below the kernel's minimum of 1024ns" },
	{ NIC "    runtime: 20ms\n    period: 10ms\n",
	  "bad.yaml:5:14: target 'nic': runtime 20ms exceeds the period 10ms (runtime <= deadline "
	  "<= period)" },
	{ NIC QT "    deadline: 1ms\n",
	  "bad.yaml:5:14: target 'nic': runtime 2ms exceeds the deadline 1ms (runtime <= deadline "
	  "<= period)" },
	{ NIC QT "    min_interarrival: 0\n",
	  "bad.yaml:7:23: target 'nic': min_interarrival: must be more than 0" },
	{ NIC QT "    buffer: 0\n", "bad.yaml:7:13: target 'nic': buffer: 0 is too small (at least 1)" },
	{ NIC QT "    buffer: 4294967296\n",
	  "bad.yaml:7:13: target 'nic': buffer: 4294967296 is too large (at most 4294967295)" },
	{ NIC QT "    min_interarrival: 100us\n    buffer: 64\n",
	  "bad.yaml:8:13: target 'nic': buffering check fails: (period - runtime) / min_interarrival "
	  "= 80 interrupts may wait, the device holds only buffer = 64; raise runtime to more than "
	  "3.6ms or shorten the period" },
	/* mode and adaptive */
	{ NIC QT "    mode: fast\n",
	  "bad.yaml:7:11: target 'nic': mode: 'fast' is not a mode: use static or adaptive" },
	{ NIC QT "    adaptive:\n      gain: 0.5\n",
	  "bad.yaml:7:5: target 'nic': adaptive settings need mode: adaptive" },
	{ NIC QT "    mode: adaptive\n    adaptive: 1\n",
	  "bad.yaml:8:15: target 'nic': adaptive: expected a mapping, got a scalar" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      gain: 0\n",
	  "bad.yaml:9:13: target 'nic': adaptive.gain: 0 is out of range: 0 < gain <= 1" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      gain: 1.5\n",
	  "bad.yaml:9:13: target 'nic': adaptive.gain: 1.5 is out of range: 0 < gain <= 1" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      gain: nan\n",
	  "bad.yaml:9:13: target 'nic': adaptive.gain: expected a number, got 'nan'" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      gain: '0.5'\n",
	  "bad.yaml:9:13: target 'nic': adaptive.gain: expected a number, got a string" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      window: 0\n",
	  "bad.yaml:9:15: target 'nic': adaptive.window: 0 is too small (at least 1)" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      window: 100001\n",
	  "bad.yaml:9:15: target 'nic': adaptive.window: 100001 is too large (at most 100000)" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      sample: 10ns\n",
	  "bad.yaml:9:15: target 'nic': adaptive.sample: must be at least 1us" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      default_job: 0us\n",
	  "bad.yaml:9:20: target 'nic': adaptive.default_job: must be more than 0" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      min_runtime: 10ns\n",
	  "bad.yaml:9:20: target 'nic': adaptive.min_runtime: 10ns is below the kernel's minimum "
	  "runtime of 1024ns" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      max_runtime: 1000ns\n",
	  "bad.yaml:9:20: target 'nic': adaptive.max_runtime: 1000ns is below the kernel's minimum "
	  "runtime of 1024ns" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      max_runtime: 11ms\n",
	  "bad.yaml:9:20: target 'nic': adaptive.max_runtime 11ms exceeds the deadline 10ms" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      min_runtime: 3ms\n      max_runtime: 2ms\n",
	  "bad.yaml:9:20: target 'nic': adaptive.min_runtime 3ms is above adaptive.max_runtime 2ms" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      min_runtime: 11ms\n",
	  "bad.yaml:9:20: target 'nic': adaptive.min_runtime 11ms is above adaptive.max_runtime 10ms" },
	{ NIC "    runtime: 6ms\n    period: 10ms\n    min_interarrival: 50us\n    buffer: 100\n"
	  "    mode: adaptive\n    adaptive:\n      max_runtime: 5ms\n",
	  "bad.yaml:11:20: target 'nic': adaptive.max_runtime 5ms is below the buffering bound: "
	  "the budget must stay above period - buffer * min_interarrival, at least 5.000001ms" },
	{ NIC "    runtime: 6ms\n    period: 10ms\n    min_interarrival: 50us\n    buffer: 100\n"
	  "    mode: adaptive\n    adaptive:\n      min_runtime: 7ms\n      max_runtime: 6ms\n",
	  "bad.yaml:11:20: target 'nic': adaptive.min_runtime 7ms is above adaptive.max_runtime 6ms" },
	{ NIC QT "    mode: adaptive\n    adaptive:\n      gains: 1\n",
	  "bad.yaml:9:7: target 'nic': adaptive: unknown key 'gains' (known keys: sample, gain, window, "
	  "default_job, min_runtime, max_runtime, hysteresis)" },
	/* YAML syntax */
	{ "version: 1\ntargets:\n  - name: nic\n    irq: [11\n",
	  "bad.yaml:5:1: YAML syntax error: did not find expected ',' or ']' while parsing a flow "
	  "sequence (line 4, column 10)" },
	{ "version: 1\n  targets: x\n",
	  "bad.yaml:2:10: YAML syntax error: mapping values are not allowed in this context" },
	{ "version: 1\ntargets: *a\n",
	  "bad.yaml:2:10: YAML syntax error: found undefined alias" },
	{ "version: 1\ntargets:\n\t- name: x\n",
	  "bad.yaml:3:1: YAML syntax error: found character that cannot start any token while "
	  "scanning for the next token (line 3, column 1)" },
};

/* A napi target, and threaded_napi on it and on an interface target. */
static void test_profile_napi(void **state)
{
	static const char text[] =
		"version: 1\ntargets:\n"
		"  - name: nic\n    interface: eth0\n    threaded_napi: true\n"
		"    runtime: 1ms\n    period: 10ms\n"
		"  - name: poll\n    napi: eth1\n    threaded_napi: true\n"
		"    runtime: 2ms\n    period: 10ms\n    buffer: 256\n"
		"  - name: poll0\n    napi: eth0\n    runtime: 2ms\n    period: 10ms\n"
		/* the defaults written out are no error on any kind of target */
		"  - name: poll1\n    napi: eth2\n    with_napi: false\n    runtime: 2ms\n"
		"    period: 10ms\n"
		"  - name: t\n    task:\n      comm: mpv\n    threaded_napi: false\n"
		"    with_napi: false\n    runtime: 2ms\n    period: 10ms\n";
	struct profile p;
	char err[512];

	assert_int_equal(profile_parse(text, sizeof(text) - 1, "napi.yaml", &p, err,
				       sizeof(err)), 0);
	assert_int_equal(p.targets[0].kind, TARGET_IRQ);
	assert_true(p.targets[0].threaded_napi);
	assert_int_equal(p.targets[0].threaded_napi_line, 5);
	assert_int_equal(p.targets[1].kind, TARGET_NAPI);
	assert_string_equal(p.targets[1].napi, "eth1");
	assert_int_equal(p.targets[1].napi_line, 9);
	assert_null(p.targets[1].interface);
	assert_true(p.targets[1].threaded_napi);
	assert_int_equal(p.targets[1].buffer, 256);
	assert_int_equal(p.targets[2].kind, TARGET_NAPI);
	assert_false(p.targets[2].threaded_napi);	/* default: the interface as it is */
	assert_int_equal(p.targets[3].kind, TARGET_NAPI);
	assert_false(p.targets[3].with_napi);
	assert_int_equal(p.targets[4].kind, TARGET_TASK);
	assert_false(p.targets[4].threaded_napi || p.targets[4].with_napi);
	profile_free(&p);
}

static void test_profile_bad(void **state)
{
	size_t i, failed = 0;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct profile p;
		char err[512];
		int rc = profile_parse(bc->text, strlen(bc->text), "bad.yaml", &p, err, sizeof(err));

		if (rc != -EINVAL || strcmp(err, bc->message)) {
			print_error("case %zu: rc %d\n  text:\n%s\n  got:  %s\n  want: %s\n", i, rc,
				    bc->text, err, bc->message);
			failed++;
		}
		assert_null(p.targets);
		assert_null(p.path);
		assert_int_equal(p.n_targets, 0);
	}
	assert_int_equal(failed, 0);
}

static void expect_load_error(const char *path, int want_rc, const char *want)
{
	struct profile p;
	char err[512];

	assert_int_equal(profile_load(path, &p, err, sizeof(err)), want_rc);
	assert_string_equal(err, want);
	assert_null(p.targets);
}

static void test_profile_bad_files(void **state)
{
	expect_load_error("fixtures/profile/bad-deadline.yaml", -EINVAL,
			  "fixtures/profile/bad-deadline.yaml:7:15: target 'nic': deadline 12ms "
			  "exceeds the period 10ms (runtime <= deadline <= period)");
	expect_load_error("fixtures/profile/bad-syntax.yaml", -EINVAL,
			  "fixtures/profile/bad-syntax.yaml:5:12: YAML syntax error: did not find "
			  "expected ',' or ']' while parsing a flow sequence (line 4, column 10)");
	expect_load_error("fixtures/profile/bad-utf8.yaml", -EINVAL,
			  "fixtures/profile/bad-utf8.yaml:3:15: YAML error: invalid leading UTF-8 "
			  "octet");
	expect_load_error("fixtures/profile/missing.yaml", -ENOENT,
			  "fixtures/profile/missing.yaml: cannot open: No such file or directory");
	expect_load_error("fixtures/profile", -EINVAL,
			  "fixtures/profile: not a regular file (a directory): a profile must be one");
	expect_load_error("/dev/null", -EINVAL,
			  "/dev/null: not a regular file (a character device): a profile must be one");
}

static void on_alarm(int sig)
{
	(void)sig;
	fail_msg("stalled: the loader blocked or took more than its alarm");
}

/* A guard on the CPU time this process uses from now (0 disarms it): the machine's load
 * and valgrind stretch wall time, not the work a quadratic check does. */
static void cpu_alarm(int seconds)
{
	struct itimerval it = { .it_value = { .tv_sec = seconds } };

	signal(SIGVTALRM, on_alarm);
	assert_int_equal(setitimer(ITIMER_VIRTUAL, &it, NULL), 0);
}

/* A FIFO with no writer is refused at once; opening it for reading would block forever. */
static void test_profile_fifo_refused(void **state)
{
	char dir[] = "/tmp/test_profile.XXXXXX", path[64], want[160];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo.yaml", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(10);
	snprintf(want, sizeof(want), "%s: not a regular file (a FIFO): a profile must be one",
		 path);
	expect_load_error(path, -EINVAL, want);
	alarm(0);
	unlink(path);
	rmdir(dir);
}

/*
 * 32,000 keys in one mapping, near the event bound: the duplicate check is O(n log n).
 * The pairwise check took 22 s of CPU on 60,000 keys; the sorted one 0.1 s. The
 * CPU-time guard is generous enough for valgrind; it catches a quadratic check, it is
 * not a speed target (bench/ holds those).
 */
static void test_profile_many_keys(void **state)
{
	size_t cap = 2 << 20, len = 0, i;
	char *buf = malloc(cap), err[512];
	struct profile p;

	assert_non_null(buf);
	cpu_alarm(30);
	len += (size_t)snprintf(buf + len, cap - len, "version: 1\n");
	for (i = 0; i < 32000; i++)
		len += (size_t)snprintf(buf + len, cap - len, "k%zu: 1\n", i);
	len += (size_t)snprintf(buf + len, cap - len, "k17: 2\n");
	assert_int_equal(profile_parse(buf, len, "big.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "big.yaml:32002:1: profile: duplicate key 'k17' (first given "
			    "at line 19)");
	cpu_alarm(0);
	free(buf);
}

/* A profile of n flow sequences nested in each other at "targets". */
static size_t nested(char *buf, size_t cap, size_t n, char open, char close)
{
	size_t len = (size_t)snprintf(buf, cap, "version: 1\ntargets: ");

	assert_true(len + 2 * n + 2 < cap);
	memset(buf + len, open, n);
	memset(buf + len + n, close, n);
	len += 2 * n;
	buf[len++] = '\n';
	buf[len] = '\0';
	return len;
}

/*
 * The work one profile can cause is bounded before it is done. 1 MiB of "[[[...]]]" kept
 * libyaml's parser (quadratic in the flow depth) busy for minutes; it is refused at the
 * 33rd level, within the CPU-time guard. At the limit, the parser reads the document.
 * The guard is 20 s of CPU: under valgrind this test ran close to 2 s, and on a host at
 * load 9 past a 2 s guard in one of two runs; minutes of parsing stay far beyond it.
 */
static void test_profile_bounds(void **state)
{
	size_t cap = (1 << 20) + 64, len, i;
	char *buf = malloc(cap), err[512], want[160];
	struct profile p;

	assert_non_null(buf);
	cpu_alarm(20);
	len = nested(buf, cap, 500000, '[', ']');
	assert_int_equal(profile_parse(buf, len, "deep.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "deep.yaml:2:41: collections nested more than 32 deep: "
			    "refused before reading further");
	len = nested(buf, cap, 500000, '{', '}');
	assert_int_equal(profile_parse(buf, len, "deep.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "collections nested more than 32 deep"));
	/* at the limit (the root mapping is the first level): a well-formed document */
	len = nested(buf, cap, YAMLMAP_DEPTH_MAX - 1, '[', ']');
	assert_int_equal(profile_parse(buf, len, "deep.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "deep.yaml:2:11: targets[0]: expected a mapping (name, runtime, "
			    "period, ...), got a list");
	/* 70,000 scalars in a flat list */
	len = (size_t)snprintf(buf, cap, "version: 1\ntargets: [");
	for (i = 0; i < 70000; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s1", i ? "," : "");
	len += (size_t)snprintf(buf + len, cap - len, "]\n");
	assert_int_equal(profile_parse(buf, len, "many.yaml", &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "more than %d YAML nodes and collection ends: refused "
		 "before reading further", YAMLMAP_EVENTS_MAX);
	assert_non_null(strstr(err, want));
	assert_memory_equal(err, "many.yaml:2:", 12);
	/* 257 targets */
	len = (size_t)snprintf(buf, cap, "version: 1\ntargets:\n");
	for (i = 0; i <= PROFILE_TARGETS_MAX; i++)
		len += (size_t)snprintf(buf + len, cap - len, "- {name: t%zu, irq: 1, runtime: 1ms, "
					"period: 10ms}\n", i);
	assert_int_equal(profile_parse(buf, len, "t.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.yaml:3:1: targets: 257 targets, at most 256 in one profile");
	/* 20,000 IRQs in one list; 1,025 over two targets */
	len = (size_t)snprintf(buf, cap, "version: 1\ntargets:\n- name: nic\n  runtime: 1ms\n"
			       "  period: 10ms\n  irq: [");
	for (i = 0; i < 20000; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%zu", i ? "," : "", i);
	len += (size_t)snprintf(buf + len, cap - len, "]\n");
	assert_int_equal(profile_parse(buf, len, "irq.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "irq.yaml:3:3: target 'nic': irq, pid, comm, port and cpu entries: "
			    "20000 in the profile up to here, at most 1024 in one profile");
	len = (size_t)snprintf(buf, cap, "version: 1\ntargets:\n- name: a\n  runtime: 1ms\n"
			       "  period: 10ms\n  irq: [");
	for (i = 0; i < 1000; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%zu", i ? "," : "", i);
	len += (size_t)snprintf(buf + len, cap - len, "]\n- {name: b, runtime: 1ms, period: "
				"10ms, task: {pid: [");
	for (i = 0; i < 25; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%zu", i ? "," : "", i + 2);
	len += (size_t)snprintf(buf + len, cap - len, "]}}\n");
	assert_int_equal(profile_parse(buf, len, "irq.yaml", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "irq.yaml:7:3: target 'b': irq, pid, comm, port and cpu entries: "
			    "1025 in the profile up to here, at most 1024 in one profile");
	/* 1,024 are fine: drop the last pid (",26") */
	memcpy(buf + len - 7, "]}}\n", 5);
	len -= 3;
	assert_int_equal(profile_parse(buf, len, "irq.yaml", &p, err, sizeof(err)), 0);
	profile_free(&p);
	cpu_alarm(0);
	free(buf);
}

/* Every file in profiles/ is a valid profile. */
static void test_profile_shipped(void **state)
{
	DIR *d = opendir("../../profiles");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512], err[512];
		size_t len = strlen(de->d_name);
		struct profile p;

		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "../../profiles/%s", de->d_name);
		if (profile_load(path, &p, err, sizeof(err)))
			fail_msg("%s", err);
		assert_true(p.n_targets > 0);
		profile_free(&p);
		n++;
	}
	closedir(d);
	assert_true(n >= 4);
}

/* Aliases are resolved; flow style and quoted durations are fine. */
static void test_profile_yaml_forms(void **state)
{
	static const char text[] =
		"version: 1\n"
		"targets:\n"
		"  - {name: a, irq: 11, runtime: &q \"2ms\", period: &t 10ms}\n"
		"  - {name: b, action: 'virtio*', secondary: no, runtime: *q, period: *t}\n";
	struct profile p;
	char err[512];

	assert_int_equal(profile_parse(text, strlen(text), "f.yaml", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_targets, 2);
	assert_int_equal(p.targets[1].runtime_ns, 2000000);
	assert_int_equal(p.targets[1].period_ns, 10000000);
	assert_false(p.targets[1].secondary);
	assert_string_equal(p.targets[1].action_glob, "virtio*");
	profile_free(&p);
}

/* The message of a refused profile: "name:line:col: text" with 1-based numbers. */
static void assert_error_form(const char *err)
{
	unsigned long line = 0, col = 0;
	int n = 0;

	if (sscanf(err, "m.yaml:%lu:%lu: %n", &line, &col, &n) != 2 || !n || line < 1 ||
	    col < 1 || !err[n])
		fail_msg("not a file:line:col message: '%s'", err);
}

/*
 * Every truncation of a full profile, and every byte of it replaced by characters that
 * mean something to YAML, parses or gives a file:line:col error: never a crash or a
 * leak (the suite also runs under ASan).
 */
static void test_profile_mutations(void **state)
{
	static const char subst[] = { ' ', ':', '-', '[', '{', '"', '\'', '\n', '\t', '&', '*',
				      '!', '|', '#', '%', '\xff' };
	struct profile base, p;
	char text[4096], err[512];
	size_t len, i, k, ok = 0, bad = 0;
	FILE *f = fopen("fixtures/profile/full.yaml", "r");

	assert_non_null(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	assert_int_equal(profile_parse(text, len, "m.yaml", &base, err, sizeof(err)), 0);
	profile_free(&base);
	for (i = 0; i < len; i++) {
		for (k = 0; k <= sizeof(subst); k++) {
			char saved = text[i];
			size_t n = len;
			int rc;

			if (k == sizeof(subst))
				n = i;			/* truncated */
			else
				text[i] = subst[k];	/* one byte replaced */
			rc = profile_parse(text, n, "m.yaml", &p, err, sizeof(err));
			text[i] = saved;
			if (rc == 0) {
				assert_true(p.n_targets >= 1);
				profile_free(&p);
				ok++;
				continue;
			}
			assert_int_equal(rc, -EINVAL);
			assert_null(p.targets);
			assert_error_form(err);
			bad++;
		}
	}
	assert_true(ok > 0 && bad > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_full_file),
		cmocka_unit_test(test_profile_defaults),
		cmocka_unit_test(test_profile_serves),
		cmocka_unit_test(test_profile_buffering),
		cmocka_unit_test(test_profile_napi),
		cmocka_unit_test(test_profile_bad),
		cmocka_unit_test(test_profile_bad_files),
		cmocka_unit_test(test_profile_fifo_refused),
		cmocka_unit_test(test_profile_bounds),
		cmocka_unit_test(test_profile_many_keys),
		cmocka_unit_test(test_profile_shipped),
		cmocka_unit_test(test_profile_yaml_forms),
		cmocka_unit_test(test_profile_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
