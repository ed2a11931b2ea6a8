// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor for reading a trace: iterate over every record of a trace-cmd data file with
 * tracecmd_iterate_events and read one field (common_pid) of each. The irqres reader
 * does this plus decoding the events it keeps, so this is what it is measured against.
 *
 * Usage: bareloop TRACE.dat   (reads the top-level buffer, or the first instance with
 * records when the top level is empty, as irqres does)
 */
#include <stdio.h>
#include <stdlib.h>

#include <trace-cmd.h>

struct acc {
	struct tep_handle *tep;
	unsigned long long records;
	long long pid_sum;
};

static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	struct acc *a = data;

	a->records++;
	a->pid_sum += tep_data_pid(a->tep, rec);
	return 0;
}

static int has_data(struct tracecmd_input *h)
{
	int n = tep_get_cpus(tracecmd_get_tep(h));

	for (int cpu = 0; cpu < n; cpu++) {
		struct tep_record *r = tracecmd_read_cpu_first(h, cpu);

		if (r) {
			tracecmd_free_record(r);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tracecmd_input *top, *h;
	struct acc a = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s TRACE.dat\n", argv[0]);
		return 2;
	}
	top = tracecmd_open(argv[1], TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		fprintf(stderr, "%s: cannot open\n", argv[1]);
		return 1;
	}
	h = top;
	if (!has_data(top) && tracecmd_buffer_instances(top) > 0)
		h = tracecmd_buffer_instance_handle(top, 0);
	if (!h) {
		fprintf(stderr, "%s: cannot open its buffer instance\n", argv[1]);
		tracecmd_close(top);
		return 1;
	}
	a.tep = tracecmd_get_tep(h);
	if (tracecmd_iterate_events(h, NULL, 0, on_record, &a) < 0) {
		fprintf(stderr, "%s: reading failed\n", argv[1]);
		return 1;
	}
	printf("%llu records, pid sum %lld\n", a.records, a.pid_sum);
	if (h != top)
		tracecmd_close(h);
	tracecmd_close(top);
	return 0;
}
