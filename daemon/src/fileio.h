/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fileio.h - the small files of /proc, /sys and cgroupfs: read whole, one value, one
 * number, written in one write(2), and the fields of /proc/PID/stat.
 *
 * Every function returns 0 (or a length) or -errno, the errno of the failing call; none
 * logs. A missing file is -ENOENT: callers that read a thread's files turn it into
 * -ESRCH themselves where "gone" is what it means.
 */
#ifndef IRQRES_FILEIO_H
#define IRQRES_FILEIO_H

#include "irqres.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The whole file into buf, NUL-terminated (a longer one is cut at len - 1 bytes).
 * Returns its length. */
ssize_t fileio_read(const char *path, char *buf, size_t len);
/* fileio_read() without trailing newlines and blanks: a file holding one value. */
int fileio_read_value(const char *path, char *buf, size_t len);
/* The integer a file starts with (blanks before it allowed); -EINVAL for none. */
int fileio_read_ll(const char *path, long long *v);
/* s in one write(2) (cgroup and sysctl files take one value per write). With create,
 * O_CREAT serves fixture trees of plain files; cgroupfs cannot create files and answers
 * a missing one with EACCES then, so the open is retried without it for the real errno. */
int fileio_write(const char *path, const char *s, bool create);
/* fsyncs the directory that holds @file (after a rename or unlink in it): 0 or -errno. */
int fileio_fsync_dir(const char *file);
/* Flushes, fsyncs and closes @f: 0 or the first -errno. */
int fileio_close_synced(FILE *f);

/* The fields of /proc/PID/stat irqresd uses (proc(5) numbers). */
struct fileio_stat {
	char comm[COMM_MAX];		/* 2 */
	char state;			/* 3: R, S, D, ... */
	pid_t ppid;			/* 4 */
	unsigned long flags;		/* 9: PF_* */
	int nice;			/* 19 */
	int num_threads;		/* 20 */
	unsigned long long starttime;	/* 22: clock ticks after boot */
	int processor;			/* 39: the CPU it last ran on */
	int rt_priority;		/* 40 */
	int policy;			/* 41 */
};
/* The kernel's PF_NO_SETAFFINITY (include/linux/sched.h): the thread cannot be moved. */
#define FILEIO_PF_NO_SETAFFINITY 0x04000000u

/* Reads and parses a stat file (/proc/PID/stat, /proc/PID/task/TID/stat); -EINVAL when
 * it is not one (fields up to starttime are required: very old kernels end before 41). */
int fileio_stat_read(const char *path, struct fileio_stat *st);
/* The parser alone, for buf as the kernel writes it; buf is cut into pieces. */
int fileio_stat_parse(char *buf, struct fileio_stat *st);

/* The cgroup v2 path (the "0::" line) of a /proc/PID/cgroup file into out: 0,
 * -ENODATA when the file has no v2 line (cgroup v1 only), -ENAMETOOLONG when the path
 * was cut to fit, or the read's -errno. */
int fileio_cgroup_read(const char *path, char *out, size_t len);

#endif /* IRQRES_FILEIO_H */
