/* SPDX-License-Identifier: GPL-2.0-only */
/* refused.c - hotplugged threads whose reservation failed; see refused.h. */
#include "refused.h"

#include <errno.h>
#include <string.h>

static struct refused *find(const struct refused_list *l, pid_t pid,
			    unsigned long long starttime)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].starttime == starttime)
			return (struct refused *)&l->v[i];
	return NULL;
}

bool refused_blocks(const struct refused_list *l, pid_t pid, unsigned long long starttime,
		    uint64_t now)
{
	const struct refused *r = find(l, pid, starttime);

	return r && now < r->retry_ns;
}

bool refused_note(struct refused_list *l, pid_t pid, unsigned long long starttime, int rc,
		  uint64_t now)
{
	struct refused *r = find(l, pid, starttime);
	bool again = r != NULL;

	if (!r) {
		if (l->n == REFUSED_MAX)	/* forget the oldest */
			memmove(l->v, l->v + 1, --l->n * sizeof(l->v[0]));
		r = &l->v[l->n++];
		*r = (struct refused){ pid, starttime, rc, UINT64_MAX, REFUSED_RETRY_FIRST_NS };
	} else if (r->delay_ns < REFUSED_RETRY_MAX_NS) {
		r->delay_ns *= 2;
	}
	r->err = rc;
	r->retry_ns = rc == -EBUSY ? now + r->delay_ns : UINT64_MAX;
	return again;
}

void refused_forget(struct refused_list *l, pid_t pid, unsigned long long starttime)
{
	struct refused *r = find(l, pid, starttime);

	if (r)
		*r = l->v[--l->n];
}

size_t refused_due(const struct refused_list *l, uint64_t now, pid_t *due)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].retry_ns <= now)
			due[n++] = l->v[i].pid;
	return n;
}

void refused_settle(struct refused_list *l, pid_t pid, uint64_t now)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].retry_ns <= now) {
			l->v[i] = l->v[--l->n];
			return;
		}
}
