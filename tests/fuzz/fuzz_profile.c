/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_profile.c - libFuzzer harness: any bytes through the profile loader.
 *
 * A profile either loads (then at least one target, each with a name and a valid
 * reservation unless it is coupled) or is refused with "file:line:col: message" or a message naming the file; never
 * a crash, a leak or undefined behaviour (ASan, UBSan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[512];
	size_t i;
	int rc;

	err[0] = '\0';
	rc = profile_parse((const char *)data, size, "f.yaml", &p, err, sizeof(err));
	if (rc == 0) {
		if (p.n_targets == 0 || !p.targets)
			abort();
		for (i = 0; i < p.n_targets; i++) {
			const struct target *t = &p.targets[i];

			/* a coupled target (serves: without a budget) reserves nothing */
			if (!t->name[0] || (!t->coupled && (t->runtime_ns == 0 ||
							    t->runtime_ns > t->period_ns)))
				abort();
		}
		profile_free(&p);
		return 0;
	}
	if (p.targets || strncmp(err, "f.yaml", 6) != 0)
		abort();	/* a refusal frees everything and names the file */
	return 0;
}
