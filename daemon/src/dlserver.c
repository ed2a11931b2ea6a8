// SPDX-License-Identifier: GPL-2.0-only
/* dlserver.c - the kernel's deadline servers from debugfs (see dlserver.h). */
#include "dlserver.h"

#include "dl.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_server_name(const char *name)
{
	static const char suffix[] = "_server";
	size_t n = strlen(name), k = sizeof(suffix) - 1;

	return n > k && n < DLSERVER_NAME_MAX && strcmp(name + n - k, suffix) == 0;
}

/* The bandwidth server dir holds on cpu: 0 when absent, unreadable or off. */
static uint64_t server_cpu_bw(const char *dir, int cpu)
{
	char path[PATH_MAX];
	long long runtime, period;

	snprintf(path, sizeof(path), "%s/cpu%d/runtime", dir, cpu);
	if (fileio_read_ll(path, &runtime))
		return 0;
	snprintf(path, sizeof(path), "%s/cpu%d/period", dir, cpu);
	if (fileio_read_ll(path, &period) || runtime <= 0 || period <= 0)
		return 0;
	return dl_to_ratio((uint64_t)period, (uint64_t)runtime);
}

static void add_server(const char *dir, const char *name, const cpu_set_t *online,
		       uint64_t *bw, struct dlserver_set *set)
{
	int reserved = 0;

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		uint64_t b;

		if (!CPU_ISSET(cpu, online))
			continue;
		b = server_cpu_bw(dir, cpu);
		bw[cpu] += b;
		reserved += b > 0;
	}
	if (set && set->n < DLSERVER_MAX) {
		snprintf(set->name[set->n], sizeof(set->name[set->n]), "%s", name);
		set->reserved_cpus[set->n++] = reserved;
	}
}

int dlserver_read(const char *sys, const cpu_set_t *online, uint64_t *bw,
		  struct dlserver_set *set)
{
	char base[PATH_MAX], dir[PATH_MAX];
	struct dirent **names;
	int n, err;

	if (set)
		memset(set, 0, sizeof(*set));
	snprintf(base, sizeof(base), "%s/kernel/debug/sched", sys);
	/* sorted, so that the list (and the sum's order) does not depend on the directory */
	n = scandir(base, &names, NULL, alphasort);
	if (n < 0) {
		err = errno;
		return err == ENOENT || err == ENOTDIR || err == EACCES ? 0 : -err;
	}
	for (int i = 0; i < n; i++) {
		if (is_server_name(names[i]->d_name)) {
			snprintf(dir, sizeof(dir), "%s/%s", base, names[i]->d_name);
			add_server(dir, names[i]->d_name, online, bw, set);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

void dlserver_set_str(const struct dlserver_set *set, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (!set->n) {
		snprintf(buf, len, "none");
		return;
	}
	for (size_t i = 0; i < set->n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s%s", i ? ", " : "", set->name[i],
				 set->reserved_cpus[i] ? "" : " (no bandwidth)");

		if (w < 0)
			break;
		used += (size_t)w;
	}
}
