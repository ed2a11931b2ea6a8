/* SPDX-License-Identifier: GPL-2.0-only */
/* irqres.c - what every module shares (irqres.h): the filesystem roots it reads and writes
 * under. */
#include "irqres.h"
#include "fileio.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

struct irqres_paths irqres_paths = {
	.proc = "/proc",
	.sys = "/sys",
	.cgroup = "/sys/fs/cgroup",
	.run = "/run/irqres",
};

void irqres_paths_default(void)
{
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "/proc");
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "/sys");
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "/sys/fs/cgroup");
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "/run/irqres");
}

bool irqres_paths_real_proc(void)
{
	return strcmp(irqres_paths.proc, "/proc") == 0;
}

int irqres_kernel_release(int *major, int *minor)
{
	char path[PATH_MAX], buf[64];
	int rc;

	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", irqres_paths.proc);
	rc = fileio_read_value(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	return sscanf(buf, "%d.%d", major, minor) == 2 ? 0 : -EINVAL;
}
