/* SPDX-License-Identifier: GPL-2.0-only */
/* The trace file: its compression, and which of its buffers to read. */
#ifndef IRQRES_TRACE_INPUT_H
#define IRQRES_TRACE_INPUT_H

#include <trace-cmd.h>

/* Exported by libtracecmd 3.x but not declared in its public header: the next record of
 * @cpu without consuming it; the last record of @cpu; set @cpu's iterator to the page
 * holding @ts. */
struct tep_record *tracecmd_peek_data(struct tracecmd_input *handle, int cpu);
struct tep_record *tracecmd_read_cpu_last(struct tracecmd_input *handle, int cpu);
int tracecmd_set_cpu_to_timestamp(struct tracecmd_input *handle, int cpu,
				  unsigned long long ts);

/*
 * Does libtracecmd read @path without decompressing? File versions before 7 have no
 * compression; version 7 names its algorithm after the page size ("none" or e.g. "zstd").
 */
int input_uncompressed(const char *path);

/*
 * Pick the buffer to read: the one named @want ("" = top level), or, when @want is
 * NULL, the top-level buffer if it holds records, else the first instance that does.
 * NULL when there is none; *@name is then the instance that libtracecmd could not open,
 * or "" when @want names no instance. @probe: first try to open each instance in a child
 * process, as libtracecmd crashes on some damaged files (see input.c).
 */
struct tracecmd_input *input_pick_buffer(struct tracecmd_input *top, const char *want,
					 const char **name, int probe);

#endif
