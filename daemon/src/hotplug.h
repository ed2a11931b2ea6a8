/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hotplug.h - new threads as they appear: the proc connector (NETLINK_CONNECTOR,
 * CN_IDX_PROC) reports FORK, EXEC, COMM and EXIT events; the daemon checks each new or
 * renamed thread against its profile. A kernel thread's name is set right after it is
 * forked, so a handler that finds a name that is not final yet asks for a retry, and
 * hotplug calls it again a little later (1, 2, 4, ... ms, for up to HOTPLUG_RETRY_MAX_NS).
 * The same serves a new IRQ thread whose IRQ has no effective affinity yet.
 * The periodic rescan (daemon.c, --rescan) is the fallback when events are lost or the
 * connector is not available.
 */
#ifndef IRQRES_HOTPLUG_H
#define IRQRES_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HOTPLUG_RETRY_MAX_NS (500 * 1000 * 1000ULL)	/* slow (emulated) machines too */
#define HOTPLUG_RETRY_SLOTS 256

enum hotplug_event {
	HOTPLUG_FORK,		/* a new thread (pid = the child's tid, ppid = its parent's tgid) */
	HOTPLUG_EXEC,
	HOTPLUG_COMM,
	HOTPLUG_EXIT,
	HOTPLUG_RETRY,		/* a retry that a handler asked for */
	HOTPLUG_OVERRUN,	/* events were lost (ENOBUFS): rescan everything now */
};

enum hotplug_verdict {
	HOTPLUG_DONE,		/* handled (or not interesting) */
	HOTPLUG_AGAIN,		/* the thread's name may not be final: call me again soon */
};

typedef enum hotplug_verdict (*hotplug_fn)(void *ctx, enum hotplug_event ev, pid_t pid,
					   pid_t ppid);

struct hotplug;

/*
 * Opens and subscribes the proc connector socket when netlink is true. Returns 0 or
 * -errno (e.g. -EPERM without CAP_NET_ADMIN, -EPROTONOSUPPORT without the connector);
 * the caller then goes on with rescans only.
 */
int hotplug_init(struct hotplug **hp, bool netlink, hotplug_fn fn, void *ctx);
void hotplug_fini(struct hotplug *hp);
/* The socket to poll for POLLIN, or -1 when there is none. */
int hotplug_fd(const struct hotplug *hp);
/* Reads every pending event and calls fn for each. Returns the number of events or -errno. */
int hotplug_dispatch(struct hotplug *hp);
/* Milliseconds until the next retry is due (0 = now), or -1 when none is pending. */
int hotplug_retry_timeout_ms(const struct hotplug *hp);
/* Calls fn(HOTPLUG_RETRY) for every retry that is due. */
void hotplug_run_retries(struct hotplug *hp);
/* Queues a retry for pid (used by fn's HOTPLUG_AGAIN and by tests). */
int hotplug_retry_add(struct hotplug *hp, pid_t pid);

#endif /* IRQRES_HOTPLUG_H */
