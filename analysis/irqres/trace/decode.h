/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Decoding: the scheduling and IRQ events of one libtracecmd handle into columns.
 *
 * Each event's fields are resolved once per file; every record is then decoded by
 * offset into growable columns (columns.h). Command names are stored once per
 * (pid, comm) pair and IRQ names once per (irq, name) pair, not once per event; each
 * irq_handler_entry carries the index of its (irq, name) pair, so shared IRQ lines can
 * be told apart by action.
 *
 * Lost events: a record whose missed_events is non-zero follows a gap on its CPU. The
 * gap is recorded as (cpu, last timestamp seen on that CPU before it or -1, timestamp
 * of the record after it, count or -1 when the kernel did not say how many).
 *
 * Steps back: a record older than the one before it on its CPU has a damaged timestamp
 * (or follows one); it is noted as (cpu, its index among the CPU's records, its file
 * offset, the previous record's timestamp, its own), for the messages that name it.
 */
#ifndef IRQRES_TRACE_DECODE_H
#define IRQRES_TRACE_DECODE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdatomic.h>
#include <stdint.h>

#include <trace-cmd.h>

#include "columns.h"
#include "pages.h"
#include "selection.h"

enum { F_MAX = 6 };

/* Steps back in time noted in full; more are only counted (a file of garbage times). */
enum { STEPS_MAX = 1 << 16 };

struct evspec {
	const char *system;
	const char *name;
	const char *fields[F_MAX];  /* field names, NULL-terminated */
	const char *columns[F_MAX]; /* column names in the result */
	char wide[F_MAX];           /* 1: int64 column, 0: int32 column */
};

enum { EV_SWITCH, EV_WAKING, EV_WAKEUP, EV_IRQ_ENTRY, EV_IRQ_EXIT, EV_MIGRATE, EV_RUNTIME,
       EV_SOFTIRQ_ENTRY, EV_SOFTIRQ_EXIT, EV_NETIF_RECEIVE, EV_CONSUME_SKB, EV_SKB_COPY,
       EV_SK_DATA_READY, EV_SOCK_RECV, EV_COUNT };

/* Column 0 of every event is its timestamp, column 1 its CPU; the rest follow. */
extern const struct evspec event_specs[EV_COUNT];

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
	/* where a CPU's time stepped back (a damaged timestamp): the first STEPS_MAX */
	struct col step_cpu, step_index, step_offset, step_prev_ts, step_ts;
	uint64_t nsteps;        /* steps back seen, kept or not */
	uint64_t *cpu_nrec;     /* per cpu: records decoded so far */
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

/*
 * Prepare @r to read @h; @release: give the file's pages back as they are decoded (see
 * pages.h). Returns 0, or -1 with a Python exception set.
 */
int reader_init(struct reader *r, struct tracecmd_input *h, const char *path, int release);

/* Keep only the rows of @sel's threads (NULL: every row). 0, or -1 with an exception. */
int reader_select(struct reader *r, const struct selection *sel);

/* The tracecmd_iterate_events callback: decode @rec of @cpu into @data, a reader. */
int reader_record(struct tracecmd_input *handle, struct tep_record *rec, int cpu, void *data);

/* After a sequential iteration that returned @ret: 0, or -1 with a Python exception set. */
int reader_check(struct reader *r, int ret, const char *path);

/* Free what @r holds and leave it zeroed (freeing it again does nothing). */
void reader_free(struct reader *r);

#endif
