/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * oneshot.h - the modes of irqresd that answer and exit, without the daemon loop:
 *   --dry-run  the plan of a profile, as text or --json; applies nothing
 *   --reload   asks the running daemon to reload (systemd's ExecReload=), waits for it
 *   --verify   whether the system holds a profile now
 *   --status   what RUN_DIR/state records, read only, each thread with its scheduling now
 * Each writes its answer to stdout and its failures to the log.
 */
#ifndef IRQRES_ONESHOT_H
#define IRQRES_ONESHOT_H

#include "daemon.h"

/* Runs the mode d->opt asks for: its exit code (0, EXIT_REFUSED, EXIT_USAGE), or -1 when
 * d->opt asks for none of them (the caller goes on to apply and serve). */
int oneshot_run(struct daemon *d);

#endif /* IRQRES_ONESHOT_H */
