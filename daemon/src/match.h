/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * match.h - resolves a profile's targets to threads.
 *
 * IRQ selectors (interface, irq, action, driver) combine with AND; the IRQ set of an
 * interface is the numbers in /sys/class/net/IF/device/msi_irqs/ (multi-queue NICs), else
 * /sys/class/net/IF/device/irq, plus every /proc/interrupts line whose action names the
 * interface (IF, IF-..., IF@...).  A driver is the basename of the IRQ's device's driver
 * link: the device of an IRQ is found through /sys/bus/pci/devices/DEV/msi_irqs/N,
 * /sys/bus/pci/devices/DEV/irq and /sys/class/net/IF/device (NICs).  `secondary: false`
 * drops irq/N-s-* threads.  On a shared legacy IRQ, `interface` takes only the threads
 * whose action names the interface, while `driver` takes every thread of the IRQ.  Task
 * selectors (comm glob, pids, cgroup prefix) combine with AND too and never match kernel
 * threads; a pid selects that thread or, for a process id, all the process's threads;
 * the cgroup prefix matches whole path components.
 */
#ifndef IRQRES_MATCH_H
#define IRQRES_MATCH_H

#include "irqres.h"

struct match_unmatched {
	size_t *v;		/* indexes of targets that matched no thread */
	size_t n, cap;
};

/*
 * Resolves every target of @prof against @irq_threads (from discover_scan_irq, with the
 * soft IRQ kthreads when match_needs_softirqd()) and
 * @task_threads (from discover_scan_tasks; may be NULL when match_needs_tasks() is false)
 * and appends one struct match per selected thread to @matches, in target order.
 * Targets that match nothing are listed in @unmatched (may be NULL); the caller decides
 * warning or error (docs/profile.md).  A thread selected by two targets is an error
 * naming the thread and both targets.  Returns 0, -EINVAL (message in @err) or -ENOMEM.
 * On error @matches and @unmatched are left as they were.
 */
int match_profile(const struct profile *prof, const struct thread_list *irq_threads,
		  const struct thread_list *task_threads, struct match_list *matches,
		  struct match_unmatched *unmatched, char *err, size_t errlen);

/*
 * The task selector rule, one home for task targets and serves: (couple.h): @ti is a user
 * thread (never a kernel thread, init or irqresd) whose comm matches one of @comm, whose
 * thread or process id is one of @pids, and whose cgroup v2 path starts with the whole
 * path components of @cgroup; NULL / 0 selectors are not checked.
 */
bool match_task_selects(const struct globs *comm, const pid_t *pids, size_t n_pids,
			const char *cgroup, const struct thread_info *ti);

/*
 * The threads target @target of @prof selects among @irq_threads / @task_threads (the
 * kind's list), whatever its mode (a coupled target's too): appended to @out.
 * Returns 0 or -errno.
 */
int match_target_threads(const struct profile *prof, size_t target,
			 const struct thread_list *irq_threads,
			 const struct thread_list *task_threads, struct match_list *out);

/* true when some target of @prof selects per-CPU soft IRQ kthreads (discover_scan_irq()
 * must list them). */
bool match_needs_softirqd(const struct profile *prof);

/* true when some target of @prof is a task target (discover_scan_tasks() is needed). */
bool match_needs_tasks(const struct profile *prof);

/*
 * Whether the single thread @ti (from discover_read, e.g. a hotplugged one) is selected by
 * target @target of @prof.  Returns 1 yes, 0 no, or -errno.
 */
int match_thread(const struct profile *prof, size_t target, const struct thread_info *ti);

/*
 * The target of @prof that selects @ti: its index (>= 0), -ENOENT when none does,
 * -EEXIST when two do (message in @err naming both), or another -errno.
 */
int match_find_target(const struct profile *prof, const struct thread_info *ti,
		      char *err, size_t errlen);

/* Appends "'name' (file:line:col)" of each unmatched target, comma separated, to @buf. */
void match_describe_unmatched(const struct profile *prof, const struct match_unmatched *u,
			      char *buf, size_t len);

/* A selector naming what this machine does not have. */
struct match_problem {
	int line;		/* of the selector's key in the profile */
	char text[320];		/* "interface 'eth9' does not exist (no /sys/class/net/eth9)" */
};

/*
 * The IRQ selectors of @t that name an interface, IRQ or driver this machine does not
 * have (or an interface without IRQs): up to @max into @out.  Returns how many, or -errno.
 * An interface polling in soft IRQs is no problem for a NAPI selector when a target of
 * @prof (@t's profile; NULL: @t alone) switches it to threaded NAPI.
 */
int match_selector_problems(const struct profile *prof, const struct target *t,
			    struct match_problem *out, size_t max);

void match_list_free(struct match_list *matches);
void match_unmatched_free(struct match_unmatched *u);

#endif
