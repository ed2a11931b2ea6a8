/* SPDX-License-Identifier: GPL-2.0-only */
/* hotplug.c - proc connector events (fork, exec, comm, exit) and name-settling retries. */
#include "hotplug.h"

#include "log.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RETRY_FIRST_NS 1000000ULL	/* 1 ms, doubled each time */

struct retry {
	pid_t pid;
	uint64_t first_ns, due_ns, delay_ns;
};

struct hotplug {
	int fd;
	hotplug_fn fn;
	void *ctx;
	struct retry retries[HOTPLUG_RETRY_SLOTS];
	size_t n_retries;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sends PROC_CN_MCAST_LISTEN / _IGNORE to the connector. */
static int send_mcast_op(int fd, enum proc_cn_mcast_op op)
{
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;

	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_len = sizeof(msg);
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = 0;
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof(enum proc_cn_mcast_op);
	msg.op = op;
	if (send(fd, &msg, sizeof(msg), MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

static int open_connector(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	int fd, rc, size = 1 << 20;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	/* a burst of forks elsewhere on the machine must not overflow the queue */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = send_mcast_op(fd, PROC_CN_MCAST_LISTEN);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int hotplug_init(struct hotplug **hpp, bool netlink, hotplug_fn fn, void *ctx)
{
	struct hotplug *hp = calloc(1, sizeof(*hp));
	int fd;

	*hpp = NULL;
	if (!hp)
		return -ENOMEM;
	hp->fd = -1;
	hp->fn = fn;
	hp->ctx = ctx;
	*hpp = hp;
	if (!netlink)
		return 0;
	fd = open_connector();
	if (fd < 0) {
		pr_warn("proc connector unavailable (%s): new threads are found by rescans only",
			strerror(-fd));
		return fd;
	}
	hp->fd = fd;
	pr_debug("proc connector: listening for fork/exec/comm/exit events");
	return 0;
}

void hotplug_fini(struct hotplug *hp)
{
	if (!hp)
		return;
	if (hp->fd >= 0) {
		send_mcast_op(hp->fd, PROC_CN_MCAST_IGNORE);
		close(hp->fd);
	}
	free(hp);
}

int hotplug_fd(const struct hotplug *hp)
{
	return hp ? hp->fd : -1;
}

static struct retry *retry_find(struct hotplug *hp, pid_t pid)
{
	size_t i;

	for (i = 0; i < hp->n_retries; i++)
		if (hp->retries[i].pid == pid)
			return &hp->retries[i];
	return NULL;
}

static void retry_drop(struct hotplug *hp, pid_t pid)
{
	struct retry *r = retry_find(hp, pid);

	if (r)
		*r = hp->retries[--hp->n_retries];
}

int hotplug_retry_add(struct hotplug *hp, pid_t pid)
{
	struct retry *r = retry_find(hp, pid);
	uint64_t now = now_ns();

	if (r) {	/* again: back off, give up after HOTPLUG_RETRY_MAX_NS */
		if (now - r->first_ns >= HOTPLUG_RETRY_MAX_NS) {
			pr_debug("pid %d: name not final after %llu ms, left to the rescan",
				 (int)pid, (unsigned long long)(HOTPLUG_RETRY_MAX_NS / 1000000));
			retry_drop(hp, pid);
			return -ETIMEDOUT;
		}
		r->delay_ns *= 2;
		r->due_ns = now + r->delay_ns;
		return 0;
	}
	if (hp->n_retries == HOTPLUG_RETRY_SLOTS)
		return -ENOSPC;	/* the periodic rescan will find it */
	r = &hp->retries[hp->n_retries++];
	r->pid = pid;
	r->first_ns = now;
	r->delay_ns = RETRY_FIRST_NS;
	r->due_ns = now + r->delay_ns;
	return 0;
}

int hotplug_retry_timeout_ms(const struct hotplug *hp)
{
	uint64_t now = now_ns(), next = UINT64_MAX;
	size_t i;

	if (!hp || hp->n_retries == 0)
		return -1;
	for (i = 0; i < hp->n_retries; i++)
		if (hp->retries[i].due_ns < next)
			next = hp->retries[i].due_ns;
	if (next <= now)
		return 0;
	return (int)((next - now + 999999) / 1000000);
}

static void deliver(struct hotplug *hp, enum hotplug_event ev, pid_t pid, pid_t ppid)
{
	if (hp->fn(hp->ctx, ev, pid, ppid) == HOTPLUG_AGAIN)
		hotplug_retry_add(hp, pid);
	else
		retry_drop(hp, pid);
}

void hotplug_run_retries(struct hotplug *hp)
{
	pid_t due[HOTPLUG_RETRY_SLOTS];
	uint64_t now = now_ns();
	size_t i, n = 0;

	if (!hp)
		return;
	for (i = 0; i < hp->n_retries; i++)
		if (hp->retries[i].due_ns <= now)
			due[n++] = hp->retries[i].pid;
	for (i = 0; i < n; i++)
		deliver(hp, HOTPLUG_RETRY, due[i], 0);
}

static void handle_event(struct hotplug *hp, const struct proc_event *ev)
{
	switch (ev->what) {
	case PROC_EVENT_FORK:
		deliver(hp, HOTPLUG_FORK, ev->event_data.fork.child_pid,
			ev->event_data.fork.parent_tgid);
		break;
	case PROC_EVENT_EXEC:
		deliver(hp, HOTPLUG_EXEC, ev->event_data.exec.process_pid, 0);
		break;
	case PROC_EVENT_COMM:
		deliver(hp, HOTPLUG_COMM, ev->event_data.comm.process_pid, 0);
		break;
	case PROC_EVENT_EXIT:
		retry_drop(hp, ev->event_data.exit.process_pid);
		hp->fn(hp->ctx, HOTPLUG_EXIT, ev->event_data.exit.process_pid,
		       ev->event_data.exit.parent_pid);
		break;
	default:
		break;
	}
}

int hotplug_dispatch(struct hotplug *hp)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int events = 0;

	if (!hp || hp->fd < 0)
		return 0;
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		struct nlmsghdr *nh;
		ssize_t len;

		len = recvfrom(hp->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			       &fromlen);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return events;
			if (errno == ENOBUFS) {	/* the queue overflowed: events were lost */
				pr_debug("proc connector: events lost, rescanning");
				hp->fn(hp->ctx, HOTPLUG_OVERRUN, 0, 0);
				continue;
			}
			return -errno;
		}
		if (from.nl_pid != 0)	/* only the kernel speaks here */
			continue;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)len);
		     nh = NLMSG_NEXT(nh, len)) {
			struct proc_event ev;
			struct cn_msg *cn;

			if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP)
				continue;
			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*cn)))
				continue;
			cn = NLMSG_DATA(nh);
			if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
			    cn->len < sizeof(struct proc_event) ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + cn->len))
				continue;
			/* cn->data sits at offset 36: copy it out to an aligned event */
			memcpy(&ev, cn->data, sizeof(ev));
			handle_event(hp, &ev);
			events++;
		}
	}
}
