/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * refused.h - the hotplugged threads whose reservation failed, so that each event or
 * rescan that sees them again does not try (and log) again. A refusal by admission control
 * (EBUSY) is the exception: the bandwidth may come free (a thread that exited keeps it
 * until its 0-lag time, another tool drops a reservation), so such a thread is due for
 * another try REFUSED_RETRY_FIRST_NS later, then at doubling intervals up to
 * REFUSED_RETRY_MAX_NS. A thread is its pid and start time (a reused pid is another one).
 */
#ifndef IRQRES_REFUSED_H
#define IRQRES_REFUSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REFUSED_MAX 256		/* the oldest is forgotten beyond */
#define REFUSED_RETRY_FIRST_NS 1000000000ULL
#define REFUSED_RETRY_MAX_NS (32 * REFUSED_RETRY_FIRST_NS)

struct refused {
	pid_t pid;
	unsigned long long starttime;
	int err;			/* -errno of the refusal */
	uint64_t retry_ns;		/* UINT64_MAX: never */
	uint64_t delay_ns;
};

struct refused_list {
	struct refused v[REFUSED_MAX];
	size_t n;
};

/* Whether the thread stays refused at @now (refused, and not due for another try). */
bool refused_blocks(const struct refused_list *l, pid_t pid, unsigned long long starttime,
		    uint64_t now);
/* Remembers refusal @rc of the thread at @now; returns whether it was refused before. */
bool refused_note(struct refused_list *l, pid_t pid, unsigned long long starttime, int rc,
		  uint64_t now);
void refused_forget(struct refused_list *l, pid_t pid, unsigned long long starttime);
/* The pids due for another try at @now, into @due (room for REFUSED_MAX); their count. */
size_t refused_due(const struct refused_list *l, uint64_t now, pid_t *due);
/* After a try at @now: forgets @pid unless the try refused it again (gone, reserved, or no
 * longer selected by the profile). */
void refused_settle(struct refused_list *l, pid_t pid, uint64_t now);

#endif /* IRQRES_REFUSED_H */
