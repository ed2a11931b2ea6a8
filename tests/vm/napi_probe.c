// SPDX-License-Identifier: GPL-2.0-only
/*
 * napi_probe IFNAME - what irqresd's NAPI discovery (daemon/src/napi.c) finds for an
 * interface, for the VM suite: the source ("netlink" or "threads"), then one line per
 * NAPI instance "id=N irq=N pid=N ifindex=N".  Built on the host by the test that copies
 * it into the guest (the daemon has no command that prints it).
 */
#include <stdio.h>
#include <string.h>

#include "irqres.h"
#include "napi.h"

int main(int argc, char **argv)
{
	struct napi_list l = { 0 };
	enum napi_source src = NAPI_FROM_THREADS;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: napi_probe IFNAME\n");
		return 2;
	}
	irqres_paths_default();
	rc = napi_find(argv[1], &l, &src);
	if (rc) {
		fprintf(stderr, "napi_probe: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	printf("source=%s threaded=%d\n", src == NAPI_FROM_NETLINK ? "netlink" : "threads",
	       napi_threaded(argv[1]));
	for (size_t i = 0; i < l.n; i++)
		printf("id=%u irq=%d pid=%d ifindex=%d\n", l.v[i].id, l.v[i].irq, (int)l.v[i].pid,
		       l.v[i].ifindex);
	napi_list_free(&l);
	return 0;
}
