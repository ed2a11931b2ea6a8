/* SPDX-License-Identifier: GPL-2.0-only */
/* cpuset.c - cgroup v2 cpuset partitions owned by irqres; see cpuset.h. */
#include "cpuset.h"
#include "array.h"
#include "fileio.h"
#include "irqres.h"
#include "log.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cpuset_list_parse(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	while (isspace((unsigned char)*p))
		p++;
	while (*p && *p != '\n') {
		char *end;
		unsigned long a, b;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtoul(end + 1, &end, 10);
		}
		if (a > b || b >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, set);
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n' && !isspace((unsigned char)*p))
			return -EINVAL;
		while (*p == ' ')
			p++;
	}
	return 0;
}

const char *cpuset_list_str(const cpu_set_t *set, char *buf, size_t len)
{
	if (cpuset_list_format(set, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

int cpuset_list_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int e = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		if (e == c)
			n = snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, e);
		if (n < 0 || (size_t)n >= len - off) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		off += (size_t)n;
		c = e;
	}
	return 0;
}

int cpuset_list_read(const char *path, cpu_set_t *set)
{
	char buf[4096];
	int rc = fileio_read_value(path, buf, sizeof(buf));

	if (rc)
		return rc;
	return cpuset_list_parse(buf, set);
}

static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl) {
		bool start = p == list || isspace((unsigned char)p[-1]) || p[-1] == '+';
		bool end = p[wl] == '\0' || isspace((unsigned char)p[wl]);

		if (start && end)
			return true;
	}
	return false;
}

int cpuset_check(char *err, size_t errlen)
{
	char path[PATH_MAX], buf[512];
	int rc;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", irqres_paths.cgroup);
	rc = fileio_read_value(path, buf, sizeof(buf));
	if (rc == -ENOENT) {
		snprintf(err, errlen, "no cgroup v2 at %s (%s missing): cpuset partitions need "
			 "the unified hierarchy (boot with systemd.unified_cgroup_hierarchy=1)",
			 irqres_paths.cgroup, path);
		return -EOPNOTSUPP;
	}
	if (rc) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	if (!has_word(buf, "cpuset")) {
		snprintf(err, errlen, "cpuset controller unavailable in cgroup v2 at %s: "
			 "cgroup.controllers lists \"%s\" (is cpuset bound to a cgroup v1 "
			 "hierarchy?)", irqres_paths.cgroup, buf);
		return -EOPNOTSUPP;
	}
	return 0;
}

int cpuset_enable(bool *added, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[512];
	int rc = cpuset_check(err, errlen);

	*added = false;
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", irqres_paths.cgroup);
	rc = fileio_read_value(path, buf, sizeof(buf));
	if (rc) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	if (has_word(buf, "cpuset"))
		return 0;
	rc = fileio_write(path, "+cpuset", true);
	if (rc) {
		snprintf(err, errlen, "cannot enable the cpuset controller (+cpuset into %s): %s",
			 path, strerror(-rc));
		return rc;
	}
	pr_info("enabled +cpuset in %s", path);
	*added = true;
	return 0;
}

int cpuset_disable(void)
{
	char path[PATH_MAX];
	int rc;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", irqres_paths.cgroup);
	rc = fileio_write(path, "-cpuset", true);
	if (rc)
		pr_warn("cannot take the cpuset controller back out of %s: %s", path,
			strerror(-rc));
	else
		pr_info("disabled cpuset in %s again", path);
	return rc;
}

int cpuset_partition_name(const cpu_set_t *cpus, char *name, size_t len)
{
	char list[CPUSET_NAME_MAX];
	int rc = cpuset_list_format(cpus, list, sizeof(list));

	if (rc)
		return rc;
	if (!list[0])
		return -EINVAL;
	if ((size_t)snprintf(name, len, "%s%s", CPUSET_PREFIX, list) >= len)
		return -ENOSPC;
	return 0;
}

int cpuset_group_dir(const char *cgpath, char *buf, size_t len)
{
	const char *rel = cgpath;
	int n;

	while (*rel == '/')
		rel++;
	if (*rel)
		n = snprintf(buf, len, "%s/%s", irqres_paths.cgroup, rel);
	else
		n = snprintf(buf, len, "%s", irqres_paths.cgroup);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int group_file(const char *name, const char *file, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s/%s", irqres_paths.cgroup, name, file);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The partition state word of a group: "root", "root invalid (...)", "member", ... */
static int read_partition(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	int rc = group_file(name, "cpuset.cpus.partition", path, sizeof(path));

	return rc ? rc : fileio_read_value(path, buf, len);
}

static bool partition_valid(const char *state)
{
	return strcmp(state, "root") == 0 || strcmp(state, "isolated") == 0;
}

static int group_cpus(const char *name, cpu_set_t *cpus)
{
	char path[PATH_MAX];
	int rc = group_file(name, "cpuset.cpus.effective", path, sizeof(path));

	if (rc)
		return rc;
	rc = cpuset_list_read(path, cpus);
	if (rc == 0 && CPU_COUNT(cpus) > 0)
		return 0;
	rc = group_file(name, "cpuset.cpus", path, sizeof(path));
	return rc ? rc : cpuset_list_read(path, cpus);
}

/* The group's mkdir: *created when it is new; 1 when it exists already as a valid
 * partition of exactly these CPUs (nothing to write), 0 to set it up, or -errno. */
static int partition_dir(const char *name, const cpu_set_t *cpus, const char *dir,
			 bool *created, char *err, size_t errlen)
{
	char state[256];
	cpu_set_t have;
	int rc;

	if (mkdir(dir, 0755) == 0) {
		*created = true;
		return 0;
	}
	if (errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "cpuset partition %s could not be created: mkdir %s: %s",
			 name, dir, strerror(-rc));
		return rc;
	}
	return read_partition(name, state, sizeof(state)) == 0 && partition_valid(state) &&
	       group_cpus(name, &have) == 0 && CPU_EQUAL(&have, cpus);
}

/* cpuset.cpus, cpuset.mems, then cpuset.cpus.partition = root: the kernel's order. */
static int partition_write(const char *name, const char *list, char *err, size_t errlen)
{
	char path[PATH_MAX], mems[256];
	const char *steps[][2] = {
		{ "cpuset.cpus", list }, { "cpuset.mems", mems }, { "cpuset.cpus.partition", "root" },
	};
	int rc = 0;

	snprintf(path, sizeof(path), "%s/cpuset.mems.effective", irqres_paths.cgroup);
	if (fileio_read_value(path, mems, sizeof(mems)) || !mems[0])
		snprintf(mems, sizeof(mems), "0");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		rc = group_file(name, steps[i][0], path, sizeof(path));
		if (!rc)
			rc = fileio_write(path, steps[i][1], true);
		if (rc) {
			snprintf(err, errlen, "cpuset partition %s could not be created: writing "
				 "\"%s\" to %s: %s%s", name, steps[i][1], steps[i][0], strerror(-rc),
				 rc == -EINVAL && i == 2 ? " (the CPUs must be exclusive and the root "
				 "must keep at least one)" : "");
			return rc;
		}
	}
	return 0;
}

int cpuset_partition_create(const cpu_set_t *cpus, char *name, size_t namelen, bool *created,
			    char *err, size_t errlen)
{
	char dir[PATH_MAX], list[CPUSET_NAME_MAX], state[256];
	int rc;

	*created = false;
	rc = cpuset_partition_name(cpus, name, namelen);
	if (rc) {
		snprintf(err, errlen, "no partition name for an empty or too long CPU list");
		return rc;
	}
	cpuset_list_format(cpus, list, sizeof(list));
	if (cpuset_group_dir(name, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	rc = partition_dir(name, cpus, dir, created, err, errlen);
	if (rc == 1)
		pr_debug("reusing cpuset partition %s (CPUs %s)", name, list);
	if (rc)
		return rc < 0 ? rc : 0;
	rc = partition_write(name, list, err, errlen);
	if (rc)
		goto out_remove;
	rc = read_partition(name, state, sizeof(state));
	if (rc || !partition_valid(state)) {
		snprintf(err, errlen, "cpuset partition %s is invalid: cpuset.cpus.partition "
			 "reads \"%s\", not \"root\"", name, rc ? strerror(-rc) : state);
		rc = -EINVAL;
		goto out_remove;
	}
	pr_info("cpuset partition %s %s for CPUs %s", name, *created ? "created" : "revalidated",
		list);
	return 0;

out_remove:
	if (*created && rmdir(dir) < 0)
		pr_warn("cannot remove %s after a failed set-up: %s", dir, strerror(errno));
	*created = false;
	return rc;
}

int cpuset_partition_recount(const char *name, char *err, size_t errlen)
{
	static const char *const steps[] = { "member", "root" };
	char path[PATH_MAX], state[256];
	int rc = group_file(name, "cpuset.cpus.partition", path, sizeof(path));

	for (size_t i = 0; !rc && i < sizeof(steps) / sizeof(steps[0]); i++) {
		rc = fileio_write(path, steps[i], false);
		if (rc)
			snprintf(err, errlen, "cpuset partition %s: writing \"%s\" to "
				 "cpuset.cpus.partition to make the kernel count its deadline "
				 "bandwidth again: %s", name, steps[i], strerror(-rc));
	}
	if (rc)
		return rc;
	rc = read_partition(name, state, sizeof(state));
	if (rc || !partition_valid(state)) {
		snprintf(err, errlen, "cpuset partition %s: cpuset.cpus.partition reads \"%s\" "
			 "after it was made a member and a root again to make the kernel count its "
			 "deadline bandwidth again", name, rc ? strerror(-rc) : state);
		return rc ? rc : -EINVAL;
	}
	return 0;
}

int cpuset_partition_remove(const char *name)
{
	char path[PATH_MAX], buf[64];
	int rc;

	if (strncmp(name, CPUSET_PREFIX, strlen(CPUSET_PREFIX)) != 0 || strchr(name, '/'))
		return -EINVAL;
	rc = group_file(name, "cgroup.procs", path, sizeof(path));
	if (rc)
		return rc;
	if (fileio_read_value(path, buf, sizeof(buf)) == 0 && buf[0])
		return -EBUSY;
	/*
	 * A member first: the kernel hands the CPUs back to the root, and rewrites the
	 * affinity of the root's tasks, within this write. rmdir alone does the same later,
	 * from a workqueue, after irqres has put affinities back (affinity.h).
	 */
	if (group_file(name, "cpuset.cpus.partition", path, sizeof(path)) == 0 &&
	    (rc = fileio_write(path, "member", false)) && rc != -ENOENT)
		pr_debug("%s: writing \"member\" before removal: %s", path, strerror(-rc));
	if (cpuset_group_dir(name, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (rmdir(path) < 0) {
		rc = -errno;
		pr_warn("cannot remove cpuset partition %s: %s", path, strerror(-rc));
		return rc;
	}
	pr_info("removed cpuset partition %s", path);
	return 0;
}

int cpuset_partitions_scan(struct cpuset_part **parts, size_t *n)
{
	DIR *d = opendir(irqres_paths.cgroup);
	struct cpuset_part *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	int rc = 0;

	*parts = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char state[256];
		struct cpuset_part p = { 0 };

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(p.name))
			continue;
		if (read_partition(de->d_name, state, sizeof(state)))
			continue;	/* not a group with a cpuset */
		if (strncmp(state, "root", 4) != 0 && strncmp(state, "isolated", 8) != 0)
			continue;
		snprintf(p.name, sizeof(p.name), "%s", de->d_name);
		p.valid = partition_valid(state);
		p.owned = strncmp(p.name, CPUSET_PREFIX, strlen(CPUSET_PREFIX)) == 0;
		if (group_cpus(p.name, &p.cpus))
			CPU_ZERO(&p.cpus);
		rc = ARRAY_RESERVE(v, cap, cnt + 1);
		if (rc)
			break;
		v[cnt++] = p;
	}
	closedir(d);
	if (rc) {
		free(v);
		return rc;
	}
	*parts = v;
	*n = cnt;
	return 0;
}

/* PF_NO_SETAFFINITY of pid from /proc/PID/stat: 1 set, 0 not, -errno. */
static int pid_no_setaffinity(pid_t pid)
{
	char path[PATH_MAX];
	struct fileio_stat st;
	int rc;

	snprintf(path, sizeof(path), "%s/%d/stat", irqres_paths.proc, (int)pid);
	rc = fileio_stat_read(path, &st);
	if (rc)
		return rc;
	return (st.flags & FILEIO_PF_NO_SETAFFINITY) ? 1 : 0;
}

int cpuset_pid_movable(pid_t pid)
{
	int rc = pid_no_setaffinity(pid);

	return rc < 0 ? rc : !rc;
}

int cpuset_move(pid_t pid, const char *cgpath, char *err, size_t errlen)
{
	char dir[PATH_MAX - 16], path[PATH_MAX], val[32];
	int rc = cpuset_group_dir(cgpath, dir, sizeof(dir));

	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(val, sizeof(val), "%d", (int)pid);
	rc = fileio_write(path, val, true);
	if (rc == 0) {
		pr_debug("pid %d moved into %s", (int)pid, dir);
		return 0;
	}
	if (rc == -EINVAL && pid_no_setaffinity(pid) == 1)
		snprintf(err, errlen, "pid %d cannot be moved into %s: EINVAL: it is a kernel "
			 "thread marked PF_NO_SETAFFINITY (the only other way is "
			 "admission_control: disable in the profile)", (int)pid, dir);
	else
		snprintf(err, errlen, "pid %d cannot be moved into %s: %s", (int)pid, dir,
			 strerror(-rc));
	return rc;
}

int cpuset_pid_cgroup(pid_t pid, char *path, size_t len)
{
	char file[PATH_MAX];
	int rc;

	snprintf(file, sizeof(file), "%s/%d/cgroup", irqres_paths.proc, (int)pid);
	rc = fileio_cgroup_read(file, path, len);
	return rc == -ENOENT ? -ESRCH : rc == -ENODATA ? -ENOENT : rc;
}
