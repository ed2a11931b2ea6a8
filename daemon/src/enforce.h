/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * enforce.h - how the kernel enforces a SCHED_DEADLINE budget, and the HRTICK_DL switch.
 *
 * The kernel charges a deadline task's runtime and throttles it when the runtime is
 * spent, but it looks only at the scheduler tick (every 1/HZ) unless the sched feature
 * HRTICK_DL is on: then each time the task is picked an hrtimer is armed for the runtime
 * it has left (never less than 10 us, hrtick_start()), provided high-resolution timers are
 * active on the CPU and the kernel has CONFIG_SCHED_HRTICK. A budget may thus be overrun
 * by up to one enforcement granule per period (the kernel charges the overrun to the next
 * period, so the long-run bandwidth holds, but one period may see Q plus a granule):
 *     tick:   granule = 1/HZ           (4 ms at Debian's HZ=250)
 *     hrtick: granule = max(hrtimer resolution, 10 us)
 * A budget "within a few granules" of its enforcement is one with Q < ENFORCE_FEW_GRANULES
 * granules (the overrun may exceed half the budget) or a granule above
 * ENFORCE_PERIOD_SHARE_PCT % of T (one period may take that much more CPU than Q/T
 * promises): the plan warns about each such target.
 *
 * The facts, under the settable roots of irqres.h (and the boot directory below):
 *  - HRTICK_DL: <sys>/kernel/debug/sched/features (5.13+) or <sys>/kernel/debug/
 *    sched_features (older), one line of names, NO_<name> for a feature that is off;
 *  - HZ: CONFIG_HZ in <boot>/config-<release> (release from <proc>/sys/kernel/osrelease),
 *    else measured from <proc>/timer_list: jiffies start at 2^32 - 300 * HZ on 64-bit
 *    kernels, so jiffies - 2^32 = HZ * (now - 300 s), which picks one of the Kconfig
 *    values 100, 250, 300, 1000 (not within ~25 s of the 300th second of uptime);
 *  - high-resolution timers: every CPU's ".hres_active" in <proc>/timer_list and the
 *    ".resolution" of its first clock; CONFIG_SCHED_HRTICK from the config file.
 * Reading changes nothing. Switching HRTICK_DL on is recorded in the state file first
 * (its sched_feature record), and given back on stop, restore and after a crash only when
 * nobody changed it since. Functions return 0 or -errno.
 */
#ifndef IRQRES_ENFORCE_H
#define IRQRES_ENFORCE_H

#include "json.h"
#include "state.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define ENFORCE_HRTICK_MIN_NS 10000ULL	/* hrtick_start(): no shorter slice */
#define ENFORCE_FEW_GRANULES 2		/* warn when Q < 2 granules */
#define ENFORCE_PERIOD_SHARE_PCT 10	/* or when a granule is above 10 % of T */
#define ENFORCE_FEATURE "HRTICK_DL"

struct plan;
struct plan_env;

/* What the machine says (enforce_env_read()); -1 in an int means unknown. */
struct enforce_env {
	char features_path[320];	/* the sched features file, where looked for */
	int hrtick_dl;			/* 1 on, 0 off, -1 unknown (features_err says why) */
	char features_err[800];
	uint64_t hz;			/* 0 unknown */
	char hz_source[448];		/* where HZ comes from */
	int hres;			/* 1 active on every CPU, 0 not on some, -1 unknown */
	uint64_t hres_ns;		/* hrtimer resolution, 0 unknown */
	int sched_hrtick;		/* CONFIG_SCHED_HRTICK: 1, 0, -1 unknown */
};

enum enforce_mode { ENFORCE_TICK, ENFORCE_HRTICK };

/* What applying a profile does about HRTICK_DL. */
enum enforce_action {
	ENFORCE_KEEP,		/* the profile leaves it (enforcement: keep) */
	ENFORCE_SWITCH_ON,	/* irqres will switch it on (enforcement: hrtick) */
	ENFORCE_ALREADY_ON,	/* the profile asks, it is on already */
	ENFORCE_GIVE_BACK,	/* irqres switched it on for a profile before: goes back */
	ENFORCE_IMPOSSIBLE,	/* the profile asks, the kernel cannot (why says so) */
};

/* How the reservations of a plan will be enforced. */
struct enforce_plan {
	bool known;			/* the facts were read (a full plan) */
	bool requested;			/* the profile says enforcement: hrtick */
	enum enforce_mode mode;
	enum enforce_action action;
	uint64_t granule_ns;		/* the worst overrun per period, 0 unknown */
	char why[1024];			/* ENFORCE_IMPOSSIBLE: the reason */
	struct enforce_env env;
};

/* The directory of the kernel's config-<release> files, default "/boot" (tests). */
void enforce_set_boot_dir(const char *dir);
/* Reads every fact; a fact that cannot be read stays unknown (never an error). */
void enforce_env_read(struct enforce_env *e);
/* Parsers for what the files hold (tests): 1 on, 0 off, -ENOENT not listed. */
int enforce_features_parse(const char *text, const char *name);
/* HZ from a jiffies value and CLOCK_MONOTONIC ns, 0 when it is not one unique value. */
uint64_t enforce_hz_from_jiffies(unsigned long long jiffies, uint64_t now_ns);

/* The decision for a profile that wants hrtick or not; a profile that does not, while
 * this irqresd holds HRTICK_DL switched on for an earlier one, gives it back. */
void enforce_decide(const struct enforce_env *e, bool want_hrtick, struct enforce_plan *p);
/* 1 with a warning in buf when Q or T is within a few granules (see above), else 0. */
int enforce_budget_note(const struct enforce_plan *p, uint64_t runtime_ns, uint64_t period_ns,
			char *buf, size_t len);
/* Fills plan->enforce from env (nothing when env->enforce_read is false) and adds the
 * plan's warnings, and its error (plan not feasible) when the profile asks for what the
 * kernel cannot do. */
int enforce_plan_notes(struct plan *plan, const struct plan_env *env);

/* The paragraph of the plan report (text; the JSON carries it as "text"). */
void enforce_report_text(const struct enforce_plan *p, FILE *f);
/* The "enforcement" object of PLAN (docs/protocol.md) into j. */
void enforce_report_json(const struct enforce_plan *p, struct json *j);
/* The "enforcement" object of STATUS: what the kernel does now and what irqres holds. */
void enforce_status_json(const struct state *st, bool requested, struct json *j);
/* Names for JSON and logs. */
const char *enforce_mode_name(enum enforce_mode m);
const char *enforce_action_name(enum enforce_action a);

/* Switches HRTICK_DL on (recorded in st first), unless it is on already or st holds a
 * record (irqres switched it on before: someone who turned it off since is obeyed). */
int enforce_hrtick_on(struct state *st, char *err, size_t errlen);
/* What applying a plan does about HRTICK_DL: enforce_hrtick_on() when p says
 * ENFORCE_SWITCH_ON; *switched tells whether this call recorded it (so an apply that fails
 * afterwards gives it back with enforce_restore()). */
int enforce_apply(const struct enforce_plan *p, struct state *st, bool *switched, char *err,
		  size_t errlen);
/* Gives HRTICK_DL its recorded value back when it still has the one irqres set (else
 * leaves it, logged), and forgets the record. -errno (record kept) when the file cannot
 * be read or written. */
int enforce_restore(struct state *st);

#endif /* IRQRES_ENFORCE_H */
