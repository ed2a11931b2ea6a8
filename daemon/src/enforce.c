/* SPDX-License-Identifier: GPL-2.0-only */
/* enforce.c - how the kernel enforces a SCHED_DEADLINE budget; see enforce.h. */
#include "enforce.h"
#include "array.h"
#include "fileio.h"
#include "log.h"
#include "plan.h"
#include "units.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000ULL
#define JIFFIES_WRAP 4294967296ULL	/* INITIAL_JIFFIES = 2^32 - 300 * HZ (64-bit) */
#define JIFFIES_START_S 300ULL
#define FEATURES_MAX 8192

static char boot_dir[256] = "/boot";
static bool held;		/* this irqresd switched HRTICK_DL on and holds it */

void enforce_set_boot_dir(const char *dir)
{
	snprintf(boot_dir, sizeof(boot_dir), "%s", dir);
}

/* ---- reading the facts ---- */

int enforce_features_parse(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; *p;) {
		size_t w;

		p += strspn(p, " \t\n");
		w = strcspn(p, " \t\n");
		if (w == n && !strncmp(p, name, n))
			return 1;
		if (w == n + 3 && !strncmp(p, "NO_", 3) && !strncmp(p + 3, name, n))
			return 0;
		p += w;
	}
	return -ENOENT;
}

/* Does directory @dir have any entry (debugfs mounted there)? */
static bool dir_has_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool any = false;

	if (!d)
		return false;
	while (!any && (de = readdir(d)) != NULL)
		any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return any;
}

/* Where the sched features file is: 0, or -ENOENT with e->features_err set. */
static int features_find(struct enforce_env *e)
{
	char debug[sizeof(irqres_paths.sys) + 16], old[sizeof(debug) + 16];

	snprintf(debug, sizeof(debug), "%s/kernel/debug", irqres_paths.sys);
	snprintf(e->features_path, sizeof(e->features_path), "%s/sched/features", debug);
	if (access(e->features_path, F_OK) == 0)
		return 0;
	snprintf(old, sizeof(old), "%s/sched_features", debug);	/* before Linux 5.13 */
	if (access(old, F_OK) == 0) {
		snprintf(e->features_path, sizeof(e->features_path), "%s", old);
		return 0;
	}
	if (!dir_has_entries(debug))
		snprintf(e->features_err, sizeof(e->features_err), "debugfs is not mounted at %s "
			 "(irqres does not mount it: mount -t debugfs none %s)", debug, debug);
	else
		snprintf(e->features_err, sizeof(e->features_err), "%s: no such file: this "
			 "kernel shows no sched features (CONFIG_SCHED_DEBUG off)",
			 e->features_path);
	return -ENOENT;
}

/* The feature's value now: 1, 0, or -errno with e->features_err set. */
static int feature_read(struct enforce_env *e)
{
	char text[FEATURES_MAX];
	int rc = features_find(e);

	if (rc)
		return rc;
	rc = (int)fileio_read(e->features_path, text, sizeof(text));
	if (rc < 0) {
		snprintf(e->features_err, sizeof(e->features_err), "%s: cannot read: %s",
			 e->features_path, strerror(-rc));
		return rc;
	}
	rc = enforce_features_parse(text, ENFORCE_FEATURE);
	if (rc < 0)
		snprintf(e->features_err, sizeof(e->features_err), "%s lists no %s: this kernel "
			 "has no such sched feature", e->features_path, ENFORCE_FEATURE);
	return rc;
}

/* CONFIG_HZ and CONFIG_SCHED_HRTICK from <boot>/config-<release>. */
static void config_read(struct enforce_env *e)
{
	char path[sizeof(boot_dir) + 136], release[128], line[256], *end;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", irqres_paths.proc);
	if (fileio_read_value(path, release, sizeof(release)) < 0)
		return;
	snprintf(path, sizeof(path), "%s/config-%s", boot_dir, release);
	f = fopen(path, "re");
	if (!f)
		return;
	e->sched_hrtick = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CONFIG_HZ=", 10)) {
			unsigned long long hz = strtoull(line + 10, &end, 10);

			if (hz > 0 && hz <= 100000 && (*end == '\n' || !*end)) {
				e->hz = hz;
				snprintf(e->hz_source, sizeof(e->hz_source), "%s", path);
			}
		} else if (!strcmp(line, "CONFIG_SCHED_HRTICK=y\n")) {
			e->sched_hrtick = 1;
		}
	}
	fclose(f);
}

uint64_t enforce_hz_from_jiffies(unsigned long long jiffies, uint64_t now_ns)
{
	static const uint64_t kconfig_hz[] = { 100, 250, 300, 1000 };
	long double since = (long double)jiffies - (long double)JIFFIES_WRAP;
	long double t = ((long double)now_ns - (long double)(JIFFIES_START_S * NS_PER_SEC)) /
			(long double)NS_PER_SEC;
	uint64_t found = 0;

	for (size_t i = 0; i < sizeof(kconfig_hz) / sizeof(kconfig_hz[0]); i++) {
		long double d = since - (long double)kconfig_hz[i] * t;

		if (d < 0)
			d = -d;
		if (d > 2.0L * (long double)kconfig_hz[i])	/* 2 s of slack (boot offset) */
			continue;
		if (found)
			return 0;	/* not one value: near the 300th second */
		found = kconfig_hz[i];
	}
	return found;
}

/* From <proc>/timer_list: every CPU's hres_active, the first clock's resolution and,
 * when HZ is not known yet, HZ from "now at" and the first "jiffies:". */
static void timer_list_read(struct enforce_env *e)
{
	char path[sizeof(irqres_paths.proc) + 16], line[256];
	unsigned long long now = 0, jiffies = 0, v;
	bool have_now = false, have_jiffies = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/timer_list", irqres_paths.proc);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " ");

		if (sscanf(p, "now at %llu nsecs", &v) == 1) {
			now = v;
			have_now = true;
		} else if (!have_jiffies && sscanf(p, "jiffies: %llu", &v) == 1) {
			jiffies = v;
			have_jiffies = true;
		} else if (sscanf(p, ".hres_active : %llu", &v) == 1) {
			e->hres = e->hres == 0 ? 0 : v == 1;
		} else if (!e->hres_ns && sscanf(p, ".resolution: %llu nsecs", &v) == 1) {
			e->hres_ns = v;
		}
	}
	fclose(f);
	if (!e->hz && have_now && have_jiffies) {
		e->hz = enforce_hz_from_jiffies(jiffies, now);
		if (e->hz)
			snprintf(e->hz_source, sizeof(e->hz_source), "measured: jiffies and now "
				 "in %s", path);
	}
}

void enforce_env_read(struct enforce_env *e)
{
	int rc;

	memset(e, 0, sizeof(*e));
	e->hres = e->sched_hrtick = -1;
	rc = feature_read(e);
	e->hrtick_dl = rc < 0 ? -1 : rc;
	config_read(e);
	timer_list_read(e);
}

/* ---- the decision ---- */

/* Why HRTICK_DL cannot enforce budgets here (into buf), or NULL when it can. */
static const char *hrtick_impossible(const struct enforce_env *e, char *buf, size_t len)
{
	if (e->hrtick_dl < 0)
		return e->features_err;
	if (e->hres == 0) {
		snprintf(buf, len, "high-resolution timers are not active on every CPU "
			 "(.hres_active in %s/timer_list): %s would change nothing",
			 irqres_paths.proc, ENFORCE_FEATURE);
		return buf;
	}
	if (e->sched_hrtick == 0) {
		snprintf(buf, len, "the kernel is built without CONFIG_SCHED_HRTICK (%s): %s "
			 "would change nothing", e->hz_source[0] ? e->hz_source : "its config",
			 ENFORCE_FEATURE);
		return buf;
	}
	return NULL;
}

static uint64_t granule(const struct enforce_env *e, enum enforce_mode m)
{
	if (m == ENFORCE_HRTICK)
		return e->hres_ns > ENFORCE_HRTICK_MIN_NS ? e->hres_ns : ENFORCE_HRTICK_MIN_NS;
	return e->hz ? NS_PER_SEC / e->hz : 0;
}

void enforce_decide(const struct enforce_env *e, bool want_hrtick, struct enforce_plan *p)
{
	char buf[sizeof(p->why)];
	const char *why = hrtick_impossible(e, buf, sizeof(buf));

	memset(p, 0, sizeof(*p));
	p->mode = e->hrtick_dl == 1 && !why ? ENFORCE_HRTICK : ENFORCE_TICK;	/* now */
	p->known = true;
	p->requested = want_hrtick;
	p->env = *e;
	if (want_hrtick && why) {
		snprintf(p->why, sizeof(p->why), "%s", why);
		p->action = ENFORCE_IMPOSSIBLE;
	} else if (want_hrtick) {
		p->action = e->hrtick_dl == 1 ? ENFORCE_ALREADY_ON : ENFORCE_SWITCH_ON;
		p->mode = ENFORCE_HRTICK;
	} else if (held && e->hrtick_dl == 1) {
		p->action = ENFORCE_GIVE_BACK;
		p->mode = ENFORCE_TICK;
	}
	p->granule_ns = granule(e, p->mode);
}

int enforce_budget_note(const struct enforce_plan *p, uint64_t runtime_ns, uint64_t period_ns,
			char *buf, size_t len)
{
	char g[UNITS_FMT_LEN], q[UNITS_FMT_LEN], t[UNITS_FMT_LEN], w[UNITS_FMT_LEN];
	uint64_t gr = p->granule_ns;
	bool few_q, few_t;

	if (!p->known || !gr || !period_ns)
		return 0;
	few_q = runtime_ns < ENFORCE_FEW_GRANULES * gr;
	few_t = gr * 100 > period_ns * ENFORCE_PERIOD_SHARE_PCT;
	if (!few_q && !few_t)
		return 0;
	units_format_duration(gr, g, sizeof(g));
	units_format_duration(runtime_ns, q, sizeof(q));
	units_format_duration(period_ns, t, sizeof(t));
	units_format_duration(runtime_ns + gr, w, sizeof(w));
	snprintf(buf, len, "Q = %s, T = %s: enforced %s (%s), so a period may take up to %s "
		 "(%.0f%% of T where Q/T promises %.0f%%): %s%s",
		 q, t, p->mode == ENFORCE_HRTICK ? "by the hrtick" : "at the tick", g, w,
		 100.0 * (double)(runtime_ns + gr) / (double)period_ns,
		 100.0 * (double)runtime_ns / (double)period_ns,
		 few_q ? "Q is under 2 granules" : "a granule is over 10% of T",
		 p->mode == ENFORCE_TICK && !p->requested ? "; enforcement: hrtick in the "
		 "profile enforces it by an hrtimer" : "");
	return 1;
}

int enforce_plan_notes(struct plan *plan, const struct plan_env *env)
{
	const struct profile *prof = plan->prof;
	char note[640];
	int rc = 0;

	if (!env->enforce_read || !prof)
		return 0;
	enforce_decide(&env->enforce, prof->hrtick, &plan->enforce);
	if (plan->enforce.action == ENFORCE_IMPOSSIBLE) {
		plan->feasible = false;
		rc = array_printf(&plan->errors, &plan->n_errors, &plan->errors_cap,
				  "%s: enforcement: hrtick: %s", prof->path, plan->enforce.why);
	}
	if (!rc && !plan->enforce.granule_ns && plan->n_items)
		rc = array_printf(&plan->warnings, &plan->n_warnings, &plan->warnings_cap,
				  "the tick rate (HZ) is unknown: how far a budget may overrun "
				  "at the tick cannot be told");
	for (size_t i = 0; !rc && i < prof->n_targets; i++) {
		const struct target *t = &prof->targets[i];
		bool matched = false;

		for (size_t k = 0; k < plan->n_items && !matched; k++)
			matched = plan->items[k].target == i;
		if (matched && enforce_budget_note(&plan->enforce, t->runtime_ns, t->period_ns,
						   note, sizeof(note)))
			rc = array_printf(&plan->warnings, &plan->n_warnings,
					  &plan->warnings_cap, "target '%s': %s", t->name, note);
	}
	return rc;
}

/* ---- reports ---- */

const char *enforce_mode_name(enum enforce_mode m)
{
	return m == ENFORCE_HRTICK ? "hrtick" : "tick";
}

const char *enforce_action_name(enum enforce_action a)
{
	static const char *const names[] = {
		[ENFORCE_KEEP] = "keep", [ENFORCE_SWITCH_ON] = "switch-on",
		[ENFORCE_ALREADY_ON] = "already-on", [ENFORCE_GIVE_BACK] = "give-back",
		[ENFORCE_IMPOSSIBLE] = "impossible",
	};

	return names[a];
}

static const char *feature_str(int v)
{
	return v == 1 ? "on" : v == 0 ? "off" : "unknown";
}

static void print_action(const struct enforce_plan *p, FILE *f)
{
	switch (p->action) {
	case ENFORCE_SWITCH_ON:
		fprintf(f, "  enforcement: hrtick: irqres switches %s on while its reservations "
			"exist and gives the previous value back on stop\n", ENFORCE_FEATURE);
		break;
	case ENFORCE_ALREADY_ON:
		fprintf(f, "  enforcement: hrtick: %s is on already\n", ENFORCE_FEATURE);
		break;
	case ENFORCE_GIVE_BACK:
		fprintf(f, "  enforcement: keep: %s, which irqres switched on for the profile "
			"in force, goes back to its previous value\n", ENFORCE_FEATURE);
		break;
	case ENFORCE_IMPOSSIBLE:
		fprintf(f, "  enforcement: hrtick: impossible: %s\n", p->why);
		break;
	case ENFORCE_KEEP:
		break;
	}
}

void enforce_report_text(const struct enforce_plan *p, FILE *f)
{
	const struct enforce_env *e = &p->env;
	char g[UNITS_FMT_LEN];

	if (!p->known)
		return;
	if (p->granule_ns)
		units_format_duration(p->granule_ns, g, sizeof(g));
	else
		snprintf(g, sizeof(g), "unknown");
	fprintf(f, "\nBudget enforcement: %s, a budget may overrun by up to %s per period\n",
		p->mode == ENFORCE_HRTICK ? "by the hrtick (an hrtimer at the runtime left)" :
		"at the scheduler tick", g);
	if (e->hz)
		fprintf(f, "  HZ=%" PRIu64 " (%s)\n", e->hz, e->hz_source);
	else
		fprintf(f, "  HZ unknown (no config-<release> in %s, %s/timer_list unreadable or "
			"ambiguous)\n", boot_dir, irqres_paths.proc);
	fprintf(f, "  high-resolution timers: %s", e->hres == 1 ? "active" : e->hres == 0 ?
		"NOT active on every CPU" : "unknown");
	if (e->hres_ns)
		fprintf(f, ", resolution %" PRIu64 "ns", e->hres_ns);
	fprintf(f, "\n  %s: %s", ENFORCE_FEATURE, feature_str(e->hrtick_dl));
	if (e->hrtick_dl < 0)
		fprintf(f, " (%s)\n", e->features_err);
	else
		fprintf(f, " (%s)\n", e->features_path);
	print_action(p, f);
}

/* The paragraph as a string (NULL on failure); caller frees. */
static char *report_string(const struct enforce_plan *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	enforce_report_text(p, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void kv_tristate(struct json *j, const char *key, int v)
{
	if (v < 0)
		json_kv_null(j, key);
	else
		json_kv_bool(j, key, v == 1);
}

static void kv_known_uint(struct json *j, const char *key, uint64_t v)
{
	if (v)
		json_kv_uint(j, key, v);
	else
		json_kv_null(j, key);
}

/* The facts of e as members of the object open in j. */
static void env_json(const struct enforce_env *e, struct json *j)
{
	kv_known_uint(j, "hz", e->hz);
	json_kv_str(j, "hz_source", e->hz_source[0] ? e->hz_source : NULL);
	kv_tristate(j, "hres_active", e->hres);
	kv_known_uint(j, "hrtimer_resolution_ns", e->hres_ns);
	kv_tristate(j, "hrtick_dl", e->hrtick_dl);
	json_kv_str(j, "features_path", e->features_path[0] ? e->features_path : NULL);
	json_kv_str(j, "features_error", e->hrtick_dl < 0 ? e->features_err : NULL);
}

void enforce_report_json(const struct enforce_plan *p, struct json *j)
{
	char *text;

	if (!p->known) {
		json_null(j);
		return;
	}
	text = report_string(p);
	json_obj_begin(j);
	json_kv_str(j, "mode", enforce_mode_name(p->mode));
	json_kv_bool(j, "requested", p->requested);
	json_kv_str(j, "action", enforce_action_name(p->action));
	json_kv_str(j, "impossible", p->action == ENFORCE_IMPOSSIBLE ? p->why : NULL);
	kv_known_uint(j, "granularity_ns", p->granule_ns);
	kv_known_uint(j, "overrun_max_ns", p->granule_ns);
	env_json(&p->env, j);
	json_kv_str(j, "text", text ? text : "");
	json_obj_end(j);
	free(text);
}

void enforce_status_json(const struct state *st, bool requested, struct json *j)
{
	struct enforce_env e;
	struct enforce_plan now;

	enforce_env_read(&e);
	enforce_decide(&e, requested, &now);
	if (now.action != ENFORCE_IMPOSSIBLE) {	/* what the kernel does now */
		now.mode = e.hrtick_dl == 1 && now.env.hres != 0 && e.sched_hrtick != 0 ?
			   ENFORCE_HRTICK : ENFORCE_TICK;
		now.granule_ns = granule(&e, now.mode);
	}
	json_obj_begin(j);
	json_kv_str(j, "mode", enforce_mode_name(now.mode));
	json_kv_bool(j, "requested", requested);
	json_kv_bool(j, "held", st->feature_saved);	/* irqres switched it and gives it back */
	kv_known_uint(j, "granularity_ns", now.granule_ns);
	kv_known_uint(j, "overrun_max_ns", now.granule_ns);
	env_json(&e, j);
	json_obj_end(j);
}

/* ---- switching ---- */

static int feature_write(const char *path, bool on)
{
	char word[sizeof(ENFORCE_FEATURE) + 3];

	snprintf(word, sizeof(word), "%s%s", on ? "" : "NO_", ENFORCE_FEATURE);
	return fileio_write(path, word, false);
}

int enforce_hrtick_on(struct state *st, char *err, size_t errlen)
{
	struct state_feature rec = { .was = 0, .set = 1 };
	struct enforce_env e = { 0 };
	int rc, now = feature_read(&e);

	if (st->feature_saved)	/* switched before: who turned it off since is obeyed */
		return 0;
	if (now < 0) {
		snprintf(err, errlen, "enforcement: hrtick: %s", e.features_err);
		return now;
	}
	if (now == 1)
		return 0;
	snprintf(rec.name, sizeof(rec.name), "%s", ENFORCE_FEATURE);
	rc = state_set_feature(st, &rec);
	if (rc) {
		snprintf(err, errlen, "cannot record %s in the state file: %s", ENFORCE_FEATURE,
			 strerror(-rc));
		return rc;
	}
	rc = feature_write(e.features_path, true);
	if (!rc && feature_read(&e) != 1)
		rc = -EIO;
	if (rc) {
		snprintf(err, errlen, "%s: cannot switch %s on: %s", e.features_path,
			 ENFORCE_FEATURE, rc == -EIO ? "the write was taken but the feature "
			 "stays off" : strerror(-rc));
		state_clear_feature(st);
		return rc;
	}
	held = true;
	pr_notice("%s switched on as the profile asks (enforcement: hrtick; it was off): "
		  "deadline budgets are enforced by an hrtimer, armed at each activation",
		  ENFORCE_FEATURE);
	return 0;
}

int enforce_apply(const struct enforce_plan *p, struct state *st, bool *switched, char *err,
		  size_t errlen)
{
	if (p->action != ENFORCE_SWITCH_ON)
		return 0;
	*switched = !st->feature_saved;
	return enforce_hrtick_on(st, err, errlen);
}

int enforce_restore(struct state *st)
{
	const struct state_feature *rec = &st->feature;
	struct enforce_env e = { 0 };
	int rc, now;

	if (!st->feature_saved)
		return 0;
	if (strcmp(rec->name, ENFORCE_FEATURE) != 0) {
		pr_err("state file: sched feature %s: not one irqres switches; record dropped",
		       rec->name);
		return state_clear_feature(st);
	}
	now = feature_read(&e);
	if (now < 0) {
		pr_err("cannot give %s back (was %s): %s", rec->name, feature_str(rec->was),
		       e.features_err);
		return now;
	}
	if (now == rec->set && rec->was != rec->set) {
		rc = feature_write(e.features_path, rec->was == 1);
		if (rc) {
			pr_err("%s: cannot put %s back %s: %s", e.features_path, rec->name,
			       feature_str(rec->was), strerror(-rc));
			return rc;
		}
		pr_info("%s back %s, as it was before irqres", rec->name, feature_str(rec->was));
	} else if (now != rec->set) {
		pr_notice("%s is %s: someone changed it since irqres set it %s; left as it is",
			  rec->name, feature_str(now), feature_str(rec->set));
	}
	held = false;
	return state_clear_feature(st);
}
