/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Merging the columns of the units of a parallel read into one reader: rows in the
 * order libtracecmd's own iteration gives, (timestamp, cpu), and the per-unit name
 * tables in the order each (key, name) pair first appears in that merged stream. The
 * result is the sequential reader's, byte for byte.
 */
#ifndef IRQRES_TRACE_MERGE_H
#define IRQRES_TRACE_MERGE_H

#include "decode.h"

/* Workers; units of work (runs to merge, indexed by a uint8_t). */
enum { MAX_WORKERS = 16, MAX_UNITS = 128 };

/*
 * Merge the rows of the @k units @w into @r, which holds none yet, with @nthreads
 * threads. 0 or -ENOMEM. Touches no Python object: may run without the GIL.
 */
int merge_units(struct reader *r, struct reader *w, int k, int nthreads);

#endif
