// SPDX-License-Identifier: MIT
/*
 * Dragonflies (Kim, Dally, Scott and Abts, 2008): groups of a routers, each
 * router with p hosts, a link to every other router of its group and h
 * global links to other groups. With the largest number of groups, a*h+1,
 * every pair of groups is joined by exactly one global link.
 */
#include "gen_kinds.h"

enum { DF_P, DF_A, DF_H, DF_G };

static const struct ibemu__gen_param df_params[] = {
	[DF_P] = {.name = "p",
		  .flags = IBEMU__GEN_REQUIRED,
		  .min = 1,
		  .max = IBEMU_MAX_PORTS,
		  .help = "hosts per router"},
	[DF_A] = {.name = "a",
		  .flags = IBEMU__GEN_REQUIRED,
		  .min = 1,
		  .max = IBEMU_MAX_PORTS,
		  .help = "routers per group"},
	[DF_H] = {.name = "h",
		  .flags = IBEMU__GEN_REQUIRED,
		  .min = 0,
		  .max = IBEMU_MAX_PORTS - 1,
		  .help = "global links per router"},
	[DF_G] = {.name = "g",
		  .def_text = "a*h + 1",
		  .min = 1,
		  .max = IBEMU__GEN_MAX_LIDS,
		  .help = "groups, at most a*h + 1"},
};

/*
 * Router r of group G is g<G>-r<r> (both from 1). Its ports: hosts on
 * 1..p; router r2 of its group on p+1+r2 (r2 < r) or p+r2 (r2 > r), counting
 * routers from 0; global links on p+a..p+a-1+h.
 *
 * The a*h global ports of a group are numbered k = r*h + i. Port k goes to
 * group G + (k mod (g-1)) + 1 (mod g), so consecutive ports reach
 * consecutive groups and every group is reached once per round of g-1
 * ports. The far end is the port of the same round pointing back; in a
 * last, partial round a port whose far end does not exist stays unused.
 */
static int df_run(struct ibemu__gen_ctx *c)
{
	long p = c->val[DF_P], a = c->val[DF_A], h = c->val[DF_H];
	long radix = p + a - 1 + h, g, grp, r, r2, k;
	unsigned gw, rw;
	uint32_t first;
	int ret;

	if (radix > IBEMU_MAX_PORTS)
		return ibemu__gen_error(
			c, -1,
			"routers need p + a - 1 + h = %ld ports,"
			" more than the %u a switch can have",
			radix, IBEMU_MAX_PORTS);
	g = c->given[DF_G] ? c->val[DF_G] : a * h + 1;
	if (g > a * h + 1)
		return ibemu__gen_error(
			c, DF_G,
			"'g' must be between 1 and %ld for a = %ld"
			" and h = %ld (a group has a*h global"
			" links, one for each other group)",
			a * h + 1, a, h);
	ret = ibemu__gen_plan(c, (uint64_t)(g * a * p), (uint64_t)(g * a));
	if (ret)
		return ret;
	first = c->t->nnodes;
	gw = ibemu__gen_width((uint64_t)g);
	rw = ibemu__gen_width((uint64_t)a);
	for (grp = 0; grp < g; grp++)
		for (r = 0; r < a; r++) {
			ret = ibemu__gen_switch(c, (unsigned)radix, NULL,
						"g%0*ld-r%0*ld", (int)gw,
						grp + 1, (int)rw, r + 1);
			if (ret)
				return ret;
		}
	for (r = 0; r < g * a; r++) {
		ret = ibemu__gen_hosts(c, first + (uint32_t)r, (unsigned)p);
		if (ret)
			return ret;
	}
	for (grp = 0; grp < g; grp++) {
		uint32_t base = first + (uint32_t)(grp * a);

		for (r = 0; r < a; r++)
			for (r2 = r + 1; r2 < a; r2++) {
				ret = ibemu__gen_link(c, base + (uint32_t)r,
						      (unsigned)(p + r2),
						      base + (uint32_t)r2,
						      (unsigned)(p + 1 + r));
				if (ret)
					return ret;
			}
	}
	for (grp = 0; g > 1 && grp < g; grp++) {
		for (k = 0; k < a * h; k++) {
			long off = k % (g - 1) + 1, round = k / (g - 1);
			long grp2 = (grp + off) % g;
			long k2 = round * (g - 1) + (g - off - 1);

			/* Each cable once, from its lower-numbered group. */
			if (k2 >= a * h || grp2 < grp)
				continue;
			ret = ibemu__gen_link(
				c, first + (uint32_t)(grp * a + k / h),
				(unsigned)(p + a + k % h),
				first + (uint32_t)(grp2 * a + k2 / h),
				(unsigned)(p + a + k2 % h));
			if (ret)
				return ret;
		}
	}
	return 0;
}

const struct ibemu__gen_kind ibemu__gen_dragonfly = {
	.name = "dragonfly",
	.summary = "groups of all-to-all routers joined by global links",
	.params = df_params,
	.nparams = IBEMU_ARRAY_SIZE(df_params),
	.run = df_run,
};
