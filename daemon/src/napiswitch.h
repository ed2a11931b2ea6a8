/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * napiswitch.h - threaded NAPI switched on for the interfaces a profile names with
 * threaded_napi: true, and given back.
 *
 * Writing 1 to /sys/class/net/IF/threaded makes the kernel poll each NAPI instance of IF
 * in a kthread of its own, napi/<IF>-<id> (napi.h finds them), instead of the NET_RX soft
 * IRQ, whose leftovers run in ksoftirqd, outside every reservation (docs/receive-path.md).
 * The kthreads exist once the write returns, so a profile's napi targets find them in
 * the same apply, once they have started: a kthread made but not yet run after its first
 * wake-up cannot be moved into a cgroup (the kernel answers EINVAL until
 * cgroup_kthread_ready()), so after a switch irqresd waits up to NAPISWITCH_SETTLE_MS for
 * them to run (docs/receive-path.md). The value before is recorded in the state file (a
 * napi_threaded record) before the write, and given back on stop, on a failed apply, by a
 * profile that no longer asks for it, and by the restore after a crash; a value someone
 * else changed since is left as it is. Paths are under irqres_paths.sys. Functions
 * return 0 or -errno.
 */
#ifndef IRQRES_NAPISWITCH_H
#define IRQRES_NAPISWITCH_H

#include "irqres.h"
#include "plan.h"
#include "state.h"

/* The interface a target switches (its interface or napi selector); NULL when it asks
 * for no switch. */
const char *napiswitch_ifname(const struct target *t);

/* Why @rc (from napiswitch_read() or a write of the threaded file) stops a switch. */
const char *napiswitch_cause(int rc);

/* True when a target of @prof (NULL: none) switches @ifname to threaded NAPI. */
bool napiswitch_profile_switches(const struct profile *prof, const char *ifname);

/*
 * /sys/class/net/@ifname/threaded: 0, 1 or 2 (threaded busy polling, 6.17+); -ENODEV no
 * such interface, -ENOENT a kernel without threaded NAPI, -EOPNOTSUPP a driver without
 * NAPI, or another -errno.
 */
int napiswitch_read(const char *ifname);
/*
 * Whether every interface @prof switches can be switched: it exists, has NAPI instances,
 * and its threaded file is writable. The first problem goes to @err, naming the
 * interface, the target and the cause.
 */
int napiswitch_check(const struct profile *prof, char *err, size_t errlen);
/*
 * Switches each interface @prof asks for to threaded NAPI (each recorded before it is
 * written; one already threaded is left as it is, unrecorded). All or nothing: on
 * failure the interfaces it switched are given back, and @err says why.
 */
int napiswitch_on(const struct profile *prof, struct state *st, char *err, size_t errlen);
/* How long napiswitch_on() waits for the kthreads a switch made to start. */
#define NAPISWITCH_SETTLE_MS 1000
/*
 * Whether every threaded NAPI kthread of @ifname has run since its first wake-up (from
 * /proc/PID/schedstat's run count and /proc/PID/stat's state): 1 yes (also when it has
 * none), 0 not yet (@pending, when not NULL, names the first such kthread), or -errno.
 */
int napiswitch_started(const char *ifname, char *pending, size_t len);
/*
 * Gives back the interfaces st records from index @from on that @keep (a profile in
 * force; NULL: none) does not switch; best effort, each logged. Returns the first error.
 */
int napiswitch_restore(struct state *st, const struct profile *keep, size_t from);
/* The plan's errors (napiswitch_check()) and a warning for each interface applying the
 * profile will switch. */
int napiswitch_plan_notes(struct plan *plan, const struct profile *prof);

#endif
