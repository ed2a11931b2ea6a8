/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * plan_report.h - a plan (plan.h) for people (irqresd --dry-run, the text reply of
 * plan/apply) and for programs (PLAN of docs/protocol.md). Reading a plan changes nothing.
 */
#ifndef IRQRES_PLAN_REPORT_H
#define IRQRES_PLAN_REPORT_H

#include "json.h"
#include "plan.h"

#include <stdio.h>

/* One line on the plan as a whole: "the kernel will accept it", ... */
const char *plan_report_summary(const struct plan *plan);
/* "kernel" or "counted". */
const char *plan_report_bw_source(enum plan_bw_source src);

/* The human report (irqresd --dry-run); analysis/irqres/plan.py renders the same text
 * from plan_report_json()'s JSON, so both change together. */
void plan_report_text(const struct plan *plan, FILE *f);
/* PLAN of docs/protocol.md as one JSON value into j (the caller checks json_error()). */
void plan_report_json(const struct plan *plan, struct json *j);

#endif /* IRQRES_PLAN_REPORT_H */
