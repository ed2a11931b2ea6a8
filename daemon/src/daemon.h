/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * daemon.h - what irqresd knows at run time (struct daemon): the profile in force (whose
 * targets' budgets set-budget updates), the threads it manages and the state file; and
 * what changes it: applying a profile all or nothing, restoring everything, new threads
 * from the proc connector (daemon_on_hotplug) and the periodic rescan.
 */
#ifndef IRQRES_DAEMON_H
#define IRQRES_DAEMON_H

#include "apply.h"
#include "couple.h"
#include "ctl.h"
#include "hotplug.h"
#include "irqres.h"
#include "json.h"
#include "match.h"
#include "plan.h"
#include "profile.h"
#include "refused.h"
#include "state.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define ERRLEN 1024
#define EXIT_REFUSED 1		/* irqresd's exit code: the kernel will not / did not accept it */
#define EXIT_USAGE 2		/* irqresd's exit code: bad profile or bad option */
#define PENDING_MAX 64		/* new threads waiting to run in their partition */

struct options {
	const char *profile;
	bool dry_run, json, once, restore, reload, verify, status, netlink, verbose;
	const char *socket;
	uint64_t rescan_ns;		/* --rescan, 0 = off */
};

/* A thread the daemon manages: where it came from and the budget it has now. */
/* A SCHED_DEADLINE budget, ns. */
struct budget {
	uint64_t runtime_ns, deadline_ns, period_ns;
};

struct managed {
	size_t target;
	struct thread_info thread;
	/* A budget of its own (set-budget pid:N) when own_budget; else its target's is in
	 * force: daemon_budget() reads the one that is, never a copy. */
	bool own_budget;
	struct budget own;
	char drift[800];		/* what was found changed behind irqresd's back, "" none */
	bool taken;			/* another irqresd or tool holds it (owner.h): left to it */
};


/* A new thread moved into its partition, waiting to run there before SCHED_DEADLINE is
 * accepted (apply.h); the main loop tries again at next_ns, backing off. */
struct pending {
	struct apply_pending ap;
	size_t target;
	uint64_t first_ns, next_ns, delay_ns;
	bool told;			/* the wait was logged (after APPLY_MOVED_WAIT_NS) */
};

struct daemon {
	struct options opt;
	char socket_path[PATH_MAX];
	struct profile prof;
	bool have_prof;
	struct state st;
	struct managed *m;
	size_t n_m, cap_m;
	struct refused_list refused;	/* hotplugged threads whose reservation failed */
	struct pending pending[PENDING_MAX];
	size_t n_pending;
	struct couple couple;		/* coupled targets' threads, whom targets serve */
	struct ctl_server *ctl;
	struct hotplug *hp;
	int sigfd, timerfd, lockfd;
	uint64_t rescan_ns, watchdog_ns, tick_ns, next_rescan, next_watchdog;
	bool rescan_now;
	bool events_lost;		/* the proc connector overflowed: list every task */
	unsigned long n_rescans;
	bool quit;
};

/* CLOCK_MONOTONIC in ns */
uint64_t daemon_now_ns(void);

/* Scans, matches and plans prof: 0 with a plan, or -errno with err set (see daemon.c). */
int daemon_resolve(const struct profile *prof, struct match_list *matches, struct plan *plan,
		   char *err, size_t errlen);

/* The managed thread pid, or NULL. */
struct managed *daemon_managed_find(struct daemon *d, pid_t pid);

/* The budget target @ti of the profile in force gives its threads. */
struct budget daemon_target_budget(const struct daemon *d, size_t ti);
/* The budget in force for @m: its own (set-budget pid:N), else its target's. */
struct budget daemon_budget(const struct daemon *d, const struct managed *m);

/* Forgets the profile in force and the threads it manages (restores nothing). */
void daemon_drop_profile(struct daemon *d);

/* Restores every thread in the state file: the number restored, or -errno (logged). */
int daemon_restore_everything(struct daemon *d);

/*
 * Applies the profile at path (text NULL) or held in text (len bytes; path names it),
 * all or nothing (see daemon.c). 0, or -errno with err set: -EINVAL a bad profile,
 * -ENOENT it matches no thread, -EBUSY the plan is not feasible.
 */
int daemon_apply(struct daemon *d, const char *path, const char *text, size_t len,
		 bool may_wait, struct json *plan_out, char *err, size_t errlen);

/*
 * Reload (SIGHUP, systemctl reload, the reload request): re-reads irqresd's own profile
 * (-p) and applies it, whatever is in force now (a profile from `irqres apply`, or none
 * after `restore`). Without -p there is nothing to re-read: 0. On failure what was in
 * force stays, and -errno with err set.
 */
int daemon_reload(struct daemon *d, char *err, size_t errlen);

/* The hotplug_fn of the daemon (ctx is the struct daemon). */
enum hotplug_verdict daemon_on_hotplug(void *ctx, enum hotplug_event ev, pid_t pid, pid_t ppid);

/* Milliseconds until a pending thread is due (0 now), -1 when none waits. */
int daemon_pending_timeout_ms(const struct daemon *d);
/* Tries every pending thread that is due: reserved (managed from now on); still EPERM:
 * again later, for as long as it takes the thread to run in its partition (logged once
 * after APPLY_MOVED_WAIT_NS); gone: forgotten; another refusal: put back and refused. */
void daemon_run_pending(struct daemon *d);

/* Reserves the threads the profile selects that the daemon does not manage yet, and
 * checks the managed ones for drift (daemon_check_drift). */
void daemon_rescan(struct daemon *d);
/* Whom the targets with serves: serve, and the coupled targets' threads set to their
 * priority (couple.h): on every rescan (@irq: the device threads it just listed) and
 * after an apply (NULL: listed here). */
void daemon_couple(struct daemon *d, const struct thread_list *irq);
/* Forgets the managed threads of @target (-1: of every target) that have exited (or whose
 * pid was reused), as an exit event would: how many. */
size_t daemon_forget_gone(struct daemon *d, int target);

/*
 * Drift: a managed thread whose scheduling (policy, runtime, deadline, period) or cgroup
 * (the partition irqres put it in) someone else changed. The kernel sends no event for
 * either (the proc connector reports fork/exec/comm/exit only), so the rescan looks.
 * Each drift is logged once; with the profile's drift: reapply (the default) the thread
 * gets its reservation back, with drift: report it is left and shown in status (and
 * `irqres verify` fails) until it is back in line. A thread whose scheduling another
 * irqresd or tool set (owner.h) is left to it whatever drift says, shown as taken, and
 * taken back only once it is free again or back in line. Returns how many drifted.
 */
int daemon_check_drift(struct daemon *d);

#endif
