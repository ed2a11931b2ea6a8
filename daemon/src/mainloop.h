/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mainloop.h - the daemon proper, once the profile is applied: signals (signalfd:
 * SIGTERM/SIGINT end the loop, SIGHUP reloads), the control socket, the proc connector,
 * the rescan and watchdog timer (timerfd), and one poll() loop over them that runs
 * hotplug retries, threads waiting to run in their partition and rescans.  READY=1 once
 * the socket listens, STOPPING=1 when the loop ends.
 */
#ifndef IRQRES_MAINLOOP_H
#define IRQRES_MAINLOOP_H

#include "daemon.h"

/* Sets everything up, serves until a signal ends it, and tears down in reverse order.
 * Returns the exit code (0 or EXIT_REFUSED); the caller restores. */
int mainloop_run(struct daemon *d);

#endif /* IRQRES_MAINLOOP_H */
