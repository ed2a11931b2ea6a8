/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The threads whose rows a read keeps.
 *
 * With a selection, only the rows of the selected threads are kept, so that memory grows
 * with their events, not with the trace: a sched_switch to or from one of them, a wake-up
 * of one of them or by one (the waker has no comm in the event: a waker not yet known
 * on this reader is kept too and Python drops it once the whole trace named everyone),
 * a hard IRQ entry or exit of an IRQ number whose thread is selected (or none of whose
 * threads was seen yet, likewise), a migration of one of them (or of a pid not yet
 * known, likewise). Soft IRQ entries and exits, and the deliveries and reads of skbs
 * (netif_receive_skb, consume_skb, skb_copy_datagram_iovec) and of socket data
 * (sk_data_ready, sock_recv_length), are kept whoever's they are. A (pid, comm) pair is
 * judged once, when it first appears, by the rules of irqres.measure.activations:
 * IRQ threads (comm irq/<N>-..., daemon/src/irqname.h) when irq_threads is set, narrowed by thread_pat (IRQ
 * number, or fnmatch glob on comm, or on *comm*); tasks by pid or glob or substring.
 */
#ifndef IRQRES_TRACE_SELECTION_H
#define IRQRES_TRACE_SELECTION_H

#include <stdint.h>

enum { PID_LIMIT = 1 << 22, IRQ_LIMIT = 1 << 16 }; /* PID_MAX_LIMIT on 64-bit */
enum { SEL_UNKNOWN = 0, SEL_NO = 1, SEL_YES = 2 };

struct selection {
	int irq_threads;        /* IRQ threads are candidates */
	char *thread_pat;       /* NULL: every IRQ thread */
	char *thread_star;      /* "*thread_pat*" */
	char **tasks;
	int ntasks;
};

/* irq/<N>-...: N, or -1 for any other comm (the rule: daemon/src/irqname.h) */
int selection_irq_of(const char *comm);

/* Does @sel choose the thread @pid named @comm (IRQ thread of @irq, or -1)? */
int selection_matches(const struct selection *sel, int32_t pid, const char *comm, int irq);

void selection_free(struct selection *sel);

#endif
