/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * napiswitch.c - threaded NAPI switched on for a profile's interfaces; see napiswitch.h.
 */
#include "napiswitch.h"
#include "array.h"
#include "fileio.h"
#include "log.h"
#include "napi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define PATH_LEN 512

static void threaded_path(const char *ifname, char *buf, size_t len)
{
	snprintf(buf, len, "%s/class/net/%s/threaded", irqres_paths.sys, ifname);
}

const char *napiswitch_ifname(const struct target *t)
{
	if (!t->threaded_napi)
		return NULL;
	return t->napi ? t->napi : t->interface;
}

static bool iface_exists(const char *ifname)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "%s/class/net/%s", irqres_paths.sys, ifname);
	return faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int napiswitch_read(const char *ifname)
{
	char path[PATH_LEN];
	long long v;
	int rc;

	if (!iface_exists(ifname))
		return -ENODEV;
	threaded_path(ifname, path, sizeof(path));
	rc = fileio_read_ll(path, &v);
	if (rc)
		return rc;
	return v >= 0 && v <= 2 ? (int)v : -EINVAL;
}

const char *napiswitch_cause(int rc)
{
	switch (rc) {
	case -ENODEV:
		return "no such interface";
	case -ENOENT:
		return "no threaded file: the kernel has no threaded NAPI (5.12+)";
	case -EOPNOTSUPP:
		return "its driver has no NAPI instance to put in a kthread";
	case -EROFS:
		return "sysfs is mounted read-only";
	case -EACCES:
		return "the threaded file is not writable";
	case -EINVAL:
		return "the threaded file holds no value 0, 1 or 2";
	default:
		return strerror(-rc);
	}
}

/* Whether the threaded file of @ifname can be written: -EROFS, -EACCES or 0. A sysfs
 * attribute without write permission bits refuses root too. */
static int writable(const char *ifname)
{
	char path[PATH_LEN];
	struct statvfs vfs;
	struct stat st;

	threaded_path(ifname, path, sizeof(path));
	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		return -EROFS;
	if (stat(path, &st) < 0)
		return -errno;
	return st.st_mode & S_IWUSR ? 0 : -EACCES;
}

static int fail(char *err, size_t errlen, const struct target *t, const char *ifname, int rc)
{
	char path[PATH_LEN];

	threaded_path(ifname, path, sizeof(path));
	snprintf(err, errlen, "interface '%s' (target '%s', threaded_napi: true): cannot switch "
		 "to threaded NAPI: %s (%s)", ifname, t->name, napiswitch_cause(rc), path);
	return rc;
}

int napiswitch_check(const struct profile *prof, char *err, size_t errlen)
{
	for (size_t i = 0; i < prof->n_targets; i++) {
		const struct target *t = &prof->targets[i];
		const char *ifname = napiswitch_ifname(t);
		int rc;

		if (!ifname)
			continue;
		rc = napiswitch_read(ifname);
		if (rc == 0)
			rc = writable(ifname);
		if (rc < 0)
			return fail(err, errlen, t, ifname, rc);
	}
	return 0;
}

/* One interface: recorded, then written, then read back. */
static int switch_one(const struct target *t, const char *ifname, struct state *st,
		      char *err, size_t errlen)
{
	struct state_netdev rec = { .set = 1 };
	char path[PATH_LEN];
	int rc, now = napiswitch_read(ifname);

	if (now < 0)
		return fail(err, errlen, t, ifname, now);
	if (now != 0 || state_find_netdev(st, ifname))
		return 0;	/* threaded already (by irqres, for the profile before, or not) */
	snprintf(rec.ifname, sizeof(rec.ifname), "%s", ifname);
	rc = state_add_netdev(st, &rec);
	if (rc) {
		snprintf(err, errlen, "interface '%s': cannot record its threaded NAPI setting in "
			 "the state file: %s", ifname, strerror(-rc));
		return rc;
	}
	threaded_path(ifname, path, sizeof(path));
	rc = fileio_write(path, "1", false);
	if (!rc && napiswitch_read(ifname) <= 0)
		rc = -EIO;
	if (rc) {
		state_forget_netdev(st, ifname);
		if (rc == -EIO)
			snprintf(err, errlen, "interface '%s' (target '%s'): %s took the write of 1 "
				 "but still reads 0", ifname, t->name, path);
		return rc == -EIO ? rc : fail(err, errlen, t, ifname, rc);
	}
	pr_notice("interface %s: threaded NAPI on (threaded 0 -> 1), as target '%s' asks: "
		  "its NAPI polls run in kthreads napi/%s-<id>", ifname, t->name, ifname);
	return 0;
}

/* Whether kthread @pid has run since its first wake-up: kthread() makes it sleep once
 * (run count 1, state D) until it is woken; its first run after that (count 2) passes
 * cgroup_kthread_ready() at once. Count 2 while runnable may still be before it. Without
 * schedstat, the state alone: not D. 1 yes or gone, 0 not yet, or -errno. */
static int kthread_started(pid_t pid)
{
	char path[PATH_LEN], buf[128];
	struct fileio_stat stat;
	unsigned long long cpu, wait, runs;
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), "%s/%d/stat", irqres_paths.proc, (int)pid);
	rc = fileio_stat_read(path, &stat);
	if (rc == -ENOENT || rc == -ESRCH)
		return 1;	/* gone: nothing to wait for */
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/%d/schedstat", irqres_paths.proc, (int)pid);
	n = fileio_read(path, buf, sizeof(buf));
	if (n < 0 || sscanf(buf, "%llu %llu %llu", &cpu, &wait, &runs) != 3)
		return stat.state != 'D';
	return runs >= 3 || (runs == 2 && stat.state != 'R');
}

/* Whether every kthread of @list has started (napiswitch_started()). */
static int list_started(const char *ifname, const struct napi_list *list, char *pending,
			size_t len)
{
	int rc = 1;

	for (size_t i = 0; rc == 1 && i < list->n; i++) {
		if (list->v[i].pid <= 0)
			continue;
		rc = kthread_started(list->v[i].pid);
		if (rc == 0 && pending)
			snprintf(pending, len, "napi/%s-%u (pid %d)", ifname, list->v[i].id,
				 (int)list->v[i].pid);
	}
	return rc;
}

int napiswitch_started(const char *ifname, char *pending, size_t len)
{
	struct napi_list list = { 0 };
	enum napi_source source;
	int rc = napi_find(ifname, &list, &source);

	if (rc == 0)
		rc = list_started(ifname, &list, pending, len);
	napi_list_free(&list);
	return rc;
}

/* Waits (sleeping, so that a kthread woken on this CPU runs) until the kthreads the
 * switch of @ifname made have started, at most NAPISWITCH_SETTLE_MS. They exist once the
 * switch returns: they are found once, then only their /proc files are read. */
static void settle(const char *ifname)
{
	const struct timespec ms = { 0, 1000000 };
	struct napi_list list = { 0 };
	enum napi_source source;
	char pending[64] = "";
	int rc = napi_find(ifname, &list, &source);

	for (int waited = 0; rc == 0 && waited <= NAPISWITCH_SETTLE_MS; waited++) {
		rc = list_started(ifname, &list, pending, sizeof(pending));
		if (rc == 0)
			nanosleep(&ms, NULL);
	}
	napi_list_free(&list);
	if (rc == 0)
		pr_notice("interface %s: %s has not run in %d ms since threaded NAPI made it: "
			  "the kernel refuses to move it into a cpuset partition until it has",
			  ifname, pending, NAPISWITCH_SETTLE_MS);
	else if (rc < 0)
		pr_debug("interface %s: its NAPI kthreads: %s", ifname, strerror(-rc));
}

int napiswitch_on(const struct profile *prof, struct state *st, char *err, size_t errlen)
{
	size_t from = st->n_netdevs;
	int rc = napiswitch_check(prof, err, errlen);

	for (size_t i = 0; !rc && i < prof->n_targets; i++) {
		const char *ifname = napiswitch_ifname(&prof->targets[i]);

		if (ifname)
			rc = switch_one(&prof->targets[i], ifname, st, err, errlen);
	}
	if (rc) {
		napiswitch_restore(st, NULL, from);
		return rc;
	}
	for (size_t i = from; i < st->n_netdevs; i++)	/* switched by this call */
		settle(st->netdevs[i].ifname);
	return 0;
}

bool napiswitch_profile_switches(const struct profile *prof, const char *ifname)
{
	for (size_t i = 0; prof && i < prof->n_targets; i++) {
		const char *n = napiswitch_ifname(&prof->targets[i]);

		if (n && strcmp(n, ifname) == 0)
			return true;
	}
	return false;
}

/* Gives @rec's interface its value back when it still has irqres's. */
static int give_back(const struct state_netdev *rec)
{
	char path[PATH_LEN];
	int rc, now = napiswitch_read(rec->ifname);

	if (now == -ENODEV) {
		pr_notice("interface %s is gone: its threaded NAPI setting (%d before irqres) "
			  "went with it", rec->ifname, rec->was);
		return 0;
	}
	if (now < 0) {
		pr_err("interface %s: cannot give threaded NAPI back (was %d): %s", rec->ifname,
		       rec->was, napiswitch_cause(now));
		return now;
	}
	if (now != rec->set) {
		pr_notice("interface %s: threaded is %d: someone changed it since irqres set %d; "
			  "left as it is", rec->ifname, now, rec->set);
		return 0;
	}
	threaded_path(rec->ifname, path, sizeof(path));
	rc = fileio_write(path, rec->was == 2 ? "2" : rec->was == 1 ? "1" : "0", false);
	if (rc) {
		pr_err("%s: cannot put threaded NAPI back to %d: %s", path, rec->was,
		       napiswitch_cause(rc));
		return rc;
	}
	pr_info("interface %s: threaded NAPI back to %d, as it was before irqres", rec->ifname,
		rec->was);
	return 0;
}

int napiswitch_restore(struct state *st, const struct profile *keep, size_t from)
{
	int first = 0;

	for (size_t i = st->n_netdevs; i-- > from;) {
		struct state_netdev rec = st->netdevs[i];
		int rc;

		if (napiswitch_profile_switches(keep, rec.ifname))
			continue;
		rc = give_back(&rec);
		if (rc == 0)
			rc = state_forget_netdev(st, rec.ifname);
		if (rc && !first)
			first = rc;
	}
	return first;
}

int napiswitch_plan_notes(struct plan *plan, const struct profile *prof)
{
	char err[512];
	int rc = napiswitch_check(prof, err, sizeof(err));

	if (rc < 0) {
		plan->feasible = false;
		return array_printf(&plan->errors, &plan->n_errors, &plan->errors_cap, "%s: %s",
				    prof->path, err);
	}
	for (size_t i = 0; !rc && i < prof->n_targets; i++) {
		const char *ifname = napiswitch_ifname(&prof->targets[i]);

		if (ifname && napiswitch_read(ifname) == 0)
			rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
					  "interface '%s': threaded NAPI is off (threaded 0): "
					  "applying switches it on (target '%s'), its NAPI kthreads "
					  "napi/%s-<id> appear then, and it goes back to 0 on stop",
					  ifname, prof->targets[i].name, ifname);
	}
	return rc;
}
