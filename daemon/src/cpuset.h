/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cpuset.h - cgroup v2 cpuset partitions owned by irqres, under irqres_paths.cgroup.
 *
 * A pinned IRQ thread can only take SCHED_DEADLINE once its CPU is a root domain of its
 * own: a child group "irqres.cpu<cpulist>" with cpuset.cpus=<cpus>, cpuset.mems=<root's
 * effective mems>, cpuset.cpus.partition=root, and the thread's pid in cgroup.procs.
 * irqres owns every top-level group whose name starts with CPUSET_PREFIX.
 * Cgroup paths ("/", "/irqres.cpu0", "/system.slice/x.service") are relative to the
 * cgroup v2 root, as in /proc/PID/cgroup. Functions return 0 or -errno and, where they
 * take err/errlen, leave a message naming the object and the cause there.
 */
#ifndef IRQRES_CPUSET_H
#define IRQRES_CPUSET_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CPUSET_PREFIX "irqres.cpu"
#define CPUSET_NAME_MAX 64

/* One partition root found under the cgroup root. */
struct cpuset_part {
	char name[CPUSET_NAME_MAX];	/* directory name, e.g. "irqres.cpu0" */
	cpu_set_t cpus;			/* cpuset.cpus.effective (or cpuset.cpus) */
	bool valid;			/* cpuset.cpus.partition reads "root" */
	bool owned;			/* name starts with CPUSET_PREFIX */
};

/* cpulist ("0-3,6") <-> cpu_set_t. parse returns -EINVAL on a malformed list. */
int cpuset_list_parse(const char *s, cpu_set_t *set);
/* Writes the cpulist of set into buf ("" for an empty set); returns 0 or -ENOSPC. */
int cpuset_list_format(const cpu_set_t *set, char *buf, size_t len);
/* cpuset_list_format() for messages: buf, "?" when the list does not fit. */
const char *cpuset_list_str(const cpu_set_t *set, char *buf, size_t len);
/* Reads a cpulist file (e.g. /sys/devices/system/cpu/online); empty file = empty set. */
int cpuset_list_read(const char *path, cpu_set_t *set);

/* Is irqres_paths.cgroup a cgroup v2 root with the cpuset controller available? */
int cpuset_check(char *err, size_t errlen);
/* Enables +cpuset in the root's cgroup.subtree_control; *added tells whether irqres
 * added it (restore then takes it away again with cpuset_disable()). */
int cpuset_enable(bool *added, char *err, size_t errlen);
int cpuset_disable(void);

/* "irqres.cpu<cpulist>" for cpus. */
int cpuset_partition_name(const cpu_set_t *cpus, char *name, size_t len);
/* Creates, or reuses when it exists with the same cpus, the partition for cpus; checks
 * that cpuset.cpus.partition reads back "root". name receives its directory name and
 * *created whether this call made the directory. */
int cpuset_partition_create(const cpu_set_t *cpus, char *name, size_t namelen, bool *created,
			    char *err, size_t errlen);
/* Makes the kernel count the deadline bandwidth of its root domains again from the tasks
 * (from 6.19 each in the domain of its cgroup's CPUs): the partition a member, then a
 * root again. Each write rebuilds the root domains and rewrites the affinity of the root
 * cgroup's tasks, as creating the partition did. 0, or -errno with err naming what failed
 * (the partition then left as the kernel took the last write). */
int cpuset_partition_recount(const char *name, char *err, size_t errlen);
/* Removes an irqres partition directory; -EBUSY while it holds tasks. */
int cpuset_partition_remove(const char *name);
/* Absolute directory of a group ("/sys/fs/cgroup/irqres.cpu0"). */
int cpuset_group_dir(const char *cgpath, char *buf, size_t len);
/* Every partition root directly under the cgroup root (owned or not). */
int cpuset_partitions_scan(struct cpuset_part **parts, size_t *n);

/* Moves pid into the group cgpath (writes cgroup.procs). PF_NO_SETAFFINITY kernel
 * threads give -EINVAL with a message saying so. */
int cpuset_move(pid_t pid, const char *cgpath, char *err, size_t errlen);
/* 1 when pid may be moved into a cpuset, 0 when it is marked PF_NO_SETAFFINITY
 * (/proc/PID/stat flags), or -errno. */
int cpuset_pid_movable(pid_t pid);
/* The cgroup v2 path of pid from /proc/PID/cgroup ("0::<path>"). */
int cpuset_pid_cgroup(pid_t pid, char *path, size_t len);

#endif /* IRQRES_CPUSET_H */
