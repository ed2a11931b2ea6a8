// SPDX-License-Identifier: GPL-2.0-only
/* dlserver.c - the kernel's deadline servers from debugfs (see dlserver.h). */
#include "dlserver.h"

#include "dl.h"
#include "fileio.h"
#include "irqres.h"

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

/*
 * Whether sched_ext's server holds bandwidth: from boot on 7.0 and 7.1; from 7.2 only
 * while a BPF scheduler is loaded, which <sys>/kernel/sched_ext/state says ("enabled").
 * Its debugfs runtime and period do not tell: on Debian's 7.3.4 ext_server/cpuN showed
 * 50 ms / 1 s while dl_bw->total_bw held the fair servers alone. When the release or the
 * state cannot be read, the server counts (a refusal the kernel would not give, never
 * an acceptance it would refuse).
 */
static bool ext_server_holds(void)
{
	char path[PATH_MAX], buf[64];
	int major, minor;

	if (irqres_kernel_release(&major, &minor))
		return true;
	if (major < 7 || (major == 7 && minor < 2))
		return true;
	snprintf(path, sizeof(path), "%s/kernel/sched_ext/state", irqres_paths.sys);
	if (fileio_read_value(path, buf, sizeof(buf)) < 0)
		return true;
	return strcmp(buf, "disabled") != 0;
}

/* The bandwidth server dir holds on cpu: 0 when absent, unreadable or off. */
static uint64_t server_cpu_bw(const char *dir, int cpu)
{
	char path[PATH_MAX];
	long long runtime, period;

	if (snprintf(path, sizeof(path), "%s/cpu%d/runtime", dir, cpu) >= (int)sizeof(path) ||
	    fileio_read_ll(path, &runtime))
		return 0;
	if (snprintf(path, sizeof(path), "%s/cpu%d/period", dir, cpu) >= (int)sizeof(path) ||
	    fileio_read_ll(path, &period) || runtime <= 0 || period <= 0)
		return 0;
	return dl_to_ratio((uint64_t)period, (uint64_t)runtime);
}

static void add_server(const char *dir, const char *name, const cpu_set_t *online,
		       uint64_t *bw, struct dlserver_set *set)
{
	bool holds = strcmp(name, "ext_server") != 0 || ext_server_holds();
	int reserved = 0;

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		uint64_t b;

		if (!CPU_ISSET(cpu, online))
			continue;
		b = holds ? server_cpu_bw(dir, cpu) : 0;
		bw[cpu] += b;
		reserved += b > 0;
	}
	if (set && set->n < DLSERVER_MAX) {
		snprintf(set->name[set->n], sizeof(set->name[set->n]), "%.*s",
			 DLSERVER_NAME_MAX - 1, name);
		set->reserved_cpus[set->n++] = reserved;
	}
}

int dlserver_read(const cpu_set_t *online, uint64_t *bw, struct dlserver_set *set)
{
	char base[PATH_MAX], dir[PATH_MAX];
	struct dirent **names;
	int n, err;

	if (set)
		memset(set, 0, sizeof(*set));
	snprintf(base, sizeof(base), "%s/kernel/debug/sched", irqres_paths.sys);
	/* sorted, so that the list (and the sum's order) does not depend on the directory */
	n = scandir(base, &names, NULL, alphasort);
	if (n < 0) {
		err = errno;
		return err == ENOENT || err == ENOTDIR || err == EACCES ? 0 : -err;
	}
	for (int i = 0; i < n; i++) {
		if (is_server_name(names[i]->d_name) &&
		    snprintf(dir, sizeof(dir), "%s/%s", base, names[i]->d_name) < (int)sizeof(dir))
			add_server(dir, names[i]->d_name, online, bw, set);
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
