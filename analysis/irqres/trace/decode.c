// SPDX-License-Identifier: GPL-2.0-only
/* Decoding the records of one handle into columns: see decode.h. */
#include "decode.h"

#include <stdlib.h>
#include <string.h>

/* Exported by libtracecmd 3.x, declared only in its private header: the size of the
 * file's ring-buffer pages. */
int tracecmd_page_size(struct tracecmd_input *handle);

/* Column 0 of every event is its timestamp, column 1 its CPU; the rest follow. */
const struct evspec event_specs[EV_COUNT] = {
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
	/* the CPU time the scheduler charges a task (update_curr), ns since its last charge */
	[EV_RUNTIME] = { "sched", "sched_stat_runtime",
			 { "pid", "runtime" }, { "pid", "runtime" }, { 0, 1 } },
	/* a soft IRQ vector run by the current task (ksoftirqd, or on PREEMPT_RT the task
	 * that re-enabled bottom halves); kept whatever the selection, per CPU */
	[EV_SOFTIRQ_ENTRY] = { "irq", "softirq_entry",
			       { "common_pid", "vec" }, { "current", "vec" }, { 0, 0 } },
	[EV_SOFTIRQ_EXIT] = { "irq", "softirq_exit",
			      { "common_pid", "vec" }, { "current", "vec" }, { 0, 0 } },
	/* a packet delivered to the protocols (skbaddr: the socket buffer), and the two
	 * ways its reader takes it: an skb freed after use, or a datagram copied out */
	[EV_NETIF_RECEIVE] = { "net", "netif_receive_skb",
			       { "common_pid", "common_flags", "skbaddr" },
			       { "pid", "flags", "skbaddr" }, { 0, 0, 1 } },
	[EV_CONSUME_SKB] = { "skb", "consume_skb",
			     { "common_pid", "common_flags", "skbaddr" },
			     { "pid", "flags", "skbaddr" }, { 0, 0, 1 } },
	[EV_SKB_COPY] = { "skb", "skb_copy_datagram_iovec",
			  { "common_pid", "common_flags", "skbaddr" },
			  { "pid", "flags", "skbaddr" }, { 0, 0, 1 } },
	/* data queued on a socket (skaddr: the struct sock) in the context that queued it,
	 * and a recvmsg on one (sk) in its reader's (ret: bytes read, or -errno) */
	[EV_SK_DATA_READY] = { "sock", "sk_data_ready",
			       { "common_pid", "common_flags", "skaddr" },
			       { "pid", "flags", "skaddr" }, { 0, 0, 1 } },
	[EV_SOCK_RECV] = { "sock", "sock_recv_length",
			   { "common_pid", "common_flags", "sk", "ret" },
			   { "pid", "flags", "sk", "ret" }, { 0, 0, 1, 0 } },
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
	int irq = selection_irq_of(comm);
	int yes = selection_matches(r->sel, pid, comm, irq);

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

/* The raw-cache slot of @f in @rec for @key (see struct raw_slot), or NULL if none fits. */
static struct raw_slot *raw_slot_of(struct names *n, struct tep_format_field *f, int32_t key,
				    struct tep_record *rec)
{
	if (!n->raw || (f->flags & TEP_FIELD_IS_DYNAMIC) || f->size > RAW_MAX ||
	    f->offset + f->size > rec->size)
		return NULL;
	return &n->raw[(uint32_t)key & (RAW_SLOTS - 1)];
}

static int raw_hit(const struct raw_slot *slot, struct tep_format_field *f, int32_t key,
		   struct tep_record *rec)
{
	return slot && slot->idx >= 0 && slot->key == key && slot->size == f->size &&
	       memcmp(slot->raw, (const char *)rec->data + f->offset, f->size) == 0;
}

/* A pair new to @n: judge it for the selection, note where it appeared. 0 or -ENOMEM. */
static int new_pair(struct reader *r, struct names *n, int idx)
{
	if (r->sel && n == &r->comms && judge_pair(r, n->v[idx].key, n->v[idx].name))
		return -ENOMEM;
	if (r->sh && (col_push64(&n->born_ts, r->cur_ts) || col_push32(&n->born_cpu, r->cur_cpu)))
		return -ENOMEM;
	return 0;
}

/* Note the string field @f of @rec under @key; returns its pair index, -1 or -ENOMEM. */
static int note_str(struct reader *r, struct names *n, struct tep_format_field *f,
		    int32_t key, struct tep_record *rec)
{
	struct raw_slot *slot;
	const char *s;
	ssize_t len;
	int idx;

	if (!f)
		return -1;
	slot = raw_slot_of(n, f, key, rec);
	if (raw_hit(slot, f, key, rec))
		return slot->idx;
	len = field_str(r->tep, f, rec, &s);
	if (len < 0)
		return -1;
	size_t before = n->len;

	idx = names_note(n, key, s, (size_t)len);
	if (idx >= 0 && n->len > before && new_pair(r, n, idx))
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

/* Every progress_every records of a sequential read, call progress. 0, or -1 if it raised. */
static int progress_own(struct reader *r)
{
	if (!r->progress || r->nrecords % r->progress_every)
		return 0;
	PyEval_RestoreThread(r->tstate);
	PyObject *res = PyObject_CallFunction(r->progress, "K", (unsigned long long)r->nrecords);
	int failed = res == NULL;

	Py_XDECREF(res);
	r->tstate = PyEval_SaveThread();
	if (failed) {
		r->err = -ECANCELED;
		return -1;
	}
	return 0;
}

/* Whether the selection keeps this row of event @e (see selection.h). */
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
	case EV_RUNTIME: /* its comm is the task's own: judged by its switches */
		return !pid_is(r, field_num(ev->f[0], rec, r->native), SEL_NO);
	default: /* the soft IRQs; the skbs' deliveries and reads, whoever's: each delivery
		  * bounds the reads of its address that follow (irqres.measure.accounting);
		  * the sockets' deliveries and reads: a read names the socket's reader */
		return 1;
	}
}

/* The time of @rec on @cpu: order, gaps before it, first and last. 0 or -ENOMEM. */
static inline int note_time(struct reader *r, struct tep_record *rec, int64_t ts, int cpu)
{
	int ret = 0;

	if (ts < r->last_ts[cpu]) {
		r->unsorted = 1;
		if (r->nsteps++ < STEPS_MAX) {
			ret |= col_push32(&r->step_cpu, cpu);
			ret |= col_push64(&r->step_index, (int64_t)r->cpu_nrec[cpu]);
			ret |= col_push64(&r->step_offset, (int64_t)rec->offset);
			ret |= col_push64(&r->step_prev_ts, r->last_ts[cpu]);
			ret |= col_push64(&r->step_ts, ts);
		}
	}
	r->cpu_nrec[cpu]++;
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
	return ret;
}

/* The index in ev[] of @rec's event, or -1 for an event not read. */
static inline int event_of(const struct reader *r, struct tep_record *rec)
{
	int type;

	if (r->native && r->type_size == 2 && r->type_offset + 2 <= rec->size) {
		uint16_t t;

		memcpy(&t, (const char *)rec->data + r->type_offset, 2);
		type = t;
	} else {
		type = tep_data_type(r->tep, rec);
	}
	if (type >= 0 && type < (int)sizeof(r->ev_of_id))
		return r->ev_of_id[type];
	for (int i = 0; i < EV_COUNT; i++)
		if (r->ev[i].id == type)
			return i;
	return -1;
}

/* The comms of event @e's record: they decide whether a selection keeps the row. */
static inline int note_comms(struct reader *r, int e, const struct evstate *ev,
			     struct tep_record *rec)
{
	int nomem = 0;

	if (e == EV_SWITCH) {
		nomem |= note_str(r, &r->comms, ev->s1,
				  (int32_t)field_num(ev->f[0], rec, r->native), rec) == -ENOMEM;
		nomem |= note_str(r, &r->comms, ev->s2,
				  (int32_t)field_num(ev->f[2], rec, r->native), rec) == -ENOMEM;
	} else if (e == EV_WAKING || e == EV_WAKEUP) {
		nomem |= note_str(r, &r->comms, ev->s1,
				  (int32_t)field_num(ev->f[1], rec, r->native), rec) == -ENOMEM;
	}
	return nomem ? -ENOMEM : 0;
}

/* Append the row of event @e's record to its columns. 0 or -ENOMEM. */
static inline int push_row(struct reader *r, int e, struct evstate *ev, struct tep_record *rec,
			   int64_t ts, int cpu)
{
	int ret = col_push64(&ev->ts, ts) | col_push32(&ev->cpu, cpu);

	for (int i = 0; i < ev->nfields; i++) {
		int64_t v = field_num(ev->f[i], rec, r->native);

		if (event_specs[e].wide[i])
			ret |= col_push64(&ev->c[i], v);
		else
			ret |= col_push32(&ev->c[i], (int32_t)v);
	}
	if (e == EV_IRQ_ENTRY) {
		int idx = note_str(r, &r->irq_names, ev->s1,
				   (int32_t)field_num(ev->f[1], rec, r->native), rec);

		ret |= idx == -ENOMEM;
		ret |= col_push32(&r->entry_name, idx < 0 ? -1 : idx);
	}
	return ret ? -ENOMEM : 0;
}

int reader_record(struct tracecmd_input *handle, struct tep_record *rec, int cpu, void *data)
{
	struct reader *r = data;
	int64_t ts = (int64_t)rec->ts;
	int ret, e;

	if (r->sh && atomic_load_explicit(&r->sh->stop, memory_order_relaxed)) {
		r->err = -EINTR;
		return -1;
	}
	if (cpu < 0 || cpu >= r->ncpus) {
		r->err = -ERANGE;
		return -1;
	}
	pages_note(&r->pages, rec, cpu);
	ret = note_time(r, rec, ts, cpu);
	e = event_of(r, rec);
	if (e >= 0) {
		struct evstate *ev = &r->ev[e];

		r->seen[e]++;
		ret |= note_comms(r, e, ev, rec);
		if (!r->sel || row_kept(r, e, ev, rec))
			ret |= push_row(r, e, ev, rec, ts, cpu);
	}
	if (ret) {
		r->err = -ENOMEM;
		return -1;
	}
	if (r->sh)
		return r->sh->progress ? progress_shared(r) : 0;
	return progress_own(r);
}

void reader_free(struct reader *r)
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
	free(r->step_cpu.data);
	free(r->step_index.data);
	free(r->step_offset.data);
	free(r->step_prev_ts.data);
	free(r->step_ts.data);
	free(r->cpu_nrec);
	free(r->last_ts);
	free(r->cpu_first_ts);
	free(r->pidsel);
	free(r->irqsel);
	free(r->sel_pids.data);
	free(r->sel_ts.data);
	free(r->sel_irqs.data);
	pages_free(&r->pages);
	memset(r, 0, sizeof(*r));
}

int reader_select(struct reader *r, const struct selection *sel)
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

/* The string fields of event @e, its names. */
static void find_strings(struct evstate *ev, int e, struct tep_event *event)
{
	if (e == EV_SWITCH) {
		ev->s1 = tep_find_field(event, "prev_comm");
		ev->s2 = tep_find_field(event, "next_comm");
	} else if (e == EV_WAKING || e == EV_WAKEUP) {
		ev->s1 = tep_find_field(event, "comm");
	} else if (e == EV_IRQ_ENTRY) {
		ev->s1 = tep_find_field(event, "name");
	}
}

/* Resolve event @e and its fields once. 0, or -1 with a Python exception set. */
static int resolve_event(struct reader *r, int e, const char *path)
{
	const struct evspec *spec = &event_specs[e];
	struct evstate *ev = &r->ev[e];
	struct tep_event *event = tep_find_event_by_name(r->tep, spec->system, spec->name);

	ev->id = -1;
	ev->ts.size = 8;
	ev->cpu.size = 4;
	for (int i = 0; i < F_MAX; i++)
		ev->c[i].size = spec->wide[i] ? 8 : 4;
	if (!event)
		return 0;
	for (int i = 0; i < F_MAX && spec->fields[i]; i++) {
		ev->f[i] = tep_find_any_field(event, spec->fields[i]);
		if (!ev->f[i]) {
			PyErr_Format(PyExc_ValueError, "%s: event %s:%s has no field '%s'", path,
				     spec->system, spec->name, spec->fields[i]);
			return -1;
		}
		ev->nfields = i + 1;
	}
	find_strings(ev, e, event);
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
	return 0;
}

/* Resolve every event and field once. Returns 0, or -1 with a Python exception set. */
static int reader_setup(struct reader *r, const char *path)
{
	memset(r->ev_of_id, -1, sizeof(r->ev_of_id));
	for (int e = 0; e < EV_COUNT; e++)
		if (resolve_event(r, e, path))
			return -1;
	if (names_cache(&r->comms)) {
		PyErr_NoMemory();
		return -1;
	}
	r->comms.born_ts.size = r->irq_names.born_ts.size = 8;
	r->comms.born_cpu.size = r->irq_names.born_cpu.size = 4;
	r->entry_name.size = 4;
	r->lost_cpu.size = 4;
	r->lost_prev_ts.size = r->lost_ts.size = r->lost_count.size = 8;
	r->step_cpu.size = 4;
	r->step_index.size = r->step_offset.size = r->step_prev_ts.size = r->step_ts.size = 8;
	return 0;
}

int reader_init(struct reader *r, struct tracecmd_input *h, const char *path, int release)
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
	r->cpu_nrec = calloc((size_t)r->ncpus, sizeof(*r->cpu_nrec));
	if (!r->last_ts || !r->cpu_first_ts || !r->cpu_nrec) {
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

int reader_check(struct reader *r, int ret, const char *path)
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

