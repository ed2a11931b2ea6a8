/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctl_proto.h - the line protocol of irqresd's control socket (docs/protocol.md).
 *
 * ctl_parse() turns one request line into a struct ctl_request (or an error message
 * naming the request and the cause); ctl_handle_request() runs a parsed request through
 * the daemon's handler and frames its reply as one JSON object line with "ok".  No I/O:
 * the server (ctl.h) reads the lines and writes the replies.
 */
#ifndef IRQRES_CTL_PROTO_H
#define IRQRES_CTL_PROTO_H

#include "irqres.h"
#include "json.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CTL_LINE_MAX 4096	/* one request line, the '\n' included */
#define CTL_BODY_MAX (1 << 20)	/* the profile text after a plan/apply line */

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
 * wrote is dropped and the reply is {"ok":false,"error":err,"errno":name}).
 */
typedef int (*ctl_handler_fn)(void *ctx, const struct ctl_request *req, struct json *reply,
			      char *err, size_t errlen);

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
/* The reply line's object for a refused request: {"ok":false,"error":msg}, replacing
 * whatever out held (without the '\n'). */
void ctl_reply_error(struct json *out, const char *msg);
/* The same for a request that failed with errno @err (> 0): its name in "errno" too
 * ({"ok":false,"error":msg,"errno":"EBUSY"}), so a client tells a refusal by the
 * kernel's admission control (EBUSY) from others without reading the message. */
void ctl_reply_errno(struct json *out, const char *msg, int err);

#endif /* IRQRES_CTL_PROTO_H */
