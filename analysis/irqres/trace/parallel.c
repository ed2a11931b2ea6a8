// SPDX-License-Identifier: GPL-2.0-only
/* Parallel decoding: see parallel.h. */
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

enum { UNITS_PER_WORKER = 4 };

/* The runnable count of /proc/loadavg includes this thread. */
int parallel_idle_cpus(void)
{
	cpu_set_t set;
	int cpus, running = 1, total;
	FILE *f;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	cpus = CPU_COUNT(&set);
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%*s %*s %*s %d/%d", &running, &total) != 2)
			running = 1;
		fclose(f);
	}
	if (running > 1)
		cpus -= running - 1;
	return cpus < 1 ? 1 : cpus;
}

/* The first record of unit @u in @h, found as plan_units found its start; or NULL. */
static struct tep_record *unit_first(struct reader *u, struct tracecmd_input *h)
{
	struct tep_record *rec;

	if (u->from_first)
		return tracecmd_read_cpu_first(h, u->cpu);
	/* the same seek as the plan's, then on to the unit's first record */
	if (tracecmd_set_cpu_to_timestamp(h, u->cpu, u->seek_ts))
		return NULL;
	rec = tracecmd_read_data(h, u->cpu);
	while (rec && rec->offset != u->start) {
		tracecmd_free_record(rec);
		rec = tracecmd_read_data(h, u->cpu);
	}
	return rec;
}

/* Decode the records of unit @u from @h. 0, or -1 (u->err tells why when a record did). */
static int read_unit_records(struct reader *u, struct tracecmd_input *h)
{
	struct tep_record *rec = unit_first(u, h);

	if (!rec)
		return -1;
	while (rec) {
		if (u->stop && rec->offset == u->stop) {
			tracecmd_free_record(rec);
			return 0;
		}
		int ret = reader_record(h, rec, u->cpu, u);

		tracecmd_free_record(rec);
		if (ret)
			return -1;
		rec = tracecmd_read_data(h, u->cpu);
	}
	return u->stop ? -1 : 0; /* the next unit's first record never came */
}

/* read_unit_records, then let go of the pages it holds: @h reads other units next. */
static int read_unit(struct reader *u, struct tracecmd_input *h)
{
	int ret = read_unit_records(u, h);

	pages_release(&u->pages);
	return ret;
}

struct worker {
	struct tracecmd_input *handle;
	struct reader *units;
	const int *queue;       /* unit indices, largest first */
	int nunits;
	atomic_int *next;       /* next entry of queue to take */
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	int i;

	while ((i = atomic_fetch_add(wk->next, 1)) < wk->nunits) {
		struct reader *u = &wk->units[wk->queue[i]];

		u->ret = read_unit(u, wk->handle);
		u->done = 1;
		if (u->ret) {
			atomic_store(&u->sh->stop, 1);
			break;
		}
	}
	return NULL;
}

/* Where the records of a CPU lie: file offsets and timestamps of the first and last. */
struct cpu_span {
	unsigned long long first_off, bytes;
	int64_t first_ts, last_ts;
};

static int measure_cpu(struct tracecmd_input *h, int cpu, struct cpu_span *s)
{
	struct tep_record *first = tracecmd_read_cpu_first(h, cpu);
	struct tep_record *last = tracecmd_read_cpu_last(h, cpu);
	int ok = first && last && last->offset >= first->offset;

	if (ok) {
		s->first_off = first->offset;
		s->bytes = last->offset - first->offset + 1;
		s->first_ts = (int64_t)first->ts;
		s->last_ts = (int64_t)last->ts;
	}
	tracecmd_free_record(first);
	tracecmd_free_record(last);
	return ok ? 0 : -1;
}

/* The offset of the first record of @cpu at or after @cut, or 0 when there is none. */
static unsigned long long first_at(struct tracecmd_input *h, int cpu, int64_t cut)
{
	struct tep_record *rec;
	unsigned long long off;

	if (tracecmd_set_cpu_to_timestamp(h, cpu, cut))
		return 0;
	rec = tracecmd_read_data(h, cpu);
	while (rec && (int64_t)rec->ts < cut) {
		tracecmd_free_record(rec);
		rec = tracecmd_read_data(h, cpu);
	}
	if (!rec)
		return 0;
	off = rec->offset;
	tracecmd_free_record(rec);
	return off;
}

/*
 * Cut @cpu's records (@s) into @pieces units from u[@n] on, at timestamps spread over
 * its span. Returns the units' number after them; a cut that finds no record ends it.
 */
static int cut_cpu(struct tracecmd_input *h, int cpu, const struct cpu_span *s,
		   unsigned long long pieces, struct reader *u, int n)
{
	u[n].cpu = cpu;
	u[n].from_first = 1;
	u[n].start = s->first_off;
	u[n].weight = s->bytes / pieces;
	n++;
	for (unsigned long long p = 1; p < pieces; p++) {
		int64_t cut = s->first_ts + (int64_t)((double)(s->last_ts - s->first_ts) *
						      (double)p / (double)pieces);
		unsigned long long off;

		if (cut <= s->first_ts)
			continue;
		off = first_at(h, cpu, cut);
		if (!off)
			break;
		if (off == u[n - 1].start)
			continue;
		u[n - 1].stop = off;
		u[n].cpu = cpu;
		u[n].seek_ts = (unsigned long long)cut;
		u[n].start = off;
		u[n].weight = s->bytes / pieces;
		n++;
	}
	return n;
}

/*
 * Cut the records of the CPUs @dcpu of @h into at most @max units of about equal size
 * (file bytes): a CPU with much of the data is cut at timestamps spread over its span,
 * each cut at the first record at or after the timestamp, found as read_unit will find
 * it. Units are in (cpu, stream) order. Returns their number, or -1.
 */
static int plan_units(struct tracecmd_input *h, const int *dcpu, int ndata, int want,
		      struct reader *u, int max, unsigned long long min_bytes)
{
	struct cpu_span span[MAX_UNITS];
	unsigned long long total = 0;
	int n = 0;

	if (ndata > max || ndata > MAX_UNITS)
		return -1;
	for (int j = 0; j < ndata; j++) {
		if (measure_cpu(h, dcpu[j], &span[j]))
			return -1;
		total += span[j].bytes;
	}
	if (total < min_bytes)
		return -1; /* opening a handle per worker would cost more than it saves */
	for (int j = 0; j < ndata; j++) {
		int left = ndata - j - 1;
		unsigned long long pieces = (want * span[j].bytes + total / 2) / total;

		if (pieces < 1)
			pieces = 1;
		if (pieces > (unsigned long long)(max - n - left))
			pieces = (unsigned long long)(max - n - left);
		n = cut_cpu(h, dcpu[j], &span[j], pieces, u, n);
	}
	return n;
}

/*
 * Set up the @n planned units @u to decode @job->h with @r's selection, sharing @sh, and
 * @queue: their indices, largest first, so that the last units to finish are small.
 * 0, or -1 with a Python exception set.
 */
static int units_init(struct reader *r, const struct parallel_job *job, struct reader *u,
		      int n, struct shared *sh, int *queue)
{
	for (int i = 0; i < n; i++) {
		struct reader plan = u[i];

		if (reader_init(&u[i], job->h, job->path, r->release) ||
		    reader_select(&u[i], r->sel))
			return -1;
		u[i].cpu = plan.cpu;
		u[i].from_first = plan.from_first;
		u[i].seek_ts = plan.seek_ts;
		u[i].start = plan.start;
		u[i].stop = plan.stop;
		u[i].weight = plan.weight;
		u[i].sh = sh;
		int j = i;

		while (j > 0 && u[queue[j - 1]].weight < plan.weight) {
			queue[j] = queue[j - 1];
			j--;
		}
		queue[j] = i;
	}
	return 0;
}

/* The handles of the workers other than the first: their files and their buffers. */
struct handles {
	struct tracecmd_input *top[MAX_WORKERS], *h[MAX_WORKERS];
};

/* Open worker @i's handle of @job's buffer. 0, or -1 when it cannot be opened. */
static int open_handle(const struct parallel_job *job, struct handles *hs, int i)
{
	const char *name;

	hs->top[i] = tracecmd_open(job->path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!hs->top[i])
		return -1;
	hs->h[i] = job->h == job->top ? hs->top[i] : input_pick_buffer(hs->top[i], job->bname,
									&name, 0);
	return hs->h[i] ? 0 : -1;
}

static void close_handles(struct handles *hs, int k)
{
	for (int i = 1; i < k; i++) {
		if (hs->h[i] && hs->h[i] != hs->top[i])
			tracecmd_close(hs->h[i]);
		if (hs->top[i])
			tracecmd_close(hs->top[i]);
	}
}

/*
 * Decode the @n units with @job->workers workers. The first worker decodes on @job->h at
 * once, while this thread opens a handle for each other worker (opening parses the
 * file's formats, which is not thread-safe, so the opens stay on this thread; decoding
 * does not parse). The last worker runs here; a handle that fails to open leaves its
 * share of the queue to the others. Call without the GIL.
 */
static void run_workers(const struct parallel_job *job, struct reader *u, int n,
			const int *queue, struct handles *hs)
{
	struct worker wk[MAX_WORKERS];
	pthread_t tid[MAX_WORKERS];
	int started[MAX_WORKERS] = { 0 }, k = job->workers;
	atomic_int next;

	atomic_init(&next, 0);
	for (int i = 0; i < k; i++)
		wk[i] = (struct worker){ .units = u, .queue = queue, .nunits = n, .next = &next };
	wk[0].handle = job->h;
	started[0] = k > 1 && pthread_create(&tid[0], NULL, worker_main, &wk[0]) == 0;
	if (!started[0])
		worker_main(&wk[0]);
	for (int i = 1; i < k && atomic_load(&next) < n; i++) {
		if (open_handle(job, hs, i))
			break;
		wk[i].handle = hs->h[i];
		if (i < k - 1)
			started[i] = pthread_create(&tid[i], NULL, worker_main, &wk[i]) == 0;
		if (!started[i])
			worker_main(&wk[i]);
	}
	for (int i = 0; i < k; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}

/*
 * Did every unit decode its records in order? A unit that continues the previous one's
 * CPU must not go back in time across the cut, and a gap at its first record follows
 * the previous unit's last one (set here).
 */
static int units_complete(struct reader *u, int n)
{
	for (int i = 0; i < n; i++) {
		struct reader *p = i ? &u[i - 1] : NULL;
		int cpu = u[i].cpu;

		if (!u[i].done || u[i].ret || u[i].err || u[i].unsorted)
			return 0;
		if (u[i].from_first)
			continue;
		if (u[i].cpu_first_ts[cpu] < p->last_ts[cpu])
			return 0;
		int64_t *prev = (int64_t *)u[i].lost_prev_ts.data;

		for (size_t g = 0; g < u[i].lost_prev_ts.len; g++)
			if (prev[g] < 0)
				prev[g] = p->last_ts[cpu];
	}
	return 1;
}

/* Decode the planned units @u (@n) and merge them into @r: parallel_read's returns. */
static int decode_units(struct reader *r, const struct parallel_job *job, struct reader *u,
			int n, struct shared *sh, int *queue)
{
	struct handles hs = { 0 };
	PyThreadState *tstate;
	int ret = 1;

	if (units_init(r, job, u, n, sh, queue))
		return -1;
	tstate = PyEval_SaveThread();
	run_workers(job, u, n, queue, &hs);
	PyEval_RestoreThread(tstate);
	if (sh->exc_type) {
		PyErr_Restore(sh->exc_type, sh->exc_value, sh->exc_tb);
		ret = -1;
	} else if (units_complete(u, n)) {
		Py_BEGIN_ALLOW_THREADS
		ret = merge_units(r, u, n, job->workers);
		Py_END_ALLOW_THREADS
		if (ret) {
			PyErr_NoMemory();
			ret = -1;
		} else {
			r->units = n;
		}
	}
	/* the units hold pages of the handles: free them first */
	for (int i = 0; i < n; i++)
		reader_free(&u[i]);
	close_handles(&hs, job->workers);
	return ret;
}

int parallel_read(struct reader *r, const struct parallel_job *job)
{
	struct reader *u = calloc(MAX_UNITS, sizeof(*u));
	struct shared sh = { .progress = job->progress, .every = job->every };
	int queue[MAX_UNITS];
	int n, ret = 1;

	if (!u) {
		PyErr_NoMemory();
		return -1;
	}
	atomic_init(&sh.count, 0);
	atomic_init(&sh.stop, 0);
	n = plan_units(job->h, job->dcpu, job->ndata, job->workers * UNITS_PER_WORKER, u,
		       MAX_UNITS, job->min_bytes);
	if (n >= 2)
		ret = decode_units(r, job, u, n, &sh, queue);
	for (int i = 0; i < MAX_UNITS; i++)
		reader_free(&u[i]);
	free(u);
	return ret;
}
