// SPDX-License-Identifier: MIT
/*
 * The SL of each path, for routes on virtual layers (dfsssp, dor on a
 * torus): a packet keeps its layer's VL only if its source sends it with
 * that SL. Until the SA hands it out in PathRecords, ibemu-sm writes the
 * SLs to a file that traffic studies read ('ibemu traffic --sl-map').
 */
#include <errno.h>
#include <stdio.h>

#include "sm.h"
#include "util.h"

int sm_sl_dump(const struct sm *sm)
{
	const struct ibemu_routes *r = sm->routes;
	unsigned slid, dlid;
	uint32_t node;
	uint8_t sl;
	FILE *f;
	int ret = 0;

	if (!r)
		return -ENOENT;
	f = fopen(sm->sl_dump_path, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"# ibemu-sm: the SL of each path (routing %s, %u layers):\n"
		"# SLID DLID SL; a path not listed takes SL 0\n",
		sm->routing, r->nlayers);
	for (slid = 1; slid <= r->max_lid && r->sl; slid++) {
		node = r->lid_node[slid];
		if (node == IBEMU_NONE ||
		    sm->graph->nodes[node].type != IBEMU_GRAPH_HCA)
			continue;
		for (dlid = 1; dlid <= r->max_lid; dlid++) {
			sl = sm_path_sl(sm, (uint16_t)slid, (uint16_t)dlid);
			if (sl)
				fprintf(f, "0x%04x 0x%04x %u\n", slid, dlid,
					sl);
		}
	}
	ret = sm_file_close(f);
	return ret;
}
