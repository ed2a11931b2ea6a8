/* SPDX-License-Identifier: GPL-2.0-only */
/* main.c - irqresd entry point (being built up; see daemon module list in README). */
#include "irqres.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	log_init("irqresd", false);
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("irqresd %s\n", IRQRES_VERSION);
		return 0;
	}
	pr_err("no profile given");
	return 2;
}
