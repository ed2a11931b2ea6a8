/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pidset.h - a set of process or thread ids: pushed in any order, then sorted once and
 * looked up by bisection. Functions return 0 or -ENOMEM.
 */
#ifndef IRQRES_PIDSET_H
#define IRQRES_PIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pidset {
	pid_t *v;
	size_t n, cap;
};

int pidset_add(struct pidset *s, pid_t pid);

/* Ascending, each id once (pidset_has needs it). */
void pidset_sort(struct pidset *s);

/* Whether @pid is among the ascending @v[0..n) (@v may be NULL when @n is 0). */
bool pidset_has(const pid_t *v, size_t n, pid_t pid);

void pidset_free(struct pidset *s);

#endif /* IRQRES_PIDSET_H */
