/* SPDX-License-Identifier: GPL-2.0-only */
/* dlcheck.c - the kernel's rules for SCHED_DEADLINE parameters; see dlcheck.h. */
#include "dlcheck.h"
#include "fileio.h"
#include "irqres.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

static uint64_t limit_ns(const char *name, uint64_t dflt_us)
{
	char path[PATH_MAX];
	long long us;

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_deadline_period_%s_us",
		 irqres_paths.proc, name);
	if (fileio_read_ll(path, &us) || us < 0)
		us = (long long)dflt_us;
	return (uint64_t)us * 1000u;
}

void dlcheck_limits_read(struct dlcheck_limits *l)
{
	l->period_min_ns = limit_ns("min", DLCHECK_PERIOD_MIN_US);
	l->period_max_ns = limit_ns("max", DLCHECK_PERIOD_MAX_US);
}

int dlcheck_params(const struct dlcheck_limits *l, uint64_t runtime_ns, uint64_t deadline_ns,
		   uint64_t period_ns, char *why, size_t len)
{
	char a[UNITS_FMT_LEN], b[UNITS_FMT_LEN];
	const uint64_t top = 1ULL << 63;

	if (runtime_ns < DLCHECK_RUNTIME_MIN_NS)
		snprintf(why, len, "runtime %s is below the kernel's minimum of 1024ns",
			 units_format_duration(runtime_ns, a, sizeof(a)));
	else if ((deadline_ns & top) || (period_ns & top))
		snprintf(why, len, "deadline %llu ns or period %llu ns is not below 2^63 ns",
			 (unsigned long long)deadline_ns, (unsigned long long)period_ns);
	else if (runtime_ns > deadline_ns)
		snprintf(why, len, "runtime %s is larger than the deadline %s",
			 units_format_duration(runtime_ns, a, sizeof(a)),
			 units_format_duration(deadline_ns, b, sizeof(b)));
	else if (deadline_ns > period_ns)
		snprintf(why, len, "deadline %s is larger than the period %s",
			 units_format_duration(deadline_ns, a, sizeof(a)),
			 units_format_duration(period_ns, b, sizeof(b)));
	else if (period_ns < l->period_min_ns)
		snprintf(why, len, "period %s is below the kernel's minimum %s "
			 "(sched_deadline_period_min_us %llu)",
			 units_format_duration(period_ns, a, sizeof(a)),
			 units_format_duration(l->period_min_ns, b, sizeof(b)),
			 (unsigned long long)(l->period_min_ns / 1000u));
	else if (period_ns > l->period_max_ns)
		snprintf(why, len, "period %s is above the kernel's maximum %s "
			 "(sched_deadline_period_max_us %llu)",
			 units_format_duration(period_ns, a, sizeof(a)),
			 units_format_duration(l->period_max_ns, b, sizeof(b)),
			 (unsigned long long)(l->period_max_ns / 1000u));
	else
		return 0;
	return -EINVAL;
}
