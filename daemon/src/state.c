/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * state.c - the state file RUN_DIR/state; see state.h.
 *
 * Format: text, one record per line, words separated by single spaces; lines starting
 * with '#' and empty lines are ignored. The first line is the header; every record line
 * ends with " crc32=<8 hex>", its checksum (stateline.h; a version 1 file, written by
 * an older irqresd, has none). The first word names the record:
 *
 *   # irqres state 2
 *   cpuset_added                          irqres wrote +cpuset into the root's subtree_control
 *   rt_runtime_us <us>                    the original sched_rt_runtime_us (irqres set -1)
 *   partition <name> created=<0|1>        a cpuset partition irqres uses (and made)
 *   thread pid=<N> start=<N> comm=<s> policy=<name> priority=<N> nice=<N> runtime=<ns>
 *          deadline=<ns> period=<ns> flags=<N> cgroup=<s> affinity=<cpulist>
 *          partition=<name>               (one line) a thread as it was before irqres
 *   owed pid=<N> start=<N> comm=<s> cpus=<cpulist> seen=<cpulist>
 *                                         CPUs a partition change took from an IRQ thread
 *                                         irqres did not move (seen= empty: not known yet)
 *   sched_feature name=<s> was=<0|1> set=<0|1>
 *                                         a sched feature irqres switched (enforce.h):
 *                                         its value before and the one irqres set
 *   napi_threaded ifname=<s> was=<0-2> set=<0-2>
 *                                         an interface irqres switched to threaded NAPI
 *                                         (napiswitch.h): /sys/class/net/IF/threaded
 *                                         before and the value irqres wrote
 *
 * String values (comm, cgroup, names) escape bytes <= 0x20, '%', '=' and >= 0x7f as %XX;
 * an empty value means "none". Records are appended and fsync'd before the change they
 * describe, never after an unfinished last line (then the file is rewritten from memory);
 * forgetting one rewrites the file (temp file, fsync, rename, fsync of the dir), and a
 * file left with no record is deleted, never written empty. The first record of a pid
 * wins: it holds the original attributes. A bad line is reported with its line number;
 * it never stops the load of the others, and the file it is in is kept as it is.
 */
#include "state.h"
#include "array.h"
#include "dl.h"
#include "fileio.h"
#include "log.h"
#include "statefields.h"
#include "stateline.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_HEADER "# irqres state 2\n"
#define STATE_HEADER_V1 "# irqres state 1\n"
#define CPUSET_ADDED_LINE "cpuset_added\n"
#define LINE_MAX_LEN 4096

void state_init(struct state *st)
{
	memset(st, 0, sizeof(*st));
}

void state_free(struct state *st)
{
	free(st->threads);
	free(st->parts);
	free(st->owed);
	free(st->netdevs);
	st->netdevs = NULL;
	st->n_netdevs = st->cap_netdevs = 0;
	st->threads = NULL;
	st->parts = NULL;
	st->owed = NULL;
	st->n_threads = st->cap_threads = st->n_parts = st->cap_parts = 0;
	st->n_owed = st->cap_owed = 0;
	st->cpuset_added = st->rt_runtime_saved = st->feature_saved = false;
}

bool state_empty(const struct state *st)
{
	return st->n_threads == 0 && st->n_parts == 0 && st->n_owed == 0 && !st->cpuset_added &&
	       !st->rt_runtime_saved && !st->feature_saved && st->n_netdevs == 0;
}

#define THREAD_FIELD(f) offsetof(struct state_thread, f)
#define TEXT_SIZE(f) (long long)sizeof(((struct state_thread *)0)->f)

_Static_assert(sizeof(pid_t) == sizeof(int), "pid= is read as an int");
_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "start= is read as a u64");

static const struct statefield thread_fields[] = {
	{ "pid", &statefield_int, THREAD_FIELD(pid), 1, INT_MAX, true, NULL },
	{ "start", &statefield_u64, THREAD_FIELD(starttime), 0, 0, true, NULL },
	{ "comm", &statefield_text, THREAD_FIELD(comm), 0, TEXT_SIZE(comm), false, NULL },
	{ "policy", &statefield_policy, THREAD_FIELD(policy), 0, 0, true, "unknown policy" },
	{ "priority", &statefield_int, THREAD_FIELD(priority), 0, 99, false, NULL },
	{ "nice", &statefield_int, THREAD_FIELD(nice), -20, 19, false, NULL },
	{ "runtime", &statefield_u64, THREAD_FIELD(dl_runtime_ns), 0, 0, false, NULL },
	{ "deadline", &statefield_u64, THREAD_FIELD(dl_deadline_ns), 0, 0, false, NULL },
	{ "period", &statefield_u64, THREAD_FIELD(dl_period_ns), 0, 0, false, NULL },
	{ "flags", &statefield_u64, THREAD_FIELD(flags), 0, 0, false, NULL },
	{ "cgroup", &statefield_text, THREAD_FIELD(cgroup), 0, TEXT_SIZE(cgroup), false, NULL },
	{ "affinity", &statefield_cpus, THREAD_FIELD(affinity), 0, 0, false, NULL },
	{ "partition", &statefield_text, THREAD_FIELD(partition), 0, TEXT_SIZE(partition), false,
	  NULL },
};

#define OWED_FIELD(f) offsetof(struct state_owed, f)

static const struct statefield owed_fields[] = {
	{ "pid", &statefield_int, OWED_FIELD(pid), 1, INT_MAX, true, NULL },
	{ "start", &statefield_u64, OWED_FIELD(starttime), 0, 0, true, NULL },
	{ "comm", &statefield_text, OWED_FIELD(comm), 0, COMM_MAX, false, NULL },
	{ "cpus", &statefield_cpus, OWED_FIELD(cpus), 0, 0, true, NULL },
	{ "seen", &statefield_cpus, OWED_FIELD(seen), 0, 0, false, NULL },
};

#define FEATURE_FIELD(f) offsetof(struct state_feature, f)

static const struct statefield feature_fields[] = {
	{ "name", &statefield_text, FEATURE_FIELD(name), 0, sizeof(((struct state_feature *)0)->name),
	  true, NULL },
	{ "was", &statefield_int, FEATURE_FIELD(was), 0, 1, true, NULL },
	{ "set", &statefield_int, FEATURE_FIELD(set), 0, 1, true, NULL },
};

static const struct statefields thread_record = STATEFIELDS("thread", thread_fields);
static const struct statefields owed_record = STATEFIELDS("owed", owed_fields);
static const struct statefields feature_record = STATEFIELDS("sched_feature", feature_fields);

#define NETDEV_FIELD(f) offsetof(struct state_netdev, f)

static const struct statefield netdev_fields[] = {
	{ "ifname", &statefield_text, NETDEV_FIELD(ifname), 0,
	  sizeof(((struct state_netdev *)0)->ifname), true, NULL },
	{ "was", &statefield_int, NETDEV_FIELD(was), 0, 2, true, NULL },
	{ "set", &statefield_int, NETDEV_FIELD(set), 0, 2, true, NULL },
};
static const struct statefields netdev_record = STATEFIELDS("napi_threaded", netdev_fields);

_Static_assert(sizeof(thread_fields) / sizeof(thread_fields[0]) <= 32 &&
	       sizeof(owed_fields) / sizeof(owed_fields[0]) <= 32,
	       "the fields seen are bits of an unsigned int");

static void fmt_thread(const struct state_thread *t, char *buf, size_t len)
{
	statefields_format(&thread_record, t, buf, len);
}

static void fmt_partition(const struct state_partition *p, char *buf, size_t len)
{
	char name[CPUSET_NAME_MAX * 3 + 1];

	stateline_escape(p->name, name, sizeof(name));
	snprintf(buf, len, "partition %s created=%d\n", name, p->created ? 1 : 0);
}

/* @line (a record ending in '\n') with its checksum, into @out. */
static int seal(const char *line, char *out, size_t len)
{
	snprintf(out, len, "%s", line);
	return stateline_seal(out, len);
}

/*
 * Appends one record and fsyncs it: 0, 1 when the file must be rewritten from memory
 * instead (it is missing or empty, or its last line is unfinished: a record appended
 * there would be glued to the broken one), or -errno.
 */
static int append_line(struct state *st, const char *line)
{
	char sealed[LINE_MAX_LEN + STATELINE_SEAL_LEN];
	int fd, rc;

	if (!st->path[0] || st->frozen)
		return 0;	/* an in-memory state (no run directory), or a kept file */
	if (st->legacy)
		return 1;	/* records without checksums: the file goes to version 2 whole */
	if (seal(line, sealed, sizeof(sealed)))
		return -ENAMETOOLONG;
	fd = open(st->path, O_RDWR | O_APPEND | O_CLOEXEC);	/* read: its last byte */
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return 1;
		pr_err("state file %s: cannot open: %s", st->path, strerror(-rc));
		return rc;
	}
	rc = stateline_append(fd, sealed);
	close(fd);
	if (rc < 0)
		pr_err("state file %s: cannot record: %s", st->path, strerror(-rc));
	return rc;
}

static void fmt_rt_runtime(long long us, char *buf, size_t len)
{
	snprintf(buf, len, "rt_runtime_us %lld\n", us);
}

/* One record with its checksum. */
static void put_record(const char *line, FILE *f)
{
	char sealed[LINE_MAX_LEN + STATELINE_SEAL_LEN];

	if (seal(line, sealed, sizeof(sealed)) == 0)
		fputs(sealed, f);
}

/* Every record of @st, as rewrite() puts them in the file. */
static void write_records(const struct state *st, FILE *f)
{
	char line[LINE_MAX_LEN];

	fputs(STATE_HEADER, f);
	if (st->cpuset_added)
		put_record(CPUSET_ADDED_LINE, f);
	if (st->rt_runtime_saved) {
		fmt_rt_runtime(st->rt_runtime_us, line, sizeof(line));
		put_record(line, f);
	}
	if (st->feature_saved) {
		statefields_format(&feature_record, &st->feature, line, sizeof(line));
		put_record(line, f);
	}
	for (size_t i = 0; i < st->n_netdevs; i++) {
		statefields_format(&netdev_record, &st->netdevs[i], line, sizeof(line));
		put_record(line, f);
	}
	for (size_t i = 0; i < st->n_parts; i++) {
		fmt_partition(&st->parts[i], line, sizeof(line));
		put_record(line, f);
	}
	for (size_t i = 0; i < st->n_threads; i++) {
		fmt_thread(&st->threads[i], line, sizeof(line));
		put_record(line, f);
	}
	for (size_t i = 0; i < st->n_owed; i++) {
		statefields_format(&owed_record, &st->owed[i], line, sizeof(line));
		put_record(line, f);
	}
}

/* Rewrites the whole file from st: temp file, fsync, rename, fsync of the directory; a
 * state with no record deletes the file instead. */
static int rewrite_now(struct state *st)
{
	char tmp[sizeof(st->path) + 8];
	FILE *f;
	int rc, fd;

	if (!st->path[0] || st->frozen)
		return 0;
	st->dirty = false;
	if (state_empty(st))
		return state_remove(st);
	snprintf(tmp, sizeof(tmp), "%s.new", st->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		pr_err("state file %s: cannot write: %s", tmp, strerror(-rc));
		return rc;
	}
	write_records(st, f);
	rc = fileio_close_synced(f);
	if (!rc && rename(tmp, st->path) < 0)
		rc = -errno;
	if (!rc)
		st->legacy = false;
	if (!rc)
		rc = fileio_fsync_dir(st->path);
	if (rc) {
		pr_err("state file %s: cannot rewrite: %s", st->path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

/* A rewrite after records were forgotten: at the end of the batch, when in one. */
static int rewrite(struct state *st)
{
	if (st->batch) {
		st->dirty = true;
		return 0;
	}
	return rewrite_now(st);
}

void state_batch_begin(struct state *st)
{
	st->batch++;
}

int state_batch_end(struct state *st)
{
	if (st->batch && --st->batch == 0 && st->dirty)
		return rewrite_now(st);
	return 0;
}

/* Puts @line (a record already in memory) into the file: appended, or the file rewritten
 * when appending is not safe. Never deferred: a record is on disk before its change. */
static int persist(struct state *st, const char *line)
{
	int rc = append_line(st, line);

	return rc == 1 ? rewrite_now(st) : rc;
}

struct state_thread *state_find_thread(struct state *st, pid_t pid)
{
	for (size_t i = 0; i < st->n_threads; i++)
		if (st->threads[i].pid == pid)
			return &st->threads[i];
	return NULL;
}

struct state_partition *state_find_partition(struct state *st, const char *name)
{
	for (size_t i = 0; i < st->n_parts; i++)
		if (strcmp(st->parts[i].name, name) == 0)
			return &st->parts[i];
	return NULL;
}

struct state_netdev *state_find_netdev(struct state *st, const char *ifname)
{
	for (size_t i = 0; i < st->n_netdevs; i++)
		if (strcmp(st->netdevs[i].ifname, ifname) == 0)
			return &st->netdevs[i];
	return NULL;
}

static int push_netdev(struct state *st, const struct state_netdev *n)
{
	int rc = ARRAY_RESERVE(st->netdevs, st->cap_netdevs, st->n_netdevs + 1);

	if (!rc)
		st->netdevs[st->n_netdevs++] = *n;
	return rc;
}

static int push_thread(struct state *st, const struct state_thread *t)
{
	int rc = ARRAY_RESERVE(st->threads, st->cap_threads, st->n_threads + 1);

	if (!rc)
		st->threads[st->n_threads++] = *t;
	return rc;
}

static int push_partition(struct state *st, const char *name, bool created)
{
	struct state_partition *p;
	int rc = ARRAY_RESERVE(st->parts, st->cap_parts, st->n_parts + 1);

	if (rc)
		return rc;
	p = &st->parts[st->n_parts++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->created = created;
	return 0;
}

int state_add_thread(struct state *st, const struct state_thread *t)
{
	char line[LINE_MAX_LEN];
	int rc;

	struct state_thread *old = state_find_thread(st, t->pid);

	if (old) {
		/* the first record holds the original; only a first move into a partition
		 * is added to it, with the cgroup the thread was in before */
		if (old->partition[0] || !t->partition[0])
			return 0;
		snprintf(old->partition, sizeof(old->partition), "%s", t->partition);
		snprintf(old->cgroup, sizeof(old->cgroup), "%s", t->cgroup);
		return rewrite_now(st);		/* on disk before the move, batch or not */
	}
	fmt_thread(t, line, sizeof(line));
	rc = push_thread(st, t);
	if (rc)
		return rc;
	rc = persist(st, line);
	if (rc)
		st->n_threads--;
	return rc;
}

int state_add_partition(struct state *st, const char *name, bool created)
{
	struct state_partition p = { .created = created };
	char line[256];
	int rc;

	if (state_find_partition(st, name))
		return 0;
	if (strlen(name) >= sizeof(p.name))
		return -ENAMETOOLONG;
	snprintf(p.name, sizeof(p.name), "%s", name);
	fmt_partition(&p, line, sizeof(line));
	rc = push_partition(st, name, created);
	if (rc)
		return rc;
	rc = persist(st, line);
	if (rc)
		st->n_parts--;
	return rc;
}

int state_set_cpuset_added(struct state *st)
{
	int rc;

	if (st->cpuset_added)
		return 0;
	st->cpuset_added = true;
	rc = persist(st, CPUSET_ADDED_LINE);
	if (rc)
		st->cpuset_added = false;
	return rc;
}

int state_set_rt_runtime(struct state *st, long long orig_us)
{
	char line[64];
	int rc;

	if (st->rt_runtime_saved)
		return 0;
	fmt_rt_runtime(orig_us, line, sizeof(line));
	st->rt_runtime_saved = true;
	st->rt_runtime_us = orig_us;
	rc = persist(st, line);
	if (rc)
		st->rt_runtime_saved = false;
	return rc;
}

int state_set_feature(struct state *st, const struct state_feature *f)
{
	char line[256];
	int rc;

	if (st->feature_saved)
		return 0;
	statefields_format(&feature_record, f, line, sizeof(line));
	st->feature_saved = true;
	st->feature = *f;
	rc = persist(st, line);
	if (rc)
		st->feature_saved = false;
	return rc;
}

int state_add_netdev(struct state *st, const struct state_netdev *n)
{
	char line[256];
	int rc;

	if (state_find_netdev(st, n->ifname))
		return 0;
	statefields_format(&netdev_record, n, line, sizeof(line));
	rc = push_netdev(st, n);
	if (rc)
		return rc;
	rc = persist(st, line);
	if (rc)
		st->n_netdevs--;
	return rc;
}

static bool owed_same(const struct state_owed *a, const struct state_owed *b)
{
	return a->pid == b->pid && a->starttime == b->starttime && !strcmp(a->comm, b->comm) &&
	       CPU_EQUAL(&a->cpus, &b->cpus) && CPU_EQUAL(&a->seen, &b->seen);
}

int state_set_owed(struct state *st, const struct state_owed *v, size_t n)
{
	size_t i = 0;
	int rc;

	if (n == st->n_owed)
		while (i < n && owed_same(&v[i], &st->owed[i]))
			i++;
	if (i == n && n == st->n_owed)
		return 0;
	rc = ARRAY_RESERVE(st->owed, st->cap_owed, n);
	if (rc)
		return rc;
	if (n)
		memcpy(st->owed, v, n * sizeof(*v));
	st->n_owed = n;
	return rewrite_now(st);		/* owed CPUs are recorded before the change, batch or not */
}

int state_forget_thread(struct state *st, pid_t pid)
{
	struct state_thread *t = state_find_thread(st, pid);

	if (!t)
		return -ENOENT;
	memmove(t, t + 1, (size_t)(st->threads + st->n_threads - (t + 1)) * sizeof(*t));
	st->n_threads--;
	return rewrite(st);
}

int state_forget_partition(struct state *st, const char *name)
{
	struct state_partition *p = state_find_partition(st, name);

	if (!p)
		return -ENOENT;
	memmove(p, p + 1, (size_t)(st->parts + st->n_parts - (p + 1)) * sizeof(*p));
	st->n_parts--;
	return rewrite(st);
}

int state_forget_netdev(struct state *st, const char *ifname)
{
	struct state_netdev *n = state_find_netdev(st, ifname);

	if (!n)
		return -ENOENT;
	memmove(n, n + 1, (size_t)(st->netdevs + st->n_netdevs - (n + 1)) * sizeof(*n));
	st->n_netdevs--;
	return rewrite(st);
}

int state_clear_cpuset_added(struct state *st)
{
	st->cpuset_added = false;
	return rewrite(st);
}

int state_clear_rt_runtime(struct state *st)
{
	st->rt_runtime_saved = false;
	return rewrite(st);
}

int state_clear_feature(struct state *st)
{
	st->feature_saved = false;
	return rewrite(st);
}

int state_remove(struct state *st)
{
	if (!st->path[0] || st->frozen)
		return 0;
	if (unlink(st->path) < 0 && errno != ENOENT) {
		int rc = -errno;

		pr_err("state file %s: cannot delete: %s", st->path, strerror(-rc));
		return rc;
	}
	return fileio_fsync_dir(st->path);
}

/* ---- Reading records ---- */

/* The cause of a bad line, for the message that names its line number. */
struct line_err {
	char text[320];
};

static int bad(struct line_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct line_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int record_thread(struct state *st, char **save, struct line_err *e)
{
	struct state_thread t = { 0 };
	int rc = statefields_read(&thread_record, &t, save, e->text, sizeof(e->text));

	if (rc || state_find_thread(st, t.pid))
		return rc;
	return push_thread(st, &t);
}

static int record_owed(struct state *st, char **save, struct line_err *e)
{
	struct state_owed o = { 0 };
	int rc = statefields_read(&owed_record, &o, save, e->text, sizeof(e->text));

	if (rc)
		return rc;
	for (size_t i = 0; i < st->n_owed; i++)
		if (st->owed[i].pid == o.pid)
			return 0;	/* the first record of a pid wins */
	rc = ARRAY_RESERVE(st->owed, st->cap_owed, st->n_owed + 1);
	if (!rc)
		st->owed[st->n_owed++] = o;
	return rc;
}

static int record_feature(struct state *st, char **save, struct line_err *e)
{
	struct state_feature fe = { 0 };
	int rc = statefields_read(&feature_record, &fe, save, e->text, sizeof(e->text));

	if (rc || st->feature_saved)
		return rc;	/* the first record holds the original */
	st->feature_saved = true;
	st->feature = fe;
	return 0;
}

static int record_netdev(struct state *st, char **save, struct line_err *e)
{
	struct state_netdev n = { 0 };
	int rc = statefields_read(&netdev_record, &n, save, e->text, sizeof(e->text));

	if (rc || state_find_netdev(st, n.ifname))
		return rc;	/* the first record holds the original */
	if (!n.ifname[0])
		return bad(e, "napi_threaded needs an interface name");
	return push_netdev(st, &n);
}

/* Set even when trailing words make the line bad: enabling +cpuset is undone on restore. */
static int record_cpuset_added(struct state *st, char **save, struct line_err *e)
{
	st->cpuset_added = true;
	return strtok_r(NULL, " ", save) ? bad(e, "trailing words") : 0;
}

static int record_rt_runtime(struct state *st, char **save, struct line_err *e)
{
	char *v = strtok_r(NULL, " ", save);
	long long us;

	if (!v || statefield_parse_ll(v, -1, INT_MAX, &us) || strtok_r(NULL, " ", save))
		return bad(e, "rt_runtime_us needs one number (-1 or microseconds)");
	if (!st->rt_runtime_saved) {
		st->rt_runtime_saved = true;
		st->rt_runtime_us = us;
	}
	return 0;
}

static int record_partition(struct state *st, char **save, struct line_err *e)
{
	char *n = strtok_r(NULL, " ", save);
	char *c = strtok_r(NULL, " ", save);
	char name[CPUSET_NAME_MAX];

	if (!n || !c || strtok_r(NULL, " ", save) || stateline_unescape(n, name, sizeof(name)) || !name[0] ||
	    (strcmp(c, "created=0") != 0 && strcmp(c, "created=1") != 0))
		return bad(e, "partition needs <name> created=<0|1>");
	if (state_find_partition(st, name))
		return 0;
	return push_partition(st, name, c[8] == '1');
}

/* The records of a state file, by their first word (see the format at the top). */
static const struct record {
	const char *word;
	int (*parse)(struct state *st, char **save, struct line_err *e);
} records[] = {
	{ "cpuset_added", record_cpuset_added },
	{ "rt_runtime_us", record_rt_runtime },
	{ "partition", record_partition },
	{ "thread", record_thread },
	{ "owed", record_owed },
	{ "sched_feature", record_feature },
	{ "napi_threaded", record_netdev },
};

/* Parses one line (without its newline) into st. */
static int parse_line(struct state *st, char *line, struct line_err *e)
{
	char *save = NULL, known[128], shown[64];
	char *word = strtok_r(line, " ", &save);
	size_t i, o = 0;

	if (!word || word[0] == '#')
		return 0;
	for (i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		if (strcmp(word, records[i].word) == 0)
			return records[i].parse(st, &save, e);
	for (i = 0; i < sizeof(records) / sizeof(records[0]) && o < sizeof(known); i++)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "",
				      records[i].word);
	stateline_escape(word, shown, sizeof(shown));
	return bad(e, "unknown record '%s' (known records: %s)", shown, known);
}

/* What one state file's reading has found so far. */
struct load {
	const char *path;
	unsigned int lineno, records, problems;
	bool sealed;			/* version 2: every record has its checksum */
	char *err;
	size_t errlen;
};

static void problem(struct load *l, unsigned int lineno, const char *why)
{
	if (lineno)
		pr_err("state file %s:%u: %s: what it records cannot be restored", l->path,
		       lineno, why);
	else
		pr_err("state file %s: %s", l->path, why);
	if (l->problems++ == 0 && l->err) {
		if (lineno)
			snprintf(l->err, l->errlen, "state file %s:%u: %s", l->path, lineno, why);
		else
			snprintf(l->err, l->errlen, "state file %s: %s", l->path, why);
	}
}

/* The header line: which version, or a problem (then nothing else is read). */
static bool header_line(struct load *l, const char *line)
{
	if (!strcmp(line, STATE_HEADER)) {
		l->sealed = true;
		return true;
	}
	if (!strcmp(line, STATE_HEADER_V1))
		return true;
	problem(l, 1, "not an irqres state file: its first line is not the header '# irqres "
		"state 2' (garbage, or a write that did not finish)");
	return false;
}

/* One line after the header (without its newline): -ENOMEM, or 0 (problems counted). */
static int record_line(struct state *st, struct load *l, char *line)
{
	struct line_err e = { "" };
	const char *why = NULL;
	int rc;

	if (!line[0] || line[0] == '#')
		return 0;
	if (l->sealed && stateline_unseal(line, &why)) {
		problem(l, l->lineno, why);
		return 0;
	}
	rc = parse_line(st, line, &e);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		problem(l, l->lineno, e.text);
	else
		l->records++;
	return 0;
}

/* A line fgets() did not end with a newline: too long (the rest is skipped), or the
 * file's last, unfinished one. */
static void unfinished_line(struct load *l, FILE *f)
{
	int c;

	if (feof(f)) {
		problem(l, l->lineno, "unfinished last line (no newline): a write that did not "
			"finish");
		return;
	}
	while ((c = fgetc(f)) != EOF && c != '\n')
		;
	problem(l, l->lineno, "line too long");
}

int state_load(struct state *st, const char *path, char *err, size_t errlen)
{
	char line[LINE_MAX_LEN + STATELINE_SEAL_LEN + 2];
	struct load l = { .path = path, .err = err, .errlen = errlen };
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return -errno;
	while (!rc && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		bool whole = len && line[len - 1] == '\n';

		if (++l.lineno == 1 && !header_line(&l, line))
			break;
		if (l.lineno == 1)
			continue;
		if (!whole) {
			unfinished_line(&l, f);
			continue;
		}
		line[len - 1] = '\0';
		rc = record_line(st, &l, line);
	}
	fclose(f);
	if (rc)
		return rc;
	st->legacy = l.lineno > 0 && !l.sealed;
	if (l.lineno == 0)
		problem(&l, 0, "empty: irqresd never leaves an empty state file (a write that "
			"did not finish?)");
	else if (l.records == 0 && l.problems == 0)
		problem(&l, 0, "holds no record: irqresd never leaves such a file (damaged?)");
	return (int)l.problems;
}

int state_open(struct state *st, char *err, size_t errlen)
{
	int rc;

	if (mkdir(irqres_paths.run, 0700) < 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "cannot create the run directory %s: %s", irqres_paths.run,
			 strerror(-rc));
		return rc;
	}
	if ((size_t)snprintf(st->path, sizeof(st->path), "%s/state", irqres_paths.run) >=
	    sizeof(st->path)) {
		snprintf(err, errlen, "run directory path too long: %s", irqres_paths.run);
		st->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	rc = state_load(st, st->path, err, errlen);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(err, errlen, "state file %s: cannot read: %s", st->path, strerror(-rc));
		return rc;
	}
	if (rc > 0) {		/* kept as it is: it is the only account of what it lost */
		st->damaged = (unsigned int)rc;
		st->frozen = true;
	}
	if (!state_empty(st))
		pr_notice("state file %s from an earlier run: %zu thread(s), %zu partition(s), "
			  "%zu owed CPU affinit%s, %zu interface(s) switched to threaded NAPI",
			  st->path, st->n_threads, st->n_parts, st->n_owed,
			  st->n_owed == 1 ? "y" : "ies", st->n_netdevs);
	return 0;
}
