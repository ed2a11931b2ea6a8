// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqres._tracereader: read the scheduling and IRQ events of a trace-cmd data file
 * with libtracecmd into flat column buffers.
 *
 * The module: its arguments, the choice of sequential or parallel decoding, and the
 * result. The columns are handed to Python as Column objects that own the arrays and
 * expose them through the buffer protocol (int64 timestamps, int32 cpus/pids/irqs, int64
 * prev_state), which the Python side wraps with numpy.frombuffer without a copy, so
 * this module does not depend on the numpy version.
 *
 *   input.c      the file: its compression, the buffer to read
 *   decode.c     records of one handle into columns (columns.c, selection.c)
 *   parallel.c   units of the CPUs' streams decoded by worker threads
 *   merge.c      the units' columns merged into the sequential result
 *   pages.c      the file's pages given back once decoded
 */
#include "decode.h"
#include "input.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

/* In libtracecmd 3.x but not in its public header: the "CPU: N / entries / overrun /
 * dropped events" text that trace-cmd stored at the end of the recording. */
const char *tracecmd_get_cpustats(struct tracecmd_input *handle);
/* The recording machine's "sysname nodename release machine", or NULL. */
const char *tracecmd_get_uname(struct tracecmd_input *handle);

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

/* {"ts": ..., "cpu": ..., field columns...} of every event the file defines, in @events. */
static int put_events(PyObject *events, struct reader *r)
{
	for (int e = 0; e < EV_COUNT; e++) {
		struct evstate *ev = &r->ev[e];
		PyObject *d;

		if (ev->id < 0)
			continue;
		d = PyDict_New();
		if (!d || dict_put(events, event_specs[e].name, d))
			return -1;
		if (dict_put(d, "ts", col_take(&ev->ts)) || dict_put(d, "cpu", col_take(&ev->cpu)))
			return -1;
		for (int i = 0; i < ev->nfields; i++)
			if (dict_put(d, event_specs[e].columns[i], col_take(&ev->c[i])))
				return -1;
		if (e == EV_IRQ_ENTRY && dict_put(d, "name_idx", col_take(&r->entry_name)))
			return -1;
	}
	return 0;
}

struct item {
	const char *key;
	PyObject *value; /* a new reference, or NULL when making it failed */
};

/* Put every item into @d (each value's reference is consumed). 0, or -1 if one failed. */
static int put_items(PyObject *d, struct item *items, size_t n)
{
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		if (dict_put(d, items[i].key, items[i].value))
			ret = -1;
	return ret;
}

static PyObject *latin1(const char *s)
{
	return PyUnicode_DecodeLatin1(s, (Py_ssize_t)strlen(s), NULL);
}

static PyObject *int64s(const int64_t *v, int n)
{
	return PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(sizeof(*v) * (size_t)n));
}

/* The counts, times and names of the result. */
static int put_info(PyObject *res, struct reader *r, const char *buffer, const char *cpustats,
		    const char *uname)
{
	struct item items[] = {
		{ "ncpus", PyLong_FromLong(r->ncpus) },
		{ "buffer", PyUnicode_FromString(buffer) },
		{ "nrecords", PyLong_FromUnsignedLongLong(r->nrecords) },
		{ "units", PyLong_FromLong(r->units ? r->units : 1) },
		{ "first_ts", PyLong_FromLongLong(r->nrecords ? r->first_ts : 0) },
		{ "last_ts", PyLong_FromLongLong(r->nrecords ? r->end_ts : 0) },
		{ "comms", names_list(&r->comms) },
		{ "irq_names", names_list(&r->irq_names) },
		{ "cpu_first_ts", int64s(r->cpu_first_ts, r->ncpus) },
		{ "cpu_last_ts", int64s(r->last_ts, r->ncpus) },
		{ "cpustats", latin1(cpustats) },
		{ "uname", latin1(uname) },
	};

	return put_items(res, items, sizeof(items) / sizeof(items[0]));
}

/* "lost": the gaps before records, as columns. */
static int put_lost(PyObject *res, struct reader *r)
{
	PyObject *lost = PyDict_New();
	int ret;

	if (!lost)
		return -1;
	struct item gaps[] = {
		{ "cpu", col_take(&r->lost_cpu) },
		{ "prev_ts", col_take(&r->lost_prev_ts) },
		{ "ts", col_take(&r->lost_ts) },
		{ "count", col_take(&r->lost_count) },
	};

	ret = put_items(lost, gaps, sizeof(gaps) / sizeof(gaps[0]));
	return dict_put(res, "lost", lost) | ret;
}

/* "steps": where a CPU's time stepped back, as columns; "nsteps": how many there were. */
static int put_steps(PyObject *res, struct reader *r)
{
	PyObject *steps = PyDict_New();
	int ret;

	if (!steps)
		return -1;
	struct item cols[] = {
		{ "cpu", col_take(&r->step_cpu) },
		{ "index", col_take(&r->step_index) },
		{ "offset", col_take(&r->step_offset) },
		{ "prev_ts", col_take(&r->step_prev_ts) },
		{ "ts", col_take(&r->step_ts) },
	};

	ret = put_items(steps, cols, sizeof(cols) / sizeof(cols[0]));
	ret |= dict_put(res, "nsteps", PyLong_FromUnsignedLongLong(r->nsteps));
	return dict_put(res, "steps", steps) | ret;
}

/* "seen": the records of each event, kept or not. */
static int put_seen(PyObject *res, struct reader *r)
{
	PyObject *seen = PyDict_New();
	int ret = 0;

	if (!seen)
		return -1;
	for (int e = 0; e < EV_COUNT && !ret; e++)
		if (r->ev[e].id >= 0)
			ret = dict_put(seen, event_specs[e].name,
				       PyLong_FromUnsignedLongLong(r->seen[e]));
	return dict_put(res, "seen", seen) | ret;
}

/* The threads a selection chose, or None for a read without one. */
static int put_selected(PyObject *res, struct reader *r)
{
	if (r->sel) {
		struct item sel[] = {
			{ "selected_pids", col_take(&r->sel_pids) },
			{ "selected_ts", col_take(&r->sel_ts) },
			{ "selected_irqs", col_take(&r->sel_irqs) },
		};

		return put_items(res, sel, sizeof(sel) / sizeof(sel[0]));
	}
	struct item none[] = {
		{ "selected_pids", Py_NewRef(Py_None) },
		{ "selected_irqs", Py_NewRef(Py_None) },
	};

	return put_items(res, none, sizeof(none) / sizeof(none[0]));
}

/* The result of a read; @r's columns move into it. NULL with an exception on failure. */
static PyObject *reader_result(struct reader *r, const char *buffer, const char *cpustats,
			       const char *uname)
{
	PyObject *res = PyDict_New(), *events;

	if (!res)
		return NULL;
	if (put_info(res, r, buffer, cpustats, uname))
		goto fail;
	events = PyDict_New();
	if (!events)
		goto fail;
	if (put_events(events, r)) {
		Py_DECREF(events);
		goto fail;
	}
	if (dict_put(res, "events", events) || put_lost(res, r) || put_steps(res, r) ||
	    put_seen(res, r) || put_selected(res, r))
		goto fail;
	return res;
fail:
	Py_DECREF(res);
	return NULL;
}

/* What read() was asked for. */
struct read_args {
	const char *path;
	const char *want;            /* the buffer's name; NULL: the first with records */
	PyObject *progress;          /* callable(records) or NULL */
	unsigned long long every;    /* records between two calls of progress */
	unsigned long long min_bytes; /* read in parallel from this much data on */
	int threads;                 /* workers; 1: sequentially, unless units is set */
	int by_cpu;                  /* one worker: decode CPU by CPU all the same */
	int release;                 /* give the file's pages back as they are decoded */
	const struct selection *sel; /* NULL: every row */
};

/* The file, or NULL with a Python exception set. */
static struct tracecmd_input *open_file(const char *path)
{
	struct tracecmd_input *top;
	int err;

	Py_BEGIN_ALLOW_THREADS
	errno = 0;
	top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	err = errno < 0 ? -errno : errno;	/* some of libtracecmd's paths set -errno */
	Py_END_ALLOW_THREADS
	if (!top)
		PyErr_Format(PyExc_ValueError, "%s: libtracecmd cannot open it as a trace-cmd "
			     "data file (%s)", path, err ? strerror(err) : "bad header or data");
	return top;
}

/* The buffer of @top that @a wants, or NULL with a Python exception set. */
static struct tracecmd_input *open_buffer(struct tracecmd_input *top, const struct read_args *a,
					  const char **bname)
{
	struct tracecmd_input *h = input_pick_buffer(top, a->want, bname, 1);

	if (!h && **bname)
		PyErr_Format(PyExc_ValueError, "%s: libtracecmd cannot open its buffer instance "
			     "'%s'", a->path, *bname);
	else if (!h)
		PyErr_Format(PyExc_ValueError, "%s: no buffer instance named '%s'", a->path, a->want);
	return h;
}

/* Every record of @h in libtracecmd's order, on this thread. 0, or -1 with an exception. */
static int read_sequential(struct reader *r, struct tracecmd_input *h, const struct read_args *a)
{
	int ret;

	r->progress = a->progress;
	r->progress_every = a->every;
	r->tstate = PyEval_SaveThread();
	ret = tracecmd_iterate_events(h, NULL, 0, reader_record, r);
	pages_release(&r->pages);
	PyEval_RestoreThread(r->tstate);
	return reader_check(r, ret, a->path);
}

/*
 * Read @h (@top's buffer @bname) in parallel when @a allows and it has records on several
 * CPUs, else sequentially: 0, -1 with a Python exception set, or 1 to read it again
 * sequentially.
 */
static int read_records(struct reader *r, struct tracecmd_input *top, struct tracecmd_input *h,
			const char *bname, const struct read_args *a)
{
	struct parallel_job job = { .top = top, .h = h, .path = a->path, .bname = bname,
				    .progress = a->progress, .every = a->every,
				    .min_bytes = a->min_bytes };
	int *dcpu, ret;

	if ((a->threads < 2 && !a->by_cpu) || (h != top && !*bname))
		return read_sequential(r, h, a);
	dcpu = malloc(sizeof(*dcpu) * (size_t)r->ncpus);
	if (!dcpu) {
		PyErr_NoMemory();
		return -1;
	}
	for (int cpu = 0; cpu < r->ncpus; cpu++)
		if (tracecmd_peek_data(h, cpu))
			dcpu[job.ndata++] = cpu;
	job.dcpu = dcpu;
	job.workers = a->threads < job.ndata ? a->threads : job.ndata;
	ret = job.ndata > 1 ? parallel_read(r, &job) : read_sequential(r, h, a);
	free(dcpu);
	return ret;
}

/* The result of reading @h, @top's buffer @bname, into @r. */
static PyObject *result_of(struct reader *r, struct tracecmd_input *top, struct tracecmd_input *h,
			   const char *bname)
{
	const char *stats = tracecmd_get_cpustats(h);
	const char *uname = tracecmd_get_uname(top);

	if (!stats && h != top)
		stats = tracecmd_get_cpustats(top);
	return reader_result(r, bname, stats ? stats : "", uname ? uname : "");
}

/* Read @a->path. Sets *@retry, with no exception, when it must be read sequentially. */
static PyObject *read_file(const struct read_args *a, int *retry)
{
	const char *bname = "";
	PyObject *result = NULL;
	struct tracecmd_input *top, *h;
	struct reader r;
	int ret;

	memset(&r, 0, sizeof(r));
	top = open_file(a->path);
	if (!top)
		return NULL;
	h = open_buffer(top, a, &bname);
	if (h && !reader_init(&r, h, a->path, a->release) && !reader_select(&r, a->sel)) {
		ret = read_records(&r, top, h, bname, a);
		if (ret > 0)
			*retry = 1;
		if (!ret)
			result = result_of(&r, top, h, bname);
	}
	reader_free(&r);
	if (h && h != top)
		tracecmd_close(h);
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

/* Check read()'s numbers; 0, or -1 with a Python exception set. */
static int check_args(unsigned long long every, PyObject *progress, int threads)
{
	if (every == 0) {
		PyErr_SetString(PyExc_ValueError, "progress_every must be at least 1");
		return -1;
	}
	if (progress != Py_None && !PyCallable_Check(progress)) {
		PyErr_SetString(PyExc_TypeError, "progress must be callable");
		return -1;
	}
	if (threads < 0) {
		PyErr_SetString(PyExc_ValueError, "threads must be 0 (one per core) or more");
		return -1;
	}
	return 0;
}

/* The workers to read @path with, @threads asked for (0: one per idle core). */
static int workers_for(const char *path, int threads)
{
	if (threads == 0)
		threads = parallel_idle_cpus();
	if (threads > MAX_WORKERS)
		threads = MAX_WORKERS;
	if (threads > 1 && !input_uncompressed(path))
		threads = 1;
	return threads;
}

static PyObject *tr_read(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "path", "buffer", "progress", "progress_every", "threads",
				  "parallel_min_bytes", "select", "release_pages", "by_cpu", NULL };
	struct read_args a = { .every = 1u << 20, .min_bytes = 64ull << 20, .release = 1 };
	PyObject *progress = Py_None, *select = Py_None, *by_cpu = Py_None, *result = NULL;
	struct selection sel = { 0 };
	int retry = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|zOKiKOpO", kwlist, &a.path, &a.want,
					 &progress, &a.every, &a.threads, &a.min_bytes, &select,
					 &a.release, &by_cpu))
		return NULL;
	if (select != Py_None && selection_parse(select, &sel))
		return NULL;
	if (!check_args(a.every, progress, a.threads)) {
		a.progress = progress == Py_None ? NULL : progress;
		a.sel = select == Py_None ? NULL : &sel;
		/* left to choose, one worker still decodes CPU by CPU, without the search for
		 * the next CPU that libtracecmd's iteration does for every record */
		a.by_cpu = (by_cpu == Py_None ? a.threads == 0 : PyObject_IsTrue(by_cpu) == 1) &&
			   input_uncompressed(a.path);
		a.threads = workers_for(a.path, a.threads);
		result = read_file(&a, &retry);
		if (!result && retry) {
			a.threads = 1;
			a.by_cpu = 0;
			result = read_file(&a, &retry);
		}
	}
	selection_free(&sel);
	return result;
}

static PyMethodDef methods[] = {
	{ "read", (PyCFunction)(void (*)(void))tr_read, METH_VARARGS | METH_KEYWORDS,
	  "read(path, buffer=None, progress=None, progress_every=2**20, threads=0,\n"
	  "     parallel_min_bytes=2**26, select=None, release_pages=True, by_cpu=None) -> dict\n\n"
	  "Read sched_switch, sched_waking, sched_wakeup, irq_handler_entry/exit,\n"
	  "sched_migrate_task, sched_stat_runtime, softirq_entry/exit, netif_receive_skb,\n"
	  "consume_skb, skb_copy_datagram_iovec, sk_data_ready and sock_recv_length records\n"
	  "of a trace-cmd data file into columns.\n"
	  "buffer: instance name ('' = top level; None = the first buffer with data).\n"
	  "progress: called with the number of records read every progress_every records;\n"
	  "an exception it raises stops the reading and propagates.\n"
	  "threads: workers decoding in parallel (0 = one per idle core, 1 = sequential); each\n"
	  "takes pieces of the CPUs' streams. Compressed files, and files with less than\n"
	  "parallel_min_bytes (64 MiB) of records, are read by one. The result is the same.\n"
	  "select: None (every row) or (irq_threads, thread_pattern, tasks): keep only the rows\n"
	  "of those threads; 'selected_pids' and 'selected_irqs' say which were chosen.\n"
	  "by_cpu: with one worker too, decode CPU by CPU and merge (cheaper than libtracecmd's\n"
	  "iteration); None: when threads is 0. Uncompressed files of parallel_min_bytes only.\n"
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
