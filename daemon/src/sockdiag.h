/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sockdiag.h - the sockets bound to local ports, from the kernel's socket diagnostics
 * (NETLINK_SOCK_DIAG, inet_diag: what `ss` reads).
 *
 * Why not /proc/net/{tcp,tcp6}: reading either walks every bucket of the TCP established
 * hash table, empty or not, and starts over at each read(2) of the seq_file, so a short
 * file costs two or three walks (262,144 buckets on a 24 GB machine: about 4 ms of
 * kernel time per file per look). A dump walks each table once. The sockets are those
 * /proc/net/{udp,udp6,tcp,tcp6} list: every UDP socket, and every TCP socket that
 * listens or is connected; a TCP socket bound but not yet listening is in neither. A
 * socket counts when its local port is one of the ports.
 */
#ifndef IRQRES_SOCKDIAG_H
#define IRQRES_SOCKDIAG_H

#include <stddef.h>

/*
 * The inodes of the sockets whose local port is one of @ports[0..@n) in this network
 * namespace (the sockets above), appended to *@v (realloc'd; *@len of them, *@cap allocated), IPv4
 * and IPv6, UDP and TCP. 0, or -errno: -EPROTONOSUPPORT/-ENOENT when the kernel has no
 * socket diagnostics for one of them (no inet_diag or udp_diag; the caller reads
 * /proc/net instead), -ENOMEM, or the netlink socket's error.
 */
int sockdiag_bound_inodes(const int *ports, size_t n, unsigned long **v, size_t *len,
			  size_t *cap);

#endif /* IRQRES_SOCKDIAG_H */
