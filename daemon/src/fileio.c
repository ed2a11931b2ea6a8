/* SPDX-License-Identifier: GPL-2.0-only */
/* fileio.c - small files of /proc, /sys and cgroupfs; see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t fileio_read(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd, errsave;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errsave = errno;
			close(fd);
			return -errsave;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

int fileio_read_value(const char *path, char *buf, size_t len)
{
	ssize_t n = fileio_read(path, buf, len);

	if (n < 0)
		return (int)n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int fileio_read_ll(const char *path, long long *v)
{
	char buf[64], *end;
	ssize_t n = fileio_read(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	return end == buf || errno ? -EINVAL : 0;
}

int fileio_write(const char *path, const char *s, bool create)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
	size_t len = strlen(s);
	ssize_t n;
	int errsave;

	if (fd < 0 && create && errno == EACCES)
		fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	errsave = errno;
	if (close(fd) < 0 && n >= 0) {
		errsave = errno;
		n = -1;
	}
	if (n < 0)
		return -errsave;
	return (size_t)n == len ? 0 : -EIO;
}

/* One field after the comm, by its proc(5) number; 1 once the last one wanted is in. */
static int stat_field(int field, const char *p, struct fileio_stat *st)
{
	switch (field) {
	case 3:
		st->state = p[0];
		break;
	case 4:
		st->ppid = (pid_t)strtol(p, NULL, 10);
		break;
	case 9:
		st->flags = strtoul(p, NULL, 10);
		break;
	case 19:
		st->nice = (int)strtol(p, NULL, 10);
		break;
	case 20:
		st->num_threads = (int)strtol(p, NULL, 10);
		break;
	case 22:
		st->starttime = strtoull(p, NULL, 10);
		break;
	case 39:
		st->processor = (int)strtol(p, NULL, 10);
		break;
	case 40:
		st->rt_priority = (int)strtol(p, NULL, 10);
		break;
	case 41:
		st->policy = (int)strtol(p, NULL, 10);
		return 1;
	}
	return 0;
}

/*
 * "pid (comm) state ppid ..." where comm may hold blanks and ')': the comm ends at the
 * last ')'.
 */
int fileio_stat_parse(char *buf, struct fileio_stat *st)
{
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')'), *p, *save = NULL;
	size_t n;
	int field = 3;

	memset(st, 0, sizeof(*st));
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EINVAL;
	n = (size_t)(close_paren - open_paren - 1);
	if (n >= COMM_MAX)
		n = COMM_MAX - 1;
	memcpy(st->comm, open_paren + 1, n);
	for (p = strtok_r(close_paren + 1, " \n", &save); p; p = strtok_r(NULL, " \n", &save),
	     field++)
		if (stat_field(field, p, st))
			return 0;
	return field > 22 ? 0 : -EINVAL;	/* very old kernels stop before field 41 */
}

int fileio_stat_read(const char *path, struct fileio_stat *st)
{
	char buf[1024];
	ssize_t n = fileio_read(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return fileio_stat_parse(buf, st);
}

int fileio_cgroup_read(const char *path, char *out, size_t len)
{
	char buf[4096], *line, *end;
	ssize_t n = fileio_read(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	line = !strncmp(buf, "0::", 3) ? buf : strstr(buf, "\n0::");
	if (!line)
		return -ENODATA;
	line += line == buf ? 3 : 4;
	end = strchr(line, '\n');
	if (end)
		*end = '\0';
	return (size_t)snprintf(out, len, "%s", line) >= len ? -ENAMETOOLONG : 0;
}

int fileio_fsync_dir(const char *file)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int fileio_close_synced(FILE *f)
{
	int rc = 0;

	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		rc = -errno;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	return rc;
}
