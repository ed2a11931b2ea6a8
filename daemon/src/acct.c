/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * acct.c - live accounting of device-thread time per served process; see acct.h.
 *
 * Each followed thread goes through: unknown (the trace began inside one of its
 * activations, or between them: it is not known which) until its first switch-out into
 * a sleep; then idle; an activation from its next switch-in to the switch-out into S or
 * I, whose on-CPU intervals (switch-in to switch-out, whatever the CPU) add up to its
 * execution time. tracering.c hands the records of every CPU over in time order.
 */
#include "acct.h"
#include "log.h"
#include "selfsched.h"
#include "tracering.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <tracefs.h>
#include <unistd.h>

#define SLEEP_STATE_MASK 0x81	/* prev_state S (TASK_INTERRUPTIBLE) or I (TASK_IDLE) */
#define FLAG_HARDIRQ 0x08
#define FLAG_SOFTIRQ 0x10
#define FLAG_NMI 0x40
#define INSTANCE_PREFIX "irqresd-"
#define BUFFER_KB "2048"	/* per CPU: a second of 10,000 activations with room */

struct woke {
	pid_t pid;
	uint64_t wakeups;
	char comm[16];
};

struct dev {
	pid_t pid;
	size_t target;
	bool synced;		/* a sleep was seen: activations are whole from now on */
	bool in_act, running, broken;
	uint64_t in_ts, exec_ns;
	struct woke *w;
	size_t n_w, cap_w;
};

static struct {
	char *dir;			/* the tracing dir asked for; NULL: the library's */
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	struct tracering *ring;
	int switch_id, waking_id;
	struct tep_format_field *prev_pid, *prev_state, *next_pid, *wk_pid, *wk_comm;
	bool failed, rt;
	bool mono;		/* the instance's trace clock is CLOCK_MONOTONIC */
	char err[256];
	struct dev *d;
	size_t n_d;
	struct acct_total *t;
	size_t n_t, cap_t;
	uint64_t lost, dropped;
} S;

void acct_set_tracing_dir(const char *dir)
{
	free(S.dir);
	S.dir = dir ? strdup(dir) : NULL;
}

bool acct_running(void) { return S.inst != NULL; }
const char *acct_error(void) { return S.err; }
uint64_t acct_lost_events(void) { return S.lost; }
uint64_t acct_dropped(void) { return S.dropped; }

const struct acct_total *acct_totals(size_t *n)
{
	*n = S.n_t;
	return S.t;
}

static const char *tracing_dir(void)
{
	return S.dir ? S.dir : tracefs_tracing_dir();
}

/* Making and removing an instance is one long system call before Linux 6.6 (every
 * event's files at once): done at SCHED_OTHER (selfsched.h). */
static struct tracefs_instance *instance_make(const char *name)
{
	struct tracefs_instance *inst;
	struct selfsched s;
	int err;

	selfsched_fair(&s);	/* on failure: made at irqresd's own policy */
	inst = tracefs_instance_create(name);
	err = errno;
	selfsched_back(&s);
	errno = err;
	return inst;
}

static void instance_remove(struct tracefs_instance *inst)
{
	struct selfsched s;

	selfsched_fair(&s);
	if (tracefs_instance_destroy(inst) < 0)
		pr_warn("accounting: tracefs instance %s: not removed: %s",
			tracefs_instance_get_name(inst), strerror(errno));
	selfsched_back(&s);
	tracefs_instance_free(inst);
}

static int rmdir_fair(const char *path)
{
	struct selfsched s;
	int rc, err;

	selfsched_fair(&s);
	rc = rmdir(path);
	err = errno;
	selfsched_back(&s);
	errno = err;
	return rc;
}

/* ---- the totals ---- */

static struct acct_total *total_get(size_t target, pid_t pid, const char *comm)
{
	struct acct_total *t;
	size_t i;

	for (i = 0; i < S.n_t; i++)
		if (S.t[i].target == target && S.t[i].pid == pid)
			goto found;
	if (S.n_t == S.cap_t) {
		size_t cap = S.cap_t ? 2 * S.cap_t : 16;

		t = realloc(S.t, cap * sizeof(*t));
		if (!t)
			return NULL;
		S.t = t;
		S.cap_t = cap;
	}
	S.t[i] = (struct acct_total){ .target = target, .pid = pid };
	S.n_t++;
found:
	snprintf(S.t[i].comm, sizeof(S.t[i].comm), "%s", comm);
	return &S.t[i];
}

static int woke_cmp(const void *a, const void *b)
{
	const struct woke *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The rule of acct.h: execution time split evenly, the remainder to the lowest pid. */
static void charge(struct dev *d)
{
	struct acct_total *t;
	uint64_t share, rem;
	size_t i;

	if (!d->n_w) {
		t = total_get(d->target, ACCT_NOBODY, "(none)");
		if (t) {
			t->time_ns += d->exec_ns;
			t->activations++;
		}
		return;
	}
	qsort(d->w, d->n_w, sizeof(*d->w), woke_cmp);
	share = d->exec_ns / d->n_w;
	rem = d->exec_ns - share * d->n_w;
	for (i = 0; i < d->n_w; i++) {
		t = total_get(d->target, d->w[i].pid, d->w[i].comm);
		if (!t)
			continue;
		t->time_ns += share + (i == 0 ? rem : 0);
		t->activations++;
		t->wakeups += d->w[i].wakeups;
	}
}

/* ---- the events ---- */

static struct dev *dev_find(int pid)
{
	size_t i;

	for (i = 0; i < S.n_d; i++)
		if (S.d[i].pid == pid)
			return &S.d[i];
	return NULL;
}

static void on_switch_out(struct dev *d, uint64_t ts, unsigned long long state)
{
	if (d->running && d->in_act)
		d->exec_ns += ts - d->in_ts;
	else if (d->synced)
		d->broken = d->in_act = true;	/* its switch-in was not traced: not whole */
	d->running = false;
	if (!(state & SLEEP_STATE_MASK))
		return;		/* preempted or blocked: the activation goes on */
	if (d->synced && d->in_act && !d->broken)
		charge(d);
	else if (d->synced && d->in_act)
		S.dropped++;
	d->synced = true;
	d->in_act = false;
}

static void on_switch_in(struct dev *d, uint64_t ts)
{
	if (d->running && d->in_act)
		d->broken = true;		/* its switch-out was not traced */
	if (d->synced && !d->in_act) {
		d->in_act = true;
		d->broken = false;
		d->exec_ns = 0;
		d->n_w = 0;
	}
	d->running = true;
	d->in_ts = ts;
}

static void on_waking(struct dev *d, int pid, const char *comm)
{
	struct woke *w;
	size_t i;

	if (!d->in_act || pid == d->pid)
		return;		/* before the first whole activation, or itself */
	for (i = 0; i < d->n_w; i++)
		if (d->w[i].pid == pid)
			goto found;
	if (d->n_w == d->cap_w) {
		size_t cap = d->cap_w ? 2 * d->cap_w : 4;

		w = realloc(d->w, cap * sizeof(*w));
		if (!w) {
			d->broken = true;	/* cannot be charged right */
			return;
		}
		d->w = w;
		d->cap_w = cap;
	}
	d->w[i] = (struct woke){ .pid = pid };
	snprintf(d->w[i].comm, sizeof(d->w[i].comm), "%.*s", 15, comm);
	d->n_w++;
found:
	d->w[i].wakeups++;
}

/* A gap in the records: every activation in progress may have lost events. */
static void on_lost(long long missed)
{
	size_t i;

	S.lost += missed > 0 ? (uint64_t)missed : 1;
	for (i = 0; i < S.n_d; i++)
		if (S.d[i].in_act)
			S.d[i].broken = true;
}

static bool credited(int flags)
{
	if (flags & (FLAG_HARDIRQ | FLAG_NMI))
		return false;
	return S.rt || !(flags & FLAG_SOFTIRQ);
}

static void on_record(struct tep_event *ev, struct tep_record *rec, void *ctx)
{
	unsigned long long a, b, state;
	struct dev *d;

	if (rec->missed_events)
		on_lost(rec->missed_events);
	if (ev->id == S.switch_id) {
		if (tep_read_number_field(S.prev_pid, rec->data, &a) ||
		    tep_read_number_field(S.next_pid, rec->data, &b) ||
		    tep_read_number_field(S.prev_state, rec->data, &state))
			return;
		d = dev_find((int)a);
		if (d)
			on_switch_out(d, rec->ts, state);
		d = dev_find((int)b);
		if (d)
			on_switch_in(d, rec->ts);
	} else if (ev->id == S.waking_id) {
		d = dev_find(tep_data_pid(S.tep, rec));
		if (!d || !credited(tep_data_flags(S.tep, rec)) ||
		    tep_read_number_field(S.wk_pid, rec->data, &a))
			return;
		on_waking(d, (int)a, (const char *)rec->data + S.wk_comm->offset);
	}
}

void acct_drain(void)
{
	if (!S.inst)
		return;
	struct timespec now;
	unsigned long long horizon = ~0ULL;
	int rc;

	if (S.mono && clock_gettime(CLOCK_MONOTONIC, &now) == 0)
		horizon = (unsigned long long)now.tv_sec * 1000000000ULL +
			  (unsigned long long)now.tv_nsec;
	rc = tracering_drain(S.ring, horizon, on_record, NULL);

	if (rc < 0)
		pr_debug("accounting: reading instance %s: %s", tracefs_instance_get_name(S.inst),
			 strerror(-rc));
}

/* ---- the instance ---- */

static bool irqresd_alive(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "irqresd", 7) == 0;	/* else the pid was taken again */
}

int acct_clean_stale(void)
{
	const char *dir = tracing_dir();
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *dp;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/instances", dir);
	dp = opendir(path);
	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
		if (*end || pid <= 0 || pid == getpid() || irqresd_alive((pid_t)pid))
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", dir, de->d_name);
		if (rmdir_fair(path) < 0) {
			pr_warn("accounting: stale tracefs instance %s: not removed: %s", path,
				strerror(errno));
			continue;
		}
		pr_info("accounting: removed the stale tracefs instance %s of irqresd pid %ld",
			path, pid);
		n++;
	}
	closedir(dp);
	return n;
}

/* The filters: "prev_pid==A||next_pid==A||..." and "common_pid==A||...". */
static int write_filters(void)
{
	size_t i, cap = 64 + S.n_d * 48;
	char *sw, *wk;
	int rc = 0;

	sw = calloc(1, cap);
	wk = calloc(1, cap);
	if (!sw || !wk) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < S.n_d; i++) {
		size_t ls = strlen(sw), lw = strlen(wk);

		snprintf(sw + ls, cap - ls, "%sprev_pid==%d||next_pid==%d", i ? "||" : "",
			 (int)S.d[i].pid, (int)S.d[i].pid);
		snprintf(wk + lw, cap - lw, "%scommon_pid==%d", i ? "||" : "", (int)S.d[i].pid);
	}
	if (!S.n_d) {			/* nobody to follow: let nothing through */
		strcpy(sw, "prev_pid==0&&next_pid==0");
		strcpy(wk, "common_pid==-1");
	}
	if (tracefs_event_file_write(S.inst, "sched", "sched_switch", "filter", sw) < 0 ||
	    tracefs_event_file_write(S.inst, "sched", "sched_waking", "filter", wk) < 0)
		rc = errno ? -errno : -EINVAL;
out:
	free(sw);
	free(wk);
	return rc;
}

static int find_fields(void)
{
	struct tep_event *sw = tep_find_event_by_name(S.tep, "sched", "sched_switch");
	struct tep_event *wk = tep_find_event_by_name(S.tep, "sched", "sched_waking");

	if (!sw || !wk)
		return -ENOENT;
	S.switch_id = sw->id;
	S.waking_id = wk->id;
	S.prev_pid = tep_find_field(sw, "prev_pid");
	S.prev_state = tep_find_field(sw, "prev_state");
	S.next_pid = tep_find_field(sw, "next_pid");
	S.wk_pid = tep_find_field(wk, "pid");
	S.wk_comm = tep_find_field(wk, "comm");
	return S.prev_pid && S.prev_state && S.next_pid && S.wk_pid && S.wk_comm ? 0 : -ENOENT;
}

static bool kernel_is_rt(void)
{
	struct utsname u;

	return uname(&u) == 0 && strstr(u.version, "PREEMPT_RT") != NULL;
}

/*
 * A tep with the ring buffer's page header and the two events' formats only. libtracefs's
 * tracefs_local_events_system() also parses /proc/kallsyms, saved_cmdlines and
 * printk_formats (every kernel symbol into the tep): seconds of CPU without a blocking
 * call on a slow machine (a 6.1 guest under QEMU), which at irqresd's SCHED_FIFO under
 * its unit's RLIMIT_RTTIME is SIGXCPU, and none of which the accounting reads.
 */
static struct tep_handle *load_formats(void)
{
	static const char *const events[] = { "sched_switch", "sched_waking" };
	struct tep_handle *tep = tep_alloc();
	char *buf = NULL;
	int size = 0;
	size_t i;

	if (!tep)
		return NULL;
	tep_set_long_size(tep, (int)sizeof(long));
	buf = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (!buf || tep_parse_header_page(tep, buf, (unsigned long)size, (int)sizeof(long)) < 0)
		goto out_free;
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		free(buf);
		buf = tracefs_event_file_read(NULL, "sched", events[i], "format", &size);
		if (!buf || tep_parse_event(tep, buf, (unsigned long)size, "sched") != 0)
			goto out_free;
	}
	free(buf);
	return tep;
out_free:
	free(buf);
	tep_free(tep);
	return NULL;
}

/* Makes the instance; on failure *what says which step, and nothing is left behind. */
static int start(const char **what)
{
	const char *dir = tracing_dir();
	char name[32];
	int rc;

	*what = "no tracefs mounted there";
	if (!dir || access(dir, F_OK) < 0)
		return -ENOENT;
	if (S.dir)
		tracefs_set_tracing_dir(S.dir);
	acct_clean_stale();
	snprintf(name, sizeof(name), INSTANCE_PREFIX "%d", (int)getpid());
	*what = "creating the instance";
	S.inst = instance_make(name);
	if (!S.inst)
		return errno ? -errno : -EIO;
	*what = "reading the sched events' formats";
	S.tep = load_formats();
	rc = S.tep ? find_fields() : -ENOENT;
	if (rc < 0)
		goto out_inst;
	*what = "sizing its buffer";
	rc = tracefs_instance_file_write(S.inst, "buffer_size_kb", BUFFER_KB) < 0 ? -errno : 0;
	if (rc < 0)
		goto out_tep;
	/* CLOCK_MONOTONIC: the drain's horizon (tracering.h) is read on the same clock */
	S.mono = tracefs_instance_file_write(S.inst, "trace_clock", "mono") > 0;
	*what = "setting the event filters";
	rc = write_filters();
	if (rc < 0)
		goto out_tep;
	*what = "enabling sched_switch and sched_waking";
	if (tracefs_event_enable(S.inst, "sched", "sched_switch") < 0 ||
	    tracefs_event_enable(S.inst, "sched", "sched_waking") < 0) {
		rc = errno ? -errno : -EINVAL;
		goto out_tep;
	}
	*what = "opening its per-CPU buffers";
	rc = tracering_open(&S.ring, S.inst, S.tep);
	if (rc < 0)
		goto out_tep;
	S.rt = kernel_is_rt();
	pr_info("accounting: tracefs instance %s/instances/%s follows the threads of the "
		"targets with serves:", dir, name);
	return 0;
out_tep:
	tep_free(S.tep);
	S.tep = NULL;
out_inst:
	instance_remove(S.inst);
	S.inst = NULL;
	return rc ? rc : -EIO;
}

static bool same_set(const struct acct_thread *v, size_t n)
{
	size_t i;

	if (n != S.n_d)
		return false;
	for (i = 0; i < n; i++)
		if (!dev_find(v[i].pid))
			return false;
	return true;
}

/* The new set of threads; a thread that stays keeps its activation in progress. */
static int set_threads(const struct acct_thread *v, size_t n)
{
	struct dev *nd = calloc(n ? n : 1, sizeof(*nd));
	size_t i;

	if (!nd)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct dev *o = dev_find(v[i].pid);

		if (o) {
			nd[i] = *o;
			o->w = NULL;	/* moved */
		} else {
			nd[i].pid = v[i].pid;
		}
		nd[i].target = v[i].target;
	}
	for (i = 0; i < S.n_d; i++)
		free(S.d[i].w);
	free(S.d);
	S.d = nd;
	S.n_d = n;
	return 0;
}

int acct_update(const struct acct_thread *v, size_t n)
{
	const char *what = "following the threads";
	bool changed;
	int rc;

	if (S.failed || (!S.inst && !n))
		return 0;
	if (!S.inst) {
		rc = set_threads(v, n);
		if (rc == 0)
			rc = start(&what);
		if (rc < 0) {
			S.failed = true;
			snprintf(S.err, sizeof(S.err), "tracefs %s: %s: %s",
				 tracing_dir() ? tracing_dir() : "(not mounted)", what,
				 strerror(-rc));
			pr_warn("accounting off: %s; everything else goes on", S.err);
		}
		return rc;
	}
	acct_drain();
	changed = !same_set(v, n);
	for (size_t i = 0; i < n && !changed; i++)
		dev_find(v[i].pid)->target = v[i].target;
	if (!changed)
		return 0;
	rc = set_threads(v, n);
	if (rc == 0)
		rc = write_filters();
	if (rc < 0)
		pr_warn("accounting: following %zu thread%s: %s", n, n == 1 ? "" : "s",
			strerror(-rc));
	return rc;
}

void acct_json(struct json *j, const char *const *names, size_t n_names)
{
	size_t i;

	json_key(j, "accounting");
	json_obj_begin(j);
	json_kv_bool(j, "enabled", S.inst != NULL);
	json_key(j, "error");
	if (S.err[0])
		json_str(j, S.err);
	else
		json_null(j);
	json_kv_uint(j, "lost_events", S.lost);
	json_kv_uint(j, "dropped_activations", S.dropped);
	json_key(j, "served");
	json_arr_begin(j);
	for (i = 0; i < S.n_t; i++) {
		const struct acct_total *t = &S.t[i];

		if (t->target >= n_names)
			continue;
		json_obj_begin(j);
		json_kv_str(j, "target", names[t->target]);
		json_kv_int(j, "pid", t->pid);
		json_kv_str(j, "comm", t->comm);
		json_kv_uint(j, "irq_time_ns", t->time_ns);
		json_kv_uint(j, "activations", t->activations);
		json_kv_uint(j, "wakeups", t->wakeups);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void acct_stop(void)
{
	size_t i;

	tracering_close(S.ring);
	S.ring = NULL;
	if (S.inst)
		instance_remove(S.inst);
	tep_free(S.tep);
	for (i = 0; i < S.n_d; i++)
		free(S.d[i].w);
	free(S.d);
	free(S.t);
	S.inst = NULL;
	S.tep = NULL;
	S.d = NULL;
	S.t = NULL;
	S.n_d = S.n_t = S.cap_t = 0;
	S.lost = S.dropped = 0;
	S.failed = S.mono = false;
	S.err[0] = '\0';
}
