/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * acct_split.c - the split of an activation's cost among whom it served; see
 * acct_split.h.
 */
#include "acct_split.h"
#include "addrmap.h"
#include "array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Packets of one activation that one served thread read. */
struct got {
	pid_t pid;
	uint64_t packets;
	char comm[16];
};

/* An activation that delivered packets: charged once they are read, or at its grace. */
struct rec {
	uint64_t seq;
	size_t target;
	bool open;		/* the activation goes on */
	bool done;		/* charged or dropped: to be removed */
	uint64_t end_ts, exec_ns;
	uint32_t out;		/* deliveries not read yet */
	struct acct_woke *w;
	size_t n_w;
	struct got *g;
	size_t n_g, cap_g;
};

static bool rec_live(uint64_t seq);

static struct {
	struct acct_total *t;
	size_t n_t, cap_t;
	struct rec *recs;		/* by seq */
	size_t n_recs, cap_recs;
	uint64_t next_seq;
	struct addrmap skbs;		/* skb address -> seq of the record that delivered it */
} S = { .skbs = { .keep = rec_live } };

const struct acct_total *acct_split_totals(size_t *n)
{
	*n = S.n_t;
	return S.t;
}

int acct_pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static struct acct_total *total_get(size_t target, pid_t pid, const char *comm)
{
	size_t i;

	for (i = 0; i < S.n_t; i++)
		if (S.t[i].target == target && S.t[i].pid == pid)
			goto found;
	if (ARRAY_RESERVE(S.t, S.cap_t, S.n_t + 1))
		return NULL;
	S.t[i] = (struct acct_total){ .target = target, .pid = pid };
	S.n_t++;
found:
	snprintf(S.t[i].comm, sizeof(S.t[i].comm), "%s", comm);
	return &S.t[i];
}

void acct_split_woke(size_t target, uint64_t exec, struct acct_woke *w, size_t n_w)
{
	struct acct_total *t;
	uint64_t share, rem;
	size_t i;

	if (!n_w) {
		t = total_get(target, ACCT_NOBODY, "(none)");
		if (t) {
			t->time_ns += exec;
			t->activations++;
		}
		return;
	}
	qsort(w, n_w, sizeof(*w), acct_pid_cmp);
	share = exec / n_w;
	rem = exec - share * n_w;
	for (i = 0; i < n_w; i++) {
		t = total_get(target, w[i].pid, w[i].comm);
		if (!t)
			continue;
		t->time_ns += share + (i == 0 ? rem : 0);
		t->activations++;
		t->wakeups += w[i].wakeups;
	}
}

static uint64_t woken_times(const struct rec *r, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->n_w; i++)
		if (r->w[i].pid == pid)
			return r->w[i].wakeups;
	return 0;
}

/* The packet rule of acct.h: the activation's time in proportion to the packets each
 * served thread read, the remainder to the lowest pid; none read: the wake-up rule. */
static void charge_rec(struct rec *r)
{
	uint64_t total = 0, given = 0, share;
	struct acct_total *t;
	size_t i;

	r->done = true;
	for (i = 0; i < r->n_g; i++)
		total += r->g[i].packets;
	if (!total) {
		acct_split_woke(r->target, r->exec_ns, r->w, r->n_w);
		return;
	}
	qsort(r->g, r->n_g, sizeof(*r->g), acct_pid_cmp);
	for (i = 0; i < r->n_g; i++)
		given += (uint64_t)((unsigned __int128)r->exec_ns * r->g[i].packets / total);
	for (i = 0; i < r->n_g; i++) {
		share = (uint64_t)((unsigned __int128)r->exec_ns * r->g[i].packets / total);
		t = total_get(r->target, r->g[i].pid, r->g[i].comm);
		if (!t)
			continue;
		t->time_ns += share + (i == 0 ? r->exec_ns - given : 0);
		t->activations++;
		t->packets += r->g[i].packets;
		t->wakeups += woken_times(r, r->g[i].pid);
	}
}

/* ---- the records of activations that delivered packets ---- */

static struct rec *rec_find(uint64_t seq)
{
	size_t lo = 0, hi = S.n_recs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (S.recs[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < S.n_recs && S.recs[lo].seq == seq && !S.recs[lo].done ? &S.recs[lo] : NULL;
}

uint64_t acct_rec_open(size_t target)
{
	struct rec *r;

	if (ARRAY_RESERVE(S.recs, S.cap_recs, S.n_recs + 1))
		return 0;
	r = &S.recs[S.n_recs++];
	*r = (struct rec){ .seq = ++S.next_seq, .target = target, .open = true };
	return r->seq;
}

static void rec_free(struct rec *r)
{
	free(r->w);
	free(r->g);
	r->w = NULL;
	r->g = NULL;
}

void acct_rec_close(uint64_t seq, uint64_t ts, bool whole, uint64_t exec,
		    struct acct_woke *w, size_t n_w)
{
	struct rec *r = rec_find(seq);

	if (!r || !whole) {
		if (r)
			r->done = true;
		free(w);
		return;
	}
	r->open = false;
	r->end_ts = ts;
	r->exec_ns = exec;
	r->w = w;
	r->n_w = n_w;
	if (!r->out)
		charge_rec(r);
}

void acct_rec_flush(uint64_t now)
{
	size_t i, k = 0;

	for (i = 0; i < S.n_recs; i++) {
		struct rec *r = &S.recs[i];

		if (!r->done && !r->open && r->end_ts + ACCT_GRACE_NS <= now)
			charge_rec(r);
		if (r->done)
			rec_free(r);
		else
			S.recs[k++] = *r;
	}
	S.n_recs = k;
}

static int got_add(struct rec *r, pid_t pid, const char *comm)
{
	size_t i;

	for (i = 0; i < r->n_g; i++)
		if (r->g[i].pid == pid)
			goto found;
	if (ARRAY_RESERVE(r->g, r->cap_g, r->n_g + 1))
		return -ENOMEM;
	r->g[i] = (struct got){ .pid = pid };
	snprintf(r->g[i].comm, sizeof(r->g[i].comm), "%s", comm);
	r->n_g++;
found:
	r->g[i].packets++;
	return 0;
}

/* ---- skb address -> record ---- */

/* An address whose record was charged or dropped is not kept when the map grows. */
static bool rec_live(uint64_t seq)
{
	return rec_find(seq) != NULL;
}

int acct_rec_deliver(uint64_t seq, uint64_t addr)
{
	struct rec *r = rec_find(seq);
	int rc;

	if (!r)
		return -ENOENT;
	rc = addrmap_put(&S.skbs, addr, seq);
	if (rc == 0)
		r->out++;
	return rc;
}

void acct_rec_read(pid_t pid, const char *comm, uint64_t addr)
{
	uint64_t seq;
	struct rec *r = addrmap_take(&S.skbs, addr, &seq) ? rec_find(seq) : NULL;

	if (!r || got_add(r, pid, comm) < 0)
		return;
	if (r->out)
		r->out--;
	if (!r->open && !r->out)
		charge_rec(r);
}

int acct_rec_packet(uint64_t seq, pid_t pid, const char *comm)
{
	struct rec *r = rec_find(seq);

	return r ? got_add(r, pid, comm) : -ENOENT;
}

void acct_split_reset(void)
{
	size_t i;

	for (i = 0; i < S.n_recs; i++)
		rec_free(&S.recs[i]);
	free(S.recs);
	free(S.t);
	addrmap_free(&S.skbs);
	memset(&S, 0, sizeof(S));
	S.skbs.keep = rec_live;
}
