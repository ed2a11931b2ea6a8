/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * irqres.h - the data types that irqresd's modules pass to each other.
 *
 * Data flows one way: profile (profile.c) + threads found (discover.c) -> matches
 * (match.c) -> plan (plan.c) -> changes to the kernel (apply.c, recorded by state.c).
 * Time is integer nanoseconds (uint64_t, fields end in _ns) everywhere.
 */
#ifndef IRQRES_H
#define IRQRES_H

#include <fnmatch.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IRQRES_VERSION "0.1.0"
/* The "schema_version" member of irqresd's JSON outputs (docs/json.md): raised when a member
 * changes meaning, type or unit or goes away (new members do not raise it). */
#define IRQRES_JSON_SCHEMA 1
#define IRQRES_DAEMON_COMM "irqresd"	/* its comm: never a task target's thread */

#define TARGET_NAME_MAX 64
#define COMM_MAX 16		/* kernel TASK_COMM_LEN, including the NUL */
#define ACTIONS_MAX 256		/* full action names of one IRQ, comma separated */
#define CGROUP_PATH_MAX 512

/* Filesystem roots, settable so that unit tests run on fixture trees without root. */
struct irqres_paths {
	char proc[256];		/* default "/proc" */
	char sys[256];		/* default "/sys" */
	char cgroup[256];	/* cgroup v2 mount, default "/sys/fs/cgroup" */
	char run[256];		/* state and socket directory, default "/run/irqres" */
};
extern struct irqres_paths irqres_paths;
/* Reset every root to its default. */
void irqres_paths_default(void);
/* Is the proc root the machine's own /proc (syscalls may stand in for its files, and
 * what they change is real)? */
bool irqres_paths_real_proc(void);
/* The running kernel's version from <proc>/sys/kernel/osrelease: 0, or -errno (-EINVAL
 * when it does not start with <major>.<minor>). */
int irqres_kernel_release(int *major, int *minor);

/* What a target selects; each kind has its table of operations in target_kind.h. */
enum target_kind { TARGET_IRQ, TARGET_TASK, TARGET_NAPI, TARGET_SOFTIRQ };
enum target_mode { MODE_STATIC, MODE_ADAPTIVE };

struct adaptive_cfg {
	uint64_t sample_ns;
	double gain;
	unsigned int window;
	uint64_t default_job_ns;
	uint64_t min_runtime_ns;	/* 0: derived (buffering bound or 1 us) */
	uint64_t max_runtime_ns;	/* 0: derived (the deadline) */
	uint64_t hysteresis_ns;
};

/* A comm selector: fnmatch globs, one of which must match (a profile's comm: one glob or a
 * list); none given when n is 0. */
struct globs {
	char **v;
	size_t n;
};

/* Whether @s matches one of the globs of @g (true when @g has none). */
static inline bool globs_match(const struct globs *g, const char *s)
{
	size_t i;

	for (i = 0; i < g->n && fnmatch(g->v[i], s, 0); i++)
		;
	return !g->n || i < g->n;
}

/* Whom a target's threads serve (`serves:`, docs/process-aware.md): the task selectors of a
 * task target (comm globs, pids, cgroup prefix; all given ones must hold) or, by `port`,
 * the processes holding a UDP or TCP socket bound to one of the local ports. */
struct serves_sel {
	bool given;			/* the target has a serves: key */
	struct globs comm;
	pid_t *pids;
	size_t n_pids;
	char *cgroup;			/* cgroup v2 path prefix */
	int *ports;			/* local UDP/TCP ports */
	size_t n_ports;
};

struct target {
	char name[TARGET_NAME_MAX];
	enum target_kind kind;
	int line, col;			/* where the target starts in its file (1-based) */

	/* IRQ-thread selectors (kind == TARGET_IRQ); NULL / 0 when not given. */
	char *interface;
	int *irqs;
	size_t n_irqs;
	char *action_glob;
	char *driver;
	bool secondary;			/* also match irq/N-s-* threads; default true */
	int interface_line, irq_line, driver_line;	/* where those selectors are given */
	/* with_napi: true (with interface): the interface's threaded NAPI kthreads too,
	 * the device's whole receive path under the target's reservation. */
	bool with_napi;
	int with_napi_line;

	/* The NAPI selector (kind == TARGET_NAPI): the interface whose threaded NAPI
	 * kthreads (napi/<if>-<id>) the target takes. */
	char *napi;
	int napi_line;
	/* threaded_napi: true, on a target naming an interface (interface or napi): irqresd
	 * switches /sys/class/net/IF/threaded to 1 while the profile is in force. */
	bool threaded_napi;
	int threaded_napi_line;

	/* The softirq selector (kind == TARGET_SOFTIRQ): which per-CPU soft IRQ kthreads
	 * (softirqd.h, a mask of 1 << enum softirqd_kind) on which CPUs (none: every CPU). */
	unsigned int softirqd_mask;
	int *softirqd_cpus;
	size_t n_softirqd_cpus;
	int softirq_line;		/* where its cpu is given (softirq's line without it) */

	/* Task selectors (kind == TARGET_TASK). */
	struct globs task_comm;
	pid_t *pids;
	size_t n_pids;
	char *task_cgroup;		/* cgroup v2 path prefix */

	uint64_t runtime_ns, period_ns, deadline_ns;
	uint64_t min_interarrival_ns;	/* P, 0 = unknown */
	uint32_t buffer;		/* N_c, 0 = unknown */
	enum target_mode mode;
	struct adaptive_cfg adaptive;
	bool take_over;			/* take threads another irqresd or tool holds (owner.h) */

	struct serves_sel serves;
	/* serves: without runtime and period: no reservation, its threads' SCHED_FIFO
	 * priority follows the processes they serve (couple.h) */
	bool coupled;
};

struct profile {
	char *path;			/* the file it came from, or "<string>" */
	bool admission_off;		/* admission_control: disable */
	bool drift_report;		/* drift: report (default reapply) */
	bool hrtick;			/* enforcement: hrtick (default keep) */
	struct target *targets;
	size_t n_targets;
};

/* One thread as found in /proc (an IRQ thread or a user thread). */
struct thread_info {
	pid_t pid;			/* the thread id (tid) */
	pid_t tgid;
	unsigned long long starttime;	/* /proc/PID/stat field 22: guards against pid reuse */
	char comm[COMM_MAX];
	bool kthread;			/* PF_KTHREAD */
	bool is_irq;			/* a real IRQ thread: kthread, parent kthreadd, irq/ name */
	bool is_napi;			/* a threaded NAPI kthread: parent kthreadd, napi/ name */
	bool is_softirqd;		/* a per-CPU soft IRQ kthread (softirqd.h): parent
					 * kthreadd, <name>/<cpu> */
	int softirqd_kind;		/* its enum softirqd_kind */
	int softirqd_cpu;		/* the CPU its name gives */
	int irq;			/* IRQ number, -1 when not an IRQ thread */
	bool secondary;			/* irq/N-s-<action> */
	char actions[ACTIONS_MAX];	/* full action names, comma separated */
	cpu_set_t affinity;
	int policy;			/* SCHED_OTHER, SCHED_FIFO, ..., SCHED_DEADLINE (6) */
	int priority;			/* rt priority for FIFO/RR, else 0 */
	int nice;
	uint64_t dl_runtime_ns, dl_deadline_ns, dl_period_ns;
	char cgroup[CGROUP_PATH_MAX];	/* cgroup v2 path, "" when unknown */
};

struct thread_list {
	struct thread_info *v;
	size_t n, cap;
};

/* A thread that a target selected. */
struct match {
	size_t target;			/* index into profile->targets */
	struct thread_info thread;
};

struct match_list {
	struct match *v;
	size_t n, cap;
};

#endif /* IRQRES_H */
