// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqres._tracereader: read the scheduling and IRQ events of a trace-cmd data file
 * with libtracecmd into flat column buffers.
 *
 * Each event's fields are resolved once per file; every record is then decoded by
 * offset into growable C arrays, one per column. The columns are handed to Python as
 * Column objects that own the arrays and expose them through the buffer protocol (int64
 * timestamps, int32 cpus/pids/irqs, int64 prev_state), which the Python side wraps with
 * numpy.frombuffer without a copy, so this module does not depend on the numpy version. Command names are stored once per (pid, comm) pair and IRQ names once per
 * (irq, name) pair, not once per event; each irq_handler_entry carries the index of its
 * (irq, name) pair, so shared IRQ lines can be told apart by action.
 *
 * Lost events: a record whose missed_events is non-zero follows a gap on its CPU. The
 * gap is recorded as (cpu, last timestamp seen on that CPU before it or -1, timestamp
 * of the record after it, count or -1 when the kernel did not say how many).
 *
 * Parallel decoding: on an uncompressed file with records on several CPUs, each worker
 * thread opens its own handle (libtracecmd handles are not thread-safe) and iterates a
 * disjoint set of CPUs with the GIL released; the per-worker columns are then merged in
 * the order libtracecmd's own iteration gives, (timestamp, cpu), and the per-worker name
 * tables in the order each (key, name) pair first appears in that merged stream. The
 * result is the sequential reader's, byte for byte. Compressed files are read by one
 * thread: libtracecmd 3.1 decompresses them through one process-wide zstd context. A CPU
 * whose timestamps go backwards, or a worker that fails, sends the whole file through
 * the sequential reader, which then gives the result (or the error) it always gives.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "pages.h"

/* In libtracecmd 3.x but not in its public header: the "CPU: N / entries / overrun /
 * dropped events" text that trace-cmd stored at the end of the recording. */
const char *tracecmd_get_cpustats(struct tracecmd_input *handle);
/* Also exported but not declared: the next record of @cpu without consuming it; the
 * last record of @cpu; set @cpu's iterator to the page holding @ts. */
/* The recording machine's "sysname nodename release machine", or NULL. */
const char *tracecmd_get_uname(struct tracecmd_input *handle);
struct tep_record *tracecmd_peek_data(struct tracecmd_input *handle, int cpu);
struct tep_record *tracecmd_read_cpu_last(struct tracecmd_input *handle, int cpu);
int tracecmd_set_cpu_to_timestamp(struct tracecmd_input *handle, int cpu,
				  unsigned long long ts);
/* The size of the file's ring-buffer pages. */
int tracecmd_page_size(struct tracecmd_input *handle);

/* ---- growable columns ------------------------------------------------------------ */

struct col {
	char *data;
	size_t len;  /* elements */
	size_t cap;  /* elements */
	size_t size; /* bytes per element */
};

static int col_grow(struct col *c)
{
	size_t cap = c->cap ? c->cap * 2 : 4096;
	char *p = realloc(c->data, cap * c->size);

	if (!p)
		return -ENOMEM;
	c->data = p;
	c->cap = cap;
	return 0;
}

static inline int col_push64(struct col *c, int64_t v)
{
	if (c->len == c->cap && col_grow(c))
		return -ENOMEM;
	((int64_t *)c->data)[c->len++] = v;
	return 0;
}

static inline int col_push32(struct col *c, int32_t v)
{
	if (c->len == c->cap && col_grow(c))
		return -ENOMEM;
	((int32_t *)c->data)[c->len++] = v;
	return 0;
}

/* ---- names deduplicated per key (pid -> comm, irq -> name) ------------------------ */

struct name_entry {
	int32_t key;
	int32_t prev; /* the previous pair with the same key, -1 for none */
	size_t len;
	char *name;
};

/*
 * A direct-mapped cache in front of names_note for fixed-size name fields (comm[16]):
 * the raw bytes last seen for a key and their pair. Equal raw bytes are the same name,
 * so a hit skips measuring, hashing and comparing it (two comms per sched_switch).
 */
enum { RAW_MAX = 16, RAW_SLOTS = 4096 };

struct raw_slot {
	int32_t key;
	int32_t idx;  /* pair index, -1 for an empty slot */
	int32_t size; /* bytes of raw that hold the field */
	char raw[RAW_MAX];
};

struct names {
	struct raw_slot *raw; /* RAW_SLOTS entries, or NULL when not used */
	struct name_entry *v; /* every distinct (key, name) pair, in order of appearance */
	size_t len, cap;
	int32_t *slot_key;    /* open addressing: key -> index of its latest pair */
	int32_t *slot_idx;
	size_t nslots;        /* power of two */
	size_t used;
	/* parallel reading: (ts, cpu) of the record where each pair first appeared */
	struct col born_ts, born_cpu;
};

static int names_rehash(struct names *n, size_t nslots)
{
	int32_t *keys = malloc(nslots * sizeof(*keys));
	int32_t *idx = malloc(nslots * sizeof(*idx));

	if (!keys || !idx) {
		free(keys);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nslots; i++)
		idx[i] = -1;
	for (size_t i = 0; i < n->nslots; i++) {
		if (n->slot_idx[i] < 0)
			continue;
		size_t h = ((uint32_t)n->slot_key[i] * 2654435761u) & (nslots - 1);
		while (idx[h] >= 0)
			h = (h + 1) & (nslots - 1);
		keys[h] = n->slot_key[i];
		idx[h] = n->slot_idx[i];
	}
	free(n->slot_key);
	free(n->slot_idx);
	n->slot_key = keys;
	n->slot_idx = idx;
	n->nslots = nslots;
	return 0;
}

static int name_is(const struct name_entry *e, const char *name, size_t len)
{
	return e->len == len && memcmp(e->name, name, len) == 0;
}

/*
 * Remember that @key carries @name (@len bytes, not NUL-terminated). Returns the index
 * of the (key, name) pair, or -ENOMEM.
 */
static int names_note(struct names *n, int32_t key, const char *name, size_t len)
{
	int32_t prev = -1;
	size_t h;

	if ((n->used + 1) * 2 > n->nslots && names_rehash(n, n->nslots ? n->nslots * 2 : 1024))
		return -ENOMEM;
	h = ((uint32_t)key * 2654435761u) & (n->nslots - 1);
	while (n->slot_idx[h] >= 0) {
		if (n->slot_key[h] == key) {
			/* pid 0 is swapper/0, swapper/1, ...: look at every name of the key */
			prev = n->slot_idx[h];
			for (int32_t i = prev; i >= 0; i = n->v[i].prev)
				if (name_is(&n->v[i], name, len))
					return i;
			break;
		}
		h = (h + 1) & (n->nslots - 1);
	}
	if (n->len == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 256;
		struct name_entry *p = realloc(n->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		n->v = p;
		n->cap = cap;
	}
	char *copy = strndup(name, len);

	if (!copy)
		return -ENOMEM;
	n->v[n->len].key = key;
	n->v[n->len].prev = prev;
	n->v[n->len].len = len;
	n->v[n->len].name = copy;
	if (n->slot_idx[h] < 0)
		n->used++;
	n->slot_key[h] = key;
	n->slot_idx[h] = (int32_t)n->len;
	return (int)n->len++;
}

static void names_free(struct names *n)
{
	for (size_t i = 0; i < n->len; i++)
		free(n->v[i].name);
	free(n->raw);
	free(n->v);
	free(n->slot_key);
	free(n->slot_idx);
	free(n->born_ts.data);
	free(n->born_cpu.data);
	memset(n, 0, sizeof(*n));
}

/* ---- the threads kept ---------------------------------------------------------------
 *
 * With a selection, only the rows of the selected threads are kept, so that memory grows
 * with their events, not with the trace: a sched_switch to or from one of them, a wake-up
 * of one of them or by one (the waker has no comm in the event: a waker not yet known
 * on this reader is kept too and Python drops it once the whole trace named everyone),
 * a hard IRQ entry or exit of an IRQ number whose thread is selected (or none of whose
 * threads was seen yet, likewise), a migration of one of them (or of a pid not yet
 * known, likewise). A (pid, comm) pair is
 * judged once, when it first appears, by the rules of irqres.measure.activations:
 * IRQ threads (comm irq/<N>-...) when irq_threads is set, narrowed by thread_pat (IRQ
 * number, or fnmatch glob on comm, or on *comm*); tasks by pid or glob or substring.
 */

enum { PID_LIMIT = 1 << 22, IRQ_LIMIT = 1 << 16 }; /* PID_MAX_LIMIT on 64-bit */
enum { SEL_UNKNOWN = 0, SEL_NO = 1, SEL_YES = 2 };

struct selection {
	int irq_threads;        /* IRQ threads are candidates */
	char *thread_pat;       /* NULL: every IRQ thread */
	char *thread_star;      /* "*thread_pat*" */
	char **tasks;
	int ntasks;
};

/* irq/<N>-...: N, or -1 for any other comm */
static int irq_of_comm(const char *comm)
{
	long n = 0;
	const char *p = comm + 4;

	if (strncmp(comm, "irq/", 4) || *p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && n < INT32_MAX / 10)
		n = n * 10 + (*p++ - '0');
	return *p == '-' ? (int)n : -1;
}

static int all_digits(const char *s, long *out)
{
	long n = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > INT32_MAX / 10)
			return 0;
		n = n * 10 + (*s - '0');
	}
	*out = n;
	return 1;
}

static int pair_selected(const struct selection *sel, int32_t pid, const char *comm, int irq)
{
	long n;

	if (pid <= 0)
		return 0;
	if (sel->irq_threads && irq >= 0) {
		if (!sel->thread_pat)
			return 1;
		if (all_digits(sel->thread_pat, &n) ? n == irq :
		    !fnmatch(sel->thread_pat, comm, FNM_NOESCAPE) ||
		    !fnmatch(sel->thread_star, comm, FNM_NOESCAPE))
			return 1;
	}
	for (int i = 0; i < sel->ntasks; i++) {
		const char *t = sel->tasks[i];

		if (all_digits(t, &n) ? n == pid :
		    !fnmatch(t, comm, FNM_NOESCAPE) || strstr(comm, t) != NULL)
			return 1;
	}
	return 0;
}

static void selection_free(struct selection *sel)
{
	free(sel->thread_pat);
	free(sel->thread_star);
	for (int i = 0; i < sel->ntasks; i++)
		free(sel->tasks[i]);
	free(sel->tasks);
	memset(sel, 0, sizeof(*sel));
}

/* ---- the events read ------------------------------------------------------------- */

enum { F_MAX = 6 };

struct evspec {
	const char *system;
	const char *name;
	const char *fields[F_MAX];  /* field names, NULL-terminated */
	const char *columns[F_MAX]; /* column names in the result */
	char wide[F_MAX];           /* 1: int64 column, 0: int32 column */
};

enum { EV_SWITCH, EV_WAKING, EV_WAKEUP, EV_IRQ_ENTRY, EV_IRQ_EXIT, EV_MIGRATE, EV_COUNT };

/* Column 0 of every event is its timestamp, column 1 its CPU; the rest follow. */
static const struct evspec specs[EV_COUNT] = {
	[EV_SWITCH] = { "sched", "sched_switch",
			{ "prev_pid", "prev_state", "next_pid" },
			{ "prev_pid", "prev_state", "next_pid" }, { 0, 1, 0 } },
	/* common_flags: the context the wake-up was raised in (hard IRQ, soft IRQ, NMI) */
	[EV_WAKING] = { "sched", "sched_waking",
			{ "common_pid", "pid", "target_cpu", "common_flags" },
			{ "waker", "pid", "target_cpu", "flags" }, { 0, 0, 0, 0 } },
	[EV_WAKEUP] = { "sched", "sched_wakeup",
			{ "common_pid", "pid", "target_cpu", "common_flags" },
			{ "waker", "pid", "target_cpu", "flags" }, { 0, 0, 0, 0 } },
	[EV_IRQ_ENTRY] = { "irq", "irq_handler_entry",
			   { "common_pid", "irq" },
			   { "current", "irq" }, { 0, 0 } },
	[EV_IRQ_EXIT] = { "irq", "irq_handler_exit",
			  { "common_pid", "irq", "ret" },
			  { "current", "irq", "ret" }, { 0, 0, 0 } },
	[EV_MIGRATE] = { "sched", "sched_migrate_task",
			 { "pid", "orig_cpu", "dest_cpu" },
			 { "pid", "orig_cpu", "dest_cpu" }, { 0, 0, 0 } },
};

struct evstate {
	int id;              /* event id in this file, -1 when absent */
	int nfields;
	struct tep_format_field *f[F_MAX];
	struct col ts, cpu;
	struct col c[F_MAX];
	/* string fields, only for some events */
	struct tep_format_field *s1, *s2;
};

struct reader {
	struct tep_handle *tep;
	struct evstate ev[EV_COUNT];
	struct names comms;     /* pid -> comm (sched_switch prev/next, sched_waking comm) */
	struct names irq_names; /* irq -> handler name */
	struct col entry_name;  /* per irq_handler_entry: index into irq_names, or -1 */
	struct col lost_cpu, lost_prev_ts, lost_ts, lost_count;
	int64_t *last_ts;       /* per cpu, -1 before the first record */
	int64_t *cpu_first_ts;  /* per cpu, -1 when the cpu has no record */
	int8_t ev_of_id[4096];  /* event id -> index in ev[], -1 for events not read */
	int ncpus;
	uint64_t nrecords;
	int64_t first_ts, end_ts;
	int type_offset, type_size; /* common_type, read in place when the order is native */
	const struct selection *sel; /* NULL: keep every row */
	uint8_t *pidsel;        /* PID_LIMIT entries: SEL_* per pid */
	uint8_t *irqsel;        /* IRQ_LIMIT entries: SEL_* per IRQ number */
	struct col sel_pids, sel_irqs; /* judged SEL_YES, in order */
	struct col sel_ts;      /* per sel_pids entry: the record that named it so */
	uint64_t seen[EV_COUNT]; /* records of each event, kept or not */
	int err;                /* -errno when a callback failed */
	int native;             /* the file's byte order is the host's: read fields in place */
	int unsorted;           /* a CPU's timestamps went backwards */
	PyObject *progress;     /* callable(records) or NULL */
	uint64_t progress_every; /* records between two calls */
	PyThreadState *tstate;
	/* parallel reading only */
	struct shared *sh;      /* NULL when reading sequentially */
	int64_t cur_ts;         /* the record being decoded */
	int32_t cur_cpu;
	/* the unit of a parallel read: records [start, stop) of one CPU, by file offset */
	int cpu;
	int from_first;         /* start at the CPU's first record, else seek to seek_ts */
	unsigned long long seek_ts, start, stop; /* stop 0: to the CPU's last record */
	unsigned long long weight; /* bytes, estimated */
	int ret;                /* 0, or -1 when the unit failed */
	int done;
	int units;              /* of the whole read: 1 when sequential */
	struct pages pages;     /* the file's pages decoded, given back as it goes */
	int release;            /* reader_init's @release */
};

/* What the workers of one parallel read share. */
struct shared {
	atomic_ullong count;    /* records read by all workers (counted when progress is set) */
	atomic_int stop;        /* a worker failed or the progress callback raised */
	PyObject *progress;
	unsigned long long every;
	PyObject *exc_type, *exc_value, *exc_tb; /* what progress raised; under the GIL */
};

static inline int64_t field_num(struct tep_format_field *f, struct tep_record *rec,
				int native_order)
{
	const char *p = (const char *)rec->data + f->offset;
	unsigned long long v = 0;

	if (native_order && f->offset + f->size <= rec->size) {
		/* sign-extend fields narrower than 64 bits: pids and cpus are signed ints */
		switch (f->size) {
		case 1: { int8_t x; memcpy(&x, p, 1); return x; }
		case 2: { int16_t x; memcpy(&x, p, 2); return x; }
		case 4: { int32_t x; memcpy(&x, p, 4); return x; }
		case 8: { int64_t x; memcpy(&x, p, 8); return x; }
		default: break;
		}
	}
	if (tep_read_number_field(f, rec->data, &v))
		return -1;
	switch (f->size) {
	case 1: return (int8_t)v;
	case 2: return (int16_t)v;
	case 4: return (int32_t)v;
	default: return (int64_t)v;
	}
}

/* A fixed char array (comm[16]) or a __data_loc string; returns its length or -1. */
static ssize_t field_str(struct tep_handle *tep, struct tep_format_field *f,
			 struct tep_record *rec, const char **out)
{
	const char *data = rec->data;

	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (f->offset + 4 > rec->size)
			return -1;
		unsigned int loc = (unsigned int)tep_read_number(tep, data + f->offset, 4);
		unsigned int off = loc & 0xffff, len = loc >> 16;

		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += f->offset + f->size;
		if ((int)(off + len) > rec->size)
			return -1;
		*out = data + off;
		return (ssize_t)strnlen(data + off, len);
	}
	if (f->offset + f->size > rec->size)
		return -1;
	*out = data + f->offset;
	return (ssize_t)strnlen(data + f->offset, f->size);
}

/* A new (pid, comm) pair: update what is known of the pid and of its IRQ. 0 or -ENOMEM. */
static int judge_pair(struct reader *r, int32_t pid, const char *comm)
{
	int irq = irq_of_comm(comm);
	int yes = pair_selected(r->sel, pid, comm, irq);

	if (pid >= 0 && pid < PID_LIMIT && r->pidsel[pid] != SEL_YES) {
		r->pidsel[pid] = yes ? SEL_YES : SEL_NO;
		if (yes && (col_push32(&r->sel_pids, pid) || col_push64(&r->sel_ts, r->cur_ts)))
			return -ENOMEM;
	}
	if (irq >= 0 && irq < IRQ_LIMIT && pid > 0 && r->irqsel[irq] != SEL_YES) {
		r->irqsel[irq] = yes ? SEL_YES : SEL_NO;
		if (yes && col_push32(&r->sel_irqs, irq))
			return -ENOMEM;
	}
	return 0;
}

static inline int pid_is(const struct reader *r, int64_t pid, int state)
{
	return pid >= 0 && pid < PID_LIMIT ? r->pidsel[pid] == state : state == SEL_UNKNOWN;
}

/* Note the string field @f of @rec under @key; returns its pair index, -1 or -ENOMEM. */
static int note_str(struct reader *r, struct names *n, struct tep_format_field *f,
		    int32_t key, struct tep_record *rec)
{
	struct raw_slot *slot = NULL;
	const char *s;
	ssize_t len;
	int idx;

	if (!f)
		return -1;
	if (n->raw && !(f->flags & TEP_FIELD_IS_DYNAMIC) && f->size <= RAW_MAX &&
	    f->offset + f->size <= rec->size) {
		slot = &n->raw[(uint32_t)key & (RAW_SLOTS - 1)];
		if (slot->idx >= 0 && slot->key == key && slot->size == f->size &&
		    memcmp(slot->raw, (const char *)rec->data + f->offset, f->size) == 0)
			return slot->idx;
	}
	len = field_str(r->tep, f, rec, &s);
	if (len < 0)
		return -1;
	size_t before = n->len;

	idx = names_note(n, key, s, (size_t)len);
	if (r->sel && n == &r->comms && n->len > before && idx >= 0 &&
	    judge_pair(r, key, n->v[idx].name))
		return -ENOMEM;
	if (r->sh && n->len > before &&
	    (col_push64(&n->born_ts, r->cur_ts) || col_push32(&n->born_cpu, r->cur_cpu)))
		return -ENOMEM;
	if (slot && idx >= 0) {
		slot->key = key;
		slot->idx = idx;
		slot->size = f->size;
		memcpy(slot->raw, (const char *)rec->data + f->offset, f->size);
	}
	return idx;
}

/* Count a record of a parallel read; every `every` records, call progress. */
static int progress_shared(struct reader *r)
{
	struct shared *sh = r->sh;
	unsigned long long n = atomic_fetch_add(&sh->count, 1) + 1;

	if (n % sh->every)
		return 0;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *res = PyObject_CallFunction(sh->progress, "K", n);
	int failed = res == NULL;

	Py_XDECREF(res);
	if (failed) {
		if (!sh->exc_type)
			PyErr_Fetch(&sh->exc_type, &sh->exc_value, &sh->exc_tb);
		else
			PyErr_Clear();
		atomic_store(&sh->stop, 1);
	}
	PyGILState_Release(g);
	if (failed) {
		r->err = -ECANCELED;
		return -1;
	}
	return 0;
}

/* Whether the selection keeps this row of event @e (see "the threads kept"). */
static int row_kept(const struct reader *r, int e, const struct evstate *ev,
		    struct tep_record *rec)
{
	int64_t a, b;

	switch (e) {
	case EV_SWITCH:
		a = field_num(ev->f[0], rec, r->native);
		b = field_num(ev->f[2], rec, r->native);
		return pid_is(r, a, SEL_YES) || pid_is(r, b, SEL_YES);
	case EV_WAKING:
	case EV_WAKEUP:
		a = field_num(ev->f[1], rec, r->native); /* woken */
		b = field_num(ev->f[0], rec, r->native); /* waker */
		return pid_is(r, a, SEL_YES) || !pid_is(r, b, SEL_NO);
	case EV_IRQ_ENTRY:
	case EV_IRQ_EXIT:
		a = field_num(ev->f[1], rec, r->native);
		return a < 0 || a >= IRQ_LIMIT || r->irqsel[a] != SEL_NO;
	case EV_MIGRATE: /* no comm in it: unknown pids too, as wakers */
		return !pid_is(r, field_num(ev->f[0], rec, r->native), SEL_NO);
	default:
		return 1;
	}
}

static int on_record(struct tracecmd_input *handle, struct tep_record *rec, int cpu,
		     void *data)
{
	struct reader *r = data;
	int64_t ts = (int64_t)rec->ts;
	int ret = 0, nomem = 0;

	if (r->sh && atomic_load_explicit(&r->sh->stop, memory_order_relaxed)) {
		r->err = -EINTR;
		return -1;
	}
	if (cpu < 0 || cpu >= r->ncpus) {
		r->err = -ERANGE;
		return -1;
	}
	pages_note(&r->pages, rec, cpu);
	if (ts < r->last_ts[cpu])
		r->unsorted = 1;
	r->cur_ts = ts;
	r->cur_cpu = cpu;
	if (rec->missed_events) {
		ret |= col_push32(&r->lost_cpu, cpu);
		ret |= col_push64(&r->lost_prev_ts, r->last_ts[cpu]);
		ret |= col_push64(&r->lost_ts, ts);
		ret |= col_push64(&r->lost_count, rec->missed_events > 0 ? rec->missed_events : -1);
	}
	if (r->last_ts[cpu] < 0)
		r->cpu_first_ts[cpu] = ts;
	r->last_ts[cpu] = ts;
	if (!r->nrecords)
		r->first_ts = ts;
	if (ts > r->end_ts)
		r->end_ts = ts;
	r->nrecords++;

	int type, e = -1;

	if (r->native && r->type_size == 2 && r->type_offset + 2 <= rec->size) {
		uint16_t t;

		memcpy(&t, (const char *)rec->data + r->type_offset, 2);
		type = t;
	} else {
		type = tep_data_type(r->tep, rec);
	}

	if (type >= 0 && type < (int)sizeof(r->ev_of_id)) {
		e = r->ev_of_id[type];
	} else {
		for (int i = 0; i < EV_COUNT; i++)
			if (r->ev[i].id == type)
				e = i;
	}
	if (e >= 0) {
		struct evstate *ev = &r->ev[e];

		r->seen[e]++;
		/* the comms first: they decide whether a selection keeps the row */
		if (e == EV_SWITCH) {
			nomem |= note_str(r, &r->comms, ev->s1, (int32_t)field_num(ev->f[0], rec, r->native),
					  rec) == -ENOMEM;
			nomem |= note_str(r, &r->comms, ev->s2, (int32_t)field_num(ev->f[2], rec, r->native),
					  rec) == -ENOMEM;
		} else if (e == EV_WAKING || e == EV_WAKEUP) {
			nomem |= note_str(r, &r->comms, ev->s1, (int32_t)field_num(ev->f[1], rec, r->native),
					  rec) == -ENOMEM;
		}
		if (!r->sel || row_kept(r, e, ev, rec)) {
			ret |= col_push64(&ev->ts, ts);
			ret |= col_push32(&ev->cpu, cpu);
			for (int i = 0; i < ev->nfields; i++) {
				int64_t v = field_num(ev->f[i], rec, r->native);

				if (specs[e].wide[i])
					ret |= col_push64(&ev->c[i], v);
				else
					ret |= col_push32(&ev->c[i], (int32_t)v);
			}
			if (e == EV_IRQ_ENTRY) {
				int idx = note_str(r, &r->irq_names, ev->s1,
						   (int32_t)field_num(ev->f[1], rec, r->native), rec);

				nomem |= idx == -ENOMEM;
				ret |= col_push32(&r->entry_name, idx < 0 ? -1 : idx);
			}
		}
	}
	if (ret || nomem) {
		r->err = -ENOMEM;
		return -1;
	}
	if (r->sh) {
		if (r->sh->progress)
			return progress_shared(r);
		return 0;
	}
	if (r->progress && r->nrecords % r->progress_every == 0) {
		PyEval_RestoreThread(r->tstate);
		PyObject *res = PyObject_CallFunction(r->progress, "K",
						      (unsigned long long)r->nrecords);
		int failed = res == NULL;

		Py_XDECREF(res);
		r->tstate = PyEval_SaveThread();
		if (failed) {
			r->err = -ECANCELED;
			return -1;
		}
	}
	return 0;
}

static void reader_free(struct reader *r)
{
	for (int e = 0; e < EV_COUNT; e++) {
		struct evstate *ev = &r->ev[e];

		free(ev->ts.data);
		free(ev->cpu.data);
		for (int i = 0; i < F_MAX; i++)
			free(ev->c[i].data);
	}
	names_free(&r->comms);
	names_free(&r->irq_names);
	free(r->entry_name.data);
	free(r->lost_cpu.data);
	free(r->lost_prev_ts.data);
	free(r->lost_ts.data);
	free(r->lost_count.data);
	free(r->last_ts);
	free(r->cpu_first_ts);
	free(r->pidsel);
	free(r->irqsel);
	free(r->sel_pids.data);
	free(r->sel_ts.data);
	free(r->sel_irqs.data);
	pages_free(&r->pages);
}

/* Keep only the rows of @sel's threads (NULL: every row). 0, or -1 with an exception. */
static int reader_select(struct reader *r, const struct selection *sel)
{
	r->sel_pids.size = r->sel_irqs.size = 4;
	r->sel_ts.size = 8;
	if (!sel)
		return 0;
	r->pidsel = calloc(PID_LIMIT, 1);
	r->irqsel = calloc(IRQ_LIMIT, 1);
	if (!r->pidsel || !r->irqsel) {
		PyErr_NoMemory();
		return -1;
	}
	r->sel = sel;
	return 0;
}

/* Resolve every event and field once. Returns 0, or -1 with a Python exception set. */
static int reader_setup(struct reader *r, const char *path)
{
	memset(r->ev_of_id, -1, sizeof(r->ev_of_id));
	for (int e = 0; e < EV_COUNT; e++) {
		struct evstate *ev = &r->ev[e];
		struct tep_event *event = tep_find_event_by_name(r->tep, specs[e].system,
								 specs[e].name);

		ev->id = -1;
		ev->ts.size = 8;
		ev->cpu.size = 4;
		for (int i = 0; i < F_MAX; i++)
			ev->c[i].size = specs[e].wide[i] ? 8 : 4;
		if (!event)
			continue;
		for (int i = 0; i < F_MAX && specs[e].fields[i]; i++) {
			ev->f[i] = tep_find_any_field(event, specs[e].fields[i]);
			if (!ev->f[i]) {
				PyErr_Format(PyExc_ValueError,
					     "%s: event %s:%s has no field '%s'", path,
					     specs[e].system, specs[e].name, specs[e].fields[i]);
				return -1;
			}
			ev->nfields = i + 1;
		}
		if (e == EV_SWITCH) {
			ev->s1 = tep_find_field(event, "prev_comm");
			ev->s2 = tep_find_field(event, "next_comm");
		} else if (e == EV_WAKING || e == EV_WAKEUP) {
			ev->s1 = tep_find_field(event, "comm");
		} else if (e == EV_IRQ_ENTRY) {
			ev->s1 = tep_find_field(event, "name");
		}
		ev->id = event->id;
		if (event->id >= 0 && event->id < (int)sizeof(r->ev_of_id))
			r->ev_of_id[event->id] = (int8_t)e;
		if (!r->type_size) {
			struct tep_format_field *ct = tep_find_common_field(event, "common_type");

			if (ct) {
				r->type_offset = ct->offset;
				r->type_size = ct->size;
			}
		}
	}
	r->comms.raw = malloc(RAW_SLOTS * sizeof(*r->comms.raw));
	if (!r->comms.raw) {
		PyErr_NoMemory();
		return -1;
	}
	for (int i = 0; i < RAW_SLOTS; i++)
		r->comms.raw[i].idx = -1;
	r->comms.born_ts.size = r->irq_names.born_ts.size = 8;
	r->comms.born_cpu.size = r->irq_names.born_cpu.size = 4;
	r->entry_name.size = 4;
	r->lost_cpu.size = 4;
	r->lost_prev_ts.size = r->lost_ts.size = r->lost_count.size = 8;
	return 0;
}

/*
 * A column handed to Python without a copy: it owns the malloc'd array and exposes it
 * through the (read-only) buffer protocol, which numpy.frombuffer accepts.
 */
typedef struct {
	PyObject_HEAD
	char *data;
	Py_ssize_t nbytes;
} ColumnObject;

static int column_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
	ColumnObject *c = (ColumnObject *)self;

	return PyBuffer_FillInfo(view, self, c->data, c->nbytes, 1, flags);
}

static Py_ssize_t column_len(PyObject *self)
{
	return ((ColumnObject *)self)->nbytes;
}

static void column_dealloc(PyObject *self)
{
	free(((ColumnObject *)self)->data);
	Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs column_as_buffer = { .bf_getbuffer = column_getbuffer };
static PySequenceMethods column_as_sequence = { .sq_length = column_len };

static PyTypeObject ColumnType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "irqres._tracereader.Column",
	.tp_doc = "A column of trace values (read-only buffer; wrap with numpy.frombuffer).",
	.tp_basicsize = sizeof(ColumnObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = column_dealloc,
	.tp_as_buffer = &column_as_buffer,
	.tp_as_sequence = &column_as_sequence,
};

/* Move the array of @c into a Column; @c is left empty. */
static PyObject *col_take(struct col *c)
{
	ColumnObject *obj = PyObject_New(ColumnObject, &ColumnType);
	size_t nbytes = c->len * c->size;

	if (!obj)
		return NULL;
	if (!c->data || !nbytes) {
		free(c->data);
		c->data = malloc(1);
		if (!c->data) {
			Py_DECREF(obj);
			return PyErr_NoMemory();
		}
	} else {
		char *p = realloc(c->data, nbytes); /* give back the unused capacity */

		if (p)
			c->data = p;
	}
	obj->data = c->data;
	obj->nbytes = (Py_ssize_t)nbytes;
	c->data = NULL;
	c->len = c->cap = 0;
	return (PyObject *)obj;
}

static int dict_put(PyObject *d, const char *key, PyObject *v)
{
	int ret;

	if (!v)
		return -1;
	ret = PyDict_SetItemString(d, key, v);
	Py_DECREF(v);
	return ret;
}

static PyObject *names_list(struct names *n)
{
	PyObject *list = PyList_New((Py_ssize_t)n->len);

	if (!list)
		return NULL;
	for (size_t i = 0; i < n->len; i++) {
		PyObject *t = Py_BuildValue("(is)", n->v[i].key, n->v[i].name);

		if (!t) {
			/* a name that is not UTF-8: keep it readable rather than fail */
			PyErr_Clear();
			t = Py_BuildValue("(iN)", n->v[i].key,
					  PyUnicode_DecodeLatin1(n->v[i].name,
								 (Py_ssize_t)strlen(n->v[i].name),
								 NULL));
			if (!t) {
				Py_DECREF(list);
				return NULL;
			}
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	return list;
}

static PyObject *reader_result(struct reader *r, const char *buffer, const char *cpustats,
			       const char *uname)
{
	PyObject *res = PyDict_New();
	PyObject *events = PyDict_New();
	PyObject *lost = PyDict_New();

	if (!res || !events || !lost)
		goto fail;
	for (int e = 0; e < EV_COUNT; e++) {
		struct evstate *ev = &r->ev[e];
		PyObject *d;

		if (ev->id < 0)
			continue;
		d = PyDict_New();
		if (!d || dict_put(events, specs[e].name, d))
			goto fail;
		if (dict_put(d, "ts", col_take(&ev->ts)) || dict_put(d, "cpu", col_take(&ev->cpu)))
			goto fail;
		for (int i = 0; i < ev->nfields; i++)
			if (dict_put(d, specs[e].columns[i], col_take(&ev->c[i])))
				goto fail;
		if (e == EV_IRQ_ENTRY && dict_put(d, "name_idx", col_take(&r->entry_name)))
			goto fail;
	}
	if (dict_put(lost, "cpu", col_take(&r->lost_cpu)) ||
	    dict_put(lost, "prev_ts", col_take(&r->lost_prev_ts)) ||
	    dict_put(lost, "ts", col_take(&r->lost_ts)) ||
	    dict_put(lost, "count", col_take(&r->lost_count)))
		goto fail;
	if (dict_put(res, "ncpus", PyLong_FromLong(r->ncpus)) ||
	    dict_put(res, "buffer", PyUnicode_FromString(buffer)) ||
	    dict_put(res, "nrecords", PyLong_FromUnsignedLongLong(r->nrecords)) ||
	    dict_put(res, "units", PyLong_FromLong(r->units ? r->units : 1)) ||
	    dict_put(res, "first_ts", PyLong_FromLongLong(r->nrecords ? r->first_ts : 0)) ||
	    dict_put(res, "last_ts", PyLong_FromLongLong(r->nrecords ? r->end_ts : 0)) ||
	    dict_put(res, "comms", names_list(&r->comms)) ||
	    dict_put(res, "irq_names", names_list(&r->irq_names)) ||
	    dict_put(res, "cpu_first_ts", PyBytes_FromStringAndSize((const char *)r->cpu_first_ts,
			    (Py_ssize_t)(sizeof(int64_t) * (size_t)r->ncpus))) ||
	    dict_put(res, "cpu_last_ts", PyBytes_FromStringAndSize((const char *)r->last_ts,
			    (Py_ssize_t)(sizeof(int64_t) * (size_t)r->ncpus))) ||
	    dict_put(res, "cpustats", PyUnicode_DecodeLatin1(cpustats, (Py_ssize_t)strlen(cpustats),
							     NULL)) ||
	    dict_put(res, "uname", PyUnicode_DecodeLatin1(uname, (Py_ssize_t)strlen(uname), NULL)))
		goto fail;
	if (PyDict_SetItemString(res, "events", events) || PyDict_SetItemString(res, "lost", lost))
		goto fail;
	{
		PyObject *seen = PyDict_New();

		if (!seen || dict_put(res, "seen", seen))
			goto fail;
		for (int e = 0; e < EV_COUNT; e++)
			if (r->ev[e].id >= 0 &&
			    dict_put(seen, specs[e].name, PyLong_FromUnsignedLongLong(r->seen[e])))
				goto fail;
	}
	if (r->sel) {
		if (dict_put(res, "selected_pids", col_take(&r->sel_pids)) ||
		    dict_put(res, "selected_ts", col_take(&r->sel_ts)) ||
		    dict_put(res, "selected_irqs", col_take(&r->sel_irqs)))
			goto fail;
	} else if (dict_put(res, "selected_pids", Py_NewRef(Py_None)) ||
		   dict_put(res, "selected_irqs", Py_NewRef(Py_None))) {
		goto fail;
	}
	Py_DECREF(events);
	Py_DECREF(lost);
	return res;
fail:
	Py_XDECREF(res);
	Py_XDECREF(events);
	Py_XDECREF(lost);
	return NULL;
}

/* Does the buffer hold a record? Peeks, so that the iteration still sees every one. */
static int handle_has_data(struct tracecmd_input *h)
{
	int ncpus = tep_get_cpus(tracecmd_get_tep(h));

	for (int cpu = 0; cpu < ncpus; cpu++)
		if (tracecmd_peek_data(h, cpu))
			return 1;
	return 0;
}

/*
 * libtracecmd 3.1 crashes (NULL dereference in its error path) when an instance's data
 * lies past the end of a truncated file. Open instance @i in a child process first: a
 * child that fails or dies means the instance cannot be opened here either.
 */
static int instance_opens(struct tracecmd_input *top, int i)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 1; /* cannot check: open it as before */
	if (pid == 0) {
		struct rlimit nocore = { 0, 0 };

		int null = open("/dev/null", O_WRONLY);

		setrlimit(RLIMIT_CORE, &nocore);
		/* die quietly: no fault handler of the interpreter's */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		if (null >= 0)
			dup2(null, STDERR_FILENO); /* its warnings are the parent's to give */
		_exit(tracecmd_buffer_instance_handle(top, i) ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Pick the buffer to read: the one named @want ("" = top level), or, when @want is
 * NULL, the top-level buffer if it holds records, else the first instance that does.
 * @probe: check in a child that each instance opens (see instance_opens); NULL is then
 * returned with *@name set to the instance that does not.
 */
static struct tracecmd_input *pick_buffer(struct tracecmd_input *top, const char *want,
					  const char **name, int probe)
{
	int n = tracecmd_buffer_instances(top);

	*name = "";
	if (want && !*want)
		return top;
	if (!want && (n == 0 || handle_has_data(top)))
		return top;
	for (int i = 0; i < n; i++) {
		const char *bname = tracecmd_buffer_instance_name(top, i);
		struct tracecmd_input *h;

		if (want && (!bname || strcmp(bname, want)))
			continue;
		if (probe && !instance_opens(top, i)) {
			*name = bname ? bname : "";
			return NULL;
		}
		h = tracecmd_buffer_instance_handle(top, i);
		if (!h)
			continue;
		if (want || handle_has_data(h)) {
			*name = bname ? bname : "";
			return h;
		}
		tracecmd_close(h);
	}
	return want ? NULL : top;
}

/*
 * Prepare @r to read @h; @release: give the file's pages back as they are decoded (see
 * pages.h). Returns 0, or -1 with a Python exception set.
 */
static int reader_init(struct reader *r, struct tracecmd_input *h, const char *path,
		       int release)
{
	memset(r, 0, sizeof(*r));
	r->tep = tracecmd_get_tep(h);
	r->native = tep_is_file_bigendian(r->tep) == tep_is_local_bigendian(r->tep);
	r->ncpus = tep_get_cpus(r->tep);
	if (r->ncpus <= 0 || r->ncpus > 65536) {
		PyErr_Format(PyExc_ValueError, "%s: implausible CPU count %d", path, r->ncpus);
		return -1;
	}
	r->last_ts = malloc(sizeof(*r->last_ts) * (size_t)r->ncpus);
	r->cpu_first_ts = malloc(sizeof(*r->cpu_first_ts) * (size_t)r->ncpus);
	if (!r->last_ts || !r->cpu_first_ts) {
		PyErr_NoMemory();
		return -1;
	}
	for (int i = 0; i < r->ncpus; i++)
		r->last_ts[i] = r->cpu_first_ts[i] = -1;
	r->end_ts = INT64_MIN;
	r->release = release;
	if (pages_init(&r->pages, r->ncpus, (unsigned int)tracecmd_page_size(h), release)) {
		PyErr_NoMemory();
		return -1;
	}
	return reader_setup(r, path);
}

/* After a sequential iteration that returned @ret: 0, or -1 with a Python exception set. */
static int reader_check(struct reader *r, int ret, const char *path)
{
	if (r->err == -ECANCELED)
		return -1; /* the progress callback raised */
	if (r->err == -ENOMEM) {
		PyErr_NoMemory();
		return -1;
	}
	if (r->err) {
		PyErr_Format(PyExc_ValueError, "%s: a record names a CPU outside 0..%d", path,
			     r->ncpus - 1);
		return -1;
	}
	if (ret < 0) {
		PyErr_Format(PyExc_ValueError, "%s: libtracecmd failed while reading records",
			     path);
		return -1;
	}
	return 0;
}

/* ---- parallel reading ------------------------------------------------------------ */

/* Workers; units of work (runs to merge, indexed by a uint8_t); units per worker. */
enum { MAX_WORKERS = 16, MAX_UNITS = 128, UNITS_PER_WORKER = 4 };

/*
 * Does libtracecmd read @path without decompressing? File versions before 7 have no
 * compression; version 7 names its algorithm after the page size ("none" or e.g. "zstd").
 */
static int file_uncompressed(const char *path)
{
	static const char magic[10] = "\x17\x08\x44tracing";
	char buf[64];
	FILE *f = fopen(path, "rb");
	size_t n, vlen, off;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n <= sizeof(magic) || memcmp(buf, magic, sizeof(magic)))
		return 0;
	vlen = strnlen(buf + sizeof(magic), n - sizeof(magic));
	if (vlen == 0 || vlen == n - sizeof(magic))
		return 0;
	if (strtol(buf + sizeof(magic), NULL, 10) < 7)
		return 1;
	off = sizeof(magic) + vlen + 1 + 1 + 1 + 4; /* endianness, long size, page size */
	return off < n && strnlen(buf + off, n - off) < n - off && !strcmp(buf + off, "none");
}

/*
 * Workers worth starting: the cores this thread may run on that nothing else wants now.
 * On a busy machine a second worker only adds its handle's opening and the merge to a
 * decoding that gets no faster. The runnable count of /proc/loadavg includes this thread.
 */
static int idle_cpus(void)
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

/*
 * Merge the rows of @k units into @r, which holds none yet, with @nthreads threads.
 * 0 or -ENOMEM. Touches no Python object: may run without the GIL.
 */
static int merge_workers(struct reader *r, struct reader *w, int k, int nthreads)
{
	struct col *ts[MAX_UNITS], *cpu[MAX_UNITS];
	struct names *names[MAX_UNITS];
	int32_t *map[MAX_UNITS] = { 0 };
	uint8_t *order[EV_COUNT + 1] = { 0 };
	size_t n[EV_COUNT + 1] = { 0 };
	enum { MAX_JOBS = EV_COUNT * (F_MAX + 3) + 4 };
	struct gather_job *jobs = calloc(MAX_JOBS, sizeof(*jobs));
	struct gather_set set = { .jobs = jobs, .k = k };
	pthread_t tid[MAX_WORKERS];
	int started[MAX_WORKERS] = { 0 };
	int ret = -ENOMEM;

	if (!jobs)
		return -ENOMEM;
	atomic_init(&set.next, 0);
	for (int i = 0; i < k; i++)
		names[i] = &w[i].comms;
	if (merge_names(&r->comms, names, k, NULL))
		goto out;
	for (int i = 0; i < k; i++) {
		names[i] = &w[i].irq_names;
		map[i] = malloc((w[i].irq_names.len + 1) * sizeof(*map[i]));
		if (!map[i])
			goto out;
	}
	if (merge_names(&r->irq_names, names, k, map))
		goto out;

#define JOB(d, member, o, m)						\
	do {								\
		struct gather_job *j_ = &jobs[set.njobs++];		\
									\
		j_->dst = (d);						\
		for (int i_ = 0; i_ < k; i_++)				\
			j_->runs[i_] = &w[i_].member;			\
		j_->order = order[o];					\
		j_->n = n[o];						\
		j_->map = (m);						\
	} while (0)

	for (int e = 0; e < EV_COUNT; e++) {
		struct evstate *ev = &r->ev[e];

		if (ev->id < 0)
			continue;
		for (int i = 0; i < k; i++) {
			ts[i] = &w[i].ev[e].ts;
			cpu[i] = &w[i].ev[e].cpu;
		}
		order[e] = merge_order(ts, cpu, k, &n[e]);
		if (!order[e])
			goto out;
		for (int f = 0; f < ev->nfields; f++)
			JOB(&ev->c[f], ev[e].c[f], e, NULL);
		if (e == EV_IRQ_ENTRY)
			JOB(&r->entry_name, entry_name, e, map);
		JOB(&ev->ts, ev[e].ts, e, NULL);
		JOB(&ev->cpu, ev[e].cpu, e, NULL);
	}
	for (int i = 0; i < k; i++) {
		ts[i] = &w[i].lost_ts;
		cpu[i] = &w[i].lost_cpu;
	}
	order[EV_COUNT] = merge_order(ts, cpu, k, &n[EV_COUNT]);
	if (!order[EV_COUNT])
		goto out;
	JOB(&r->lost_prev_ts, lost_prev_ts, EV_COUNT, NULL);
	JOB(&r->lost_count, lost_count, EV_COUNT, NULL);
	JOB(&r->lost_ts, lost_ts, EV_COUNT, NULL);
	JOB(&r->lost_cpu, lost_cpu, EV_COUNT, NULL);
#undef JOB

	for (int i = 1; i < nthreads && i < MAX_WORKERS; i++)
		started[i] = pthread_create(&tid[i], NULL, gather_main, &set) == 0;
	gather_main(&set);
	for (int i = 1; i < nthreads && i < MAX_WORKERS; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	for (int i = 0; i < set.njobs; i++)
		if (jobs[i].ret)
			goto out;

	for (int i = 0; i < k; i++) {
		for (int e = 0; e < EV_COUNT; e++)
			r->seen[e] += w[i].seen[e];
		for (size_t j = 0; j < w[i].sel_pids.len; j++)
			if (col_push32(&r->sel_pids, ((int32_t *)w[i].sel_pids.data)[j]) ||
			    col_push64(&r->sel_ts, ((int64_t *)w[i].sel_ts.data)[j]))
				goto out;
		for (size_t j = 0; j < w[i].sel_irqs.len; j++)
			if (col_push32(&r->sel_irqs, ((int32_t *)w[i].sel_irqs.data)[j]))
				goto out;
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
	ret = 0;
out:
	for (int i = 0; i < k; i++)
		free(map[i]);
	for (int e = 0; e <= EV_COUNT; e++)
		free(order[e]);
	free(jobs);
	return ret;
}

/* Decode the records of unit @u from @h. 0, or -1 (u->err tells why when a record did). */
static int read_unit_records(struct reader *u, struct tracecmd_input *h)
{
	struct tep_record *rec;

	if (u->from_first) {
		rec = tracecmd_read_cpu_first(h, u->cpu);
	} else {
		/* the same seek as the plan's, then on to the unit's first record */
		if (tracecmd_set_cpu_to_timestamp(h, u->cpu, u->seek_ts))
			return -1;
		rec = tracecmd_read_data(h, u->cpu);
		while (rec && rec->offset != u->start) {
			tracecmd_free_record(rec);
			rec = tracecmd_read_data(h, u->cpu);
		}
	}
	if (!rec)
		return -1;
	while (rec) {
		if (u->stop && rec->offset == u->stop) {
			tracecmd_free_record(rec);
			return 0;
		}
		int ret = on_record(h, rec, u->cpu, u);

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

/*
 * Cut the records of the CPUs @dcpu of @h into at most @max units of about equal size
 * (file bytes): a CPU with much of the data is cut at timestamps spread over its span,
 * each cut at the first record at or after the timestamp, found as read_unit will find
 * it. Units are in (cpu, stream) order. Returns their number, or -1.
 */
static int plan_units(struct tracecmd_input *h, const int *dcpu, int ndata, int want,
		      struct reader *u, int max, unsigned long long min_bytes)
{
	unsigned long long first_off[MAX_UNITS], span[MAX_UNITS], total = 0;
	int64_t first_ts[MAX_UNITS], last_ts[MAX_UNITS];
	int n = 0;

	if (ndata > max || ndata > MAX_UNITS)
		return -1;
	for (int j = 0; j < ndata; j++) {
		struct tep_record *first = tracecmd_read_cpu_first(h, dcpu[j]);
		struct tep_record *last = tracecmd_read_cpu_last(h, dcpu[j]);
		int ok = first && last && last->offset >= first->offset;

		if (ok) {
			first_off[j] = first->offset;
			span[j] = last->offset - first->offset + 1;
			first_ts[j] = (int64_t)first->ts;
			last_ts[j] = (int64_t)last->ts;
			total += span[j];
		}
		tracecmd_free_record(first);
		tracecmd_free_record(last);
		if (!ok)
			return -1;
	}
	if (total < min_bytes)
		return -1; /* opening a handle per worker would cost more than it saves */
	for (int j = 0; j < ndata; j++) {
		int cpu = dcpu[j], left = ndata - j - 1;
		unsigned long long pieces = (want * span[j] + total / 2) / total;

		if (pieces < 1)
			pieces = 1;
		if (pieces > (unsigned long long)(max - n - left))
			pieces = (unsigned long long)(max - n - left);
		u[n].cpu = cpu;
		u[n].from_first = 1;
		u[n].start = first_off[j];
		u[n].weight = span[j] / pieces;
		n++;
		for (unsigned long long p = 1; p < pieces; p++) {
			int64_t cut = first_ts[j] + (int64_t)((double)(last_ts[j] - first_ts[j]) *
							       (double)p / (double)pieces);
			struct tep_record *rec;

			if (cut <= first_ts[j] || tracecmd_set_cpu_to_timestamp(h, cpu, cut))
				continue;
			rec = tracecmd_read_data(h, cpu);
			while (rec && (int64_t)rec->ts < cut) {
				tracecmd_free_record(rec);
				rec = tracecmd_read_data(h, cpu);
			}
			if (!rec)
				break;
			unsigned long long off = rec->offset;

			tracecmd_free_record(rec);
			if (off == u[n - 1].start)
				continue;
			u[n - 1].stop = off;
			u[n].cpu = cpu;
			u[n].seek_ts = (unsigned long long)cut;
			u[n].start = off;
			u[n].weight = span[j] / pieces;
			n++;
		}
	}
	return n;
}

/*
 * Read the CPUs @dcpu (those with records) of @h with @k workers into @r, set up on @h.
 * Returns 0, -1 with a Python exception set, or 1 when the file must be read
 * sequentially instead (nothing set).
 */
static int read_parallel(struct reader *r, struct tracecmd_input *top, struct tracecmd_input *h,
			 const char *path, const char *bname, int k, const int *dcpu,
			 int ndata, PyObject *progress, unsigned long long every,
			 unsigned long long min_bytes)
{
	struct tracecmd_input *tops[MAX_WORKERS] = { 0 }, *hs[MAX_WORKERS] = { 0 };
	struct worker wk[MAX_WORKERS];
	pthread_t tid[MAX_WORKERS];
	int started[MAX_WORKERS] = { 0 }, queue[MAX_UNITS];
	struct reader *u = calloc(MAX_UNITS, sizeof(*u));
	struct shared sh = { .progress = progress, .every = every };
	atomic_int next;
	PyThreadState *tstate;
	int n = 0, ret = 1;

	if (!u) {
		PyErr_NoMemory();
		return -1;
	}
	atomic_init(&sh.count, 0);
	atomic_init(&sh.stop, 0);
	atomic_init(&next, 0);
	n = plan_units(h, dcpu, ndata, k * UNITS_PER_WORKER, u, MAX_UNITS, min_bytes);
	if (n < 2)
		goto out;
	for (int i = 0; i < n; i++) {
		struct reader plan = u[i];

		if (reader_init(&u[i], h, path, r->release) || reader_select(&u[i], r->sel)) {
			ret = -1;
			goto out;
		}
		u[i].cpu = plan.cpu;
		u[i].from_first = plan.from_first;
		u[i].seek_ts = plan.seek_ts;
		u[i].start = plan.start;
		u[i].stop = plan.stop;
		u[i].weight = plan.weight;
		u[i].sh = &sh;
		/* largest first, so that the last units to finish are small */
		int j = i;

		while (j > 0 && u[queue[j - 1]].weight < plan.weight) {
			queue[j] = queue[j - 1];
			j--;
		}
		queue[j] = i;
	}
	for (int i = 0; i < k; i++)
		wk[i] = (struct worker){ .units = u, .queue = queue, .nunits = n, .next = &next };

	/*
	 * The first worker decodes on @h at once, while this thread opens a handle for each
	 * other worker (opening parses the file's formats, which is not thread-safe, so the
	 * opens stay on this thread; decoding does not parse). The last worker runs here; a
	 * handle that fails to open leaves its share of the queue to the others.
	 */
	tstate = PyEval_SaveThread();
	wk[0].handle = h;
	started[0] = k > 1 && pthread_create(&tid[0], NULL, worker_main, &wk[0]) == 0;
	if (!started[0])
		worker_main(&wk[0]);
	for (int i = 1; i < k && atomic_load(&next) < n; i++) {
		const char *name;

		tops[i] = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!tops[i])
			break;
		hs[i] = h == top ? tops[i] : pick_buffer(tops[i], bname, &name, 0);
		if (!hs[i])
			break;
		wk[i].handle = hs[i];
		if (i < k - 1)
			started[i] = pthread_create(&tid[i], NULL, worker_main, &wk[i]) == 0;
		if (!started[i])
			worker_main(&wk[i]);
	}
	for (int i = 0; i < k; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	PyEval_RestoreThread(tstate);

	if (sh.exc_type) {
		PyErr_Restore(sh.exc_type, sh.exc_value, sh.exc_tb);
		ret = -1;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct reader *p = i ? &u[i - 1] : NULL;
		int cpu = u[i].cpu;

		if (!u[i].done || u[i].ret || u[i].err || u[i].unsorted)
			goto out;
		if (u[i].from_first)
			continue;
		/* a unit continues the previous one's CPU: time must not go back across the
		 * cut, and a gap at its first record follows the previous unit's last one */
		if (u[i].cpu_first_ts[cpu] < p->last_ts[cpu])
			goto out;
		int64_t *prev = (int64_t *)u[i].lost_prev_ts.data;

		for (size_t g = 0; g < u[i].lost_prev_ts.len; g++)
			if (prev[g] < 0)
				prev[g] = p->last_ts[cpu];
	}
	Py_BEGIN_ALLOW_THREADS
	ret = merge_workers(r, u, n, k);
	Py_END_ALLOW_THREADS
	if (ret) {
		PyErr_NoMemory();
		ret = -1;
		goto out;
	}
	r->units = n;
	ret = 0;
out:
	for (int i = 0; i < MAX_UNITS; i++)
		reader_free(&u[i]);
	for (int i = 1; i < k; i++) {
		if (hs[i] && hs[i] != tops[i])
			tracecmd_close(hs[i]);
		if (tops[i])
			tracecmd_close(tops[i]);
	}
	free(u);
	return ret;
}

/*
 * Read @path with up to @threads workers (1: sequentially). Sets *@retry, with no
 * exception, when the file must be read again sequentially.
 */
static PyObject *read_file(const char *path, const char *want, PyObject *progress,
			   unsigned long long every, int threads, unsigned long long min_bytes,
			   const struct selection *sel, int release, int *retry)
{
	const char *bname = "";
	PyObject *result = NULL;
	struct tracecmd_input *top, *h;
	struct reader r;
	int ret, err, ndata = 0, *dcpu = NULL;

	memset(&r, 0, sizeof(r));
	Py_BEGIN_ALLOW_THREADS
	errno = 0;
	top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	err = errno;
	Py_END_ALLOW_THREADS
	if (!top) {
		PyErr_Format(PyExc_ValueError, "%s: libtracecmd cannot open it as a trace-cmd "
			     "data file (%s)", path, err ? strerror(err) : "bad header or data");
		return NULL;
	}
	h = pick_buffer(top, want, &bname, 1);
	if (!h && *bname) {
		PyErr_Format(PyExc_ValueError, "%s: libtracecmd cannot open its buffer instance "
			     "'%s'", path, bname);
		goto out_top;
	}
	if (!h) {
		PyErr_Format(PyExc_ValueError, "%s: no buffer instance named '%s'", path, want);
		goto out_top;
	}
	if (reader_init(&r, h, path, release) || reader_select(&r, sel))
		goto out_reader;
	if (threads > 1 && (h == top || *bname)) {
		dcpu = malloc(sizeof(*dcpu) * (size_t)r.ncpus);
		if (!dcpu) {
			PyErr_NoMemory();
			goto out_reader;
		}
		for (int cpu = 0; cpu < r.ncpus; cpu++)
			if (tracecmd_peek_data(h, cpu))
				dcpu[ndata++] = cpu;
	}
	if (ndata > 1) {
		ret = read_parallel(&r, top, h, path, bname, threads < ndata ? threads : ndata,
				    dcpu, ndata, progress == Py_None ? NULL : progress, every,
				    min_bytes);
		if (ret > 0)
			*retry = 1;
		if (ret)
			goto out_reader;
	} else {
		r.progress = progress == Py_None ? NULL : progress;
		r.progress_every = every;
		r.tstate = PyEval_SaveThread();
		ret = tracecmd_iterate_events(h, NULL, 0, on_record, &r);
		pages_release(&r.pages);
		PyEval_RestoreThread(r.tstate);
		if (reader_check(&r, ret, path))
			goto out_reader;
	}
	{
		const char *stats = tracecmd_get_cpustats(h);

		if (!stats && h != top)
			stats = tracecmd_get_cpustats(top);
		const char *uname = tracecmd_get_uname(top);

		result = reader_result(&r, bname, stats ? stats : "", uname ? uname : "");
	}
out_reader:
	free(dcpu);
	reader_free(&r);
	if (h && h != top)
		tracecmd_close(h);
out_top:
	tracecmd_close(top);
	return result;
}

static char *dup_str(PyObject *o)
{
	const char *t = PyUnicode_AsUTF8(o);
	char *d = t ? strdup(t) : NULL;

	if (t && !d)
		PyErr_NoMemory();
	return d;
}

/* select = (irq_threads: bool, thread_pattern: str | None, tasks: sequence of str) */
static int selection_parse(PyObject *o, struct selection *sel)
{
	PyObject *pat, *tasks, *seq = NULL;
	int irq;

	if (!PyArg_ParseTuple(o, "pOO;select must be (irq_threads, thread_pattern, tasks)",
			      &irq, &pat, &tasks))
		return -1;
	sel->irq_threads = irq;
	if (pat != Py_None) {
		sel->thread_pat = dup_str(pat);
		if (!sel->thread_pat)
			goto fail;
		sel->thread_star = malloc(strlen(sel->thread_pat) + 3);
		if (!sel->thread_star) {
			PyErr_NoMemory();
			goto fail;
		}
		sprintf(sel->thread_star, "*%s*", sel->thread_pat);
	}
	seq = PySequence_Fast(tasks, "select: tasks must be a sequence of str");
	if (!seq)
		goto fail;
	sel->tasks = calloc((size_t)PySequence_Fast_GET_SIZE(seq) + 1, sizeof(char *));
	if (!sel->tasks) {
		PyErr_NoMemory();
		goto fail;
	}
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
		sel->tasks[i] = dup_str(PySequence_Fast_GET_ITEM(seq, i));
		if (!sel->tasks[i])
			goto fail;
		sel->ntasks = (int)i + 1;
	}
	Py_DECREF(seq);
	return 0;
fail:
	Py_XDECREF(seq);
	selection_free(sel);
	return -1;
}

static PyObject *tr_read(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "path", "buffer", "progress", "progress_every", "threads",
				  "parallel_min_bytes", "select", "release_pages", NULL };
	unsigned long long min_bytes = 64ull << 20;
	unsigned long long every = 1u << 20;
	const char *path, *want = NULL;
	PyObject *progress = Py_None, *select = Py_None, *result;
	struct selection sel = { 0 };
	int threads = 0, retry = 0, release = 1;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|zOKiKOp", kwlist, &path, &want, &progress,
					 &every, &threads, &min_bytes, &select, &release))
		return NULL;
	if (select != Py_None && selection_parse(select, &sel))
		return NULL;
	if (every == 0) {
		PyErr_SetString(PyExc_ValueError, "progress_every must be at least 1");
		return NULL;
	}
	if (progress != Py_None && !PyCallable_Check(progress)) {
		PyErr_SetString(PyExc_TypeError, "progress must be callable");
		return NULL;
	}
	if (threads < 0) {
		PyErr_SetString(PyExc_ValueError, "threads must be 0 (one per core) or more");
		return NULL;
	}
	if (threads == 0)
		threads = idle_cpus();
	if (threads > MAX_WORKERS)
		threads = MAX_WORKERS;
	if (threads > 1 && !file_uncompressed(path))
		threads = 1;
	result = read_file(path, want, progress, every, threads, min_bytes,
			   select == Py_None ? NULL : &sel, release, &retry);
	if (!result && retry)
		result = read_file(path, want, progress, every, 1, min_bytes,
				   select == Py_None ? NULL : &sel, release, &retry);
	selection_free(&sel);
	return result;
}

static PyMethodDef methods[] = {
	{ "read", (PyCFunction)(void (*)(void))tr_read, METH_VARARGS | METH_KEYWORDS,
	  "read(path, buffer=None, progress=None, progress_every=2**20, threads=0) -> dict\n\n"
	  "Read sched_switch, sched_waking, sched_wakeup, irq_handler_entry/exit and\n"
	  "sched_migrate_task records of a trace-cmd data file into columns.\n"
	  "buffer: instance name ('' = top level; None = the first buffer with data).\n"
	  "progress: called with the number of records read every progress_every records;\n"
	  "an exception it raises stops the reading and propagates.\n"
	  "threads: workers decoding in parallel (0 = one per idle core, 1 = sequential); each\n"
	  "takes pieces of the CPUs' streams. Compressed files, and files with less than\n"
	  "parallel_min_bytes (64 MiB) of records, are read by one. The result is the same.\n"
	  "select: None (every row) or (irq_threads, thread_pattern, tasks): keep only the rows\n"
	  "of those threads; 'selected_pids' and 'selected_irqs' say which were chosen.\n"
	  "release_pages: give the file's pages back to the system as they are decoded, so\n"
	  "that the resident set does not grow with the file (False: as libtracecmd does).\n"
	  "Raises ValueError naming the file and the cause." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef moduledef = {
	PyModuleDef_HEAD_INIT, "irqres._tracereader",
	"Native reader of trace-cmd data files (libtracecmd).", -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tracereader(void)
{
	PyObject *m;

	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	if (PyType_Ready(&ColumnType) < 0)
		return NULL;
	m = PyModule_Create(&moduledef);
	if (!m)
		return NULL;
	Py_INCREF(&ColumnType);
	if (PyModule_AddObject(m, "Column", (PyObject *)&ColumnType) < 0) {
		Py_DECREF(&ColumnType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
