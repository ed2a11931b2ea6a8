/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dl.h - scheduling attributes of one thread: sched_getattr/sched_setattr.
 *
 * glibc 2.36 has no wrapper and <linux/sched/types.h> clashes with <sched.h>, so the
 * kernel's struct sched_attr is declared here as struct dl_attr and the calls go through
 * syscall(SYS_sched_getattr/SYS_sched_setattr). Every function returns 0 or -errno.
 */
#ifndef IRQRES_DL_H
#define IRQRES_DL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER0, 48 bytes). */
struct dl_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;		/* ns, SCHED_DEADLINE only */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/* The kernel's fixed-point bandwidth: 1 CPU = 1 << DL_BW_SHIFT (kernel BW_SHIFT). */
#define DL_BW_SHIFT 20
#define DL_BW_UNIT (1ULL << DL_BW_SHIFT)

int dl_get(pid_t pid, struct dl_attr *attr);
int dl_set(pid_t pid, const struct dl_attr *attr);
/* SCHED_DEADLINE with runtime <= deadline <= period (ns); reset-on-fork is set. */
int dl_set_deadline(pid_t pid, uint64_t runtime_ns, uint64_t deadline_ns, uint64_t period_ns);

/* The kernel's to_ratio(): (runtime << 20) / period; 0 when period is 0. */
uint64_t dl_to_ratio(uint64_t period_ns, uint64_t runtime_ns);

/* The deadline for a new period: D keeps its ratio to T (D' = D·T'/T, at most T'); T'
 * itself when there was no deadline or no period. The one rule for set-budget and the
 * adaptive controller's requests. */
uint64_t dl_deadline_rescale(uint64_t deadline_ns, uint64_t period_ns, uint64_t new_period_ns);

/* "other", "fifo", "rr", "batch", "idle", "deadline"; "unknown" otherwise. */
const char *dl_policy_name(int policy);
/* A thread's scheduling for people: "deadline 2ms/10ms/10ms" (runtime/deadline/period),
 * "fifo 50", "other nice 0". Returns buf. */
char *dl_sched_text(int policy, int priority, int nice, uint64_t runtime_ns,
		    uint64_t deadline_ns, uint64_t period_ns, char *buf, size_t len);
/* The inverse of dl_policy_name(); -EINVAL for an unknown name. */
int dl_policy_from_name(const char *name);

#endif /* IRQRES_DL_H */
