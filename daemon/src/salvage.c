/* SPDX-License-Identifier: GPL-2.0-only */
/* salvage.c - restoring from a damaged state file; see salvage.h. */
#include "salvage.h"
#include "affinity.h"
#include "cpuset.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int salvage_begin(struct state *st)
{
	struct cpuset_part *p;
	size_t n;
	int rc = cpuset_partitions_scan(&p, &n);

	affinity_rederive_irq(true);
	if (rc == -ENOENT)
		return 0;	/* no cgroup v2 root: no partition */
	if (rc < 0) {
		pr_err("damaged state file: cannot look for irqres's partitions under %s: %s",
		       irqres_paths.cgroup, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!p[i].owned || state_find_partition(st, p[i].name))
			continue;
		pr_warn("partition %s: no intact record names it; irqres owns it: it is removed "
			"once it holds no task", p[i].name);
		rc = state_add_partition(st, p[i].name, true);
		if (rc < 0)
			pr_err("partition %s: %s", p[i].name, strerror(-rc));
	}
	free(p);
	return rc;
}

void salvage_end(void)
{
	affinity_rederive_irq(false);
}
