/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * array.h - growable arrays: one growth rule for every list irqresd keeps.
 *
 * An array is a pointer, a count and a capacity held by the caller. array_reserve() makes
 * room for need elements, doubling the capacity (at least ARRAY_MIN_CAP) so that n pushes
 * cost O(n) copies; on failure the array and its capacity are as they were.
 */
#ifndef IRQRES_ARRAY_H
#define IRQRES_ARRAY_H

#include <stddef.h>

#define ARRAY_MIN_CAP 16

/* arr points to the array's pointer (any element type), cap to its capacity in
 * elements. Returns 0 or -ENOMEM. */
int array_reserve(void *arr, size_t *cap, size_t need, size_t elem);

/* Room for need elements of array a (an lvalue) with capacity cap. */
#define ARRAY_RESERVE(a, cap, need) array_reserve(&(a), &(cap), (need), sizeof(*(a)))

/* Appends a printf-formatted string to a string array (*v, *n, *cap). 0 or -ENOMEM. */
int array_printf(char ***v, size_t *n, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Frees every string of a string array and the array; *v NULL, *n and *cap 0. */
void array_free_strings(char ***v, size_t *n, size_t *cap);

#endif /* IRQRES_ARRAY_H */
