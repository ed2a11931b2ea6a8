/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * acct.h - live accounting of device-thread time per served process
 * (docs/process-aware.md, "Accounting").
 *
 * For the threads of the targets with serves:, irqresd keeps its own tracefs instance
 * (instances/irqresd-<its pid>), filtered in the kernel on those threads' pids and on
 * the served threads', and reads it on every tick and before every stats reply. The rule
 * is the offline one (irqres analyze, measure/accounting.py): an activation (from the
 * switch-in after a sleep to the switch-out into S or I) costs its execution time: the
 * kernel's charge (sched_stat_runtime of the thread since its previous sleep) where the
 * kernel traced one, else the sum of its on-CPU intervals. That time is split among the
 * served threads that got the packets it delivered, in proportion to the packets each
 * got. Where the kernel has the socket events (about 6.6 on), a packet is a
 * sock:sk_data_ready the thread traces in its own context, for the served thread that
 * last read that socket (sock:sock_recv_length with bytes read). Otherwise it is a
 * net:netif_receive_skb the thread traces, matched by skb address to the served reader's
 * next skb:consume_skb or skb:skb_copy_datagram_iovec; such an activation waits up to
 * ACCT_GRACE_NS after its end for those reads (7.x frees a read skb on the CPU that made
 * it, in the device thread: no read event there, hence the sockets first). An activation
 * with no packet counted splits evenly among the distinct processes the thread woke in it
 * in its own context (sched_waking with common_pid = the thread, not in hard IRQ or NMI
 * context; soft IRQ context only on PREEMPT_RT, the same for deliveries), the remainder
 * to the lowest pid; one that woke nobody goes to "(none)" (pid -1). Activations that a
 * lost-events gap overlaps, or whose switch-in is missing from the trace, are dropped
 * (counted). The packet events and the charge are optional: a kernel without them gets
 * the wake-up rule and switch-based time. Totals are cumulative since the profile came in
 * force.
 *
 * Accounting is optional: when the instance cannot be made, that is logged once and the
 * rest of irqresd goes on without it. Functions return 0 or -errno.
 */
#ifndef IRQRES_ACCT_H
#define IRQRES_ACCT_H

#include "json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ACCT_NOBODY (-1)	/* the pid activations that served nobody are charged to */
/* served threads whose reads are matched, at most: their kernel filter
 * ("common_pid==P||...", up to 21 bytes each) must fit in a page */
#define ACCT_MAX_READERS 180
#define ACCT_GRACE_NS 500000000ULL	/* an activation waits this long for its packets' reads */

/* A device thread to account, and the index of its target in the profile. */
struct acct_thread {
	pid_t pid;
	size_t target;
};

/* A served thread: whose reads of packets are matched to the deliveries. */
struct acct_reader {
	pid_t pid;
	char comm[16];
};

/* The totals of one (target, served process). */
struct acct_total {
	size_t target;
	pid_t pid;			/* ACCT_NOBODY: activations that served nobody */
	char comm[16];
	uint64_t time_ns;		/* its share of the activations' execution time */
	uint64_t activations;		/* activations that gave it time */
	uint64_t wakeups;		/* wake-ups of it by the target's threads */
	uint64_t packets;		/* packets it read that the target's threads delivered */
};

/*
 * The tracefs mount to use (NULL: the library finds it); set before the first
 * acct_update(). A directory that is not a tracefs makes accounting fail, logged once.
 */
void acct_set_tracing_dir(const char *dir);

/*
 * The device threads to account now (all of them: a thread left out is no longer
 * followed). Creates the instance at the first call with n > 0 (removing the stale
 * instances of irqresd processes that are gone first) and rewrites the kernel filters
 * when the set changed. @r lists the served threads whose packet reads are matched
 * (ACCT_MAX_READERS at most; beyond that the rule falls back to wake-ups). Reads what is
 * pending before it changes anything.
 */
int acct_update(const struct acct_thread *v, size_t n, const struct acct_reader *r,
		size_t n_r);

/* Reads and accounts what the instance holds (nothing when accounting is off). */
void acct_drain(void);

/* Whether the instance is there; the error that stopped accounting ("" when none). */
bool acct_running(void);
const char *acct_error(void);

/* The totals so far, *n of them (owned by the module, valid until the next call). */
const struct acct_total *acct_totals(size_t *n);

/* Events the kernel dropped (the instance's buffer overflowed) since the start. */
uint64_t acct_lost_events(void);
/* Activations not charged: a lost-events gap touched them, or one of their switches was
 * not traced (a switch-out with no switch-in before it). */
uint64_t acct_dropped(void);

/* The "accounting" member of the stats reply (docs/json.md ACCOUNTING); @names gives a
 * target's name by index. */
void acct_json(struct json *j, const char *const *names, size_t n_names);

/* Removes the instance and forgets every total (the profile went out of force, or exit). */
void acct_stop(void);

/*
 * Removes instances/irqresd-<pid> of every irqresd pid that no longer runs under the
 * tracing dir (the instance of one that was killed). Returns how many, or -errno.
 */
int acct_clean_stale(void);

/*
 * The events of the rule as the record decoder hands them over. The decoder calls them
 * for the instance's records; tests call them by hand, which runs the rule without a
 * tracefs (tests/c/test_acct.c). Times are trace-clock nanoseconds.
 */
/* Follows @v and matches the reads of @r, with no instance (tests only). */
int acct_feed_follow(const struct acct_thread *v, size_t n, const struct acct_reader *r,
		     size_t n_r);

/* sched_switch: @prev (leaving in @prev_state) -> @next. */
void acct_feed_switch(pid_t prev, unsigned long long prev_state, pid_t next, uint64_t ts);
/* sched_waking of @pid (@comm) raised by @waker, in context @flags. */
void acct_feed_waking(pid_t waker, pid_t pid, const char *comm, int flags);
/* sched_stat_runtime: the kernel charged @pid @ns. */
void acct_feed_charge(pid_t pid, uint64_t ns);
/* net:netif_receive_skb traced by @thread in context @flags: the skb at @addr. */
void acct_feed_deliver(pid_t thread, uint64_t addr, int flags);
/* skb:consume_skb or skb:skb_copy_datagram_iovec traced by @reader: the skb at @addr. */
void acct_feed_read(pid_t reader, uint64_t addr);
/* sock:sk_data_ready traced by @thread in context @flags: data for socket @sk. */
void acct_feed_ready(pid_t thread, uint64_t sk, int flags);
/* sock:sock_recv_length traced by @reader: it read @ret bytes (or -errno) from @sk. */
void acct_feed_recv(pid_t reader, uint64_t sk, int ret);
/* The end of a read of the instance at trace time @now: graces over are charged. */
void acct_feed_flush(uint64_t now);

#endif /* IRQRES_ACCT_H */
