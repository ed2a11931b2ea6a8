/* SPDX-License-Identifier: GPL-2.0-only */
/* test_serves.c - whom a target's threads serve (task selectors, sockets bound to a
 * port, on a fixture /proc) and the priority rule that couples a thread to them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixtree.h"
#include "serves.h"

/* UDP 0.0.0.0:5000 (inode 1111), UDP 127.0.0.1:5001 (2222), a TCP listener on
 * [::]:8080 (3333), a connection from local port 40000 to 5000 elsewhere (4444) and a
 * TCP connection accepted on local port 8081 (5555). */
static const char udp[] =
	"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	"timeout inode ref pointer drops\n"
	"  123: 00000000:1388 00000000:0000 07 00000000:00000000 00:00000000 00000000     0"
	"        0 1111 2 0000000000000000 0\n"
	"  124: 0100007F:1389 00000000:0000 07 00000000:00000000 00:00000000 00000000     0"
	"        0 2222 2 0000000000000000 0\n";
static const char tcp6[] =
	"  sl  local_address                         remote_address                        st "
	"tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A "
	"00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 "
	"10 0\n"
	"   1: 0000000000000000FFFF00000100007F:1F91 0000000000000000FFFF00000100007F:A000 01 "
	"00000000:00000000 00:00000000 00000000     0        0 5555 1 0000000000000000 20 4 30 "
	"10 -1\n";
static const char tcp[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	"timeout inode\n"
	"   0: 0100007F:9C40 0100007F:1388 01 00000000:00000000 00:00000000 00000000     0"
	"        0 4444 1 0000000000000000 20 4 30 10 -1\n";

static void fd_link(int pid, int fd, const char *target)
{
	char rel[64], path[1024];

	snprintf(rel, sizeof(rel), "proc/%d/fd/.keep", pid);
	fixtree_file(rel, "");
	snprintf(path, sizeof(path), "%s/proc/%d/fd/%d", fixtree_root, pid, fd);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	if (fixtree_setup_roots(state))
		return -1;
	fixtree_file("proc/net/udp", udp);
	fixtree_file("proc/net/tcp", tcp);
	fixtree_file("proc/net/tcp6", tcp6);	/* no udp6: a kernel without IPv6 */
	fd_link(100, 3, "socket:[1111]");	/* the UDP receiver on 5000 */
	fd_link(100, 0, "/dev/null");
	fd_link(200, 7, "socket:[3333]");	/* the TCP server on 8080 */
	fd_link(300, 1, "pipe:[1111]");		/* the same number, not a socket */
	fd_link(400, 5, "socket:[4444]");	/* a client whose peer port is 5000 */
	fd_link(600, 4, "socket:[5555]");	/* a connection accepted on 8081 */
	fixtree_file("proc/500/fd/.keep", "");	/* nothing open */
	return 0;
}

static int teardown(void **state)
{
	fixtree_teardown(state);
	irqres_paths_default();
	return 0;
}

/* A first look (a fresh cache): every process's files read. */
static struct serves_cache first_look(const int *ports, size_t n)
{
	struct serves_cache c = { 0 };

	assert_int_equal(serves_port_holders(ports, n, &c), 0);
	return c;
}

static void test_port_pids(void **state)
{
	struct serves_cache c = first_look((int[]){ 5000 }, 1);

	assert_int_equal(c.n_holders, 1);	/* not 300 (a pipe), not 400 (peer port) */
	assert_int_equal(c.holders[0], 100);
	serves_cache_free(&c);
	c = first_look((int[]){ 8080, 5000 }, 2);
	assert_int_equal(c.n_holders, 2);
	assert_int_equal(c.holders[0], 100);
	assert_int_equal(c.holders[1], 200);
	serves_cache_free(&c);
	/* a connection whose local port it is (inetd's or systemd's Accept=yes service) */
	c = first_look((int[]){ 8081 }, 1);
	assert_int_equal(c.n_holders, 1);
	assert_int_equal(c.holders[0], 600);
	serves_cache_free(&c);
	/* bound, yet nobody holds it (2222: a socket of a process gone), and nothing bound */
	c = first_look((int[]){ 5001, 9 }, 2);
	assert_int_equal(c.n_holders, 0);
	assert_null(c.holders);
	serves_cache_free(&c);
}

/* /proc/net/udp with a second socket on 5000 (inode 6666), and with none */
static const char udp6666[] =
	"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	"timeout inode ref pointer drops\n"
	"  123: 00000000:1388 00000000:0000 07 00000000:00000000 00:00000000 00000000     0"
	"        0 1111 2 0000000000000000 0\n"
	"  125: 0100007F:1388 00000000:0000 07 00000000:00000000 00:00000000 00000000     0"
	"        0 6666 2 0000000000000000 0\n";
static const char udp_none[] =
	"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	"timeout inode ref pointer drops\n";

static void assert_holders(const struct serves_cache *c, const pid_t *want, size_t n)
{
	assert_int_equal(c->n_holders, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c->holders[i], want[i]);
}

/* Between full looks only the last holders and new processes have their files read. */
static void test_port_holders_cache(void **state)
{
	static const int ports[] = { 5000, 8080 };
	struct serves_cache c = { 0 };
	char path[1024];
	int i;

	assert_int_equal(serves_port_holders(ports, 2, &c), 0);	/* the first: full */
	assert_holders(&c, (pid_t[]){ 100, 200 }, 2);
	assert_int_equal(c.since_full, 0);
	fd_link(500, 9, "socket:[1111]");	/* passed to a running process */
	fd_link(700, 3, "socket:[1111]");	/* a child of the receiver, new */
	snprintf(path, sizeof(path), "%s/proc/200/fd/7", fixtree_root);
	assert_int_equal(unlink(path), 0);	/* the server closed it */
	assert_int_equal(serves_port_holders(ports, 2, &c), 0);
	assert_holders(&c, (pid_t[]){ 100, 700 }, 2);	/* 500 was read before: not now */
	assert_int_equal(c.since_full, 1);
	for (i = 2; i < SERVES_FULL_EVERY; i++)
		assert_int_equal(serves_port_holders(ports, 2, &c), 0);
	assert_int_equal(c.since_full, SERVES_FULL_EVERY - 1);
	assert_holders(&c, (pid_t[]){ 100, 700 }, 2);
	assert_int_equal(serves_port_holders(ports, 2, &c), 0);	/* the 10th: full */
	assert_holders(&c, (pid_t[]){ 100, 500, 700 }, 3);
	assert_int_equal(c.since_full, 0);
	/* a new socket on a port (a running process binds it): a full look at once */
	fixtree_file("proc/net/udp", udp6666);
	fd_link(300, 2, "socket:[6666]");
	assert_int_equal(serves_port_holders(ports, 2, &c), 0);
	assert_holders(&c, (pid_t[]){ 100, 300, 500, 700 }, 4);
	assert_int_equal(c.since_full, 0);
	fixtree_file("proc/net/udp", udp_none);	/* 1111 and 6666 unbound */
	assert_int_equal(serves_port_holders(ports, 2, &c), 0);
	assert_int_equal(c.since_full, 0);
	assert_int_equal(c.n_holders, 0);
	serves_cache_free(&c);
	assert_null(c.holders);
}

static struct thread_info task(pid_t pid, pid_t tgid, const char *comm, int policy, int prio)
{
	struct thread_info ti = { .pid = pid, .tgid = tgid, .policy = policy,
				  .priority = prio, .irq = -1 };

	snprintf(ti.comm, sizeof(ti.comm), "%s", comm);
	snprintf(ti.cgroup, sizeof(ti.cgroup), "/app.slice/%s", comm);
	return ti;
}

static void test_find(void **state)
{
	struct thread_info v[] = {
		task(100, 100, "rx-main", SCHED_OTHER, 0),
		task(101, 100, "rx-worker", SCHED_FIFO, 30),	/* a thread of the receiver */
		task(200, 200, "httpd", SCHED_RR, 10),
		task(300, 300, "rx-pipe", SCHED_FIFO, 80),
	};
	struct thread_list tasks = { v, 4, 4 };
	struct served_list out = { 0 };
	struct serves_sel by_port = { .given = true, .ports = (int[]){ 5000 }, .n_ports = 1 };
	struct serves_sel port_and_comm = { .given = true, .comm = { (char *[]){ "rx-w*" }, 1 },
					    .ports = (int[]){ 5000 }, .n_ports = 1 };
	struct serves_sel by_comm = { .given = true, .comm = { (char *[]){ "rx-*" }, 1 } };
	struct serves_sel nobody = { .given = true, .pids = (pid_t[]){ 999 }, .n_pids = 1 };
	struct serves_cache c = first_look(by_port.ports, 1);

	assert_int_equal(serves_find(&by_port, &tasks, c.holders, c.n_holders, &out), 0);
	assert_int_equal(out.n, 2);		/* every thread of the socket's process */
	assert_int_equal(out.v[0].pid, 100);
	assert_int_equal(out.v[1].pid, 101);
	assert_string_equal(out.v[1].comm, "rx-worker");
	assert_int_equal(serves_fifo_priority(&out), 30);
	serves_list_free(&out);
	assert_int_equal(serves_find(&port_and_comm, &tasks, c.holders, c.n_holders, &out),
			 0);	/* AND */
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].pid, 101);
	serves_list_free(&out);
	serves_cache_free(&c);
	assert_int_equal(serves_find(&by_comm, &tasks, NULL, 0, &out), 0);
	assert_int_equal(out.n, 3);
	assert_int_equal(serves_fifo_priority(&out), 80);
	serves_list_free(&out);
	/* a selector that matches nothing serves nobody: no error */
	assert_int_equal(serves_find(&nobody, &tasks, NULL, 0, &out), 0);
	assert_int_equal(out.n, 0);
	assert_int_equal(serves_fifo_priority(&out), 0);
}

static void test_fifo_priority_rule(void **state)
{
	struct served v[] = {
		{ .pid = 1, .policy = SCHED_OTHER },
		{ .pid = 2, .policy = SCHED_DEADLINE },
		{ .pid = 3, .policy = SCHED_RR, .priority = 12 },
		{ .pid = 4, .policy = SCHED_FIFO, .priority = 7 },
	};
	struct served_list l = { v, 0, 4 };

	assert_int_equal(serves_fifo_priority(&l), 0);		/* nobody: its own back */
	l.n = 1;
	assert_int_equal(serves_fifo_priority(&l), SERVES_FIFO_FLOOR);	/* SCHED_OTHER */
	l.n = 2;
	assert_int_equal(serves_fifo_priority(&l), SERVES_FIFO_FLOOR);	/* DL: no FIFO 99 */
	l.n = 4;
	assert_int_equal(serves_fifo_priority(&l), 12);		/* the highest, RR too */
	v[3].priority = 99;
	assert_int_equal(serves_fifo_priority(&l), 99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_port_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_holders_cache, setup, teardown),
		cmocka_unit_test(test_fifo_priority_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
