/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * match.c - resolves a profile's targets to threads.
 *
 * What each selector reads (all under irqres_paths.sys / .proc):
 *   interface IF  /sys/class/net/IF/device/msi_irqs/ (the IRQs of a multi-queue NIC); for
 *                 a virtio NIC (device virtioN) the PCI parent's msi_irqs/; else
 *                 /sys/class/net/IF/device/irq; plus each /proc/interrupts line with an
 *                 action naming IF ("IF", "IF-...", "IF@...", "IF:...") or the virtio
 *                 device ("virtioN-...").  An MSI IRQ belongs to the device alone; on a
 *                 legacy IRQ shared by several actions only the threads whose own action
 *                 names the interface are taken.
 *   driver D      the PCI devices (/sys/bus/pci/devices/DEV) that own the IRQ: through
 *                 DEV/msi_irqs/N, or DEV/irq when the device has no MSI; the driver is
 *                 the basename of DEV/driver, and also that of DEV's virtio children
 *                 (so virtio_net works beside virtio-pci); '-' and '_' compare equal as
 *                 in module names.  IRQs of non-PCI devices have no driver here.  On a
 *                 legacy IRQ shared by several devices, `driver` takes every thread of
 *                 the IRQ: add `action` to pick one.
 *   task pid P    the thread P, or every thread of process P.
 *   napi IF       the threaded NAPI kthreads of IF (napi.h: the pids napi-get reports,
 *                 else the kthreads named napi/IF-<id>).
 */
#include "match.h"
#include "interrupts.h"
#include "array.h"
#include "discover.h"
#include "fileio.h"
#include "napi.h"
#include "napiswitch.h"
#include "target_kind.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_LEN 640
#define NAME_LEN 256

struct int_set {
	int *v;
	size_t n, cap;
};

/* An IRQ and a driver of a device that owns it. */
struct irq_driver {
	int irq;
	char driver[NAME_LEN];
};

struct driver_map {
	struct irq_driver *v;
	size_t n, cap;
	bool loaded;
};

/* What a target's selectors resolve to on this machine, now. */
struct resolved {
	struct int_set msi;		/* the interface's MSI IRQs (exclusive) */
	struct int_set legacy;		/* its other IRQs (maybe shared) */
	char vdev[NAME_LEN];		/* virtioN when the interface is a virtio device */
	struct int_set napi;		/* the pids of the NAPI kthreads of a napi target */
};

/* snprintf for paths: false when the path does not fit (then nothing under it exists). */
static bool path_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

static int set_add(struct int_set *s, int v)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return 0;
	if (ARRAY_RESERVE(s->v, s->cap, s->n + 1))
		return -ENOMEM;
	s->v[s->n++] = v;
	return 0;
}

static bool set_has(const struct int_set *s, int v)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return true;
	return false;
}

static void set_free(struct int_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int parse_irq(const char *s)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtol(s, &end, 10);
	return *end && *end != '\n' ? -1 : v > INT32_MAX ? -1 : (int)v;
}

/* Adds the numbers named by the entries of directory @path.  A missing one adds none. */
static int add_dir_irqs(const char *path, struct int_set *s, bool *found)
{
	struct dirent *de;
	int rc = 0;
	DIR *d = opendir(path);

	if (!d)
		return 0;
	*found = true;
	while (!rc && (de = readdir(d))) {
		int irq = parse_irq(de->d_name);

		if (irq >= 0)
			rc = set_add(s, irq);
	}
	closedir(d);
	return rc;
}

static int read_int_file(const char *path)
{
	char buf[32];

	return fileio_read(path, buf, sizeof(buf)) < 0 ? -1 : parse_irq(buf);
}

/* The basename of symlink @path into @out; "" when it is no link. */
static void link_name(const char *path, char *out, size_t len)
{
	char target[PATH_LEN];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *base;

	out[0] = '\0';
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	path_fmt(out, len, "%s", base ? base + 1 : target);
}

/* Whether action @a belongs to interface @ifname (or its virtio device @vdev). */
static bool names_iface(const char *a, const char *ifname, const char *vdev)
{
	size_t n = strlen(ifname), v = strlen(vdev);

	if (!strncmp(a, ifname, n) && (!a[n] || strchr("-@:", a[n])))
		return true;
	return v && !strncmp(a, vdev, v) && a[v] == '-';
}

/* The next line of @f into @line; of a line longer than @len, the rest is skipped. */
static char *next_line(FILE *f, char *line, size_t len)
{
	int c;

	if (!fgets(line, (int)len, f))
		return NULL;
	if (!strchr(line, '\n'))
		while ((c = getc(f)) != EOF && c != '\n')
			;
	return line;
}

/* /proc/interrupts past its header, with its CPU columns in *@ncpu; NULL when unreadable. */
static FILE *interrupts_open(int *ncpu)
{
	char path[PATH_LEN], line[4096];
	FILE *f;

	path_fmt(path, sizeof(path), "%s/interrupts", irqres_paths.proc);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	*ncpu = next_line(f, line, sizeof(line)) ? interrupts_ncpu(line) : -EINVAL;
	if (*ncpu < 0) {
		fclose(f);
		return NULL;
	}
	return f;
}

/* IRQs of /proc/interrupts lines with an action naming the interface. */
static int add_interrupts_lines(const char *ifname, const char *vdev, struct int_set *s)
{
	char line[4096];
	int rc = 0, ncpu;
	FILE *f = interrupts_open(&ncpu);

	if (!f)
		return 0;	/* the sysfs view is enough */
	while (!rc && next_line(f, line, sizeof(line))) {
		struct interrupts_row row;
		char *tok, *save = NULL;

		if (interrupts_line(line, ncpu, &row) != 1)
			continue;
		for (tok = strtok_r(line + (row.rest - line), " ,\t\n", &save); tok;
		     tok = strtok_r(NULL, " ,\t\n", &save)) {
			if (names_iface(tok, ifname, vdev)) {
				rc = set_add(s, row.irq);
				break;
			}
		}
	}
	fclose(f);
	return rc;
}

static int resolve_interface(const char *ifname, struct resolved *r)
{
	char dev[PATH_LEN], path[PATH_LEN + 32], name[NAME_LEN];
	bool found = false;
	int rc, irq;

	path_fmt(dev, sizeof(dev), "%s/class/net/%s/device", irqres_paths.sys, ifname);
	link_name(dev, name, sizeof(name));
	if (!strncmp(name, "virtio", 6))
		snprintf(r->vdev, sizeof(r->vdev), "%s", name);
	path_fmt(path, sizeof(path), "%s/msi_irqs", dev);
	rc = add_dir_irqs(path, &r->msi, &found);
	if (!rc && !found && r->vdev[0]) {
		path_fmt(path, sizeof(path), "%s/../msi_irqs", dev);
		rc = add_dir_irqs(path, &r->msi, &found);
	}
	if (!rc && !found) {
		path_fmt(path, sizeof(path), "%s/irq", dev);
		irq = read_int_file(path);
		if (irq > 0)
			rc = set_add(&r->legacy, irq);
	}
	if (!rc)
		rc = add_interrupts_lines(ifname, r->vdev, &r->legacy);
	return rc;
}

static int driver_map_add(struct driver_map *m, int irq, const char *driver)
{
	if (!driver[0])
		return 0;
	if (ARRAY_RESERVE(m->v, m->cap, m->n + 1))
		return -ENOMEM;
	m->v[m->n].irq = irq;
	snprintf(m->v[m->n].driver, sizeof(m->v[m->n].driver), "%s", driver);
	m->n++;
	return 0;
}

/* The drivers of one PCI device and of its virtio children, comma separated. */
static void device_drivers(const char *dev, char *out, size_t len)
{
	char path[PATH_LEN + NAME_LEN], name[NAME_LEN];
	struct dirent *de;
	size_t used;
	DIR *d;

	path_fmt(path, sizeof(path), "%s/driver", dev);
	link_name(path, out, len);
	d = opendir(dev);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "virtio", 6))
			continue;
		path_fmt(path, sizeof(path), "%s/%s/driver", dev, de->d_name);
		link_name(path, name, sizeof(name));
		used = strlen(out);
		if (name[0] && used + strlen(name) + 2 <= len)
			snprintf(out + used, len - used, "%s%s", used ? "," : "", name);
	}
	closedir(d);
}

static int load_pci_device(struct driver_map *m, const char *dev)
{
	char path[PATH_LEN + 16], drivers[NAME_LEN], *drv, *save = NULL;
	struct int_set irqs = { 0 };
	bool msi = false;
	size_t i;
	int rc, irq;

	device_drivers(dev, drivers, sizeof(drivers));
	if (!drivers[0])
		return 0;
	path_fmt(path, sizeof(path), "%s/msi_irqs", dev);
	rc = add_dir_irqs(path, &irqs, &msi);
	if (!rc && !msi) {
		path_fmt(path, sizeof(path), "%s/irq", dev);
		irq = read_int_file(path);
		if (irq > 0)
			rc = set_add(&irqs, irq);
	}
	for (drv = strtok_r(drivers, ",", &save); !rc && drv; drv = strtok_r(NULL, ",", &save))
		for (i = 0; !rc && i < irqs.n; i++)
			rc = driver_map_add(m, irqs.v[i], drv);
	set_free(&irqs);
	return rc;
}

static int driver_map_load(struct driver_map *m)
{
	char dir[PATH_LEN], dev[PATH_LEN + NAME_LEN];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (m->loaded)
		return 0;
	m->loaded = true;
	path_fmt(dir, sizeof(dir), "%s/bus/pci/devices", irqres_paths.sys);
	d = opendir(dir);
	if (!d)
		return 0;	/* no PCI: no IRQ has a known driver */
	while (!rc && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		path_fmt(dev, sizeof(dev), "%s/%s", dir, de->d_name);
		rc = load_pci_device(m, dev);
	}
	closedir(d);
	return rc;
}

static void driver_map_free(struct driver_map *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Module names treat '-' and '_' alike. */
static bool same_driver(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	return !*a && !*b;
}

static bool irq_has_driver(const struct driver_map *m, int irq, const char *driver)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].irq == irq && same_driver(m->v[i].driver, driver))
			return true;
	return false;
}

/* Calls @fn on each comma-separated name of @list until it returns true. */
static bool any_action(const char *list, bool (*fn)(const char *, const void *),
		       const void *arg)
{
	char buf[ACTIONS_MAX], *name, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save))
		if (fn(name, arg))
			return true;
	return false;
}

static bool action_fnmatch(const char *name, const void *glob)
{
	return !fnmatch(glob, name, 0);
}

struct iface_arg {
	const char *ifname, *vdev;
};

static bool action_names_iface(const char *name, const void *arg)
{
	const struct iface_arg *a = arg;

	return names_iface(name, a->ifname, a->vdev);
}

static bool irq_is_shared(int irq)
{
	char buf[ACTIONS_MAX];

	return !discover_irq_actions(irq, buf, sizeof(buf)) && strchr(buf, ',');
}

static bool irq_target_selects(const struct target *t, const struct resolved *r,
			       const struct driver_map *drivers, const struct thread_info *ti)
{
	size_t i;

	if (!ti->is_irq || (ti->secondary && !t->secondary))
		return false;
	if (t->interface) {
		struct iface_arg a = { t->interface, r->vdev };

		if (!set_has(&r->msi, ti->irq) &&
		    !(set_has(&r->legacy, ti->irq) &&
		      (any_action(ti->actions, action_names_iface, &a) || !irq_is_shared(ti->irq))))
			return false;
	}
	if (t->n_irqs) {
		for (i = 0; i < t->n_irqs && t->irqs[i] != ti->irq; i++)
			;
		if (i == t->n_irqs)
			return false;
	}
	if (t->action_glob && !any_action(ti->actions, action_fnmatch, t->action_glob))
		return false;
	if (t->driver && !irq_has_driver(drivers, ti->irq, t->driver))
		return false;
	return true;
}

/* Kernel threads, init and irqresd (this process, or another's threads by their name)
 * are never a task target's. */
static bool never_a_task(const struct thread_info *ti)
{
	return ti->kthread || ti->pid == 1 || ti->tgid == 1 || ti->tgid == getpid() ||
	       !strcmp(ti->comm, IRQRES_DAEMON_COMM);
}

bool match_task_selects(const struct globs *comm, const pid_t *pids, size_t n_pids,
			const char *cgroup, const struct thread_info *ti)
{
	size_t i;

	if (never_a_task(ti) || !globs_match(comm, ti->comm))
		return false;
	if (n_pids) {
		for (i = 0; i < n_pids && pids[i] != ti->pid && pids[i] != ti->tgid; i++)
			;
		if (i == n_pids)
			return false;
	}
	if (cgroup) {
		size_t n = strlen(cgroup);

		while (n > 1 && cgroup[n - 1] == '/')
			n--;	/* "/app.slice/" is "/app.slice" */
		if (strncmp(ti->cgroup, cgroup, n) ||
		    !(ti->cgroup[n] == '\0' || ti->cgroup[n] == '/' || n == 1))
			return false;
	}
	return true;
}

static bool task_target_selects(const struct target *t, const struct thread_info *ti)
{
	return match_task_selects(&t->task_comm, t->pids, t->n_pids, t->task_cgroup, ti);
}

static bool softirq_target_selects(const struct target *t, const struct thread_info *ti)
{
	size_t i;

	if (!ti->is_softirqd || !(t->softirqd_mask & (1u << ti->softirqd_kind)))
		return false;
	for (i = 0; i < t->n_softirqd_cpus && t->softirqd_cpus[i] != ti->softirqd_cpu; i++)
		;
	return !t->n_softirqd_cpus || i < t->n_softirqd_cpus;
}

static void resolved_free(struct resolved *r)
{
	set_free(&r->msi);
	set_free(&r->legacy);
	set_free(&r->napi);
}

/* The kthreads polling @ifname's NAPI instances; none when there is no such interface. */
static int resolve_napi(const char *ifname, struct resolved *r)
{
	struct napi_list list = { 0 };
	enum napi_source src;
	int rc = napi_find(ifname, &list, &src);

	if (rc == -ENODEV)
		rc = 0;	/* a selector problem (match_selector_problems()) */
	for (size_t i = 0; !rc && i < list.n; i++)
		if (list.v[i].pid > 0)
			rc = set_add(&r->napi, list.v[i].pid);
	napi_list_free(&list);
	return rc;
}

static int resolve(const struct target *t, struct resolved *r, struct driver_map *drivers)
{
	int rc = 0;

	memset(r, 0, sizeof(*r));
	switch (t->kind) {
	case TARGET_IRQ:
		if (t->interface)
			rc = resolve_interface(t->interface, r);
		if (!rc && t->with_napi)
			rc = resolve_napi(t->interface, r);
		if (!rc && t->driver)
			rc = driver_map_load(drivers);
		return rc;
	case TARGET_TASK:
		return 0;	/* task selectors read nothing ahead */
	case TARGET_NAPI:
		return resolve_napi(t->napi, r);
	case TARGET_SOFTIRQ:
		return 0;	/* the name and the CPU tell */
	}
	return -EINVAL;
}

static bool selects(const struct target *t, const struct resolved *r,
		    const struct driver_map *drivers, const struct thread_info *ti)
{
	switch (t->kind) {
	case TARGET_IRQ:
		if (ti->is_napi)	/* with_napi: the interface's NAPI kthreads */
			return t->with_napi && set_has(&r->napi, ti->pid);
		return irq_target_selects(t, r, drivers, ti);
	case TARGET_TASK:
		return task_target_selects(t, ti);
	case TARGET_NAPI:
		return ti->is_napi && set_has(&r->napi, ti->pid);
	case TARGET_SOFTIRQ:
		return softirq_target_selects(t, ti);
	}
	return false;
}

/* Whether IRQ @irq exists: /sys/kernel/irq/N, /proc/irq/N or a /proc/interrupts line. */
static bool irq_exists(int irq)
{
	char path[PATH_LEN], line[4096];
	struct interrupts_row row;
	bool found = false;
	int ncpu;
	FILE *f;

	path_fmt(path, sizeof(path), "%s/kernel/irq/%d", irqres_paths.sys, irq);
	if (access(path, F_OK) == 0)
		return true;
	path_fmt(path, sizeof(path), "%s/irq/%d", irqres_paths.proc, irq);
	if (access(path, F_OK) == 0)
		return true;
	f = interrupts_open(&ncpu);
	if (!f)
		return false;
	while (!found && next_line(f, line, sizeof(line)))
		found = interrupts_line(line, ncpu, &row) == 1 && row.irq == irq;
	fclose(f);
	return found;
}

static int add_problem(struct match_problem *out, size_t max, size_t *n, int line,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int add_problem(struct match_problem *out, size_t max, size_t *n, int line,
		       const char *fmt, ...)
{
	va_list ap;

	if (*n == max)
		return 0;
	out[*n].line = line;
	va_start(ap, fmt);
	vsnprintf(out[*n].text, sizeof(out[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
	return 0;
}

/* The NAPI kthreads of the existing interface @ifname, selected at @line: none where it
 * has no NAPI, or where it polls in soft IRQs while the profile does not switch it
 * (@switched: threaded_napi). */
/* Whether @ifname polls in kthreads once @prof (or @t alone) is applied. */
static bool switched(const struct profile *prof, const struct target *t, const char *ifname)
{
	return t->threaded_napi || napiswitch_profile_switches(prof, ifname);
}

static void napi_problems(const char *ifname, int line, bool switched,
			  struct match_problem *out, size_t max, size_t *n)
{
	int v = napi_threaded(ifname);

	if (v < 0)
		add_problem(out, max, n, line, "interface '%s': %s/class/net/%s/threaded: %s",
			    ifname, irqres_paths.sys, ifname, napiswitch_cause(v));
	else if (v == 0 && !switched)
		add_problem(out, max, n, line, "interface '%s' polls NAPI in soft IRQs "
			    "(threaded is 0): it has no napi/%s-* kthread until threaded_napi: "
			    "true switches it", ifname, ifname);
}

/* The IRQ selectors of @t that name what this machine does not have. */
static int irq_selector_problems(const struct profile *prof, const struct target *t,
				 struct match_problem *out, size_t max)
{
	struct driver_map drivers = { 0 };
	struct resolved r;
	char path[PATH_LEN];
	size_t n = 0, i;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	if (t->interface) {
		path_fmt(path, sizeof(path), "%s/class/net/%s", irqres_paths.sys, t->interface);
		if (faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
			add_problem(out, max, &n, t->interface_line, "interface '%s' does not exist "
				    "(no %s)", t->interface, path);
		} else {
			rc = resolve_interface(t->interface, &r);
			if (!rc && !r.msi.n && !r.legacy.n)
				add_problem(out, max, &n, t->interface_line, "interface '%s' has no "
					    "IRQ (no device IRQs, no /proc/interrupts line names it)",
					    t->interface);
			if (!rc && t->with_napi)
				napi_problems(t->interface, t->with_napi_line,
					      switched(prof, t, t->interface), out, max, &n);
		}
	}
	/* at most @max problems are reported: no need to look further (each look may
	 * read /proc/interrupts) */
	for (i = 0; !rc && i < t->n_irqs && n < max; i++)
		if (!irq_exists(t->irqs[i]))
			add_problem(out, max, &n, t->irq_line, "IRQ %d does not exist (not in "
				    "%s/interrupts)", t->irqs[i], irqres_paths.proc);
	if (!rc && t->driver) {
		rc = driver_map_load(&drivers);
		for (i = 0; !rc && i < drivers.n; i++)
			if (same_driver(drivers.v[i].driver, t->driver))
				break;
		if (!rc && i == drivers.n)
			add_problem(out, max, &n, t->driver_line, "driver '%s' owns no IRQ (no PCI "
				    "device with an IRQ is bound to it)", t->driver);
	}
	driver_map_free(&drivers);
	resolved_free(&r);
	return rc < 0 ? rc : (int)n;
}

/* The napi selector of @t: an interface this machine does not have, or napi_problems. */
static int napi_selector_problems(const struct profile *prof, const struct target *t,
				  struct match_problem *out, size_t max)
{
	char path[PATH_LEN];
	size_t n = 0;

	path_fmt(path, sizeof(path), "%s/class/net/%s", irqres_paths.sys, t->napi);
	if (faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		add_problem(out, max, &n, t->napi_line, "interface '%s' does not exist (no %s)",
			    t->napi, path);
	else
		napi_problems(t->napi, t->napi_line, switched(prof, t, t->napi), out, max, &n);
	return (int)n;
}

/* The CPUs of a softirq target this machine does not have. */
static int softirq_selector_problems(const struct target *t, struct match_problem *out,
				     size_t max)
{
	char path[PATH_LEN];
	size_t n = 0;

	for (size_t i = 0; i < t->n_softirqd_cpus && n < max; i++) {
		path_fmt(path, sizeof(path), "%s/devices/system/cpu/cpu%d", irqres_paths.sys,
			 t->softirqd_cpus[i]);
		if (access(path, F_OK) < 0)
			add_problem(out, max, &n, t->softirq_line, "CPU %d does not exist (no %s)",
				    t->softirqd_cpus[i], path);
	}
	return (int)n;
}

int match_selector_problems(const struct profile *prof, const struct target *t,
			    struct match_problem *out, size_t max)
{
	switch (t->kind) {
	case TARGET_IRQ:
		return irq_selector_problems(prof, t, out, max);
	case TARGET_TASK:
		return 0;	/* a comm, pid or cgroup may well appear later */
	case TARGET_NAPI:
		return napi_selector_problems(prof, t, out, max);
	case TARGET_SOFTIRQ:
		return softirq_selector_problems(t, out, max);
	}
	return -EINVAL;
}

bool match_needs_softirqd(const struct profile *prof)
{
	for (size_t i = 0; i < prof->n_targets; i++)
		if (target_kind_of(&prof->targets[i])->threads == TARGET_THREADS_SOFTIRQD)
			return true;
	return false;
}

bool match_needs_tasks(const struct profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		if (target_kind_of(&prof->targets[i])->threads == TARGET_THREADS_TASKS)
			return true;
	return false;
}

/* The list of @threads that holds threads of @t's kind. */
static const struct thread_list *kind_threads(const struct target *t,
					      const struct thread_list *irq_threads,
					      const struct thread_list *task_threads)
{
	switch (target_kind_of(t)->threads) {
	case TARGET_THREADS_IRQ:
	case TARGET_THREADS_SOFTIRQD:
		return irq_threads;
	case TARGET_THREADS_TASKS:
		return task_threads;
	}
	return NULL;
}

static int two_targets(const struct profile *prof, const struct thread_info *ti, size_t a,
		       size_t b, char *err, size_t errlen)
{
	const struct target *ta = &prof->targets[a], *tb = &prof->targets[b];

	snprintf(err, errlen, "%s (pid %d) is selected by target '%s' (%s:%d:%d) and by target "
		 "'%s' (%s:%d:%d): a thread takes one reservation; narrow one of the targets",
		 ti->comm, ti->pid, ta->name, prof->path, ta->line, ta->col, tb->name, prof->path,
		 tb->line, tb->col);
	return -EINVAL;
}

static int match_list_push(struct match_list *l, size_t target, const struct thread_info *ti)
{
	if (ARRAY_RESERVE(l->v, l->cap, l->n + 1))
		return -ENOMEM;
	l->v[l->n].target = target;
	l->v[l->n].thread = *ti;
	l->n++;
	return 0;
}

/* Adds the threads of @threads that target @ti selects to @out. */
static int collect(const struct profile *prof, size_t ti, const struct resolved *r,
		   const struct driver_map *drivers, const struct thread_list *threads,
		   struct match_list *out, bool *any)
{
	size_t i;
	int rc;

	for (i = 0; threads && i < threads->n; i++) {
		if (!selects(&prof->targets[ti], r, drivers, &threads->v[i]))
			continue;
		rc = match_list_push(out, ti, &threads->v[i]);
		if (rc)
			return rc;
		*any = true;
	}
	return 0;
}

/* A thread selected twice (by two targets, or by an IRQ and a task target). */
static int check_unique(const struct profile *prof, const struct match_list *m, size_t from,
			char *err, size_t errlen)
{
	size_t i, j;

	for (i = from; i < m->n; i++)
		for (j = from; j < i; j++)
			if (m->v[i].thread.pid == m->v[j].thread.pid)
				return two_targets(prof, &m->v[i].thread, m->v[j].target,
						   m->v[i].target, err, errlen);
	return 0;
}

/* Every target's threads into found; the targets that found none into none[]. */
static int collect_all(const struct profile *prof, const struct thread_list *irq_threads,
		       const struct thread_list *task_threads, struct match_list *found,
		       size_t *none, size_t *n_none)
{
	struct driver_map drivers = { 0 };
	int rc = 0;

	for (size_t i = 0; !rc && i < prof->n_targets; i++) {
		const struct target *t = &prof->targets[i];
		struct resolved r;
		bool any = false;

		if (t->coupled)
			continue;	/* no reservation: couple.h follows its threads */
		rc = resolve(t, &r, &drivers);
		if (!rc)
			rc = collect(prof, i, &r, &drivers,
				     kind_threads(t, irq_threads, task_threads), found, &any);
		resolved_free(&r);
		if (!rc && !any)
			none[(*n_none)++] = i;
	}
	driver_map_free(&drivers);
	return rc;
}

/* The found matches onto the caller's list, the unmatched targets onto theirs. */
static int add_results(const struct match_list *found, const size_t *none, size_t n_none,
		       struct match_list *matches, struct match_unmatched *unmatched)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < found->n; i++)
		rc = match_list_push(matches, found->v[i].target, &found->v[i].thread);
	if (rc || !unmatched || !n_none)
		return rc;
	rc = ARRAY_RESERVE(unmatched->v, unmatched->cap, unmatched->n + n_none);
	if (!rc) {
		memcpy(unmatched->v + unmatched->n, none, n_none * sizeof(*none));
		unmatched->n += n_none;
	}
	return rc;
}

int match_profile(const struct profile *prof, const struct thread_list *irq_threads,
		  const struct thread_list *task_threads, struct match_list *matches,
		  struct match_unmatched *unmatched, char *err, size_t errlen)
{
	struct match_list found = { 0 };
	size_t *none = NULL, n_none = 0, before = matches->n;
	int rc;

	if (errlen)
		err[0] = '\0';
	if (match_needs_tasks(prof) && !task_threads) {
		snprintf(err, errlen, "%s: task targets need the list of user threads",
			 prof->path);
		return -EINVAL;
	}
	none = calloc(prof->n_targets ? prof->n_targets : 1, sizeof(*none));
	if (!none)
		return -ENOMEM;
	rc = collect_all(prof, irq_threads, task_threads, &found, none, &n_none);
	if (!rc)
		rc = check_unique(prof, &found, 0, err, errlen);
	if (!rc)
		rc = add_results(&found, none, n_none, matches, unmatched);
	if (rc)
		matches->n = before;	/* the caller's list as it was */
	if (rc == -ENOMEM && errlen && !err[0])
		snprintf(err, errlen, "%s: out of memory while matching threads", prof->path);
	free(none);
	free(found.v);
	return rc;
}

int match_target_threads(const struct profile *prof, size_t target,
			 const struct thread_list *irq_threads,
			 const struct thread_list *task_threads, struct match_list *out)
{
	const struct target *t;
	struct driver_map drivers = { 0 };
	struct resolved r;
	bool any = false;
	int rc;

	if (target >= prof->n_targets)
		return -EINVAL;
	t = &prof->targets[target];
	rc = resolve(t, &r, &drivers);
	if (!rc)
		rc = collect(prof, target, &r, &drivers,
			     kind_threads(t, irq_threads, task_threads), out, &any);
	resolved_free(&r);
	driver_map_free(&drivers);
	return rc;
}

int match_thread(const struct profile *prof, size_t target, const struct thread_info *ti)
{
	struct driver_map drivers = { 0 };
	struct resolved r;
	int rc;

	if (target >= prof->n_targets)
		return -EINVAL;
	if (prof->targets[target].coupled)
		return 0;	/* no reservation: couple.h follows its threads */
	/* most hotplug events are user threads and IRQ targets: no sysfs reads for them */
	if (!target_kind_of(&prof->targets[target])->may_take(ti))
		return 0;
	rc = resolve(&prof->targets[target], &r, &drivers);
	if (!rc)
		rc = selects(&prof->targets[target], &r, &drivers, ti);
	resolved_free(&r);
	driver_map_free(&drivers);
	return rc;
}

int match_find_target(const struct profile *prof, const struct thread_info *ti, char *err,
		      size_t errlen)
{
	int found = -ENOENT, rc;
	size_t i;

	for (i = 0; i < prof->n_targets; i++) {
		rc = match_thread(prof, i, ti);
		if (rc < 0)
			return rc;
		if (!rc)
			continue;
		if (found >= 0) {
			two_targets(prof, ti, (size_t)found, i, err, errlen);
			return -EEXIST;
		}
		found = (int)i;
	}
	return found;
}

void match_describe_unmatched(const struct profile *prof, const struct match_unmatched *u,
			      char *buf, size_t len)
{
	size_t i, used = strnlen(buf, len);

	for (i = 0; i < u->n && used + 1 < len; i++) {
		const struct target *t = &prof->targets[u->v[i]];
		int n = snprintf(buf + used, len - used, "%s'%s' (%s:%d:%d)", i ? ", " : "",
				 t->name, prof->path, t->line, t->col);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

void match_list_free(struct match_list *matches)
{
	free(matches->v);
	memset(matches, 0, sizeof(*matches));
}

void match_unmatched_free(struct match_unmatched *u)
{
	free(u->v);
	memset(u, 0, sizeof(*u));
}
