/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * requests.h - the control socket's requests (docs/protocol.md) answered from the
 * daemon's state: status, stats, set-budget, plan, apply, restore.
 */
#ifndef IRQRES_REQUESTS_H
#define IRQRES_REQUESTS_H

#include "ctl.h"
#include "json.h"

#include <stddef.h>

/* The ctl_handler_fn of the daemon (ctx is the struct daemon). */
int requests_handle(void *ctx, const struct ctl_request *req, struct json *j, char *err,
		    size_t errlen);

#endif
