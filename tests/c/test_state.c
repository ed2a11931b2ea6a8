/* SPDX-License-Identifier: GPL-2.0-only */
/* test_state.c - the state file: records, fsync'd appends, reload, bad lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dl.h"
#include "fixtree.h"
#include "irqres.h"
#include "state.h"

static int setup(void **state)
{
	if (fixtree_setup(state))
		return -1;
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run/irqres", fixtree_root);
	mkdir(fixtree_path("run"), 0755);
	return 0;
}

static int teardown(void **state)
{
	irqres_paths_default();
	return fixtree_teardown(state);
}

static struct state_thread sample(pid_t pid)
{
	struct state_thread t = {
		.pid = pid, .starttime = 4711, .policy = SCHED_FIFO, .priority = 50,
		.flags = 1, .dl_runtime_ns = 0,
	};

	snprintf(t.comm, sizeof(t.comm), "irq/11-eth 0%%=");	/* space, %, = */
	snprintf(t.cgroup, sizeof(t.cgroup), "/system.slice/a b.service");
	snprintf(t.partition, sizeof(t.partition), "irqres.cpu0");
	CPU_ZERO(&t.affinity);
	CPU_SET(0, &t.affinity);
	return t;
}

static void test_open_creates_private_dir(void **unused)
{
	struct state st;
	char err[256] = "";
	struct stat sb;

	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(stat(irqres_paths.run, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_true(state_empty(&st));
	/* nothing recorded yet: no file */
	assert_int_equal(access(st.path, F_OK), -1);
	state_free(&st);
}

static void test_records_survive_reload(void **unused)
{
	struct state st, again;
	struct state_thread t = sample(105), t2 = sample(106), *r;
	char err[256] = "";
	struct stat sb;

	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(state_set_cpuset_added(&st), 0);
	assert_int_equal(state_add_partition(&st, "irqres.cpu0", true), 0);
	assert_int_equal(state_add_thread(&st, &t), 0);
	t2.policy = SCHED_DEADLINE;
	t2.dl_runtime_ns = 1000000;
	t2.dl_deadline_ns = 5000000;
	t2.dl_period_ns = 10000000;
	t2.cgroup[0] = '\0';
	t2.partition[0] = '\0';
	t2.nice = -5;
	assert_int_equal(state_add_thread(&st, &t2), 0);
	assert_int_equal(state_set_rt_runtime(&st, 950000), 0);
	/* a second record of pid 105 keeps the first (the original) */
	t.priority = 10;
	assert_int_equal(state_add_thread(&st, &t), 0);
	assert_int_equal(st.n_threads, 2);
	/* pid 106 had no partition: a later move into one is added, with its cgroup */
	snprintf(t2.partition, sizeof(t2.partition), "irqres.cpu1");
	snprintf(t2.cgroup, sizeof(t2.cgroup), "/");
	t2.priority = 7;
	assert_int_equal(state_add_thread(&st, &t2), 0);

	assert_int_equal(stat(st.path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	/* a fresh process loading the file sees the same */
	state_init(&again);
	assert_int_equal(state_open(&again, err, sizeof(err)), 0);
	assert_true(again.cpuset_added);
	assert_true(again.rt_runtime_saved);
	assert_int_equal(again.rt_runtime_us, 950000);
	assert_int_equal(again.n_parts, 1);
	assert_string_equal(again.parts[0].name, "irqres.cpu0");
	assert_true(again.parts[0].created);
	assert_int_equal(again.n_threads, 2);
	r = state_find_thread(&again, 105);
	assert_non_null(r);
	assert_int_equal(r->priority, 50);
	assert_int_equal(r->policy, SCHED_FIFO);
	assert_int_equal(r->starttime, 4711);
	assert_string_equal(r->comm, "irq/11-eth 0%=");
	assert_string_equal(r->cgroup, "/system.slice/a b.service");
	assert_string_equal(r->partition, "irqres.cpu0");
	assert_true(CPU_ISSET(0, &r->affinity) && CPU_COUNT(&r->affinity) == 1);
	assert_int_equal(r->flags, 1);
	r = state_find_thread(&again, 106);
	assert_non_null(r);
	assert_int_equal(r->policy, SCHED_DEADLINE);
	assert_int_equal(r->dl_runtime_ns, 1000000);
	assert_int_equal(r->dl_deadline_ns, 5000000);
	assert_int_equal(r->dl_period_ns, 10000000);
	assert_int_equal(r->nice, -5);
	assert_int_equal(r->priority, 50);	/* not 7: the first record stays */
	assert_string_equal(r->cgroup, "/");
	assert_string_equal(r->partition, "irqres.cpu1");

	/* forgetting rewrites the file */
	assert_int_equal(state_forget_thread(&again, 105), 0);
	assert_int_equal(state_forget_thread(&again, 105), -ENOENT);
	assert_int_equal(state_forget_partition(&again, "irqres.cpu0"), 0);
	assert_int_equal(state_clear_cpuset_added(&again), 0);
	assert_int_equal(state_clear_rt_runtime(&again), 0);
	state_free(&st);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.n_threads, 1);
	assert_int_equal(st.threads[0].pid, 106);
	assert_int_equal(st.n_parts, 0);
	assert_false(st.cpuset_added);
	assert_false(st.rt_runtime_saved);
	assert_int_equal(state_forget_thread(&st, 106), 0);
	assert_true(state_empty(&st));
	assert_int_equal(state_remove(&st), 0);
	assert_int_equal(access(st.path, F_OK), -1);
	state_free(&st);
	state_free(&again);
}

/* Interfaces switched to threaded NAPI: recorded before the switch, the first record
 * of an interface kept, forgotten one by one, reloaded as written. */
static void test_netdev_records(void **unused)
{
	struct state_netdev a = { "eth0", 0, 1 }, b = { "en p%1", 2, 1 }, *r;
	struct state st, again;
	char err[256] = "";

	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(state_add_netdev(&st, &a), 0);
	assert_int_equal(state_add_netdev(&st, &b), 0);
	a.was = 1;	/* a second record of eth0 keeps the first */
	assert_int_equal(state_add_netdev(&st, &a), 0);
	assert_int_equal(st.n_netdevs, 2);
	assert_false(state_empty(&st));

	state_init(&again);
	assert_int_equal(state_open(&again, err, sizeof(err)), 0);
	assert_int_equal(again.damaged, 0);
	assert_int_equal(again.n_netdevs, 2);
	r = state_find_netdev(&again, "eth0");
	assert_non_null(r);
	assert_int_equal(r->was, 0);
	assert_int_equal(r->set, 1);
	r = state_find_netdev(&again, "en p%1");
	assert_non_null(r);
	assert_int_equal(r->was, 2);
	assert_int_equal(state_forget_netdev(&again, "eth0"), 0);
	assert_int_equal(state_forget_netdev(&again, "eth0"), -ENOENT);
	state_free(&st);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.n_netdevs, 1);
	assert_string_equal(st.netdevs[0].ifname, "en p%1");
	assert_int_equal(state_forget_netdev(&st, "en p%1"), 0);
	assert_true(state_empty(&st));
	assert_int_equal(access(st.path, F_OK), -1);	/* nothing left: no file */
	state_free(&st);
	state_free(&again);
}

/* Owed affinities: replaced as a whole, kept across a reload (an empty seen= is "not
 * known yet"), and a state of nothing else is deleted when they go. */
static void test_owed_affinities(void **unused)
{
	struct state st, again;
	struct state_owed o[2] = { { .pid = 30, .starttime = 9 }, { .pid = 31, .starttime = 7 } };
	char err[256] = "";
	struct stat sb;

	snprintf(o[0].comm, sizeof(o[0].comm), "irq/24-virtio0-");
	CPU_SET(2, &o[0].cpus);
	CPU_SET(0, &o[0].seen);
	CPU_SET(1, &o[0].seen);
	snprintf(o[1].comm, sizeof(o[1].comm), "irq/9-acpi");
	CPU_SET(3, &o[1].cpus);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(state_set_owed(&st, o, 2), 0);
	assert_false(state_empty(&st));
	assert_int_equal(stat(st.path, &sb), 0);

	state_init(&again);
	assert_int_equal(state_open(&again, err, sizeof(err)), 0);
	assert_int_equal(again.n_owed, 2);
	assert_int_equal(again.owed[0].pid, 30);
	assert_int_equal(again.owed[0].starttime, 9);
	assert_string_equal(again.owed[0].comm, "irq/24-virtio0-");
	assert_true(CPU_EQUAL(&again.owed[0].cpus, &o[0].cpus));
	assert_true(CPU_EQUAL(&again.owed[0].seen, &o[0].seen));
	assert_int_equal(CPU_COUNT(&again.owed[1].seen), 0);
	assert_true(CPU_ISSET(3, &again.owed[1].cpus));
	/* the same table again writes nothing */
	assert_int_equal(unlink(st.path), 0);
	assert_int_equal(state_set_owed(&again, o, 2), 0);
	assert_int_equal(access(st.path, F_OK), -1);
	/* one left: rewritten; none left and nothing else: the file goes */
	assert_int_equal(state_set_owed(&again, &o[1], 1), 0);
	state_free(&st);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.n_owed, 1);
	assert_int_equal(st.owed[0].pid, 31);
	assert_int_equal(state_set_owed(&st, NULL, 0), 0);
	assert_true(state_empty(&st));
	assert_int_equal(access(st.path, F_OK), -1);
	state_free(&st);
	state_free(&again);
}

static void test_bad_lines(void **unused)
{
	struct state st;
	char err[256] = "", long_line[6000];

	memset(long_line, 'x', sizeof(long_line) - 2);
	long_line[sizeof(long_line) - 2] = '\n';
	long_line[sizeof(long_line) - 1] = '\0';
	fixtree_file("run/irqres/state", "");
	{
		FILE *f = fopen(fixtree_path("run/irqres/state"), "w");

		fputs("# irqres state 1\n", f);				/* 1 */
		fputs("thread pid=abc start=1 policy=fifo\n", f);	/* 2 bad */
		fputs("partition irqres.cpu0 created=1\n", f);		/* 3 */
		fputs("bogus record\n", f);				/* 4 bad */
		fputs(long_line, f);					/* 5 bad */
		fputs("thread pid=7 start=9 policy=fifo priority=50 comm=a%2\n", f); /* 6 bad */
		fputs("thread pid=8 start=9 policy=rr priority=10 nice=0 runtime=0 deadline=0 "
		      "period=0 flags=0 cgroup= affinity=0-1 partition=\n", f);	/* 7 */
		fputs("thread pid=9 start=9\n", f);			/* 8 bad: no policy */
		fputs("rt_runtime_us lots\n", f);			/* 9 bad */
		fputs("partition\n", f);				/* 10 bad */
		fputs("thread pid=10 start=9 policy=fifo priority=500\n", f);	/* 11 bad */
		fputs("thread pid=11 start=9 policy=other surprise=1\n", f);	/* 12 bad */
		fputs("\n", f);
		fclose(f);
	}
	state_init(&st);
	assert_int_equal(state_load(&st, fixtree_path("run/irqres/state"), err, sizeof(err)), 9);
	assert_non_null(strstr(err, "state:2: bad pid"));
	assert_int_equal(st.n_parts, 1);
	assert_int_equal(st.n_threads, 1);
	assert_int_equal(st.threads[0].pid, 8);
	assert_int_equal(st.threads[0].policy, SCHED_RR);
	assert_int_equal(CPU_COUNT(&st.threads[0].affinity), 2);
	state_free(&st);

	/* state_open keeps the good records of such a file */
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.n_threads, 1);
	state_free(&st);

	state_init(&st);
	assert_int_equal(state_load(&st, fixtree_path("run/none"), err, sizeof(err)), -ENOENT);
	state_free(&st);
}

/* Each kind of bad record, alone in a file: the message names line 2 and the cause. */
static void test_bad_line_messages(void **unused)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
		{ "bogus record",
		  "unknown record 'bogus' (known records: cpuset_added, rt_runtime_us, partition, "
		  "thread, owed, sched_feature, napi_threaded)" },
		{ "cpuset_added yes", "trailing words" },
		{ "rt_runtime_us", "rt_runtime_us needs one number (-1 or microseconds)" },
		{ "rt_runtime_us -2", "rt_runtime_us needs one number (-1 or microseconds)" },
		{ "rt_runtime_us 5 6", "rt_runtime_us needs one number (-1 or microseconds)" },
		{ "partition a", "partition needs <name> created=<0|1>" },
		{ "partition a created=2", "partition needs <name> created=<0|1>" },
		{ "partition %zz created=1", "partition needs <name> created=<0|1>" },
		{ "partition a created=1 x", "partition needs <name> created=<0|1>" },
		{ "thread pid", "a word that is not key=value" },
		{ "thread pid=0 start=1 policy=fifo", "bad pid" },
		{ "thread pid=2147483648 start=1 policy=fifo", "bad pid" },
		{ "thread pid=1 start=-1 policy=fifo", "bad start" },
		{ "thread pid=1 start=1 policy=idle2", "unknown policy" },
		{ "thread pid=1 start=1 policy=fifo comm=%4", "bad comm" },
		{ "thread pid=1 start=1 policy=fifo priority=100", "bad priority" },
		{ "thread pid=1 start=1 policy=fifo nice=20", "bad nice" },
		{ "thread pid=1 start=1 policy=fifo nice=-21", "bad nice" },
		{ "thread pid=1 start=1 policy=fifo runtime=x", "bad runtime" },
		{ "thread pid=1 start=1 policy=fifo deadline=1x", "bad deadline" },
		{ "thread pid=1 start=1 policy=fifo period=", "bad period" },
		{ "thread pid=1 start=1 policy=fifo flags=-1", "bad flags" },
		{ "thread pid=1 start=1 policy=fifo cgroup=%g0", "bad cgroup" },
		{ "thread pid=1 start=1 policy=fifo affinity=1-", "bad affinity" },
		{ "thread pid=1 start=1 policy=fifo partition=%", "bad partition" },
		{ "thread pid=1 start=1 policy=fifo surprise=1",
		  "unknown key 'surprise' (known keys: pid, start, comm, policy, priority, nice, "
		  "runtime, deadline, period, flags, cgroup, affinity, partition)" },
		{ "thread start=1 policy=fifo", "thread needs pid=, start= and policy=" },
		{ "thread pid=1 policy=fifo", "thread needs pid=, start= and policy=" },
		{ "thread pid=1 start=1", "thread needs pid=, start= and policy=" },
		{ "owed pid=1 start=1", "owed needs pid=, start= and cpus=" },
		{ "owed pid=1 start=1 cpus=0 seen=x", "bad seen" },
		{ "owed pid=1 start=1 cpus=0 policy=fifo",
		  "unknown key 'policy' (known keys: pid, start, comm, cpus, seen)" },
		{ "napi_threaded ifname=eth0 was=0", "napi_threaded needs ifname=, was= and set=" },
		{ "napi_threaded ifname=eth0 was=3 set=1", "bad was" },
		{ "napi_threaded ifname=abcdefghijklmnop was=0 set=1", "bad ifname" },
		{ "napi_threaded ifname= was=0 set=1", "napi_threaded needs an interface name" },
	};
	char err[512], want[1200], text[256];
	struct state st;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "# irqres state 1\n%s\n", cases[i].line);
		fixtree_file("run/irqres/state", text);
		snprintf(want, sizeof(want), "state file %s:2: %s",
			 fixtree_path("run/irqres/state"), cases[i].why);
		state_init(&st);
		err[0] = '\0';
		assert_int_equal(state_load(&st, fixtree_path("run/irqres/state"), err,
					    sizeof(err)), 1);
		if (strcmp(err, want))
			fail_msg("line '%s':\n  got:  %s\n  want: %s", cases[i].line, err, want);
		assert_int_equal(st.n_threads, 0);
		assert_int_equal(st.n_parts, 0);
		state_free(&st);
	}
}

/* A file with the records of @n sample threads, written by irqresd: its text (static). */
static const char *written_state(struct state *st, int n)
{
	char err[256] = "";

	state_init(st);
	assert_int_equal(state_open(st, err, sizeof(err)), 0);
	for (int i = 0; i < n; i++) {
		struct state_thread t = sample(200 + i);

		assert_int_equal(state_add_thread(st, &t), 0);
	}
	return fixtree_read("run/irqres/state");
}

/* Loads the file @text as a state file: the number of problems, the first in err. */
static int load_text(const char *text, char *err, size_t errlen)
{
	struct state st;
	int rc;

	fixtree_file("run/irqres/state", text);
	state_init(&st);
	err[0] = '\0';
	rc = state_load(&st, fixtree_path("run/irqres/state"), err, errlen);
	state_free(&st);
	return rc;
}

/*
 * Damage is detected, never skipped: one changed byte (the checksum), an unfinished last
 * line, an empty, header-only or garbage file. Each is a problem state_load() counts.
 */
static void test_damage_detected(void **unused)
{
	struct state st;
	char text[4096], err[512], *p;
	size_t len;

	snprintf(text, sizeof(text), "%s", written_state(&st, 3));
	state_free(&st);
	assert_memory_equal(text, "# irqres state 2\nthread pid=200 ", 32);
	assert_int_equal(load_text(text, err, sizeof(err)), 0);
	/* policy=fifo -> policy=fifx: the record parses, its checksum does not match */
	p = strstr(text, "pid=201");
	p = strstr(p, "policy=fifo") + strlen("policy=fif");
	*p = 'x';
	assert_int_equal(load_text(text, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state:3: checksum mismatch"));
	*p = 'o';
	/* a torn last line */
	len = strlen(text);
	text[len - 20] = '\0';
	assert_int_equal(load_text(text, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state:4: unfinished last line (no newline)"));
	/* the checksum word itself cut off, with a newline (a glued line would be so) */
	snprintf(text + len - 20, sizeof(text) - (len - 20), "\n");
	assert_int_equal(load_text(text, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state:4: no checksum (crc32=)"));
	assert_int_equal(load_text("", err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state: empty"));
	assert_int_equal(load_text("# irqres state 2\n", err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state: holds no record"));
	assert_int_equal(load_text("\x7f" "ELF\x02\x01", err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state:1: not an irqres state file"));
	/* version 2 records need their checksum */
	assert_int_equal(load_text("# irqres state 2\ncpuset_added\n", err, sizeof(err)), 1);
	assert_non_null(strstr(err, "state:2: no checksum"));
}

/* A damaged file is kept as it is: forgetting every record neither rewrites nor deletes
 * it, and state_open() says how many problems it had. */
static void test_damaged_file_kept(void **unused)
{
	struct state st;
	char text[4096], err[512] = "";

	snprintf(text, sizeof(text), "%s", written_state(&st, 2));
	state_free(&st);
	strcat(text, "thread pid=5 start=1 policy=otherx crc32=00000000\n");
	fixtree_file("run/irqres/state", text);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.damaged, 1);
	assert_true(st.frozen);
	assert_non_null(strstr(err, "state:4: checksum mismatch"));
	assert_int_equal(st.n_threads, 2);
	assert_int_equal(state_forget_thread(&st, 200), 0);
	assert_int_equal(state_forget_thread(&st, 201), 0);
	assert_int_equal(state_remove(&st), 0);
	assert_string_equal(fixtree_read("run/irqres/state"), text);
	state_free(&st);
}

/* A record is never appended after an unfinished last line: the file is rewritten from
 * memory, and every line of it passes its check. */
static void test_no_append_after_torn_line(void **unused)
{
	struct state st;
	struct state_thread t = sample(300);
	char text[4096], err[512];
	size_t len;

	snprintf(text, sizeof(text), "%s", written_state(&st, 2));
	len = strlen(text);
	text[len - 7] = '\0';		/* the last record lost its end */
	fixtree_file("run/irqres/state", text);
	assert_int_equal(state_add_thread(&st, &t), 0);
	snprintf(text, sizeof(text), "%s", fixtree_read("run/irqres/state"));
	state_free(&st);
	assert_int_equal(load_text(text, err, sizeof(err)), 0);
	assert_non_null(strstr(text, "pid=201 "));
	assert_non_null(strstr(text, "pid=300 "));
}

/* Forgetting in a batch rewrites the file once, at its end; a state with no record left
 * deletes the file rather than leave a header alone. */
static void test_batch_rewrites_once(void **unused)
{
	struct state st;
	struct stat before, during;

	written_state(&st, 50);
	assert_int_equal(stat(st.path, &before), 0);
	state_batch_begin(&st);
	for (int i = 0; i < 49; i++)
		assert_int_equal(state_forget_thread(&st, 200 + i), 0);
	assert_int_equal(stat(st.path, &during), 0);
	assert_int_equal(during.st_ino, before.st_ino);	/* not rewritten yet */
	assert_int_equal(state_batch_end(&st), 0);
	assert_int_equal(stat(st.path, &during), 0);
	assert_int_not_equal(during.st_ino, before.st_ino);
	assert_null(strstr(fixtree_read("run/irqres/state"), "pid=200 "));
	assert_int_equal(state_forget_thread(&st, 249), 0);
	assert_int_equal(access(st.path, F_OK), -1);
	state_free(&st);
}

/* A version 1 file (an older irqresd's) is read, and rewritten whole as version 2 at
 * the first record added: a checksummed record is never appended to it. */
static void test_version1_upgraded(void **unused)
{
	struct state st;
	struct state_thread t = sample(301);
	char err[512] = "", text[4096];

	fixtree_file("run/irqres/state", "# irqres state 1\nthread pid=300 start=9 policy=fifo "
		     "priority=50\n");
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), 0);
	assert_int_equal(st.damaged, 0);
	assert_int_equal(st.n_threads, 1);
	assert_int_equal(state_add_thread(&st, &t), 0);
	state_free(&st);
	snprintf(text, sizeof(text), "%s", fixtree_read("run/irqres/state"));
	assert_memory_equal(text, "# irqres state 2\n", 17);
	assert_int_equal(load_text(text, err, sizeof(err)), 0);
	assert_non_null(strstr(text, "pid=300 "));
	assert_non_null(strstr(text, "pid=301 "));
}

static void test_unwritable_run_dir(void **unused)
{
	struct state st;
	char err[256] = "";

	fixtree_file("run/file", "");
	snprintf(irqres_paths.run, sizeof(irqres_paths.run), "%s/run/file/sub", fixtree_root);
	state_init(&st);
	assert_int_equal(state_open(&st, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "cannot create the run directory"));
	state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_creates_private_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records_survive_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netdev_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owed_affinities, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_line_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damage_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_file_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_append_after_torn_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_rewrites_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version1_upgraded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_run_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
