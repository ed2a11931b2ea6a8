/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * target_kind.h - what differs between the kinds of target: one table of operations
 * per kind.
 *
 * A target selects IRQ threads (TARGET_IRQ: the kernel's irq/<N>-<action> threads, and
 * with with_napi its interface's NAPI kthreads),
 * user threads (TARGET_TASK), an interface's threaded NAPI kthreads (TARGET_NAPI:
 * napi/<if>-<id>, found by napi.h) or per-CPU soft IRQ kthreads (TARGET_SOFTIRQ:
 * ksoftirqd/N, ktimers/N, backlog_napi/N, softirqd.h).  Whatever depends on the kind is either a field or an
 * operation of the kind's struct target_kind_ops, or a `switch` over enum target_kind
 * without `default` (the Makefile makes -Wswitch an error).  A new kind therefore gets
 * one more table here, and the compiler names every switch that must handle it (the
 * lookup below; resolving, selecting and checking selectors in match.c).  The profile
 * parser (profile.c, check_kind) decides a target's kind from its selectors.
 */
#ifndef IRQRES_TARGET_KIND_H
#define IRQRES_TARGET_KIND_H

#include "irqres.h"

#include <stdbool.h>

/* Which of discover.h's thread lists holds a kind's threads. */
enum target_threads {
	TARGET_THREADS_IRQ,	/* discover_scan_irq(): IRQ and NAPI kthreads */
	TARGET_THREADS_SOFTIRQD,	/* the same list, scanned with the soft IRQ kthreads */
	TARGET_THREADS_TASKS,	/* discover_scan_tasks() */
};

struct target_kind_ops {
	enum target_kind kind;
	const char *name;		/* "irq", "task", "napi", "softirq": the status JSON's
				 * "kind" */
	enum target_threads threads;	/* where its threads are found */
	bool device;			/* min_interarrival and buffer apply: it serves a device */
	/* Whether @ti can be a thread of this kind at all: a cheap look, no sysfs reads. */
	bool (*may_take)(const struct thread_info *ti);
	/* Whether a new thread named @comm may be one @t selects: the first look at a
	 * process event, before the thread's /proc directory is read. */
	bool (*comm_may_match)(const struct target *t, const char *comm);
	/* Whether what @t selects can change without a process event (a thread moved
	 * between cgroups sends none), so that only a rescan finds it. */
	bool (*changes_unseen)(const struct target *t);
};

/* The table of @kind; NULL for a value that is no kind. */
const struct target_kind_ops *target_kind_ops(enum target_kind kind);

/* The table of @t's kind (a parsed target always has one). */
const struct target_kind_ops *target_kind_of(const struct target *t);

#endif
