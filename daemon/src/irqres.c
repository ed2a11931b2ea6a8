/* SPDX-License-Identifier: GPL-2.0-only */
/* irqres.c - what every module shares (irqres.h): the filesystem roots it reads and writes
 * under. */
#include "irqres.h"

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
