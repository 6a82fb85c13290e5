// SPDX-License-Identifier: MIT
/*
 * The registry of routing engines, and the one way to run one: assign the
 * LIDs (the same for every engine), then create, build, destroy. Adding an
 * engine is a file that defines its ops and a line in engines[].
 */
#include <string.h>

#include "routing_int.h"

/* The first engine is the default (ibemu-sm's and 'ibemu up's). */
static const struct ibemu_routing_engine_ops *const engines[] = {
	&ibemu__routing_minhop, &ibemu__routing_updown, &ibemu__routing_ftree,
	&ibemu__routing_dor,	&ibemu__routing_dfsssp,
};

const struct ibemu_routing_engine_ops *ibemu_routing_find(const char *name)
{
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(engines); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

const struct ibemu_routing_engine_ops *ibemu_routing_at(unsigned i)
{
	return i < IBEMU_ARRAY_SIZE(engines) ? engines[i] : NULL;
}

int ibemu_routing_run(const struct ibemu_routing_engine_ops *ops,
		      const struct ibemu_graph *g, struct ibemu_routes **out)
{
	return ibemu_routing_run_lids(ops, g, NULL, NULL, out);
}

int ibemu_routing_run_lids(const struct ibemu_routing_engine_ops *ops,
			   const struct ibemu_graph *g, ibemu_lid_want_fn want,
			   void *want_ctx, struct ibemu_routes **out)
{
	struct ibemu_routes *r;
	void *ctx;
	int ret;

	ret = ibemu_routes_create_lids(g, want, want_ctx, &r);
	if (ret)
		return ret;
	ret = ops->create(g, &ctx);
	if (ret)
		goto err_routes;
	ret = ops->build(ctx, r);
	ops->destroy(ctx);
	if (ret)
		goto err_routes;
	*out = r;
	return 0;

err_routes:
	ibemu_routes_destroy(r);
	return ret;
}
