/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * selfsched.h - irqresd steps out of its real-time policy for long kernel work.
 *
 * irqresd runs at SCHED_FIFO under RLIMIT_RTTIME (systemd/irqresd.service): a burst of
 * CPU without a blocking call longer than the limit kills it with SIGXCPU. Some single
 * system calls are that long where the kernel does much work in them: making or removing
 * a tracefs instance before Linux 6.6 (no eventfs) makes or removes the files of every
 * trace event at once, over 2 s of CPU in a 6.1 guest under QEMU. Such a call is made at
 * SCHED_OTHER between selfsched_fair() and selfsched_back(): it counts against no
 * real-time limit and holds up no other thread at a real-time priority.
 */
#ifndef IRQRES_SELFSCHED_H
#define IRQRES_SELFSCHED_H

#include "dl.h"

#include <stdbool.h>

struct selfsched {
	struct dl_attr was;
	bool changed;		/* selfsched_fair() changed the policy: back puts it back */
};

/* The calling thread at SCHED_OTHER (nice 0, its reset-on-fork flag kept) when it is at
 * SCHED_FIFO or SCHED_RR; any other policy is left as it is. 0 or -errno (then nothing
 * was changed). */
int selfsched_fair(struct selfsched *s);
/* The policy selfsched_fair() found, back; 0 or -errno (logged, naming the cause). */
int selfsched_back(const struct selfsched *s);

#endif
