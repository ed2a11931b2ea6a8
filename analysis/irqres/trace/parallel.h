/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parallel decoding: on an uncompressed file with records on several CPUs, each worker
 * thread opens its own handle (libtracecmd handles are not thread-safe) and decodes
 * units, pieces of the CPUs' streams, with the GIL released; the units are then merged
 * (merge.h) into the sequential reader's result, byte for byte. Compressed files are
 * read by one thread: libtracecmd 3.1 decompresses them through one process-wide zstd
 * context. A CPU whose timestamps go backwards, or a unit that fails, sends the whole
 * file through the sequential reader, which then gives the result (or the error) it
 * always gives.
 */
#ifndef IRQRES_TRACE_PARALLEL_H
#define IRQRES_TRACE_PARALLEL_H

#include "decode.h"
#include "merge.h"

/* What parallel_read reads. */
struct parallel_job {
	struct tracecmd_input *top;  /* the file */
	struct tracecmd_input *h;    /* its buffer to read: top, or an instance of it */
	const char *path;
	const char *bname;           /* the name of that instance, "" for top */
	int workers;
	const int *dcpu;             /* the CPUs with records */
	int ndata;
	PyObject *progress;          /* callable(records) or NULL */
	unsigned long long every;    /* records between two calls of progress */
	unsigned long long min_bytes; /* read sequentially below this much data */
};

/*
 * Workers worth starting: the cores this thread may run on that nothing else wants now.
 * On a busy machine a second worker only adds its handle's opening and the merge to a
 * decoding that gets no faster.
 */
int parallel_idle_cpus(void);

/*
 * Read @job into @r, set up on @job->h. Returns 0, -1 with a Python exception set, or 1
 * when the file must be read sequentially instead (nothing set).
 */
int parallel_read(struct reader *r, const struct parallel_job *job);

#endif
