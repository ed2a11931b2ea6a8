// SPDX-License-Identifier: GPL-2.0-only
/* napi.c - an interface's NAPI instances and their kthreads: see napi.h. */
#include "napi.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "array.h"
#include "fileio.h"
#include "irqres.h"

#define NAPI_FAMILY_NAME "netdev"
#define PF_KTHREAD 0x00200000u
#define KTHREADD_PID 2

static int napi_push(struct napi_list *list, const struct napi_info *ni)
{
	if (ARRAY_RESERVE(list->v, list->cap, list->n + 1))
		return -ENOMEM;
	list->v[list->n++] = *ni;
	return 0;
}

void napi_list_free(struct napi_list *list)
{
	free(list->v);
	memset(list, 0, sizeof(*list));
}

/* The attributes after a genetlink header: calls @fn(type, data, len, arg) for each.
 * Returns 0, -EBADMSG when one runs past the message, or what @fn returned. */
static int each_attr(const struct nlmsghdr *nh, int (*fn)(int, const void *, size_t, void *),
		     void *arg)
{
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;

	if (nh->nlmsg_len < off)
		return -EBADMSG;
	while (off + NLA_HDRLEN <= nh->nlmsg_len) {
		const struct nlattr *a = (const void *)((const char *)nh + off);
		int rc;

		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > nh->nlmsg_len)
			return -EBADMSG;
		rc = fn(a->nla_type & NLA_TYPE_MASK, (const char *)a + NLA_HDRLEN,
			a->nla_len - NLA_HDRLEN, arg);
		if (rc)
			return rc;
		off += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

/* The -errno of an NLMSG_ERROR message (0 for an ACK), -EBADMSG when it is cut. */
static int nl_error(const struct nlmsghdr *nh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nh);

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EBADMSG;
	return e->error > 0 ? -e->error : e->error;
}

/* Walks the netlink messages of @buf: @msg is called for each data message; stops at
 * NLMSG_DONE (returns 1) or an error.  Returns 0 when the buffer ended without DONE. */
static int each_msg(const void *buf, size_t len, int (*msg)(const struct nlmsghdr *, void *),
		    void *arg)
{
	const struct nlmsghdr *nh = buf;
	size_t left = len;

	for (; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
		int rc;

		if (nh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nh->nlmsg_type == NLMSG_ERROR) {
			rc = nl_error(nh);
			if (rc)
				return rc;
			continue;
		}
		rc = msg(nh, arg);
		if (rc)
			return rc;
	}
	return left ? -EBADMSG : 0;
}

static int u32_of(const void *data, size_t len, uint32_t *v)
{
	if (len < sizeof(*v))
		return -EBADMSG;
	memcpy(v, data, sizeof(*v));
	return 0;
}

static int family_attr(int type, const void *data, size_t len, void *arg)
{
	if (type != CTRL_ATTR_FAMILY_ID)
		return 0;
	if (len < sizeof(uint16_t))
		return -EBADMSG;
	memcpy(arg, data, sizeof(uint16_t));
	return 0;
}

static int family_msg(const struct nlmsghdr *nh, void *arg)
{
	return each_attr(nh, family_attr, arg);
}

int napi_parse_family(const void *buf, size_t len, uint16_t *family)
{
	int rc;

	*family = 0;
	rc = each_msg(buf, len, family_msg, family);
	if (rc < 0)
		return rc;
	return *family ? 0 : -EBADMSG;
}

struct dump_ctx {
	int ifindex;
	struct napi_list *list;
	struct napi_info cur;
};

static int napi_attr(int type, const void *data, size_t len, void *arg)
{
	struct napi_info *ni = arg;
	uint32_t v;
	int rc;

	if (type < NAPI_NETDEV_A_NAPI_IFINDEX || type > NAPI_NETDEV_A_NAPI_PID)
		return 0;
	rc = u32_of(data, len, &v);
	if (rc)
		return rc;
	switch (type) {
	case NAPI_NETDEV_A_NAPI_IFINDEX: ni->ifindex = (int)v; break;
	case NAPI_NETDEV_A_NAPI_ID: ni->id = v; break;
	case NAPI_NETDEV_A_NAPI_IRQ: ni->irq = (int)v; break;
	default: ni->pid = (pid_t)v; break;
	}
	return 0;
}

static int dump_msg(const struct nlmsghdr *nh, void *arg)
{
	struct dump_ctx *c = arg;
	struct napi_info ni = { .irq = -1 };
	int rc = each_attr(nh, napi_attr, &ni);

	if (rc)
		return rc;
	if (!ni.id)
		return -EBADMSG;
	if (c->ifindex && ni.ifindex != c->ifindex)
		return 0;
	return napi_push(c->list, &ni);
}

int napi_parse_dump(const void *buf, size_t len, int ifindex, struct napi_list *list)
{
	struct dump_ctx c = { .ifindex = ifindex, .list = list };

	return each_msg(buf, len, dump_msg, &c);
}

/* Appends attribute @type holding @len bytes of @data to the message in @buf. */
static void put_attr(char *buf, int type, const void *data, size_t len)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct nlattr *a = (struct nlattr *)(buf + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = (uint16_t)type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends a genetlink request of @cmd to @family on @fd. 0 or -errno. */
static int send_req(int fd, uint16_t family, uint8_t cmd, uint16_t flags, int attr,
		    const void *data, size_t len)
{
	char buf[128] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(nh);
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	nh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	nh->nlmsg_type = family;
	nh->nlmsg_flags = NLM_F_REQUEST | flags;
	nh->nlmsg_seq = 1;
	g->cmd = cmd;
	g->version = 1;
	if (attr)
		put_attr(buf, attr, data, len);
	if (sendto(fd, buf, nh->nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* Receives one buffer into @buf.  Returns its length or -errno. */
static ssize_t recv_buf(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len, 0);

	return n < 0 ? -errno : n;
}

static int resolve_family(int fd, uint16_t *family)
{
	static char buf[8192];
	ssize_t n;
	int rc = send_req(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, CTRL_ATTR_FAMILY_NAME,
			  NAPI_FAMILY_NAME, sizeof(NAPI_FAMILY_NAME));

	if (rc)
		return rc;
	n = recv_buf(fd, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return napi_parse_family(buf, (size_t)n, family);
}

int napi_query_netlink(int ifindex, struct napi_list *list)
{
	static char buf[32768];
	uint16_t family;
	uint32_t idx = (uint32_t)ifindex;
	int fd, rc;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	rc = resolve_family(fd, &family);
	if (rc)
		goto out_close;
	rc = send_req(fd, family, NAPI_NETDEV_CMD_NAPI_GET, NLM_F_DUMP,
		      NAPI_NETDEV_A_NAPI_IFINDEX, &idx, sizeof(idx));
	while (!rc) {
		ssize_t n = recv_buf(fd, buf, sizeof(buf));

		if (n <= 0) {
			rc = n < 0 ? (int)n : -EBADMSG;
			break;
		}
		rc = napi_parse_dump(buf, (size_t)n, ifindex, list);
	}
	if (rc == 1)
		rc = 0;
out_close:
	close(fd);
	return rc;
}

/* "napi/<ifname>-<id>" -> id; 0 when @comm is not such a name, -1 when the id is cut. */
static long napi_comm_id(const char *comm, const char *ifname)
{
	size_t n = strlen(ifname);
	const char *p;
	char *end;
	long id;

	if (strncmp(comm, "napi/", 5) || strncmp(comm + 5, ifname, n) || comm[5 + n] != '-')
		return 0;
	p = comm + 5 + n + 1;
	if (strlen(comm) >= COMM_MAX - 1)
		return -1;	/* the kernel may have cut the id's last digits */
	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	id = strtol(p, &end, 10);
	return (*end || errno || id <= 0 || id > UINT_MAX) ? 0 : id;
}

/* One /proc entry: a kthread of kthreadd named after @ifname's NAPI -> @list. */
static int scan_one(const char *name, const char *ifname, struct napi_list *list, int *cut)
{
	char path[512];
	struct fileio_stat st;
	long id;

	snprintf(path, sizeof(path), "%s/%s/stat", irqres_paths.proc, name);
	if (fileio_stat_read(path, &st))
		return 0;	/* gone meanwhile, or not a process */
	if (!(st.flags & PF_KTHREAD) || st.ppid != KTHREADD_PID)
		return 0;
	id = napi_comm_id(st.comm, ifname);
	if (id < 0 && cut)
		(*cut)++;
	if (id <= 0)
		return 0;
	struct napi_info ni = { .id = (unsigned int)id, .irq = -1, .pid = atoi(name) };

	return napi_push(list, &ni);
}

int napi_scan_threads(const char *ifname, struct napi_list *list, int *cut)
{
	DIR *d = opendir(irqres_paths.proc);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return -errno;
	while (!rc && (de = readdir(d)) != NULL)
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			rc = scan_one(de->d_name, ifname, list, cut);
	closedir(d);
	return rc;
}

int napi_threaded(const char *ifname)
{
	char path[512];
	long long v;
	int rc;

	snprintf(path, sizeof(path), "%s/class/net/%s/threaded", irqres_paths.sys, ifname);
	rc = fileio_read_ll(path, &v);
	if (rc)
		return rc;
	return v != 0;
}

static int ifindex_of(const char *ifname)
{
	char path[512];
	long long v;
	int rc;

	snprintf(path, sizeof(path), "%s/class/net/%s/ifindex", irqres_paths.sys, ifname);
	rc = fileio_read_ll(path, &v);
	if (rc == -ENOENT)
		return -ENODEV;
	if (rc)
		return rc;
	return v > 0 && v <= INT_MAX ? (int)v : -EINVAL;
}

/* Does any instance of @list name its kthread (a kernel whose napi-get reports pid)? */
static int any_pid(const struct napi_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		if (list->v[i].pid > 0)
			return 1;
	return 0;
}

int napi_find(const char *ifname, struct napi_list *list, enum napi_source *source)
{
	int ifindex = ifindex_of(ifname);
	int rc;

	list->n = 0;
	if (ifindex < 0)
		return ifindex;
	/* only the real kernel answers netlink: a fixture tree has none of it */
	if (irqres_paths_real_proc()) {
		rc = napi_query_netlink(ifindex, list);
		if (!rc && (any_pid(list) || napi_threaded(ifname) != 1)) {
			*source = NAPI_FROM_NETLINK;
			return 0;
		}
		list->n = 0;
	}
	*source = NAPI_FROM_THREADS;
	rc = napi_scan_threads(ifname, list, NULL);
	for (size_t i = 0; i < list->n; i++)
		list->v[i].ifindex = ifindex;
	return rc;
}
