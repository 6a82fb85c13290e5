// SPDX-License-Identifier: MIT
/*
 * The guid2lid file: the LID of every port GUID, kept across SM runs so
 * that LIDs stay where they were (IBA 14.4.2 asks an SM for stable LIDs).
 * OpenSM's format, so the two SMs can share or compare it: a line
 * "0x<port GUID> 0x<first LID> 0x<last LID>" (LMC 0: both the same) for
 * each port, blank lines between them. Lines that are not of that form
 * are skipped, as OpenSM skips them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm.h"

int sm_guid2lid_load(struct sm *sm)
{
	FILE *f = fopen(sm->guid2lid_path, "re");
	struct sm_guid_lid *grown;
	unsigned long long guid;
	unsigned lo, hi;
	char line[256];
	uint32_t cap = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %x %x", &guid, &lo, &hi) != 3 || !lo ||
		    lo > IBEMU_LID_UNICAST_MAX)
			continue;
		if (sm->nguid2lid == cap) {
			cap = cap * 2 + 64;
			grown = realloc(sm->guid2lid, cap * sizeof(*grown));
			if (!grown) {
				fclose(f);
				return -ENOMEM;
			}
			sm->guid2lid = grown;
		}
		sm->guid2lid[sm->nguid2lid++] =
			(struct sm_guid_lid){(uint64_t)guid, (uint16_t)lo};
	}
	fclose(f);
	return 0;
}

uint16_t sm_guid2lid_find(const struct sm *sm, uint64_t guid)
{
	uint32_t i;

	for (i = 0; i < sm->nguid2lid; i++)
		if (sm->guid2lid[i].guid == guid)
			return sm->guid2lid[i].lid;
	return 0;
}

/* OpenSM's line: the port GUID, its first and last LID. */
static void put(FILE *f, uint64_t guid, uint16_t lid, unsigned lmc)
{
	fprintf(f, "0x%016" PRIx64 " 0x%04x 0x%04x\n\n", guid, lid,
		lid + (1u << lmc) - 1);
}

int sm_guid2lid_save(const struct sm *sm, const char *path)
{
	char tmp[4096];
	uint32_t n;
	unsigned p;
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		if (node->ni.node_type == 2) {
			put(f, node->ni.port_guid,
			    ibemu_routes_lid(sm->routes, node->graph, 0), 0);
			continue;
		}
		for (p = 1; p <= node->ni.num_ports; p++)
			if (node->ports[p].guid)
				put(f, node->ports[p].guid,
				    ibemu_routes_lid(sm->routes, node->graph,
						     p),
				    sm->lmc);
	}
	/* Whole or not at all: the old file stays until the new is out. */
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}
