/* SPDX-License-Identifier: GPL-2.0-only */
/* rt_runtime.c - sched_rt_runtime_us, the switch of admission control; see rt_runtime.h. */
#include "rt_runtime.h"
#include "fileio.h"
#include "log.h"
#include "irqres.h"
#include "plan.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
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

/*
 * Whether a write of sched_rt_runtime_us rebuilds the kernel's deadline accounting with
 * its servers counted: from 6.15 (the series that rebuilds root-domain accounting after
 * every update). 6.12.95 measured in the guest loses its fair servers from the count on
 * that rebuild (the plan, counting them, would then understate what the kernel admits);
 * 6.18.44 on the host keeps them. An unreadable release: no.
 */
static bool recount_keeps_servers(void)
{
	char path[PATH_MAX], buf[64];
	int major, minor;

	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", irqres_paths.proc);
	if (fileio_read_value(path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 15);
}

int rt_runtime_recount(const char *why)
{
	long long us;
	int rc = recount_keeps_servers() ? rt_runtime_read(&us) : -EOPNOTSUPP;

	if (!rc)
		rc = rt_runtime_write(us);
	if (rc)
		pr_debug("SCHED_DEADLINE bandwidth not recounted (%s): sched_rt_runtime_us: %s", why,
			 strerror(-rc));
	else
		pr_debug("SCHED_DEADLINE bandwidth recounted (%s)", why);
	return rc;
}
