/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rt_runtime.h - /proc/sys/kernel/sched_rt_runtime_us (under irqres_paths.proc): -1
 * turns the kernel's admission control of SCHED_DEADLINE (and RT throttling) off, which
 * a profile's `admission_control: disable` asks for.  apply.c turns it off and records
 * the value of before in the state; the undo of a failed apply and apply_restore_all()
 * put it back.
 * Functions return 0 or -errno.
 */
#ifndef IRQRES_RT_RUNTIME_H
#define IRQRES_RT_RUNTIME_H

#include "state.h"

/* The value now, in microseconds (-1: admission control off). */
int rt_runtime_read(long long *us);
/* Writes @us (the plan's cached limits are dropped: they depend on it). */
int rt_runtime_write(long long us);
/* Puts @us back and forgets the state's record of it (logged either way). */
int rt_runtime_restore(struct state *st, long long us);

#endif /* IRQRES_RT_RUNTIME_H */
