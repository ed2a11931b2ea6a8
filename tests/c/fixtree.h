/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fixtree.h - writable fixture trees for tests that write to the files they read
 * (cgroup interfaces, the state file): made fresh in a temp directory per test.
 */
#ifndef IRQRES_TEST_FIXTREE_H
#define IRQRES_TEST_FIXTREE_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "irqres.h"

static char fixtree_root[128];

/* Creates root/rel (and its parent directories) holding content. */
static inline void fixtree_file(const char *rel, const char *content)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fixtree_root, rel);
	for (char *p = path + strlen(fixtree_root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "fixtree: cannot create %s: %s\n", path, strerror(errno));
		abort();
	}
	fputs(content, f);
	fclose(f);
}

/* The content of root/rel ("" when missing), trailing newline kept. */
static inline const char *fixtree_read(const char *rel)
{
	static char buf[4096];
	char path[1024];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", fixtree_root, rel);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static inline const char *fixtree_path(const char *rel)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", fixtree_root, rel);
	return path;
}

static inline int fixtree_setup(void **unused)
{
	snprintf(fixtree_root, sizeof(fixtree_root), "/tmp/irqres-test-XXXXXX");
	return mkdtemp(fixtree_root) ? 0 : -1;
}

/* fixtree_setup(), with the proc, sys, cgroup and run roots of irqres_paths in the tree
 * (irqres_paths_default() puts them back). */
static inline int fixtree_setup_roots(void **unused)
{
	if (fixtree_setup(unused))
		return -1;
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", fixtree_root);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", fixtree_root);
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/cgroup", fixtree_root);
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run", fixtree_root);
	return 0;
}

static inline int fixtree_rm_one(const char *path, const struct stat *sb, int flag,
				 struct FTW *ftw)
{
	return remove(path);
}

static inline int fixtree_teardown(void **unused)
{
	if (fixtree_root[0])
		nftw(fixtree_root, fixtree_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	fixtree_root[0] = '\0';
	return 0;
}

#endif
