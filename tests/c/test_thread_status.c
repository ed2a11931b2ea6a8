/* SPDX-License-Identifier: GPL-2.0-only */
/* test_thread_status.c - a reserved thread's members in status JSON, one writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "irqres.h"
#include "thread_status.h"

#define MS 1000000ULL

static const char *written(struct json *j, const struct thread_status *s)
{
	json_init(j);
	json_obj_begin(j);
	thread_status_members(s, j);
	json_obj_end(j);
	json_raw(j, "", 1);	/* the terminator, for strcmp */
	assert_int_equal(json_error(j), 0);
	return json_buf(j);
}

/* A reserved thread in a partition: its scheduling now, and the partition's cgroup
 * directory under "cpuset" (the member the status reply documents). */
static void test_thread_status_reserved(void **state)
{
	struct dl_attr now = { .sched_policy = SCHED_DEADLINE, .sched_runtime = 2 * MS,
			       .sched_deadline = 8 * MS, .sched_period = 10 * MS };
	struct thread_status s = { .pid = 105, .comm = "irq/11-eth0", .cpus = "0", .now = &now,
				   .orig_policy = SCHED_FIFO, .orig_priority = 50,
				   .partition = "/irqres.cpu0" };
	struct json j;

	irqres_paths_default();
	snprintf(irqres_paths.cgroup, sizeof(irqres_paths.cgroup), "/tmp/cg");
	assert_string_equal(written(&j, &s),
			    "{\"pid\":105,\"comm\":\"irq/11-eth0\",\"cpus\":\"0\","
			    "\"policy\":\"deadline\",\"runtime_ns\":2000000,\"period_ns\":10000000,"
			    "\"deadline_ns\":8000000,\"orig_policy\":\"fifo\",\"orig_priority\":50,"
			    "\"cpuset\":\"/tmp/cg/irqres.cpu0\"}");
	json_fini(&j);
	irqres_paths_default();
}

/* Gone: "gone", with the budget it was given when the caller has one; no partition: null. */
static void test_thread_status_gone(void **state)
{
	struct dl_attr reserved = { .sched_runtime = 1 * MS, .sched_deadline = 5 * MS,
				    .sched_period = 5 * MS };
	struct thread_status s = { .pid = 7, .comm = "app", .cpus = "", .orig_policy = SCHED_OTHER,
				   .partition = "" };
	struct json j;

	assert_string_equal(written(&j, &s),
			    "{\"pid\":7,\"comm\":\"app\",\"cpus\":\"\",\"policy\":\"gone\","
			    "\"orig_policy\":\"other\",\"orig_priority\":0,\"cpuset\":null}");
	json_fini(&j);
	s.reserved = &reserved;
	assert_non_null(strstr(written(&j, &s), "\"policy\":\"gone\",\"runtime_ns\":1000000,"
			       "\"period_ns\":5000000,\"deadline_ns\":5000000,"));
	json_fini(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_status_reserved),
		cmocka_unit_test(test_thread_status_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
