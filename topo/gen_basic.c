// SPDX-License-Identifier: MIT
/*
 * The smallest fabrics: one switch with its hosts, and a ring of switches
 * (a one-dimensional torus). They are what a first test or a demo needs,
 * and they make port numbering easy to follow: hosts on the low ports, the
 * ring's two ports right after them.
 */
#include <stdlib.h>

#include "gen_kinds.h"

enum { SS_RADIX, SS_HOSTS };

static const struct ibemu__gen_param single_switch_params[] = {
	[SS_RADIX] = {.name = "radix",
		      .def = 36,
		      .min = 1,
		      .max = IBEMU_MAX_PORTS,
		      .help = "ports of the switch"},
	[SS_HOSTS] = {.name = "hosts",
		      .flags = IBEMU__GEN_REQUIRED,
		      .min = 1,
		      .max = IBEMU_MAX_PORTS,
		      .help = "hosts, on switch ports 1..hosts"},
};

static int single_switch_run(struct ibemu__gen_ctx *c)
{
	long radix = c->val[SS_RADIX], hosts = c->val[SS_HOSTS];
	uint32_t sw;
	int ret;

	if (hosts > radix)
		return ibemu__gen_error(c, SS_HOSTS,
					"'hosts' must be between 1 and %ld for"
					" radix %ld (one switch port per host)",
					radix, radix);
	ret = ibemu__gen_plan(c, (uint64_t)hosts, 1);
	if (ret)
		return ret;
	ret = ibemu__gen_switch(c, (unsigned)radix, &sw, "sw");
	if (ret)
		return ret;
	return ibemu__gen_hosts(c, sw, (unsigned)hosts);
}

const struct ibemu__gen_kind ibemu__gen_single_switch = {
	.name = "single-switch",
	.summary = "one switch, hosts on its ports 1..hosts",
	.params = single_switch_params,
	.nparams = IBEMU_ARRAY_SIZE(single_switch_params),
	.run = single_switch_run,
};

enum { RING_SWITCHES, RING_HOSTS, RING_RADIX };

static const struct ibemu__gen_param ring_params[] = {
	[RING_SWITCHES] = {.name = "switches",
			   .flags = IBEMU__GEN_REQUIRED,
			   .min = 1,
			   .max = IBEMU__GEN_MAX_LIDS,
			   .help = "switches in the ring"},
	[RING_HOSTS] =
		{.name = "hosts_per_switch",
		 .def = 1,
		 .min = 0,
		 .max = IBEMU_MAX_PORTS - 2,
		 .help = "hosts on each switch, on ports 1..hosts_per_switch"},
	[RING_RADIX] = {.name = "radix",
			.def_text = "2 + hosts_per_switch",
			.min = 1,
			.max = IBEMU_MAX_PORTS,
			.help = "ports of each switch"},
};

/*
 * Switch i cables its port p+2 ("next") to port p+1 ("previous") of switch
 * i+1, the last one closing the ring on the first. Two switches so get two
 * parallel links, as a torus dimension of size 2 does.
 */
static int ring_run(struct ibemu__gen_ctx *c)
{
	long n = c->val[RING_SWITCHES], p = c->val[RING_HOSTS];
	long ring_ports = n >= 2 ? 2 : 0, radix, i;
	uint32_t first;
	int ret;

	radix = c->given[RING_RADIX] ? c->val[RING_RADIX] : 2 + p;
	if (radix < p + ring_ports)
		return ibemu__gen_error(c, RING_RADIX,
					"'radix' must be at least %ld for"
					" hosts_per_switch = %ld and %ld ring"
					" ports",
					p + ring_ports, p, ring_ports);
	ret = ibemu__gen_plan(c, (uint64_t)(n * p), (uint64_t)n);
	if (!ret)
		ret = ibemu__gen_switches(c, (unsigned)radix, (uint32_t)n, "sw",
					  &first);
	for (i = 0; !ret && i < n; i++)
		ret = ibemu__gen_hosts(c, first + (uint32_t)i, (unsigned)p);
	if (ret)
		return ret;
	for (i = 0; n >= 2 && i < n; i++) {
		ret = ibemu__gen_link(c, first + (uint32_t)i, (unsigned)p + 2,
				      first + (uint32_t)((i + 1) % n),
				      (unsigned)p + 1);
		if (ret)
			return ret;
	}
	return 0;
}

const struct ibemu__gen_kind ibemu__gen_ring = {
	.name = "ring",
	.summary = "switches in a ring, each with its own hosts",
	.params = ring_params,
	.nparams = IBEMU_ARRAY_SIZE(ring_params),
	.run = ring_run,
};
