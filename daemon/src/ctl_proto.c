/* SPDX-License-Identifier: GPL-2.0-only */
/* ctl_proto.c - the control socket's line protocol: request parser, reply framing; see
 * ctl_proto.h. */
#include "ctl_proto.h"
#include "profile.h"
#include "units.h"
#include "utf8.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTL_WORDS_MAX 8

static const char *const verb_names[] = {
	[CTL_PING] = "ping",
	[CTL_STATUS] = "status",
	[CTL_STATS] = "stats",
	[CTL_SET_BUDGET] = "set-budget",
	[CTL_PLAN] = "plan",
	[CTL_APPLY] = "apply",
	[CTL_RESTORE] = "restore",
	[CTL_RELOAD] = "reload",
	[CTL_VERIFY] = "verify",
};

/* arguments each verb takes: min..max */
static const struct { unsigned char min, max; const char *usage; } verb_args[] = {
	[CTL_PING] = { 0, 0, "ping" },
	[CTL_STATUS] = { 0, 0, "status" },
	[CTL_STATS] = { 0, 0, "stats" },
	[CTL_SET_BUDGET] = { 2, 3, "set-budget <target> <runtime> [<period>]" },
	[CTL_PLAN] = { 2, 2, "plan <name> <length>, then <length> bytes of profile text" },
	[CTL_APPLY] = { 2, 2, "apply <name> <length>, then <length> bytes of profile text" },
	[CTL_RESTORE] = { 0, 0, "restore" },
	[CTL_RELOAD] = { 0, 0, "reload" },
	[CTL_VERIFY] = { 0, 2, "verify [<name> <length>, then <length> bytes of profile text]" },
};

const char *ctl_verb_name(enum ctl_verb verb)
{
	if ((size_t)verb < sizeof(verb_names) / sizeof(verb_names[0]))
		return verb_names[verb];
	return "?";
}

struct word {
	const char *s;
	size_t n;
};

/* Copies a word for a message: at most 40 bytes, non-printable bytes as '?'. */
static const char *word_show(const struct word *w, char *buf, size_t len)
{
	size_t i, n = w->n < 40 ? w->n : 40;

	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++)
		buf[i] = isprint((unsigned char)w->s[i]) ? w->s[i] : '?';
	buf[n] = '\0';
	if (w->n > n && n >= 3)
		memcpy(buf + n - 3, "...", 3);
	return buf;
}

static int parse_target(const struct word *w, struct ctl_request *req, char *err, size_t errlen)
{
	char show[48];
	size_t i;

	if (w->n > 4 && memcmp(w->s, "pid:", 4) == 0) {
		uint64_t v = 0;

		/* any number of leading zeros; the value bounds the loop's arithmetic */
		for (i = 4; i < w->n; i++) {
			if (!isdigit((unsigned char)w->s[i]) || v > (uint64_t)INT32_MAX) {
				v = 0;
				break;
			}
			v = v * 10 + (uint64_t)(w->s[i] - '0');
		}
		if (v == 0 || v > (uint64_t)INT32_MAX) {
			snprintf(err, errlen, "set-budget: target '%s': not a pid (pid:<N>, N > 0)",
				 word_show(w, show, sizeof(show)));
			return -EINVAL;
		}
		req->pid = (pid_t)v;
		/* the canonical form, whatever the length of the word */
		snprintf(req->target, sizeof(req->target), "pid:%d", (int)req->pid);
		return 0;
	} else {
		if (w->n >= TARGET_NAME_MAX) {
			snprintf(err, errlen, "set-budget: target '%s': name longer than %d characters",
				 word_show(w, show, sizeof(show)), TARGET_NAME_MAX - 1);
			return -EINVAL;
		}
		for (i = 0; i < w->n; i++) {
			unsigned char c = (unsigned char)w->s[i];

			if (!isalnum(c) && c != '_' && c != '.' && c != '-') {
				snprintf(err, errlen, "set-budget: target '%s': a target name is "
					 "[A-Za-z0-9_.-] or pid:<N>", word_show(w, show, sizeof(show)));
				return -EINVAL;
			}
		}
	}
	_Static_assert(TARGET_NAME_MAX <= sizeof(((struct ctl_request *)0)->target),
		       "a target name fits in the request");
	memcpy(req->target, w->s, w->n);
	req->target[w->n] = '\0';
	return 0;
}

static int parse_duration(const char *what, const struct word *w, uint64_t *ns, char *err,
			  size_t errlen)
{
	char buf[UNITS_FMT_LEN * 2], show[48];
	const char *why = NULL;
	int rc;

	if (w->n >= sizeof(buf)) {
		rc = -EINVAL;
		why = "too long";
	} else {
		memcpy(buf, w->s, w->n);
		buf[w->n] = '\0';
		rc = units_parse_duration(buf, ns, &why);
	}
	if (rc < 0) {
		snprintf(err, errlen, "set-budget: %s '%s': %s", what,
			 word_show(w, show, sizeof(show)), why ? why : strerror(-rc));
		return -EINVAL;
	}
	return 0;
}

/* The request line's words, blank-separated, each valid UTF-8; their number or -EINVAL. */
static int split_words(const char *line, size_t len, struct word *w, char *err,
		       size_t errlen)
{
	size_t n = 0, i = 0;
	char show[48];

	while (i < len) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		if (n == CTL_WORDS_MAX + 1) {
			snprintf(err, errlen, "request has too many words");
			return -EINVAL;
		}
		w[n].s = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		w[n].n = (size_t)(line + i - w[n].s);
		n++;
	}
	/* the protocol is UTF-8 text; other bytes would reach replies and file names */
	for (i = 0; i < n; i++) {
		size_t bad = utf8_check(w[i].s, w[i].n);

		if (bad < w[i].n) {
			snprintf(err, errlen, "request word %zu '%s': byte 0x%02x at offset %zu is "
				 "not valid UTF-8", i + 1, word_show(&w[i], show, sizeof(show)),
				 (unsigned char)w[i].s[bad], bad);
			return -EINVAL;
		}
	}
	return (int)n;
}

/* set-budget <target> <runtime> [<period>] */
static int parse_set_budget(const struct word *w, size_t nargs, struct ctl_request *req,
			    char *err, size_t errlen)
{
	char a[UNITS_FMT_LEN], b[UNITS_FMT_LEN];

	if (parse_target(&w[1], req, err, errlen) < 0 ||
	    parse_duration("runtime", &w[2], &req->runtime_ns, err, errlen) < 0 ||
	    (nargs == 3 && parse_duration("period", &w[3], &req->period_ns, err, errlen) < 0))
		return -EINVAL;
	if (req->runtime_ns < DLCHECK_RUNTIME_MIN_NS) {
		snprintf(err, errlen, "set-budget %s: runtime %s is below the kernel's minimum of "
			 "1024ns", req->target, units_format_duration(req->runtime_ns, a, sizeof(a)));
		return -EINVAL;
	}
	if (nargs == 3 && req->runtime_ns > req->period_ns) {
		snprintf(err, errlen, "set-budget %s: runtime %s is larger than the period %s",
			 req->target, units_format_duration(req->runtime_ns, a, sizeof(a)),
			 units_format_duration(req->period_ns, b, sizeof(b)));
		return -EINVAL;
	}
	return 0;
}

/* <name> <length>: a profile whose text follows the request line (plan, apply, verify) */
static int parse_body(const char *verb, const struct word *w, struct ctl_request *req,
		      char *err, size_t errlen)
{
	char show[48];
	size_t i;

	if (w[1].n >= sizeof(req->name)) {
		snprintf(err, errlen, "%s: profile name longer than %zu bytes", verb,
			 sizeof(req->name) - 1);
		return -EINVAL;
	}
	if (memchr(w[1].s, '\0', w[1].n)) {
		snprintf(err, errlen, "%s: profile name contains a NUL byte", verb);
		return -EINVAL;
	}
	memcpy(req->name, w[1].s, w[1].n);
	req->name[w[1].n] = '\0';
	for (i = 0; i < w[2].n && req->body_len <= CTL_BODY_MAX; i++) {
		if (!isdigit((unsigned char)w[2].s[i]))
			break;
		req->body_len = req->body_len * 10 + (size_t)(w[2].s[i] - '0');
	}
	if (i < w[2].n || req->body_len == 0 || req->body_len > CTL_BODY_MAX) {
		snprintf(err, errlen, "%s %s: length '%s': not a number of bytes in 1..%d (the "
			 "profile's text follows the request line)", verb, req->name,
			 word_show(&w[2], show, sizeof(show)), CTL_BODY_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The verb named by word w, or -EINVAL. */
static int find_verb(const struct word *w, char *err, size_t errlen)
{
	char show[48];

	for (size_t v = 0; v < sizeof(verb_names) / sizeof(verb_names[0]); v++)
		if (strlen(verb_names[v]) == w->n && memcmp(verb_names[v], w->s, w->n) == 0)
			return (int)v;
	snprintf(err, errlen, "unknown request '%s': try ping, status, stats, set-budget, plan, "
		 "apply, restore, reload or verify", word_show(w, show, sizeof(show)));
	return -EINVAL;
}

int ctl_parse(const char *line, size_t len, struct ctl_request *req, char *err, size_t errlen)
{
	struct word w[CTL_WORDS_MAX + 1];
	size_t nargs;
	int n, v;

	memset(req, 0, sizeof(*req));
	if (len > 0 && line[len - 1] == '\r')
		len--;
	n = split_words(line, len, w, err, errlen);
	if (n < 0)
		return n;
	if (n == 0) {
		snprintf(err, errlen, "empty request: try ping, status, stats, set-budget, plan, "
			 "apply, restore, reload or verify");
		return -EINVAL;
	}
	v = find_verb(&w[0], err, errlen);
	if (v < 0)
		return v;
	req->verb = (enum ctl_verb)v;
	nargs = (size_t)n - 1;
	if (nargs < verb_args[v].min || nargs > verb_args[v].max) {
		snprintf(err, errlen, "%s: %s arguments: usage: %s", verb_names[v],
			 nargs < verb_args[v].min ? "missing" : "too many", verb_args[v].usage);
		return -EINVAL;
	}
	switch (req->verb) {
	case CTL_SET_BUDGET:
		return parse_set_budget(w, nargs, req, err, errlen);
	case CTL_VERIFY:
		if (nargs == 0)
			return 0;	/* the profile in force */
		if (nargs == 1) {
			snprintf(err, errlen, "verify: give <name> <length> (the profile's text "
				 "follows) or nothing (the profile in force)");
			return -EINVAL;
		}
		return parse_body(verb_names[v], w, req, err, errlen);
	case CTL_PLAN:
	case CTL_APPLY:
		return parse_body(verb_names[v], w, req, err, errlen);
	default:
		return 0;
	}
}

void ctl_reply_error(struct json *out, const char *msg)
{
	ctl_reply_errno(out, msg, 0);
}

void ctl_reply_errno(struct json *out, const char *msg, int err)
{
	const char *name = err > 0 ? strerrorname_np(err) : NULL;

	json_reset(out);
	json_obj_begin(out);
	json_kv_bool(out, "ok", false);
	json_kv_str(out, "error", msg);
	if (name)
		json_kv_str(out, "errno", name);
	json_obj_end(out);
}

void ctl_handle_request(const struct ctl_request *req, ctl_handler_fn handler, void *ctx,
			struct json *out)
{
	char err[1024] = "";
	int rc;

	json_reset(out);
	json_obj_begin(out);
	json_kv_bool(out, "ok", true);
	rc = handler(ctx, req, out, err, sizeof(err));
	if (rc == 0) {
		json_obj_end(out);
		if (json_error(out)) {
			rc = json_error(out);
			snprintf(err, sizeof(err), "%s: cannot build the reply: %s",
				 verb_names[req->verb], strerror(-rc));
		}
	} else if (!err[0]) {
		snprintf(err, sizeof(err), "%s: %s", verb_names[req->verb], strerror(-rc));
	}
	if (rc < 0)
		ctl_reply_errno(out, err, -rc);
	json_raw(out, "\n", 1);
}

void ctl_handle_line(const char *line, size_t len, ctl_handler_fn handler, void *ctx,
		     struct json *out)
{
	struct ctl_request req;
	char err[512] = "";

	if (ctl_parse(line, len, &req, err, sizeof(err)) == 0 && !req.body_len) {
		ctl_handle_request(&req, handler, ctx, out);
		return;
	}
	if (!err[0])
		snprintf(err, sizeof(err), "%s: the profile text must follow the request line",
			 verb_names[req.verb]);
	ctl_reply_error(out, err);
	json_raw(out, "\n", 1);
}
