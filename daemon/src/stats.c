/* SPDX-License-Identifier: GPL-2.0-only */
/* stats.c - schedstat, context switches and interrupt counts under irqres_paths.proc. */
#include "stats.h"

#include "irqres.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *proc_open(pid_t pid, const char *name, int *err)
{
	char path[320];
	FILE *f;

	if (pid > 0)
		snprintf(path, sizeof(path), "%s/%d/%s", irqres_paths.proc, (int)pid, name);
	else
		snprintf(path, sizeof(path), "%s/%s", irqres_paths.proc, name);
	f = fopen(path, "re");
	if (!f)
		*err = errno == ENOENT && pid > 0 ? -ESRCH : -errno;
	return f;
}

int stats_thread_read(pid_t pid, struct thread_stats *st)
{
	unsigned long long cpu, wait, slices, v;
	bool have_vol = false, have_invol = false;
	char line[256];
	int err = 0;
	FILE *f;

	memset(st, 0, sizeof(*st));
	f = proc_open(pid, "schedstat", &err);
	if (!f)
		return err;
	if (fscanf(f, "%llu %llu %llu", &cpu, &wait, &slices) != 3) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	st->cpu_time_ns = cpu;
	st->wait_time_ns = wait;
	st->timeslices = slices;

	f = proc_open(pid, "status", &err);
	if (!f)
		return err;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) {
			st->voluntary_switches = v;
			have_vol = true;
		} else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			st->involuntary_switches = v;
			have_invol = true;
		}
	}
	fclose(f);
	return have_vol && have_invol ? 0 : -EINVAL;
}

static int counts_push(struct irq_counts *ic, int irq, uint64_t count)
{
	if (ic->n == ic->cap) {
		size_t cap = ic->cap ? ic->cap * 2 : 64;
		int *irqs = realloc(ic->irq, cap * sizeof(*irqs));
		uint64_t *counts;

		if (!irqs)
			return -ENOMEM;
		ic->irq = irqs;
		counts = realloc(ic->count, cap * sizeof(*counts));
		if (!counts)
			return -ENOMEM;
		ic->count = counts;
		ic->cap = cap;
	}
	ic->irq[ic->n] = irq;
	ic->count[ic->n] = count;
	ic->n++;
	return 0;
}

/*
 * /proc/interrupts: a header of CPU names, then one line per IRQ:
 *   " 11:      1234       567   IO-APIC  11-fasteoi   eth0"
 * Only lines whose label is a number are IRQs (NMI:, LOC:, ERR: ... are not).
 */
int stats_irq_counts_read(struct irq_counts *ic)
{
	char *line = NULL, *p, *end;
	size_t cap = 0;
	int ncpu = 0, i, rc = 0, err = 0;
	FILE *f;

	ic->n = 0;
	f = proc_open(0, "interrupts", &err);
	if (!f)
		return err;
	if (getline(&line, &cap, f) < 0) {
		rc = -EINVAL;
		goto out;
	}
	for (p = line; (p = strstr(p, "CPU")); p += 3)
		ncpu++;
	if (ncpu == 0) {
		rc = -EINVAL;
		goto out;
	}
	while (getline(&line, &cap, f) >= 0) {
		unsigned long irq;
		uint64_t sum = 0;

		p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!isdigit((unsigned char)*p))
			continue;
		errno = 0;
		irq = strtoul(p, &end, 10);
		if (*end != ':' || errno || irq > INT32_MAX)
			continue;
		p = end + 1;
		for (i = 0; i < ncpu; i++) {
			unsigned long long c;

			while (*p == ' ' || *p == '\t')
				p++;
			if (!isdigit((unsigned char)*p))
				break;
			c = strtoull(p, &end, 10);
			sum += c;
			p = end;
		}
		rc = counts_push(ic, (int)irq, sum);
		if (rc < 0)
			goto out;
	}
out:
	free(line);
	fclose(f);
	return rc;
}

uint64_t stats_irq_count(const struct irq_counts *ic, int irq)
{
	size_t i;

	for (i = 0; i < ic->n; i++)
		if (ic->irq[i] == irq)
			return ic->count[i];
	return 0;
}

void stats_irq_counts_free(struct irq_counts *ic)
{
	free(ic->irq);
	free(ic->count);
	memset(ic, 0, sizeof(*ic));
}
