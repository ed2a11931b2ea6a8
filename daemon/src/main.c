/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main.c - irqresd: options, start-up (crash recovery, apply), the poll() loop over
 * signals, the control socket, the proc connector and a timer, and the orderly exit.
 *
 * Everything the daemon knows at run time lives in struct daemon: the profile in force
 * (whose targets' budgets set-budget updates), the threads it manages and the state file.
 * Init runs in one order in main(); fini runs in the reverse order from one path.
 */
#include "apply.h"
#include "cpuset.h"
#include "ctl.h"
#include "discover.h"
#include "dl.h"
#include "hotplug.h"
#include "irqres.h"
#include "json.h"
#include "log.h"
#include "match.h"
#include "notify.h"
#include "plan.h"
#include "profile.h"
#include "state.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define EXIT_REFUSED 1		/* the kernel will not / did not accept it */
#define EXIT_USAGE 2		/* bad profile or bad option */
#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define ERRLEN 1024
#define REFUSED_MAX 256		/* hotplugged threads whose apply failed: not retried */
#define TASK_RESCAN_EVERY 10	/* with the proc connector and cgroup selectors: every 10th */

struct options {
	const char *profile;
	bool dry_run, json, once, restore, netlink, verbose;
	const char *socket;
	long rescan_ms;
};

/* A thread the daemon manages: where it came from and the budget it has now. */
struct managed {
	size_t target;
	struct thread_info thread;
	uint64_t runtime_ns, deadline_ns, period_ns;
};

struct refused {
	pid_t pid;
	unsigned long long starttime;
};

struct daemon {
	struct options opt;
	char socket_path[PATH_MAX];
	struct profile prof;
	bool have_prof;
	struct state st;
	struct managed *m;
	size_t n_m, cap_m;
	struct refused refused[REFUSED_MAX];
	size_t n_refused;
	struct ctl_server *ctl;
	struct hotplug *hp;
	int sigfd, timerfd, lockfd;
	uint64_t rescan_ns, watchdog_ns, tick_ns, next_rescan, next_watchdog;
	bool rescan_now;
	bool events_lost;		/* the proc connector overflowed: list every task */
	unsigned long n_rescans;
	bool quit;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- options ---- */

enum {
	OPT_JSON = 256, OPT_ONCE, OPT_RESTORE, OPT_RUN_DIR, OPT_SOCKET, OPT_RESCAN,
	OPT_NO_NETLINK, OPT_PROC, OPT_SYS, OPT_CGROUP, OPT_VERSION,
};

static const struct option long_opts[] = {
	{ "profile", required_argument, NULL, 'p' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "restore", no_argument, NULL, OPT_RESTORE },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "rescan", required_argument, NULL, OPT_RESCAN },
	{ "no-netlink", no_argument, NULL, OPT_NO_NETLINK },
	{ "proc", required_argument, NULL, OPT_PROC },
	{ "sys", required_argument, NULL, OPT_SYS },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs("Usage: irqresd [options]\n"
	      "Gives IRQ threads (and chosen tasks) SCHED_DEADLINE reservations from a profile,\n"
	      "follows new threads, serves the control socket, and restores everything on exit.\n"
	      "\n"
	      "  -p, --profile FILE   profile to apply (YAML, see docs/profile.md)\n"
	      "  -n, --dry-run        print the plan and exit: 0 the kernel will accept it,\n"
	      "                       1 it will not, 2 bad profile or bad option\n"
	      "      --json           with --dry-run: the plan as JSON on stdout\n"
	      "      --once           apply, record the state, exit without serving the socket\n"
	      "                       (undo later with irqresd --restore)\n"
	      "      --restore        restore every thread in the state file, remove irqres's\n"
	      "                       partitions, delete the state file, exit\n"
	      "      --run-dir DIR    state file (DIR/state) and socket dir [/run/irqres]\n"
	      "      --socket PATH    control socket [RUN_DIR/irqresd.sock]\n"
	      "      --rescan MS      periodic rescan for new threads, 0 = off [1000]; while the\n"
	      "                       proc connector works, user tasks are listed only for\n"
	      "                       cgroup selectors (every 10th time) or after lost events\n"
	      "      --no-netlink     no proc connector events (rescans only)\n"
	      "      --proc DIR       /proc root [/proc]\n"
	      "      --sys DIR        /sys root [/sys]\n"
	      "      --cgroup DIR     cgroup v2 root [/sys/fs/cgroup]\n"
	      "  -v, --verbose        debug log\n"
	      "      --version        print the version and exit\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Without --dry-run, --once or --restore irqresd runs as a daemon: SIGTERM/SIGINT\n"
	      "restore every thread and exit 0, SIGHUP reloads the profile.\n", f);
}

/* --run-dir, --proc, --sys, --cgroup: one of the roots of irqres_paths */
static int set_root(int opt, const char *val)
{
	static const struct { int opt; const char *name; size_t off; } roots[] = {
		{ OPT_RUN_DIR, "--run-dir", offsetof(struct irqres_paths, run) },
		{ OPT_PROC, "--proc", offsetof(struct irqres_paths, proc) },
		{ OPT_SYS, "--sys", offsetof(struct irqres_paths, sys) },
		{ OPT_CGROUP, "--cgroup", offsetof(struct irqres_paths, cgroup) },
	};
	const size_t len = sizeof(irqres_paths.run);
	size_t i;

	for (i = 0; roots[i].opt != opt; i++)
		;
	if (!val[0] || strlen(val) >= len) {
		pr_err("%s '%s': empty or longer than %zu bytes", roots[i].name, val, len - 1);
		return -EINVAL;
	}
	snprintf((char *)&irqres_paths + roots[i].off, len, "%s", val);
	return 0;
}

/* Returns 0, 1 when the program should exit 0 now (--help, --version), or -EINVAL. */
static int parse_options(int argc, char **argv, struct options *o, char *socket_path)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->netlink = true;
	o->rescan_ms = 1000;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:nvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->profile = optarg; break;
		case 'n': o->dry_run = true; break;
		case 'v': o->verbose = true; irqres_debug = true; break;
		case 'h': usage(stdout); return 1;
		case OPT_VERSION: printf("irqresd %s\n", IRQRES_VERSION); return 1;
		case OPT_JSON: o->json = true; break;
		case OPT_ONCE: o->once = true; break;
		case OPT_RESTORE: o->restore = true; break;
		case OPT_NO_NETLINK: o->netlink = false; break;
		case OPT_SOCKET: o->socket = optarg; break;
		case OPT_RESCAN:
			errno = 0;
			o->rescan_ms = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->rescan_ms < 0 ||
			    o->rescan_ms > 3600 * 1000) {
				pr_err("--rescan '%s': not a number of milliseconds in 0..3600000",
				       optarg);
				return -EINVAL;
			}
			break;
		case OPT_RUN_DIR:
		case OPT_PROC:
		case OPT_SYS:
		case OPT_CGROUP:
			if (set_root(c, optarg))
				return -EINVAL;
			break;
		case ':':
			pr_err("option '%s' needs an argument (see --help)", argv[optind - 1]);
			return -EINVAL;
		default:
			pr_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s' (the profile goes after -p; see --help)",
		       argv[optind]);
		return -EINVAL;
	}
	if ((int)o->dry_run + (int)o->once + (int)o->restore > 1) {
		pr_err("--dry-run, --once and --restore exclude each other");
		return -EINVAL;
	}
	if (o->json && !o->dry_run) {
		pr_err("--json goes with --dry-run");
		return -EINVAL;
	}
	if ((o->dry_run || o->once) && !o->profile) {
		pr_err("--%s needs a profile (-p FILE)", o->dry_run ? "dry-run" : "once");
		return -EINVAL;
	}
	if (o->restore && o->profile) {
		pr_err("--restore takes no profile");
		return -EINVAL;
	}
	if (o->socket) {
		if (strlen(o->socket) >= PATH_MAX) {
			pr_err("--socket: path too long");
			return -EINVAL;
		}
		snprintf(socket_path, PATH_MAX, "%s", o->socket);
	} else {
		snprintf(socket_path, PATH_MAX, "%s/irqresd.sock", irqres_paths.run);
	}
	return 0;
}

/* ---- matching a profile against the threads present ---- */

/*
 * Scans, matches and plans prof. Returns 0 with a plan (feasible or not), -EINVAL when
 * the profile cannot be resolved (two targets on one thread), -ENOENT when it matches no
 * thread at all, or another -errno; err says why.
 */
static int resolve(const struct profile *prof, struct match_list *matches, struct plan *plan,
		   char *err, size_t errlen)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	struct match_unmatched un = { 0 };
	char names[ERRLEN];
	int rc;

	memset(plan, 0, sizeof(*plan));
	rc = threads_scan_irq(&irq);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot list IRQ threads: %s", irqres_paths.proc,
			 strerror(-rc));
		goto out;
	}
	if (match_needs_tasks(prof)) {
		rc = threads_scan_tasks(&tasks);
		if (rc < 0) {
			snprintf(err, errlen, "%s: cannot list tasks: %s", irqres_paths.proc,
				 strerror(-rc));
			goto out;
		}
	}
	rc = match_profile(prof, &irq, match_needs_tasks(prof) ? &tasks : NULL, matches, &un,
			   err, errlen);
	if (rc < 0) {
		if (!err[0])
			snprintf(err, errlen, "%s: %s", prof->path, strerror(-rc));
		goto out;
	}
	if (un.n) {
		names[0] = '\0';
		match_describe_unmatched(prof, &un, names, sizeof(names));
		if (matches->n == 0) {
			snprintf(err, errlen, "%s: the profile matches no thread: %s", prof->path,
				 names);
			rc = -ENOENT;
		} else {
			pr_warn("%s: no thread matches %s yet; new threads will be checked as they "
				"appear", prof->path, names);
		}
	}
	if (rc == 0) {
		rc = plan_build(prof, matches, plan);
		if (rc < 0)
			snprintf(err, errlen, "%s: cannot build the plan: %s", prof->path,
				 strerror(-rc));
	}
out:
	match_unmatched_free(&un);
	thread_list_free(&tasks);
	thread_list_free(&irq);
	return rc;
}

/* The first reason an infeasible plan gives. */
static void plan_first_problem(const struct plan *plan, char *err, size_t errlen)
{
	size_t i;

	if (plan->n_errors) {
		snprintf(err, errlen, "%s", plan->errors[0]);
		return;
	}
	for (i = 0; i < plan->n_items; i++) {
		if (!plan->items[i].ok) {
			snprintf(err, errlen, "%s (pid %d): %s", plan->items[i].thread.comm,
				 (int)plan->items[i].thread.pid, plan->items[i].verdict);
			return;
		}
	}
	snprintf(err, errlen, "the plan is not feasible");
}

/* ---- managed threads ---- */

static struct managed *managed_find(struct daemon *d, pid_t pid)
{
	size_t i;

	for (i = 0; i < d->n_m; i++)
		if (d->m[i].thread.pid == pid)
			return &d->m[i];
	return NULL;
}

static int managed_add(struct daemon *d, size_t target, const struct thread_info *ti)
{
	const struct target *t = &d->prof.targets[target];
	struct managed *m;

	m = managed_find(d, ti->pid);
	if (!m) {
		if (d->n_m == d->cap_m) {
			size_t cap = d->cap_m ? d->cap_m * 2 : 16;

			m = realloc(d->m, cap * sizeof(*m));
			if (!m)
				return -ENOMEM;
			d->m = m;
			d->cap_m = cap;
		}
		m = &d->m[d->n_m++];
	}
	m->target = target;
	m->thread = *ti;
	m->runtime_ns = t->runtime_ns;
	m->deadline_ns = t->deadline_ns;
	m->period_ns = t->period_ns;
	return 0;
}

static void managed_remove(struct daemon *d, pid_t pid)
{
	struct managed *m = managed_find(d, pid);

	if (m)
		*m = d->m[--d->n_m];
	stats_thread_forget(pid);
}

static bool refused_has(struct daemon *d, const struct thread_info *ti)
{
	size_t i;

	for (i = 0; i < d->n_refused; i++)
		if (d->refused[i].pid == ti->pid && d->refused[i].starttime == ti->starttime)
			return true;
	return false;
}

static void refused_add(struct daemon *d, const struct thread_info *ti)
{
	if (d->n_refused == REFUSED_MAX)	/* forget the oldest */
		memmove(d->refused, d->refused + 1, --d->n_refused * sizeof(d->refused[0]));
	d->refused[d->n_refused++] = (struct refused){ ti->pid, ti->starttime };
}

/* ---- applying and restoring ---- */

static void drop_profile(struct daemon *d)
{
	if (d->have_prof)
		profile_free(&d->prof);
	d->have_prof = false;
	d->n_m = 0;
	stats_fini();
	d->n_refused = 0;
}

static int restore_everything(struct daemon *d)
{
	int rc = apply_restore_all(&d->st);

	if (rc < 0)
		pr_err("restore: not every thread could be put back: %s", strerror(-rc));
	else
		pr_info("restored %d thread%s", rc, rc == 1 ? "" : "s");
	return rc;
}

/*
 * Loads path and applies it, all or nothing. The threads of the profile in force that the
 * new one does not take are restored. On success the new profile is in force; on failure
 * nothing changed. With may_wait (the daemon itself, at start and on SIGHUP), a profile
 * that matches no thread yet is put in force with a warning, and hotplug fills it. With plan_out (a reply object), its "plan" member is written there.
 */
static int do_apply(struct daemon *d, const char *path, bool may_wait, struct json *plan_out,
		    char *err, size_t errlen)
{
	struct profile prof = { 0 };
	struct match_list matches = { 0 };
	struct plan plan;
	size_t i, k;
	int rc;

	err[0] = '\0';
	rc = profile_load(path, &prof, err, errlen);
	if (rc < 0)
		return rc;
	rc = resolve(&prof, &matches, &plan, err, errlen);
	if (rc == -ENOENT && may_wait) {
		/* at boot a NIC's IRQ thread appears only when the link goes up */
		pr_warn("%s; irqresd waits for them to appear", err);
		err[0] = '\0';
		rc = 0;
	} else if (rc == 0 && !plan.feasible) {
		plan_first_problem(&plan, err, errlen);
		rc = -EBUSY;
	} else if (rc == 0) {
		rc = apply_plan(&plan, &d->st, err, errlen);
	}
	if (rc < 0)
		goto out;
	/* the old profile's threads that the new one does not take go back as found */
	for (i = 0; i < d->n_m; i++) {
		for (k = 0; k < matches.n; k++)
			if (matches.v[k].thread.pid == d->m[i].thread.pid)
				break;
		if (k == matches.n) {
			int r = apply_restore_thread(&d->st, d->m[i].thread.pid);

			if (r < 0)
				pr_warn("%s (pid %d): cannot restore: %s", d->m[i].thread.comm,
					(int)d->m[i].thread.pid, strerror(-r));
		}
	}
	drop_profile(d);
	d->prof = prof;
	plan.prof = &d->prof;	/* the plan's reply below names the targets */
	memset(&prof, 0, sizeof(prof));
	d->have_prof = true;
	for (k = 0; k < matches.n; k++) {
		rc = managed_add(d, matches.v[k].target, &matches.v[k].thread);
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
			goto out;
		}
	}
	pr_info("%s: applied, %zu thread%s reserved", path, matches.n,
		matches.n == 1 ? "" : "s");
	notify_status("%s: %zu thread%s reserved", path, matches.n, matches.n == 1 ? "" : "s");
out:
	if (plan_out && rc == 0) {
		json_key(plan_out, "plan");
		plan_write_json(&plan, plan_out);
	}
	plan_free(&plan);
	match_list_free(&matches);
	profile_free(&prof);
	return rc;
}

/*
 * A new IRQ thread takes its IRQ's affinity itself only at its first interrupt (and
 * bypasses the root-domain check then), so the plan places it by the IRQ's effective
 * affinity (plan.h) and it is moved into that CPU's partition right away. Only while the
 * IRQ has no effective affinity yet (request_irq() creates the thread before it starts
 * the IRQ) are its CPUs unknown: the thread waits (retries) for that.
 */
static bool irq_cpus_known(const struct thread_info *ti)
{
	cpu_set_t cpus;

	return thread_irq_cpus(ti->irq, &cpus) != 1;
}

/* One new or renamed thread: reserve it when the profile selects it. */
static enum hotplug_verdict check_thread(struct daemon *d, pid_t pid, bool from_rescan)
{
	uint64_t t0 = now_ns(), t_read, t_apply;
	struct thread_info ti;
	struct match m;
	char err[ERRLEN] = "";
	int rc, target;

	if (!d->have_prof || managed_find(d, pid))
		return HOTPLUG_DONE;
	rc = thread_read(pid, &ti);
	if (rc < 0)
		return HOTPLUG_DONE;	/* gone already */
	/* a kernel thread is named right after kthreadd forks it */
	if (ti.kthread && strcmp(ti.comm, "kthreadd") == 0 && pid != 2)
		return HOTPLUG_AGAIN;
	if (refused_has(d, &ti))
		return HOTPLUG_DONE;
	/* kthread_create() names the thread (a COMM event) just before the kernel makes it
	 * SCHED_FIFO itself: a reservation given in between would be overwritten */
	if (!from_rescan && ti.is_irq && ti.policy == SCHED_OTHER)
		return HOTPLUG_AGAIN;
	if (!from_rescan && ti.is_irq && !irq_cpus_known(&ti))
		return HOTPLUG_AGAIN;	/* never started: the rescan plans with smp_affinity */
	target = match_find_target(&d->prof, &ti, err, sizeof(err));
	if (target == -ENOENT)
		return HOTPLUG_DONE;
	if (target < 0) {
		pr_warn("%s (pid %d): %s", ti.comm, (int)pid, err[0] ? err : strerror(-target));
		refused_add(d, &ti);
		return HOTPLUG_DONE;
	}
	m.target = (size_t)target;
	m.thread = ti;
	t_read = now_ns();
	rc = apply_thread(&d->prof, &m, &d->st, err, sizeof(err));
	t_apply = now_ns();
	if (rc < 0) {
		pr_warn("%s (pid %d), target '%s': not reserved: %s", ti.comm, (int)pid,
			d->prof.targets[target].name, err[0] ? err : strerror(-rc));
		refused_add(d, &ti);
		return HOTPLUG_DONE;
	}
	rc = managed_add(d, (size_t)target, &ti);
	if (rc < 0)
		pr_err("%s (pid %d): %s", ti.comm, (int)pid, strerror(-rc));
	pr_info("%s (pid %d): new thread reserved for target '%s'%s", ti.comm, (int)pid,
		d->prof.targets[target].name, from_rescan ? " (rescan)" : "");
	pr_debug("pid %d: read and matched in %" PRIu64 " us, applied in %" PRIu64 " us",
		 (int)pid, (t_read - t0) / 1000, (t_apply - t_read) / 1000);
	return HOTPLUG_DONE;
}

static void forget_thread(struct daemon *d, pid_t pid)
{
	if (!managed_find(d, pid))
		return;
	pr_debug("pid %d exited: forgotten", (int)pid);
	managed_remove(d, pid);
	apply_forget_thread(&d->st, pid);
}

/*
 * A cheap first look at an event's thread (its comm, one small read) so that the many
 * threads a busy machine forks are dropped before thread_read() reads all of /proc/PID:
 * an IRQ target can only take a thread named irq/... (or kthreadd, not named yet), and
 * when every task target has a comm glob, a task must match one of them.
 */
static bool may_match(struct daemon *d, pid_t pid)
{
	char path[300], comm[COMM_MAX + 2];
	bool irq_targets = false, all_globs = true;
	size_t i, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/comm", irqres_paths.proc, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;	/* gone already */
	n = fread(comm, 1, sizeof(comm) - 1, f);
	fclose(f);
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	for (i = 0; i < d->prof.n_targets; i++) {
		const struct target *t = &d->prof.targets[i];

		if (t->kind == TARGET_IRQ)
			irq_targets = true;
		else if (!t->task_comm)
			all_globs = false;
		else if (fnmatch(t->task_comm, comm, 0) == 0)
			return true;
	}
	if (irq_targets && (strncmp(comm, "irq/", 4) == 0 || strcmp(comm, "kthreadd") == 0))
		return true;
	return !all_globs;
}

static enum hotplug_verdict on_hotplug(void *ctx, enum hotplug_event ev, pid_t pid, pid_t ppid)
{
	struct daemon *d = ctx;

	switch (ev) {
	case HOTPLUG_EXIT:
		forget_thread(d, pid);
		return HOTPLUG_DONE;
	case HOTPLUG_OVERRUN:
		d->rescan_now = true;
		d->events_lost = true;
		return HOTPLUG_DONE;
	default:
		if (!d->have_prof || managed_find(d, pid) || !may_match(d, pid))
			return HOTPLUG_DONE;
		return check_thread(d, pid, false);
	}
}

/* Whether some task target selects by cgroup: moving into a cgroup sends no proc event. */
static bool has_cgroup_selector(const struct profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_targets; i++)
		if (prof->targets[i].kind == TARGET_TASK && prof->targets[i].task_cgroup)
			return true;
	return false;
}

/*
 * The fallback: every thread the profile selects that the daemon does not manage yet.
 * IRQ threads (kthreadd's children) are cheap to list and are checked every time. All
 * user tasks are costly to list on a busy machine (and the loop waits meanwhile). While
 * the proc connector reports them (fork, exec, and renames by prctl or /proc/PID/comm
 * each send an event), they are listed only when events were lost, and every
 * TASK_RESCAN_EVERY rescans for cgroup selectors, which no event serves.
 */
static void rescan(struct daemon *d)
{
	struct thread_list irq = { 0 }, tasks = { 0 };
	struct match_list matches = { 0 };
	char err[ERRLEN] = "";
	uint64_t t0 = now_ns();
	bool with_tasks;
	size_t i;
	int rc;

	if (!d->have_prof)
		return;
	with_tasks = match_needs_tasks(&d->prof) &&
		     (hotplug_fd(d->hp) < 0 || d->events_lost ||
		      (has_cgroup_selector(&d->prof) && d->n_rescans % TASK_RESCAN_EVERY == 0));
	d->events_lost = false;
	d->n_rescans++;
	for (i = 0; i < d->n_m;) {	/* threads gone while events were lost */
		if (thread_still_same(&d->m[i].thread) == 1) {
			i++;
			continue;
		}
		forget_thread(d, d->m[i].thread.pid);
	}
	rc = threads_scan_irq(&irq);
	if (rc == 0 && with_tasks)
		rc = threads_scan_tasks(&tasks);
	if (rc == 0)	/* without the task list, task targets match nothing this time */
		rc = match_profile(&d->prof, &irq, &tasks, &matches, NULL, err, sizeof(err));
	if (rc < 0) {
		pr_debug("rescan: %s", err[0] ? err : strerror(-rc));
	} else {
		for (i = 0; i < matches.n; i++)
			if (!managed_find(d, matches.v[i].thread.pid))
				check_thread(d, matches.v[i].thread.pid, true);
	}
	pr_debug("rescan: %zu IRQ threads, %zu tasks, %" PRIu64 " us", irq.n, tasks.n,
		 (now_ns() - t0) / 1000);
	match_list_free(&matches);
	thread_list_free(&tasks);
	thread_list_free(&irq);
}

/* ---- control requests ---- */

static void write_thread(struct daemon *d, const struct managed *m, struct json *j)
{
	const struct thread_info *ti = &m->thread;
	struct state_thread *orig = state_find_thread(&d->st, ti->pid);
	struct dl_attr attr;
	char buf[ACTIONS_MAX], *tok, *save;
	char dir[PATH_MAX];
	int rc;

	json_obj_begin(j);
	json_kv_int(j, "pid", ti->pid);
	json_kv_str(j, "comm", ti->comm);
	if (ti->irq >= 0)
		json_kv_int(j, "irq", ti->irq);
	else
		json_kv_null(j, "irq");
	json_key(j, "actions");
	json_arr_begin(j);
	snprintf(buf, sizeof(buf), "%s", ti->actions);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		json_str(j, tok);
	json_arr_end(j);
	json_kv_bool(j, "secondary", ti->secondary);
	if (cpuset_list_format(&ti->affinity, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	json_kv_str(j, "cpus", buf);
	rc = dl_get(ti->pid, &attr);
	if (rc == 0) {
		json_kv_str(j, "policy", dl_policy_name((int)attr.sched_policy));
		json_kv_uint(j, "runtime_ns", attr.sched_runtime);
		json_kv_uint(j, "period_ns", attr.sched_period);
		json_kv_uint(j, "deadline_ns", attr.sched_deadline);
	} else {
		json_kv_str(j, "policy", "gone");
		json_kv_uint(j, "runtime_ns", m->runtime_ns);
		json_kv_uint(j, "period_ns", m->period_ns);
		json_kv_uint(j, "deadline_ns", m->deadline_ns);
	}
	json_kv_str(j, "orig_policy", orig ? dl_policy_name(orig->policy) : dl_policy_name(ti->policy));
	json_kv_int(j, "orig_priority", orig ? orig->priority : ti->priority);
	if (orig && orig->partition[0] && cpuset_group_dir(orig->partition, dir, sizeof(dir)) == 0)
		json_kv_str(j, "cpuset", dir);
	else if (orig && orig->partition[0])
		json_kv_str(j, "cpuset", orig->partition);
	else
		json_kv_null(j, "cpuset");
	json_obj_end(j);
}

static void write_target(struct daemon *d, size_t idx, struct json *j)
{
	const struct target *t = &d->prof.targets[idx];
	size_t i;

	json_obj_begin(j);
	json_kv_str(j, "name", t->name);
	json_kv_str(j, "kind", t->kind == TARGET_IRQ ? "irq" : "task");
	json_kv_str(j, "mode", t->mode == MODE_ADAPTIVE ? "adaptive" : "static");
	json_kv_uint(j, "runtime_ns", t->runtime_ns);
	json_kv_uint(j, "period_ns", t->period_ns);
	json_kv_uint(j, "deadline_ns", t->deadline_ns);
	if (t->min_interarrival_ns)
		json_kv_uint(j, "min_interarrival_ns", t->min_interarrival_ns);
	else
		json_kv_null(j, "min_interarrival_ns");
	if (t->buffer)
		json_kv_uint(j, "buffer", t->buffer);
	else
		json_kv_null(j, "buffer");
	if (t->mode == MODE_ADAPTIVE) {
		json_key(j, "adaptive");
		json_obj_begin(j);
		json_kv_uint(j, "sample_ns", t->adaptive.sample_ns);
		json_kv_double(j, "gain", t->adaptive.gain);
		json_kv_uint(j, "window", t->adaptive.window);
		json_kv_uint(j, "default_job_ns", t->adaptive.default_job_ns);
		json_kv_uint(j, "min_runtime_ns", profile_adaptive_min_runtime(t, t->period_ns));
		json_kv_uint(j, "max_runtime_ns", profile_adaptive_max_runtime(t, t->period_ns));
		json_kv_uint(j, "hysteresis_ns", t->adaptive.hysteresis_ns);
		json_obj_end(j);
	} else {
		json_kv_null(j, "adaptive");
	}
	json_key(j, "threads");
	json_arr_begin(j);
	for (i = 0; i < d->n_m; i++)
		if (d->m[i].target == idx)
			write_thread(d, &d->m[i], j);
	json_arr_end(j);
	json_obj_end(j);
}

static int req_status(struct daemon *d, struct json *j)
{
	size_t i;

	json_kv_int(j, "pid", getpid());
	json_kv_str(j, "profile", d->have_prof ? d->prof.path : NULL);
	json_kv_str(j, "admission_control",
		    d->have_prof && d->prof.admission_off ? "disable" : "keep");
	json_key(j, "targets");
	json_arr_begin(j);
	for (i = 0; d->have_prof && i < d->prof.n_targets; i++)
		write_target(d, i, j);
	json_arr_end(j);
	return 0;
}

static int req_stats(struct daemon *d, struct json *j)
{
	struct irq_counts ic = { 0 };
	size_t i;
	int rc;

	rc = stats_irq_counts_read(&ic);
	if (rc < 0)
		pr_debug("%s/interrupts: %s", irqres_paths.proc, strerror(-rc));
	json_kv_uint(j, "time_ns", now_ns());
	json_key(j, "threads");
	json_arr_begin(j);
	for (i = 0; i < d->n_m; i++) {
		const struct managed *m = &d->m[i];
		struct thread_stats ts;
		struct dl_attr attr;

		if (stats_thread_read(m->thread.pid, &ts) < 0 || dl_get(m->thread.pid, &attr) < 0)
			continue;	/* exited; the exit event will forget it */
		json_obj_begin(j);
		json_kv_int(j, "pid", m->thread.pid);
		json_kv_str(j, "comm", m->thread.comm);
		json_kv_str(j, "target", d->prof.targets[m->target].name);
		json_key(j, "irqs");
		json_arr_begin(j);
		if (m->thread.irq >= 0)
			json_int(j, m->thread.irq);
		json_arr_end(j);
		json_kv_uint(j, "irq_count",
			     m->thread.irq >= 0 ? stats_irq_count(&ic, m->thread.irq) : 0);
		json_kv_str(j, "policy", dl_policy_name((int)attr.sched_policy));
		json_kv_uint(j, "runtime_ns", attr.sched_runtime);
		json_kv_uint(j, "period_ns", attr.sched_period);
		json_kv_uint(j, "deadline_ns", attr.sched_deadline);
		json_kv_uint(j, "cpu_time_ns", ts.cpu_time_ns);
		json_kv_uint(j, "wait_time_ns", ts.wait_time_ns);
		json_kv_uint(j, "timeslices", ts.timeslices);
		json_kv_uint(j, "voluntary_switches", ts.voluntary_switches);
		json_kv_uint(j, "involuntary_switches", ts.involuntary_switches);
		json_obj_end(j);
	}
	json_arr_end(j);
	stats_irq_counts_free(&ic);
	return 0;
}

/* deadline keeping its ratio to the period: D' = D * T' / T, without overflow */
static uint64_t scale_deadline(uint64_t d, uint64_t t, uint64_t t_new)
{
	unsigned __int128 v;

	if (t == 0 || t == t_new)
		return d == 0 ? t_new : d;
	v = (unsigned __int128)d * t_new / t;
	return v > t_new ? t_new : (uint64_t)v;
}

static int req_set_budget(struct daemon *d, const struct ctl_request *req, struct json *j,
			  char *err, size_t errlen)
{
	struct managed *m = NULL;
	struct target *t = NULL;
	uint64_t period, deadline, old_period, old_deadline;
	pid_t *pids = NULL;
	size_t n = 0, i;
	int rc, ti = -1;

	if (!d->have_prof) {
		snprintf(err, errlen, "set-budget %s: no profile is loaded", req->target);
		return -ENOENT;
	}
	if (req->pid) {
		m = managed_find(d, req->pid);
		if (!m) {
			snprintf(err, errlen, "set-budget %s: pid %d is not a thread irqresd manages",
				 req->target, (int)req->pid);
			return -ENOENT;
		}
		old_period = m->period_ns;
		old_deadline = m->deadline_ns;
	} else {
		ti = profile_find_target(&d->prof, req->target);
		if (ti < 0) {
			snprintf(err, errlen, "set-budget %s: no such target in %s", req->target,
				 d->prof.path);
			return -ENOENT;
		}
		t = &d->prof.targets[ti];
		old_period = t->period_ns;
		old_deadline = t->deadline_ns;
	}
	period = req->period_ns ? req->period_ns : old_period;
	deadline = scale_deadline(old_deadline, old_period, period);
	if (req->runtime_ns > deadline) {
		snprintf(err, errlen, "set-budget %s: runtime %" PRIu64 " ns is larger than the "
			 "deadline %" PRIu64 " ns (period %" PRIu64 " ns)", req->target,
			 req->runtime_ns, deadline, period);
		return -EINVAL;
	}
	pids = calloc(d->n_m ? d->n_m : 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < d->n_m; i++)
		if (m ? &d->m[i] == m : d->m[i].target == (size_t)ti)
			pids[n++] = d->m[i].thread.pid;
	if (n) {
		rc = apply_set_budget(&d->st, pids, n, req->runtime_ns, deadline, period, err,
				      errlen);
		if (rc < 0) {
			free(pids);
			return rc;
		}
	}
	if (t) {	/* threads that appear later get the new budget too */
		t->runtime_ns = req->runtime_ns;
		t->period_ns = period;
		t->deadline_ns = deadline;
	}
	for (i = 0; i < n; i++) {
		struct managed *x = managed_find(d, pids[i]);

		x->runtime_ns = req->runtime_ns;
		x->period_ns = period;
		x->deadline_ns = deadline;
	}
	pr_info("set-budget %s: runtime %" PRIu64 " ns, period %" PRIu64 " ns, deadline %"
		PRIu64 " ns on %zu thread%s", req->target, req->runtime_ns, period, deadline, n,
		n == 1 ? "" : "s");
	json_kv_str(j, "target", req->target);
	json_kv_uint(j, "runtime_ns", req->runtime_ns);
	json_kv_uint(j, "period_ns", period);
	json_kv_uint(j, "deadline_ns", deadline);
	json_key(j, "pids");
	json_arr_begin(j);
	for (i = 0; i < n; i++)
		json_int(j, pids[i]);
	json_arr_end(j);
	free(pids);
	return 0;
}

static int req_plan(const struct ctl_request *req, struct json *j, char *err, size_t errlen)
{
	struct profile prof = { 0 };
	struct match_list matches = { 0 };
	struct plan plan;
	int rc;

	rc = profile_load(req->path, &prof, err, errlen);
	if (rc < 0)
		return rc;
	rc = resolve(&prof, &matches, &plan, err, errlen);
	if (rc == 0 || rc == -ENOENT) {
		if (rc == -ENOENT)	/* nothing matches: the plan shows it, and says why */
			rc = plan_build(&prof, &matches, &plan);
		if (rc == 0) {
			json_key(j, "plan");
			plan_write_json(&plan, j);
		}
	}
	plan_free(&plan);
	match_list_free(&matches);
	profile_free(&prof);
	return rc;
}

static int on_request(void *ctx, const struct ctl_request *req, struct json *j, char *err,
		      size_t errlen)
{
	struct daemon *d = ctx;
	int rc;

	switch (req->verb) {
	case CTL_PING:
		json_kv_str(j, "version", IRQRES_VERSION);
		return 0;
	case CTL_STATUS:
		return req_status(d, j);
	case CTL_STATS:
		return req_stats(d, j);
	case CTL_SET_BUDGET:
		return req_set_budget(d, req, j, err, errlen);
	case CTL_PLAN:
		return req_plan(req, j, err, errlen);
	case CTL_APPLY:
		return do_apply(d, req->path, false, j, err, errlen);
	case CTL_RESTORE:
		rc = restore_everything(d);
		if (rc < 0) {
			snprintf(err, errlen, "restore: not every thread could be put back: %s "
				 "(see the log)", strerror(-rc));
			return rc;
		}
		drop_profile(d);
		json_kv_int(j, "restored", rc);
		return 0;
	}
	snprintf(err, errlen, "unhandled request");
	return -EINVAL;
}

/* ---- the modes that exit at once ---- */

static int run_dry(struct daemon *d)
{
	struct profile prof = { 0 };
	struct match_list matches = { 0 };
	struct plan plan;
	char err[ERRLEN] = "";
	struct json j;
	int rc, code;

	rc = profile_load(d->opt.profile, &prof, err, sizeof(err));
	if (rc < 0) {
		pr_err("%s", err);
		return EXIT_USAGE;
	}
	rc = resolve(&prof, &matches, &plan, err, sizeof(err));
	if (rc == -ENOENT)	/* show the (empty) plan, then say why it is refused */
		rc = plan_build(&prof, &matches, &plan) < 0 ? -ENOENT : 1;
	if (rc < 0) {
		pr_err("%s", err);
		code = rc == -EINVAL ? EXIT_USAGE : EXIT_REFUSED;
		goto out;
	}
	if (d->opt.json) {
		json_init(&j);
		plan_write_json(&plan, &j);
		json_raw(&j, "\n", 1);
		if (json_error(&j) == 0)
			fwrite(json_buf(&j), 1, json_len(&j), stdout);
		else
			pr_err("cannot write the plan as JSON: %s", strerror(-json_error(&j)));
		json_fini(&j);
	} else {
		plan_print_text(&plan, stdout);
	}
	fflush(stdout);
	if (rc == 1) {
		pr_err("%s", err);
		code = EXIT_REFUSED;
	} else {
		code = plan.feasible ? 0 : EXIT_REFUSED;
	}
out:
	plan_free(&plan);
	match_list_free(&matches);
	profile_free(&prof);
	return code;
}

/* ---- the daemon ---- */

/*
 * One irqresd per run directory: the state file there belongs to the instance holding
 * RUN_DIR/lock (flock, released when the process ends, however it ends). Without it a
 * second start would take a running daemon's state file for a crashed one's and undo
 * its reservations.
 */
static int instance_lock(char *err, size_t errlen)
{
	char path[sizeof(irqres_paths.run) + 8];
	int fd, e;

	if (mkdir(irqres_paths.run, 0700) < 0 && errno != EEXIST) {
		e = errno;
		snprintf(err, errlen, "cannot create the run directory %s: %s", irqres_paths.run,
			 strerror(e));
		return -e;
	}
	snprintf(path, sizeof(path), "%s/lock", irqres_paths.run);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		e = errno;
		close(fd);
		if (e == EWOULDBLOCK) {
			snprintf(err, errlen, "another irqresd uses %s (%s is locked); talk to it "
				 "through its socket (irqres status / restore) or stop it first",
				 irqres_paths.run, path);
			return -EBUSY;
		}
		snprintf(err, errlen, "%s: flock: %s", path, strerror(e));
		return -e;
	}
	return fd;
}

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);	/* a client gone mid-reply is an error return, not death */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	d->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sigfd < 0 ? -errno : 0;
}

static int setup_timer(struct daemon *d)
{
	struct itimerspec its = { 0 };
	uint64_t tick = 0, now = now_ns();

	d->rescan_ns = (uint64_t)d->opt.rescan_ms * NS_PER_MS;
	d->watchdog_ns = notify_watchdog_interval_ns();
	d->next_rescan = now + d->rescan_ns;
	d->next_watchdog = now + d->watchdog_ns;
	if (d->rescan_ns)
		tick = d->rescan_ns;
	if (d->watchdog_ns && (!tick || d->watchdog_ns < tick))
		tick = d->watchdog_ns;
	d->tick_ns = tick;
	d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timerfd < 0)
		return -errno;
	if (!tick)
		return 0;
	its.it_value.tv_sec = (time_t)(tick / NS_PER_S);
	its.it_value.tv_nsec = (long)(tick % NS_PER_S);
	its.it_interval = its.it_value;
	return timerfd_settime(d->timerfd, 0, &its, NULL) < 0 ? -errno : 0;
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;
	char err[ERRLEN];
	char *path;

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			if (!d->have_prof) {
				pr_info("SIGHUP: no profile to reload");
				break;
			}
			path = strdup(d->prof.path);
			if (!path)
				break;
			pr_info("SIGHUP: reloading %s", path);
			if (do_apply(d, path, true, NULL, err, sizeof(err)) < 0)
				pr_err("reload refused, the previous profile stays: %s", err);
			free(path);
			break;
		default:
			pr_info("%s: restoring and exiting", strsignal((int)si.ssi_signo));
			d->quit = true;
		}
	}
}

static void on_timer(struct daemon *d)
{
	uint64_t ticks, now = now_ns();

	if (read(d->timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		pr_debug("timerfd: %m");
	/* a tick that comes a little before a due time counts: half a tick of slack */
	if (d->watchdog_ns && now + d->tick_ns / 2 >= d->next_watchdog) {
		notify_watchdog();
		while (d->next_watchdog <= now + d->tick_ns / 2)
			d->next_watchdog += d->watchdog_ns;
	}
	if (d->rescan_ns && now + d->tick_ns / 2 >= d->next_rescan) {
		d->rescan_now = true;
		while (d->next_rescan <= now + d->tick_ns / 2)
			d->next_rescan += d->rescan_ns;
	}
}

static int serve(struct daemon *d)
{
	struct pollfd fds[3 + 1 + CTL_CLIENTS_MAX];
	size_t n, nctl;
	int rc, timeout;

	while (!d->quit) {
		n = 0;
		fds[n++] = (struct pollfd){ .fd = d->sigfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = d->timerfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = hotplug_fd(d->hp), .events = POLLIN };
		nctl = ctl_pollfds(d->ctl, fds + n, sizeof(fds) / sizeof(fds[0]) - n);
		timeout = d->rescan_now ? 0 : hotplug_retry_timeout_ms(d->hp);
		rc = poll(fds, n + nctl, timeout);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			pr_err("poll: %s", strerror(-rc));
			return rc;
		}
		if (fds[0].revents)
			on_signal(d);
		if (d->quit)
			break;
		if (fds[2].revents) {
			rc = hotplug_dispatch(d->hp);
			if (rc < 0)
				pr_warn("proc connector: %s", strerror(-rc));
		}
		hotplug_run_retries(d->hp);
		if (fds[1].revents)
			on_timer(d);
		if (d->rescan_now) {
			d->rescan_now = false;
			rescan(d);
		}
		ctl_dispatch(d->ctl, fds + n, nctl);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct daemon d;
	char err[ERRLEN] = "";
	int rc, code = 0;

	memset(&d, 0, sizeof(d));
	d.sigfd = d.timerfd = d.lockfd = -1;
	log_init("irqresd", false);
	rc = parse_options(argc, argv, &d.opt, d.socket_path);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;

	if (d.opt.dry_run)
		return run_dry(&d);

	d.lockfd = instance_lock(err, sizeof(err));
	if (d.lockfd < 0) {
		pr_err("%s", err);
		return EXIT_REFUSED;
	}
	state_init(&d.st);
	rc = state_open(&d.st, err, sizeof(err));
	if (rc < 0) {
		pr_err("%s", err[0] ? err : strerror(-rc));
		code = EXIT_REFUSED;
		goto out_state;
	}
	if (!state_empty(&d.st)) {
		pr_warn("%s: state of an earlier run found (it did not stop cleanly): "
			"restoring it first", d.st.path);
		rc = restore_everything(&d);
		if (d.opt.restore) {
			code = rc < 0 ? EXIT_REFUSED : 0;
			goto out_state;
		}
	} else if (d.opt.restore) {
		pr_info("%s: nothing to restore", d.st.path);
		goto out_state;
	}

	rc = notify_init();
	if (d.opt.profile) {
		rc = do_apply(&d, d.opt.profile, !d.opt.once, NULL, err, sizeof(err));
		if (rc < 0) {
			pr_err("%s", err[0] ? err : strerror(-rc));
			code = rc == -EINVAL ? EXIT_USAGE : EXIT_REFUSED;
			goto out_notify;
		}
	}
	if (d.opt.once) {
		pr_info("--once: reservations stay; undo them with irqresd --restore");
		goto out_notify;
	}

	rc = setup_signals(&d);
	if (rc < 0) {
		pr_err("signals: %s", strerror(-rc));
		code = EXIT_REFUSED;
		goto out_restore;
	}
	rc = ctl_init(&d.ctl, d.socket_path, on_request, &d, err, sizeof(err));
	if (rc < 0) {
		pr_err("control socket: %s", err);
		code = EXIT_REFUSED;
		goto out_signals;
	}
	/* without the connector (no CAP_NET_ADMIN, no kernel support) rescans carry on alone */
	hotplug_init(&d.hp, d.opt.netlink, on_hotplug, &d);
	if (!d.hp) {
		pr_err("hotplug: %s", strerror(ENOMEM));
		code = EXIT_REFUSED;
		goto out_ctl;
	}
	rc = setup_timer(&d);
	if (rc < 0) {
		pr_err("timerfd: %s", strerror(-rc));
		code = EXIT_REFUSED;
		goto out_hotplug;
	}
	/* threads that appeared between the apply and the subscription: one full rescan */
	d.rescan_now = d.events_lost = true;
	if (hotplug_fd(d.hp) < 0 && !d.rescan_ns)
		pr_warn("no proc connector and --rescan 0: new threads will not be reserved");
	pr_info("listening on %s%s", d.socket_path, d.have_prof ? "" : " (no profile)");
	notify_ready(d.have_prof ? "reservations in force" : "no profile");
	if (serve(&d) < 0)
		code = EXIT_REFUSED;
	notify_stopping();

	close(d.timerfd);
out_hotplug:
	hotplug_fini(d.hp);
out_ctl:
	ctl_fini(d.ctl);
out_signals:
	close(d.sigfd);
out_restore:
	if (restore_everything(&d) < 0 && code == 0)
		code = EXIT_REFUSED;
	drop_profile(&d);
out_notify:
	drop_profile(&d);
	notify_fini();
out_state:
	state_free(&d.st);
	free(d.m);
	close(d.lockfd);
	log_fini();
	return code;
}
