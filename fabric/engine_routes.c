// SPDX-License-Identifier: MIT
/*
 * Loads computed routes into the engine, as an SM would program them: the
 * LID of every port, the LFT of every switch, then every cabled port
 * Active.
 */
#include <errno.h>

#include "engine_int.h"
#include "routes.h"

int ibemu_engine_apply_routes(struct ibemu_engine *e,
			      const struct ibemu_routes *r)
{
	uint32_t i;
	unsigned p, lid;

	if (r->nnodes != e->topo->nnodes)
		return -EINVAL;
	for (i = 0; i < r->nnodes; i++) {
		struct ibemu_enode *n = &e->nodes[i];

		for (p = 0; p <= n->nports; p++)
			ibemu_engine_set_lid(e, i, p,
					     ibemu_routes_lid(r, i, p));
		if (n->type != IBEMU_NODE_SWITCH)
			continue;
		for (lid = 1; lid <= r->max_lid; lid++)
			n->lft[lid] = r->lft[i][lid];
	}
	for (i = 0; i < e->nports; i++)
		if (e->ports[i].peer != IBEMU_NONE)
			ibemu_engine_set_port_state(e, i, IBEMU_PORT_ACTIVE);
	return 0;
}
