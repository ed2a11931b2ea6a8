// SPDX-License-Identifier: GPL-2.0-only
/* Merging the units of a parallel read: see merge.h. */
#include "merge.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * The run whose next row comes first in libtracecmd's order, (timestamp, cpu), or -1
 * when every run is consumed. @pos[i]: next row of run i. Runs have disjoint CPUs, so
 * two heads never compare equal.
 */
static int next_run(struct col *const *ts, struct col *const *cpu, const size_t *pos, int k)
{
	int best = -1;
	int64_t bts = 0;
	int32_t bcpu = 0;

	for (int i = 0; i < k; i++) {
		if (pos[i] == ts[i]->len)
			continue;
		int64_t t = ((const int64_t *)ts[i]->data)[pos[i]];
		int32_t c = ((const int32_t *)cpu[i]->data)[pos[i]];

		if (best < 0 || t < bts || (t == bts && c < bcpu)) {
			best = i;
			bts = t;
			bcpu = c;
		}
	}
	return best;
}

/* The run of each row of the merge of @k runs keyed by (@ts, @cpu); NULL on ENOMEM. */
static uint8_t *merge_order(struct col *const *ts, struct col *const *cpu, int k, size_t *total)
{
	size_t pos[MAX_UNITS] = { 0 }, n = 0;
	uint8_t *order;

	for (int i = 0; i < k; i++)
		n += ts[i]->len;
	order = malloc(n ? n : 1);
	if (!order)
		return NULL;
	for (size_t o = 0; o < n; o++) {
		int w = next_run(ts, cpu, pos, k);

		order[o] = (uint8_t)w;
		pos[w]++;
	}
	*total = n;
	return order;
}

/*
 * Fill @dst with the rows of @runs in @order, and empty the runs. @map, for name
 * indices: per run, its pair index -> the merged one (-1 stays -1).
 */
static int gather(struct col *dst, struct col *const *runs, int k, const uint8_t *order,
		  size_t n, int32_t *const *map)
{
	size_t pos[MAX_UNITS] = { 0 };
	char *out = malloc(n ? n * dst->size : 1);

	if (!out)
		return -ENOMEM;
	if (dst->size == 8) {
		int64_t *o = (int64_t *)out;

		for (size_t i = 0; i < n; i++) {
			int w = order[i];

			o[i] = ((const int64_t *)runs[w]->data)[pos[w]++];
		}
	} else {
		int32_t *o = (int32_t *)out;

		for (size_t i = 0; i < n; i++) {
			int w = order[i];
			int32_t v = ((const int32_t *)runs[w]->data)[pos[w]++];

			o[i] = map && v >= 0 ? map[w][v] : v;
		}
	}
	for (int i = 0; i < k; i++) {
		free(runs[i]->data);
		runs[i]->data = NULL;
		runs[i]->len = runs[i]->cap = 0;
	}
	free(dst->data);
	dst->data = out;
	dst->len = dst->cap = n;
	return 0;
}

/*
 * Note the pairs of every run in @dst in the order they first appear in the merged
 * stream; @map (or NULL): per run, its pair index -> the index in @dst.
 */
static int merge_names(struct names *dst, struct names *const *runs, int k, int32_t *const *map)
{
	struct col *ts[MAX_UNITS], *cpu[MAX_UNITS];
	size_t pos[MAX_UNITS] = { 0 };
	int w;

	for (int i = 0; i < k; i++) {
		ts[i] = &runs[i]->born_ts;
		cpu[i] = &runs[i]->born_cpu;
	}
	while ((w = next_run(ts, cpu, pos, k)) >= 0) {
		const struct name_entry *e = &runs[w]->v[pos[w]];
		int idx = names_note(dst, e->key, e->name, e->len);

		if (idx < 0)
			return idx;
		if (map)
			map[w][pos[w]] = idx;
		pos[w]++;
	}
	return 0;
}

/* One column to gather: the merge's columns are independent, so threads share them. */
struct gather_job {
	struct col *dst;
	struct col *runs[MAX_UNITS];
	const uint8_t *order;
	size_t n;
	int32_t *const *map;
	int ret;
};

struct gather_set {
	struct gather_job *jobs;
	int njobs, k;
	atomic_int next;
};

static void *gather_main(void *arg)
{
	struct gather_set *set = arg;
	int i;

	while ((i = atomic_fetch_add(&set->next, 1)) < set->njobs) {
		struct gather_job *j = &set->jobs[i];

		j->ret = gather(j->dst, j->runs, set->k, j->order, j->n, j->map);
	}
	return NULL;
}


enum { MAX_JOBS = EV_COUNT * (F_MAX + 3) + 4 };

/* A merge in progress. */
struct merge {
	struct reader *r;                 /* the result */
	struct reader *w;                 /* the units */
	int k;
	int32_t *map[MAX_UNITS];          /* per unit: its irq_names index -> r's */
	uint8_t *order[EV_COUNT + 1];     /* per event, then the lost-event marks */
	size_t n[EV_COUNT + 1];
	struct gather_set set;
};

/* The column of unit @i at the place @col0 has in unit 0. */
static struct col *unit_col(const struct merge *m, int i, const struct col *col0)
{
	return (struct col *)((char *)&m->w[i] + ((const char *)col0 - (const char *)&m->w[0]));
}

/* Gather into @dst the units' columns at @col0's place, in order @o. */
static void add_job(struct merge *m, struct col *dst, const struct col *col0, int o,
		    int32_t *const *map)
{
	struct gather_job *j = &m->set.jobs[m->set.njobs++];

	j->dst = dst;
	for (int i = 0; i < m->k; i++)
		j->runs[i] = unit_col(m, i, col0);
	j->order = m->order[o];
	j->n = m->n[o];
	j->map = map;
}

/* Order @o: the merge of the units' rows keyed by the columns at @ts0's and @cpu0's place. */
static int plan_order(struct merge *m, int o, const struct col *ts0, const struct col *cpu0)
{
	struct col *ts[MAX_UNITS], *cpu[MAX_UNITS];

	for (int i = 0; i < m->k; i++) {
		ts[i] = unit_col(m, i, ts0);
		cpu[i] = unit_col(m, i, cpu0);
	}
	m->order[o] = merge_order(ts, cpu, m->k, &m->n[o]);
	return m->order[o] ? 0 : -ENOMEM;
}

/* The comms, then the IRQ names with the map of each unit's indices. 0 or -ENOMEM. */
static int merge_all_names(struct merge *m)
{
	struct names *names[MAX_UNITS];

	for (int i = 0; i < m->k; i++)
		names[i] = &m->w[i].comms;
	if (merge_names(&m->r->comms, names, m->k, NULL))
		return -ENOMEM;
	for (int i = 0; i < m->k; i++) {
		names[i] = &m->w[i].irq_names;
		m->map[i] = malloc((m->w[i].irq_names.len + 1) * sizeof(*m->map[i]));
		if (!m->map[i])
			return -ENOMEM;
	}
	return merge_names(&m->r->irq_names, names, m->k, m->map) ? -ENOMEM : 0;
}

/* The order of every table and a job per column. 0 or -ENOMEM. */
static int plan_jobs(struct merge *m)
{
	struct reader *r = m->r, *w0 = &m->w[0];

	for (int e = 0; e < EV_COUNT; e++) {
		struct evstate *ev = &r->ev[e], *ev0 = &w0->ev[e];

		if (ev->id < 0)
			continue;
		if (plan_order(m, e, &ev0->ts, &ev0->cpu))
			return -ENOMEM;
		for (int f = 0; f < ev->nfields; f++)
			add_job(m, &ev->c[f], &ev0->c[f], e, NULL);
		if (e == EV_IRQ_ENTRY)
			add_job(m, &r->entry_name, &w0->entry_name, e, m->map);
		add_job(m, &ev->ts, &ev0->ts, e, NULL);
		add_job(m, &ev->cpu, &ev0->cpu, e, NULL);
	}
	if (plan_order(m, EV_COUNT, &w0->lost_ts, &w0->lost_cpu))
		return -ENOMEM;
	add_job(m, &r->lost_prev_ts, &w0->lost_prev_ts, EV_COUNT, NULL);
	add_job(m, &r->lost_count, &w0->lost_count, EV_COUNT, NULL);
	add_job(m, &r->lost_ts, &w0->lost_ts, EV_COUNT, NULL);
	add_job(m, &r->lost_cpu, &w0->lost_cpu, EV_COUNT, NULL);
	return 0;
}

/* Run the jobs on @nthreads threads (this one included). 0 or -ENOMEM. */
static int run_jobs(struct merge *m, int nthreads)
{
	pthread_t tid[MAX_WORKERS];
	int started[MAX_WORKERS] = { 0 };

	for (int i = 1; i < nthreads && i < MAX_WORKERS; i++)
		started[i] = pthread_create(&tid[i], NULL, gather_main, &m->set) == 0;
	gather_main(&m->set);
	for (int i = 1; i < nthreads && i < MAX_WORKERS; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	for (int i = 0; i < m->set.njobs; i++)
		if (m->set.jobs[i].ret)
			return -ENOMEM;
	return 0;
}

/* The threads unit @u selected, after those already in @r. 0 or -ENOMEM. */
static int append_selected(struct reader *r, const struct reader *u)
{
	for (size_t j = 0; j < u->sel_pids.len; j++)
		if (col_push32(&r->sel_pids, ((const int32_t *)u->sel_pids.data)[j]) ||
		    col_push64(&r->sel_ts, ((const int64_t *)u->sel_ts.data)[j]))
			return -ENOMEM;
	for (size_t j = 0; j < u->sel_irqs.len; j++)
		if (col_push32(&r->sel_irqs, ((const int32_t *)u->sel_irqs.data)[j]))
			return -ENOMEM;
	return 0;
}

/* Counts, first and last times, selections of the @k units @w into @r. 0 or -ENOMEM. */
static int merge_totals(struct reader *r, const struct reader *w, int k)
{
	for (int i = 0; i < k; i++) {
		for (int e = 0; e < EV_COUNT; e++)
			r->seen[e] += w[i].seen[e];
		if (append_selected(r, &w[i]))
			return -ENOMEM;
		if (w[i].nrecords && (!r->nrecords || w[i].first_ts < r->first_ts))
			r->first_ts = w[i].first_ts;
		r->nrecords += w[i].nrecords;
		if (w[i].end_ts > r->end_ts)
			r->end_ts = w[i].end_ts;
		/* units of one CPU come in stream order: the first starts it, the last ends it */
		if (w[i].from_first)
			r->cpu_first_ts[w[i].cpu] = w[i].cpu_first_ts[w[i].cpu];
		r->last_ts[w[i].cpu] = w[i].last_ts[w[i].cpu];
	}
	return 0;
}

int merge_units(struct reader *r, struct reader *w, int k, int nthreads)
{
	struct merge *m = calloc(1, sizeof(*m));
	int ret = -ENOMEM;

	if (!m)
		return -ENOMEM;
	m->r = r;
	m->w = w;
	m->k = k;
	m->set.k = k;
	m->set.jobs = calloc(MAX_JOBS, sizeof(*m->set.jobs));
	atomic_init(&m->set.next, 0);
	if (m->set.jobs && !merge_all_names(m) && !plan_jobs(m) && !run_jobs(m, nthreads))
		ret = merge_totals(r, w, k);
	for (int i = 0; i < k; i++)
		free(m->map[i]);
	for (int e = 0; e <= EV_COUNT; e++)
		free(m->order[e]);
	free(m->set.jobs);
	free(m);
	return ret;
}
