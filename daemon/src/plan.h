/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * plan.h - what applying a profile would do, and whether the kernel will accept it.
 *
 * For each matched thread: its old and new policy, its CPUs, its root domain, whether it
 * needs a cpuset partition (affinity smaller than its root domain: sched_setattr would
 * give EPERM), the buffering check (T-Q)/P < N_c, and a verdict. New partitions never
 * take every CPU of the default root domain (the kernel refuses the last one: the root
 * cgroup's tasks need a CPU): when they would, the one with the lowest CPU is not made,
 * and its threads stay in the default domain, which is then exactly their CPUs.
 * Per root domain: the kernel's admission rule in its own fixed point (dl.h: 1 CPU = 2^20):
 *     existing DL bandwidth + new Σ to_ratio(T, Q) <= to_ratio(rt_period, rt_runtime) × CPUs
 * where existing bandwidth leaves out the threads this plan replaces. For a root domain
 * the plan leaves as it is, "existing" is the kernel's own count (dl_bw->total_bw in
 * debugfs sched/debug: every task, every deadline server such as 6.12's fair servers,
 * whatever else the kernel holds); for one the plan creates or shrinks it is the most the
 * kernel counts when it builds that root domain: the SCHED_DEADLINE tasks that will be in
 * it plus the deadline servers of its CPUs (dlserver.h: every debugfs
 * sched/<name>_server/cpuN that holds bandwidth: fair_server 6.12+, ext_server 7.0+). (In the VM
 * suite 6.12.95 counted each CPU's server after boot but left it out of the root domains
 * it built for new partitions: counting it errs on the side of a refusal the kernel would
 * not give, never of an acceptance it would refuse.) Each domain says which it used. The plan is feasible iff every item's verdict is ok. Building
 * a plan changes nothing.
 */
#ifndef IRQRES_PLAN_H
#define IRQRES_PLAN_H

#include "cpuset.h"
#include "dl.h"
#include "dlserver.h"
#include "enforce.h"
#include "irqres.h"
#include "json.h"
#include "match.h"
#include "owner.h"
#include "profile.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A SCHED_DEADLINE task already present. */
struct plan_dltask {
	pid_t pid;
	cpu_set_t cpus;			/* its affinity: tells its root domain */
	uint64_t bw;			/* to_ratio(period, runtime) */
};

/* The system as the plan sees it (read by plan_env_read(), or filled by tests). */
struct plan_env {
	cpu_set_t online, isolated;
	long long rt_runtime_us;	/* -1: unlimited */
	long long rt_period_us;
	bool partitions_possible;	/* cgroup v2 with the cpuset controller */
	char partition_err[256];	/* why not, when not */
	struct cpuset_part *parts;	/* partition roots present now */
	size_t n_parts;
	struct plan_dltask *dl;
	size_t n_dl, dl_cap;
	/* Bandwidth the kernel's own deadline servers hold per CPU (dlserver.h: Linux 6.12+
	 * fair_server, 7.0+ ext_server, read from debugfs when mounted), to_ratio units; 0
	 * elsewhere; and which servers were found. */
	uint64_t server_bw[CPU_SETSIZE];
	struct dlserver_set servers;
	/* The kernel's own accounting of the root domain of each CPU in kernel_bw_cpus, from
	 * the dl_rq sections of <sys>/kernel/debug/sched/debug: dl_bw->total_bw, the
	 * bandwidth it holds (tasks, servers, all), and dl_bw->bw, its per-CPU limit (-1:
	 * unlimited). Empty when debugfs is not mounted or not readable. */
	cpu_set_t kernel_bw_cpus;
	int64_t kernel_total_bw[CPU_SETSIZE];
	int64_t kernel_cap_bw[CPU_SETSIZE];
	/* Whether the kernel, rebuilding its root domains, counts a deadline task in the
	 * domain of its cgroup's CPUs (true from 6.19: dl_add_task_root_domain() through
	 * cpuset_cpus_allowed()) or in the domain of the CPU it runs on (before; true when the
	 * release cannot be read). They differ for a thread that stays in its cgroup beside a
	 * partition of its CPU (PF_NO_SETAFFINITY). */
	bool dl_counts_by_cgroup;
	/* How budgets are enforced (enforce.h): read with scan_dl only. */
	bool enforce_read;
	struct enforce_env enforce;
};

/* Where a domain's existing bandwidth comes from. */
enum plan_bw_source {
	PLAN_BW_KERNEL,		/* the kernel's dl_bw->total_bw, less the replaced threads */
	PLAN_BW_COUNTED,	/* deadline servers + SCHED_DEADLINE tasks that will be in it */
};

struct plan_domain {
	cpu_set_t cpus;
	int ncpus;
	char partition[CPUSET_NAME_MAX];	/* "" for the default root domain */
	bool is_new;			/* a partition this plan creates */
	bool shrunk;			/* loses CPUs to a partition this plan creates */
	bool isolated;			/* the CPUs isolcpus=domain took out of the scheduler's
					 * domains: the kernel keeps them all in one root domain
					 * of their own (its def_root_domain), partition or not */
	bool unlimited;			/* sched_rt_runtime_us = -1 */
	uint64_t cap_bw;		/* to_ratio(rt_period, rt_runtime) × ncpus */
	double capacity;		/* rt_runtime / rt_period × ncpus, for people */
	uint64_t existing_bw;		/* DL tasks present that the plan does not replace */
	enum plan_bw_source source;	/* which of the two below existing_bw is */
	uint64_t kernel_bw;		/* kernel's dl_bw->total_bw less the replaced threads
					 * (PLAN_BW_KERNEL only) */
	uint64_t servers_bw;		/* deadline servers of its CPUs (dlserver.h) */
	uint64_t tasks_bw;		/* SCHED_DEADLINE tasks in it that the plan keeps */
	uint64_t new_bw;		/* Σ of the plan's items in this domain */
	bool ok;
};

struct plan_item {
	size_t target;			/* index into profile->targets */
	struct thread_info thread;	/* as found */
	cpu_set_t cpus;			/* the CPUs it runs on: an IRQ thread's are its IRQ's
					 * effective affinity (discover.h: discover_irq_cpus()),
					 * which the kernel gives it only at its first interrupt;
					 * other threads' their affinity */
	uint64_t runtime_ns, deadline_ns, period_ns;
	uint64_t bw;			/* to_ratio(period, runtime) */
	int domain;			/* index into plan->domains (after the plan), -1 none */
	bool needs_partition;		/* a partition of its CPUs is made (or joined) */
	bool no_setaffinity;		/* PF_NO_SETAFFINITY: cannot be moved to a cpuset; with
					 * needs_partition it stays in its cgroup, the
					 * partition of its CPUs its root domain all the same */
	char partition[CPUSET_NAME_MAX];	/* partition it goes to, "" none */
	/* the partition whose root domain it runs in, when the kernel counts it elsewhere
	 * (from 6.19, a thread staying beside the partition: plan.c,
	 * kernel_counts_elsewhere()): a change of its budget is checked against and charged
	 * to this domain's count, which lacks it, so after one the kernel must count again
	 * (apply.c, cpuset_partition_recount()); "" otherwise */
	char recount[CPUSET_NAME_MAX];
	enum profile_buffer_verdict buffer_check;
	bool ok;
	int refusal;			/* 0 when ok, else the errno the kernel would give:
					 * EPERM (root domain), EBUSY (admission), EINVAL
					 * (buffering check, no root domain) */
	char verdict[640];		/* "ok" or why the kernel will refuse it */
	struct owner owner;		/* who else holds it (owner.h); kind OWNER_NONE: nobody */
};

/* Whether applying it moves the thread into its partition's cgroup. */
static inline bool plan_item_moves(const struct plan_item *it)
{
	return it->needs_partition && !it->no_setaffinity;
}

struct plan {
	const struct profile *prof;
	bool admission_off;		/* the profile turns admission control off */
	bool kernel_admission_off;	/* sched_rt_runtime_us is -1 already (tuned's
					 * realtime profile): the kernel admits everything */
	bool feasible;
	struct plan_item *items;
	size_t n_items;
	struct plan_domain *domains;
	size_t n_domains, domains_cap;
	char **warnings;
	size_t n_warnings, warnings_cap;
	char **errors;
	size_t n_errors, errors_cap;
	struct enforce_plan enforce;	/* how its budgets will be enforced (enforce.h) */
	char servers[256];		/* the deadline servers found (dlserver_set_str()) */
};

/* Reads online/isolated CPUs, sched_rt_{runtime,period}_us, the partitions present and,
 * with scan_dl, every SCHED_DEADLINE thread (irqres_paths roots). */
int plan_env_read(struct plan_env *env, bool scan_dl);
/*
 * What a change of budget of @threads (their present attributes in @now) needs beyond
 * plan_env_read(@env, false), on a kernel that counts a thread in the domain of its
 * cgroup's CPUs (plan_env.dl_counts_by_cgroup) when one of them cannot be moved
 * (PF_NO_SETAFFINITY): the kernel's counts and their present bandwidth, which set the
 * floor the kernel puts under such a thread's budget (plan.c, kernel_floor_bw()).
 * Nothing is read otherwise. Returns 0 or -ENOMEM.
 */
int plan_env_for_budget(struct plan_env *env, const struct thread_info *threads,
			const struct dl_attr *now, size_t n);
void plan_env_free(struct plan_env *env);
/* plan_env.dl_counts_by_cgroup for the running kernel (from 6.19; true when its release
 * cannot be read). */
bool plan_dl_counts_by_cgroup(void);
/* Without scan_dl, sched_rt_{runtime,period}_us read less than 1 s ago are reused;
 * whoever writes them calls this. */
void plan_limits_changed(void);

/* plan_build() reads the environment itself; plan_build_env() takes it from the caller.
 * Both return 0 (feasible or not: see plan->feasible) or -errno; plan_free() always. */
int plan_build(const struct profile *prof, const struct match_list *matches, struct plan *plan);
int plan_build_env(const struct profile *prof, const struct match_list *matches,
		   const struct plan_env *env, struct plan *plan);
/* New budgets for threads found already (set-budget): their CPUs, root domains and
 * admission exactly as plan_build_env() decides them, with no profile behind them (no
 * buffering check, plan->prof NULL). */
int plan_build_budget(const struct thread_info *threads, size_t n, uint64_t runtime_ns,
		      uint64_t deadline_ns, uint64_t period_ns, const struct plan_env *env,
		      struct plan *plan);
void plan_free(struct plan *plan);
/* The first item the kernel would refuse (its refusal and verdict say why), NULL when
 * there is none. */
const struct plan_item *plan_first_refusal(const struct plan *plan);

/*
 * Warnings and errors about the profile's selectors and matches (match.h): each
 * selector naming an interface, IRQ or driver this machine does not have, and each
 * target that matched no thread (an error when nothing matched at all, else a warning).
 */
int plan_add_match_notes(struct plan *plan, const struct profile *prof,
			 const struct match_unmatched *un);

#endif /* IRQRES_PLAN_H */
