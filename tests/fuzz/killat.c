/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * killat.c - an LD_PRELOAD library that SIGKILLs the process at one chosen cgroup step:
 * just before or just after a mkdir(), rmdir() or write() whose path (for write(), the
 * path the fd was opened with) contains a given text (ending in '$': ends with it) and,
 * for write(), whose data starts with a given text ("-": any). The fault campaign on
 * cpuset partitions (tests/vm) puts it under irqresd as its unit runs it.
 *
 *   IRQRES_KILLAT_TOKEN=<file>   the file arms the kill and says where:
 *                                "<mkdir|rmdir|write>|<path text>|<data prefix>|<before|after>"
 *
 * The kill happens once: the first process at the step takes (unlinks) the token. Before
 * the kill it writes one line to stderr ("killat: SIGKILL before write
 * /sys/fs/cgroup/irqres.cpu0/cpuset.cpus.partition root"), so the journal shows the
 * instant. Without a token file it only passes the calls on.
 *
 *   IRQRES_KILLAT_GATE=<file>    the kill first creates this file; while it exists, an
 *                                irqresd started afterwards (the unit's restart; not
 *                                its ExecStopPost's "irqresd --restore") waits before
 *                                main(), at most 300 s, so the state the recovery left
 *                                can be checked before the restart changes it, however
 *                                slowly the checker runs.
 *
 *   cc -shared -fPIC -O2 -o killat.so killat.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 1024

static struct {
	bool armed;
	char op[8], path[256], data[64];
	bool after;
} spec;

/* The path each watched fd was opened with (only those that match spec.path). */
static char *fd_path[MAX_FDS];

/* Reads the token file (with raw syscalls: open() is ours) into spec; unarmed without it. */
static void read_spec(void)
{
	const char *token = getenv("IRQRES_KILLAT_TOKEN");
	char buf[512], *f[4], *save = NULL;
	ssize_t len;
	int n = 0, fd;

	spec.armed = false;
	if (!token)
		return;
	fd = syscall(SYS_openat, AT_FDCWD, token, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (len <= 0)
		return;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (char *p = buf; n < 4; p = NULL) {
		char *tok = strtok_r(p, "|", &save);

		if (!tok)
			break;
		f[n++] = tok;
	}
	if (n != 4)
		return;
	snprintf(spec.op, sizeof(spec.op), "%s", f[0]);
	snprintf(spec.path, sizeof(spec.path), "%s", f[1]);
	/* "-" stands for an empty data prefix (strtok_r skips empty fields) */
	snprintf(spec.data, sizeof(spec.data), "%s", strcmp(f[2], "-") ? f[2] : "");
	spec.after = strcmp(f[3], "after") == 0;
	spec.armed = true;
}

/* Does path contain spec.path (a final '$' anchors it at the end)? */
static bool path_matches(const char *path)
{
	size_t n = strlen(spec.path), len;

	if (n && spec.path[n - 1] == '$') {
		len = strlen(path);
		return len >= n - 1 && strncmp(path + len - (n - 1), spec.path, n - 1) == 0;
	}
	return strstr(path, spec.path) != NULL;
}

static bool wanted(const char *op, const char *path)
{
	read_spec();
	return spec.armed && strcmp(op, spec.op) == 0 && path && path_matches(path);
}

/* The kill, once: the token file is taken by the first process that gets here. */
static void kill_now(const char *when, const char *op, const char *path, const char *data)
{
	const char *token = getenv("IRQRES_KILLAT_TOKEN");
	char line[512];
	int n;

	const char *gate = getenv("IRQRES_KILLAT_GATE");

	if (!token || unlink(token) < 0)
		return;
	if (gate) {
		int fd = syscall(SYS_openat, AT_FDCWD, gate, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (fd >= 0)
			syscall(SYS_close, fd);
	}
	n = snprintf(line, sizeof(line), "killat: SIGKILL %s %s %s%s%s\n", when, op, path,
		     data ? " " : "", data ? data : "");
	if (n > 0) {
		ssize_t w = syscall(SYS_write, 2, line, (size_t)n < sizeof(line) ? (size_t)n :
				    sizeof(line) - 1);
		(void)w;
	}
	kill(getpid(), SIGKILL);
}

/* The contents of a small /proc file of this process (raw syscalls: open() is ours). */
static ssize_t read_self(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = syscall(SYS_read, fd, buf, size - 1);
	syscall(SYS_close, fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* Whether this process is irqresd's main run: comm "irqresd", no "--restore" argument. */
static bool main_irqresd(void)
{
	char buf[4096];
	ssize_t len = read_self("/proc/self/comm", buf, sizeof(buf));

	if (len <= 0 || strcmp(buf, "irqresd\n") != 0)
		return false;
	len = read_self("/proc/self/cmdline", buf, sizeof(buf));
	if (len < 0)
		return false;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
		if (strcmp(buf + i, "--restore") == 0)
			return false;
	}
	return true;
}

/* The gate: an irqresd started while the gate file exists waits for it to go. */
__attribute__((constructor)) static void wait_at_gate(void)
{
	const char *gate = getenv("IRQRES_KILLAT_GATE");
	struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
	struct stat st;

	if (!gate || syscall(SYS_newfstatat, AT_FDCWD, gate, &st, 0) < 0 || !main_irqresd())
		return;
	for (int i = 0; i < 300 * 50; i++) {
		if (syscall(SYS_newfstatat, AT_FDCWD, gate, &st, 0) < 0)
			return;
		nanosleep(&tick, NULL);
	}
}

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void note_fd(int fd, const char *path)
{
	if (fd < 0 || fd >= MAX_FDS)
		return;
	free(fd_path[fd]);
	fd_path[fd] = wanted("write", path) ? strdup(path) : NULL;
}

/* open(), open64() and openat() (irqresd uses the first; others may use the rest) */
#define OPEN_MODE(flags, mode)							\
	do {									\
		if ((flags) & (O_CREAT | O_TMPFILE)) {				\
			va_list ap;						\
										\
			va_start(ap, flags);					\
			mode = va_arg(ap, mode_t);				\
			va_end(ap);						\
		}								\
	} while (0)

/* open() or open64() (the one named, looked up once into *fn), the fd noted */
static int open_noted(const char *name, int (**fn)(const char *, int, ...), const char *path,
		      int flags, mode_t mode)
{
	int fd;

	if (!*fn)
		*fn = real(name);
	fd = (*fn)(path, flags, mode);
	note_fd(fd, path);
	return fd;
}

int open(const char *path, int flags, ...)
{
	static int (*fn)(const char *, int, ...);
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return open_noted("open", &fn, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	static int (*fn)(const char *, int, ...);
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return open_noted("open64", &fn, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*fn)(int, const char *, int, ...);
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	if (!fn)
		fn = real("openat");
	fd = fn(dirfd, path, flags, mode);
	note_fd(fd, path);
	return fd;
}

int close(int fd)
{
	static int (*fn)(int);

	if (!fn)
		fn = real("close");
	if (fd >= 0 && fd < MAX_FDS) {
		free(fd_path[fd]);
		fd_path[fd] = NULL;
	}
	return fn(fd);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*fn)(int, const void *, size_t);
	const char *path = fd >= 0 && fd < MAX_FDS ? fd_path[fd] : NULL;
	bool match = path && len >= strlen(spec.data) &&
		     memcmp(buf, spec.data, strlen(spec.data)) == 0;
	char data[64];
	ssize_t rc;
	int errsave;

	if (!fn)
		fn = real("write");
	if (match) {
		snprintf(data, sizeof(data), "%.*s", (int)(len < 63 ? len : 63), (const char *)buf);
		if (!spec.after)
			kill_now("before", "write", path, data);
	}
	rc = fn(fd, buf, len);
	errsave = errno;
	if (match && spec.after)
		kill_now("after", "write", path, data);
	errno = errsave;
	return rc;
}

static int dir_op(const char *op, const char *path, int (*fn)(const char *, mode_t),
		  int (*fn_rm)(const char *), mode_t mode)
{
	bool match = wanted(op, path);
	int rc, errsave;

	if (match && !spec.after)
		kill_now("before", op, path, NULL);
	rc = fn ? fn(path, mode) : fn_rm(path);
	errsave = errno;
	if (match && spec.after)
		kill_now("after", op, path, NULL);
	errno = errsave;
	return rc;
}

int mkdir(const char *path, mode_t mode)
{
	static int (*fn)(const char *, mode_t);

	if (!fn)
		fn = real("mkdir");
	return dir_op("mkdir", path, fn, NULL, mode);
}

int rmdir(const char *path)
{
	static int (*fn)(const char *);

	if (!fn)
		fn = real("rmdir");
	return dir_op("rmdir", path, NULL, fn, 0);
}
