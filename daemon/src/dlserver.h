/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dlserver.h - the kernel's own deadline servers: the bandwidth they hold per CPU.
 *
 * Linux 6.12 added one deadline server per CPU for fair tasks, 7.0 a second one for
 * sched_ext tasks; each holds bandwidth in its CPU's root domain that no /proc scan
 * shows. debugfs lists them as <sys>/kernel/debug/sched/<name>_server/cpuN/{runtime,
 * period} (ns): fair_server (6.12+), ext_server (7.0+). Every such directory is read,
 * whatever its name, so that a server a later kernel adds is counted too.
 *
 * A server holds bandwidth only while the kernel has it reserved, which debugfs does not
 * always show: a runtime or period of 0 is none (the kernel's dl_server_remove_params());
 * sched_ext's ext_server holds bandwidth from boot on 7.0 and 7.1, and from 7.2 only
 * while a BPF scheduler is loaded (<sys>/kernel/sched_ext/state), though its debugfs
 * files keep showing 50 ms / 1 s. Where that cannot be read, a server counts: the plan
 * then errs towards a refusal the kernel would not give, never towards an acceptance it
 * would refuse. Reading changes nothing.
 */
#ifndef IRQRES_DLSERVER_H
#define IRQRES_DLSERVER_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#define DLSERVER_MAX 8
#define DLSERVER_NAME_MAX 64

/* The servers found: their names ("fair_server") and how many online CPUs each holds
 * bandwidth on (0: present but holding none, e.g. ext_server with no BPF scheduler). */
struct dlserver_set {
	size_t n;
	char name[DLSERVER_MAX][DLSERVER_NAME_MAX];
	int reserved_cpus[DLSERVER_MAX];
};

/*
 * Add the bandwidth every deadline server holds on each CPU of online to bw[cpu]
 * (to_ratio units, the kernel's: 1 CPU = 2^20) and list the servers in set (may be NULL),
 * from under irqres_paths (irqres.h). No debugfs, or no server directory, is no server:
 * 0 with nothing added. Returns 0 or -errno for a directory that exists but cannot be
 * listed.
 */
int dlserver_read(const cpu_set_t *online, uint64_t *bw, struct dlserver_set *set);

/* "fair_server, ext_server (no bandwidth)" into buf: for people (plan reports). */
void dlserver_set_str(const struct dlserver_set *set, char *buf, size_t len);

#endif
