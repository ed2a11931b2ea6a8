/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json.h - a small JSON writer into a growable buffer.
 *
 * Commas and key/value separators are inserted automatically. The first allocation
 * failure or nesting error is sticky: every later call does nothing and json_error()
 * returns it, so callers check once at the end.
 *
 *	struct json j;
 *	json_init(&j);
 *	json_obj_begin(&j);
 *	json_kv_bool(&j, "ok", true);
 *	json_kv_str(&j, "comm", "irq/11-eth0");
 *	json_obj_end(&j);
 *	if (json_error(&j) == 0) write(fd, json_buf(&j), json_len(&j));
 *	json_fini(&j);
 */
#ifndef IRQRES_JSON_H
#define IRQRES_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_DEPTH_MAX 32

struct json {
	char *buf;		/* NUL-terminated while no error */
	size_t len, cap;
	int err;		/* 0 or -ENOMEM / -EINVAL (bad nesting), sticky */
	unsigned int depth;
	bool need_comma[JSON_DEPTH_MAX + 1];
	bool in_obj[JSON_DEPTH_MAX + 1];	/* container at each depth is an object */
	bool after_key;
};

void json_init(struct json *j);
void json_fini(struct json *j);
/* Empties the buffer (keeps the memory) and clears the error. */
void json_reset(struct json *j);
int json_error(const struct json *j);
const char *json_buf(const struct json *j);
size_t json_len(const struct json *j);
/* Appends raw bytes (e.g. a trailing "\n"); no separator is inserted. */
void json_raw(struct json *j, const char *s, size_t n);

void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
/* An object key; the next value call writes its value. */
void json_key(struct json *j, const char *key);

void json_str(struct json *j, const char *s);	/* NULL writes null; see json_strn */
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_double(struct json *j, double v);	/* NaN/Inf write null */
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* key + value shorthands */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_double(struct json *j, const char *key, double v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);

/*
 * A string of n bytes (may hold NULs, written as \u0000). Valid UTF-8 is copied; each
 * byte that is not part of valid UTF-8 is written as \ufffd, so the output is valid JSON
 * whatever the bytes (a thread's comm is any bytes its process chose).
 */
void json_strn(struct json *j, const char *s, size_t n);

#endif /* IRQRES_JSON_H */
