/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * interrupts.h - the lines of /proc/interrupts, the one place they are parsed in C.
 *
 * A header of CPU columns (online CPUs only: "CPU0 CPU2" once CPU1 is hot-removed), then
 * one line per interrupt:
 *   " 11:      1234       567   IO-APIC  11-fasteoi   eth0"
 *   " 11:        10        20     GICv3  27 Level     arch_timer"
 * Only a line whose label is a number (ASCII digits up to INT32_MAX) is an IRQ; NMI:,
 * LOC:, ERR:, IPI0: ... are not.  An IRQ line has up to one count per CPU column, each
 * ASCII digits; the chip, hardware IRQ, trigger and action names follow.  The cases in
 * tests/data/rules/proc-interrupts/ pin it to irqres.procfs (Python).
 */
#ifndef IRQRES_INTERRUPTS_H
#define IRQRES_INTERRUPTS_H

#include <stdint.h>

struct interrupts_row {
	int irq;
	uint64_t sum;		/* the counts of all CPU columns */
	const char *rest;	/* in the line: what follows the counts (chip ... actions) */
};

/* The number of CPU columns of the header line @line; -EINVAL when it has none. */
int interrupts_ncpu(const char *line);

/*
 * Parses @line (one line, its '\n' optional) of a file with @ncpu CPU columns.  Returns 1
 * and fills @row for an IRQ line, 0 for any other line, -EINVAL for an IRQ line whose
 * counts are not numbers.
 */
int interrupts_line(const char *line, int ncpu, struct interrupts_row *row);

#endif
