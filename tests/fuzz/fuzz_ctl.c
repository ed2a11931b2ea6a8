/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_ctl.c - libFuzzer harness: any bytes as one control-socket request line.
 *
 * The request goes through ctl_handle_line() as the server runs it, with a handler that
 * echoes every parsed field into the reply the way irqresd's handler does. The reply must
 * be one line of valid UTF-8 JSON object text, {"ok":true,...} exactly when the parser
 * accepted the request, and every parsed field must be within its limits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "utf8.h"

static int echo(void *ctx, const struct ctl_request *req, struct json *reply, char *err,
		size_t errlen)
{
	(void)ctx;
	if (memchr(req->target, '\0', sizeof(req->target)) == NULL ||
	    memchr(req->name, '\0', sizeof(req->name)) == NULL || req->body_len > CTL_BODY_MAX)
		abort();
	if (req->verb == CTL_SET_BUDGET) {
		if (!req->target[0] || req->runtime_ns == 0 ||
		    (req->period_ns && req->runtime_ns > req->period_ns))
			abort();
		if (req->pid < 0 || (req->pid > 0 && strncmp(req->target, "pid:", 4) != 0))
			abort();
	}
	json_kv_str(reply, "verb", ctl_verb_name(req->verb));
	json_kv_str(reply, "target", req->target);
	json_kv_str(reply, "name", req->name);
	json_kv_uint(reply, "runtime_ns", req->runtime_ns);
	json_kv_uint(reply, "period_ns", req->period_ns);
	if (req->verb == CTL_RESTORE) {	/* a refusal with the handler's own words */
		snprintf(err, errlen, "restore: %s", req->name);
		return -1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json out;
	struct ctl_request req;
	const char *buf;
	char err[512];
	size_t len;
	int parsed;

	if (size >= CTL_LINE_MAX || memchr(data, '\n', size))
		return -1;	/* the server never hands over such a line: not in the corpus */
	err[0] = '\0';
	parsed = ctl_parse((const char *)data, size, &req, err, sizeof(err));
	if (parsed < 0 && !err[0])
		abort();
	json_init(&out);
	ctl_handle_line((const char *)data, size, echo, NULL, &out);
	buf = json_buf(&out);
	len = json_len(&out);
	if (json_error(&out) || len < 2 || buf[len - 1] != '\n' || buf[len - 2] != '}' ||
	    buf[0] != '{' || memchr(buf, '\n', len - 1) || utf8_check(buf, len) != len)
		abort();
	/* a request announcing a body is refused by ctl_handle_line(): the body is not there */
	if ((parsed == 0 && req.verb != CTL_RESTORE && !req.body_len) !=
	    (strncmp(buf, "{\"ok\":true", 10) == 0))
		abort();
	json_fini(&out);
	return 0;
}
