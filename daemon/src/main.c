/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main.c - irqresd: options, start-up (the instance lock, crash recovery, apply), then
 * either a mode that answers and exits (oneshot.h) or the daemon loop (mainloop.h), and
 * the orderly exit.
 *
 * What the daemon knows at run time lives in struct daemon (daemon.h); the control
 * requests are answered in requests.c. Init runs in one order in main(); fini runs in the
 * reverse order from one path.
 */
#include "acct.h"
#include "daemon.h"
#include "irqres.h"
#include "log.h"
#include "mainloop.h"
#include "notify.h"
#include "oneshot.h"
#include "salvage.h"
#include "state.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESCAN_MAX_NS (3600 * NS_PER_S)

/* ---- options ---- */

enum {
	OPT_JSON = 256, OPT_ONCE, OPT_RESTORE, OPT_RUN_DIR, OPT_SOCKET, OPT_RESCAN,
	OPT_NO_NETLINK, OPT_PROC, OPT_SYS, OPT_CGROUP, OPT_TRACEFS, OPT_VERSION, OPT_RELOAD, OPT_VERIFY,
	OPT_STATUS,
};

static const struct option long_opts[] = {
	{ "profile", required_argument, NULL, 'p' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "restore", no_argument, NULL, OPT_RESTORE },
	{ "reload", no_argument, NULL, OPT_RELOAD },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "status", no_argument, NULL, OPT_STATUS },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "rescan", required_argument, NULL, OPT_RESCAN },
	{ "no-netlink", no_argument, NULL, OPT_NO_NETLINK },
	{ "proc", required_argument, NULL, OPT_PROC },
	{ "sys", required_argument, NULL, OPT_SYS },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "tracefs", required_argument, NULL, OPT_TRACEFS },
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
	      "  -p, --profile FILE   profile to apply (YAML, see irqres-profile(5))\n"
	      "  -n, --dry-run        print the plan and exit: 0 the kernel will accept it,\n"
	      "                       1 it will not, 2 bad profile or bad option\n"
	      "      --json           with --dry-run, --verify, --status: JSON on stdout\n"
	      "      --verify         compare the running system with the profile (-p): exit 0\n"
	      "                       it holds, 1 it differs (each difference printed), 2 bad\n"
	      "                       profile\n"
	      "      --status         print what the state file records (the reservations an\n"
	      "                       irqresd --once left, or a running daemon holds) and exit\n"
	      "      --once           apply, record the state, exit without serving the socket\n"
	      "                       (undo later with irqresd --restore)\n"
	      "      --restore        restore every thread in the state file, remove irqres's\n"
	      "                       partitions, delete the state file, exit; a damaged\n"
	      "                       state file: exit 1, the file kept\n"
	      "      --reload         ask the running irqresd (its socket) to re-read its own\n"
	      "                       profile, wait for the answer; exit 0 done, 1 refused\n"
	      "                       (systemctl reload runs this)\n"
	      "      --run-dir DIR    state file (DIR/state) and socket dir [/run/irqres]\n"
	      "      --socket PATH    control socket [RUN_DIR/irqresd.sock]\n"
	      "      --rescan TIME    periodic rescan for new threads and drift: a duration\n"
	      "                       with a unit (500ms, 2s), 0 = off [1s]; while the proc\n"
	      "                       connector works, user tasks are listed only for cgroup\n"
	      "                       selectors (every 10th time) or after lost events\n"
	      "      --no-netlink     no proc connector events (rescans only)\n"
	      "      --proc DIR       /proc root [/proc]\n"
	      "      --sys DIR        /sys root [/sys]\n"
	      "      --cgroup DIR     cgroup v2 root [/sys/fs/cgroup]\n"
	      "      --tracefs DIR    tracefs mount for the live accounting of the targets\n"
	      "                       with serves: [found by libtracefs]\n"
	      "  -v, --verbose        debug log\n"
	      "      --version        print the version and exit\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Without --dry-run, --once or --restore irqresd runs as a daemon: SIGTERM/SIGINT\n"
	      "restore every thread and exit 0; SIGHUP (or irqresd --reload) re-reads the\n"
	      "profile given with -p and applies it in place of whatever is in force.\n"
	      "\n"
	      "Example: irqresd --dry-run -p /etc/irqres/profile.yaml\n", f);
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

/* The options that only set a flag of struct options. */
static const struct {
	int opt;
	size_t off;
	bool value;
} flag_opts[] = {
	{ 'n', offsetof(struct options, dry_run), true },
	{ 'v', offsetof(struct options, verbose), true },
	{ OPT_JSON, offsetof(struct options, json), true },
	{ OPT_ONCE, offsetof(struct options, once), true },
	{ OPT_RESTORE, offsetof(struct options, restore), true },
	{ OPT_RELOAD, offsetof(struct options, reload), true },
	{ OPT_VERIFY, offsetof(struct options, verify), true },
	{ OPT_STATUS, offsetof(struct options, status), true },
	{ OPT_NO_NETLINK, offsetof(struct options, netlink), false },
};

static bool flag_option(int c, struct options *o)
{
	for (size_t i = 0; i < sizeof(flag_opts) / sizeof(flag_opts[0]); i++) {
		if (flag_opts[i].opt == c) {
			*(bool *)((char *)o + flag_opts[i].off) = flag_opts[i].value;
			return true;
		}
	}
	return false;
}

static int rescan_option(const char *val, struct options *o)
{
	const char *why;

	if (units_parse_duration(val, &o->rescan_ns, &why) < 0) {
		pr_err("--rescan '%s': %s", val, why);
		return -EINVAL;
	}
	if (o->rescan_ns > RESCAN_MAX_NS) {
		pr_err("--rescan '%s': longer than 1h (0 turns rescans off)", val);
		return -EINVAL;
	}
	return 0;
}

/* One option with a value, or a mistake; 1 for --help and --version. */
static int value_option(int c, int argc, char **argv, struct options *o)
{
	switch (c) {
	case 'p': o->profile = optarg; return 0;
	case 'h': usage(stdout); return 1;
	case OPT_VERSION: printf("irqresd %s\n", IRQRES_VERSION); return 1;
	case OPT_SOCKET: o->socket = optarg; return 0;
	case OPT_RESCAN: return rescan_option(optarg, o);
	case OPT_TRACEFS: acct_set_tracing_dir(optarg); return 0;
	case OPT_RUN_DIR:
	case OPT_PROC:
	case OPT_SYS:
	case OPT_CGROUP:
		return set_root(c, optarg) ? -EINVAL : 0;
	case ':':
		pr_err("option '%s' needs an argument (see --help)", argv[optind - 1]);
		return -EINVAL;
	default:
		pr_err("unknown option '%s' (see --help)", argv[optind - 1]);
		return -EINVAL;
	}
}

/* The modes exclude each other; --verify needs a profile, --status and --reload none. */
static int check_modes(const struct options *o)
{
	if ((int)o->dry_run + (int)o->once + (int)o->restore + (int)o->reload + (int)o->verify +
	    (int)o->status > 1) {
		pr_err("--dry-run, --once, --restore, --reload, --verify and --status exclude each "
		       "other");
		return -EINVAL;
	}
	if (o->verify && !o->profile) {
		pr_err("--verify needs a profile (-p FILE)");
		return -EINVAL;
	}
	if (o->status && o->profile) {
		pr_err("--status takes no profile: it reads the state file");
		return -EINVAL;
	}
	if (o->reload && o->profile) {
		pr_err("--reload takes no profile: the daemon re-reads its own");
		return -EINVAL;
	}
	return 0;
}

/* --json only with a report; --dry-run and --once need a profile, --restore none. */
static int check_mode_args(const struct options *o)
{
	if (o->json && !o->dry_run && !o->verify && !o->status) {
		pr_err("--json goes with --dry-run, --verify or --status");
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
	return 0;
}

/* Returns 0, 1 when the program should exit 0 now (--help, --version), or -EINVAL. */
/*
 * -p as an absolute path: what status shows and what a reload re-reads must not depend on
 * the directory irqresd was started in (a reload resolves nothing against it later).
 */
static char profile_abs[PATH_MAX];

static int absolute_profile(struct options *o)
{
	char cwd[PATH_MAX];
	const char *rel = o->profile;
	int n, err;

	if (!rel || rel[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd))) {
		err = errno;
		pr_err("-p %s: cannot tell the working directory it is relative to: %s", rel,
		       strerror(err));
		return -err;
	}
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	n = snprintf(profile_abs, sizeof(profile_abs), "%s%s%s", cwd,
		     strcmp(cwd, "/") ? "/" : "", rel);
	if (n < 0 || (size_t)n >= sizeof(profile_abs)) {
		pr_err("-p %s: path too long in %s", o->profile, cwd);
		return -ENAMETOOLONG;
	}
	o->profile = profile_abs;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o, char *socket_path)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->netlink = true;
	o->rescan_ns = NS_PER_S;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:nvh", long_opts, NULL)) != -1) {
		if (flag_option(c, o))
			continue;
		rc = value_option(c, argc, argv, o);
		if (rc)
			return rc;
	}
	log_debug_enabled = log_debug_enabled || o->verbose;
	if (optind < argc) {
		pr_err("unexpected argument '%s' (the profile goes after -p; see --help)",
		       argv[optind]);
		return -EINVAL;
	}
	if (check_modes(o) || check_mode_args(o))
		return -EINVAL;
	rc = absolute_profile(o);
	if (rc)
		return rc;
	if (o->socket && strlen(o->socket) >= PATH_MAX) {
		pr_err("--socket: path too long");
		return -EINVAL;
	}
	if (o->socket)
		snprintf(socket_path, PATH_MAX, "%s", o->socket);
	else
		snprintf(socket_path, PATH_MAX, "%s/irqresd.sock", irqres_paths.run);
	return 0;
}

/* ---- start-up ---- */

/*
 * One irqresd per run directory: the state file there belongs to the instance holding
 * RUN_DIR/lock (flock, released when the process ends, however it ends). Without it a
 * second start would take a running daemon's state file for a crashed one's and undo
 * its reservations.
 */
/*
 * The lock of a read-only run dir, for --restore: the lock file when there is one (a
 * flock needs no write access), else the directory itself (no daemon can run on a
 * read-only run dir: it could not record anything). An fd, or -1 with errno set.
 */
static int readonly_lock(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		fd = open(irqres_paths.run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd;
}

static int instance_lock(bool restore, char *err, size_t errlen)
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
	if (fd < 0 && errno == EROFS && restore)
		fd = readonly_lock(path);
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

/*
 * A damaged state file: what its good records name is restored (with what their lost
 * neighbours would have said that the kernel still shows: salvage.h), the file is kept as
 * it is (no rewrite, no deletion) and the run fails, naming what could not be accounted for.
 */
static int state_damaged(struct daemon *d, const char *first)
{
	int rc;

	salvage_begin(&d->st);	/* best effort: what it cannot do is logged */
	rc = state_empty(&d->st) ? 0 : daemon_restore_everything(d);
	salvage_end();

	pr_err("%s", first);
	pr_err("state file %s: %u problem%s (each logged above): what %s recorded could not be "
	       "restored; restored %d thread%s from its good records; the file is kept as it is "
	       "(check the threads and partitions it names, then remove it)%s", d->st.path,
	       d->st.damaged, d->st.damaged == 1 ? "" : "s", d->st.damaged == 1 ? "it" : "they",
	       rc > 0 ? rc : 0, rc == 1 ? "" : "s",
	       d->opt.restore ? "" : "; irqresd does not start over it");
	return EXIT_REFUSED;
}

/* Opens the state file and restores what an earlier run left there. False when that is
 * all there is to do (--restore, or a failure), with *code the exit code. */
static bool state_start(struct daemon *d, int *code)
{
	char err[ERRLEN] = "";
	int rc = state_open(&d->st, err, sizeof(err));

	if (rc < 0) {
		pr_err("%s", err[0] ? err : strerror(-rc));
		*code = EXIT_REFUSED;
		return false;
	}
	if (d->st.damaged) {
		*code = state_damaged(d, err);
		return false;
	}
	/* --restore on a read-only run dir: restore, and leave the file (it cannot go) */
	if (d->opt.restore && access(irqres_paths.run, W_OK) < 0 && errno == EROFS) {
		pr_warn("%s: read-only file system: restoring without rewriting or deleting the "
			"state file", irqres_paths.run);
		d->st.frozen = true;
	}
	if (!state_empty(&d->st)) {
		pr_warn("%s: state of an earlier run found (it did not stop cleanly): "
			"restoring it first", d->st.path);
		rc = daemon_restore_everything(d);
		if (!d->opt.restore)
			return true;
		if (rc >= 0)
			printf("restored %d thread%s from %s%s\n", rc, rc == 1 ? "" : "s", d->st.path,
			       d->st.frozen ? " (read-only: the file stays; a later --restore finds "
			       "its threads already restored)" : "");
		*code = rc < 0 ? EXIT_REFUSED : 0;
		return false;
	}
	if (!d->opt.restore)
		return true;
	pr_info("%s: nothing to restore", d->st.path);
	printf("nothing to restore: no state file %s (irqres changed nothing here)\n",
	       d->st.path);
	return false;
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
	code = oneshot_run(&d);
	if (code >= 0)
		return code;
	code = 0;

	d.lockfd = instance_lock(d.opt.restore, err, sizeof(err));
	if (d.lockfd < 0) {
		pr_err("%s", err);
		return EXIT_REFUSED;
	}
	state_init(&d.st);
	if (!state_start(&d, &code))
		goto out_state;

	rc = notify_init();
	if (d.opt.profile) {
		rc = daemon_apply(&d, d.opt.profile, NULL, 0, !d.opt.once, NULL, err, sizeof(err));
		if (rc < 0) {
			pr_err("%s", err[0] ? err : strerror(-rc));
			code = rc == -EINVAL ? EXIT_USAGE : EXIT_REFUSED;
			/* an apply the kernel refused half-way was undone: its file records
			 * nothing now, and a file left would look like a crash's */
			if (state_empty(&d.st))
				state_remove(&d.st);
			goto out_notify;
		}
	}
	if (d.opt.once) {
		pr_info("--once: reservations stay; undo them with irqresd --restore");
		goto out_notify;
	}
	code = mainloop_run(&d);
	if (daemon_restore_everything(&d) < 0 && code == 0)
		code = EXIT_REFUSED;
out_notify:
	daemon_drop_profile(&d);
	notify_fini();
out_state:
	state_free(&d.st);
	free(d.m);
	close(d.lockfd);
	log_fini();
	return code;
}
