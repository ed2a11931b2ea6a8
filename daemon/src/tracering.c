/* SPDX-License-Identifier: GPL-2.0-only */
/* tracering.c - an instance's ring buffers read in time order; see tracering.h. */
#include "tracering.h"

#include <errno.h>
#include <fcntl.h>
#include <kbuffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rec {
	unsigned long long ts;
	size_t seq, off;
	int cpu, size, missed;
};

struct tracering {
	struct tep_handle *tep;
	struct kbuffer *kbuf;
	int *fd, *cpu;
	int n_fd;
	void *page;
	int page_size;
	struct rec *v;		/* one drain's records, sorted before they are handed over */
	size_t n, cap;
	char *data;		/* their bytes */
	size_t used, data_cap;
};

static int subbuf_size(struct tracefs_instance *inst)
{
	char *s = tracefs_instance_file_read(inst, "buffer_subbuf_size_kb", NULL);
	long kb = s ? strtol(s, NULL, 10) : 0;

	free(s);
	return kb > 0 ? (int)kb * 1024 : getpagesize();
}

static int open_cpus(struct tracering *r, struct tracefs_instance *inst)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	r->fd = calloc((size_t)(n > 0 ? n : 1), sizeof(*r->fd));
	r->cpu = calloc((size_t)(n > 0 ? n : 1), sizeof(*r->cpu));
	if (!r->fd || !r->cpu)
		return -ENOMEM;
	for (int cpu = 0; cpu < n; cpu++) {
		char name[64];
		char *path;
		int fd;

		snprintf(name, sizeof(name), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		path = tracefs_instance_get_file(inst, name);
		if (!path)
			return -ENOMEM;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		tracefs_put_tracing_file(path);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* a CPU that is not there */
			return -errno;
		}
		r->cpu[r->n_fd] = cpu;
		r->fd[r->n_fd++] = fd;
	}
	return r->n_fd ? 0 : -ENOENT;
}

int tracering_open(struct tracering **out, struct tracefs_instance *inst,
		   struct tep_handle *tep)
{
	struct tracering *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->tep = tep;
	r->page_size = subbuf_size(inst);
	r->page = malloc((size_t)r->page_size);
	r->kbuf = kbuffer_alloc(tep_get_long_size(tep) == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8,
				tep_is_file_bigendian(tep) ? KBUFFER_ENDIAN_BIG
							   : KBUFFER_ENDIAN_LITTLE);
	if (!r->page || !r->kbuf) {
		rc = -ENOMEM;
		goto out_free;
	}
	rc = open_cpus(r, inst);
	if (rc < 0)
		goto out_free;
	*out = r;
	return 0;
out_free:
	tracering_close(r);
	return rc;
}

static int keep(struct tracering *r, int cpu, unsigned long long ts, const void *p, int size,
		int missed)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct rec *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	if (r->used + (size_t)size > r->data_cap) {
		size_t cap = r->data_cap ? 2 * r->data_cap : 65536;
		char *d;

		while (cap < r->used + (size_t)size)
			cap *= 2;
		d = realloc(r->data, cap);
		if (!d)
			return -ENOMEM;
		r->data = d;
		r->data_cap = cap;
	}
	memcpy(r->data + r->used, p, (size_t)size);
	r->v[r->n] = (struct rec){ ts, r->n, r->used, cpu, size, missed };
	r->used += (size_t)size;
	r->n++;
	return 0;
}

/* Every sub-buffer CPU i holds now, record by record into r->v. */
static int read_cpu(struct tracering *r, int i)
{
	for (;;) {
		ssize_t got = read(r->fd[i], r->page, (size_t)r->page_size);
		unsigned long long ts;
		int missed, rc;
		void *p;

		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (got == 0)
			return 0;
		if (kbuffer_load_subbuffer(r->kbuf, r->page) < 0)
			return -EINVAL;
		missed = kbuffer_missed_events(r->kbuf);
		for (p = kbuffer_read_event(r->kbuf, &ts); p; p = kbuffer_next_event(r->kbuf, &ts)) {
			rc = keep(r, r->cpu[i], ts, p, kbuffer_event_size(r->kbuf), missed);
			if (rc < 0)
				return rc;
			missed = 0;
		}
	}
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Keeps v[from..n) and their bytes for the next drain, at the front. */
static int hold_back(struct tracering *r, size_t from)
{
	size_t held = r->n - from, used = 0;
	char *d = NULL;

	if (held) {
		size_t bytes = 0;

		for (size_t k = from; k < r->n; k++)
			bytes += (size_t)r->v[k].size;
		d = malloc(bytes ? bytes : 1);
		if (!d)
			return -ENOMEM;
		for (size_t k = from; k < r->n; k++) {
			memcpy(d + used, r->data + r->v[k].off, (size_t)r->v[k].size);
			r->v[k - from] = r->v[k];
			r->v[k - from].off = used;
			r->v[k - from].seq = k - from;
			used += (size_t)r->v[k].size;
		}
		free(r->data);
		r->data = d;
		r->data_cap = used ? used : 1;
	}
	r->n = held;
	r->used = used;
	return 0;
}

int tracering_drain(struct tracering *r, unsigned long long horizon, tracering_fn fn,
		    void *ctx)
{
	size_t k;
	int rc = 0;

	for (int i = 0; i < r->n_fd && rc == 0; i++)
		rc = read_cpu(r, i);
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), rec_cmp);
	for (k = 0; k < r->n && r->v[k].ts < horizon; k++) {
		struct tep_record rec = {
			.ts = r->v[k].ts, .cpu = r->v[k].cpu, .size = r->v[k].size,
			.data = r->data + r->v[k].off, .missed_events = r->v[k].missed,
			.ref_count = 1,
		};
		struct tep_event *ev = tep_find_event(r->tep, tep_data_type(r->tep, &rec));

		if (ev)
			fn(ev, &rec, ctx);
	}
	if (hold_back(r, k) < 0) {
		r->n = r->used = 0;	/* cannot keep them: they are lost, and said so */
		return -ENOMEM;
	}
	return rc;
}

void tracering_close(struct tracering *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n_fd; i++)
		close(r->fd[i]);
	free(r->fd);
	free(r->cpu);
	free(r->page);
	if (r->kbuf)
		kbuffer_free(r->kbuf);
	free(r->v);
	free(r->data);
	free(r);
}
