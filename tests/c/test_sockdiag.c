/* SPDX-License-Identifier: GPL-2.0-only */
/* test_sockdiag.c - the sockets bound to local ports, asked of this kernel's socket
 * diagnostics: sockets this test opens on loopback are found by their inodes; a TCP
 * socket once it listens (as /proc/net/tcp lists it), and a connection accepted on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sockdiag.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A socket of @type bound to an ephemeral port of 127.0.0.1 (IPv4) or ::1: its port. */
static int bound(int family, int type, int *fd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);

	*fd = socket(family, type | SOCK_CLOEXEC, 0);
	assert_true(*fd >= 0);
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	}
	assert_int_equal(bind(*fd, (struct sockaddr *)&ss, len), 0);
	len = sizeof(ss);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&ss, &len), 0);
	return ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
				       : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

static unsigned long inode_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (unsigned long)st.st_ino;
}

static bool found(const int *ports, size_t n, unsigned long inode);

/* A connection to the listener @lfd on 127.0.0.1:@port: the accepted socket has @port
 * for its local port and is found; the client's (an ephemeral local port) is not. */
static void accepted_on(int lfd, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), conn;

	assert_true(c >= 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(conn >= 0);
	assert_true(found((int[]){ port }, 1, inode_of(conn)));
	assert_false(found((int[]){ port }, 1, inode_of(c)));
	close(conn);
	close(c);
}

static bool found(const int *ports, size_t n, unsigned long inode)
{
	unsigned long *v = NULL;
	size_t len = 0, cap = 0;
	bool hit = false;

	assert_int_equal(sockdiag_bound_inodes(ports, n, &v, &len, &cap), 0);
	for (size_t i = 0; i < len; i++)
		hit = hit || v[i] == inode;
	free(v);
	return hit;
}

static void test_udp_and_tcp_listeners(void **state)
{
	int udp, tcp, fd6, p_udp = bound(AF_INET, SOCK_DGRAM, &udp);
	int p_tcp = bound(AF_INET, SOCK_STREAM, &tcp);
	unsigned long i_udp = inode_of(udp);
	int p6;

	assert_true(found((int[]){ p_udp }, 1, i_udp));
	/* bound, not listening: not a receiver of its port */
	assert_false(found((int[]){ p_tcp }, 1, inode_of(tcp)));
	assert_int_equal(listen(tcp, 4), 0);
	assert_true(found((int[]){ p_udp, p_tcp }, 2, inode_of(tcp)));
	assert_true(found((int[]){ p_udp, p_tcp }, 2, inode_of(udp)));
	accepted_on(tcp, p_tcp);
	/* another port finds neither */
	assert_false(found((int[]){ p_udp == 65535 ? 1 : p_udp + 1 }, 1, inode_of(udp)));
	fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd6 >= 0) {		/* a kernel with IPv6 */
		close(fd6);
		p6 = bound(AF_INET6, SOCK_DGRAM, &fd6);
		assert_true(found((int[]){ p6 }, 1, inode_of(fd6)));
		close(fd6);
	}
	close(udp);
	close(tcp);
	assert_false(found((int[]){ p_udp }, 1, i_udp));	/* closed: gone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_and_tcp_listeners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
