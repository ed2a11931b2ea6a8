/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dlcheck.h - the kernel's rules for SCHED_DEADLINE parameters (__checkparam_dl() in
 * kernel/sched/deadline.c), checked before anything asks the kernel, so that a plan
 * refuses, with the rule and the limit named, what sched_setattr() would refuse with a
 * bare EINVAL:
 *
 *   runtime >= 1024 ns (the kernel drops the low 10 bits),
 *   runtime <= deadline <= period, deadline and period below 2^63 ns,
 *   sched_deadline_period_min_us <= period <= sched_deadline_period_max_us (µs, read
 *   from /proc/sys/kernel under irqres_paths.proc; the kernel's defaults, 100 µs and
 *   4194304 µs, where the files are missing).
 */
#ifndef IRQRES_DLCHECK_H
#define IRQRES_DLCHECK_H

#include <stddef.h>
#include <stdint.h>

#define DLCHECK_RUNTIME_MIN_NS 1024ULL
#define DLCHECK_PERIOD_MIN_US 100ULL		/* the kernel's defaults */
#define DLCHECK_PERIOD_MAX_US (1ULL << 22)

struct dlcheck_limits {
	uint64_t period_min_ns, period_max_ns;
};

/* Reads the period limits; a file that is missing or unreadable keeps its default. */
void dlcheck_limits_read(struct dlcheck_limits *l);
/* 0 when the kernel takes these parameters, else -EINVAL and the rule broken in @why. */
int dlcheck_params(const struct dlcheck_limits *l, uint64_t runtime_ns, uint64_t deadline_ns,
		   uint64_t period_ns, char *why, size_t len);

#endif /* IRQRES_DLCHECK_H */
