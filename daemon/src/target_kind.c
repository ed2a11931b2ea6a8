/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * target_kind.c - the table of operations of each kind of target.
 */
#include "target_kind.h"
#include "softirqd.h"

#include <stddef.h>
#include <string.h>

/* ---- IRQ threads ---- */

/* IRQ threads, and the NAPI kthreads of an interface target with with_napi. */
static bool irq_may_take(const struct thread_info *ti)
{
	return ti->is_irq || ti->is_napi;
}

/* An IRQ thread is named irq/..., a NAPI kthread napi/..., either still kthreadd's name
 * just after the fork. */
static bool irq_comm_may_match(const struct target *t, const char *comm)
{
	return strncmp(comm, "irq/", 4) == 0 || strcmp(comm, "kthreadd") == 0 ||
	       (t->with_napi && strncmp(comm, "napi/", 5) == 0);
}

static bool irq_changes_unseen(const struct target *t)
{
	return false;
}

static const struct target_kind_ops irq_ops = {
	.kind = TARGET_IRQ,
	.name = "irq",
	.threads = TARGET_THREADS_IRQ,
	.device = true,
	.may_take = irq_may_take,
	.comm_may_match = irq_comm_may_match,
	.changes_unseen = irq_changes_unseen,
};

/* ---- user threads ---- */

static bool task_may_take(const struct thread_info *ti)
{
	return !ti->kthread;
}

static bool task_comm_may_match(const struct target *t, const char *comm)
{
	return globs_match(&t->task_comm, comm);
}

static bool task_changes_unseen(const struct target *t)
{
	return t->task_cgroup != NULL;
}

static const struct target_kind_ops task_ops = {
	.kind = TARGET_TASK,
	.name = "task",
	.threads = TARGET_THREADS_TASKS,
	.device = false,
	.may_take = task_may_take,
	.comm_may_match = task_comm_may_match,
	.changes_unseen = task_changes_unseen,
};

/* ---- threaded NAPI kthreads ---- */

static bool napi_may_take(const struct thread_info *ti)
{
	return ti->is_napi;
}

/* A NAPI kthread is named napi/<if>-<id> (cut at 15 characters), kthreadd just after the
 * fork. */
static bool napi_comm_may_match(const struct target *t, const char *comm)
{
	return strncmp(comm, "napi/", 5) == 0 || strcmp(comm, "kthreadd") == 0;
}

/* Switching threaded NAPI off and on makes new kthreads: a process event each. */
static bool napi_changes_unseen(const struct target *t)
{
	return false;
}

static const struct target_kind_ops napi_ops = {
	.kind = TARGET_NAPI,
	.name = "napi",
	.threads = TARGET_THREADS_IRQ,	/* discover_scan_irq() lists them with IRQ threads */
	.device = true,			/* they poll the device's rings */
	.may_take = napi_may_take,
	.comm_may_match = napi_comm_may_match,
	.changes_unseen = napi_changes_unseen,
};

/* ---- per-CPU soft IRQ kthreads ---- */

static bool softirq_may_take(const struct thread_info *ti)
{
	return ti->is_softirqd;
}

/* ksoftirqd/N and the others are made when CPU N first comes up (kthreadd's name just
 * after the fork), parked and unparked when it goes offline and back. */
static bool softirq_comm_may_match(const struct target *t, const char *comm)
{
	return softirqd_comm_may_be(comm);
}

static bool softirq_changes_unseen(const struct target *t)
{
	return false;
}

static const struct target_kind_ops softirq_ops = {
	.kind = TARGET_SOFTIRQ,
	.name = "softirq",
	.threads = TARGET_THREADS_SOFTIRQD,
	.device = false,		/* they run every device's soft IRQs, and timers */
	.may_take = softirq_may_take,
	.comm_may_match = softirq_comm_may_match,
	.changes_unseen = softirq_changes_unseen,
};

const struct target_kind_ops *target_kind_ops(enum target_kind kind)
{
	switch (kind) {
	case TARGET_IRQ:
		return &irq_ops;
	case TARGET_TASK:
		return &task_ops;
	case TARGET_NAPI:
		return &napi_ops;
	case TARGET_SOFTIRQ:
		return &softirq_ops;
	}
	return NULL;
}

const struct target_kind_ops *target_kind_of(const struct target *t)
{
	return target_kind_ops(t->kind);
}
