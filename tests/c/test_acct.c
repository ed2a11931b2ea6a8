/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_acct.c - the live accounting when it cannot run (no tracefs, a directory that is
 * not one: a clear error, logged once, nothing left behind) and the removal of the
 * instances of irqresd processes that are gone. The accounting itself needs a real
 * tracefs: tests/integration/test_live_accounting.py.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "acct.h"

static char dir[64];

static int make_dir(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_acct.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int remove_dir(void **state)
{
	char cmd[128];

	acct_stop();
	acct_set_tracing_dir(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static size_t entries(const char *path)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dp = opendir(path);

	assert_non_null(dp);
	while ((de = readdir(dp)))
		n += de->d_name[0] != '.';
	closedir(dp);
	return n;
}

static void test_no_tracefs(void **state)
{
	const struct acct_thread t = { 4242, 0 };
	char missing[128];

	snprintf(missing, sizeof(missing), "%s/not-mounted", dir);
	acct_set_tracing_dir(missing);
	assert_int_equal(acct_update(&t, 1), -ENOENT);
	assert_false(acct_running());
	assert_non_null(strstr(acct_error(), missing));
	assert_non_null(strstr(acct_error(), "No such file or directory"));
	/* once: the next ticks neither try again nor fail again */
	assert_int_equal(acct_update(&t, 1), 0);
	acct_drain();
	acct_stop();
	assert_string_equal(acct_error(), "");
}

static void test_not_a_tracefs(void **state)
{
	const struct acct_thread t = { 4242, 0 };
	char inst[128];

	snprintf(inst, sizeof(inst), "%s/instances", dir);
	assert_int_equal(mkdir(inst, 0755), 0);
	acct_set_tracing_dir(dir);
	assert_true(acct_update(&t, 1) < 0);
	assert_false(acct_running());
	assert_non_null(strstr(acct_error(), "reading the sched events' formats"));
	assert_int_equal(entries(inst), 0);	/* the instance it made is gone again */
}

static void test_nothing_to_follow_makes_nothing(void **state)
{
	acct_set_tracing_dir(dir);
	assert_int_equal(acct_update(NULL, 0), 0);
	assert_false(acct_running());
	assert_string_equal(acct_error(), "");
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void test_clean_stale(void **state)
{
	char path[192];
	const char *names[3];
	char gone[32], mine[32];

	snprintf(gone, sizeof(gone), "irqresd-%d", (int)dead_pid());
	snprintf(mine, sizeof(mine), "irqresd-%d", (int)getpid());
	names[0] = gone;
	names[1] = mine;
	names[2] = "irqresd-x1";	/* not a pid: not ours to judge */
	snprintf(path, sizeof(path), "%s/instances", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/instances/%s", dir, names[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	acct_set_tracing_dir(dir);
	assert_int_equal(acct_clean_stale(), 1);
	snprintf(path, sizeof(path), "%s/instances/%s", dir, gone);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/instances", dir);
	assert_int_equal(entries(path), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_tracefs, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_not_a_tracefs, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_nothing_to_follow_makes_nothing, make_dir,
						remove_dir),
		cmocka_unit_test_setup_teardown(test_clean_stale, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
