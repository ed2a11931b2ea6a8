/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_state.c - libFuzzer harness: any bytes as the state file left by a crash.
 *
 * The loader keeps the good records, counts and names the bad lines, and never crashes:
 * this file decides which threads get back their original scheduling after a crash.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

static char path[64];

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/dev/shm/fuzz_state.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state st;
	char err[512];
	FILE *f = fopen(path, "w");
	int bad;
	size_t i;

	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	state_init(&st);
	err[0] = '\0';
	bad = state_load(&st, path, err, sizeof(err));
	if (bad < 0 || (bad > 0 && strncmp(err, "state file ", 11) != 0))
		abort();
	for (i = 0; i < st.n_threads; i++)
		if (st.threads[i].pid <= 0)
			abort();
	state_free(&st);
	return 0;
}
