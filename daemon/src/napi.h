/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * napi.h - an interface's NAPI instances and the kthreads that poll them (threaded NAPI).
 *
 * Where the kernel has it, the netdev generic netlink family's napi-get dump lists each
 * NAPI instance of an interface: ifindex, NAPI id, IRQ and, for a threaded instance, the
 * pid of its kthread (Documentation/netlink/specs/netdev.yaml: napi-get since 6.8, the
 * family since 6.3).  Older kernels (6.1) have no such family: there the threaded NAPI
 * kthreads are found by name, "napi/<ifname>-<napi id>", among kthreadd's children, and
 * their IRQ is unknown.  /sys/class/net/IF/threaded says whether the interface polls in
 * kthreads at all.  Every path is under irqres_paths, so tests run on fixture trees.
 */
#ifndef IRQRES_NAPI_H
#define IRQRES_NAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Attribute and command numbers of the netdev family (include/uapi/linux/netdev.h). */
enum {
	NAPI_NETDEV_A_NAPI_IFINDEX = 1,
	NAPI_NETDEV_A_NAPI_ID = 2,
	NAPI_NETDEV_A_NAPI_IRQ = 3,
	NAPI_NETDEV_A_NAPI_PID = 4,
	NAPI_NETDEV_CMD_NAPI_GET = 11,
};

struct napi_info {
	int ifindex;		/* 0 when unknown (the thread fallback) */
	unsigned int id;	/* NAPI id */
	int irq;		/* -1 when unknown */
	pid_t pid;		/* the polling kthread, 0 when the instance is not threaded */
};

struct napi_list {
	struct napi_info *v;
	size_t n, cap;
};

enum napi_source { NAPI_FROM_NETLINK, NAPI_FROM_THREADS };

/*
 * Parses one buffer of a CTRL_CMD_GETFAMILY reply: the family id into *@family.
 * Returns 0, -ENOENT when the kernel has no such family (NLMSG_ERROR), -EBADMSG for a
 * malformed message, or the -errno an NLMSG_ERROR carried.
 */
int napi_parse_family(const void *buf, size_t len, uint16_t *family);

/*
 * Parses one buffer of a napi-get dump, appending the NAPI instances of @ifindex (all
 * when @ifindex is 0) to @list.  Returns 1 once NLMSG_DONE was seen, 0 when more
 * buffers follow, -EBADMSG for a malformed message, -ENOMEM, or the -errno of an
 * NLMSG_ERROR (-EOPNOTSUPP: a netdev family without napi-get).
 */
int napi_parse_dump(const void *buf, size_t len, int ifindex, struct napi_list *list);

/* The napi-get dump of @ifindex through a netlink socket.  0 or -errno (see above). */
int napi_query_netlink(int ifindex, struct napi_list *list);

/*
 * Appends the threaded NAPI kthreads of @ifname found by name (napi/<ifname>-<id>,
 * comm cut at 15 characters: an id cut off is left out and counted in *@cut when @cut
 * is not NULL).  Returns 0 or -errno (the proc root unreadable, -ENOMEM).
 */
int napi_scan_threads(const char *ifname, struct napi_list *list, int *cut);

/* /sys/class/net/@ifname/threaded: 1, 0, or -errno (-ENOENT: no such interface or a
 * kernel without threaded NAPI). */
int napi_threaded(const char *ifname);

/*
 * The NAPI instances of @ifname into @list (emptied first): from netlink when the
 * kernel answers napi-get and reports kthread pids, else from the kthreads' names.
 * *@source says which.  Returns 0, -ENODEV when there is no such interface, or -errno.
 */
int napi_find(const char *ifname, struct napi_list *list, enum napi_source *source);

/* Frees the list's storage and leaves it empty. */
void napi_list_free(struct napi_list *list);

#endif
