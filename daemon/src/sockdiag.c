/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sockdiag.c - the sockets bound to local ports, from NETLINK_SOCK_DIAG, else from
 * /proc/net (sockdiag.h).
 */
#include "sockdiag.h"
#include "array.h"
#include "irqres.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define ALL_STATES 0xffffffffu
/* TCP_BOUND_INACTIVE (Linux 6.8): with its bit a TCP dump adds the sockets bound and
 * not yet listening, which /proc/net/tcp does not list */
#define TCP_STATE_BOUND_INACTIVE 13
#define TCP_STATES (ALL_STATES & ~(1u << TCP_STATE_BOUND_INACTIVE))

struct bound {
	const int *ports;
	size_t n;
	unsigned long **v;
	size_t *len, *cap;
};

/* The socket's inode into the set when its local port is one of the ports: 0 or -ENOMEM. */
static int bound_add(struct bound *b, unsigned int port, unsigned long inode)
{
	size_t i;

	for (i = 0; i < b->n && (unsigned int)b->ports[i] != port; i++)
		;
	if (i == b->n || !inode)
		return 0;
	if (ARRAY_RESERVE(*b->v, *b->cap, *b->len + 1))
		return -ENOMEM;
	(*b->v)[(*b->len)++] = inode;
	return 0;
}

static int dump_request(int fd, int family, int protocol, uint32_t states, uint32_t seq)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = seq;
	req.r.sdiag_family = (uint8_t)family;
	req.r.sdiag_protocol = (uint8_t)protocol;
	req.r.idiag_states = states;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

/* One message of the dump: 1 at its end, 0 to read on, -errno. */
static int one_message(const struct nlmsghdr *nh, uint32_t seq, struct bound *b)
{
	const struct inet_diag_msg *m;

	if (nh->nlmsg_seq != seq)
		return 0;		/* not ours */
	if (nh->nlmsg_type == NLMSG_DONE)
		return 1;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);

		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EPROTO;
		return e->error ? e->error : 1;
	}
	if (nh->nlmsg_type != SOCK_DIAG_BY_FAMILY || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return 0;
	m = NLMSG_DATA(nh);
	return bound_add(b, ntohs(m->id.idiag_sport), m->idiag_inode);
}

/* The replies to one dump request, to its NLMSG_DONE. 0 or -errno. */
static int read_dump(int fd, uint32_t seq, struct bound *b)
{
	char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (len == 0)
			return -EPROTO;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)len);
		     nh = NLMSG_NEXT(nh, len)) {
			int rc = one_message(nh, seq, b);

			if (rc)
				return rc < 0 ? rc : 0;
		}
	}
}

/* The four dumps (UDP and TCP, IPv4 and IPv6), each to its end: 0 or -errno. */
static int diag_inodes(struct bound *b)
{
	static const struct { int family, protocol; uint32_t states; } dumps[] = {
		{ AF_INET, IPPROTO_UDP, ALL_STATES },
		{ AF_INET6, IPPROTO_UDP, ALL_STATES },
		{ AF_INET, IPPROTO_TCP, TCP_STATES },	/* listeners and connections */
		{ AF_INET6, IPPROTO_TCP, TCP_STATES },
	};
	struct timeval timeout = { .tv_sec = 1 };
	int fd, rc = 0;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	/* a dump that never ends must not hold the main loop: EAGAIN, and /proc/net instead */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	for (size_t i = 0; !rc && i < sizeof(dumps) / sizeof(dumps[0]); i++) {
		uint32_t seq = (uint32_t)i + 1;

		rc = dump_request(fd, dumps[i].family, dumps[i].protocol, dumps[i].states, seq);
		if (!rc)
			rc = read_dump(fd, seq, b);
		/* the same protocol's IPv4 dump worked: a kernel without IPv6 */
		if (dumps[i].family == AF_INET6 && (rc == -ENOENT || rc == -EAFNOSUPPORT))
			rc = 0;
	}
	close(fd);
	return rc;
}

/* One line of /proc/net/{udp,tcp}[6]: "sl: LOCAL_ADDR:PORT REM ST TX:RX TR:WHEN RETR UID
 * TIMEOUT INODE ..." (hex port); the header line is no socket. */
static int net_line(const char *line, struct bound *b)
{
	char local[64];
	unsigned long inode;
	unsigned int port;
	const char *colon;

	if (sscanf(line, " %*s %63s %*s %*s %*s %*s %*s %*s %*s %lu", local, &inode) != 2)
		return 0;
	colon = strrchr(local, ':');
	if (!colon || sscanf(colon + 1, "%x", &port) != 1)
		return 0;
	return bound_add(b, port, inode);
}

/* One /proc/net file (a missing one, udp6 on a kernel without IPv6, lists nothing). */
static int net_file_inodes(const char *name, struct bound *b)
{
	char path[PATH_MAX], line[512];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/net/%s", irqres_paths.proc, name);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && fgets(line, sizeof(line), f))
		rc = net_line(line, b);
	fclose(f);
	return rc;
}

int sockdiag_bound_inodes(const int *ports, size_t n, unsigned long **v, size_t *len,
			  size_t *cap)
{
	static const char *const files[] = { "udp", "udp6", "tcp", "tcp6" };
	struct bound b = { ports, n, v, len, cap };
	size_t start = *len;
	int rc = 0;

	if (irqres_paths_real_proc()) {
		rc = diag_inodes(&b);
		if (!rc || rc == -ENOMEM)
			return rc;
		pr_debug("sockets on the serves: ports: no socket diagnostics (%s), reading "
			 "%s/net", strerror(-rc), irqres_paths.proc);
		*len = start;
		rc = 0;
	}
	for (size_t i = 0; !rc && i < sizeof(files) / sizeof(files[0]); i++)
		rc = net_file_inodes(files[i], &b);
	return rc;
}
