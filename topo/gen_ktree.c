// SPDX-License-Identifier: MIT
/*
 * k-ary n-trees (Petrini and Vanneschi, 1997): k^n hosts under n levels of
 * k^(n-1) switches of 2k ports. A switch is named by its level and by a
 * word of n-1 base-k digits; two switches of adjacent levels are cabled
 * when their words differ at most in the one digit that belongs to the
 * upper level. Every host has k^(n-1) shortest paths up to the top.
 */
#include "gen_kinds.h"

enum { KT_K, KT_N };

static const struct ibemu__gen_param kt_params[] = {
	[KT_K] = {.name = "k",
		  .flags = IBEMU__GEN_REQUIRED,
		  .min = 2,
		  .max = IBEMU_MAX_PORTS / 2,
		  .help = "arity: hosts per bottom switch; switches have 2k "
			  "ports"},
	[KT_N] = {.name = "n",
		  .flags = IBEMU__GEN_REQUIRED,
		  .min = 1,
		  .max = 16,
		  .help = "levels of switches; k^n hosts"},
};

/* k^e, or IBEMU__GEN_MAX_LIDS + 1 once it passes the LID space. */
static uint64_t capped_pow(uint64_t k, long e)
{
	uint64_t v = 1;

	while (e-- > 0) {
		v *= k;
		if (v > IBEMU__GEN_MAX_LIDS)
			return IBEMU__GEN_MAX_LIDS + 1;
	}
	return v;
}

/*
 * Levels are numbered from the hosts up: sw1-* hold the hosts, sw<n>-* are
 * the top (Petrini's level 0). Between level L and L-1 the digit of weight
 * k^(L-2) varies: down port c+1 of sw<L>-w goes to the switch of level L-1
 * whose word has c in that digit, on its up port k+1+d, d being the digit
 * of w there. Hosts w*k+1..w*k+k sit on ports 1..k of sw1-w.
 */
static int kt_run(struct ibemu__gen_ctx *c)
{
	long k = c->val[KT_K], n = c->val[KT_N], lvl, d, fits;
	uint64_t hosts = capped_pow((uint64_t)k, n);
	uint64_t per_level = capped_pow((uint64_t)k, n - 1), w, weight, i;
	unsigned width;
	uint32_t first;
	int ret;

	if (hosts + (uint64_t)n * per_level > IBEMU__GEN_MAX_LIDS) {
		for (fits = 1; fits < n; fits++)
			if (capped_pow((uint64_t)k, fits + 1) +
				    (uint64_t)(fits + 1) *
					    capped_pow((uint64_t)k, fits) >
			    IBEMU__GEN_MAX_LIDS)
				break;
		return ibemu__gen_error(c, KT_N,
					"'n' must be at most %ld for k = %ld"
					" (k^n hosts and n*k^(n-1) switches"
					" must fit in the %u unicast LIDs of a"
					" subnet), not %ld",
					fits, k, IBEMU__GEN_MAX_LIDS, n);
	}
	ret = ibemu__gen_plan(c, hosts, (uint64_t)n * per_level);
	if (ret)
		return ret;
	first = c->t->nnodes;
	width = ibemu__gen_width(per_level);
	for (lvl = 1; lvl <= n; lvl++)
		for (i = 0; i < per_level; i++) {
			ret = ibemu__gen_switch(c, (unsigned)(2 * k), NULL,
						"sw%ld-%0*u", lvl, (int)width,
						(unsigned)i + 1);
			if (ret)
				return ret;
		}
	for (i = 0; i < per_level; i++) {
		ret = ibemu__gen_hosts(c, first + (uint32_t)i, (unsigned)k);
		if (ret)
			return ret;
	}
	weight = 1;
	for (lvl = 2; lvl <= n; lvl++, weight *= (uint64_t)k) {
		uint32_t upper =
			first + (uint32_t)((uint64_t)(lvl - 1) * per_level);
		uint32_t lower = upper - (uint32_t)per_level;

		for (w = 0; w < per_level; w++) {
			d = (long)(w / weight % (uint64_t)k);
			for (i = 0; i < (uint64_t)k; i++) {
				uint64_t down =
					w - (uint64_t)d * weight + i * weight;

				ret = ibemu__gen_link(c, upper + (uint32_t)w,
						      (unsigned)i + 1,
						      lower + (uint32_t)down,
						      (unsigned)(k + 1 + d));
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

const struct ibemu__gen_kind ibemu__gen_kary_ntree = {
	.name = "kary-ntree",
	.summary = "k-ary n-tree: k^n hosts, n levels of k^(n-1) switches of "
		   "2k ports",
	.params = kt_params,
	.nparams = IBEMU_ARRAY_SIZE(kt_params),
	.run = kt_run,
};
