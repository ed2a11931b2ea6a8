/* SPDX-License-Identifier: GPL-2.0-only */
/* oneshot.c - the modes of irqresd that answer and exit; see oneshot.h. */
#include "oneshot.h"
#include "cpuset.h"
#include "discover.h"
#include "dl.h"
#include "json.h"
#include "log.h"
#include "plan.h"
#include "plan_report.h"
#include "profile.h"
#include "state.h"
#include "thread_status.h"
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
	struct thread_status s = {
		.pid = t->pid, .comm = t->comm, .cpus = cpus, .orig_policy = t->policy,
		.orig_priority = t->priority, .partition = t->partition,
	};

	if (cpuset_list_format(&t->affinity, cpus, sizeof(cpus)) < 0)
		cpus[0] = '\0';
	if (same && dl_get(t->pid, &a) == 0)
		s.now = &a;
	json_obj_begin(j);
	thread_status_members(&s, j);
	json_kv_bool(j, "alive", same);
	json_obj_end(j);
}

static void status_json(const struct state *st, const char *path, bool exists,
			struct json *j)
{
	json_obj_begin(j);
	json_kv_int(j, "schema_version", IRQRES_JSON_SCHEMA);
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
	/* interfaces irqres switched to threaded NAPI (napiswitch.h), given back on restore */
	json_key(j, "napi_threaded");
	json_arr_begin(j);
	for (size_t i = 0; i < st->n_netdevs; i++) {
		json_obj_begin(j);
		json_kv_str(j, "interface", st->netdevs[i].ifname);
		json_kv_int(j, "was", st->netdevs[i].was);
		json_kv_int(j, "set", st->netdevs[i].set);
		json_obj_end(j);
	}
	json_arr_end(j);
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
		for (size_t i = 0; i < st.n_netdevs; i++)
			printf("  interface %s: threaded NAPI set %d, to give back %d\n",
			       st.netdevs[i].ifname, st.netdevs[i].set, st.netdevs[i].was);
	}
	json_fini(&j);
	state_free(&st);
	return 0;
}

int oneshot_run(struct daemon *d)
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
