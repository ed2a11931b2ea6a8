/* SPDX-License-Identifier: GPL-2.0-only */
/* log.c - logging to stderr, to the journal through stderr, or to syslog. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool log_debug_enabled;

static enum log_sink sink = LOG_SINK_STDERR;
static const char *log_ident = "irqresd";

void log_init(const char *ident, bool debug)
{
	log_ident = ident;
	log_debug_enabled = debug;
	sink = getenv("JOURNAL_STREAM") ? LOG_SINK_JOURNAL : LOG_SINK_STDERR;
}

void log_set_sink(enum log_sink s)
{
	if (s == LOG_SINK_SYSLOG && sink != LOG_SINK_SYSLOG)
		openlog(log_ident, LOG_PID, LOG_DAEMON);
	else if (s != LOG_SINK_SYSLOG && sink == LOG_SINK_SYSLOG)
		closelog();
	sink = s;
}

void log_fini(void)
{
	if (sink == LOG_SINK_SYSLOG)
		closelog();
	sink = LOG_SINK_STDERR;
}

void log_write(int prio, const char *fmt, ...)
{
	static const char *const names[] = {
		[LOG_EMERG] = "emergency", [LOG_ALERT] = "alert", [LOG_CRIT] = "critical",
		[LOG_ERR] = "error", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	switch (sink) {
	case LOG_SINK_SYSLOG:
		vsyslog(prio, fmt, ap);
		break;
	case LOG_SINK_JOURNAL:
		fprintf(stderr, "<%d>", prio & 7);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		break;
	case LOG_SINK_STDERR:
		if (prio <= LOG_WARNING || prio == LOG_DEBUG)
			fprintf(stderr, "%s: %s: ", log_ident, names[prio & 7]);
		else
			fprintf(stderr, "%s: ", log_ident);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		break;
	}
	va_end(ap);
	errno = saved;
}
