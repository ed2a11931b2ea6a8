/* SPDX-License-Identifier: GPL-2.0-only */
/* notify.c - sd_notify(3) messages to systemd; nothing outside systemd. */
#include "notify.h"

#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>

static uint64_t watchdog_usec;

int notify_init(void)
{
	uint64_t usec = 0;
	int rc;

	watchdog_usec = 0;
	rc = sd_watchdog_enabled(0, &usec);
	if (rc < 0) {
		pr_warn("systemd watchdog settings unreadable: %s", strerror(-rc));
		return rc;
	}
	if (rc > 0) {
		watchdog_usec = usec;
		pr_debug("systemd watchdog every %llu us", (unsigned long long)usec);
	}
	return 0;
}

void notify_fini(void)
{
	watchdog_usec = 0;
}

uint64_t notify_watchdog_interval_ns(void)
{
	return watchdog_usec * 1000 / 2;
}

static void send_state(const char *s)
{
	int rc = sd_notify(0, s);

	if (rc < 0)
		pr_debug("sd_notify(%s): %s", s, strerror(-rc));
}

void notify_ready(const char *status)
{
	char buf[300];

	if (status)
		snprintf(buf, sizeof(buf), "READY=1\nSTATUS=%s", status);
	else
		snprintf(buf, sizeof(buf), "READY=1");
	send_state(buf);
}

void notify_reloading(void)
{
	struct timespec ts;
	char buf[80];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	send_state(buf);
}

void notify_status(const char *fmt, ...)
{
	char buf[300];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "STATUS=");
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	send_state(buf);
}

void notify_stopping(void)
{
	send_state("STOPPING=1");
}

void notify_watchdog(void)
{
	if (watchdog_usec)
		send_state("WATCHDOG=1");
}
