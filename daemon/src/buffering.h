/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buffering.h - the buffering bound of an IRQ thread's reservation, the one place it is
 * written in C.
 *
 * A thread that gets Q every T can be kept off the CPU for T - Q at a time; interrupts
 * at least P apart then pile up to (T - Q)/P of them, and the device must hold them:
 * (T - Q)/P < N_c.  In integer ns that is T - Q < N_c·P, hence Q ≥ T - N_c·P + 1.  Exact
 * in 128 bits.  The cases in tests/data/rules/buffering.tsv pin it to
 * irqres.model.buffering (Python).
 */
#ifndef IRQRES_BUFFERING_H
#define IRQRES_BUFFERING_H

#include <stdbool.h>
#include <stdint.h>

/* Whether Q = @runtime_ns every T = @period_ns keeps (T - Q)/P < N_c. */
bool buffering_ok(uint64_t runtime_ns, uint64_t period_ns, uint64_t min_interarrival_ns,
		  uint64_t buffer);

/* The smallest Q that passes with T = @period_ns; 0 when any Q does. */
uint64_t buffering_min_runtime(uint64_t period_ns, uint64_t min_interarrival_ns,
			       uint64_t buffer);

#endif
