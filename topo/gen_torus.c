// SPDX-License-Identifier: MIT
/*
 * Two- and three-dimensional tori and meshes: one switch per grid point,
 * cabled to its neighbours along each dimension; a torus also closes every
 * row into a ring. Each dimension owns two fixed ports of every switch
 * ("minus" and "plus"), so the port of a direction is the same everywhere.
 */
#include "gen_kinds.h"

enum { TO_DIMS, TO_HOSTS, TO_RADIX };

static const struct ibemu__gen_param torus_params[] = {
	[TO_DIMS] = {.name = "dims",
		     .type = IBEMU__GEN_DIMS,
		     .flags = IBEMU__GEN_REQUIRED,
		     .min = 1,
		     .max = 256,
		     .help = "switches along each dimension: AxB or AxBxC"},
	[TO_HOSTS] =
		{.name = "hosts_per_switch",
		 .def = 1,
		 .min = 0,
		 .max = IBEMU_MAX_PORTS - 4,
		 .help = "hosts on each switch, on ports 1..hosts_per_switch"},
	[TO_RADIX] = {.name = "radix",
		      .def_text = "hosts_per_switch + 2 per dimension",
		      .min = 1,
		      .max = IBEMU_MAX_PORTS,
		      .help = "ports of each switch"},
};

static unsigned coord_width(unsigned size)
{
	unsigned w = 1;

	for (size--; size >= 10; size /= 10)
		w++;
	return w;
}

/*
 * Switch (x, y[, z]) is named sw-x-y[-z], coordinates from 0, and switches
 * are numbered with the last coordinate varying fastest, so names sort in
 * creation order and hosts are numbered along it. Dimension d uses port
 * p+2d+1 towards coordinate - 1 and port p+2d+2 towards coordinate + 1.
 */
static int grid_run(struct ibemu__gen_ctx *c, int wrap)
{
	unsigned nd = c->ndims, d, w[IBEMU__GEN_MAX_DIMS];
	long p = c->val[TO_HOSTS], need = p + 2 * (long)nd, radix;
	uint64_t stride[IBEMU__GEN_MAX_DIMS] = {0}, n = 1, i;
	uint32_t first;
	int ret;

	radix = c->given[TO_RADIX] ? c->val[TO_RADIX] : need;
	if (need > IBEMU_MAX_PORTS)
		return ibemu__gen_error(
			c, TO_HOSTS,
			"'hosts_per_switch' must be at most %ld"
			" in %u dimensions (a switch has at most"
			" %u ports and %u of them link the grid)",
			IBEMU_MAX_PORTS - 2 * (long)nd, nd, IBEMU_MAX_PORTS,
			2 * nd);
	if (radix < need)
		return ibemu__gen_error(c, TO_RADIX,
					"'radix' must be at least %ld for"
					" hosts_per_switch = %ld in %u"
					" dimensions (hosts_per_switch + 2 per"
					" dimension)",
					need, p, nd);
	for (d = nd; d-- > 0;) {
		stride[d] = n;
		n *= c->dims[d];
		w[d] = coord_width(c->dims[d]);
	}
	ret = ibemu__gen_plan(c, n * (uint64_t)p, n);
	if (ret)
		return ret;
	first = c->t->nnodes;
	for (i = 0; i < n; i++) {
		unsigned x = (unsigned)(i / stride[0] % c->dims[0]);
		unsigned y = (unsigned)(i / stride[1] % c->dims[1]);

		if (nd == 2)
			ret = ibemu__gen_switch(c, (unsigned)radix, NULL,
						"sw-%0*u-%0*u", (int)w[0], x,
						(int)w[1], y);
		else
			ret = ibemu__gen_switch(c, (unsigned)radix, NULL,
						"sw-%0*u-%0*u-%0*u", (int)w[0],
						x, (int)w[1], y, (int)w[2],
						(unsigned)(i % c->dims[2]));
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		ret = ibemu__gen_hosts(c, first + (uint32_t)i, (unsigned)p);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		for (d = 0; d < nd; d++) {
			uint64_t size = c->dims[d];
			uint64_t pos = i / stride[d] % size, next;

			/* A dimension of size 1 has no neighbour at all. */
			if (size < 2)
				continue;
			if (pos + 1 < size)
				next = i + stride[d];
			else if (wrap)
				next = i - pos * stride[d];
			else
				continue;
			ret = ibemu__gen_link(c, first + (uint32_t)i,
					      (unsigned)(p + 2 * d + 2),
					      first + (uint32_t)next,
					      (unsigned)(p + 2 * d + 1));
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int torus_run(struct ibemu__gen_ctx *c)
{
	return grid_run(c, 1);
}

static int mesh_run(struct ibemu__gen_ctx *c)
{
	return grid_run(c, 0);
}

const struct ibemu__gen_kind ibemu__gen_torus = {
	.name = "torus",
	.summary = "2D or 3D torus: a grid of switches whose rows close into "
		   "rings",
	.params = torus_params,
	.nparams = IBEMU_ARRAY_SIZE(torus_params),
	.run = torus_run,
};

const struct ibemu__gen_kind ibemu__gen_mesh = {
	.name = "mesh",
	.summary = "2D or 3D mesh: a grid of switches cabled to their "
		   "neighbours",
	.params = torus_params,
	.nparams = IBEMU_ARRAY_SIZE(torus_params),
	.run = mesh_run,
};
