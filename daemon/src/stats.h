/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stats.h - run-time counters of managed threads, read under irqres_paths.proc:
 * /proc/PID/schedstat (cpu time, wait time, timeslices), the context switch counts of
 * /proc/PID/status (by taskstats when available) and the per-IRQ counts of
 * /proc/interrupts summed over CPUs.
 */
#ifndef IRQRES_STATS_H
#define IRQRES_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct thread_stats {
	uint64_t cpu_time_ns;		/* schedstat field 1 */
	uint64_t wait_time_ns;		/* schedstat field 2: time on a runqueue, waiting */
	uint64_t timeslices;		/* schedstat field 3 */
	uint64_t voluntary_switches;
	uint64_t involuntary_switches;
};

/* Per-IRQ interrupt counts, summed over CPUs; only numeric IRQ lines. */
struct irq_counts {
	int *irq;
	uint64_t *count;
	size_t n, cap;
};

/*
 * Reads /proc/<pid>/schedstat and the switch counts (taskstats, else /proc/<pid>/status)
 * through fds kept open between calls (pread at offset 0). -ESRCH when pid is gone (its
 * fds are then closed).
 */
int stats_thread_read(pid_t pid, struct thread_stats *st);
/* Closes the fds kept for pid; call when the thread is no longer managed. */
void stats_thread_forget(pid_t pid);
/* Whether the context switch counts come from taskstats (else /proc/PID/status). */
bool stats_switches_by_taskstats(void);
/* How many fds stats keeps open (tests). */
size_t stats_kept_fds(void);
/* Closes every kept fd and frees the buffers. */
void stats_fini(void);
/* Parses /proc/interrupts (kept fd, read whole). Returns 0 or -errno. */
int stats_irq_counts_read(struct irq_counts *ic);
/* The count of irq, 0 when it is not listed. */
uint64_t stats_irq_count(const struct irq_counts *ic, int irq);
void stats_irq_counts_free(struct irq_counts *ic);

#endif /* IRQRES_STATS_H */
