/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * statefields.c - the key=value fields of the state file's records; see statefields.h.
 */
#include "statefields.h"
#include "cpuset.h"
#include "dl.h"
#include "stateline.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int statefield_parse_ll(const char *s, long long min, long long max, long long *out)
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

static int parse_int(const struct statefield *f, const char *val, void *dst)
{
	long long v;
	int rc = statefield_parse_ll(val, f->min, f->max, &v);

	if (!rc)
		*(int *)dst = (int)v;
	return rc;
}

static void format_int(const struct statefield *f, const void *src, char *buf, size_t len)
{
	snprintf(buf, len, "%d", *(const int *)src);
}

static int parse_u64(const struct statefield *f, const char *val, void *dst)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*val))
		return -EINVAL;
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*(uint64_t *)dst = v;
	return 0;
}

static void format_u64(const struct statefield *f, const void *src, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, *(const uint64_t *)src);
}

static int parse_text(const struct statefield *f, const char *val, void *dst)
{
	return stateline_unescape(val, dst, (size_t)f->max);
}

static void format_text(const struct statefield *f, const void *src, char *buf, size_t len)
{
	stateline_escape(src, buf, len);
}

static int parse_policy(const struct statefield *f, const char *val, void *dst)
{
	int p = dl_policy_from_name(val);

	if (p < 0)
		return p;
	*(int *)dst = p;
	return 0;
}

static void format_policy(const struct statefield *f, const void *src, char *buf, size_t len)
{
	snprintf(buf, len, "%s", dl_policy_name(*(const int *)src));
}

static int parse_cpus(const struct statefield *f, const char *val, void *dst)
{
	return cpuset_list_parse(val, dst);
}

static void format_cpus(const struct statefield *f, const void *src, char *buf, size_t len)
{
	if (cpuset_list_format(src, buf, len))
		buf[0] = '\0';
}

const struct statefield_type statefield_int = { parse_int, format_int };
const struct statefield_type statefield_u64 = { parse_u64, format_u64 };
const struct statefield_type statefield_text = { parse_text, format_text };
const struct statefield_type statefield_policy = { parse_policy, format_policy };
const struct statefield_type statefield_cpus = { parse_cpus, format_cpus };

/* "<word> key=value ...\n": every field of the table, in its order. */
void statefields_format(const struct statefields *fs, const void *rec, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%s", fs->word);

	for (size_t i = 0; i < fs->n && o < len; i++) {
		const struct statefield *f = &fs->v[i];
		char val[CGROUP_PATH_MAX * 3 + 1];

		f->type->format(f, (const char *)rec + f->offset, val, sizeof(val));
		o += (size_t)snprintf(buf + o, len - o, " %s=%s", f->key, val);
	}
	if (o < len)
		snprintf(buf + o, len - o, "\n");
}

/* "pid=, start= and policy=": the fields a record must have. */
static const char *required_fields(const struct statefields *fs, char *buf, size_t len)
{
	size_t o = 0, n = 0, i, k = 0;

	for (i = 0; i < fs->n; i++)
		n += fs->v[i].required;
	buf[0] = '\0';
	for (i = 0; i < fs->n && o < len; i++)
		if (fs->v[i].required)
			o += (size_t)snprintf(buf + o, len - o, "%s%s=", !k++ ? "" :
					      k == n ? " and " : ", ", fs->v[i].key);
	return buf;
}

/* One "key=value" word of a record; *@seen gets the bit of its field. */
static int field_word(const struct statefields *fs, void *rec, char *word, unsigned int *seen,
		      char *why, size_t whylen)
{
	char *eq = strchr(word, '='), known[256], shown[64];
	size_t i, o = 0;

	if (!eq)
		return bad(why, whylen, "a word that is not key=value");
	*eq = '\0';
	for (i = 0; i < fs->n; i++) {
		const struct statefield *f = &fs->v[i];

		if (strcmp(word, f->key))
			continue;
		*seen |= 1U << i;
		if (f->type->parse(f, eq + 1, (char *)rec + f->offset))
			return f->why ? bad(why, whylen, "%s", f->why) : bad(why, whylen, "bad %s", f->key);
		return 0;
	}
	for (i = 0; i < fs->n && o < sizeof(known); i++)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "",
				      fs->v[i].key);
	stateline_escape(word, shown, sizeof(shown));
	return bad(why, whylen, "unknown key '%s' (known keys: %s)", shown, known);
}

/* The rest of a record's line into rec, every required field present. */
int statefields_read(const struct statefields *fs, void *rec, char **save, char *why,
		     size_t whylen)
{
	unsigned int seen = 0, need = 0;
	char *word, names[64];
	int rc;

	while ((word = strtok_r(NULL, " ", save)) != NULL) {
		rc = field_word(fs, rec, word, &seen, why, whylen);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < fs->n; i++)
		need |= (unsigned int)fs->v[i].required << i;
	if ((seen & need) != need)
		return bad(why, whylen, "%s needs %s", fs->word, required_fields(fs, names, sizeof(names)));
	return 0;
}
