/* SPDX-License-Identifier: GPL-2.0-only */
/* rt_runtime.c - sched_rt_runtime_us, the switch of admission control; see rt_runtime.h. */
#include "rt_runtime.h"
#include "fileio.h"
#include "log.h"
#include "plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static int rt_runtime_path(char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/sys/kernel/sched_rt_runtime_us", irqres_paths.proc);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int rt_runtime_read(long long *us)
{
	char path[PATH_MAX];
	int rc = rt_runtime_path(path, sizeof(path));

	return rc ? rc : fileio_read_ll(path, us);
}

int rt_runtime_write(long long us)
{
	char path[PATH_MAX], val[32];
	int rc = rt_runtime_path(path, sizeof(path));

	if (rc)
		return rc;
	snprintf(val, sizeof(val), "%lld", us);
	plan_limits_changed();
	return fileio_write(path, val, false);
}


int rt_runtime_restore(struct state *st, long long us)
{
	int rc = rt_runtime_write(us);

	if (rc) {
		pr_err("cannot put sched_rt_runtime_us back to %lld: %s", us, strerror(-rc));
		return rc;
	}
	pr_info("admission control back on (sched_rt_runtime_us = %lld)", us);
	state_clear_rt_runtime(st);
	return 0;
}
