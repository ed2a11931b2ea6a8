// SPDX-License-Identifier: GPL-2.0-only
/* Giving back the trace file's pages once they are decoded: see pages.h. */
#include "pages.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trace-cmd.h>

/* Exported by libtracecmd 3.x, declared only in its private header: take one more
 * reference to @record (released by tracecmd_free_record). */
void tracecmd_record_ref(struct tep_record *record);

enum { RUN_BYTES = 2 << 20 }; /* per CPU: what stays resident before it is given back */

int pages_init(struct pages *pg, int ncpus, unsigned int trace_page, int enable)
{
	long sys = sysconf(_SC_PAGESIZE);

	memset(pg, 0, sizeof(*pg));
	/* a system page must hold whole trace pages of one mapping */
	if (!enable || ncpus <= 0 || sys <= 0 || trace_page < (unsigned long)sys ||
	    trace_page % (unsigned long)sys)
		return 0;
	pg->runs = calloc((size_t)ncpus, sizeof(*pg->runs));
	if (!pg->runs)
		return -ENOMEM;
	pg->ncpus = ncpus;
	pg->sys = (size_t)sys;
	pg->max_run = RUN_BYTES / pg->sys;
	pg->state = PAGES_UNKNOWN;
	return 0;
}

/*
 * Does @addr lie in a read-only private mapping of a file? Only there is MADV_DONTNEED
 * harmless: anonymous memory (malloc'd pages) would read back as zeros.
 */
static int private_file_page(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		unsigned long long inode;
		char perms[5];

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %*x %*x:%*x %llu", &lo, &hi, perms,
			   &inode) != 4)
			continue;
		if (addr < lo || addr >= hi)
			continue;
		found = inode != 0 && perms[0] == 'r' && perms[1] == '-' && perms[3] == 'p';
		break;
	}
	fclose(f);
	return found;
}

static void run_flush(struct pages *pg, struct pages_run *run)
{
	if (!run->n)
		return;
	/* every page of [lo, hi) is held, so it is mapped by libtracecmd right now */
	if (madvise((void *)run->lo, run->hi - run->lo, MADV_DONTNEED) == 0)
		pg->dropped += run->hi - run->lo;
	for (int i = 0; i < run->n; i++)
		tracecmd_free_record(run->held[i]);
	run->n = 0;
}

static void run_hold(struct pages_run *run, struct tep_record *rec)
{
	tracecmd_record_ref(rec);
	run->held[run->n++] = rec;
}

/* Start @run at page @p with @rec, once the memory is known to be a file's pages. */
static void run_start(struct pages *pg, struct pages_run *run, struct tep_record *rec,
		      uintptr_t p)
{
	if (pg->state == PAGES_UNKNOWN)
		pg->state = private_file_page(p) ? PAGES_ON : PAGES_OFF;
	if (pg->state == PAGES_OFF)
		return;
	if (!run->held) {
		run->held = malloc(pg->max_run * sizeof(*run->held));
		if (!run->held)
			return; /* this CPU keeps its pages, as libtracecmd alone would */
	}
	run_hold(run, rec);
	run->lo = p;
	run->hi = p + pg->sys;
}

void pages_note(struct pages *pg, struct tep_record *rec, int cpu)
{
	struct pages_run *run;
	uintptr_t p;

	if (pg->state == PAGES_OFF || cpu < 0 || cpu >= pg->ncpus || !rec->data)
		return;
	p = (uintptr_t)rec->data & ~(uintptr_t)(pg->sys - 1);
	run = &pg->runs[cpu];
	if (run->n && p >= run->lo && p < run->hi)
		return; /* a page held already */
	if (run->n && p == run->hi && (size_t)run->n < pg->max_run) {
		run_hold(run, rec);
		run->hi += pg->sys;
		return;
	}
	run_flush(pg, run);
	run_start(pg, run, rec, p);
}

void pages_release(struct pages *pg)
{
	for (int cpu = 0; cpu < pg->ncpus; cpu++)
		run_flush(pg, &pg->runs[cpu]);
}

void pages_free(struct pages *pg)
{
	pages_release(pg);
	for (int cpu = 0; cpu < pg->ncpus; cpu++)
		free(pg->runs[cpu].held);
	free(pg->runs);
	memset(pg, 0, sizeof(*pg));
}
