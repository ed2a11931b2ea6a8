/* SPDX-License-Identifier: GPL-2.0-only */
/* buffering.c - the buffering bound (T - Q)/P < N_c: see buffering.h. */
#include "buffering.h"

bool buffering_ok(uint64_t runtime_ns, uint64_t period_ns, uint64_t min_interarrival_ns,
		  uint64_t buffer)
{
	if (runtime_ns >= period_ns)
		return true;
	return (unsigned __int128)(period_ns - runtime_ns) <
	       (unsigned __int128)buffer * min_interarrival_ns;
}

uint64_t buffering_min_runtime(uint64_t period_ns, uint64_t min_interarrival_ns,
			       uint64_t buffer)
{
	unsigned __int128 held = (unsigned __int128)buffer * min_interarrival_ns;

	return held <= period_ns ? period_ns - (uint64_t)held + 1 : 0;
}
