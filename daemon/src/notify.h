/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * notify.h - systemd notifications (sd_notify): READY=1 once the profile is applied and
 * the socket listens, RELOADING=1 ... READY=1 around a reload, STATUS=..., STOPPING=1
 * before restoring, and WATCHDOG=1 from the
 * main loop when the service has WatchdogSec= (sd_watchdog_enabled). Outside systemd
 * (no NOTIFY_SOCKET) every call does nothing.
 */
#ifndef IRQRES_NOTIFY_H
#define IRQRES_NOTIFY_H

#include <stdint.h>

/* Reads the watchdog interval from the environment. Returns 0 or -errno. */
int notify_init(void);
void notify_fini(void);
/* How often the main loop should call notify_watchdog(), in ns (half of WATCHDOG_USEC);
 * 0 when there is no watchdog. */
uint64_t notify_watchdog_interval_ns(void);
/* READY=1, with STATUS= when status is not NULL */
void notify_ready(const char *status);
/* RELOADING=1 with MONOTONIC_USEC= (a reload starts; notify_ready() when it is done) */
void notify_reloading(void);
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notify_stopping(void);
void notify_watchdog(void);

#endif /* IRQRES_NOTIFY_H */
