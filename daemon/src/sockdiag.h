/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sockdiag.h - the sockets bound to local ports, from the kernel's socket diagnostics
 * (NETLINK_SOCK_DIAG, inet_diag: what `ss` reads), else from /proc/net.
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
 * namespace (the sockets above), appended to *@v (realloc'd; *@len of them, *@cap
 * allocated), IPv4 and IPv6, UDP and TCP. On the live /proc from the socket
 * diagnostics; from irqres_paths.proc's net/ files when the kernel has none (no
 * inet_diag or udp_diag: said in the debug log), a dump fails or times out (1 s), or
 * the proc root is another one. 0, or -errno (-ENOMEM, or a net/ file unreadable).
 */
int sockdiag_bound_inodes(const int *ports, size_t n, unsigned long **v, size_t *len,
			  size_t *cap);

#endif /* IRQRES_SOCKDIAG_H */
