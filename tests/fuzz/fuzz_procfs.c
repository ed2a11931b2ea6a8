/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_procfs.c - libFuzzer harness: the daemon's readers of /proc and /sys on any bytes.
 *
 * A fixture tree in a temporary directory holds one IRQ thread (pid 100, irq/11-eth0)
 * and the files the daemon reads about it and about the machine. The first input byte
 * picks one file, the rest of the input is its content; every reader then runs on the
 * tree: discovery (stat, status, cgroup, the IRQ's actions and affinity), the statistics
 * (schedstat, status, /proc/interrupts) and the environment of the plan (online CPUs, RT
 * throttling). Kernel files can change shape between versions; a reader must refuse what
 * it does not understand, never crash or read out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "discover.h"
#include "irqres.h"
#include "plan.h"
#include "stats.h"

static const struct { const char *path, *text; } files[] = {
	{ "proc/100/stat", "100 (irq/11-eth0) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 -51 0 1 0 "
	  "170 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 50 1 0 0 0 0 0 0 0 0 0 0 0\n" },
	{ "proc/100/status", "Name:\tirq/11-eth0\nUmask:\t0000\nState:\tS (sleeping)\n"
	  "Tgid:\t100\nPid:\t100\nPPid:\t2\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n"
	  "voluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t2\n" },
	{ "proc/100/cgroup", "0::/\n" },
	{ "proc/100/schedstat", "123456 7890 42\n" },
	{ "proc/interrupts", "           CPU0       CPU1       \n"
	  "  0:         45          0   IO-APIC   2-edge      timer\n"
	  " 11:     123456     654321   IO-APIC  11-fasteoi   eth0\n"
	  "NMI:          0          0   Non-maskable interrupts\n" },
	{ "sys/kernel/irq/11/actions", "eth0,uhci_hcd:usb3\n" },
	{ "sys/devices/system/cpu/online", "0-1\n" },
	{ "proc/sys/kernel/sched_rt_runtime_us", "950000\n" },
	{ "proc/irq/11/effective_affinity_list", "0\n" },
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

static char root[64];
static int last = -1;

static void put(size_t i, const uint8_t *data, size_t size)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, files[i].path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);	/* same inode */
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) < 0)
		abort();
}

static void mkdirs(const char *rel)
{
	char path[256], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			abort();
		*p = '/';
	}
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "/dev/shm/fuzz_procfs.XXXXXX");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	for (i = 0; i < N_FILES; i++) {
		mkdirs(files[i].path);
		put(i, (const uint8_t *)files[i].text, strlen(files[i].text));
	}
	{
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/proc/sys/kernel/sched_rt_period_us", root);
		f = fopen(path, "w");
		if (!f || fputs("1000000\n", f) < 0 || fclose(f))
			abort();
	}
	mkdirs("cgroup/x");
	snprintf(irqres_paths.proc, sizeof(irqres_paths.proc), "%s/proc", root);
	snprintf(irqres_paths.sys, sizeof(irqres_paths.sys), "%s/sys", root);
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "%s/cgroup", root);
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run", root);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct thread_info ti;
	struct thread_stats ts;
	struct irq_counts ic = { 0 };
	struct plan_env env;
	cpu_set_t cpus;
	char actions[ACTIONS_MAX];
	size_t i;

	if (size < 1)
		return -1;
	i = data[0] % N_FILES;
	if (last >= 0 && (size_t)last != i)	/* the previous input's file back to normal */
		put((size_t)last, (const uint8_t *)files[last].text, strlen(files[last].text));
	put(i, data + 1, size - 1);
	last = (int)i;

	if (discover_read(100, &ti) == 0) {
		if (memchr(ti.comm, '\0', sizeof(ti.comm)) == NULL ||
		    memchr(ti.actions, '\0', sizeof(ti.actions)) == NULL ||
		    memchr(ti.cgroup, '\0', sizeof(ti.cgroup)) == NULL)
			abort();
		if (ti.is_irq && ti.irq < 0)
			abort();
		discover_still_same(&ti);
	}
	discover_irq_actions(11, actions, sizeof(actions));
	if (memchr(actions, '\0', sizeof(actions)) == NULL)
		abort();
	discover_irq_cpus(11, &cpus);
	stats_thread_read(100, &ts);
	if (stats_irq_counts_read(&ic) == 0)
		(void)stats_irq_count(&ic, 11);
	stats_irq_counts_free(&ic);
	if (plan_env_read(&env, false) == 0)
		plan_env_free(&env);
	return 0;
}
