/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * acct.h - live accounting of device-thread time per served process
 * (docs/process-aware.md, "Accounting").
 *
 * For the threads of the targets with serves:, irqresd keeps its own tracefs instance
 * (instances/irqresd-<its pid>) with sched_switch and sched_waking, filtered in the
 * kernel on those threads' pids, and reads it on every tick and before every stats
 * reply. The rule is the offline one (irqres analyze, measure/accounting.py): an
 * activation (from the switch-in after a sleep to the switch-out into S or I) is charged
 * its execution time, split evenly among the distinct processes the thread woke in it in
 * its own context (sched_waking with common_pid = the thread, not in hard IRQ or NMI
 * context; soft IRQ context only on PREEMPT_RT), the remainder to the lowest pid; an
 * activation that woke nobody goes to "(none)" (pid -1). Activations that a lost-events
 * gap overlaps, or whose switch-in is missing from the trace, are dropped (counted). Totals are cumulative since the profile came in force.
 *
 * Accounting is optional: when the instance cannot be made, that is logged once and the
 * rest of irqresd goes on without it. Functions return 0 or -errno.
 */
#ifndef IRQRES_ACCT_H
#define IRQRES_ACCT_H

#include "json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ACCT_NOBODY (-1)	/* the pid activations that woke nobody are charged to */

/* A device thread to account, and the index of its target in the profile. */
struct acct_thread {
	pid_t pid;
	size_t target;
};

/* The totals of one (target, served process). */
struct acct_total {
	size_t target;
	pid_t pid;			/* ACCT_NOBODY: activations that woke nobody */
	char comm[16];
	uint64_t time_ns;		/* its share of the activations' execution time */
	uint64_t activations;		/* activations that woke it */
	uint64_t wakeups;		/* wake-ups of it by the target's threads */
};

/*
 * The tracefs mount to use (NULL: the library finds it); set before the first
 * acct_update(). A directory that is not a tracefs makes accounting fail, logged once.
 */
void acct_set_tracing_dir(const char *dir);

/*
 * The device threads to account now (all of them: a thread left out is no longer
 * followed). Creates the instance at the first call with n > 0 (removing the stale
 * instances of irqresd processes that are gone first) and rewrites the kernel filters
 * when the set changed. Reads what is pending before it changes anything.
 */
int acct_update(const struct acct_thread *v, size_t n);

/* Reads and accounts what the instance holds (nothing when accounting is off). */
void acct_drain(void);

/* Whether the instance is there; the error that stopped accounting ("" when none). */
bool acct_running(void);
const char *acct_error(void);

/* The totals so far, *n of them (owned by the module, valid until the next call). */
const struct acct_total *acct_totals(size_t *n);

/* Events the kernel dropped (the instance's buffer overflowed) since the start. */
uint64_t acct_lost_events(void);
/* Activations not charged: a lost-events gap touched them, or one of their switches was
 * not traced (a switch-out with no switch-in before it). */
uint64_t acct_dropped(void);

/* The "accounting" member of the stats reply (docs/json.md ACCOUNTING); @names gives a
 * target's name by index. */
void acct_json(struct json *j, const char *const *names, size_t n_names);

/* Removes the instance and forgets every total (the profile went out of force, or exit). */
void acct_stop(void);

/*
 * Removes instances/irqresd-<pid> of every irqresd pid that no longer runs under the
 * tracing dir (the instance of one that was killed). Returns how many, or -errno.
 */
int acct_clean_stale(void);

#endif /* IRQRES_ACCT_H */
