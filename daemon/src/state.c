/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * state.c - the state file RUN_DIR/state; see state.h.
 *
 * Format: text, one record per line, words separated by single spaces; lines starting
 * with '#' and empty lines are ignored. The first word names the record:
 *
 *   # irqres state 1
 *   cpuset_added                          irqres wrote +cpuset into the root's subtree_control
 *   rt_runtime_us <us>                    the original sched_rt_runtime_us (irqres set -1)
 *   partition <name> created=<0|1>        a cpuset partition irqres uses (and made)
 *   thread pid=<N> start=<N> comm=<s> policy=<name> priority=<N> nice=<N> runtime=<ns>
 *          deadline=<ns> period=<ns> flags=<N> cgroup=<s> affinity=<cpulist>
 *          partition=<name>               (one line) a thread as it was before irqres
 *
 * String values (comm, cgroup, names) escape bytes <= 0x20, '%', '=' and >= 0x7f as %XX;
 * an empty value means "none". Records are appended and fsync'd before the change they
 * describe; forgetting one rewrites the file (temp file, fsync, rename, fsync of the dir).
 * The first record of a pid wins: it holds the original attributes. A bad line is
 * reported with its line number and skipped; it never stops the load of the others.
 */
#include "state.h"
#include "dl.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_HEADER "# irqres state 1\n"
#define LINE_MAX_LEN 4096

void state_init(struct state *st)
{
	memset(st, 0, sizeof(*st));
}

void state_free(struct state *st)
{
	free(st->threads);
	free(st->parts);
	st->threads = NULL;
	st->parts = NULL;
	st->n_threads = st->cap_threads = st->n_parts = st->cap_parts = 0;
	st->cpuset_added = st->rt_runtime_saved = false;
}

bool state_empty(const struct state *st)
{
	return st->n_threads == 0 && st->n_parts == 0 && !st->cpuset_added &&
	       !st->rt_runtime_saved;
}

static void esc(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c >= 0x7f || c == '%' || c == '=')
			o += (size_t)snprintf(out + o, len - o, "%%%02X", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

static int unesc(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s; s++) {
		char c = *s;

		if (c == '%') {
			if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
				return -EINVAL;
			char hex[3] = { s[1], s[2], 0 };

			c = (char)strtol(hex, NULL, 16);
			s += 2;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

static int fsync_dir(const char *file)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fmt_thread(const struct state_thread *t, char *buf, size_t len)
{
	char comm[COMM_MAX * 3 + 1], cg[CGROUP_PATH_MAX * 3 + 1], part[CPUSET_NAME_MAX * 3 + 1];
	char aff[1024];

	esc(t->comm, comm, sizeof(comm));
	esc(t->cgroup, cg, sizeof(cg));
	esc(t->partition, part, sizeof(part));
	if (cpuset_list_format(&t->affinity, aff, sizeof(aff)))
		aff[0] = '\0';
	snprintf(buf, len, "thread pid=%d start=%llu comm=%s policy=%s priority=%d nice=%d "
		 "runtime=%" PRIu64 " deadline=%" PRIu64 " period=%" PRIu64 " flags=%" PRIu64
		 " cgroup=%s affinity=%s partition=%s\n", (int)t->pid, t->starttime, comm,
		 dl_policy_name(t->policy), t->priority, t->nice, t->dl_runtime_ns,
		 t->dl_deadline_ns, t->dl_period_ns, t->flags, cg, aff, part);
}

static void fmt_partition(const struct state_partition *p, char *buf, size_t len)
{
	char name[CPUSET_NAME_MAX * 3 + 1];

	esc(p->name, name, sizeof(name));
	snprintf(buf, len, "partition %s created=%d\n", name, p->created ? 1 : 0);
}

/* Appends one record and fsyncs it; creates the file (with its header) when needed. */
static int append_line(struct state *st, const char *line)
{
	struct stat sb;
	bool fresh;
	int fd, rc, errsave;

	if (!st->path[0])
		return 0;	/* an in-memory state (no run directory) */
	fresh = stat(st->path, &sb) < 0 || sb.st_size == 0;
	fd = open(st->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		errsave = errno;
		pr_err("state file %s: cannot open: %s", st->path, strerror(errsave));
		return -errsave;
	}
	rc = fresh ? write_all(fd, STATE_HEADER, strlen(STATE_HEADER)) : 0;
	if (!rc)
		rc = write_all(fd, line, strlen(line));
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (!rc && fresh)
		rc = fsync_dir(st->path);
	if (rc)
		pr_err("state file %s: cannot record: %s", st->path, strerror(-rc));
	return rc;
}

/* Rewrites the whole file from st: temp file, fsync, rename, fsync of the directory. */
static int rewrite(struct state *st)
{
	char tmp[sizeof(st->path) + 8], line[LINE_MAX_LEN];
	FILE *f;
	int rc = 0, fd;

	if (!st->path[0])
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.new", st->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		pr_err("state file %s: cannot write: %s", tmp, strerror(-rc));
		return rc;
	}
	fputs(STATE_HEADER, f);
	if (st->cpuset_added)
		fputs("cpuset_added\n", f);
	if (st->rt_runtime_saved)
		fprintf(f, "rt_runtime_us %lld\n", st->rt_runtime_us);
	for (size_t i = 0; i < st->n_parts; i++) {
		fmt_partition(&st->parts[i], line, sizeof(line));
		fputs(line, f);
	}
	for (size_t i = 0; i < st->n_threads; i++) {
		fmt_thread(&st->threads[i], line, sizeof(line));
		fputs(line, f);
	}
	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		rc = -errno;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, st->path) < 0)
		rc = -errno;
	if (!rc)
		rc = fsync_dir(st->path);
	if (rc) {
		pr_err("state file %s: cannot rewrite: %s", st->path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
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

static int push_thread(struct state *st, const struct state_thread *t)
{
	if (st->n_threads == st->cap_threads) {
		size_t cap = st->cap_threads ? st->cap_threads * 2 : 16;
		struct state_thread *v = realloc(st->threads, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->threads = v;
		st->cap_threads = cap;
	}
	st->threads[st->n_threads++] = *t;
	return 0;
}

static int push_partition(struct state *st, const char *name, bool created)
{
	struct state_partition *p;

	if (st->n_parts == st->cap_parts) {
		size_t cap = st->cap_parts ? st->cap_parts * 2 : 4;
		struct state_partition *v = realloc(st->parts, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->parts = v;
		st->cap_parts = cap;
	}
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
		return rewrite(st);
	}
	fmt_thread(t, line, sizeof(line));
	rc = append_line(st, line);
	if (rc)
		return rc;
	rc = push_thread(st, t);
	if (rc)
		rewrite(st);	/* keep the file equal to memory */
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
	rc = append_line(st, line);
	if (rc)
		return rc;
	rc = push_partition(st, name, created);
	if (rc)
		rewrite(st);
	return rc;
}

int state_set_cpuset_added(struct state *st)
{
	int rc;

	if (st->cpuset_added)
		return 0;
	rc = append_line(st, "cpuset_added\n");
	if (!rc)
		st->cpuset_added = true;
	return rc;
}

int state_set_rt_runtime(struct state *st, long long orig_us)
{
	char line[64];
	int rc;

	if (st->rt_runtime_saved)
		return 0;
	snprintf(line, sizeof(line), "rt_runtime_us %lld\n", orig_us);
	rc = append_line(st, line);
	if (!rc) {
		st->rt_runtime_saved = true;
		st->rt_runtime_us = orig_us;
	}
	return rc;
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

int state_remove(struct state *st)
{
	if (!st->path[0])
		return 0;
	if (unlink(st->path) < 0 && errno != ENOENT) {
		int rc = -errno;

		pr_err("state file %s: cannot delete: %s", st->path, strerror(-rc));
		return rc;
	}
	return fsync_dir(st->path);
}

/* ---- parsing ---- */

static int parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One "key=value" word of a thread record; *why says what is wrong. */
static int thread_field(struct state_thread *t, const char *key, const char *val,
			unsigned int *seen, const char **why)
{
	long long v;

	if (strcmp(key, "pid") == 0) {
		*why = "bad pid";
		if (parse_ll(val, 1, INT_MAX, &v))
			return -EINVAL;
		t->pid = (pid_t)v;
		*seen |= 1;
	} else if (strcmp(key, "start") == 0) {
		uint64_t u;

		*why = "bad start";
		if (parse_u64(val, &u))
			return -EINVAL;
		t->starttime = u;
		*seen |= 2;
	} else if (strcmp(key, "comm") == 0) {
		*why = "bad comm";
		return unesc(val, t->comm, sizeof(t->comm));
	} else if (strcmp(key, "policy") == 0) {
		int p = dl_policy_from_name(val);

		*why = "unknown policy";
		if (p < 0)
			return -EINVAL;
		t->policy = p;
		*seen |= 4;
	} else if (strcmp(key, "priority") == 0) {
		*why = "bad priority";
		if (parse_ll(val, 0, 99, &v))
			return -EINVAL;
		t->priority = (int)v;
	} else if (strcmp(key, "nice") == 0) {
		*why = "bad nice";
		if (parse_ll(val, -20, 19, &v))
			return -EINVAL;
		t->nice = (int)v;
	} else if (strcmp(key, "runtime") == 0) {
		*why = "bad runtime";
		return parse_u64(val, &t->dl_runtime_ns);
	} else if (strcmp(key, "deadline") == 0) {
		*why = "bad deadline";
		return parse_u64(val, &t->dl_deadline_ns);
	} else if (strcmp(key, "period") == 0) {
		*why = "bad period";
		return parse_u64(val, &t->dl_period_ns);
	} else if (strcmp(key, "flags") == 0) {
		*why = "bad flags";
		return parse_u64(val, &t->flags);
	} else if (strcmp(key, "cgroup") == 0) {
		*why = "bad cgroup";
		return unesc(val, t->cgroup, sizeof(t->cgroup));
	} else if (strcmp(key, "affinity") == 0) {
		*why = "bad affinity";
		return cpuset_list_parse(val, &t->affinity);
	} else if (strcmp(key, "partition") == 0) {
		*why = "bad partition";
		return unesc(val, t->partition, sizeof(t->partition));
	} else {
		*why = "unknown key";
		return -EINVAL;
	}
	return 0;
}

/* Parses one line (without its newline) into st; *why on error. */
static int parse_line(struct state *st, char *line, const char **why)
{
	char *save = NULL;
	char *word = strtok_r(line, " ", &save);

	if (!word || word[0] == '#')
		return 0;
	if (strcmp(word, "cpuset_added") == 0) {
		st->cpuset_added = true;
		*why = "trailing words";
		return strtok_r(NULL, " ", &save) ? -EINVAL : 0;
	}
	if (strcmp(word, "rt_runtime_us") == 0) {
		char *v = strtok_r(NULL, " ", &save);
		long long us;

		*why = "rt_runtime_us needs one number (-1 or microseconds)";
		if (!v || parse_ll(v, -1, INT_MAX, &us) || strtok_r(NULL, " ", &save))
			return -EINVAL;
		if (!st->rt_runtime_saved) {
			st->rt_runtime_saved = true;
			st->rt_runtime_us = us;
		}
		return 0;
	}
	if (strcmp(word, "partition") == 0) {
		char *n = strtok_r(NULL, " ", &save);
		char *c = strtok_r(NULL, " ", &save);
		char name[CPUSET_NAME_MAX];

		*why = "partition needs <name> created=<0|1>";
		if (!n || !c || strtok_r(NULL, " ", &save) || unesc(n, name, sizeof(name)) ||
		    !name[0] || (strcmp(c, "created=0") != 0 && strcmp(c, "created=1") != 0))
			return -EINVAL;
		if (state_find_partition(st, name))
			return 0;
		return push_partition(st, name, c[8] == '1');
	}
	if (strcmp(word, "thread") == 0) {
		struct state_thread t = { 0 };
		unsigned int seen = 0;

		while ((word = strtok_r(NULL, " ", &save)) != NULL) {
			char *eq = strchr(word, '=');

			*why = "a word that is not key=value";
			if (!eq)
				return -EINVAL;
			*eq = '\0';
			if (thread_field(&t, word, eq + 1, &seen, why))
				return -EINVAL;
		}
		*why = "thread needs pid=, start= and policy=";
		if (seen != 7)
			return -EINVAL;
		if (state_find_thread(st, t.pid))
			return 0;
		return push_thread(st, &t);
	}
	*why = "unknown record";
	return -EINVAL;
}

int state_load(struct state *st, const char *path, char *err, size_t errlen)
{
	char line[LINE_MAX_LEN + 2];
	unsigned int lineno = 0;
	int bad = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		const char *why = "line too long";
		int rc = 0;

		lineno++;
		if (len && line[len - 1] == '\n') {
			line[--len] = '\0';
		} else if (!feof(f)) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			rc = -EINVAL;
		}
		if (!rc)
			rc = parse_line(st, line, &why);
		if (rc == -ENOMEM) {
			fclose(f);
			return rc;
		}
		if (rc) {
			pr_err("state file %s:%u: %s; line skipped", path, lineno, why);
			if (bad++ == 0 && err)
				snprintf(err, errlen, "state file %s:%u: %s", path, lineno, why);
		}
	}
	fclose(f);
	return bad;
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
	if (!state_empty(st))
		pr_notice("state file %s from an earlier run: %zu thread(s), %zu partition(s)",
			  st->path, st->n_threads, st->n_parts);
	return 0;
}
