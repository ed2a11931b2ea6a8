/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * couple.h - scheduling coupled to the processes a device's threads serve
 * (docs/process-aware.md).
 *
 * A coupled target (`serves:` without runtime and period) reserves nothing: on every tick
 * (the daemon's rescan) its threads take SCHED_FIFO at the priority serves_fifo_priority()
 * gives for the processes they serve now, and go back to the scheduling they had before
 * irqres (their state record) when they serve nobody. Each thread's original scheduling
 * is recorded in the state file before its first change, so a stop, a restore or a crash
 * followed by --restore gives it back. A thread that a reservation target holds, or that
 * someone else made SCHED_DEADLINE, is left alone. For every target with `serves:` (a
 * reserved one too) the processes served at the last tick are kept for status.
 */
#ifndef IRQRES_COUPLE_H
#define IRQRES_COUPLE_H

#include "irqres.h"
#include "json.h"
#include "serves.h"
#include "state.h"

#include <stdbool.h>
#include <stddef.h>

/* A thread of a coupled target, as the last tick left it. */
struct couple_thread {
	size_t target;
	struct thread_info thread;	/* policy and priority as it has them now */
	int set;			/* the SCHED_FIFO priority irqres gave it; 0: none */
};

struct couple_target {
	struct served_list served;	/* whom its threads serve (targets with serves:) */
	struct serves_cache ports;	/* who holds its ports' sockets (kept between ticks) */
	int priority;			/* the rule's priority at the last tick; 0: none */
};

struct couple {
	struct couple_target *t;	/* one per target of the profile */
	size_t n_t;
	struct couple_thread *v;
	size_t n, cap;
};

/* Whether @pid is a reserved thread (another target's): coupling leaves it alone. */
typedef bool (*couple_held_fn)(void *ctx, pid_t pid);

/* Whether some target of @prof has serves: (a tick has something to do). */
bool couple_needed(const struct profile *prof);

/*
 * One tick: finds whom each target with serves: serves and couples the threads of the
 * coupled targets (see above). @irq: the device threads as a scan with the profile's
 * softirqd need just listed them (discover_scan_irq), or NULL to list them here. A thread
 * whose change fails is logged and left as it was (its new record forgotten); the others
 * go on. Returns 0 or the -errno of the scan.
 */
int couple_tick(struct couple *c, const struct profile *prof, struct state *st,
		couple_held_fn held, void *ctx, const struct thread_list *irq);

/*
 * What verify sees, changing nothing: whom each target serves and the coupled targets'
 * threads (into @c, their set 0), one difference (appended to *@diffs, array.h) per
 * coupled thread that does not have the priority the rule gives now; *@checked counts
 * them. Returns 0 or -errno.
 */
int couple_check(struct couple *c, const struct profile *prof, size_t *checked,
		 char ***diffs, size_t *n, size_t *cap);

/* Gives every thread irqres coupled its own scheduling back (their records) and forgets
 * everything: before another profile comes in force. */
void couple_release(struct couple *c, struct state *st);

/* Forgets everything without touching a thread (a restore of the whole state did). */
void couple_forget(struct couple *c);

/* The threads target @target serves, as a JSON array of SERVED (docs/json.md). */
void couple_served_json(const struct couple *c, size_t target, struct json *j);

/* The status members of target @target: "serves" (null without serves:) and "coupling"
 * (null for a reserved target). */
void couple_status_json(const struct couple *c, const struct profile *prof, size_t target,
			struct json *j);

#endif /* IRQRES_COUPLE_H */
