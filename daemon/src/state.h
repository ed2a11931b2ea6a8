/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * state.h - the state file RUN_DIR/state: what irqresd changed and how it was before.
 *
 * Every change to the kernel is recorded (appended and fsync'd) BEFORE it is made, so a
 * crash loses nothing: the next start loads the file and restores. A thread's record keeps
 * the ORIGINAL attributes: recording a thread that is already recorded changes nothing.
 * The file format is documented in state.c. Functions return 0 or -errno.
 */
#ifndef IRQRES_STATE_H
#define IRQRES_STATE_H

#include "cpuset.h"
#include "irqres.h"

#include <stdbool.h>
#include <stdint.h>

/* One thread as it was before irqres changed it. */
struct state_thread {
	pid_t pid;
	unsigned long long starttime;	/* /proc/PID/stat field 22; a different one = pid reused */
	char comm[COMM_MAX];
	int policy, priority, nice;
	uint64_t dl_runtime_ns, dl_deadline_ns, dl_period_ns;
	uint64_t flags;			/* original sched_flags */
	char cgroup[CGROUP_PATH_MAX];	/* original cgroup v2 path, "" unknown / not moved */
	cpu_set_t affinity;
	char partition[CPUSET_NAME_MAX];	/* partition irqres moved it into, "" none */
};

/* An IRQ thread irqres did not move whose CPU affinity a partition change of irqres's
 * rewrote: what it is to have back (see affinity.h). */
struct state_owed {
	pid_t pid;
	unsigned long long starttime;
	char comm[COMM_MAX];
	cpu_set_t cpus;			/* what it is to have */
	cpu_set_t seen;			/* what irqres left it with; empty: not known yet */
};

/* A sched feature irqres switched (debugfs sched/features, see enforce.h): its value
 * before and the one irqres set; given back only while it still has the latter. */
struct state_feature {
	char name[32];
	int was, set;			/* 1 on, 0 off */
};

/* An interface irqres switched to threaded NAPI (napiswitch.h): the value of
 * /sys/class/net/IF/threaded before and the one irqres set; given back only while it
 * still has the latter. */
struct state_netdev {
	char ifname[16];		/* IFNAMSIZ */
	int was, set;			/* 0 off, 1 threaded, 2 threaded busy polling (6.17+) */
};

/* A partition irqres uses. */
struct state_partition {
	char name[CPUSET_NAME_MAX];
	bool created;			/* irqres made it: remove it on restore */
};

struct state {
	char path[512];			/* RUN_DIR/state */
	struct state_thread *threads;
	size_t n_threads, cap_threads;
	struct state_partition *parts;
	size_t n_parts, cap_parts;
	struct state_owed *owed;
	size_t n_owed, cap_owed;
	bool cpuset_added;		/* irqres enabled +cpuset in the root's subtree_control */
	bool rt_runtime_saved;		/* admission control was turned off by irqres */
	long long rt_runtime_us;	/* the original sched_rt_runtime_us */
	bool feature_saved;		/* irqres switched a sched feature */
	struct state_feature feature;
	struct state_netdev *netdevs;	/* interfaces irqres switched to threaded NAPI */
	size_t n_netdevs, cap_netdevs;
	/* the file is left as it is (damaged, or on a read-only file system): records
	 * change in memory only, nothing is written, the file is never deleted */
	bool frozen;
	unsigned int damaged;		/* problems state_open() found in the file */
	bool legacy;			/* a version 1 file: rewritten whole, never appended to */
	unsigned int batch;		/* state_batch_begin() depth */
	bool dirty;			/* a rewrite waits for the end of the batch */
};

void state_init(struct state *st);
/*
 * Creates irqres_paths.run (0700) and loads RUN_DIR/state when it exists (after a crash);
 * a missing file is an empty state. A damaged file (see state_load()) loads what it can,
 * sets st->damaged and st->frozen (the file stays as it is, for whoever must account for
 * what it could not say) and returns 0 with the first problem in err.
 */
int state_open(struct state *st, char *err, size_t errlen);
/*
 * Parses a state file into st (st must be initialised). Problems are reported with their
 * line number in err (the first one) and through the log; the records around a bad line
 * are still read. A problem is a bad record (a failed checksum included), an unfinished
 * last line, a file that is empty, has no header, or holds no record (irqresd never
 * leaves such a file). Returns the number of problems (>= 0) or -errno when the file
 * cannot be read.
 */
int state_load(struct state *st, const char *path, char *err, size_t errlen);
/*
 * Between these, forgetting records rewrites the file once, at the end, not once per
 * record (a restore of n threads: O(n), not O(n^2) written lines). Records added are
 * still written before they return. Batches nest.
 */
void state_batch_begin(struct state *st);
int state_batch_end(struct state *st);
bool state_empty(const struct state *st);

/* Each record is appended and fsync'd before it returns. A thread already recorded
 * keeps its record; only a partition it is now moved into (and the cgroup it leaves)
 * is added when the record had none. */
int state_add_thread(struct state *st, const struct state_thread *t);
int state_add_partition(struct state *st, const char *name, bool created);
int state_set_cpuset_added(struct state *st);
int state_set_rt_runtime(struct state *st, long long orig_us);
/* Records the sched feature irqres is about to switch (the first record wins). */
int state_set_feature(struct state *st, const struct state_feature *f);
/* Records the interface irqres is about to switch (the first record of a name wins). */
int state_add_netdev(struct state *st, const struct state_netdev *n);
/* Replaces the owed affinities with v[0..n) (a rewrite, skipped when they are the same). */
int state_set_owed(struct state *st, const struct state_owed *v, size_t n);

/* Lookups: NULL when absent. */
struct state_thread *state_find_thread(struct state *st, pid_t pid);
struct state_partition *state_find_partition(struct state *st, const char *name);
struct state_netdev *state_find_netdev(struct state *st, const char *ifname);

/* Forgetting rewrites the file atomically (temp file, fsync, rename). */
int state_forget_thread(struct state *st, pid_t pid);
int state_forget_partition(struct state *st, const char *name);
int state_clear_cpuset_added(struct state *st);
int state_clear_rt_runtime(struct state *st);
int state_clear_feature(struct state *st);
int state_forget_netdev(struct state *st, const char *ifname);
/* Deletes the file (when everything is restored). */
int state_remove(struct state *st);
void state_free(struct state *st);

#endif /* IRQRES_STATE_H */
