/* SPDX-License-Identifier: GPL-2.0-only */
/* array.c - growable arrays; see array.h. */
#include "array.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int array_reserve(void *arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : ARRAY_MIN_CAP;
	void *v, *nv;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&v, arr, sizeof(v));
	nv = realloc(v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	memcpy(arr, &nv, sizeof(nv));
	*cap = ncap;
	return 0;
}

int array_printf(char ***v, size_t *n, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int rc = array_reserve(v, cap, *n + 1, sizeof(**v));

	if (rc)
		return rc;
	va_start(ap, fmt);
	rc = vasprintf(&(*v)[*n], fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

void array_free_strings(char ***v, size_t *n, size_t *cap)
{
	for (size_t i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
	*cap = 0;
}
