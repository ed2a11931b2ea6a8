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
#include "acct_split.h"
#include "addrmap.h"
#include "log.h"
#include "selfsched.h"
#include "tracering.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
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

struct dev {
	pid_t pid;
	size_t target;
	bool synced;		/* a sleep was seen: activations are whole from now on */
	bool in_act, running, broken;
	uint64_t in_ts, exec_ns;
	uint64_t charge_ns;	/* the kernel's charge since the last sleep */
	uint64_t rec;		/* seq of the activation's record (it delivered); 0: none */
	struct acct_woke *w;
	size_t n_w, cap_w;
};

static bool sock_reader_served(uint64_t pid);

static struct {
	char *dir;			/* the tracing dir asked for; NULL: the library's */
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	struct tracering *ring;
	int switch_id, waking_id, runtime_id, deliver_id, consume_id, copy_id;
	int ready_id, recv_id;
	struct tep_format_field *prev_pid, *prev_state, *next_pid, *wk_pid, *wk_comm;
	struct tep_format_field *rt_pid, *rt_runtime, *dl_skb, *cs_skb, *cp_skb;
	struct tep_format_field *rd_sk, *rv_sk, *rv_ret;
	bool failed, rt;
	bool too_many;		/* more served threads than ACCT_MAX_READERS: said once */
	bool mono;		/* the instance's trace clock is CLOCK_MONOTONIC */
	char err[256];
	struct dev *d;
	size_t n_d;
	struct acct_reader *r;		/* sorted by pid */
	size_t n_r;
	struct addrmap socks;		/* socket address -> pid of its latest served reader */
	uint64_t last_ts;
	uint64_t lost, dropped;
} S = { .socks = { .keep = sock_reader_served } };

/* The optional events (the kernel may lack them; the accounting does without): what
 * their kernel filter selects on, the followed threads (common_pid), the task charged
 * (pid) or the served threads (common_pid), and where their id goes (-1: not used). */
enum filter_by { BY_THREAD, BY_CHARGED, BY_READER, N_FILTER_BY };

static const struct optional_event {
	const char *sys, *name;
	enum filter_by by;
	int *id;
} OPTIONAL[] = {
	{ "sched", "sched_stat_runtime", BY_CHARGED, &S.runtime_id },
	{ "net", "netif_receive_skb", BY_THREAD, &S.deliver_id },
	{ "skb", "consume_skb", BY_READER, &S.consume_id },
	{ "skb", "skb_copy_datagram_iovec", BY_READER, &S.copy_id },
	{ "sock", "sk_data_ready", BY_THREAD, &S.ready_id },
	{ "sock", "sock_recv_length", BY_READER, &S.recv_id },
};
#define N_OPTIONAL (sizeof(OPTIONAL) / sizeof(OPTIONAL[0]))

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
	return acct_split_totals(n);
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

static const struct acct_reader *reader_find(pid_t pid)
{
	const struct acct_reader key = { .pid = pid };

	return S.n_r ? bsearch(&key, S.r, S.n_r, sizeof(key), acct_pid_cmp) : NULL;
}

/* A socket whose reader is no longer served is forgotten when the map grows. */
static bool sock_reader_served(uint64_t pid)
{
	return reader_find((pid_t)pid) != NULL;
}

/* What an activation cost: the kernel's charge when it traced one, else its switches'. */
static uint64_t act_cost(const struct dev *d)
{
	return d->charge_ns ? d->charge_ns : d->exec_ns;
}

static void charge(struct dev *d)
{
	acct_split_woke(d->target, act_cost(d), d->w, d->n_w);
}

/* The activation of @d ended (@whole: charged, else dropped): its record closes, with
 * the list of whom it woke (the device's list starts again). */
static void rec_close(struct dev *d, uint64_t ts, bool whole)
{
	uint64_t seq = d->rec;

	d->rec = 0;
	if (!whole) {
		acct_rec_close(seq, ts, false, 0, NULL, 0);
		return;
	}
	acct_rec_close(seq, ts, true, act_cost(d), d->w, d->n_w);
	d->w = NULL;
	d->n_w = d->cap_w = 0;
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
	if (d->synced && d->in_act && !d->broken) {
		if (d->rec)
			rec_close(d, ts, true);
		else
			charge(d);
	} else if (d->synced && d->in_act) {
		S.dropped++;
		rec_close(d, ts, false);
	}
	d->synced = true;
	d->in_act = false;
	d->charge_ns = 0;
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

/* The kernel charged the thread @ns: since its last sleep, the activation's. */
static void on_charge(struct dev *d, uint64_t ns)
{
	if (d->synced)
		d->charge_ns += ns;
}

/* The thread handed a packet (skb at @addr) to the stack in its activation. */
static void on_deliver(struct dev *d, uint64_t addr)
{
	if (!d->in_act || !S.n_r)
		return;		/* before the first whole activation, or nobody's reads seen */
	if (!d->rec)
		d->rec = acct_rec_open(d->target);
	if (!d->rec || acct_rec_deliver(d->rec, addr) < 0)
		d->broken = true;	/* cannot be charged right */
}

/* Served thread @pid read from socket @sk: its reader from now on. */
static void on_recv(pid_t pid, uint64_t sk)
{
	if (!reader_find(pid))
		return;
	if (addrmap_put(&S.socks, sk, (uint64_t)pid) < 0)
		pr_debug("accounting: socket %#" PRIx64 ": its reader not remembered", sk);
}

/* The thread queued data on socket @sk in its activation: a packet for its reader. */
static void on_ready(struct dev *d, uint64_t sk)
{
	const struct acct_reader *r;
	uint64_t pid;

	if (!d->in_act || !addrmap_get(&S.socks, sk, &pid) || !(r = reader_find((pid_t)pid)))
		return;		/* not read by a served thread yet */
	if (!d->rec)
		d->rec = acct_rec_open(d->target);
	if (!d->rec || acct_rec_packet(d->rec, r->pid, r->comm) < 0)
		d->broken = true;
}

/* Served thread @pid read (or freed after reading) the skb at @addr. */
static void on_read(pid_t pid, uint64_t addr)
{
	const struct acct_reader *r = reader_find(pid);

	if (r)
		acct_rec_read(pid, r->comm, addr);
}

static void on_waking(struct dev *d, int pid, const char *comm)
{
	struct acct_woke *w;
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
	d->w[i] = (struct acct_woke){ .pid = pid };
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

static bool read_u64(struct tep_format_field *f, struct tep_record *rec, uint64_t *v)
{
	unsigned long long x;

	if (!f || tep_read_number_field(f, rec->data, &x))
		return false;
	*v = x;
	return true;
}

void acct_feed_switch(pid_t prev, unsigned long long prev_state, pid_t next, uint64_t ts)
{
	struct dev *d = dev_find(prev);

	if (d)
		on_switch_out(d, ts, prev_state);
	d = dev_find(next);
	if (d)
		on_switch_in(d, ts);
}

void acct_feed_waking(pid_t waker, pid_t pid, const char *comm, int flags)
{
	struct dev *d = dev_find(waker);

	if (d && credited(flags))
		on_waking(d, pid, comm);
}

void acct_feed_charge(pid_t pid, uint64_t ns)
{
	struct dev *d = dev_find(pid);

	if (d)
		on_charge(d, ns);
}

void acct_feed_deliver(pid_t thread, uint64_t addr, int flags)
{
	struct dev *d = dev_find(thread);

	if (d && credited(flags))
		on_deliver(d, addr);
}

void acct_feed_read(pid_t reader, uint64_t addr)
{
	on_read(reader, addr);
}

void acct_feed_ready(pid_t thread, uint64_t sk, int flags)
{
	struct dev *d = dev_find(thread);

	if (d && credited(flags))
		on_ready(d, sk);
}

void acct_feed_recv(pid_t reader, uint64_t sk, int ret)
{
	if (ret > 0)
		on_recv(reader, sk);
}

void acct_feed_flush(uint64_t now)
{
	acct_rec_flush(now);
}

static void on_sched(struct tep_event *ev, struct tep_record *rec)
{
	unsigned long long a, b, state;
	uint64_t pid, ns;

	if (ev->id == S.switch_id) {
		if (!tep_read_number_field(S.prev_pid, rec->data, &a) &&
		    !tep_read_number_field(S.next_pid, rec->data, &b) &&
		    !tep_read_number_field(S.prev_state, rec->data, &state))
			acct_feed_switch((pid_t)a, state, (pid_t)b, rec->ts);
	} else if (ev->id == S.waking_id) {
		if (!tep_read_number_field(S.wk_pid, rec->data, &a))
			acct_feed_waking(tep_data_pid(S.tep, rec), (pid_t)a,
					 (const char *)rec->data + S.wk_comm->offset,
					 tep_data_flags(S.tep, rec));
	} else if (ev->id == S.runtime_id) {
		if (read_u64(S.rt_pid, rec, &pid) && read_u64(S.rt_runtime, rec, &ns))
			acct_feed_charge((pid_t)pid, ns);
	}
}

static void on_packet(struct tep_event *ev, struct tep_record *rec)
{
	uint64_t addr;

	if (ev->id == S.deliver_id) {
		if (read_u64(S.dl_skb, rec, &addr))
			acct_feed_deliver(tep_data_pid(S.tep, rec), addr,
					  tep_data_flags(S.tep, rec));
	} else if (ev->id == S.consume_id || ev->id == S.copy_id) {
		if (read_u64(ev->id == S.consume_id ? S.cs_skb : S.cp_skb, rec, &addr))
			acct_feed_read(tep_data_pid(S.tep, rec), addr);
	} else if (ev->id == S.ready_id) {
		if (read_u64(S.rd_sk, rec, &addr))
			acct_feed_ready(tep_data_pid(S.tep, rec), addr, tep_data_flags(S.tep, rec));
	} else if (ev->id == S.recv_id) {
		uint64_t ret;

		if (read_u64(S.rv_sk, rec, &addr) && read_u64(S.rv_ret, rec, &ret))
			acct_feed_recv(tep_data_pid(S.tep, rec), addr, (int)(int32_t)ret);
	}
}

static void on_record(struct tep_event *ev, struct tep_record *rec, void *ctx)
{
	if (rec->missed_events)
		on_lost(rec->missed_events);
	if (rec->ts > S.last_ts)
		S.last_ts = rec->ts;
	on_sched(ev, rec);
	on_packet(ev, rec);
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
	acct_feed_flush(S.mono ? horizon : S.last_ts);

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

/* "FIELD==A||FIELD==B||..." over @n pids, or @none when there is none. */
static char *pid_filter(const char *field, const pid_t *pid, size_t n, size_t stride,
			const char *none)
{
	size_t i, cap = 32 + n * (strlen(field) + 16), len = 0;
	char *f = calloc(1, cap);

	if (!f)
		return NULL;
	for (i = 0; i < n; i++) {
		pid_t p = *(const pid_t *)((const char *)pid + i * stride);

		len += (size_t)snprintf(f + len, cap - len, "%s%s==%d", i ? "||" : "", field,
					(int)p);
	}
	if (!n)
		snprintf(f, cap, "%s", none);
	return f;
}

static int filter_write(const char *sys, const char *event, const char *filter)
{
	return tracefs_event_file_write(S.inst, sys, event, "filter", filter) < 0 ?
	       (errno ? -errno : -EINVAL) : 0;
}

/* An optional event whose filter the kernel refuses is not used from now on: unfiltered,
 * it would flood the instance. */
static void filter_optional(const char *sys, const char *event, const char *filter, int *id)
{
	int rc;

	if (*id < 0)
		return;
	rc = filter_write(sys, event, filter);
	if (rc < 0) {
		pr_info("accounting: %s:%s: filter refused (%s): not used", sys, event,
			strerror(-rc));
		if (S.inst && tracefs_event_disable(S.inst, sys, event) < 0)
			pr_debug("accounting: %s:%s: not disabled", sys, event);
		*id = -1;
	}
}

/* The kernel filters: the threads' switches, wake-ups, charges and deliveries; the
 * served threads' reads. The optional events are filtered only where enabled. */
static int write_filters(void)
{
	const size_t ds = sizeof(*S.d), rs = sizeof(*S.r);
	char *sw, *cp = pid_filter("common_pid", &S.d[0].pid, S.n_d, ds, "common_pid==-1");
	char *pp = pid_filter("pid", &S.d[0].pid, S.n_d, ds, "pid==-1");
	char *rd = pid_filter("common_pid", S.n_r ? &S.r[0].pid : NULL, S.n_r, rs,
			      "common_pid==-1");
	const char *by[N_FILTER_BY] = { [BY_THREAD] = cp, [BY_CHARGED] = pp, [BY_READER] = rd };
	size_t i, cap = 64 + S.n_d * 48;
	int rc = -ENOMEM;

	sw = calloc(1, cap);
	if (!sw || !cp || !pp || !rd)
		goto out;
	for (i = 0; i < S.n_d; i++) {
		size_t ls = strlen(sw);

		snprintf(sw + ls, cap - ls, "%sprev_pid==%d||next_pid==%d", i ? "||" : "",
			 (int)S.d[i].pid, (int)S.d[i].pid);
	}
	if (!S.n_d)			/* nobody to follow: let nothing through */
		strcpy(sw, "prev_pid==0&&next_pid==0");
	rc = filter_write("sched", "sched_switch", sw);
	if (!rc)
		rc = filter_write("sched", "sched_waking", cp);
	for (i = 0; !rc && i < N_OPTIONAL; i++)
		filter_optional(OPTIONAL[i].sys, OPTIONAL[i].name, by[OPTIONAL[i].by],
				OPTIONAL[i].id);
out:
	free(sw);
	free(cp);
	free(pp);
	free(rd);
	return rc;
}

/* An optional event's id and one field (-1, NULL: the kernel does not have it). */
static int optional_event(const char *sys, const char *name, const char *field,
			  struct tep_format_field **f)
{
	struct tep_event *ev = tep_find_event_by_name(S.tep, sys, name);

	*f = ev ? tep_find_field(ev, field) : NULL;
	return *f ? ev->id : -1;
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
	S.runtime_id = optional_event("sched", "sched_stat_runtime", "runtime", &S.rt_runtime);
	S.rt_pid = S.runtime_id >= 0 ?
		   tep_find_field(tep_find_event_by_name(S.tep, "sched", "sched_stat_runtime"),
				  "pid") : NULL;
	if (!S.rt_pid)
		S.runtime_id = -1;
	S.ready_id = optional_event("sock", "sk_data_ready", "skaddr", &S.rd_sk);
	S.recv_id = optional_event("sock", "sock_recv_length", "sk", &S.rv_sk);
	S.rv_ret = S.recv_id >= 0 ? tep_find_field(tep_find_event_by_name(S.tep, "sock",
						    "sock_recv_length"), "ret") : NULL;
	if (S.ready_id < 0 || S.recv_id < 0 || !S.rv_ret) {	/* the skbs' addresses then */
		S.ready_id = S.recv_id = -1;
		S.deliver_id = optional_event("net", "netif_receive_skb", "skbaddr", &S.dl_skb);
		S.consume_id = optional_event("skb", "consume_skb", "skbaddr", &S.cs_skb);
		S.copy_id = optional_event("skb", "skb_copy_datagram_iovec", "skbaddr",
					   &S.cp_skb);
	} else {
		S.deliver_id = S.consume_id = S.copy_id = -1;
	}
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
static int parse_format(struct tep_handle *tep, const char *sys, const char *name)
{
	int size = 0, rc;
	char *buf = tracefs_event_file_read(NULL, sys, name, "format", &size);

	rc = buf && tep_parse_event(tep, buf, (unsigned long)size, sys) == 0 ? 0 : -1;
	free(buf);
	return rc;
}

static struct tep_handle *load_formats(void)
{
	struct tep_handle *tep = tep_alloc();
	char *buf = NULL;
	int size = 0;
	size_t i;

	if (!tep)
		return NULL;
	tep_set_long_size(tep, (int)sizeof(long));
	buf = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (!buf || tep_parse_header_page(tep, buf, (unsigned long)size, (int)sizeof(long)) < 0 ||
	    parse_format(tep, "sched", "sched_switch") < 0 ||
	    parse_format(tep, "sched", "sched_waking") < 0) {
		free(buf);
		tep_free(tep);
		return NULL;
	}
	free(buf);
	for (i = 0; i < N_OPTIONAL; i++)
		parse_format(tep, OPTIONAL[i].sys, OPTIONAL[i].name);	/* absent: not used */
	return tep;
}

/* The optional events on (one the kernel refuses is not used). */
static void enable_optional(void)
{
	const struct optional_event *ev = OPTIONAL;
	size_t i;

	for (i = 0; i < N_OPTIONAL; i++)
		if (*ev[i].id >= 0 && tracefs_event_enable(S.inst, ev[i].sys, ev[i].name) < 0) {
			pr_info("accounting: %s:%s not enabled (%s): not used", ev[i].sys,
				ev[i].name, strerror(errno));
			*ev[i].id = -1;
		}
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
	enable_optional();
	*what = "opening its per-CPU buffers";
	rc = tracering_open(&S.ring, S.inst, S.tep);
	if (rc < 0)
		goto out_tep;
	S.rt = kernel_is_rt();
	pr_info("accounting: tracefs instance %s/instances/%s follows the threads of the "
		"targets with serves:; time %s, split by %s", dir, name,
		S.runtime_id >= 0 ? "as the kernel charges it" : "between switches",
		S.ready_id >= 0 && S.recv_id >= 0 ? "the packets each served thread's sockets "
		"got, else wake-ups" : S.deliver_id >= 0 && (S.consume_id >= 0 || S.copy_id >= 0) ?
		"the packets each served thread read, else wake-ups" : "wake-ups");
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
			o->rec = 0;
		} else {
			nd[i].pid = v[i].pid;
		}
		nd[i].target = v[i].target;
	}
	for (i = 0; i < S.n_d; i++) {
		if (S.d[i].rec) {	/* no longer followed: its activation ends unseen */
			S.dropped++;
			rec_close(&S.d[i], S.last_ts, false);
		}
		free(S.d[i].w);
	}
	free(S.d);
	S.d = nd;
	S.n_d = n;
	return 0;
}

/* The served threads whose reads count (sorted, each once); true when they changed. */
static bool set_readers(const struct acct_reader *r, size_t n, int *rc)
{
	struct acct_reader *v;
	size_t i, k = 0;

	*rc = 0;
	if (n > ACCT_MAX_READERS && !S.too_many)
		pr_info("accounting: %zu served threads, more than %d: packets are not matched "
			"to their readers, wake-ups decide", n, ACCT_MAX_READERS);
	S.too_many = n > ACCT_MAX_READERS;
	if (S.too_many)
		n = 0;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		*rc = -ENOMEM;
		return false;
	}
	if (n)
		memcpy(v, r, n * sizeof(*v));
	qsort(v, n, sizeof(*v), acct_pid_cmp);
	for (i = 0; i < n; i++)
		if (!k || v[k - 1].pid != v[i].pid)
			v[k++] = v[i];
	if (k == S.n_r && (!k || !memcmp(v, S.r, k * sizeof(*v)))) {
		free(v);
		return false;
	}
	free(S.r);
	S.r = v;
	S.n_r = k;
	return true;
}

int acct_update(const struct acct_thread *v, size_t n, const struct acct_reader *r,
		size_t n_r)
{
	const char *what = "following the threads";
	bool changed;
	int rc;

	if (S.failed || (!S.inst && !n))
		return 0;
	if (!S.inst) {
		set_readers(r, n_r, &rc);
		if (rc == 0)
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
	changed = set_readers(r, n_r, &rc) | !same_set(v, n);
	for (size_t i = 0; i < n && !changed; i++)
		dev_find(v[i].pid)->target = v[i].target;
	if (!changed || rc < 0)
		return rc;
	rc = set_threads(v, n);
	if (rc == 0)
		rc = write_filters();
	if (rc < 0)
		pr_warn("accounting: following %zu thread%s: %s", n, n == 1 ? "" : "s",
			strerror(-rc));
	return rc;
}

int acct_feed_follow(const struct acct_thread *v, size_t n, const struct acct_reader *r,
		     size_t n_r)
{
	int rc;

	set_readers(r, n_r, &rc);
	return rc < 0 ? rc : set_threads(v, n);
}

void acct_json(struct json *j, const char *const *names, size_t n_names)
{
	size_t i, n_t;
	const struct acct_total *all = acct_split_totals(&n_t);

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

	for (i = 0; i < n_t; i++) {
		const struct acct_total *t = &all[i];

		if (t->target >= n_names)
			continue;
		json_obj_begin(j);
		json_kv_str(j, "target", names[t->target]);
		json_kv_int(j, "pid", t->pid);
		json_kv_str(j, "comm", t->comm);
		json_kv_uint(j, "irq_time_ns", t->time_ns);
		json_kv_uint(j, "activations", t->activations);
		json_kv_uint(j, "wakeups", t->wakeups);
		json_kv_uint(j, "packets", t->packets);
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
	acct_split_reset();
	free(S.d);
	free(S.r);
	S.r = NULL;
	addrmap_free(&S.socks);
	S.n_r = 0;
	S.too_many = false;
	S.last_ts = 0;
	S.inst = NULL;
	S.tep = NULL;
	S.d = NULL;
	S.n_d = 0;
	S.lost = S.dropped = 0;
	S.failed = S.mono = false;
	S.err[0] = '\0';
}
