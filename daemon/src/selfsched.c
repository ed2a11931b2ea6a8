/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * selfsched.c - irqresd steps out of its real-time policy for long kernel work; see
 * selfsched.h.
 */
#include "selfsched.h"
#include "log.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

int selfsched_fair(struct selfsched *s)
{
	struct dl_attr other = { .size = sizeof(other), .sched_policy = SCHED_OTHER };
	int rc;

	s->changed = false;
	rc = dl_get(0, &s->was);
	if (rc < 0)
		return rc;
	if (s->was.sched_policy != SCHED_FIFO && s->was.sched_policy != SCHED_RR)
		return 0;
	other.sched_flags = s->was.sched_flags & SCHED_FLAG_RESET_ON_FORK;
	rc = dl_set(0, &other);
	if (rc < 0)
		return rc;
	s->changed = true;
	return 0;
}

int selfsched_back(const struct selfsched *s)
{
	int rc;

	if (!s->changed)
		return 0;
	rc = dl_set(0, &s->was);
	if (rc < 0)
		pr_warn("irqresd: its own %s %u not restored after SCHED_OTHER work: %s",
			dl_policy_name((int)s->was.sched_policy), s->was.sched_priority,
			strerror(-rc));
	return rc;
}
