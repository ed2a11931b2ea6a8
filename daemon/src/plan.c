/* SPDX-License-Identifier: GPL-2.0-only */
/* plan.c - root domains, admission and per-thread verdicts; see plan.h. */
#include "plan.h"
#include "dlcheck.h"
#include "array.h"
#include "discover.h"
#include "dl.h"
#include "dlserver.h"
#include "match.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ---- */

static int add_domain(struct plan *plan, const cpu_set_t *cpus, const char *partition,
		      bool is_new)
{
	struct plan_domain *d;

	if (ARRAY_RESERVE(plan->domains, plan->domains_cap, plan->n_domains + 1))
		return -ENOMEM;
	d = &plan->domains[plan->n_domains++];
	memset(d, 0, sizeof(*d));
	d->cpus = *cpus;
	d->ncpus = CPU_COUNT(cpus);
	snprintf(d->partition, sizeof(d->partition), "%s", partition);
	d->is_new = is_new;
	return 0;
}

/* The domain (of plan->domains) whose CPUs overlap cpus most; -1 for none. */
static int domain_of(const struct plan *plan, const cpu_set_t *cpus)
{
	int best = -1, best_n = 0;

	for (size_t i = 0; i < plan->n_domains; i++) {
		cpu_set_t both;
		int n;

		CPU_AND(&both, &plan->domains[i].cpus, cpus);
		n = CPU_COUNT(&both);
		if (n > best_n) {
			best = (int)i;
			best_n = n;
		}
	}
	return best;
}

/* Domains as they are now: valid partitions, the default one (online - isolated -
 * partitions), and the isolated CPUs' (online and isolated): the kernel builds no
 * scheduling domain for a CPU isolcpus=domain isolated, in a partition or not, and attaches
 * each such CPU to its def_root_domain, one root domain for all of them. */
static int base_domains(struct plan *plan, const struct plan_env *env)
{
	cpu_set_t rest, iso;
	int rc;

	dlserver_set_str(&env->servers, plan->servers, sizeof(plan->servers));
	CPU_AND(&iso, &env->online, &env->isolated);
	CPU_XOR(&rest, &env->online, &iso);
	for (size_t i = 0; i < env->n_parts; i++) {
		cpu_set_t inv, part;

		CPU_XOR(&inv, &env->parts[i].cpus, &iso);
		CPU_AND(&part, &env->parts[i].cpus, &inv);	/* its CPUs not isolated */
		if (!env->parts[i].valid || CPU_COUNT(&part) == 0)
			continue;
		rc = add_domain(plan, &part, env->parts[i].name, false);
		if (rc)
			return rc;
		CPU_XOR(&inv, &rest, &part);
		CPU_AND(&rest, &rest, &inv);
	}
	if (CPU_COUNT(&rest) && (rc = add_domain(plan, &rest, "", false)))
		return rc;
	if (!CPU_COUNT(&iso))
		return 0;
	rc = add_domain(plan, &iso, "", false);
	if (!rc)
		plan->domains[plan->n_domains - 1].isolated = true;
	return rc;
}

/* Whether cgroup path cg ("/irqres.cpu0") is the top-level group name. */
static bool in_group(const char *cg, const char *name)
{
	return cg[0] == '/' && strcmp(cg + 1, name) == 0;
}

/* The warning of a thread that stays in its cgroup beside partition name. */
/* A thread that stays beside its partition (PF_NO_SETAFFINITY), on a kernel that will
 * count it elsewhere (plan_env.dl_counts_by_cgroup); nothing to say on one that counts it
 * where it runs. */
static int warn_stays(struct plan *plan, const struct plan_env *env,
		      const struct plan_item *it, const char *name)
{
	if (!env->dl_counts_by_cgroup)
		return 0;
	return array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
			    "%s (pid %d) stays in cgroup %s beside cpuset partition %s "
			    "(PF_NO_SETAFFINITY: it cannot be moved; the partition is the root "
			    "domain of its CPUs all the same). The kernel counts its bandwidth in "
			    "the root cgroup's domain, not in %s's, once it rebuilds its root "
			    "domains, which irqres has it do after each change to the thread: its "
			    "own admission on those CPUs then no longer sees it; irqres counts it "
			    "where it runs",
			    it->thread.comm, (int)it->thread.pid,
			    it->thread.cgroup[0] ? it->thread.cgroup : "?", name, name);
}

/* Decides whether item needs a partition and which; sets a refusal verdict when none is
 * possible. */
static int place_item(struct plan *plan, struct plan_item *it, const struct plan_env *env)
{
	const struct thread_info *ti = &it->thread;
	char aff[64], span[64], name[CPUSET_NAME_MAX];
	int d = domain_of(plan, &it->cpus);
	struct plan_domain *dom;
	cpu_set_t want, both;
	int rc;

	if (d < 0) {
		it->refusal = EPERM;
		snprintf(it->verdict, sizeof(it->verdict), "EPERM: CPUs %s are in no root "
			 "domain (offline)", cpuset_list_str(&it->cpus, aff, sizeof(aff)));
		return 0;
	}
	dom = &plan->domains[d];
	CPU_AND(&both, &dom->cpus, &it->cpus);
	if (plan->admission_off)
		return 0;
	if (CPU_EQUAL(&both, &dom->cpus)) {
		/*
		 * The affinity covers the root domain. When that domain is a partition irqres
		 * made (for another thread, earlier) and the thread is not in its cgroup, the
		 * domain it would be in without irqres is larger: it joins the partition, as
		 * the first apply would have put it there, and restore moves it back. (A
		 * PF_NO_SETAFFINITY thread cannot move; the kernel takes it where it is.)
		 */
		if (strncmp(dom->partition, CPUSET_PREFIX, strlen(CPUSET_PREFIX)) != 0 ||
		    in_group(ti->cgroup, dom->partition))
			return 0;
		if (it->no_setaffinity)
			return warn_stays(plan, env, it, dom->partition);
		it->needs_partition = true;
		snprintf(it->partition, sizeof(it->partition), "%s", dom->partition);
		return 0;
	}

	/*
	 * A PF_NO_SETAFFINITY thread (IRQ threads from 7.x) cannot be moved into the
	 * partition, and need not be: the kernel checks the root domain of the CPU it runs on,
	 * and a partition of that CPU is that root domain whatever cgroup the thread is in.
	 * The kernel leaves such a thread's affinity alone when a partition takes CPUs from
	 * the root cgroup (cpuset_update_tasks_cpumask), so it stays pinned there.
	 */
	it->needs_partition = true;
	want = both;
	cpuset_list_str(&want, aff, sizeof(aff));
	cpuset_list_str(&dom->cpus, span, sizeof(span));
	cpuset_partition_name(&want, name, sizeof(name));
	snprintf(it->partition, sizeof(it->partition), "%s", name);
#define REFUSE(...) do { \
		char why_[384]; \
		snprintf(why_, sizeof(why_), __VA_ARGS__); \
		it->refusal = EPERM; \
		snprintf(it->verdict, sizeof(it->verdict), "EPERM: thread pinned to CPU%s %s, " \
			 "root domain spans %s; %s", CPU_COUNT(&want) > 1 ? "s" : "", aff, span, \
			 why_); \
		return 0; \
	} while (0)
	if (dom->isolated)
		REFUSE("its CPU%s isolated (isolcpus=domain): the kernel keeps the isolated "
		       "CPUs in one root domain, which a cpuset partition does not split; pin it "
		       "to CPUs %s or isolate its CPU alone", CPU_COUNT(&want) > 1 ? "s are" :
		       " is", span);
	if (!env->partitions_possible)
		REFUSE("cpuset partition %s could not be created: %s", name, env->partition_err);
	if (dom->partition[0])
		REFUSE("its CPUs belong to cpuset partition %s, which irqres does not split",
		       dom->partition);
	if (it->no_setaffinity && (rc = warn_stays(plan, env, it, name)))
		return rc;
	/* another item's new partition overlapping this one but different */
	for (size_t i = 0; i < plan->n_domains; i++) {
		struct plan_domain *o = &plan->domains[i];

		if (!o->is_new)
			continue;
		if (CPU_EQUAL(&o->cpus, &want))
			return 0;
		CPU_AND(&both, &o->cpus, &want);
		if (CPU_COUNT(&both))
			REFUSE("cpuset partition %s would overlap partition %s of another "
			       "thread", name, o->partition);
	}
	return add_domain(plan, &want, name, true);
#undef REFUSE
}

/* An item for thread with budget runtime/deadline/period (deadline 0: the period). */
static void item_init(struct plan_item *it, const struct thread_info *thread,
		      uint64_t runtime_ns, uint64_t deadline_ns, uint64_t period_ns)
{
	cpu_set_t cpus;

	it->thread = *thread;
	it->runtime_ns = runtime_ns;
	it->period_ns = period_ns;
	it->deadline_ns = deadline_ns ? deadline_ns : period_ns;
	it->bw = dl_to_ratio(it->period_ns, it->runtime_ns);
	it->domain = -1;
	it->cpus = it->thread.affinity;
	if (it->thread.irq >= 0 && discover_irq_cpus(it->thread.irq, &cpus) >= 0)
		it->cpus = cpus;
	it->no_setaffinity = cpuset_pid_movable(it->thread.pid) == 0;
}

static int items_alloc(struct plan *plan, size_t n)
{
	plan->items = calloc(n ? n : 1, sizeof(*plan->items));
	if (!plan->items)
		return -ENOMEM;
	plan->n_items = n;
	return 0;
}

/* A thread someone else holds (owner.h) is refused unless its target says take_over:
 * 1 refused, 0 not (taken over: a warning names whom from), or -errno. */
static int item_taken(struct plan *plan, struct plan_item *it, bool take_over)
{
	int rc = owner_find(&it->thread, true, &it->owner);

	if (rc < 0 || it->owner.kind == OWNER_NONE)
		return rc;
	if (take_over)
		return array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
				    "%s (pid %d): take_over: taken from its holder, %s",
				    it->thread.comm, (int)it->thread.pid, it->owner.text);
	it->refusal = EBUSY;
	snprintf(it->verdict, sizeof(it->verdict), "taken: %s; irqres leaves it alone "
		 "(take_over: true in the target takes it)", it->owner.text);
	return 1;
}

static int build_items(struct plan *plan, const struct profile *prof,
		       const struct match_list *matches, const struct plan_env *env)
{
	int rc = items_alloc(plan, matches->n);

	for (size_t i = 0; !rc && i < matches->n; i++) {
		struct plan_item *it = &plan->items[i];
		const struct target *t = &prof->targets[matches->v[i].target];

		it->target = matches->v[i].target;
		item_init(it, &matches->v[i].thread, t->runtime_ns, t->deadline_ns, t->period_ns);
		it->buffer_check = profile_buffer_check(t, it->runtime_ns, it->period_ns);
		rc = item_taken(plan, it, t->take_over);
		if (rc == 0)
			rc = place_item(plan, it, env);
		else if (rc > 0)
			rc = 0;
	}
	return rc;
}

static int cpu_first(const cpu_set_t *cpus)
{
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, cpus))
			return cpu;
	return CPU_SETSIZE;
}

/*
 * The kernel refuses a partition that would take the last CPUs of the root cgroup
 * ("Parent unable to distribute cpu downstream"): its tasks need a CPU. New partitions
 * are disjoint; when together they would cover the whole default root domain, the one
 * with the lowest CPU is not made. The default domain is then exactly its CPUs, which
 * its threads' CPUs cover, so they take SCHED_DEADLINE where they are.
 */
static int keep_default_cpus(struct plan *plan)
{
	const struct plan_domain *def = NULL;
	cpu_set_t all, n_cpus;
	char name[CPUSET_NAME_MAX], cpus[64];
	size_t keep = 0;
	int n_new = 0;

	CPU_ZERO(&all);
	for (size_t i = 0; i < plan->n_domains; i++) {
		const struct plan_domain *d = &plan->domains[i];

		if (!d->is_new) {
			if (!d->partition[0] && !d->isolated)
				def = d;
			continue;
		}
		CPU_OR(&all, &all, &d->cpus);
		if (!n_new++ || cpu_first(&d->cpus) < cpu_first(&plan->domains[keep].cpus))
			keep = i;
	}
	if (!def || !n_new || !CPU_EQUAL(&all, &def->cpus))
		return 0;
	snprintf(name, sizeof(name), "%s", plan->domains[keep].partition);
	n_cpus = plan->domains[keep].cpus;
	memmove(&plan->domains[keep], &plan->domains[keep + 1],
		(plan->n_domains - keep - 1) * sizeof(*plan->domains));
	plan->n_domains--;
	for (size_t i = 0; i < plan->n_items; i++) {
		struct plan_item *it = &plan->items[i];

		if (it->needs_partition && strcmp(it->partition, name) == 0) {
			it->needs_partition = false;
			it->partition[0] = '\0';
		}
	}
	cpuset_list_str(&n_cpus, cpus, sizeof(cpus));
	return array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap, "CPU%s %s stay%s in the default root "
		       "domain (no cpuset partition %s): partitions for every CPU would leave the "
		       "root cgroup's tasks none, which the kernel refuses; the threads pinned "
		       "there then cover the default domain and need no partition",
		       CPU_COUNT(&n_cpus) > 1 ? "s" : "", cpus, CPU_COUNT(&n_cpus) > 1 ? "" : "s",
		       name);
}

/* Takes the CPUs of new partitions out of the domain they come from; drops a domain
 * left with none (cannot happen for the default one: a partition is a strict subset). */
static void carve_partitions(struct plan *plan)
{
	for (size_t i = 0; i < plan->n_domains; i++) {
		struct plan_domain *n = &plan->domains[i];

		if (!n->is_new)
			continue;
		for (size_t j = 0; j < plan->n_domains; j++) {
			struct plan_domain *o = &plan->domains[j];
			cpu_set_t inv;

			if (o->is_new)
				continue;
			CPU_XOR(&inv, &o->cpus, &n->cpus);
			CPU_AND(&o->cpus, &o->cpus, &inv);
			if (CPU_COUNT(&o->cpus) != o->ncpus)
				o->shrunk = true;
			o->ncpus = CPU_COUNT(&o->cpus);
		}
	}
}

static const struct plan_item *replaced(const struct plan *plan, pid_t pid)
{
	for (size_t i = 0; i < plan->n_items; i++)
		if (plan->items[i].thread.pid == pid)
			return &plan->items[i];
	return NULL;
}

/*
 * Whether the kernel's count of d may lack it although it runs there: a thread that
 * stayed in its cgroup beside the partition d (PF_NO_SETAFFINITY), on a kernel that counts
 * a task in the domain of its cgroup's CPUs when it rebuilds its root domains (from 6.19,
 * dl_add_task_root_domain() via cpuset_cpus_allowed()): the root cgroup's for such a
 * thread, not the partition's where it runs. Earlier kernels count it where it runs
 * (docs/vm.md, "What 7.3 changes"; docs/profile.md, "Soft IRQ kthreads").
 */
static bool kernel_counts_elsewhere(const struct plan_env *env, const struct plan_item *it,
				    const struct plan_domain *d)
{
	return env->dl_counts_by_cgroup && it->no_setaffinity && d->partition[0] &&
	       !in_group(it->thread.cgroup, d->partition);
}

static void bw_str(uint64_t bw, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f", (double)bw / (double)DL_BW_UNIT);
}

/* Each domain's capacity, its deadline servers, and where its existing count comes from:
 * the kernel's own for a root domain the plan leaves alone, else counted. */
static void domains_capacity(struct plan *plan, const struct plan_env *env)
{
	uint64_t per_cpu = dl_to_ratio((uint64_t)env->rt_period_us * 1000,
				       (uint64_t)(env->rt_runtime_us < 0 ? 0 : env->rt_runtime_us) *
				       1000);

	for (size_t i = 0; i < plan->n_domains; i++) {
		struct plan_domain *d = &plan->domains[i];
		int cpu = cpu_first(&d->cpus);

		d->unlimited = plan->admission_off || env->rt_runtime_us < 0;
		d->cap_bw = per_cpu * (uint64_t)d->ncpus;
		d->capacity = (double)env->rt_runtime_us / (double)env->rt_period_us * d->ncpus;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &d->cpus))
				d->servers_bw += env->server_bw[c];
		if (!d->is_new && !d->shrunk && cpu < CPU_SETSIZE &&
		    CPU_ISSET(cpu, &env->kernel_bw_cpus) && env->kernel_total_bw[cpu] >= 0) {
			d->source = PLAN_BW_KERNEL;
			d->kernel_bw = (uint64_t)env->kernel_total_bw[cpu];
		} else {
			d->source = PLAN_BW_COUNTED;
		}
	}
}

/* The SCHED_DEADLINE tasks present: counted where the plan keeps them; taken out of the
 * kernel's count where the plan's new value replaces them. */
static void domains_existing(struct plan *plan, const struct plan_env *env)
{
	for (size_t i = 0; i < env->n_dl; i++) {
		int di = domain_of(plan, &env->dl[i].cpus);
		struct plan_domain *d = di >= 0 ? &plan->domains[di] : NULL;
		const struct plan_item *it;

		if (!d)
			continue;
		it = replaced(plan, env->dl[i].pid);
		if (!it)
			d->tasks_bw += env->dl[i].bw;
		else if (d->source == PLAN_BW_KERNEL && !kernel_counts_elsewhere(env, it, d))
			d->kernel_bw -= d->kernel_bw < env->dl[i].bw ? d->kernel_bw : env->dl[i].bw;
	}
	for (size_t i = 0; i < plan->n_domains; i++) {
		struct plan_domain *d = &plan->domains[i];

		d->existing_bw = d->source == PLAN_BW_KERNEL ? d->kernel_bw :
				 d->servers_bw + d->tasks_bw;
	}
}

/* The domain of each item still without a verdict, and the bandwidth it adds there. */
static void items_domains(struct plan *plan)
{
	for (size_t i = 0; i < plan->n_items; i++) {
		struct plan_item *it = &plan->items[i];

		if (it->verdict[0])
			continue;
		it->domain = it->needs_partition ? -1 : domain_of(plan, &it->cpus);
		for (size_t j = 0; it->needs_partition && j < plan->n_domains; j++)
			if (strcmp(plan->domains[j].partition, it->partition) == 0)
				it->domain = (int)j;
		if (it->domain >= 0)
			plan->domains[it->domain].new_bw += it->bw;
	}
}

static void admission(struct plan *plan, const struct plan_env *env)
{
	domains_capacity(plan, env);
	domains_existing(plan, env);
	items_domains(plan);
	for (size_t i = 0; i < plan->n_domains; i++) {
		struct plan_domain *d = &plan->domains[i];

		/* the kernel's __dl_overflow(): cap_scale(bw, cap) < total_bw */
		d->ok = d->unlimited || d->existing_bw + d->new_bw <= d->cap_bw;
	}
}

/*
 * The least bandwidth the kernel lets a thread it counts in another root domain (from
 * 6.19, one that stays beside its partition: kernel_counts_elsewhere()) change its budget
 * to, 0 when there is no such floor. The kernel checks a change against the root domain
 * of the CPU the thread runs on (sched_dl_overflow(): total_bw - old + new, in u64), whose
 * count lacks the thread's present bandwidth: a new budget that lowers it by more than
 * that count wraps below zero and is refused (EBUSY); one that raises it is checked as
 * usual. Measured on 7.3 (docs/vm.md, "What 7.3 changes").
 */
static uint64_t kernel_floor_bw(const struct plan_env *env, const struct plan_item *it,
				const struct plan_domain *d, uint64_t *old)
{
	int cpu = cpu_first(&d->cpus);
	uint64_t total;

	*old = 0;
	if (d->source != PLAN_BW_KERNEL || !kernel_counts_elsewhere(env, it, d) ||
	    cpu >= CPU_SETSIZE || env->kernel_total_bw[cpu] < 0)
		return 0;
	for (size_t i = 0; i < env->n_dl; i++)
		if (env->dl[i].pid == it->thread.pid)
			*old = env->dl[i].bw;
	total = (uint64_t)env->kernel_total_bw[cpu];
	return *old > total ? *old - total : 0;
}

/* The EBUSY verdict of a budget below the floor kernel_floor_bw() found, @old the
 * thread's present bandwidth. */
static void floor_verdict(struct plan_item *it, const struct plan_domain *d, uint64_t floor,
			  uint64_t old)
{
	char cpus[64], t[UNITS_FMT_LEN], least[UNITS_FMT_LEN], held[16], now[16];
	/* the least runtime whose bandwidth reaches the floor (to_ratio rounds down) */
	uint64_t q = (uint64_t)(((unsigned __int128)floor * it->period_ns + DL_BW_UNIT - 1) >>
				DL_BW_SHIFT);

	units_format_duration(it->period_ns, t, sizeof(t));
	units_format_duration(q, least, sizeof(least));
	bw_str(old - floor, held, sizeof(held));	/* the domain's count */
	bw_str(old, now, sizeof(now));
	it->refusal = EBUSY;
	snprintf(it->verdict, sizeof(it->verdict), "EBUSY: the kernel counts this thread (%s of "
		 "a CPU now) in the domain of its cgroup's CPUs, not in %s where it runs, but "
		 "checks a new budget against CPUs %s, whose count (%s) lacks it: it refuses any "
		 "runtime below %s every %s (kernels from 6.19, a thread that stays beside its "
		 "partition; docs/vm.md, \"What 7.3 changes\")", now, d->partition,
		 cpuset_list_str(&d->cpus, cpus, sizeof(cpus)), held, least, t);
}

static void verdicts(struct plan *plan, const struct plan_env *env)
{
	char q[UNITS_FMT_LEN], t[UNITS_FMT_LEN], cpus[64], a[16], b[16], c[16], e[16];

	for (size_t i = 0; i < plan->n_items; i++) {
		struct plan_item *it = &plan->items[i];
		struct plan_domain *d = it->domain >= 0 ? &plan->domains[it->domain] : NULL;
		uint64_t old = 0, floor;

		if (it->verdict[0])
			continue;
		floor = d && !d->unlimited ? kernel_floor_bw(env, it, d, &old) : 0;
		if (d && kernel_counts_elsewhere(env, it, d))
			snprintf(it->recount, sizeof(it->recount), "%s", d->partition);
		units_format_duration(it->runtime_ns, q, sizeof(q));
		units_format_duration(it->period_ns, t, sizeof(t));
		if (!d) {
			it->refusal = EINVAL;
			snprintf(it->verdict, sizeof(it->verdict), "no root domain");
		} else if (!d->unlimited && env->rt_runtime_us == 0) {
			it->refusal = EPERM;
			snprintf(it->verdict, sizeof(it->verdict), "EPERM: sched_rt_runtime_us is 0: "
				 "no bandwidth at all for SCHED_DEADLINE");
		} else if (it->bw < floor) {
			floor_verdict(it, d, floor, old);
		} else if (!d->ok) {
			bw_str(it->bw, a, sizeof(a));
			bw_str(d->existing_bw + d->new_bw - it->bw, b, sizeof(b));
			snprintf(c, sizeof(c), "%.2f", d->capacity);
			bw_str(d->existing_bw, e, sizeof(e));
			it->refusal = EBUSY;
			snprintf(it->verdict, sizeof(it->verdict), "EBUSY: admission: %s/%s = %s more "
				 "bandwidth on CPUs %s, in use %s of %s (%s by SCHED_DEADLINE tasks "
				 "already present)", q, t, a, cpuset_list_str(&d->cpus, cpus, sizeof(cpus)), b, c,
				 e);
		} else if (it->buffer_check == PROFILE_BUFFER_VIOLATED) {
			const struct target *tg = &plan->prof->targets[it->target];
			char p[UNITS_FMT_LEN];

			units_format_duration(tg->min_interarrival_ns, p, sizeof(p));
			it->refusal = EINVAL;
			snprintf(it->verdict, sizeof(it->verdict), "buffering check violated: "
				 "(T - Q)/P = (%s - %s)/%s >= N_c = %u: the device would drop "
				 "interrupts", t, q, p, tg->buffer);
		} else {
			snprintf(it->verdict, sizeof(it->verdict), "ok");
			it->ok = true;
		}
	}
}

/*
 * With admission control off (sched_rt_runtime_us = -1: tuned's realtime profile sets
 * it) the kernel accepts every reservation, and so does the plan. Said loudly, with each
 * root domain whose reservations add up to more than its CPUs: there nothing keeps the
 * deadlines, and irqres does not set the limit back (it is not irqres's to change).
 */
static int admission_off_notes(struct plan *plan, const struct plan_env *env)
{
	char cpus[64], bw[16];
	int rc = 0;

	plan->kernel_admission_off = env->rt_runtime_us < 0;
	if (plan->kernel_admission_off && !plan->admission_off)
		rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
				  "ADMISSION CONTROL IS OFF: kernel.sched_rt_runtime_us is -1 "
				  "(tuned's realtime profile sets it): the kernel accepts every "
				  "SCHED_DEADLINE reservation whatever the bandwidth, so irqres "
				  "refuses none on bandwidth either and nothing guarantees a "
				  "reservation its budget; irqres leaves the setting alone "
				  "(sysctl kernel.sched_rt_runtime_us=950000 turns admission back on)");
	for (size_t i = 0; !rc && i < plan->n_domains; i++) {
		const struct plan_domain *d = &plan->domains[i];

		if (!d->unlimited || d->existing_bw + d->new_bw <= DL_BW_UNIT * (uint64_t)d->ncpus)
			continue;
		bw_str(d->existing_bw + d->new_bw, bw, sizeof(bw));
		rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
				  "CPUs %s: the SCHED_DEADLINE reservations add up to %s CPUs, more "
				  "than the %d there: with admission control off the kernel takes "
				  "them, and deadlines will be missed",
				  cpuset_list_str(&d->cpus, cpus, sizeof(cpus)), bw, d->ncpus);
	}
	return rc;
}

/* The items whose parameters the kernel would refuse (dlcheck.h), with the target and
 * the rule broken; verdicts() leaves them so. */
static void kernel_rules(struct plan *plan)
{
	struct dlcheck_limits lim;
	char why[256];

	dlcheck_limits_read(&lim);
	for (size_t i = 0; i < plan->n_items; i++) {
		struct plan_item *it = &plan->items[i];

		if (!dlcheck_params(&lim, it->runtime_ns, it->deadline_ns, it->period_ns, why,
				    sizeof(why)))
			continue;
		it->refusal = EINVAL;
		if (plan->prof)
			snprintf(it->verdict, sizeof(it->verdict), "EINVAL: target '%s': %s",
				 plan->prof->targets[it->target].name, why);
		else
			snprintf(it->verdict, sizeof(it->verdict), "EINVAL: %s", why);
	}
}

/* Everything after the items are placed: partitions, admission, verdicts, messages. */
static int plan_finish(struct plan *plan, const struct plan_env *env)
{
	char cpus[64];
	int rc = keep_default_cpus(plan);

	if (rc)
		return rc;
	carve_partitions(plan);
	admission(plan, env);
	kernel_rules(plan);
	verdicts(plan, env);

	/* a coupled target (couple.h) reserves nothing: nothing to place is no failure then */
	plan->feasible = plan->n_items > 0 || (plan->prof && profile_has_coupled(plan->prof));
	for (size_t i = 0; i < plan->n_items; i++) {
		struct plan_item *it = &plan->items[i];

		if (it->ok)
			continue;
		plan->feasible = false;
		rc = array_printf(&plan->errors, &plan->n_errors, &plan->errors_cap, "%s (pid %d): %s", it->thread.comm,
			     (int)it->thread.pid, it->verdict);
		if (rc)
			return rc;
	}
	if (plan->admission_off)
		rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap, "admission_control: disable: "
			     "the kernel's SCHED_DEADLINE admission control will be turned off "
			     "(sched_rt_runtime_us = -1) until irqres restores it");
	if (!rc)
		rc = admission_off_notes(plan, env);
	for (size_t i = 0; !rc && i < plan->n_domains; i++)
		if (plan->domains[i].is_new)
			rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap, "cpuset partition %s "
				     "will take CPUs %s out of the default root domain: tasks of "
				     "the root cgroup (all that are in no partition) will no "
				     "longer run there", plan->domains[i].partition,
				     cpuset_list_str(&plan->domains[i].cpus, cpus, sizeof(cpus)));
	return rc;
}

int plan_build_env(const struct profile *prof, const struct match_list *matches,
		   const struct plan_env *env, struct plan *plan)
{
	int rc;

	memset(plan, 0, sizeof(*plan));
	plan->prof = prof;
	plan->admission_off = prof->admission_off;
	rc = base_domains(plan, env);
	if (!rc)
		rc = build_items(plan, prof, matches, env);
	if (!rc)
		rc = plan_finish(plan, env);
	if (!rc)
		rc = enforce_plan_notes(plan, env);
	if (rc)
		plan_free(plan);
	return rc;
}

int plan_build_budget(const struct thread_info *threads, size_t n, uint64_t runtime_ns,
		      uint64_t deadline_ns, uint64_t period_ns, const struct plan_env *env,
		      struct plan *plan)
{
	int rc;

	memset(plan, 0, sizeof(*plan));
	rc = base_domains(plan, env);
	if (!rc)
		rc = items_alloc(plan, n);
	for (size_t i = 0; !rc && i < n; i++) {
		item_init(&plan->items[i], &threads[i], runtime_ns, deadline_ns, period_ns);
		rc = place_item(plan, &plan->items[i], env);
	}
	if (!rc)
		rc = plan_finish(plan, env);
	if (rc)
		plan_free(plan);
	return rc;
}

const struct plan_item *plan_first_refusal(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_items; i++)
		if (!plan->items[i].ok)
			return &plan->items[i];
	return NULL;
}

int plan_build(const struct profile *prof, const struct match_list *matches, struct plan *plan)
{
	struct plan_env env;
	int rc = plan_env_read(&env, true);

	if (rc) {
		memset(plan, 0, sizeof(*plan));
		return rc;
	}
	rc = plan_build_env(prof, matches, &env, plan);
	plan_env_free(&env);
	return rc;
}

void plan_free(struct plan *plan)
{
	array_free_strings(&plan->warnings, &plan->n_warnings, &plan->warnings_cap);
	array_free_strings(&plan->errors, &plan->n_errors, &plan->errors_cap);
	free(plan->items);
	free(plan->domains);
	memset(plan, 0, sizeof(*plan));
}

int plan_add_match_notes(struct plan *plan, const struct profile *prof,
			 const struct match_unmatched *un)
{
	struct match_problem probs[8];
	int rc = 0, n;

	for (size_t i = 0; !rc && i < prof->n_targets; i++) {
		const struct target *t = &prof->targets[i];

		n = match_selector_problems(prof, t, probs, sizeof(probs) / sizeof(probs[0]));
		for (int k = 0; !rc && k < n; k++)
			rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap, "%s:%d: target '%s': "
				     "selector problem: %s", prof->path, probs[k].line, t->name,
				     probs[k].text);
	}
	for (size_t i = 0; !rc && i < prof->n_targets; i++)
		if (prof->targets[i].coupled)
			rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
					  "%s:%d:%d: target '%s' is coupled (serves: without runtime "
					  "and period): it reserves nothing, and the running irqresd "
					  "gives its threads the SCHED_FIFO priority of the processes "
					  "they serve (docs/process-aware.md)", prof->path,
					  prof->targets[i].line, prof->targets[i].col,
					  prof->targets[i].name);
	for (size_t i = 0; !rc && un && i < un->n; i++) {
		const struct target *t = &prof->targets[un->v[i]];

		if (plan->n_items == 0 && !profile_has_coupled(prof))
			rc = array_printf(&plan->errors, &plan->n_errors, &plan->errors_cap, "%s:%d:%d: target '%s' "
				     "matches no thread", prof->path, t->line, t->col, t->name);
		else
			rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap, "%s:%d:%d: target '%s' "
				     "matches no thread yet; its threads are reserved when they "
				     "appear", prof->path, t->line, t->col, t->name);
	}
	return rc;
}
