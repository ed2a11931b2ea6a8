// SPDX-License-Identifier: GPL-2.0-only
/* The threads whose rows a read keeps: see selection.h. */
#include "selection.h"
#include "irqname.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

int selection_irq_of(const char *comm)
{
	struct irqname name;

	return irqname_parse(comm, &name) ? -1 : name.irq;
}

static int all_digits(const char *s, long *out)
{
	long n = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > INT32_MAX / 10)
			return 0;
		n = n * 10 + (*s - '0');
	}
	*out = n;
	return 1;
}

int selection_matches(const struct selection *sel, int32_t pid, const char *comm, int irq)
{
	long n;

	if (pid <= 0)
		return 0;
	if (sel->irq_threads && irq >= 0) {
		if (!sel->thread_pat)
			return 1;
		if (all_digits(sel->thread_pat, &n) ? n == irq :
		    !fnmatch(sel->thread_pat, comm, FNM_NOESCAPE) ||
		    !fnmatch(sel->thread_star, comm, FNM_NOESCAPE))
			return 1;
	}
	for (int i = 0; i < sel->ntasks; i++) {
		const char *t = sel->tasks[i];

		if (all_digits(t, &n) ? n == pid :
		    !fnmatch(t, comm, FNM_NOESCAPE) || strstr(comm, t) != NULL)
			return 1;
	}
	return 0;
}

void selection_free(struct selection *sel)
{
	free(sel->thread_pat);
	free(sel->thread_star);
	for (int i = 0; i < sel->ntasks; i++)
		free(sel->tasks[i]);
	free(sel->tasks);
	memset(sel, 0, sizeof(*sel));
}
