/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * owner.h - whose a thread is: irqres's own, another irqresd's, or another tool's.
 *
 * The rule (docs/coexistence.md): a thread whose scheduling is what the kernel gives a
 * thread of its kind is nobody's. For an IRQ thread that is SCHED_FIFO 50 (49 for the
 * secondary thread irq/N-s-*), or SCHED_OTHER for the instant between its creation and
 * the kernel making it FIFO; for a task, anything but SCHED_DEADLINE (an application
 * may well make itself FIFO or RR: that is its own choice, which irqres records and
 * gives back). Any other scheduling was set by someone: another irqresd, whose state
 * file records the thread (found through every running irqresd's RUN_DIR/lock, which it
 * holds open: /proc/PID/fd), or another tool (stalld's SCHED_DEADLINE boost, chrt, tuna,
 * tuned's scheduler plugin). A thread that irqres's own state file (RUN_DIR/state)
 * records is irqres's own, unless another running irqresd records it too.
 */
#ifndef IRQRES_OWNER_H
#define IRQRES_OWNER_H

#include "irqres.h"

#include <stdbool.h>
#include <sys/types.h>

enum owner_kind {
	OWNER_NONE,		/* fresh, or irqres's own */
	OWNER_IRQRESD,		/* another running irqresd's state file records it */
	OWNER_TOOL,		/* scheduling set by someone no irqresd records */
};

struct owner {
	enum owner_kind kind;
	pid_t daemon_pid;		/* OWNER_IRQRESD: the other irqresd */
	char run_dir[256];		/* OWNER_IRQRESD: its run dir */
	char sched[96];			/* the thread's scheduling now, for people */
	char text[480];			/* for people: who holds it and how */
};

/* Whether ti's scheduling is what the kernel gives a new thread of its kind. */
bool owner_sched_fresh(const struct thread_info *ti);

/*
 * Who holds ti now (*o; kind OWNER_NONE: nobody else). With own, a thread irqres's own
 * state file records (same pid and starttime) is irqres's own when no other irqresd
 * records it; without, only other irqresds' files and the rule above count (the drift
 * check: irqres's own record is what was found changed). Returns 0 or -errno (-ENOMEM).
 */
int owner_find(const struct thread_info *ti, bool own, struct owner *o);

/*
 * Whether IRQ irq fires outside partition (an irqres.<cpus> partition its thread was put
 * in) now: someone (irqbalance, a write to /proc/irq/N/smp_affinity) moved it, and its
 * thread follows it there at its next interrupt. 1 with what saying so, 0 when not (or
 * when it cannot tell: another name, no affinity to read).
 */
int owner_irq_moved(int irq, const char *partition, char *what, size_t len);

#endif /* IRQRES_OWNER_H */
