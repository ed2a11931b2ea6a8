/* SPDX-License-Identifier: GPL-2.0-only */
/* stateline.c - checksums of the state file's records; see stateline.h. */
#include "stateline.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEAL_WORD " crc32="

uint32_t stateline_crc32(const char *s, size_t n)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		crc ^= (unsigned char)s[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

int stateline_seal(char *line, size_t size)
{
	size_t len = strlen(line);

	if (!len || line[len - 1] != '\n' || len + STATELINE_SEAL_LEN >= size)
		return -ENOSPC;
	len--;
	snprintf(line + len, size - len, SEAL_WORD "%08x\n", stateline_crc32(line, len));
	return 0;
}

int stateline_unseal(char *line, const char **why)
{
	size_t len = strlen(line), i;
	char *word;
	unsigned int want = 0;

	if (len < STATELINE_SEAL_LEN ||
	    memcmp(line + len - STATELINE_SEAL_LEN, SEAL_WORD, strlen(SEAL_WORD))) {
		*why = "no checksum (crc32=) at the end of the record: a torn or edited line";
		return -EINVAL;
	}
	word = line + len - STATELINE_SEAL_LEN;
	for (i = strlen(SEAL_WORD); i < STATELINE_SEAL_LEN; i++) {
		char c = word[i];
		unsigned int d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
				 c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;

		if (d == 16) {
			*why = "a checksum (crc32=) that is not 8 hex digits";
			return -EINVAL;
		}
		want = want << 4 | d;
	}
	if (stateline_crc32(line, (size_t)(word - line)) != want) {
		*why = "checksum mismatch: the record was damaged after it was written";
		return -EINVAL;
	}
	*word = '\0';
	return 0;
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

int stateline_tail_ok(int fd)
{
	struct stat sb;
	char c;
	ssize_t n;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if (sb.st_size == 0)
		return 0;
	n = pread(fd, &c, 1, sb.st_size - 1);
	if (n < 0)
		return -errno;
	return n == 1 && c == '\n';
}

int stateline_append(int fd, const char *line)
{
	int rc = stateline_tail_ok(fd);

	if (rc <= 0)
		return rc < 0 ? rc : 1;
	rc = write_all(fd, line, strlen(line));
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	return rc;
}

void stateline_escape(const char *s, char *out, size_t len)
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

int stateline_unescape(const char *s, char *out, size_t len)
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
