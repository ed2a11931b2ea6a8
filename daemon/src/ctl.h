/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctl.h - irqresd's control socket server.
 *
 * The server accepts many non-blocking clients, checks the peer's uid, buffers each
 * connection's input up to CTL_LINE_MAX bytes per line, reads the profile text a
 * plan/apply/verify line announces, and hands every request parsed by ctl_proto.h to
 * the daemon's handler, which writes the reply object into a struct json.
 */
#ifndef IRQRES_CTL_H
#define IRQRES_CTL_H

#include "ctl_proto.h"
#include "irqres.h"
#include "json.h"

#include <limits.h>
#include <poll.h>

#define CTL_CLIENTS_MAX 64
#define CTL_REQUEST_TIMEOUT_MS 5000	/* to complete a request line, or read its reply */
#define CTL_IDLE_TIMEOUT_MS 60000	/* a connection with nothing under way */
#define CTL_EVICT_AFTER_MS 1000		/* all slots taken: the longest wait, if this long, goes */

/*
 * How long a client may take. A request line must be complete within request_ms of its
 * first byte, a reply must make progress within request_ms, and a connection with
 * nothing under way closes after idle_ms. When all CTL_CLIENTS_MAX slots are taken, a
 * new connection takes the slot of the client whose wait began first, if it began at
 * least evict_ms ago; otherwise the new one is refused with a reply.
 */
struct ctl_timeouts {
	uint64_t request_ms, idle_ms, evict_ms;
};

struct ctl_server;

/*
 * Creates the directory of path (0700) when missing, binds and listens on path (0600),
 * replacing a stale socket file. Returns 0 or -errno with a message in err.
 */
int ctl_init(struct ctl_server **srv, const char *path, ctl_handler_fn handler, void *ctx,
	     char *err, size_t errlen);
/* Closes every client and the listening socket and unlinks the socket file. */
void ctl_fini(struct ctl_server *srv);

/*
 * poll() integration: ctl_pollfds() fills up to max entries (the listening socket and
 * every client) and returns how many; ctl_dispatch() takes the same entries back after
 * poll() and does all the work that is ready. Never fails: bad clients are dropped.
 */
size_t ctl_pollfds(struct ctl_server *srv, struct pollfd *fds, size_t max);
void ctl_dispatch(struct ctl_server *srv, const struct pollfd *fds, size_t n);
/*
 * The poll() timeout the clients' deadlines need (ms, -1: none); ctl_dispatch() drops
 * the clients whose deadline passed, with an answer where a request was under way.
 */
int ctl_timeout_ms(const struct ctl_server *srv);
/* Replaces the defaults (CTL_*_MS above); for tests. */
void ctl_set_timeouts(struct ctl_server *srv, const struct ctl_timeouts *to);

#endif /* IRQRES_CTL_H */
