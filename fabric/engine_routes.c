// SPDX-License-Identifier: MIT
/*
 * Loads computed routes into the engine, as an SM would program them, and
 * only through the engine's public setters: the LID of every port, the LFT
 * of every switch, then every cabled port Active.
 */
#include <errno.h>

#include "engine.h"
#include "routes.h"

int ibemu_engine_apply_routes(struct ibemu_engine *e,
			      const struct ibemu_routes *r)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	struct ibemu_port_link link;
	uint32_t i, n = ibemu_engine_nports(e);
	unsigned p, lid;
	int ret;

	if (r->nnodes != t->nnodes)
		return -EINVAL;
	for (i = 0; i < r->nnodes; i++) {
		for (p = 0; p <= t->nodes[i].nports; p++) {
			ret = ibemu_engine_set_lid(e, i, p,
						   ibemu_routes_lid(r, i, p));
			if (ret)
				return ret;
		}
		if (t->nodes[i].type != IBEMU_NODE_SWITCH)
			continue;
		for (lid = 1; lid <= r->max_lid; lid++) {
			ret = ibemu_engine_set_lft(e, i, (uint16_t)lid,
						   r->lft[i][lid]);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < n; i++) {
		ibemu_engine_port_link(e, i, &link);
		if (link.peer != IBEMU_NONE)
			ibemu_engine_set_port_state(e, i, IBEMU_PORT_ACTIVE);
	}
	return 0;
}
