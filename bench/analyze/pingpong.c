// SPDX-License-Identifier: GPL-2.0-only
/*
 * A wake-up-heavy workload for recording large benchmark traces: two processes pass a
 * byte back and forth through two pipes N times, so every round trip wakes each of them
 * once (sched_waking, sched_wakeup and sched_switch events on every hop).
 *
 * Usage: pingpong ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int ab[2], ba[2];
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	char c = 'x';
	pid_t pid;

	if (rounds <= 0 || pipe(ab) || pipe(ba)) {
		fprintf(stderr, "usage: %s ROUNDS\n", argv[0]);
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		for (long i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	return waitpid(pid, NULL, 0) == pid ? 0 : 1;
}
