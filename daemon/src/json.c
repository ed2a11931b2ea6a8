/* SPDX-License-Identifier: GPL-2.0-only */
/* json.c - a small JSON writer into a growable buffer. */
#include "json.h"
#include "array.h"

#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
}

void json_fini(struct json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

void json_reset(struct json *j)
{
	char *buf = j->buf;
	size_t cap = j->cap;

	memset(j, 0, sizeof(*j));
	j->buf = buf;
	j->cap = cap;
	if (buf)
		buf[0] = '\0';
}

int json_error(const struct json *j)
{
	if (j->err)
		return j->err;
	return j->depth ? -EINVAL : 0;
}

const char *json_buf(const struct json *j)
{
	return j->buf ? j->buf : "";
}

size_t json_len(const struct json *j)
{
	return j->len;
}

static bool reserve(struct json *j, size_t n)
{
	if (j->err)
		return false;
	if (n > SIZE_MAX / 2 - j->len) {
		j->err = -ENOMEM;
		return false;
	}
	if (ARRAY_RESERVE(j->buf, j->cap, j->len + n + 1)) {
		j->err = -ENOMEM;
		return false;
	}
	return true;
}

void json_raw(struct json *j, const char *s, size_t n)
{
	if (!reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void put(struct json *j, const char *s)
{
	json_raw(j, s, strlen(s));
}

/* Writes the separator a new value needs at the current position. */
static void begin_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->in_obj[j->depth]) {	/* a value in an object needs a key first */
		j->err = -EINVAL;
		return;
	}
	if (j->need_comma[j->depth])
		put(j, ",");
	j->need_comma[j->depth] = true;
}

static void push(struct json *j, const char *open, bool obj)
{
	begin_value(j);
	if (j->err)
		return;
	if (j->depth >= JSON_DEPTH_MAX) {
		j->err = -EINVAL;
		return;
	}
	put(j, open);
	j->depth++;
	j->need_comma[j->depth] = false;
	j->in_obj[j->depth] = obj;
}

static void pop(struct json *j, const char *close, bool obj)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->after_key || j->in_obj[j->depth] != obj) {
		j->err = -EINVAL;
		return;
	}
	j->depth--;
	put(j, close);
}

void json_obj_begin(struct json *j) { push(j, "{", true); }
void json_obj_end(struct json *j) { pop(j, "}", true); }
void json_arr_begin(struct json *j) { push(j, "[", false); }
void json_arr_end(struct json *j) { pop(j, "]", false); }

void json_strn(struct json *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	begin_value(j);
	put(j, "\"");
	for (i = 0; i < n && !j->err; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];
		size_t k;

		switch (c) {
		case '"': put(j, "\\\""); break;
		case '\\': put(j, "\\\\"); break;
		case '\b': put(j, "\\b"); break;
		case '\f': put(j, "\\f"); break;
		case '\n': put(j, "\\n"); break;
		case '\r': put(j, "\\r"); break;
		case '\t': put(j, "\\t"); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				esc[0] = '\\'; esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
				esc[4] = hex[c >> 4]; esc[5] = hex[c & 15]; esc[6] = '\0';
				put(j, esc);
			} else if (c < 0x80) {
				json_raw(j, (const char *)&s[i], 1);
			} else if ((k = utf8_seq_len(s + i, n - i)) > 0) {
				json_raw(j, (const char *)&s[i], k);
				i += k - 1;
			} else {
				/* not UTF-8 (a comm can hold any byte): U+FFFD keeps the reply JSON */
				put(j, "\\ufffd");
			}
		}
	}
	put(j, "\"");
}

void json_str(struct json *j, const char *s)
{
	if (!s)
		json_null(j);
	else
		json_strn(j, s, strlen(s));
}

void json_key(struct json *j, const char *key)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->after_key) {
		j->err = -EINVAL;
		return;
	}
	if (!j->in_obj[j->depth]) {
		j->err = -EINVAL;
		return;
	}
	if (j->need_comma[j->depth])
		put(j, ",");
	j->need_comma[j->depth] = true;
	j->after_key = true;	/* the key string itself needs no separator */
	json_str(j, key);
	put(j, ":");
	j->after_key = true;
}

void json_int(struct json *j, int64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, v);
	begin_value(j);
	put(j, b);
}

void json_uint(struct json *j, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	begin_value(j);
	put(j, b);
}

void json_double(struct json *j, double v)
{
	char b[40];

	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	/* the shortest of %.15g / %.17g that reads back exactly */
	snprintf(b, sizeof(b), "%.15g", v);
	if (strtod(b, NULL) != v)
		snprintf(b, sizeof(b), "%.17g", v);
	if (!strpbrk(b, ".eE"))
		strcat(b, ".0");
	begin_value(j);
	put(j, b);
}

void json_bool(struct json *j, bool v)
{
	begin_value(j);
	put(j, v ? "true" : "false");
}

void json_null(struct json *j)
{
	begin_value(j);
	put(j, "null");
}

void json_kv_str(struct json *j, const char *key, const char *s) { json_key(j, key); json_str(j, s); }
void json_kv_int(struct json *j, const char *key, int64_t v) { json_key(j, key); json_int(j, v); }
void json_kv_uint(struct json *j, const char *key, uint64_t v) { json_key(j, key); json_uint(j, v); }
void json_kv_double(struct json *j, const char *key, double v) { json_key(j, key); json_double(j, v); }
void json_kv_bool(struct json *j, const char *key, bool v) { json_key(j, key); json_bool(j, v); }
void json_kv_null(struct json *j, const char *key) { json_key(j, key); json_null(j); }
