/* SPDX-License-Identifier: GPL-2.0-only */
/* affinity.c - CPU affinities put back after irqres's cpuset changes; see affinity.h. */
#include "affinity.h"
#include "array.h"
#include "cpuset.h"
#include "discover.h"
#include "irqname.h"
#include "irqres.h"
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/vfs.h>

/* The CPUs each IRQ thread with fewer than the root's is to have, kept while any
 * partition exists: what a partition holds of them is given back when it goes. */
static struct affinity_watch owed;
/* IRQ threads' CPUs re-derived from their IRQ's (affinity_rederive_irq()) */
static bool rederive_irq;

/* Only a real cgroup v2 hierarchy makes the kernel rewrite affinities: over a fixture
 * tree nothing is watched, so nothing of the machine is ever touched. */
static bool real_cgroup(void)
{
	struct statfs sf;

	return statfs(irqres_paths.cgroup, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Sets pid's affinity to want unless it is so already; *now receives what it is after.
 * 1 changed, 0 unchanged, -errno (-EINVAL: its cpuset allows none of want). */
static int set_cpus(pid_t pid, const cpu_set_t *want, cpu_set_t *now)
{
	cpu_set_t was;

	if (sched_getaffinity(pid, sizeof(was), &was) < 0)
		return -errno;
	*now = was;
	if (CPU_EQUAL(&was, want))
		return 0;
	if (sched_setaffinity(pid, sizeof(*want), want) < 0)
		return -errno;
	if (sched_getaffinity(pid, sizeof(*now), now) < 0)
		*now = *want;
	return 1;
}

/* Puts want back; 1 when the thread has all of it now, 0 when its cpuset allows only part
 * or none of it (still owed), -errno. */
static int put(pid_t pid, const char *comm, const cpu_set_t *want, const cpu_set_t *made)
{
	char a[128], b[128];
	cpu_set_t now;
	int rc = set_cpus(pid, want, &now);

	if (rc >= 0 && CPU_EQUAL(&now, want)) {
		if (rc == 1)
			pr_info("%s (pid %d): CPU affinity back to %s (a cpuset change had made it "
				"%s)", comm, (int)pid, cpuset_list_str(want, a, sizeof(a)),
				cpuset_list_str(made, b, sizeof(b)));
		return 1;
	}
	if (rc >= 0 || rc == -EINVAL) {
		pr_debug("%s (pid %d): CPU affinity %s only partly back (%s) while its CPUs are "
			 "partitioned", comm, (int)pid, cpuset_list_str(want, a, sizeof(a)),
			 rc >= 0 ? cpuset_list_str(&now, b, sizeof(b)) : "none allowed");
		return 0;
	}
	if (rc != -ESRCH)
		pr_warn("%s (pid %d): CPU affinity %s not put back: %s", comm, (int)pid,
			cpuset_list_str(want, a, sizeof(a)), strerror(-rc));
	return rc;
}

static struct state_owed *find(struct affinity_watch *w, const struct state_owed *s)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].pid == s->pid && w->v[i].starttime == s->starttime)
			return &w->v[i];
	return NULL;
}

static void owe_none(void)
{
	free(owed.v);
	memset(&owed, 0, sizeof(owed));
}

/* Notes that s's thread is to have want and has seen now (NULL: drops the note). */
static void owe(const struct state_owed *s, const cpu_set_t *want, const cpu_set_t *seen)
{
	struct state_owed *o = find(&owed, s);

	if (want && !o && !ARRAY_RESERVE(owed.v, owed.cap, owed.n + 1))
		o = &owed.v[owed.n++];
	if (want && o) {
		*o = *s;
		o->cpus = *want;
		o->seen = *seen;
	} else if (!want && o) {
		*o = owed.v[--owed.n];
	}
	if (!owed.n)
		owe_none();
}

/* Does the root cgroup have every online CPU (no partition left)? */
static bool root_whole(void)
{
	char path[PATH_MAX];
	cpu_set_t root, online, both;

	snprintf(path, sizeof(path), "%s/cpuset.cpus.effective", irqres_paths.cgroup);
	if (cpuset_list_read(path, &root))
		return false;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", irqres_paths.sys);
	if (cpuset_list_read(path, &online))
		return false;
	CPU_AND(&both, &root, &online);
	return CPU_EQUAL(&both, &online);
}

int affinity_watch_begin(struct affinity_watch *w)
{
	struct thread_list l = { 0 };
	char path[PATH_MAX];
	int rc;

	memset(w, 0, sizeof(*w));
	if (!irqres_paths_real_proc() || !real_cgroup())
		return 0;
	snprintf(path, sizeof(path), "%s/cpuset.cpus.effective", irqres_paths.cgroup);
	if (cpuset_list_read(path, &w->root) || !CPU_COUNT(&w->root))
		return 0;	/* no cpuset controller: no partition to change */
	/* every kernel thread the kernel rewrites: IRQ threads, and the others that were
	 * bound to a CPU (a workqueue's rescuer keeps the CPU it last worked on) */
	rc = discover_scan_kthreads(&l);
	if (!rc && ARRAY_RESERVE(w->v, w->cap, l.n))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < l.n; i++) {
		struct state_owed *s = &w->v[w->n];

		s->pid = l.v[i].pid;
		s->starttime = l.v[i].starttime;
		memcpy(s->comm, l.v[i].comm, sizeof(s->comm));
		if (sched_getaffinity(s->pid, sizeof(s->cpus), &s->cpus) == 0)
			w->n++;
	}
	discover_list_free(&l);
	if (rc) {
		pr_warn("CPU affinities of kernel threads not noted before a cpuset change: %s",
			strerror(-rc));
		free(w->v);
		memset(w, 0, sizeof(*w));
	}
	return rc;
}

/* A thread that had at least the root's CPUs follows the root: the kernel's rewrite is
 * what it would have had anyway. */
static bool follows_root(const struct affinity_watch *w, const cpu_set_t *cpus)
{
	cpu_set_t both;

	CPU_AND(&both, cpus, &w->root);
	return CPU_EQUAL(&both, &w->root);
}

void affinity_rederive_irq(bool on)
{
	rederive_irq = on;
}

/* The CPUs the kernel gives the IRQ thread comm (salvage.h): its IRQ's effective affinity;
 * 0 and *want, or -ENOENT when comm is no IRQ thread's, or its IRQ is not started. */
static int irq_thread_cpus(const char *comm, cpu_set_t *want)
{
	struct irqname name;

	if (irqname_parse(comm, &name) || discover_irq_cpus(name.irq, want) != 0)
		return -ENOENT;
	return 0;
}

/* An IRQ thread whose CPUs are exactly those its (started) IRQ is handled on: they are
 * its IRQ's, not the root's, even when a partition left the root no other CPU (its IRQ
 * moved there meanwhile). */
static bool irq_own(const char *comm, const cpu_set_t *cpus)
{
	cpu_set_t irq;

	return irq_thread_cpus(comm, &irq) == 0 && CPU_EQUAL(&irq, cpus);
}

int affinity_intended(const struct affinity_watch *w, const struct state_owed *s,
		      cpu_set_t *want)
{
	const struct state_owed *o = find(&owed, s);

	/* changed by someone else since: theirs now (an owed record of a change a crash
	 * interrupted has no seen: it is given back) */
	if (o && CPU_COUNT(&o->seen) && !CPU_EQUAL(&o->seen, &s->cpus)) {
		owe(s, NULL, NULL);
		o = NULL;
	}
	if (o)
		*want = o->cpus;
	else if (!follows_root(w, &s->cpus) || irq_own(s->comm, &s->cpus))
		*want = s->cpus;
	else if (!rederive_irq || irq_thread_cpus(s->comm, want))
		return -ENOENT;
	return 0;
}

int affinity_watch_end(struct affinity_watch *w)
{
	int fixed = 0;

	for (size_t i = 0; i < w->n; i++) {
		const struct state_owed *s = &w->v[i];
		struct thread_info ti = { .pid = s->pid, .starttime = s->starttime };
		cpu_set_t now, want;
		int rc = 0;

		if (affinity_intended(w, s, &want))
			continue;
		if (!discover_still_same(&ti) || sched_getaffinity(s->pid, sizeof(now), &now) < 0) {
			owe(s, NULL, NULL);
			continue;
		}
		if (!CPU_EQUAL(&now, &want)) {
			rc = put(s->pid, s->comm, &want, &now);
			fixed += rc == 1;
			if (rc < 0 || sched_getaffinity(s->pid, sizeof(now), &now) < 0) {
				owe(s, NULL, NULL);
				continue;
			}
		}
		owe(s, &want, &now);
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
	if (owed.n && root_whole())
		owe_none();
	return fixed;
}

/* The thread pid of starttime as it is: 1 with *ti and *now, 0 when it is gone. */
static int still_there(pid_t pid, unsigned long long starttime, struct thread_info *ti,
		       cpu_set_t *now)
{
	int rc = discover_read(pid, ti);

	if (rc == -ESRCH || (!rc && ti->starttime != starttime))
		return 0;
	if (rc)
		return rc;
	if (sched_getaffinity(pid, sizeof(*now), now) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 1;
}

int affinity_put_back(pid_t pid, unsigned long long starttime, const cpu_set_t *recorded)
{
	struct state_owed s = { .pid = pid, .starttime = starttime };
	struct thread_info ti;
	cpu_set_t now;
	int rc;

	if (!irqres_paths_real_proc() || !recorded || !CPU_COUNT(recorded))
		return 0;
	rc = still_there(pid, starttime, &ti, &now);
	if (rc <= 0 || CPU_EQUAL(&now, recorded))
		return rc < 0 ? rc : 0;
	memcpy(s.comm, ti.comm, sizeof(s.comm));
	rc = put(pid, ti.comm, recorded, &now);
	/* an IRQ thread not all back: owed until its partition goes */
	if (rc >= 0 && ti.is_irq && !root_whole() &&
	    sched_getaffinity(pid, sizeof(now), &now) == 0)
		owe(&s, recorded, &now);
	return rc < 0 ? rc : rc == 1;
}

int affinity_owed(pid_t pid, unsigned long long starttime, cpu_set_t *cpus)
{
	const struct state_owed s = { .pid = pid, .starttime = starttime };
	const struct state_owed *o = find(&owed, &s);

	if (!o)
		return 0;
	*cpus = o->cpus;
	return 1;
}

int affinity_watch_save(const struct affinity_watch *w, struct state *st)
{
	struct state_owed *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!w->n && !owed.n)
		return 0;
	if (ARRAY_RESERVE(v, cap, owed.n + w->n))
		return -ENOMEM;
	if (owed.n)
		memcpy(v, owed.v, owed.n * sizeof(*v));
	n = owed.n;
	/* what the change leaves them with is not known until it is made */
	for (size_t i = 0; i < n; i++)
		CPU_ZERO(&v[i].seen);
	for (size_t i = 0; i < w->n; i++) {
		if (follows_root(w, &w->v[i].cpus) || find(&owed, &w->v[i]))
			continue;
		v[n] = w->v[i];
		CPU_ZERO(&v[n].seen);
		n++;
	}
	rc = state_set_owed(st, v, n);
	free(v);
	return rc;
}

int affinity_owed_save(struct state *st)
{
	return state_set_owed(st, owed.v, owed.n);
}

void affinity_owed_load(const struct state *st)
{
	for (size_t i = 0; i < st->n_owed; i++)
		if (!find(&owed, &st->owed[i]))
			owe(&st->owed[i], &st->owed[i].cpus, &st->owed[i].seen);
}

void affinity_owed_settle(void)
{
	for (size_t i = 0; i < owed.n && irqres_paths_real_proc(); i++) {
		const struct state_owed *s = &owed.v[i];
		struct thread_info ti;
		cpu_set_t now;

		/* gone, given back already, or changed by someone else since */
		if (still_there(s->pid, s->starttime, &ti, &now) <= 0 ||
		    CPU_EQUAL(&now, &s->cpus) ||
		    (CPU_COUNT(&s->seen) && !CPU_EQUAL(&now, &s->seen)))
			continue;
		put(s->pid, ti.comm, &s->cpus, &now);
	}
	owe_none();	/* no partition of irqres's is left to give anything back later */
}

/* What each change may take is recorded before it, what it took after it. */
int affinity_partition_create(struct state *st, const cpu_set_t *cpus, char *name,
			      size_t namelen, bool *created, char *err, size_t errlen)
{
	struct affinity_watch w;
	int rc;

	affinity_watch_begin(&w);
	affinity_watch_save(&w, st);
	rc = cpuset_partition_create(cpus, name, namelen, created, err, errlen);
	affinity_watch_end(&w);
	affinity_owed_save(st);
	return rc;
}

int affinity_partition_remove(struct state *st, const char *name)
{
	struct affinity_watch w;
	int rc;

	affinity_watch_begin(&w);
	affinity_watch_save(&w, st);
	rc = cpuset_partition_remove(name);
	affinity_watch_end(&w);
	affinity_owed_save(st);
	return rc;
}
