/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * acct_split.h - how acct.c splits an activation's cost among the processes it served
 * (the rule of acct.h), and the totals. An activation that delivered packets is kept as
 * a record until the packets are read (or its grace is over): the skb addresses it
 * delivered map to it, a served thread's read of one counts a packet for that thread, and
 * the record is charged by packets once none is outstanding; one that delivered nothing is
 * charged at once by wake-ups. Functions return 0 or -errno.
 */
#ifndef IRQRES_ACCT_SPLIT_H
#define IRQRES_ACCT_SPLIT_H

#include "acct.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A process an activation woke, and how often. */
struct acct_woke {
	pid_t pid;
	uint64_t wakeups;
	char comm[16];
};

/* qsort()/bsearch() order of structs that begin with a pid_t (acct_reader, acct_woke,
 * ...): by that pid. */
int acct_pid_cmp(const void *a, const void *b);

/* Charges @exec of target @target to the processes of @w by the wake-up rule (sorts @w). */
void acct_split_woke(size_t target, uint64_t exec, struct acct_woke *w, size_t n_w);

/* A record for an activation of target @target in progress; its seq (0: no memory). */
uint64_t acct_rec_open(size_t target);
/* The activation of record @seq delivered the skb at @addr. */
int acct_rec_deliver(uint64_t seq, uint64_t addr);
/* Served thread @pid (@comm) read the skb at @addr: a packet of the record that
 * delivered it, charged when it was the last outstanding one. */
void acct_rec_read(pid_t pid, const char *comm, uint64_t addr);
/* The activation of record @seq delivered a packet to a socket served thread @pid
 * (@comm) reads: counted at once. */
int acct_rec_packet(uint64_t seq, pid_t pid, const char *comm);
/*
 * The activation of record @seq ended at @ts: whole, it costs @exec and woke @w (taken
 * over: freed here), and is charged once its packets are read; else it is dropped.
 */
void acct_rec_close(uint64_t seq, uint64_t ts, bool whole, uint64_t exec,
		    struct acct_woke *w, size_t n_w);
/* Charges the closed records whose grace ended by @now, and forgets the charged ones. */
void acct_rec_flush(uint64_t now);

/* The totals so far (valid until the next call that charges). */
const struct acct_total *acct_split_totals(size_t *n);
/* Forgets every record and total. */
void acct_split_reset(void);

#endif /* IRQRES_ACCT_SPLIT_H */
