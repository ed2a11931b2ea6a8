/* SPDX-License-Identifier: GPL-2.0-only */
/* thread_status.c - a reserved thread's members in status JSON; see thread_status.h. */
#include "thread_status.h"
#include "cpuset.h"

#include <limits.h>

void thread_status_cpuset(const char *partition, struct json *j)
{
	char dir[PATH_MAX];

	if (!partition || !partition[0])
		json_kv_null(j, "cpuset");
	else if (cpuset_group_dir(partition, dir, sizeof(dir)) == 0)
		json_kv_str(j, "cpuset", dir);
	else
		json_kv_str(j, "cpuset", partition);
}

static void write_budget(const struct dl_attr *a, struct json *j)
{
	json_kv_uint(j, "runtime_ns", a->sched_runtime);
	json_kv_uint(j, "period_ns", a->sched_period);
	json_kv_uint(j, "deadline_ns", a->sched_deadline);
}

void thread_status_members(const struct thread_status *s, struct json *j)
{
	json_kv_int(j, "pid", s->pid);
	json_kv_str(j, "comm", s->comm);
	json_kv_str(j, "cpus", s->cpus);
	json_kv_str(j, "policy", s->now ? dl_policy_name((int)s->now->sched_policy) : "gone");
	if (s->now)
		write_budget(s->now, j);
	else if (s->reserved)
		write_budget(s->reserved, j);
	json_kv_str(j, "orig_policy", dl_policy_name(s->orig_policy));
	json_kv_int(j, "orig_priority", s->orig_priority);
	thread_status_cpuset(s->partition, j);
}
