/* SPDX-License-Identifier: GPL-2.0-only */
/* dl.c - sched_getattr/sched_setattr through syscall(2); see dl.h. */
#include "dl.h"
#include "units.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int dl_get(pid_t pid, struct dl_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	if (syscall(SYS_sched_getattr, pid, attr, (unsigned int)sizeof(*attr), 0U) < 0)
		return -errno;
	return 0;
}

int dl_set(pid_t pid, const struct dl_attr *attr)
{
	struct dl_attr a = *attr;

	a.size = sizeof(a);
	if (syscall(SYS_sched_setattr, pid, &a, 0U) < 0)
		return -errno;
	return 0;
}

int dl_set_deadline(pid_t pid, uint64_t runtime_ns, uint64_t deadline_ns, uint64_t period_ns)
{
	struct dl_attr a = {
		.sched_policy = SCHED_DEADLINE,
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
		.sched_runtime = runtime_ns,
		.sched_deadline = deadline_ns,
		.sched_period = period_ns,
	};

	if (runtime_ns == 0 || runtime_ns > deadline_ns || deadline_ns > period_ns)
		return -EINVAL;
	return dl_set(pid, &a);
}

uint64_t dl_to_ratio(uint64_t period_ns, uint64_t runtime_ns)
{
	if (period_ns == 0)
		return 0;
	return (uint64_t)(((unsigned __int128)runtime_ns << DL_BW_SHIFT) / period_ns);
}

uint64_t dl_deadline_rescale(uint64_t deadline_ns, uint64_t period_ns, uint64_t new_period_ns)
{
	unsigned __int128 v;

	if (period_ns == 0 || period_ns == new_period_ns)
		return deadline_ns == 0 ? new_period_ns : deadline_ns;
	v = (unsigned __int128)deadline_ns * new_period_ns / period_ns;
	return v > new_period_ns ? new_period_ns : (uint64_t)v;
}

static const struct {
	int policy;
	const char *name;
} policies[] = {
	{ SCHED_OTHER, "other" }, { SCHED_FIFO, "fifo" }, { SCHED_RR, "rr" },
	{ SCHED_BATCH, "batch" }, { SCHED_IDLE, "idle" }, { SCHED_DEADLINE, "deadline" },
};

const char *dl_policy_name(int policy)
{
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (policies[i].policy == policy)
			return policies[i].name;
	return "unknown";
}

int dl_policy_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (strcmp(policies[i].name, name) == 0)
			return policies[i].policy;
	return -EINVAL;
}

char *dl_sched_text(int policy, int priority, int nice, uint64_t runtime_ns,
		    uint64_t deadline_ns, uint64_t period_ns, char *buf, size_t len)
{
	char q[UNITS_FMT_LEN], d[UNITS_FMT_LEN], t[UNITS_FMT_LEN];

	if (policy == SCHED_DEADLINE)
		snprintf(buf, len, "deadline %s/%s/%s",
			 units_format_duration(runtime_ns, q, sizeof(q)),
			 units_format_duration(deadline_ns, d, sizeof(d)),
			 units_format_duration(period_ns, t, sizeof(t)));
	else if (policy == SCHED_FIFO || policy == SCHED_RR)
		snprintf(buf, len, "%s %d", dl_policy_name(policy), priority);
	else
		snprintf(buf, len, "%s nice %d", dl_policy_name(policy), nice);
	return buf;
}
