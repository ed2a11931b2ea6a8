/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stateline.h - the integrity of the state file's lines: a checksum per record, and a
 * look at the file's last byte before anything is appended to it.
 *
 * A record line of a version 2 state file ends with " crc32=<8 hex digits>", the CRC-32
 * (IEEE 802.3, as zlib's crc32()) of the bytes before that word: a torn write, a line
 * glued to a broken one, or any byte changed makes the line fail its check, so the
 * reader reports it instead of taking it, or half of it, for a record.
 */
#ifndef IRQRES_STATELINE_H
#define IRQRES_STATELINE_H

#include <stddef.h>
#include <stdint.h>

#define STATELINE_SEAL_LEN 15		/* " crc32=" + 8 hex digits */

uint32_t stateline_crc32(const char *s, size_t n);
/*
 * Seals the record in @line (one line, ending in '\n', in a buffer of @size bytes): its
 * checksum goes before the '\n'. -ENOSPC when the buffer has no room for it.
 */
int stateline_seal(char *line, size_t size);
/*
 * Checks and strips the checksum of @line (a record without its '\n'). 0, or -EINVAL
 * with the cause in *@why.
 */
int stateline_unseal(char *line, const char **why);
/*
 * Whether the file open at @fd may be appended to: 1 when it ends with '\n', 0 when it
 * is empty or its last line is unfinished (append nothing: rewrite it), -errno.
 */
int stateline_tail_ok(int fd);
/* Appends @line to the file open at @fd (O_APPEND) and fsyncs it when the file ends with
 * '\n': 0; 1 when it does not (nothing written); -errno. */
int stateline_append(int fd, const char *line);

/* A record's value as a word of the line: blanks, controls, non-ASCII, '%' and '=' as
 * %XX (cut at @len - 1 bytes, never inside an escape). */
void stateline_escape(const char *s, char *out, size_t len);
/* The value of a stateline_escape()d word: 0, -EINVAL for a bad escape, -ENAMETOOLONG
 * when it does not fit in @len bytes. */
int stateline_unescape(const char *s, char *out, size_t len);

#endif /* IRQRES_STATELINE_H */
