// SPDX-License-Identifier: GPL-2.0-only
/* The trace file: its compression, and which of its buffers to read. See input.h. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int input_uncompressed(const char *path)
{
	static const char magic[10] = "\x17\x08\x44tracing";
	char buf[64];
	FILE *f = fopen(path, "rb");
	size_t n, vlen, off;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n <= sizeof(magic) || memcmp(buf, magic, sizeof(magic)))
		return 0;
	vlen = strnlen(buf + sizeof(magic), n - sizeof(magic));
	if (vlen == 0 || vlen == n - sizeof(magic))
		return 0;
	if (strtol(buf + sizeof(magic), NULL, 10) < 7)
		return 1;
	off = sizeof(magic) + vlen + 1 + 1 + 1 + 4; /* endianness, long size, page size */
	return off < n && strnlen(buf + off, n - off) < n - off && !strcmp(buf + off, "none");
}

/* Does the buffer hold a record? Peeks, so that the iteration still sees every one. */
static int handle_has_data(struct tracecmd_input *h)
{
	int ncpus = tep_get_cpus(tracecmd_get_tep(h));

	for (int cpu = 0; cpu < ncpus; cpu++)
		if (tracecmd_peek_data(h, cpu))
			return 1;
	return 0;
}

/*
 * libtracecmd 3.1 crashes (NULL dereference in its error path) when an instance's data
 * lies past the end of a truncated file. Open instance @i in a child process first: a
 * child that fails or dies means the instance cannot be opened here either. (The
 * reading of `irqres analyze` runs in a child process already, isolate.py; this keeps
 * the module's own callers alive too.)
 */
static int instance_opens(struct tracecmd_input *top, int i)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 1; /* cannot check: open it as before */
	if (pid == 0) {
		struct rlimit nocore = { 0, 0 };
		int null = open("/dev/null", O_WRONLY);

		setrlimit(RLIMIT_CORE, &nocore);
		/* die quietly: no fault handler of the interpreter's */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		if (null >= 0)
			dup2(null, STDERR_FILENO); /* its warnings are the parent's to give */
		_exit(tracecmd_buffer_instance_handle(top, i) ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * The instance of @top named @want, or with @want NULL the first holding records;
 * NULL with *@name set when libtracecmd cannot open the one it tries (with @probe, as
 * instance_opens finds).
 */
static struct tracecmd_input *pick_instance(struct tracecmd_input *top, const char *want,
					    const char **name, int probe)
{
	int n = tracecmd_buffer_instances(top);

	for (int i = 0; i < n; i++) {
		const char *bname = tracecmd_buffer_instance_name(top, i);
		struct tracecmd_input *h;

		if (want && (!bname || strcmp(bname, want)))
			continue;
		*name = bname ? bname : "";
		if (probe && !instance_opens(top, i))
			return NULL;
		h = tracecmd_buffer_instance_handle(top, i);
		if (!h || want || handle_has_data(h))
			return h;
		tracecmd_close(h);
	}
	*name = "";
	return NULL;
}

struct tracecmd_input *input_pick_buffer(struct tracecmd_input *top, const char *want,
					 const char **name, int probe)
{
	struct tracecmd_input *h;

	*name = "";
	if (want && !*want)
		return top;
	if (!want && (tracecmd_buffer_instances(top) == 0 || handle_has_data(top)))
		return top;
	h = pick_instance(top, want, name, probe);
	if (!h && !want && !**name)
		return top; /* no instance holds records either */
	return h;
}
