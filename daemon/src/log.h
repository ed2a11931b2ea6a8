/* SPDX-License-Identifier: GPL-2.0-only */
/* log.h - one printf-checked logging entry point with syslog levels. */
#ifndef IRQRES_LOG_H
#define IRQRES_LOG_H

#include <stdbool.h>
#include <syslog.h>

enum log_sink {
	LOG_SINK_STDERR,	/* plain "irqresd: message" lines (interactive use) */
	LOG_SINK_JOURNAL,	/* "<N>message" on stderr, for systemd */
	LOG_SINK_SYSLOG,
};

extern bool irqres_debug;

/* Chooses the sink: the journal when JOURNAL_STREAM is set, else stderr. */
void log_init(const char *ident, bool debug);
void log_set_sink(enum log_sink sink);
void log_fini(void);
void irqres_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(...)	irqres_log(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	irqres_log(LOG_WARNING, __VA_ARGS__)
#define pr_notice(...)	irqres_log(LOG_NOTICE, __VA_ARGS__)
#define pr_info(...)	irqres_log(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	do { if (irqres_debug) irqres_log(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
