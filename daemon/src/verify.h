/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * verify.h - does the running system hold a profile? (irqres verify, like tuned-adm verify)
 *
 * Every thread the profile selects now must be SCHED_DEADLINE with its target's runtime,
 * deadline and period (an adaptive target's runtime anywhere between its clamps) and sit
 * in the cpuset partition its reservation needs; every target must select a thread.
 * Each difference is one line naming the target, the thread and what differs. Checking
 * changes nothing.
 */
#ifndef IRQRES_VERIFY_H
#define IRQRES_VERIFY_H

#include "couple.h"
#include "irqres.h"
#include "json.h"

#include <stdio.h>

struct verify_result {
	size_t checked;			/* threads the profile selects */
	size_t by_set_budget;		/* of them, checked against a set-budget pid:N */
	char **diffs;			/* one message per difference */
	size_t n_diffs, diffs_cap;
	struct couple seen;		/* whom targets with serves: serve (couple.h) */
};

/* The reservation irqresd holds for one thread since a `set-budget pid:N`: irqres verify
 * of the profile in force expects it there, not the thread's target's. */
struct verify_budget {
	pid_t pid;
	uint64_t runtime_ns, deadline_ns, period_ns;
};

/* 0 with the result (differences or none), or -errno with a message in err; budgets
 * (n_budgets of them, or NULL) replace the target's reservation for their threads. */
int verify_profile(const struct profile *prof, const struct verify_budget *budgets,
		   size_t n_budgets, struct verify_result *res, char *err, size_t errlen);
void verify_result_free(struct verify_result *res);

/* {"profile":..,"consistent":bool,"checked":N,"differences":[..]} members into the open
 * object j. */
void verify_write_json(const struct profile *prof, const struct verify_result *res,
		       struct json *j);
/* "Verified PROFILE: N threads as the profile says" (", M as the last set-budget
 * says") or the differences, one a line. */
void verify_print_text(const struct profile *prof, const struct verify_result *res, FILE *f);

#endif
