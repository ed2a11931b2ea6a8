/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * irqname.h - the name rule of IRQ threads, the one place it is written in C.
 *
 * The kernel names the thread of an IRQ's action "irq/<N>-<action>", and with forced
 * threading a secondary thread "irq/<N>-s-<action>"; comm is cut at 15 characters, so
 * the action may be a prefix of the handler's name ("irq/128-mlx5_co").  N is ASCII
 * digits up to INT32_MAX.  The name alone does not make an IRQ thread: a user process
 * can call itself "irq/11-eth0" (discover.c also asks for a kernel thread whose parent is
 * kthreadd); a trace carries only the name.
 *
 * Also compiled into the trace reader (setup.py), so it depends on libc alone.  The
 * cases in tests/data/rules/irq-thread-*.tsv pin it to irqres.irqname (Python).
 */
#ifndef IRQRES_IRQNAME_H
#define IRQRES_IRQNAME_H

#include <stdbool.h>
#include <stddef.h>

struct irqname {
	int irq;
	bool secondary;		/* named irq/<N>-s-...: see irqname_own_actions() */
	const char *action;	/* in the comm: after "irq/<N>-", and after "s-" when secondary */
};

/* Parses @comm.  Returns 0 and fills @out, or -EINVAL when @comm is not of that form. */
int irqname_parse(const char *comm, struct irqname *out);

/*
 * The actions of @all (the IRQ's action names, comma-separated) that the thread @comm
 * serves: those the comm's action is a prefix of; all of them when it names none.  An
 * "irq/N-s-x" thread is a secondary one unless the IRQ has an action whose name starts
 * with "s-x".  Writes them comma-separated to @out (@len bytes; a subset of @all fits in
 * strlen(@all) + 1) and the verdict to @secondary.  Returns 0, -EINVAL when @comm is not
 * an IRQ thread name, -ENAMETOOLONG when @out is too short.
 */
int irqname_own_actions(const char *comm, const char *all, char *out, size_t len,
			bool *secondary);

#endif
