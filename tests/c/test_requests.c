/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_requests.c - the control requests on a daemon holding a fixture profile and no
 * managed thread: ping, status, and set-budget (deadline scaling, errors) without the
 * kernel.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon.h"
#include "requests.h"

#define FULL "fixtures/profile/full.yaml"

struct fixture {
	struct daemon d;
	struct json j;
	char err[ERRLEN];
	char *out;		/* the reply members written, NUL-terminated */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[ERRLEN];

	if (!f)
		return -1;
	if (profile_load(FULL, &f->d.prof, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		free(f);
		return -1;
	}
	f->d.have_prof = true;
	json_init(&f->j);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	daemon_drop_profile(&f->d);
	json_fini(&f->j);
	free(f->out);
	free(f);
	return 0;
}

/* One request through the daemon's handler; the reply members land in f->out. */
static int handle(struct fixture *f, const struct ctl_request *req)
{
	int rc;

	json_reset(&f->j);
	f->err[0] = '\0';
	json_obj_begin(&f->j);
	rc = requests_handle(&f->d, req, &f->j, f->err, sizeof(f->err));
	json_obj_end(&f->j);
	assert_int_equal(json_error(&f->j), 0);
	free(f->out);
	f->out = strndup(json_buf(&f->j), json_len(&f->j));
	assert_non_null(f->out);
	return rc;
}

static struct ctl_request set_budget(const char *target, pid_t pid, uint64_t runtime,
				     uint64_t period)
{
	struct ctl_request req = { .verb = CTL_SET_BUDGET, .pid = pid, .runtime_ns = runtime,
				   .period_ns = period };

	snprintf(req.target, sizeof(req.target), "%s", target);
	return req;
}

static void test_ping_and_status(void **state)
{
	struct fixture *f = *state;
	struct ctl_request req = { .verb = CTL_PING };

	assert_int_equal(handle(f, &req), 0);
	assert_non_null(strstr(f->out, "\"version\":\"" IRQRES_VERSION "\""));
	req.verb = CTL_STATUS;
	assert_int_equal(handle(f, &req), 0);
	assert_non_null(strstr(f->out, "\"profile\":\"" FULL "\""));
	assert_non_null(strstr(f->out, "\"admission_control\":\"disable\""));
	/* how budgets are enforced now: full.yaml keeps HRTICK_DL, irqresd holds nothing */
	assert_non_null(strstr(f->out, "\"enforcement\":{\"mode\":\""));
	assert_non_null(strstr(f->out, "\"requested\":false,\"held\":false,\"granularity_ns\":"));
	assert_non_null(strstr(f->out, "\"hrtick_dl\":"));
	assert_non_null(strstr(f->out, "\"name\":\"nic\""));
	assert_non_null(strstr(f->out, "\"name\":\"disk.1\""));
	assert_non_null(strstr(f->out, "\"threads\":[]"));
}

/* nic: runtime 2ms, deadline 8ms, period 10ms; a new period keeps D/T = 0.8 */
static void test_set_budget_scales_deadline(void **state)
{
	struct fixture *f = *state;
	struct ctl_request req = set_budget("nic", 0, 3000000, 20000000);
	const struct target *t = &f->d.prof.targets[0];

	assert_int_equal(handle(f, &req), 0);
	assert_int_equal(t->runtime_ns, 3000000);
	assert_int_equal(t->period_ns, 20000000);
	assert_int_equal(t->deadline_ns, 16000000);
	assert_non_null(strstr(f->out, "\"deadline_ns\":16000000,\"deadline_scaled\":true,"
			       "\"old_deadline_ns\":8000000"));
	assert_non_null(strstr(f->out, "\"pids\":[]"));

	/* no period: the period and the deadline stay */
	req = set_budget("nic", 0, 1000000, 0);
	assert_int_equal(handle(f, &req), 0);
	assert_int_equal(t->runtime_ns, 1000000);
	assert_int_equal(t->period_ns, 20000000);
	assert_int_equal(t->deadline_ns, 16000000);
	assert_non_null(strstr(f->out, "\"deadline_scaled\":false"));
}

static void test_set_budget_errors(void **state)
{
	struct fixture *f = *state;
	struct ctl_request req = set_budget("nic", 0, 17000000, 20000000);

	assert_int_equal(handle(f, &req), -EINVAL);
	assert_string_equal(f->err, "set-budget nic: runtime 17ms is larger than the deadline "
			    "16ms (period 20ms; the deadline keeps its ratio to the period, it was "
			    "8ms)");
	assert_int_equal(f->d.prof.targets[0].runtime_ns, 2000000);	/* unchanged */

	req = set_budget("nope", 0, 1000000, 0);
	assert_int_equal(handle(f, &req), -ENOENT);
	assert_string_equal(f->err, "set-budget nope: no such target in " FULL);

	req = set_budget("pid:4242", 4242, 1000000, 0);
	assert_int_equal(handle(f, &req), -ENOENT);
	assert_string_equal(f->err, "set-budget pid:4242: pid 4242 is not a thread irqresd "
			    "manages");

	daemon_drop_profile(&f->d);
	req = set_budget("nic", 0, 1000000, 0);
	assert_int_equal(handle(f, &req), -ENOENT);
	assert_string_equal(f->err, "set-budget nic: no profile is loaded");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ping_and_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_budget_scales_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_budget_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
