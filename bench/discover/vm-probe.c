/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vm-probe.c - prints what discover.c and match.c see on the machine it runs on: every
 * IRQ thread, the number of user threads, and for each profile given, the threads each
 * target selects and the targets that select nothing.  vm-probe.sh runs it inside the
 * PREEMPT_RT guest, where the IRQ threads are real.
 */
#include <stdio.h>
#include <string.h>
#include "discover.h"
#include "match.h"
#include "profile.h"

int main(int argc, char **argv)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	struct match_list m = { 0 };
	struct match_unmatched u = { 0 };
	struct profile p;
	char err[512], desc[512] = "";
	size_t i;
	int rc, a;

	rc = discover_scan_irq(&irq, false);
	printf("scan_irq rc=%d n=%zu\n", rc, irq.n);
	for (i = 0; i < irq.n; i++) {
		struct thread_info *t = &irq.v[i];
		printf("  pid %d comm %-16s irq %d secondary %d actions '%s' policy %d prio %d "
		       "cpus %d cgroup '%s'\n", t->pid, t->comm, t->irq, t->secondary, t->actions,
		       t->policy, t->priority, CPU_COUNT(&t->affinity), t->cgroup);
	}
	rc = discover_scan_tasks(&tasks);
	printf("scan_tasks rc=%d n=%zu\n", rc, tasks.n);
	for (a = 1; a < argc; a++) {
		if (profile_load(argv[a], &p, err, sizeof(err))) {
			printf("%s\n", err);
			continue;
		}
		match_list_free(&m);
		match_unmatched_free(&u);
		rc = match_profile(&p, &irq, &tasks, &m, &u, err, sizeof(err));
		printf("match %s rc=%d %s\n", argv[a], rc, rc ? err : "");
		for (i = 0; i < m.n; i++)
			printf("  target %s -> pid %d %s actions '%s'\n",
			       p.targets[m.v[i].target].name, m.v[i].thread.pid, m.v[i].thread.comm,
			       m.v[i].thread.actions);
		desc[0] = '\0';
		match_describe_unmatched(&p, &u, desc, sizeof(desc));
		printf("  unmatched: %s\n", desc);
		profile_free(&p);
	}
	match_list_free(&m);
	match_unmatched_free(&u);
	discover_list_free(&irq);
	discover_list_free(&tasks);
	return 0;
}
