/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracering.h - reads a tracefs instance's per-CPU ring buffers (trace_pipe_raw) through
 * fds kept open, and hands every record over in time order across CPUs.
 *
 * The fds stay open from tracering_open() to tracering_close(): a trace_pipe_raw fd
 * keeps the rest of a sub-buffer it has taken from the ring buffer, so one that is
 * closed and opened again between reads (as tracefs_iterate_raw_events() does) can lose
 * records. Each read takes a whole sub-buffer, full or not. Functions return 0 or
 * -errno.
 */
#ifndef IRQRES_TRACERING_H
#define IRQRES_TRACERING_H

#include <event-parse.h>
#include <tracefs.h>

struct tracering;

/* The records' callback: rec->missed_events is set on the first record after a gap. */
typedef void (*tracering_fn)(struct tep_event *ev, struct tep_record *rec, void *ctx);

/* Opens per_cpu/cpuN/trace_pipe_raw of every CPU @inst has, non-blocking. */
int tracering_open(struct tracering **r, struct tracefs_instance *inst,
		   struct tep_handle *tep);

/*
 * Reads what every CPU holds now and calls @fn for each record older than @horizon (in
 * the instance's trace clock), oldest first. Records from @horizon on wait for the next
 * drain: a CPU read early may still get records older than those of a CPU read later,
 * so with @horizon taken before the reads, every record older than it is in hand and
 * they go in order across drains too.
 */
int tracering_drain(struct tracering *r, unsigned long long horizon, tracering_fn fn,
		    void *ctx);

void tracering_close(struct tracering *r);

#endif /* IRQRES_TRACERING_H */
