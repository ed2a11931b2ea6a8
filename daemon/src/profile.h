/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.h - reads and validates a YAML profile (docs/profile.md) with libyaml.
 *
 * Every rule of docs/profile.md is checked here, before anything else runs: a profile
 * that loads is complete (defaults filled) and consistent.  Errors are one line,
 * "file:line:col: message" (1-based, from libyaml's marks), naming the key or target.
 */
#ifndef IRQRES_PROFILE_H
#define IRQRES_PROFILE_H

#include "dlcheck.h"
#include "irqres.h"

#define PROFILE_ADAPTIVE_SAMPLE_NS 10000000ULL	/* adaptive defaults (docs/profile.md) */
#define PROFILE_ADAPTIVE_GAIN 0.25
#define PROFILE_ADAPTIVE_WINDOW 100U
#define PROFILE_ADAPTIVE_WINDOW_MAX 100000U
#define PROFILE_ADAPTIVE_DEFAULT_JOB_NS 20000ULL
#define PROFILE_ADAPTIVE_HYSTERESIS_NS 0ULL
/* Bounds on what one profile may ask for, so that no profile can make a plan costly. */
#define PROFILE_TARGETS_MAX 256
#define PROFILE_IDS_MAX 1024		/* irq, pid, comm, port and cpu entries, all targets */

/*
 * Reads @path into *@prof.  Returns 0, or -errno with a message in @err:
 * -ENOENT/-EACCES/... when the file cannot be read ("path: cannot open: ..."),
 * -EINVAL when it is not a valid profile ("path:line:col: message").
 * On failure *@prof is left empty (nothing to free, profile_free() is still safe).
 */
int profile_load(const char *path, struct profile *prof, char *err, size_t errlen);

/* The same for a profile held in memory; @name stands for the file in messages. */
int profile_parse(const char *buf, size_t len, const char *name, struct profile *prof,
		  char *err, size_t errlen);

/* Frees everything a profile owns and leaves it empty.  Safe on an empty profile. */
void profile_free(struct profile *prof);

/* Whether some target of @prof is coupled (serves: without a reservation, couple.h). */
bool profile_has_coupled(const struct profile *prof);

/* The index of the target called @name, or -1. */
int profile_find_target(const struct profile *prof, const char *name);

enum profile_buffer_verdict {
	PROFILE_BUFFER_UNKNOWN,		/* min_interarrival or buffer not given */
	PROFILE_BUFFER_OK,		/* (T - Q) / P < N_c */
	PROFILE_BUFFER_VIOLATED,
};

/* The buffering check (T - Q)/P < N_c of @t for a budget @runtime_ns every @period_ns. */
enum profile_buffer_verdict profile_buffer_check(const struct target *t, uint64_t runtime_ns,
						 uint64_t period_ns);
/* "ok", "violated" or "unknown" (the PLAN's buffer_check field). */
const char *profile_buffer_verdict_name(enum profile_buffer_verdict v);

/*
 * The effective adaptive clamps of @t for period @period_ns.  Below: the largest of
 * min_runtime (1 us when not given), the smallest Q with (T - Q)/P < N_c when P and N_c
 * are known (buffering.h), and the kernel's DLCHECK_RUNTIME_MIN_NS.  Above: max_runtime
 * when given, else the deadline scaled to @period_ns (D keeps its ratio to T).
 */
uint64_t profile_adaptive_min_runtime(const struct target *t, uint64_t period_ns);
uint64_t profile_adaptive_max_runtime(const struct target *t, uint64_t period_ns);

#endif
