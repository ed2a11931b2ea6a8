/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * salvage.h - restoring from a damaged state file: what its lost records would have said.
 *
 * A damaged file (state.h: a bad record, a torn or cut write, no record at all) is kept as
 * it is and its good records are restored. Two things a lost record may have held are
 * still found in the kernel, so that restoring the good records changes nothing else:
 *  - a partition irqres owns (cpuset.h: every top-level "irqres.cpu*" group) that no good
 *    record names is removed like a recorded one when it holds no task; a thread whose
 *    record is lost still holds its partition (the removal fails with EBUSY), and the
 *    CPUs it takes from the others stay taken until that thread is restored;
 *  - an IRQ thread whose owed record is lost (affinity.h: the CPUs a partition took from
 *    it) gets, when a partition removal rewrites its CPU affinity, the CPUs its IRQ is
 *    handled on (/proc/irq/N/effective_affinity_list), which is what the kernel itself
 *    gives an IRQ thread (at its start, and again after each change of its IRQ's
 *    affinity). An IRQ thread someone else gave other CPUs since loses them here: with
 *    its record lost, nothing tells them apart from what the partition took.
 * The file itself is never rewritten: a copy of the intact file put back later restores
 * the rest (its owed records then find their CPUs already given back).
 * Functions return 0 or -errno.
 */
#ifndef IRQRES_SALVAGE_H
#define IRQRES_SALVAGE_H

#include "state.h"

/* Adds to st (in memory: a damaged file is frozen) every partition irqres owns that st
 * does not name, and turns the IRQ threads' CPUs re-derivation on for the restore. */
int salvage_begin(struct state *st);
/* Turns the re-derivation off again. */
void salvage_end(void);

#endif /* IRQRES_SALVAGE_H */
