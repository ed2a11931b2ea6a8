/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main.c - irqresd: options, start-up (crash recovery, apply), the poll() loop over
 * signals, the control socket, the proc connector and a timer, and the orderly exit.
 *
 * What the daemon knows at run time lives in struct daemon (daemon.h); the control
 * requests are answered in requests.c. Init runs in one order in main(); fini runs in the
 * reverse order from one path.
 */
#include "ctl.h"
#include "daemon.h"
#include "hotplug.h"
#include "irqres.h"
#include "json.h"
#include "log.h"
#include "notify.h"
#include "plan.h"
#include "plan_report.h"
#include "profile.h"
#include "requests.h"
#include "salvage.h"
#include "state.h"
#include "units.h"
#include "verify.h"
#include "discover.h"
#include "dl.h"
#include "cpuset.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define EXIT_REFUSED 1		/* the kernel will not / did not accept it */
#define EXIT_USAGE 2		/* bad profile or bad option */
#define RESCAN_MAX_NS (3600 * NS_PER_S)

/* ---- options ---- */

enum {
	OPT_JSON = 256, OPT_ONCE, OPT_RESTORE, OPT_RUN_DIR, OPT_SOCKET, OPT_RESCAN,
	OPT_NO_NETLINK, OPT_PROC, OPT_SYS, OPT_CGROUP, OPT_VERSION, OPT_RELOAD, OPT_VERIFY,
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
	rc = daemon_resolve(&prof, &matches, &plan, err, sizeof(err));
	if (rc == -ENOENT)	/* show the (empty) plan, then say why it is refused */
		rc = 1;
	if (rc < 0) {
		pr_err("%s", err);
		code = rc == -EINVAL ? EXIT_USAGE : EXIT_REFUSED;
		goto out;
	}
	if (d->opt.json) {
		json_init(&j);
		plan_report_json(&plan, &j);
		json_raw(&j, "\n", 1);
		if (json_error(&j) == 0)
			fwrite(json_buf(&j), 1, json_len(&j), stdout);
		else
			pr_err("cannot write the plan as JSON: %s", strerror(-json_error(&j)));
		json_fini(&j);
	} else {
		plan_report_text(&plan, stdout);
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

/*
 * irqresd --reload: the client systemctl reload runs (ExecReload=). It waits for the
 * daemon's answer, so a refused reload fails the reload job instead of being a line in
 * the journal only. Exit 0 done, 1 refused or no daemon.
 */
/* Sends "reload" to the daemon at path and reads its one-line answer into reply; 0 or
 * an exit code, the failure logged. */
static int reload_ask(const char *path, char *reply, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t got = 0;
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_err("%s: socket path too long", path);
		return EXIT_REFUSED;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		pr_err("reload: no irqresd answers on %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return EXIT_REFUSED;
	}
	if (write(fd, "reload\n", 7) != 7) {
		e = errno;
		pr_err("reload: %s: %s", path, strerror(e));
		close(fd);
		return EXIT_REFUSED;
	}
	while (got < len - 1 && !memchr(reply, '\n', got)) {
		ssize_t n = read(fd, reply + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	reply[got] = '\0';
	reply[strcspn(reply, "\n")] = '\0';
	return 0;
}

static int run_reload(struct daemon *d)
{
	char reply[ERRLEN * 2], *msg;
	int code = reload_ask(d->socket_path, reply, sizeof(reply));

	if (code)
		return code;
	if (strncmp(reply, "{\"ok\":true", 10) == 0) {
		pr_info("reload: done: %s", reply);
		return 0;
	}
	msg = strstr(reply, "\"error\":\"");
	if (msg) {	/* the message, its JSON escapes undone (\" and \\ are all it holds) */
		char *w = msg;

		for (const char *r = msg + 9; *r && *r != '"'; r++)
			*w++ = *r == '\\' && r[1] ? *++r : *r;
		*w = '\0';
	}
	pr_err("reload refused: %s", msg ? msg : reply[0] ? reply :
	       "irqresd closed the connection");
	return EXIT_REFUSED;
}

static void print_json(struct json *j)
{
	json_raw(j, "\n", 1);
	if (json_error(j) == 0)
		fwrite(json_buf(j), 1, json_len(j), stdout);
	else
		pr_err("cannot write JSON: %s", strerror(-json_error(j)));
}

/* irqresd --verify -p FILE: 0 the system holds the profile, 1 it differs, 2 bad profile. */
static int run_verify(struct daemon *d)
{
	struct profile prof = { 0 };
	struct verify_result res;
	char err[ERRLEN] = "";
	struct json j;
	int rc;

	rc = profile_load(d->opt.profile, &prof, err, sizeof(err));
	if (rc < 0) {
		pr_err("%s", err);
		return EXIT_USAGE;
	}
	rc = verify_profile(&prof, NULL, 0, &res, err, sizeof(err));
	if (rc < 0) {
		pr_err("%s", err);
		profile_free(&prof);
		return EXIT_REFUSED;
	}
	if (d->opt.json) {
		json_init(&j);
		json_obj_begin(&j);
		verify_write_json(&prof, &res, &j);
		json_obj_end(&j);
		print_json(&j);
		json_fini(&j);
	} else {
		verify_print_text(&prof, &res, stdout);
	}
	rc = res.n_diffs ? EXIT_REFUSED : 0;
	verify_result_free(&res);
	profile_free(&prof);
	return rc;
}

/*
 * irqresd --status: what RUN_DIR/state records, read only (no lock: a running daemon may
 * hold it), each thread with its scheduling now. How `irqres status` shows the
 * reservations irqresd --once left when no daemon answers.
 */
/* One recorded thread as --status --json shows it, with its scheduling now. */
static void status_thread_json(const struct state_thread *t, struct json *j)
{
	char cpus[256];
	struct thread_info ti;
	struct dl_attr a;
	bool same = discover_read(t->pid, &ti) == 0 && ti.starttime == t->starttime;

	json_obj_begin(j);
	json_kv_int(j, "pid", t->pid);
	json_kv_str(j, "comm", t->comm);
	json_kv_bool(j, "alive", same);
	if (same && dl_get(t->pid, &a) == 0) {
		json_kv_str(j, "policy", dl_policy_name((int)a.sched_policy));
		json_kv_uint(j, "runtime_ns", a.sched_runtime);
		json_kv_uint(j, "deadline_ns", a.sched_deadline);
		json_kv_uint(j, "period_ns", a.sched_period);
	} else {
		json_kv_str(j, "policy", "gone");
	}
	json_kv_str(j, "orig_policy", dl_policy_name(t->policy));
	json_kv_int(j, "orig_priority", t->priority);
	if (cpuset_list_format(&t->affinity, cpus, sizeof(cpus)) < 0)
		cpus[0] = '\0';
	json_kv_str(j, "cpus", cpus);
	json_kv_str(j, "partition", t->partition[0] ? t->partition : NULL);
	json_obj_end(j);
}

static void status_json(const struct state *st, const char *path, bool exists,
			struct json *j)
{
	json_obj_begin(j);
	json_kv_str(j, "state_file", path);
	json_kv_bool(j, "exists", exists);
	json_kv_str(j, "admission_control", st->rt_runtime_saved ? "disabled by irqres" : "keep");
	json_key(j, "threads");
	json_arr_begin(j);
	for (size_t i = 0; i < st->n_threads; i++)
		status_thread_json(&st->threads[i], j);
	json_arr_end(j);
	json_key(j, "partitions");
	json_arr_begin(j);
	for (size_t i = 0; i < st->n_parts; i++)
		json_str(j, st->parts[i].name);
	json_arr_end(j);
	/* IRQ threads whose CPUs a partition change took, given back on restore */
	json_key(j, "owed");
	json_arr_begin(j);
	for (size_t i = 0; i < st->n_owed; i++) {
		char cpus[256];

		if (cpuset_list_format(&st->owed[i].cpus, cpus, sizeof(cpus)) < 0)
			cpus[0] = '\0';
		json_obj_begin(j);
		json_kv_int(j, "pid", st->owed[i].pid);
		json_kv_str(j, "comm", st->owed[i].comm);
		json_kv_str(j, "cpus", cpus);
		json_obj_end(j);
	}
	json_arr_end(j);
	/* a sched feature irqres switched (enforce.h), given back on restore */
	json_key(j, "sched_feature");
	if (st->feature_saved) {
		json_obj_begin(j);
		json_kv_str(j, "name", st->feature.name);
		json_kv_bool(j, "was", st->feature.was == 1);
		json_kv_bool(j, "set", st->feature.set == 1);
		json_obj_end(j);
	} else {
		json_null(j);
	}
	json_obj_end(j);
}

static int run_status(struct daemon *d)
{
	struct state st;
	char err[ERRLEN] = "", path[sizeof(irqres_paths.run) + 8];
	struct json j;
	int rc;

	snprintf(path, sizeof(path), "%s/state", irqres_paths.run);
	state_init(&st);
	rc = state_load(&st, path, err, sizeof(err));
	if (rc < 0 && rc != -ENOENT) {
		pr_err("state file %s: cannot read: %s", path, strerror(-rc));
		state_free(&st);
		return EXIT_REFUSED;
	}
	json_init(&j);
	status_json(&st, path, rc != -ENOENT, &j);
	if (d->opt.json) {
		print_json(&j);
	} else if (rc == -ENOENT) {
		printf("no state file %s: irqres holds no reservation here\n", path);
	} else {
		printf("state file %s: %zu thread%s, %zu partition%s\n", path, st.n_threads,
		       st.n_threads == 1 ? "" : "s", st.n_parts, st.n_parts == 1 ? "" : "s");
		for (size_t i = 0; i < st.n_threads; i++)
			printf("  %s (pid %d), was %s\n", st.threads[i].comm, (int)st.threads[i].pid,
			       dl_policy_name(st.threads[i].policy));
		for (size_t i = 0; i < st.n_owed; i++) {
			char cpus[256];

			printf("  %s (pid %d): CPU affinity %s to give back\n", st.owed[i].comm,
			       (int)st.owed[i].pid,
			       cpuset_list_str(&st.owed[i].cpus, cpus, sizeof(cpus)));
		}
		if (st.feature_saved)
			printf("  sched feature %s: set %s, to give back %s\n", st.feature.name,
			       st.feature.set ? "on" : "off", st.feature.was ? "on" : "off");
	}
	json_fini(&j);
	state_free(&st);
	return 0;
}

/* ---- the daemon ---- */

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
	uint64_t tick = 0, now = daemon_now_ns();

	d->rescan_ns = d->opt.rescan_ns;
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

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			daemon_reload(d, err, sizeof(err));	/* logs a refusal itself */
			break;
		default:
			pr_info("%s: restoring and exiting", strsignal((int)si.ssi_signo));
			d->quit = true;
		}
	}
}

static void on_timer(struct daemon *d)
{
	uint64_t ticks, now = daemon_now_ns();

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
	int rc, timeout, ctl_timeout, pending_timeout;

	while (!d->quit) {
		n = 0;
		fds[n++] = (struct pollfd){ .fd = d->sigfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = d->timerfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = hotplug_fd(d->hp), .events = POLLIN };
		nctl = ctl_pollfds(d->ctl, fds + n, sizeof(fds) / sizeof(fds[0]) - n);
		timeout = d->rescan_now ? 0 : hotplug_retry_timeout_ms(d->hp);
		ctl_timeout = ctl_timeout_ms(d->ctl);
		if (ctl_timeout >= 0 && (timeout < 0 || ctl_timeout < timeout))
			timeout = ctl_timeout;
		pending_timeout = daemon_pending_timeout_ms(d);	/* threads waiting to run */
		if (pending_timeout >= 0 && (timeout < 0 || pending_timeout < timeout))
			timeout = pending_timeout;
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
		daemon_run_pending(d);
		if (fds[1].revents)
			on_timer(d);
		if (d->rescan_now) {
			d->rescan_now = false;
			daemon_rescan(d);
		}
		ctl_dispatch(d->ctl, fds + n, nctl);
	}
	return 0;
}

/* The modes that answer and exit (--dry-run, --reload, --verify, --status): the exit
 * code, or -1 for none of them. */
static int run_oneshot(struct daemon *d)
{
	if (d->opt.dry_run)
		return run_dry(d);
	if (d->opt.reload)
		return run_reload(d);
	if (d->opt.verify)
		return run_verify(d);
	if (d->opt.status)
		return run_status(d);
	return -1;
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

/* The daemon proper: signals, control socket, hotplug, rescan timer and the loop, torn
 * down in reverse order. Returns the exit code; the caller restores. */
static int run_daemon(struct daemon *d)
{
	char err[ERRLEN] = "";
	int rc, code = 0;

	rc = setup_signals(d);
	if (rc < 0) {
		pr_err("signals: %s", strerror(-rc));
		return EXIT_REFUSED;
	}
	rc = ctl_init(&d->ctl, d->socket_path, requests_handle, d, err, sizeof(err));
	if (rc < 0) {
		pr_err("control socket: %s", err);
		code = EXIT_REFUSED;
		goto out_signals;
	}
	/* without the connector (no CAP_NET_ADMIN, no kernel support) rescans carry on alone */
	hotplug_init(&d->hp, d->opt.netlink, daemon_on_hotplug, d);
	if (!d->hp) {
		pr_err("hotplug: %s", strerror(ENOMEM));
		code = EXIT_REFUSED;
		goto out_ctl;
	}
	rc = setup_timer(d);
	if (rc < 0) {
		pr_err("timerfd: %s", strerror(-rc));
		code = EXIT_REFUSED;
		goto out_hotplug;
	}
	/* threads that appeared between the apply and the subscription: one full rescan */
	d->rescan_now = d->events_lost = true;
	if (hotplug_fd(d->hp) < 0 && !d->rescan_ns)
		pr_warn("no proc connector and --rescan 0: new threads will not be reserved");
	pr_info("listening on %s%s", d->socket_path, d->have_prof ? "" : " (no profile)");
	notify_ready(d->have_prof ? "reservations in force" : "no profile");
	if (serve(d) < 0)
		code = EXIT_REFUSED;
	notify_stopping();

	close(d->timerfd);
out_hotplug:
	hotplug_fini(d->hp);
out_ctl:
	ctl_fini(d->ctl);
out_signals:
	close(d->sigfd);
	return code;
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
	code = run_oneshot(&d);
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
	code = run_daemon(&d);
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
