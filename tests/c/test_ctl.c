/* SPDX-License-Identifier: GPL-2.0-only */
/* test_ctl.c - the control protocol: request parser, reply framing, the socket server. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl.h"

static int parse(const char *line, struct ctl_request *req, char *err)
{
	return ctl_parse(line, strlen(line), req, err, 512);
}

static void test_parse_simple_verbs(void **state)
{
	struct ctl_request req;
	char err[512];

	assert_int_equal(parse("ping", &req, err), 0);
	assert_int_equal(req.verb, CTL_PING);
	assert_int_equal(parse("  status \r", &req, err), 0);
	assert_int_equal(req.verb, CTL_STATUS);
	assert_int_equal(parse("stats", &req, err), 0);
	assert_int_equal(req.verb, CTL_STATS);
	assert_int_equal(parse("restore", &req, err), 0);
	assert_int_equal(req.verb, CTL_RESTORE);
	assert_int_equal(parse("plan /etc/irqres/p.yaml 120", &req, err), 0);
	assert_int_equal(req.verb, CTL_PLAN);
	assert_string_equal(req.name, "/etc/irqres/p.yaml");
	assert_int_equal(req.body_len, 120);
	assert_int_equal(parse("apply\trel.yaml 1048576", &req, err), 0);
	assert_int_equal(req.verb, CTL_APPLY);
	assert_string_equal(req.name, "rel.yaml");
	assert_int_equal(req.body_len, CTL_BODY_MAX);
	assert_int_equal(parse("reload", &req, err), 0);
	assert_int_equal(req.verb, CTL_RELOAD);
	assert_int_equal(parse("plan /etc/irqres/caf\xc3\xa9.yaml 10", &req, err), 0);
	assert_string_equal(req.name, "/etc/irqres/caf\xc3\xa9.yaml");
	assert_int_equal(parse("verify", &req, err), 0);
	assert_int_equal(req.verb, CTL_VERIFY);
	assert_int_equal(req.body_len, 0);
	assert_int_equal(parse("verify /tmp/p.yaml 42", &req, err), 0);
	assert_string_equal(req.name, "/tmp/p.yaml");
	assert_int_equal(req.body_len, 42);
	assert_string_equal(ctl_verb_name(CTL_SET_BUDGET), "set-budget");
}

static void test_parse_set_budget(void **state)
{
	struct ctl_request req;
	char err[512];

	assert_int_equal(parse("set-budget nic 2ms", &req, err), 0);
	assert_int_equal(req.verb, CTL_SET_BUDGET);
	assert_string_equal(req.target, "nic");
	assert_int_equal(req.pid, 0);
	assert_int_equal(req.runtime_ns, 2000000);
	assert_int_equal(req.period_ns, 0);

	assert_int_equal(parse("set-budget pid:4242 500us 1.5ms", &req, err), 0);
	assert_int_equal(req.pid, 4242);
	assert_string_equal(req.target, "pid:4242");
	assert_int_equal(req.runtime_ns, 500000);
	assert_int_equal(req.period_ns, 1500000);

	/* leading zeros of any length: the target is the canonical pid:N */
	{
		char line[300];
		int n = snprintf(line, sizeof(line), "set-budget pid:");

		memset(line + n, '0', 200);
		snprintf(line + n + 200, sizeof(line) - (size_t)n - 200, "1 2ms");
		assert_int_equal(parse(line, &req, err), 0);
		assert_int_equal(req.pid, 1);
		assert_string_equal(req.target, "pid:1");
		memset(line + n, '0', 200);
		memcpy(line + n + 200, "0 2ms", 6);
		assert_int_equal(parse(line, &req, err), -EINVAL);
		assert_non_null(strstr(err, "not a pid"));
		assert_int_equal(parse("set-budget pid:0004242 1ms", &req, err), 0);
		assert_string_equal(req.target, "pid:4242");
	}

	assert_int_equal(parse("set-budget a.b-c_d 100000ns", &req, err), 0);
	assert_int_equal(req.runtime_ns, 100000);
}

struct bad { const char *line, *needle; };

static void test_parse_errors(void **state)
{
	static const struct bad bad[] = {
		{ "", "empty request" },
		{ "   ", "empty request" },
		{ "pong", "unknown request 'pong'" },
		{ "PING", "unknown request 'PING'" },
		{ "ping extra", "ping: too many arguments" },
		{ "status now", "status: too many arguments" },
		{ "set-budget", "set-budget: missing arguments: usage: set-budget <target>" },
		{ "set-budget nic", "missing arguments" },
		{ "set-budget nic 1ms 2ms 3ms", "too many arguments" },
		{ "set-budget nic fast", "set-budget: runtime 'fast':" },
		{ "set-budget nic -1ms", "runtime '-1ms'" },
		{ "set-budget nic 1.5", "runtime '1.5'" },
		{ "set-budget nic 1ms 2parsecs", "period '2parsecs'" },
		{ "set-budget nic 100000", "runtime '100000': a number needs a unit" },
		{ "set-budget nic 100ns", "runtime 100ns is below the kernel's minimum of 1024ns" },
		{ "set-budget nic 3ms 2ms", "runtime 3ms is larger than the period 2ms" },
		{ "set-budget pid:0 1ms", "target 'pid:0': not a pid" },
		{ "set-budget pid:12x 1ms", "not a pid" },
		{ "set-budget pid:99999999999 1ms", "not a pid" },
		{ "set-budget n/c 1ms", "target 'n/c': a target name is" },
		{ "plan", "plan: missing arguments: usage: plan <name> <length>, then <length> "
			  "bytes of profile text" },
		{ "plan /tmp/x.yaml", "plan: missing arguments" },
		{ "apply a b", "apply a: length 'b': not a number of bytes in 1..1048576" },
		{ "apply a 0", "apply a: length '0': not a number" },
		{ "apply a 12k", "apply a: length '12k': not a number" },
		{ "apply a 1048577", "apply a: length '1048577': not a number" },
		{ "apply a 99999999999999999999999", "length '99999999999999999999999'" },
		{ "apply a 1 2", "apply: too many arguments" },
		{ "reload now", "reload: too many arguments" },
		{ "verify /tmp/p.yaml", "verify: give <name> <length> (the profile's text follows) "
			  "or nothing" },
		{ "verify p 1 2", "verify: too many arguments" },
		{ "a b c d e f g h i j", "too many words" },
		/* words are UTF-8: other bytes would reach file names and JSON replies */
		{ "apply\trel.yam\xff\xff\xff\xffl",
		  "request word 2 'rel.yam????l': byte 0xff at offset 7 is not valid UTF-8" },
		{ "set-budget n\xc3 1ms", "request word 2 'n?': byte 0xc3 at offset 1" },
		{ "st\xe1tus", "request word 1 'st?tus': byte 0xe1 at offset 2" },
		{ "plan /etc/\xed\xa0\x80.yaml", "offset 5 is not valid UTF-8" },
	};
	struct ctl_request req;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse(bad[i].line, &req, err) != -EINVAL || !strstr(err, bad[i].needle))
			fail_msg("'%s': got '%s', want '%s'", bad[i].line, err, bad[i].needle);
	}
}

static void test_parse_binary_garbage(void **state)
{
	struct ctl_request req;
	char err[512], line[600];
	unsigned int seed = 1;
	size_t i, k;

	/* a verb with control bytes and NULs is named without them */
	assert_int_equal(ctl_parse("pi\0ng", 5, &req, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown request 'pi?ng'"));
	assert_int_equal(ctl_parse("plan a\0b 1", 10, &req, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL byte"));
	/* a long unknown word is cut in the message */
	memset(line, 'x', 500);
	assert_int_equal(ctl_parse(line, 500, &req, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) < 200);
	/* random bytes never crash and always produce a message */
	for (k = 0; k < 2000; k++) {
		size_t n = rand_r(&seed) % sizeof(line);

		for (i = 0; i < n; i++)
			line[i] = (char)(rand_r(&seed) & 0xff);
		err[0] = '\0';
		if (ctl_parse(line, n, &req, err, sizeof(err)) < 0)
			assert_true(err[0] != '\0');
	}
}

/* ---- reply framing and the server, with a handler that echoes the request ---- */

static int fake_calls;

static uint64_t body_sum(const char *b, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; b && i < n; i++)
		h = (h ^ (unsigned char)b[i]) * 1099511628211ULL;
	return h;
}

static int fake_handler(void *ctx, const struct ctl_request *req, struct json *reply,
			char *err, size_t errlen)
{
	fake_calls++;
	if (req->verb == CTL_RESTORE) {
		snprintf(err, errlen, "restore: nothing to restore");
		return -ENOENT;
	}
	if (req->verb == CTL_STATS)
		return -EIO;	/* no message: ctl names the verb and the errno */
	json_kv_str(reply, "verb", ctl_verb_name(req->verb));
	if (req->verb == CTL_SET_BUDGET) {
		json_kv_str(reply, "target", req->target);
		json_kv_uint(reply, "runtime_ns", req->runtime_ns);
	}
	if (req->verb == CTL_APPLY) {	/* the body as it came */
		json_kv_str(reply, "name", req->name);
		json_kv_uint(reply, "len", req->body_len);
		json_kv_uint(reply, "sum", body_sum(req->body, req->body_len));
	}
	if (req->verb == CTL_PLAN) {	/* a big reply */
		int i;

		json_key(reply, "items");
		json_arr_begin(reply);
		for (i = 0; i < 20000; i++)
			json_str(reply, "irq/11-eth0 irq/11-eth0 irq/11-eth0");
		json_arr_end(reply);
	}
	return 0;
}

/* request lines that need a body are refused by ctl_handle_line() */
static void test_handle_line_body_needed(void **state)
{
	struct json out;

	json_init(&out);
	ctl_handle_line("apply x 10", 10, fake_handler, NULL, &out);
	assert_string_equal(json_buf(&out), "{\"ok\":false,\"error\":\"apply: the profile text "
			    "must follow the request line\"}\n");
	json_fini(&out);
}

static void test_handle_line(void **state)
{
	struct json out;

	json_init(&out);
	ctl_handle_line("ping", 4, fake_handler, NULL, &out);
	assert_string_equal(json_buf(&out), "{\"ok\":true,\"verb\":\"ping\"}\n");
	ctl_handle_line("set-budget nic 2ms", 18, fake_handler, NULL, &out);
	assert_string_equal(json_buf(&out),
		"{\"ok\":true,\"verb\":\"set-budget\",\"target\":\"nic\",\"runtime_ns\":2000000}\n");
	ctl_handle_line("restore", 7, fake_handler, NULL, &out);
	assert_string_equal(json_buf(&out),
		"{\"ok\":false,\"error\":\"restore: nothing to restore\",\"errno\":\"ENOENT\"}\n");
	ctl_handle_line("stats", 5, fake_handler, NULL, &out);
	assert_string_equal(json_buf(&out),
		"{\"ok\":false,\"error\":\"stats: Input/output error\",\"errno\":\"EIO\"}\n");
	ctl_handle_line("nope \"x\"", 8, fake_handler, NULL, &out);
	assert_non_null(strstr(json_buf(&out), "\"error\":\"unknown request 'nope'"));
	assert_null(strstr(json_buf(&out), "errno"));	/* refused by the parser: no errno */
	json_fini(&out);
}

struct env {
	char dir[64], path[128];
	struct ctl_server *srv;
};

static void pump(struct ctl_server *srv, int ms)
{
	struct pollfd fds[CTL_CLIENTS_MAX + 1];
	size_t n;

	for (;;) {
		n = ctl_pollfds(srv, fds, CTL_CLIENTS_MAX + 1);
		if (poll(fds, n, ms) <= 0)
			return;
		ctl_dispatch(srv, fds, n);
	}
}

static int client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Reads whatever the server sent after pumping it; returns the byte count (-1 on EOF). */
static ssize_t client_recv(struct ctl_server *srv, int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t r;

	for (;;) {
		pump(srv, 20);
		r = recv(fd, buf + got, len - 1 - got, MSG_DONTWAIT);
		if (r == 0)
			return got ? (ssize_t)got : -1;
		if (r < 0)
			break;
		got += (size_t)r;
		if (got == len - 1)
			break;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

static int server_setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	char err[256];

	snprintf(e->dir, sizeof(e->dir), "/tmp/test_ctl.XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->path, sizeof(e->path), "%s/run/irqresd.sock", e->dir);
	assert_int_equal(ctl_init(&e->srv, e->path, fake_handler, NULL, err, sizeof(err)), 0);
	*state = e;
	return 0;
}

static int server_teardown(void **state)
{
	struct env *e = *state;
	char sub[160];

	ctl_fini(e->srv);
	assert_int_equal(access(e->path, F_OK), -1);
	snprintf(sub, sizeof(sub), "%s/run", e->dir);
	rmdir(sub);
	rmdir(e->dir);
	free(e);
	return 0;
}

static void test_server_modes_and_requests(void **state)
{
	struct env *e = *state;
	char buf[256], sub[160];
	struct stat st;
	int fd;

	snprintf(sub, sizeof(sub), "%s/run", e->dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(e->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);

	fd = client_connect(e->path);
	/* two requests in one write, one split across writes: replies in order */
	assert_int_equal(write(fd, "ping\nstatus\nsta", 15), 15);
	client_recv(e->srv, fd, buf, sizeof(buf));
	assert_string_equal(buf, "{\"ok\":true,\"verb\":\"ping\"}\n"
				 "{\"ok\":true,\"verb\":\"status\"}\n");
	assert_int_equal(write(fd, "ts\nbogus\n", 9), 9);
	client_recv(e->srv, fd, buf, sizeof(buf));
	assert_non_null(strstr(buf, "{\"ok\":false,\"error\":\"stats: Input/output error\","
				    "\"errno\":\"EIO\"}\n"
				    "{\"ok\":false,\"error\":\"unknown request 'bogus'"));
	close(fd);
	pump(e->srv, 20);
}

/* apply NAME LEN, then LEN bytes: newlines inside, split across writes, beyond 4096 */
static void test_server_request_body(void **state)
{
	struct env *e = *state;
	static char body[10000], buf[512], want[256];
	int fd;

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = i % 61 == 60 ? '\n' : (char)('a' + i % 26);
	fd = client_connect(e->path);
	assert_int_equal(write(fd, "apply /tmp/p.yaml 10000\n", 24), 24);
	assert_int_equal(write(fd, body, 3000), 3000);
	pump(e->srv, 20);
	assert_int_equal(write(fd, body + 3000, 7000), 7000);
	assert_int_equal(write(fd, "ping\n", 5), 5);
	client_recv(e->srv, fd, buf, sizeof(buf));
	snprintf(want, sizeof(want), "{\"ok\":true,\"verb\":\"apply\",\"name\":\"/tmp/p.yaml\","
		 "\"len\":10000,\"sum\":%llu}\n{\"ok\":true,\"verb\":\"ping\"}\n",
		 (unsigned long long)body_sum(body, sizeof(body)));
	assert_string_equal(buf, want);
	/* a body of one line with the next request in the same write */
	assert_int_equal(write(fd, "apply x 3\nabcping\n", 18), 18);
	client_recv(e->srv, fd, buf, sizeof(buf));
	snprintf(want, sizeof(want), "{\"ok\":true,\"verb\":\"apply\",\"name\":\"x\",\"len\":3,"
		 "\"sum\":%llu}\n{\"ok\":true,\"verb\":\"ping\"}\n",
		 (unsigned long long)body_sum("abc", 3));
	assert_string_equal(buf, want);
	close(fd);
	/* a client that leaves in the middle of a body costs nothing */
	fd = client_connect(e->path);
	assert_int_equal(write(fd, "apply x 100000\nabc", 18), 18);
	pump(e->srv, 20);
	close(fd);
	pump(e->srv, 20);
}

static void test_server_second_instance_refused(void **state)
{
	struct env *e = *state;
	struct ctl_server *other;
	char err[256];

	assert_int_equal(ctl_init(&other, e->path, fake_handler, NULL, err, sizeof(err)),
			 -EADDRINUSE);
	assert_non_null(strstr(err, "another irqresd is listening"));
}

static void test_server_stale_socket_replaced(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_server *srv;
	char dir[] = "/tmp/test_ctl.XXXXXX", path[96], err[256], buf[128];
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	/* a socket file nobody listens on, as a killed daemon leaves it */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(ctl_init(&srv, path, fake_handler, NULL, err, sizeof(err)), 0);
	fd = client_connect(path);
	assert_int_equal(write(fd, "ping\n", 5), 5);
	client_recv(srv, fd, buf, sizeof(buf));
	assert_string_equal(buf, "{\"ok\":true,\"verb\":\"ping\"}\n");
	close(fd);
	ctl_fini(srv);

	/* a regular file in the way is not removed */
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(ctl_init(&srv, path, fake_handler, NULL, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "not a socket"));
	unlink(path);
	rmdir(dir);
}

static void test_server_oversized_line(void **state)
{
	struct env *e = *state;
	static char big[CTL_LINE_MAX + 100];
	char buf[512];
	int fd;

	/* exactly 4096 bytes with the newline is accepted */
	fd = client_connect(e->path);
	memset(big, ' ', CTL_LINE_MAX - 1);
	memcpy(big, "ping", 4);
	big[CTL_LINE_MAX - 1] = '\n';
	assert_int_equal(write(fd, big, CTL_LINE_MAX), CTL_LINE_MAX);
	client_recv(e->srv, fd, buf, sizeof(buf));
	assert_string_equal(buf, "{\"ok\":true,\"verb\":\"ping\"}\n");
	close(fd);

	/* one byte more is refused and the connection closed */
	fd = client_connect(e->path);
	memset(big, 'x', sizeof(big));
	assert_int_equal(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	client_recv(e->srv, fd, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":false,\"error\":\"request longer than 4096 bytes"));
	assert_int_equal(client_recv(e->srv, fd, buf, sizeof(buf)), -1);	/* closed */
	close(fd);
}

static void test_server_many_clients_and_rude_ones(void **state)
{
	struct env *e = *state;
	int fds[CTL_CLIENTS_MAX + 4], i, fd, calls;
	char buf[256];

	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		fds[i] = client_connect(e->path);
		pump(e->srv, 0);
	}
	/* one over the limit gets an error and is closed; the others still work */
	fd = client_connect(e->path);
	client_recv(e->srv, fd, buf, sizeof(buf));
	assert_non_null(strstr(buf, "too many clients"));
	close(fd);
	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		assert_int_equal(write(fds[i], "ping\n", 5), 5);
		client_recv(e->srv, fds[i], buf, sizeof(buf));
		assert_string_equal(buf, "{\"ok\":true,\"verb\":\"ping\"}\n");
		close(fds[i]);
	}
	pump(e->srv, 20);

	/* a client that asks for big replies and leaves without reading them */
	calls = fake_calls;
	for (i = 0; i < 4; i++) {
		fd = client_connect(e->path);
		assert_int_equal(write(fd, "plan x 1\nZplan y 1\nZplan z 1\nZ", 30), 30);
		pump(e->srv, 0);
		close(fd);
		pump(e->srv, 20);
	}
	assert_true(fake_calls > calls);
	/* a client that sends without a newline and hangs up */
	fd = client_connect(e->path);
	assert_int_equal(write(fd, "pin", 3), 3);
	close(fd);
	pump(e->srv, 20);
	/* the server still answers */
	fd = client_connect(e->path);
	assert_int_equal(write(fd, "ping\n", 5), 5);
	client_recv(e->srv, fd, buf, sizeof(buf));
	assert_string_equal(buf, "{\"ok\":true,\"verb\":\"ping\"}\n");
	close(fd);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Runs the server for ms as the daemon does: poll() bounded by ctl_timeout_ms(). */
static void serve_for(struct ctl_server *srv, int ms)
{
	struct pollfd fds[CTL_CLIENTS_MAX + 1];
	uint64_t end = mono_ms() + (uint64_t)ms, now;
	size_t n;
	int t;

	while ((now = mono_ms()) < end) {
		n = ctl_pollfds(srv, fds, CTL_CLIENTS_MAX + 1);
		t = ctl_timeout_ms(srv);
		if (t < 0 || (uint64_t)t > end - now)
			t = (int)(end - now);
		if (poll(fds, n, t) < 0)
			return;
		ctl_dispatch(srv, fds, n);
	}
}

/* Reads what is there without waiting: the byte count, or -1 on EOF with nothing read. */
static ssize_t drain(int fd, char *buf, size_t len)
{
	ssize_t r = recv(fd, buf, len - 1, MSG_DONTWAIT);

	if (r == 0)
		return -1;
	buf[r < 0 ? 0 : r] = '\0';
	return r < 0 ? 0 : r;
}

/*
 * Clients that connect and send half a request, or nothing, and go silent: they must
 * not lock others out (all 64 slots taken by them once took the socket down for good),
 * the half-sent ones get an answer when dropped, the idle ones a plain close.
 */
static void test_server_idle_and_half_sent(void **state)
{
	struct env *e = *state;
	const struct ctl_timeouts to = { .request_ms = 400, .idle_ms = 1500, .evict_ms = 150 };
	int fds[CTL_CLIENTS_MAX], i, fd, answered = 0, idle;
	uint64_t sent;
	char buf[512];

	ctl_set_timeouts(e->srv, &to);
	assert_int_equal(ctl_timeout_ms(e->srv), -1);		/* no client, no deadline */
	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		fds[i] = client_connect(e->path);
		assert_int_equal(write(fds[i], "set-budget nic 2m", 17), 17);
		serve_for(e->srv, 0);
	}
	serve_for(e->srv, 20);
	assert_true(ctl_timeout_ms(e->srv) >= 0 && ctl_timeout_ms(e->srv) <= 400);
	/* every slot is held; once they have waited evict_ms a new client gets in */
	serve_for(e->srv, 200);
	fd = client_connect(e->path);
	assert_int_equal(write(fd, "ping\n", 5), 5);
	serve_for(e->srv, 50);
	assert_true(drain(fd, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "{\"ok\":true,\"verb\":\"ping\"}\n");
	/* the half-sent ones are answered and closed by the request timeout */
	serve_for(e->srv, 500);
	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		ssize_t r = drain(fds[i], buf, sizeof(buf));

		assert_true(r > 0);
		assert_non_null(strstr(buf, "\"ok\":false,\"error\":\"request incomplete (17 "
					    "bytes, no newline)"));
		answered++;
		assert_int_equal(drain(fds[i], buf, sizeof(buf)), -1);	/* then EOF */
		close(fds[i]);
	}
	assert_int_equal(answered, CTL_CLIENTS_MAX);
	/* a client between requests stays until idle_ms, then gets a plain EOF */
	assert_int_equal(write(fd, "ping\n", 5), 5);
	sent = mono_ms();
	serve_for(e->srv, 500);
	assert_true(drain(fd, buf, sizeof(buf)) > 0);
	idle = (int)drain(fd, buf, sizeof(buf));
	/* still open at 500 ms (unless a stalled machine let idle_ms pass since the ping) */
	assert_true(idle == 0 || mono_ms() - sent >= (uint64_t)to.idle_ms);
	serve_for(e->srv, 1200);
	assert_int_equal(drain(fd, buf, sizeof(buf)), -1);	/* closed, without a word */
	close(fd);
	assert_int_equal(ctl_timeout_ms(e->srv), -1);
}

/*
 * One trickle: a byte every 20 ms until the server answers. Returns the bytes sent; *gap
 * is the longest wait between two sends, or between the last send and the answer.
 * The server runs in this process only inside serve_for(), so a client that found no
 * answer after it has not been closed yet and its next send cannot hit a closed socket.
 */
static size_t trickle(struct env *e, int request_ms, char *buf, size_t len, uint64_t *gap)
{
	uint64_t t0 = mono_ms(), last = t0, now;
	size_t sent = 0;
	int fd = client_connect(e->path);
	ssize_t r;

	*gap = 0;
	for (;;) {
		assert_int_equal(write(fd, "p", 1), 1);
		sent++;
		serve_for(e->srv, 20);
		r = drain(fd, buf, len);
		now = mono_ms();
		if (now - last > *gap)
			*gap = now - last;
		last = now;
		if (r != 0)
			break;
		/* a deadline pushed back by each byte never comes while the bytes go on */
		assert_true(now - t0 < 20 * (uint64_t)request_ms);
	}
	assert_true(r > 0);
	close(fd);
	return sent;
}

/*
 * A client trickling one byte at a time does not extend its request's deadline: with a
 * byte far more often than request_ms, it is still answered request_ms after its first.
 * The proof needs every gap between bytes shorter than request_ms; a machine that
 * stalled the test longer than that makes a trial inconclusive, and it is tried again.
 */
static void test_server_trickle(void **state)
{
	struct env *e = *state;
	const struct ctl_timeouts to = { .request_ms = 300, .idle_ms = 5000, .evict_ms = 100 };
	char buf[512];
	const char *msg;
	uint64_t gap = 0, t0, took;
	size_t sent = 0, got = 0;
	double after = 0;
	int trial;

	ctl_set_timeouts(e->srv, &to);
	for (trial = 0; trial < 5; trial++) {
		t0 = mono_ms();
		sent = trickle(e, to.request_ms, buf, sizeof(buf), &gap);
		took = mono_ms() - t0;
		if (gap < (uint64_t)to.request_ms)
			break;
	}
	assert_true(gap < (uint64_t)to.request_ms);
	msg = strstr(buf, "request incomplete (");
	assert_non_null(msg);
	assert_int_equal(sscanf(msg, "request incomplete (%zu bytes, no newline) after %lf s",
				&got, &after), 2);
	/* more than one byte came in before the deadline, and it was not moved by them */
	assert_true(got >= 2 && got <= sent);
	/* the wait the server names: from the first byte, at least request_ms, at most
	 * what this client saw (the message rounds to 0.1 s) */
	assert_true(after * 1000 >= to.request_ms - 50 && after * 1000 <= took + 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_simple_verbs),
		cmocka_unit_test(test_parse_set_budget),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_binary_garbage),
		cmocka_unit_test(test_handle_line),
		cmocka_unit_test(test_handle_line_body_needed),
		cmocka_unit_test_setup_teardown(test_server_modes_and_requests, server_setup,
						server_teardown),
		cmocka_unit_test_setup_teardown(test_server_request_body, server_setup,
						server_teardown),
		cmocka_unit_test_setup_teardown(test_server_second_instance_refused, server_setup,
						server_teardown),
		cmocka_unit_test(test_server_stale_socket_replaced),
		cmocka_unit_test_setup_teardown(test_server_oversized_line, server_setup,
						server_teardown),
		cmocka_unit_test_setup_teardown(test_server_many_clients_and_rude_ones,
						server_setup, server_teardown),
		cmocka_unit_test_setup_teardown(test_server_idle_and_half_sent,
						server_setup, server_teardown),
		cmocka_unit_test_setup_teardown(test_server_trickle, server_setup,
						server_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
