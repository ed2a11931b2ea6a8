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

extern bool log_debug_enabled;

/* Chooses the sink: the journal when JOURNAL_STREAM is set, else stderr. */
void log_init(const char *ident, bool debug);
void log_set_sink(enum log_sink sink);
void log_fini(void);
void log_write(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(...)	log_write(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	log_write(LOG_WARNING, __VA_ARGS__)
#define pr_notice(...)	log_write(LOG_NOTICE, __VA_ARGS__)
#define pr_info(...)	log_write(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	do { if (log_debug_enabled) log_write(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
