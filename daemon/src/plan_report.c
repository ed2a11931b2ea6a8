/* SPDX-License-Identifier: GPL-2.0-only */
/* plan_report.c - the plan for people and for programs; see plan_report.h. */
#include "plan_report.h"
#include "target_kind.h"
#include "array.h"
#include "dl.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *target_name(const struct plan *plan, const struct plan_item *it)
{
	return plan->prof && it->target < plan->prof->n_targets ?
	       plan->prof->targets[it->target].name : "?";
}

static void old_policy_str(const struct thread_info *ti, char *buf, size_t len)
{
	if (ti->policy == SCHED_FIFO || ti->policy == SCHED_RR)
		snprintf(buf, len, "%s %d", dl_policy_name(ti->policy), ti->priority);
	else if (ti->policy == SCHED_DEADLINE)
		snprintf(buf, len, "deadline");
	else
		snprintf(buf, len, "%s nice %d", dl_policy_name(ti->policy), ti->nice);
}

static double bw_double(uint64_t bw)
{
	return (double)bw / (double)DL_BW_UNIT;
}

/* A bandwidth for JSON: the kernel's 2^-20 steps rounded to 6 decimals (0.2, not
 * 0.19999980926513672). */
static double bw_json(double v)
{
	return (double)(long long)(v * 1e6 + 0.5) / 1e6;	/* v >= 0 */
}

const char *plan_report_summary(const struct plan *plan)
{
	if (plan->n_items == 0 && plan->feasible)	/* coupled targets only (couple.h) */
		return "nothing to reserve: its coupled targets follow whom they serve";
	if (plan->n_items == 0)
		return "REFUSED: the profile matches no thread";
	for (size_t i = 0; i < plan->n_items; i++)
		if (!plan->items[i].ok && plan->items[i].owner.kind != OWNER_NONE)
			return "REFUSED: another irqresd or tool holds a thread it selects";
	if (plan->feasible && plan->kernel_admission_off && !plan->admission_off)
		return "the kernel will accept it, but ADMISSION CONTROL IS OFF "
		       "(sched_rt_runtime_us = -1): no reservation is guaranteed";
	return plan->feasible ? "the kernel will accept it" : "the kernel will NOT accept it";
}

/* ---- the text report: a table whose columns are as wide as their widest cell ---- */

#define TABLE_COLS_MAX 16

struct table {
	size_t ncols, nrows;
	char **cells;			/* nrows * ncols, row-major */
	size_t cap;
};

static int table_row(struct table *tb, const char *const *row)
{
	if (ARRAY_RESERVE(tb->cells, tb->cap, (tb->nrows + 1) * tb->ncols))
		return -ENOMEM;
	for (size_t c = 0; c < tb->ncols; c++)
		tb->cells[tb->nrows * tb->ncols + c] = strdup(row[c] ? row[c] : "");
	tb->nrows++;
	return 0;
}

/* Cells left-aligned, two blanks apart, trailing blanks dropped (the client's table()). */
static void table_print(struct table *tb, FILE *f)
{
	size_t w[TABLE_COLS_MAX] = { 0 };

	for (size_t r = 0; r < tb->nrows; r++)
		for (size_t c = 0; c < tb->ncols; c++) {
			const char *cell = tb->cells[r * tb->ncols + c];
			size_t n = cell ? strlen(cell) : 0;

			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < tb->nrows; r++) {
		char line[4096];
		size_t used = 0;

		for (size_t c = 0; c < tb->ncols && used < sizeof(line); c++) {
			const char *cell = tb->cells[r * tb->ncols + c];
			int n = snprintf(line + used, sizeof(line) - used, "%s%-*s", c ? "  " : "",
					 (int)w[c], cell ? cell : "");

			if (n < 0)
				break;
			used += (size_t)n;
		}
		if (used >= sizeof(line))
			used = sizeof(line) - 1;
		while (used && line[used - 1] == ' ')
			used--;
		fprintf(f, "%.*s\n", (int)used, line);
	}
	for (size_t i = 0; i < tb->nrows * tb->ncols; i++)
		free(tb->cells[i]);
	free(tb->cells);
	tb->cells = NULL;
	tb->nrows = tb->cap = 0;
}

static void fmt_bw(double bw, char *buf, size_t len)
{
	snprintf(buf, len, "%.3f", bw);
}

const char *plan_report_bw_source(enum plan_bw_source src)
{
	return src == PLAN_BW_KERNEL ? "kernel" : "counted";
}

/* Where each domain's numbers come from, in the kernel's units (1 CPU = 2^20). */
static void plan_print_sources(const struct plan *plan, FILE *f)
{
	if (!plan->n_domains)
		return;
	fprintf(f, "\nWhere the numbers come from (bandwidth in 2^-20 CPU, the kernel's unit): "
		"capacity = to_ratio(sched_rt_period_us, sched_rt_runtime_us) x CPUs from "
		"%s/sys/kernel; deadline servers (%s) from %s/kernel/debug/sched/*_server/cpuN/"
		"{runtime,period}; tasks by sched_getattr of every thread in %s; the kernel's "
		"own count is dl_bw->total_bw in %s/kernel/debug/sched/debug\n",
		irqres_paths.proc, plan->servers, irqres_paths.sys, irqres_paths.proc,
		irqres_paths.sys);
	for (size_t i = 0; i < plan->n_domains; i++) {
		const struct plan_domain *dm = &plan->domains[i];
		char cpus[64];

		cpuset_list_str(&dm->cpus, cpus, sizeof(cpus));
		if (dm->source == PLAN_BW_KERNEL)
			fprintf(f, "  CPUs %s: existing %" PRIu64 " = the kernel's dl_bw->total_bw "
				"less the threads this plan replaces (deadline servers %" PRIu64
				" + tasks %" PRIu64 " counted)", cpus, dm->existing_bw,
				dm->servers_bw, dm->tasks_bw);
		else
			fprintf(f, "  CPUs %s: existing %" PRIu64 " = deadline servers %" PRIu64
				" + tasks %" PRIu64 " (%s: at most what the kernel counts in the "
				"root domain it builds)", cpus, dm->existing_bw, dm->servers_bw,
				dm->tasks_bw, dm->is_new ? "a new partition" : "shrinks");
		if (dm->unlimited)
			fprintf(f, ", new %" PRIu64 ", capacity unlimited\n", dm->new_bw);
		else
			fprintf(f, ", new %" PRIu64 ", capacity %" PRIu64 ": %s\n", dm->new_bw,
				dm->cap_bw, dm->ok ? "admitted" : "refused (EBUSY)");
	}
}

/* The sources paragraph as text ("" when there is none): printed by plan_report_text()
 * and carried in the JSON, so that every renderer shows the same. Caller frees. */
static char *plan_sources_text(const struct plan *plan)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (plan->n_items)
		plan_print_sources(plan, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void item_row(const struct plan *plan, const struct plan_item *it, struct table *tb)
{
	char q[UNITS_FMT_LEN], d[UNITS_FMT_LEN], t[UNITS_FMT_LEN], pid[16], irq[16];
	char old[32], cpus[64], bw[16], part[CPUSET_NAME_MAX + 16];
	const char *row[] = {
		target_name(plan, it), it->thread.comm, pid, irq,
		cpuset_list_str(&it->cpus, cpus, sizeof(cpus)), old,
		units_format_duration(it->runtime_ns, q, sizeof(q)),
		units_format_duration(it->deadline_ns, d, sizeof(d)),
		units_format_duration(it->period_ns, t, sizeof(t)), bw,
		part, profile_buffer_verdict_name(it->buffer_check), it->verdict,
	};

	/* a thread that cannot move stays in its cgroup beside the partition of its CPUs */
	snprintf(part, sizeof(part), "%s%s", it->needs_partition && it->partition[0] ?
		 it->partition : "-", it->needs_partition && !plan_item_moves(it) ?
		 " (stays)" : "");

	snprintf(pid, sizeof(pid), "%d", (int)it->thread.pid);
	snprintf(irq, sizeof(irq), it->thread.irq >= 0 ? "%d" : "-", it->thread.irq);
	old_policy_str(&it->thread, old, sizeof(old));
	fmt_bw(bw_json(bw_double(it->bw)), bw, sizeof(bw));
	table_row(tb, row);
}

static void domain_row(const struct plan_domain *dm, struct table *tb)
{
	char cpus[64], part[CPUSET_NAME_MAX + 16], cap[24], e[16], n[16], tot[16];
	const char *row[] = { cpuset_list_str(&dm->cpus, cpus, sizeof(cpus)), part, cap, e, n,
			      tot, dm->ok ? "yes" : "NO" };

	snprintf(part, sizeof(part), "%s%s", dm->partition[0] ? dm->partition :
		 dm->isolated ? "(isolated)" : "(default)",
		 dm->is_new ? " (new)" : "");
	if (dm->unlimited)
		snprintf(cap, sizeof(cap), "unlimited");
	else
		fmt_bw(bw_json(dm->capacity), cap, sizeof(cap));
	fmt_bw(bw_json(bw_double(dm->existing_bw)), e, sizeof(e));
	fmt_bw(bw_json(bw_double(dm->new_bw)), n, sizeof(n));
	fmt_bw(bw_json(bw_double(dm->existing_bw + dm->new_bw)), tot, sizeof(tot));
	table_row(tb, row);
}

/* The sources of the domains' counts, then the warnings and errors. */
static void print_notes(const struct plan *plan, FILE *f)
{
	char *sources = plan_sources_text(plan);

	if (sources)
		fputs(sources, f);
	free(sources);
	if (plan->n_items)
		enforce_report_text(&plan->enforce, f);
	for (size_t i = 0; i < plan->n_warnings; i++)
		fprintf(f, "%swarning: %s\n", i ? "" : "\n", plan->warnings[i]);
	for (size_t i = 0; i < plan->n_errors; i++)
		fprintf(f, "%serror: %s\n", i || plan->n_warnings ? "" : "\n", plan->errors[i]);
}

void plan_report_text(const struct plan *plan, FILE *f)
{
	static const char *const item_head[] = {
		"TARGET", "THREAD", "PID", "IRQ", "CPUS", "NOW", "RUNTIME", "DEADLINE", "PERIOD",
		"BW", "PARTITION", "BUFFER", "VERDICT",
	};
	static const char *const dom_head[] = {
		"ROOT DOMAIN", "PARTITION", "CAPACITY", "EXISTING", "NEW", "TOTAL", "OK",
	};
	struct table tb = { .ncols = sizeof(item_head) / sizeof(item_head[0]) };

	fprintf(f, "Plan for %s: %s\n\n", plan->prof && plan->prof->path ? plan->prof->path :
		"the profile", plan_report_summary(plan));
	if (plan->n_items == 0)
		fprintf(f, "no thread matched\n");
	else
		table_row(&tb, item_head);
	for (size_t i = 0; i < plan->n_items; i++)
		item_row(plan, &plan->items[i], &tb);
	table_print(&tb, f);
	if (plan->n_domains && plan->n_items) {
		tb.ncols = sizeof(dom_head) / sizeof(dom_head[0]);
		fprintf(f, "\n");
		table_row(&tb, dom_head);
		for (size_t i = 0; i < plan->n_domains; i++)
			domain_row(&plan->domains[i], &tb);
		table_print(&tb, f);
		fprintf(f, "(bandwidth in CPUs: the kernel admits while existing + new <= "
			"capacity)\n");
	}
	print_notes(plan, f);
}

/* "owner": who else holds the thread (owner.h), null when nobody. */
static void owner_json(const struct owner *o, struct json *j)
{
	if (o->kind == OWNER_NONE) {
		json_kv_null(j, "owner");
		return;
	}
	json_key(j, "owner");
	json_obj_begin(j);
	json_kv_str(j, "kind", o->kind == OWNER_IRQRESD ? "irqresd" : "tool");
	if (o->kind == OWNER_IRQRESD) {
		json_kv_int(j, "pid", o->daemon_pid);
		json_kv_str(j, "run_dir", o->run_dir);
	} else {
		json_kv_null(j, "pid");
		json_kv_null(j, "run_dir");
	}
	json_kv_str(j, "scheduling", o->sched);
	json_kv_str(j, "text", o->text);
	json_obj_end(j);
}

static void item_json(const struct plan *plan, const struct plan_item *it, struct json *j)
{
	char cpus[256], dir[CGROUP_PATH_MAX];
	bool part = it->needs_partition && it->partition[0];

	json_obj_begin(j);
	json_kv_str(j, "target", target_name(plan, it));
	json_kv_str(j, "kind", plan->prof && it->target < plan->prof->n_targets ?
		    target_kind_of(&plan->prof->targets[it->target])->name : NULL);
	json_kv_int(j, "pid", it->thread.pid);
	json_kv_str(j, "comm", it->thread.comm);
	if (it->thread.irq >= 0)
		json_kv_int(j, "irq", it->thread.irq);
	else
		json_kv_null(j, "irq");
	json_kv_str(j, "cpus", cpuset_list_str(&it->cpus, cpus, sizeof(cpus)));
	json_kv_str(j, "old_policy", dl_policy_name(it->thread.policy));
	json_kv_int(j, "old_priority", it->thread.priority);
	json_kv_int(j, "old_nice", it->thread.nice);
	json_kv_str(j, "new_policy", "deadline");
	json_kv_uint(j, "runtime_ns", it->runtime_ns);
	json_kv_uint(j, "deadline_ns", it->deadline_ns);
	json_kv_uint(j, "period_ns", it->period_ns);
	json_kv_double(j, "bw", bw_json(bw_double(it->bw)));
	json_kv_bool(j, "needs_partition", it->needs_partition);
	json_kv_bool(j, "moves_into_partition", plan_item_moves(it));
	json_kv_str(j, "partition", part ? it->partition : NULL);
	if (part && cpuset_group_dir(it->partition, dir, sizeof(dir)) == 0)
		json_kv_str(j, "cpuset", dir);
	else
		json_kv_null(j, "cpuset");
	json_kv_str(j, "buffer_check", profile_buffer_verdict_name(it->buffer_check));
	json_kv_str(j, "verdict", it->verdict);
	owner_json(&it->owner, j);
	if (plan->enforce.granule_ns)	/* enforce.h: the worst overrun of its budget */
		json_kv_uint(j, "overrun_max_ns", plan->enforce.granule_ns);
	else
		json_kv_null(j, "overrun_max_ns");
	json_obj_end(j);
}

static void domain_json(const struct plan_domain *dm, struct json *j)
{
	char cpus[256];

	json_obj_begin(j);
	json_kv_str(j, "cpus", cpuset_list_str(&dm->cpus, cpus, sizeof(cpus)));
	json_kv_str(j, "partition", dm->partition[0] ? dm->partition : NULL);
	json_kv_bool(j, "new", dm->is_new);
	json_kv_bool(j, "isolated", dm->isolated);
	if (dm->unlimited)
		json_kv_null(j, "capacity");	/* admission control off */
	else
		json_kv_double(j, "capacity", bw_json(dm->capacity));
	json_kv_double(j, "existing_bw", bw_json(bw_double(dm->existing_bw)));
	json_kv_double(j, "new_bw", bw_json(bw_double(dm->new_bw)));
	/* the same exactly, in the kernel's unit (2^-20 CPU), and their sources */
	if (dm->unlimited)
		json_kv_null(j, "cap_bw_units");
	else
		json_kv_uint(j, "cap_bw_units", dm->cap_bw);
	json_kv_uint(j, "existing_bw_units", dm->existing_bw);
	json_kv_uint(j, "new_bw_units", dm->new_bw);
	json_kv_str(j, "existing_source", plan_report_bw_source(dm->source));
	json_kv_uint(j, "servers_bw_units", dm->servers_bw);
	json_kv_uint(j, "tasks_bw_units", dm->tasks_bw);
	json_kv_double(j, "total_bw", bw_json(bw_double(dm->existing_bw + dm->new_bw)));
	json_kv_bool(j, "ok", dm->ok);
	json_obj_end(j);
}

static void strings_json(const char *key, char *const *v, size_t n, struct json *j)
{
	json_key(j, key);
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		json_str(j, v[i]);
	json_arr_end(j);
}

void plan_report_json(const struct plan *plan, struct json *j)
{
	char *sources;

	json_obj_begin(j);
	json_kv_str(j, "profile", plan->prof && plan->prof->path ? plan->prof->path : NULL);
	json_kv_bool(j, "feasible", plan->feasible);
	json_kv_str(j, "summary", plan_report_summary(plan));
	json_key(j, "items");
	json_arr_begin(j);
	for (size_t i = 0; i < plan->n_items; i++)
		item_json(plan, &plan->items[i], j);
	json_arr_end(j);
	json_key(j, "domains");
	json_arr_begin(j);
	for (size_t i = 0; i < plan->n_domains; i++)
		domain_json(&plan->domains[i], j);
	json_arr_end(j);
	sources = plan_sources_text(plan);
	json_kv_str(j, "sources", sources ? sources : "");
	free(sources);
	json_key(j, "enforcement");
	enforce_report_json(&plan->enforce, j);
	json_kv_str(j, "kernel_admission", plan->kernel_admission_off ? "off" : "on");
	strings_json("warnings", plan->warnings, plan->n_warnings, j);
	strings_json("errors", plan->errors, plan->n_errors, j);
	json_kv_int(j, "schema_version", IRQRES_JSON_SCHEMA);
	json_obj_end(j);
}
