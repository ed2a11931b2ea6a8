/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Giving back the trace file's pages once they are decoded.
 *
 * libtracecmd (3.1) maps an uncompressed file's ring-buffer pages in windows of the
 * largest power of two not above one CPU's share of the file: 1 GiB per CPU for a
 * 2.7 GB trace. Every page read stays resident in the process until the window is
 * unmapped, so the resident set grows to the size of the file. The pages are the page
 * cache's, read-only and private (PROT_READ, MAP_PRIVATE): madvise(MADV_DONTNEED) drops
 * them from the process without any effect on what a later read of them would see
 * (madvise(2): the next access repopulates them from the file).
 *
 * So while decoding, each CPU's consumed pages are dropped in runs: one reference to a
 * record of each page of the run is held (tracecmd_record_ref), which keeps the page and
 * its mapping alive, so that the range given to madvise is always mapped by libtracecmd
 * at that moment, and only then released. A reader first checks, with /proc/self/maps,
 * that a record's page lies in a read-only private mapping of a file; libtracecmd's
 * other modes (a decompressed file's pages, the pages it read into malloc'd buffers
 * when mmap failed) are anonymous memory and are left alone.
 *
 * Not thread-safe: one per libtracecmd handle, used on that handle's thread.
 */
#ifndef IRQRES_TRACE_PAGES_H
#define IRQRES_TRACE_PAGES_H

#include <stddef.h>
#include <stdint.h>

struct tep_record;

struct pages_run {
	uintptr_t lo, hi;          /* the system pages [lo, hi) of the records held */
	struct tep_record **held;  /* one record per page of the run */
	int n;
};

struct pages {
	int state;                 /* PAGES_* */
	int ncpus;
	size_t sys;                /* the system page size */
	size_t max_run;            /* pages held before they are given back */
	struct pages_run *runs;    /* per CPU */
	unsigned long long dropped; /* bytes given back */
};

enum { PAGES_OFF, PAGES_UNKNOWN, PAGES_ON };

/*
 * Prepare @pg for a handle with @ncpus CPUs and pages of @trace_page bytes; @enable 0
 * leaves it off. 0, or -ENOMEM.
 */
int pages_init(struct pages *pg, int ncpus, unsigned int trace_page, int enable);

/* @rec of @cpu is being decoded: hold its page, give back the pages of a full run. */
void pages_note(struct pages *pg, struct tep_record *rec, int cpu);

/* Give back and release everything held (before the handle is read elsewhere or closed). */
void pages_release(struct pages *pg);

/* pages_release, then free @pg's memory. */
void pages_free(struct pages *pg);

#endif
