// SPDX-License-Identifier: MIT
/*
 * Folded Clos networks ("fat trees") of two and three levels, built from
 * switches of one radix R. Every switch below the top gives half its ports
 * to the level below and half to the level above, so the bisection stays
 * full; a top switch takes the same number of parallel links from each
 * switch below it, so the load spreads evenly.
 */
#include "gen_kinds.h"

/*
 * The fewest top switches for 'below' switches of 'half' uplinks each: the
 * smallest divisor s of 'half' such that every top switch, taking half/s
 * parallel links from each switch below, needs at most 'radix' ports.
 * s = half always fits while below <= radix.
 */
static long fewest_tops(long half, long below, long radix)
{
	long s;

	for (s = 1; s < half; s++)
		if (half % s == 0 && below * (half / s) <= radix)
			return s;
	return half;
}

enum { FT2_RADIX, FT2_HOSTS, FT2_SPINES };

static const struct ibemu__gen_param ft2_params[] = {
	[FT2_RADIX] = {.name = "radix",
		       .flags = IBEMU__GEN_EVEN,
		       .def = 36,
		       .min = 2,
		       .max = IBEMU_MAX_PORTS,
		       .help = "ports of every switch"},
	[FT2_HOSTS] = {.name = "hosts",
		       .flags = IBEMU__GEN_REQUIRED,
		       .min = 1,
		       .max = IBEMU__GEN_MAX_LIDS,
		       .help = "hosts, at most radix*radix/2"},
	[FT2_SPINES] = {.name = "spines",
			.def_text = "the fewest that fit",
			.min = 1,
			.max = IBEMU_MAX_PORTS / 2,
			.help = "spine switches, a divisor of radix/2"},
};

/*
 * Leaf l has hosts on ports 1..R/2 and uplinks on R/2+1..R: m = R/2/S
 * links to spine01, then m to spine02, and so on. Spine s has leaf01's m
 * links on its ports 1..m, leaf02's on m+1..2m, and so on.
 */
static int ft2_run(struct ibemu__gen_ctx *c)
{
	long radix = c->val[FT2_RADIX], hosts = c->val[FT2_HOSTS];
	long half = radix / 2, leaves, spines, m, l, s, r;
	uint32_t leaf0, spine0;
	int ret;

	if (hosts > radix * half)
		return ibemu__gen_error(
			c, FT2_HOSTS,
			"'hosts' must be between 1 and %ld for"
			" radix %ld (at most radix*radix/2 hosts"
			" in two levels)",
			radix * half, radix);
	leaves = (hosts + half - 1) / half;
	spines = fewest_tops(half, leaves, radix);
	if (c->given[FT2_SPINES]) {
		long want = c->val[FT2_SPINES];

		if (half % want || want < spines)
			return ibemu__gen_error(
				c, FT2_SPINES,
				"'spines' must be a divisor of"
				" radix/2 = %ld and at least %ld"
				" for %ld leaves of radix %ld"
				" (every leaf has radix/2/spines"
				" links to each spine), not %ld",
				half, spines, leaves, radix, want);
		spines = want;
	}
	m = half / spines;
	ret = ibemu__gen_plan(c, (uint64_t)hosts, (uint64_t)(leaves + spines));
	if (!ret)
		ret = ibemu__gen_switches(c, (unsigned)radix, (uint32_t)leaves,
					  "leaf", &leaf0);
	if (!ret)
		ret = ibemu__gen_switches(c, (unsigned)radix, (uint32_t)spines,
					  "spine", &spine0);
	for (l = 0; !ret && l < leaves; l++) {
		long n = hosts - l * half < half ? hosts - l * half : half;

		ret = ibemu__gen_hosts(c, leaf0 + (uint32_t)l, (unsigned)n);
	}
	for (l = 0; !ret && l < leaves; l++)
		for (s = 0; !ret && s < spines; s++)
			for (r = 0; !ret && r < m; r++)
				ret = ibemu__gen_link(
					c, leaf0 + (uint32_t)l,
					(unsigned)(half + 1 + s * m + r),
					spine0 + (uint32_t)s,
					(unsigned)(l * m + r + 1));
	return ret;
}

const struct ibemu__gen_kind ibemu__gen_fat_tree_2l = {
	.name = "fat-tree-2l",
	.summary = "two-level folded Clos: leaves with hosts, spines above",
	.params = ft2_params,
	.nparams = IBEMU_ARRAY_SIZE(ft2_params),
	.run = ft2_run,
};

enum { FT3_RADIX, FT3_HOSTS };

static const struct ibemu__gen_param ft3_params[] = {
	[FT3_RADIX] = {.name = "radix",
		       .flags = IBEMU__GEN_EVEN,
		       .def = 36,
		       .min = 2,
		       .max = IBEMU_MAX_PORTS,
		       .help = "ports of every switch"},
	[FT3_HOSTS] = {.name = "hosts",
		       .flags = IBEMU__GEN_REQUIRED,
		       .min = 1,
		       .max = IBEMU__GEN_MAX_LIDS,
		       .help = "hosts, at most radix^3/4"},
};

/*
 * A pod is R/2 edge switches and R/2 aggregation switches, each edge
 * switch cabled once to each aggregation switch of its pod: edge i's port
 * R/2+1+j to agg j's port i+1. Agg j of every pod goes to core group j, C
 * core switches that each take m = R/2/C parallel links from it: agg port
 * R/2+1+c*m+r to port pod*m+r+1 of core c of the group.
 */
static int ft3_run(struct ibemu__gen_ctx *c)
{
	long radix = c->val[FT3_RADIX], hosts = c->val[FT3_HOSTS];
	long half = radix / 2, edges, pods, per_group, m, e, a, k, r;
	uint32_t edge0, agg0, core0;
	int ret;

	if (hosts > 2 * half * half * half)
		return ibemu__gen_error(c, FT3_HOSTS,
					"'hosts' must be between 1 and %ld for"
					" radix %ld (at most radix^3/4 hosts in"
					" three levels)",
					2 * half * half * half, radix);
	edges = (hosts + half - 1) / half;
	pods = (edges + half - 1) / half;
	per_group = fewest_tops(half, pods, radix);
	m = half / per_group;
	ret = ibemu__gen_plan(
		c, (uint64_t)hosts,
		(uint64_t)(edges + pods * half + half * per_group));
	if (!ret)
		ret = ibemu__gen_switches(c, (unsigned)radix, (uint32_t)edges,
					  "edge", &edge0);
	if (!ret)
		ret = ibemu__gen_switches(c, (unsigned)radix,
					  (uint32_t)(pods * half), "agg",
					  &agg0);
	if (!ret)
		ret = ibemu__gen_switches(c, (unsigned)radix,
					  (uint32_t)(half * per_group), "core",
					  &core0);
	for (e = 0; !ret && e < edges; e++) {
		long n = hosts - e * half < half ? hosts - e * half : half;

		ret = ibemu__gen_hosts(c, edge0 + (uint32_t)e, (unsigned)n);
	}
	/* Edge e sits in pod e / half at position e % half. */
	for (e = 0; !ret && e < edges; e++)
		for (a = 0; !ret && a < half; a++)
			ret = ibemu__gen_link(
				c, edge0 + (uint32_t)e,
				(unsigned)(half + 1 + a),
				agg0 + (uint32_t)(e - e % half + a),
				(unsigned)(e % half + 1));
	/* Agg a sits in pod a / half and serves core group a % half. */
	for (a = 0; !ret && a < pods * half; a++)
		for (k = 0; !ret && k < per_group; k++)
			for (r = 0; !ret && r < m; r++)
				ret = ibemu__gen_link(
					c, agg0 + (uint32_t)a,
					(unsigned)(half + 1 + k * m + r),
					core0 + (uint32_t)(a % half *
								   per_group +
							   k),
					(unsigned)(a / half * m + r + 1));
	return ret;
}

const struct ibemu__gen_kind ibemu__gen_fat_tree_3l = {
	.name = "fat-tree-3l",
	.summary = "three-level folded Clos: pods of edge and aggregation "
		   "switches, core groups above",
	.params = ft3_params,
	.nparams = IBEMU_ARRAY_SIZE(ft3_params),
	.run = ft3_run,
};
