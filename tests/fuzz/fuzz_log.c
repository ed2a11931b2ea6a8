/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_log.c - the daemon's log entry point for the fuzz harnesses, in place of log.c:
 * every message is still formatted (a bad format or argument shows under ASan/UBSan)
 * but not written, so that a loader logging each bad line does not slow the fuzzer
 * or bury its reports.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "log.h"

bool log_debug_enabled = true;	/* format the debug messages too */

void log_init(const char *ident, bool debug)
{
	(void)ident;
	(void)debug;
}

void log_set_sink(enum log_sink s)
{
	(void)s;
}

void log_fini(void)
{
}

void log_write(int prio, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)prio;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}
