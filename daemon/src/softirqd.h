/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softirqd.h - the per-CPU kthreads that run soft IRQs, the one place their names are
 * written in C.
 *
 * On a PREEMPT_RT kernel soft IRQ work that its raiser leaves runs in per-CPU kthreads
 * bound to their CPU: ksoftirqd/N (every pending soft IRQ), ktimers/N (timer soft IRQs)
 * and backlog_napi/N (the backlog NAPI of RPS and loopback, 6.10+).  Each is named
 * "<name>/<cpu>" (the CPU in decimal, no leading zero) and is a child
 * of kthreadd; a user process may take such a name, so discover.c also asks for a kernel
 * thread.  The `softirq` target kind selects them (docs/profile.md).  The cases in
 * tests/data/rules/softirq-kthread.tsv pin the rule to irqres.targetkind (Python).
 */
#ifndef IRQRES_SOFTIRQD_H
#define IRQRES_SOFTIRQD_H

#include <stdbool.h>
#include <stddef.h>

enum softirqd_kind {
	SOFTIRQD_KSOFTIRQD,
	SOFTIRQD_KTIMERS,
	SOFTIRQD_BACKLOG_NAPI,
	SOFTIRQD_N
};

/* All kinds as a mask (a profile that names none takes all). */
#define SOFTIRQD_ALL ((1u << SOFTIRQD_N) - 1)

/* The name of @kind ("ksoftirqd", ...), NULL for no kind. */
const char *softirqd_name(enum softirqd_kind kind);

/* The kind named @name, or -1. */
int softirqd_lookup(const char *name);

/* Whether @comm is "<name>/<cpu>" of a kind: 0 with *@kind and *@cpu set, else -EINVAL. */
int softirqd_parse(const char *comm, enum softirqd_kind *kind, int *cpu);

/* Whether a new thread named @comm may become one (its name, or kthreadd's just after
 * the fork). */
bool softirqd_comm_may_be(const char *comm);

/* "ksoftirqd, ktimers, backlog_napi": the names of @mask's kinds, for messages. */
const char *softirqd_list(unsigned int mask, char *buf, size_t len);

#endif
