/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctl.h - irqresd's control socket and the line protocol of docs/protocol.md.
 *
 * ctl_parse() turns one request line into a struct ctl_request (or an error message);
 * the server accepts many non-blocking clients, checks the peer's uid, buffers each
 * connection's input up to CTL_LINE_MAX bytes per line, and hands every parsed request
 * to the daemon's handler, which writes the reply object into a struct json.
 */
#ifndef IRQRES_CTL_H
#define IRQRES_CTL_H

#include "irqres.h"
#include "json.h"

#include <limits.h>
#include <poll.h>

#define CTL_LINE_MAX 4096	/* one request line, the '\n' included */
#define CTL_BODY_MAX (1 << 20)	/* the profile text after a plan/apply line */
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

enum ctl_verb {
	CTL_PING,
	CTL_STATUS,
	CTL_STATS,
	CTL_SET_BUDGET,
	CTL_PLAN,
	CTL_APPLY,
	CTL_RESTORE,
	CTL_RELOAD,
	CTL_VERIFY,
};

struct ctl_request {
	enum ctl_verb verb;
	/* set-budget: a target name, or pid:<N> (then pid > 0 and target holds "pid:N") */
	char target[TARGET_NAME_MAX + 16];
	pid_t pid;
	uint64_t runtime_ns;
	uint64_t period_ns;		/* 0: keep the target's period */
	/* plan / apply / verify: the profile's text follows the request line (body_len bytes, no
	 * terminator); name stands for it in messages (the client's path: never opened). */
	char name[PATH_MAX];
	size_t body_len;
	const char *body;		/* set by the server once the body is read */
};

/*
 * Parses one request line (without its '\n'; a trailing '\r' is ignored). Returns 0, or
 * -EINVAL with a message naming the request and the cause in err.
 */
int ctl_parse(const char *line, size_t len, struct ctl_request *req, char *err, size_t errlen);
const char *ctl_verb_name(enum ctl_verb verb);

/*
 * The daemon's request handler: writes the members of the reply object (after "ok")
 * into reply and returns 0, or returns -errno with a message in err (then whatever it
 * wrote is dropped and the reply is {"ok":false,"error":err}).
 */
typedef int (*ctl_handler_fn)(void *ctx, const struct ctl_request *req, struct json *reply,
			      char *err, size_t errlen);

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

/*
 * Runs one request line through the parser and the handler and writes the complete
 * reply line (JSON + '\n') into out. A request that needs a body gets an error reply
 * here; the server reads the body and calls ctl_handle_request(). Used by unit tests.
 */
void ctl_handle_line(const char *line, size_t len, ctl_handler_fn handler, void *ctx,
		     struct json *out);
/* Runs a parsed request (with its body) through the handler; the reply line into out. */
void ctl_handle_request(const struct ctl_request *req, ctl_handler_fn handler, void *ctx,
			struct json *out);

#endif /* IRQRES_CTL_H */
