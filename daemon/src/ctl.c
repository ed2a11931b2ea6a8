/* SPDX-License-Identifier: GPL-2.0-only */
/* ctl.c - the control socket's non-blocking server; see ctl.h (the protocol: ctl_proto.c). */
#include "ctl.h"
#include "array.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CTL_OUT_MAX (4u << 20)	/* replies a client has not read yet; more and it is dropped */

/* ---- the server ---- */

struct client {
	int fd;
	char in[CTL_LINE_MAX];
	size_t in_len;
	struct ctl_request req;	/* a request waiting for its body */
	char *body;		/* NULL, or req.body_len bytes being read */
	size_t body_got;
	char *out;
	size_t out_len, out_off, out_cap;
	bool closing;		/* close once the output is flushed */
	/* CLOCK_MONOTONIC ms: connected or last request answered; first byte of the
	 * request still incomplete in in[]; last progress sending out[]; first byte of the
	 * request line whose body is being read */
	uint64_t idle_ms, part_ms, out_ms, body_ms;
};

struct ctl_server {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ctl_handler_fn handler;
	void *ctx;
	struct client clients[CTL_CLIENTS_MAX];
	struct json reply;
	struct ctl_timeouts to;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int mkdir_parent(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;
	int e;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		snprintf(err, errlen, "%s: not a directory", dir);
		return -ENOTDIR;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		e = errno;
		snprintf(err, errlen, "%s: cannot create the socket directory: %s", dir,
			 strerror(e));
		return -e;
	}
	return 0;
}

/* A socket file that no daemon answers on is stale; one that answers is in use. */
static int remove_stale(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	if (lstat(sa->sun_path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: exists and is not a socket", sa->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0) {
		close(fd);
		snprintf(err, errlen, "%s: another irqresd is listening there", sa->sun_path);
		return -EADDRINUSE;
	}
	close(fd);
	if (unlink(sa->sun_path) < 0 && errno != ENOENT) {
		e = errno;
		snprintf(err, errlen, "%s: cannot remove the stale socket: %s", sa->sun_path,
			 strerror(e));
		return -e;
	}
	pr_info("removed stale socket %s", sa->sun_path);
	return 0;
}

int ctl_init(struct ctl_server **srvp, const char *path, ctl_handler_fn handler, void *ctx,
	     char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_server *srv;
	mode_t old_mask;
	int rc, e, i;

	*srvp = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = mkdir_parent(path, err, errlen);
	if (rc < 0)
		return rc;
	rc = remove_stale(&sa, err, errlen);
	if (rc < 0)
		return rc;

	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, errlen, "control socket: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < CTL_CLIENTS_MAX; i++)
		srv->clients[i].fd = -1;
	json_init(&srv->reply);
	srv->to = (struct ctl_timeouts){ CTL_REQUEST_TIMEOUT_MS, CTL_IDLE_TIMEOUT_MS,
					 CTL_EVICT_AFTER_MS };
	srv->handler = handler;
	srv->ctx = ctx;
	memcpy(srv->path, sa.sun_path, sizeof(srv->path));

	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: socket: %s", path, strerror(e));
		goto out_free;
	}
	old_mask = umask(0177);
	rc = bind(srv->fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	umask(old_mask);
	if (rc < 0) {
		snprintf(err, errlen, "%s: bind: %s", path, strerror(e));
		goto out_close;
	}
	if (chmod(path, 0600) < 0 || listen(srv->fd, SOMAXCONN) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		unlink(path);
		goto out_close;
	}
	*srvp = srv;
	return 0;

out_close:
	close(srv->fd);
out_free:
	json_fini(&srv->reply);
	free(srv);
	return -e;
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	free(c->body);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void ctl_fini(struct ctl_server *srv)
{
	int i;

	if (!srv)
		return;
	for (i = 0; i < CTL_CLIENTS_MAX; i++)
		client_close(&srv->clients[i]);
	close(srv->fd);
	if (unlink(srv->path) < 0 && errno != ENOENT)
		pr_warn("%s: cannot remove the socket: %m", srv->path);
	json_fini(&srv->reply);
	free(srv);
}

/* Queues bytes for the client; false (client to be dropped) when it reads too slowly. */
static bool client_queue(struct client *c, const char *s, size_t n)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len - c->out_off + n > CTL_OUT_MAX)
		return false;
	if (c->out_len + n > c->out_cap) {
		if (c->out_off) {
			memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
			c->out_len -= c->out_off;
			c->out_off = 0;
		}
		if (ARRAY_RESERVE(c->out, c->out_cap, c->out_len + n))
			return false;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out_len += n;
	return true;
}

/* Writes what it can; false when the client is gone. */
static bool client_flush(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return true;
			pr_debug("control client fd %d: send: %m", c->fd);
			return false;
		}
		c->out_off += (size_t)w;
		c->out_ms = now_ms();
	}
	return !c->closing;
}

static bool client_error_close(struct client *c, const char *msg, struct json *reply)
{
	ctl_reply_error(reply, msg);
	json_raw(reply, "\n", 1);
	c->closing = true;
	c->in_len = 0;
	return client_queue(c, json_buf(reply), json_len(reply));
}

/*
 * When the client's current wait began: for its output, its request (a body being read
 * counts from the first byte of its request line, however slowly it trickles in), or idle.
 */
static uint64_t client_wait_since(const struct client *c)
{
	if (c->out_len > c->out_off || c->closing)
		return c->out_ms;
	if (c->body)
		return c->body_ms;
	if (c->in_len)
		return c->part_ms;
	return c->idle_ms;
}

static uint64_t client_deadline(const struct ctl_server *srv, const struct client *c)
{
	if (c->out_len > c->out_off || c->closing || c->body || c->in_len)
		return client_wait_since(c) + srv->to.request_ms;
	return c->idle_ms + srv->to.idle_ms;
}

/*
 * Ends a client that waited too long. One with a request still incomplete gets an
 * answer (best effort, it may not read); an idle one is closed without a word, as a
 * reply line nobody asked for would be taken as the answer to its next request.
 */
static void client_drop(struct ctl_server *srv, struct client *c, const char *why)
{
	char msg[160];

	if ((c->in_len || c->body) && !c->closing && !(c->out_len > c->out_off)) {
		if (c->body)
			snprintf(msg, sizeof(msg), "%s %.64s: body incomplete (%zu of %zu bytes) %s: "
				 "connection closed", ctl_verb_name(c->req.verb), c->req.name,
				 c->body_got + c->in_len, c->req.body_len, why);
		else
			snprintf(msg, sizeof(msg), "request incomplete (%zu bytes, no newline) %s: "
				 "connection closed", c->in_len, why);
		if (client_error_close(c, msg, &srv->reply))
			client_flush(c);
	}
	pr_debug("control client fd %d dropped: %s", c->fd, why);
	client_close(c);
}

/*
 * Every slot is taken: frees the one whose current wait is the oldest, if it has waited
 * at least evict_ms, so that idle or half-sent connections cannot lock others out.
 */
static struct client *client_evict(struct ctl_server *srv)
{
	struct client *victim = NULL;
	uint64_t now = now_ms(), oldest = UINT64_MAX;
	int i;

	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		uint64_t since = client_wait_since(&srv->clients[i]);

		if (srv->clients[i].fd >= 0 && since < oldest) {
			oldest = since;
			victim = &srv->clients[i];
		}
	}
	if (!victim || now - oldest < srv->to.evict_ms)
		return NULL;
	client_drop(srv, victim, "while other clients waited for a connection");
	return victim;
}

static void clients_expire(struct ctl_server *srv)
{
	uint64_t now = now_ms();
	int i;

	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		struct client *c = &srv->clients[i];
		char why[64];

		if (c->fd < 0 || client_deadline(srv, c) > now)
			continue;
		snprintf(why, sizeof(why), "after %.1f s", (double)(now - client_wait_since(c)) / 1e3);
		client_drop(srv, c, why);
	}
}

int ctl_timeout_ms(const struct ctl_server *srv)
{
	uint64_t now = now_ms(), next = UINT64_MAX;
	int i;

	for (i = 0; i < CTL_CLIENTS_MAX; i++) {
		const struct client *c = &srv->clients[i];
		uint64_t d;

		if (c->fd < 0)
			continue;
		d = client_deadline(srv, c);
		if (d < next)
			next = d;
	}
	if (next == UINT64_MAX)
		return -1;
	if (next <= now)
		return 0;
	return next - now > INT32_MAX ? INT32_MAX : (int)(next - now);
}

void ctl_set_timeouts(struct ctl_server *srv, const struct ctl_timeouts *to)
{
	srv->to = *to;
}

/* A free client slot, else one evicted; NULL when every client is busy. */
static struct client *client_slot(struct ctl_server *srv)
{
	for (int i = 0; i < CTL_CLIENTS_MAX; i++)
		if (srv->clients[i].fd < 0)
			return &srv->clients[i];
	return client_evict(srv);
}

/* Whether the peer of c may control irqresd (root or irqresd's uid); c closed if not. */
static bool client_allowed(struct ctl_server *srv, struct client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char msg[160];

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		pr_warn("control socket: SO_PEERCRED: %m; client refused");
		client_close(c);
		return false;
	}
	if (cred.uid != 0 && cred.uid != geteuid()) {
		pr_warn("control socket: refused pid %d: uid %u is neither root nor irqresd's",
			(int)cred.pid, (unsigned)cred.uid);
		snprintf(msg, sizeof(msg), "permission denied: uid %u may not control irqresd",
			 (unsigned)cred.uid);
		if (!client_error_close(c, msg, &srv->reply) || !client_flush(c))
			client_close(c);
		return false;
	}
	pr_debug("control client pid %d connected (fd %d)", (int)cred.pid, c->fd);
	return true;
}

static void client_accept(struct ctl_server *srv)
{
	char msg[160];
	struct client *c, tmp;
	int fd;

	for (;;) {
		fd = accept4(srv->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				pr_warn("control socket %s: accept: %m", srv->path);
			return;
		}
		c = client_slot(srv);
		if (!c) {	/* refuse with a reply, best effort */
			memset(&tmp, 0, sizeof(tmp));
			tmp.fd = fd;
			snprintf(msg, sizeof(msg), "too many clients (%d): try again later",
				 CTL_CLIENTS_MAX);
			if (client_error_close(&tmp, msg, &srv->reply))
				client_flush(&tmp);
			client_close(&tmp);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->idle_ms = c->out_ms = now_ms();
		client_allowed(srv, c);
	}
}

static bool client_reply(struct ctl_server *srv, struct client *c)
{
	return !json_error(&srv->reply) &&
	       client_queue(c, json_buf(&srv->reply), json_len(&srv->reply));
}

/*
 * Handles the complete requests in c->in: a line, or a line and the body it announces
 * (which passes through c->in into c->body). False when the client must be dropped now.
 */
/* Takes body bytes from c->in at *start; once the body is whole, answers the request.
 * 1: answered, 0: more bytes needed, -1: the client must be dropped. */
static int client_body(struct ctl_server *srv, struct client *c, size_t *start)
{
	size_t k = c->in_len - *start, need = c->req.body_len - c->body_got;

	if (k > need)
		k = need;
	memcpy(c->body + c->body_got, c->in + *start, k);
	c->body_got += k;
	*start += k;
	if (c->body_got < c->req.body_len)
		return 0;
	c->req.body = c->body;
	ctl_handle_request(&c->req, srv->handler, srv->ctx, &srv->reply);
	free(c->body);
	c->body = NULL;
	c->req.body = NULL;
	return client_reply(srv, c) ? 1 : -1;
}

/* Whether the line's first word is a verb that may announce a body. */
static bool line_has_body_verb(const char *line, size_t n)
{
	static const char *const verbs[] = { "plan", "apply", "verify" };
	size_t i = 0, k;

	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	for (k = 0; k < sizeof(verbs) / sizeof(verbs[0]); k++) {
		size_t len = strlen(verbs[k]);

		if (n - i >= len && !memcmp(line + i, verbs[k], len) &&
		    (n - i == len || line[i + len] == ' ' || line[i + len] == '\t' ||
		     line[i + len] == '\r'))
			return true;
	}
	return false;
}

/*
 * Handles the line of n bytes at *start: answers it, or waits for the body it announces.
 * A refused line that may have announced a body closes the connection after its reply:
 * the bytes that follow are profile text, not requests. False when the client must be
 * dropped.
 */
static bool client_line(struct ctl_server *srv, struct client *c, size_t *start, size_t n)
{
	char err[512] = "";
	const char *line = c->in + *start;
	uint64_t line_ms = c->part_ms;

	*start += n + 1;
	if (ctl_parse(line, n, &c->req, err, sizeof(err)) == 0) {
		if (c->req.body_len) {
			c->body = malloc(c->req.body_len);
			c->body_got = 0;
			c->body_ms = line_ms;
			return c->body != NULL;
		}
	} else if (line_has_body_verb(line, n)) {
		strncat(err, ": connection closed (what follows would be the body)",
			sizeof(err) - strlen(err) - 1);
		return client_error_close(c, err, &srv->reply);
	}
	ctl_handle_line(line, n, srv->handler, srv->ctx, &srv->reply);
	return client_reply(srv, c);
}

/*
 * Handles the complete requests in c->in: a line, or a line and the body it announces
 * (which passes through c->in into c->body). False when the client must be dropped now.
 */
static bool client_process(struct ctl_server *srv, struct client *c)
{
	size_t start = 0;
	char *nl;

	while (!c->closing) {
		if (c->body) {
			int rc = client_body(srv, c, &start);

			if (rc < 0)
				return false;
			if (rc == 0)
				break;
			continue;
		}
		nl = memchr(c->in + start, '\n', c->in_len - start);
		if (!nl)
			break;
		if (!client_line(srv, c, &start, (size_t)(nl - (c->in + start))))
			return false;
	}
	if (c->closing)		/* a refused line ended the connection: its input is dropped */
		return true;
	if (start) {
		memmove(c->in, c->in + start, c->in_len - start);
		c->in_len -= start;
		c->idle_ms = c->out_ms = now_ms();
		if (c->in_len)	/* the next request began in this read */
			c->part_ms = c->idle_ms;
	}
	if (!c->closing && !c->body && c->in_len == sizeof(c->in)) {
		char msg[96];

		snprintf(msg, sizeof(msg), "request longer than %d bytes: connection closed",
			 CTL_LINE_MAX);
		return client_error_close(c, msg, &srv->reply);
	}
	return true;
}

static bool client_read(struct ctl_server *srv, struct client *c)
{
	for (;;) {
		ssize_t r;

		if (c->closing)
			return true;
		r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK;
		}
		if (r == 0)	/* EOF: answer what is complete, then go */
			return client_process(srv, c) && (c->closing = true);
		if (c->in_len == 0)
			c->part_ms = now_ms();
		c->in_len += (size_t)r;
		if (!client_process(srv, c))
			return false;
		/* stop reading while replies wait, so a client that never reads cannot grow them */
		if (c->out_len > c->out_off)
			return true;
	}
}

size_t ctl_pollfds(struct ctl_server *srv, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	int i;

	if (max == 0)
		return 0;
	fds[n++] = (struct pollfd){ .fd = srv->fd, .events = POLLIN };
	for (i = 0; i < CTL_CLIENTS_MAX && n < max; i++) {
		struct client *c = &srv->clients[i];

		if (c->fd < 0)
			continue;
		fds[n++] = (struct pollfd){
			.fd = c->fd,
			.events = c->out_len > c->out_off ? POLLOUT : (c->closing ? 0 : POLLIN),
		};
	}
	return n;
}

static struct client *client_of_fd(struct ctl_server *srv, int fd)
{
	struct client *c = NULL;

	for (int i = 0; i < CTL_CLIENTS_MAX; i++)
		if (srv->clients[i].fd == fd)
			c = &srv->clients[i];
	return c;
}

/* What poll() said about client c; false when it is to be closed. */
static bool client_events(struct ctl_server *srv, struct client *c, short revents)
{
	bool keep = true;

	if (revents & POLLOUT)
		keep = client_flush(c);
	if (keep && (revents & (POLLIN | POLLHUP)) && !(c->out_len > c->out_off))
		keep = client_read(srv, c);
	if (keep && (revents & (POLLERR | POLLNVAL)))
		keep = false;
	if (keep && c->out_len > c->out_off)
		keep = client_flush(c);
	else if (keep && c->closing)
		keep = false;
	return keep;
}

void ctl_dispatch(struct ctl_server *srv, const struct pollfd *fds, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct client *c;

		if (!fds[k].revents || fds[k].fd == srv->fd)
			continue;
		c = client_of_fd(srv, fds[k].fd);
		if (c && !client_events(srv, c, fds[k].revents))
			client_close(c);
	}
	/* new clients last: an fd closed above and reused by accept() keeps no old revents */
	if (n && fds[0].fd == srv->fd && fds[0].revents)
		client_accept(srv);
	clients_expire(srv);
}
