/* SPDX-License-Identifier: GPL-2.0-only */
/* verify.c - compares the running system with a profile; see verify.h. */
#include "verify.h"
#include "array.h"

#include "daemon.h"
#include "dl.h"
#include "plan.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void now_text(const struct thread_info *ti, char *buf, size_t len)
{
	dl_sched_text(ti->policy, ti->priority, ti->nice, ti->dl_runtime_ns, ti->dl_deadline_ns,
		      ti->dl_period_ns, buf, len);
}

/* A thread already in the partition of irqres its reservation needs, yet not under
 * SCHED_DEADLINE: what a thread irqresd waits for looks like (apply.h, APPLY_PENDING). */
static bool in_partition_unreserved(const struct plan *plan, const struct plan_item *it)
{
	const char *cg = it->thread.cgroup;
	const char *part;

	if (it->thread.policy == SCHED_DEADLINE || it->domain < 0)
		return false;
	part = plan->domains[it->domain].partition;
	return strncmp(part, CPUSET_PREFIX, strlen(CPUSET_PREFIX)) == 0 && cg[0] == '/' &&
	       strcmp(cg + 1, part) == 0;
}

static const struct verify_budget *find_budget(const struct verify_budget *b, size_t n,
					       pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].pid == pid)
			return &b[i];
	return NULL;
}

/* Does ti hold the reservation w (an adaptive target's runtime within its clamps, unless
 * w is a set-budget's)? The expectation as text in want. */
static bool reservation_holds(const struct target *t, const struct verify_budget *w,
			      bool own, const struct thread_info *ti, char *want, size_t len)
{
	char q[UNITS_FMT_LEN], d[UNITS_FMT_LEN], p[UNITS_FMT_LEN];
	char lo[UNITS_FMT_LEN], hi[UNITS_FMT_LEN];
	bool runtime_ok = ti->dl_runtime_ns == w->runtime_ns;

	units_format_duration(w->runtime_ns, q, sizeof(q));
	units_format_duration(w->deadline_ns, d, sizeof(d));
	units_format_duration(w->period_ns, p, sizeof(p));
	snprintf(want, len, "deadline %s/%s/%s", q, d, p);
	if (t->mode == MODE_ADAPTIVE && !own) {
		uint64_t min = profile_adaptive_min_runtime(t, t->period_ns);
		uint64_t max = profile_adaptive_max_runtime(t, t->period_ns);

		runtime_ok = ti->dl_runtime_ns >= min && ti->dl_runtime_ns <= max;
		snprintf(want, len, "deadline %s..%s/%s/%s (adaptive)",
			 units_format_duration(min, lo, sizeof(lo)),
			 units_format_duration(max, hi, sizeof(hi)), d, p);
	}
	return ti->policy == SCHED_DEADLINE && runtime_ok && ti->dl_deadline_ns == w->deadline_ns &&
	       ti->dl_period_ns == w->period_ns;
}

/* The differences of one selected thread; sb: its budget since a set-budget pid:N. */
static int check_item(const struct plan *plan, const struct plan_item *it,
		      const struct verify_budget *sb, struct verify_result *res)
{
	const struct target *t = &plan->prof->targets[it->target];
	const struct thread_info *ti = &it->thread;
	const struct verify_budget w = sb ? *sb : (struct verify_budget){
		ti->pid, t->runtime_ns, t->deadline_ns, t->period_ns };
	char now[96], want[160];
	int rc = 0;

	res->by_set_budget += sb != NULL;
	if (!reservation_holds(t, &w, sb != NULL, ti, want, sizeof(want))) {
		now_text(ti, now, sizeof(now));
		rc = array_printf(&res->diffs, &res->n_diffs, &res->diffs_cap, "target '%s': %s "
				  "(pid %d): scheduling is %s, %s says %s%s", t->name, ti->comm,
				  (int)ti->pid, now, sb ? "the last set-budget" : "the profile",
				  want, in_partition_unreserved(plan, it) ?
				  " (it is in its cpuset partition and has not run there since it "
				  "was moved: the kernel accepts SCHED_DEADLINE after its next "
				  "interrupt, and a running irqresd applies it then)" : "");
	}
	if (!rc && it->needs_partition)
		rc = array_printf(&res->diffs, &res->n_diffs, &res->diffs_cap, "target '%s': %s "
				  "(pid %d): cgroup is %s, its reservation needs cpuset partition "
				  "%s%s", t->name, ti->comm, (int)ti->pid,
				  ti->cgroup[0] ? ti->cgroup : "unknown", it->partition,
				  plan_item_moves(it) ? "" : " of its CPUs (which it stays beside: "
				  "PF_NO_SETAFFINITY)");
	return rc;
}

int verify_profile(const struct profile *prof, const struct verify_budget *budgets,
		   size_t n_budgets, struct verify_result *res, char *err, size_t errlen)
{
	struct match_list matches = { 0 };
	struct plan plan;
	int rc;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	rc = daemon_resolve(prof, &matches, &plan, err, errlen);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	rc = 0;
	res->checked = plan.n_items;
	for (size_t i = 0; !rc && i < plan.n_items; i++)
		rc = check_item(&plan, &plan.items[i],
				find_budget(budgets, n_budgets, plan.items[i].thread.pid), res);
	/* targets that select nothing (the plan's notes name them with file:line:col), and
	 * interfaces the profile switches to threaded NAPI that poll in soft IRQs */
	for (size_t i = 0; !rc && i < plan.n_errors + plan.n_warnings; i++) {
		const char *msg = i < plan.n_errors ? plan.errors[i]
						    : plan.warnings[i - plan.n_errors];

		if (strstr(msg, " matches no thread") || strstr(msg, ": threaded NAPI is off "))
			rc = array_printf(&res->diffs, &res->n_diffs, &res->diffs_cap, "%s", msg);
	}
	if (!rc)	/* coupled targets: their threads at the priority the rule gives */
		rc = couple_check(&res->seen, prof, &res->checked, &res->diffs, &res->n_diffs,
				  &res->diffs_cap);
	plan_free(&plan);
	match_list_free(&matches);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", prof->path, strerror(-rc));
		verify_result_free(res);
	}
	return rc;
}

void verify_result_free(struct verify_result *res)
{
	array_free_strings(&res->diffs, &res->n_diffs, &res->diffs_cap);
	couple_forget(&res->seen);
	memset(res, 0, sizeof(*res));
}

void verify_write_json(const struct profile *prof, const struct verify_result *res,
		       struct json *j)
{
	json_kv_int(j, "schema_version", IRQRES_JSON_SCHEMA);
	json_kv_str(j, "profile", prof->path);
	json_kv_bool(j, "consistent", res->n_diffs == 0);
	json_kv_uint(j, "checked", res->checked);
	json_kv_uint(j, "by_set_budget", res->by_set_budget);
	json_key(j, "differences");
	json_arr_begin(j);
	for (size_t i = 0; i < res->n_diffs; i++)
		json_str(j, res->diffs[i]);
	json_arr_end(j);
	json_key(j, "serves");
	json_arr_begin(j);
	for (size_t i = 0; i < prof->n_targets; i++) {
		if (!prof->targets[i].serves.given)
			continue;
		json_obj_begin(j);
		json_kv_str(j, "target", prof->targets[i].name);
		json_key(j, "threads");
		couple_served_json(&res->seen, i, j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* "target 'nic' serves: rx (pid 7) fifo 20, ..." for each target with serves:. */
static void print_served(const struct profile *prof, const struct verify_result *res, FILE *f)
{
	for (size_t i = 0; i < prof->n_targets && i < res->seen.n_t; i++) {
		const struct served_list *l = &res->seen.t[i].served;

		if (!prof->targets[i].serves.given)
			continue;
		fprintf(f, "  target '%s' serves: %s", prof->targets[i].name,
			l->n ? "" : "nobody now");
		for (size_t k = 0; k < l->n; k++)
			fprintf(f, "%s%s (pid %d) %s %d", k ? ", " : "", l->v[k].comm,
				(int)l->v[k].pid, dl_policy_name(l->v[k].policy), l->v[k].priority);
		fputc('\n', f);
	}
}

void verify_print_text(const struct profile *prof, const struct verify_result *res, FILE *f)
{
	if (!res->n_diffs) {
		fprintf(f, "Verified %s: %zu thread%s as the profile says", prof->path,
			res->checked, res->checked == 1 ? "" : "s");
		if (res->by_set_budget)
			fprintf(f, ", %zu of them as the last set-budget says",
				res->by_set_budget);
		fputc('\n', f);
		print_served(prof, res, f);
		return;
	}
	fprintf(f, "%s: %zu difference%s between the running system and the profile:\n",
		prof->path, res->n_diffs, res->n_diffs == 1 ? "" : "s");
	for (size_t i = 0; i < res->n_diffs; i++)
		fprintf(f, "  %s\n", res->diffs[i]);
	print_served(prof, res, f);
}
