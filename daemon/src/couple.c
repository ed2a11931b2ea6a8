/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * couple.c - device threads whose SCHED_FIFO priority follows the processes they serve;
 * see couple.h.
 */
#include "couple.h"
#include "apply_restore.h"
#include "array.h"
#include "discover.h"
#include "dl.h"
#include "log.h"
#include "match.h"
#include "pidset.h"
#include "target_kind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool couple_needed(const struct profile *prof)
{
	for (size_t i = 0; i < prof->n_targets; i++)
		if (prof->targets[i].serves.given)
			return true;
	return false;
}

static bool needs_irq_threads(const struct profile *prof)
{
	for (size_t i = 0; i < prof->n_targets; i++)
		if (prof->targets[i].coupled &&
		    target_kind_of(&prof->targets[i])->threads != TARGET_THREADS_TASKS)
			return true;
	return false;
}

static void targets_free(struct couple *c)
{
	for (size_t i = 0; i < c->n_t; i++) {
		serves_list_free(&c->t[i].served);
		serves_cache_free(&c->t[i].ports);
	}
	free(c->t);
	c->t = NULL;
	c->n_t = 0;
}

/* One slot per target of @prof, emptied but for what the last tick knew of the ports. */
static int targets_reset(struct couple *c, const struct profile *prof)
{
	if (c->n_t != prof->n_targets) {
		targets_free(c);
		c->t = calloc(prof->n_targets ? prof->n_targets : 1, sizeof(*c->t));
		if (!c->t)
			return -ENOMEM;
		c->n_t = prof->n_targets;
	}
	for (size_t i = 0; i < c->n_t; i++) {
		serves_list_free(&c->t[i].served);
		c->t[i].priority = 0;
	}
	return 0;
}

/* What a thread had before irqres, into its state record. */
static int record_original(struct state *st, const struct thread_info *ti)
{
	struct state_thread rec = { 0 };
	struct dl_attr now;
	int rc;

	if (state_find_thread(st, ti->pid))
		return 0;	/* the first record keeps what it had before irqres */
	rc = dl_get(ti->pid, &now);
	if (rc)
		return rc;
	rec.pid = ti->pid;
	rec.starttime = ti->starttime;
	snprintf(rec.comm, sizeof(rec.comm), "%s", ti->comm);
	rec.policy = (int)now.sched_policy;
	rec.priority = (int)now.sched_priority;
	rec.nice = now.sched_nice;
	rec.dl_runtime_ns = now.sched_runtime;
	rec.dl_deadline_ns = now.sched_deadline;
	rec.dl_period_ns = now.sched_period;
	rec.flags = now.sched_flags;
	if (sched_getaffinity(ti->pid, sizeof(rec.affinity), &rec.affinity) < 0)
		CPU_ZERO(&rec.affinity);
	return state_add_thread(st, &rec);
}

/* Its own scheduling back (and its record forgotten); @ti updated to what it has now. */
static void give_back(struct state *st, struct thread_info *ti, const char *target)
{
	struct dl_attr now;
	int rc = apply_restore_thread(st, ti->pid);

	if (rc < 0 && rc != -ENOENT)
		pr_warn("%s (pid %d) of target '%s': cannot give its scheduling back: %s",
			ti->comm, (int)ti->pid, target, strerror(-rc));
	else
		pr_info("%s (pid %d) of target '%s' serves nobody now: its own scheduling back",
			ti->comm, (int)ti->pid, target);
	if (dl_get(ti->pid, &now) == 0) {
		ti->policy = (int)now.sched_policy;
		ti->priority = (int)now.sched_priority;
	}
}

/* SCHED_FIFO @want for @ti (recorded first): the priority set, or @had when it failed. */
static int raise_to(struct state *st, struct thread_info *ti, int want, int had,
		    const char *target)
{
	struct dl_attr a = { .size = sizeof(a), .sched_policy = SCHED_FIFO,
			     .sched_flags = SCHED_FLAG_RESET_ON_FORK,
			     .sched_priority = (uint32_t)want };
	bool recorded = state_find_thread(st, ti->pid) != NULL;
	int rc = record_original(st, ti);

	if (rc) {
		pr_err("%s (pid %d) of target '%s': cannot record its scheduling in %s, left "
		       "as it is: %s", ti->comm, (int)ti->pid, target, st->path, strerror(-rc));
		return had;
	}
	rc = dl_set(ti->pid, &a);
	if (rc) {
		pr_err("%s (pid %d) of target '%s': SCHED_FIFO %d refused: %s; left as it is",
		       ti->comm, (int)ti->pid, target, want, strerror(-rc));
		if (!recorded)
			state_forget_thread(st, ti->pid);
		return had;
	}
	pr_info("%s (pid %d) of target '%s': SCHED_FIFO %d, the priority of whom it serves "
		"(was %s %d)", ti->comm, (int)ti->pid, target, want, dl_policy_name(ti->policy),
		ti->priority);
	ti->policy = SCHED_FIFO;
	ti->priority = want;
	return want;
}

/* One thread of a coupled target: the priority irqres gave it now (0: none). */
static int couple_one(struct state *st, struct thread_info *ti, int want, int had,
		      const char *target)
{
	if (!want) {
		if (had)
			give_back(st, ti, target);
		return 0;
	}
	if (ti->policy == SCHED_DEADLINE)
		return had;	/* someone else's reservation (stalld's boost): never fought over */
	if (ti->policy == SCHED_FIFO && ti->priority == want)
		return had ? want : 0;
	return raise_to(st, ti, want, had, target);
}

static struct couple_thread *find_thread(struct couple *c, const struct thread_info *ti)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].thread.pid == ti->pid && c->v[i].thread.starttime == ti->starttime)
			return &c->v[i];
	return NULL;
}

/* The threads of the last tick that this one did not find again (gone, or no longer
 * selected): their own scheduling back. */
static void release_left(struct couple *c, const struct couple_thread *now, size_t n,
			 const struct profile *prof, struct state *st)
{
	for (size_t i = 0; i < c->n; i++) {
		struct couple_thread *o = &c->v[i];
		size_t k;

		for (k = 0; k < n && now[k].thread.pid != o->thread.pid; k++)
			;
		if (k < n || !o->set)
			continue;
		give_back(st, &o->thread, o->target < prof->n_targets ?
			  prof->targets[o->target].name : "?");
	}
}

/* The coupled threads of the profile, each given the priority of whom it serves. */
static int couple_threads(struct couple *c, const struct profile *prof, struct state *st,
			  const struct match_list *ml, couple_held_fn held, void *ctx)
{
	struct couple_thread *now = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < ml->n; i++) {
		const struct target *t = &prof->targets[ml->v[i].target];
		struct thread_info ti = ml->v[i].thread;
		const struct couple_thread *prev = find_thread(c, &ti);
		int set;

		if (held && held(ctx, ti.pid)) {
			/* a reservation target holds it (its record is the reservation's now) */
			if (prev)
				((struct couple_thread *)prev)->set = 0;
			continue;
		}
		set = couple_one(st, &ti, c->t[ml->v[i].target].priority, prev ? prev->set : 0,
				 t->name);
		if (ARRAY_RESERVE(now, cap, n + 1)) {
			free(now);
			return -ENOMEM;	/* c->v still lists every thread changed */
		}
		now[n++] = (struct couple_thread){ ml->v[i].target, ti, set };
	}
	release_left(c, now, n, prof, st);
	free(c->v);
	c->v = now;
	c->n = n;
	c->cap = cap;
	return 0;
}

/* Whom each target with serves: serves, and the coupled targets' threads into @ml. */
static int find_served(struct couple *c, const struct profile *prof,
		       const struct thread_list *irq, const struct thread_list *tasks,
		       struct match_list *ml)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < prof->n_targets; i++) {
		const struct target *t = &prof->targets[i];

		if (!t->serves.given)
			continue;
		rc = serves_find(&t->serves, tasks, c->t[i].ports.holders, c->t[i].ports.n_holders,
				 &c->t[i].served);
		if (rc || !t->coupled)
			continue;
		c->t[i].priority = serves_fifo_priority(&c->t[i].served);
		rc = match_target_threads(prof, i, irq, tasks, ml);
	}
	return rc;
}

/* The processes whose threads a tick lists: every process, or these (tgids). */
struct scope {
	bool all;
	struct pidset pids;
};

/* Selectors by pid (a process's or one of its threads'): their processes. A pid that
 * names no thread adds nothing; one whose process cannot be told widens to all. */
static int scope_add_pids(struct scope *s, const pid_t *pids, size_t n)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		struct thread_info ti;
		int r = discover_read(pids[i], &ti);

		if (r == -ESRCH)
			continue;
		if (r || ti.tgid <= 0)
			s->all = true;
		else
			rc = pidset_add(&s->pids, ti.tgid);
	}
	return rc;
}

/*
 * What target @i needs listed: the processes holding its ports' sockets (kept in c->t[i]
 * for serves_find), or those its pids name, else every process (a comm or cgroup
 * selector can select any); and for a coupled task target, the processes of its own
 * threads the same way.
 */
static int scope_target(struct couple *c, const struct profile *prof, size_t i,
			struct scope *s)
{
	const struct target *t = &prof->targets[i];
	const struct serves_sel *sel = &t->serves;
	int rc = 0;

	if (sel->n_ports) {
		rc = serves_port_holders(sel->ports, sel->n_ports, &c->t[i].ports);
		for (size_t k = 0; !rc && k < c->t[i].ports.n_holders; k++)
			rc = pidset_add(&s->pids, c->t[i].ports.holders[k]);
	} else if (sel->n_pids) {
		rc = scope_add_pids(s, sel->pids, sel->n_pids);
	} else if (sel->given) {
		s->all = true;
	}
	if (rc || !t->coupled || target_kind_of(t)->threads != TARGET_THREADS_TASKS)
		return rc;
	if (t->n_pids)
		return scope_add_pids(s, t->pids, t->n_pids);
	s->all = true;
	return 0;
}

/* The user threads a tick needs (see scope_target): only those processes' when it can. */
static int scan_tasks(struct couple *c, const struct profile *prof, struct thread_list *tasks)
{
	struct scope s = { 0 };
	int rc = 0;

	for (size_t i = 0; !rc && i < prof->n_targets; i++)
		rc = scope_target(c, prof, i, &s);
	if (!rc && s.all) {
		rc = discover_scan_tasks(tasks);
	} else if (!rc) {
		pidset_sort(&s.pids);	/* each process once */
		rc = discover_scan_tasks_of(s.pids.v, s.pids.n, tasks);
	}
	pidset_free(&s.pids);
	return rc;
}

/* Whom each target serves (into c->t) and the coupled targets' threads (into @ml); the
 * device threads from @given when not NULL. */
static int scan(struct couple *c, const struct profile *prof, const struct thread_list *given,
		struct match_list *ml)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	int rc = targets_reset(c, prof);

	if (!rc && needs_irq_threads(prof) && !given)
		rc = discover_scan_irq(&irq, match_needs_softirqd(prof));
	if (!rc)
		rc = scan_tasks(c, prof, &tasks);
	if (!rc)
		rc = find_served(c, prof, given ? given : &irq, &tasks, ml);
	discover_list_free(&tasks);
	discover_list_free(&irq);
	return rc;
}

int couple_tick(struct couple *c, const struct profile *prof, struct state *st,
		couple_held_fn held, void *ctx, const struct thread_list *irq)
{
	struct match_list ml = { 0 };
	int rc;

	if (!couple_needed(prof))
		return 0;
	rc = scan(c, prof, irq, &ml);
	if (!rc)
		rc = couple_threads(c, prof, st, &ml, held, ctx);
	if (rc)
		pr_warn("%s: whom the devices' threads serve: %s", prof->path, strerror(-rc));
	match_list_free(&ml);
	return rc;
}

/* A coupled thread that does not have the priority the rule gives: one difference. */
static int check_thread(const struct target *t, const struct thread_info *ti, int want,
			char ***diffs, size_t *n, size_t *cap)
{
	if (!want || ti->policy == SCHED_DEADLINE ||
	    (ti->policy == SCHED_FIFO && ti->priority == want))
		return 0;	/* nobody served (its own), someone else's, or as the rule says */
	return array_printf(diffs, n, cap, "%s (pid %d) of target '%s': %s %d, the processes "
			    "it serves give SCHED_FIFO %d", ti->comm, (int)ti->pid, t->name,
			    dl_policy_name(ti->policy), ti->priority, want);
}

int couple_check(struct couple *c, const struct profile *prof, size_t *checked,
		 char ***diffs, size_t *n, size_t *cap)
{
	struct match_list ml = { 0 };
	int rc;

	if (!couple_needed(prof))
		return 0;
	rc = scan(c, prof, NULL, &ml);
	for (size_t i = 0; !rc && i < ml.n; i++) {
		const struct match *m = &ml.v[i];

		rc = check_thread(&prof->targets[m->target], &m->thread,
				  c->t[m->target].priority, diffs, n, cap);
		(*checked)++;
		if (!rc && ARRAY_RESERVE(c->v, c->cap, c->n + 1))
			rc = -ENOMEM;
		if (!rc)
			c->v[c->n++] = (struct couple_thread){ m->target, m->thread, 0 };
	}
	match_list_free(&ml);
	return rc;
}

void couple_release(struct couple *c, struct state *st)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].set)
			give_back(st, &c->v[i].thread, "(released)");
	couple_forget(c);
}

void couple_forget(struct couple *c)
{
	targets_free(c);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void write_task(struct json *j, pid_t pid, pid_t tgid, const char *comm, int policy,
		       int priority)
{
	json_obj_begin(j);
	json_kv_int(j, "pid", pid);
	json_kv_int(j, "tgid", tgid);
	json_kv_str(j, "comm", comm);
	json_kv_str(j, "policy", dl_policy_name(policy));
	json_kv_int(j, "priority", priority);
}

static void write_coupling(const struct couple *c, size_t target, struct json *j)
{
	int prio = target < c->n_t ? c->t[target].priority : 0;

	json_obj_begin(j);
	if (prio)
		json_kv_int(j, "priority", prio);
	else
		json_kv_null(j, "priority");
	json_key(j, "threads");
	json_arr_begin(j);
	for (size_t i = 0; i < c->n; i++) {
		const struct couple_thread *ct = &c->v[i];

		if (ct->target != target)
			continue;
		write_task(j, ct->thread.pid, ct->thread.tgid, ct->thread.comm,
			   ct->thread.policy, ct->thread.priority);
		json_kv_bool(j, "coupled", ct->set != 0);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void couple_served_json(const struct couple *c, size_t target, struct json *j)
{
	json_arr_begin(j);
	for (size_t i = 0; target < c->n_t && i < c->t[target].served.n; i++) {
		const struct served *s = &c->t[target].served.v[i];

		write_task(j, s->pid, s->tgid, s->comm, s->policy, s->priority);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void couple_status_json(const struct couple *c, const struct profile *prof, size_t target,
			struct json *j)
{
	const struct target *t = &prof->targets[target];

	json_key(j, "serves");
	if (t->serves.given)
		couple_served_json(c, target, j);
	else
		json_null(j);
	json_key(j, "coupling");
	if (t->coupled)
		write_coupling(c, target, j);
	else
		json_null(j);
}
