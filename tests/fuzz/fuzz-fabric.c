// SPDX-License-Identifier: MIT
/*
 * The fabric shared by the engine-level fuzz targets (fuzz-fabric.h):
 * sw1 (4 ports) and sw2 (20 ports) joined by port 4, h1 and h2 on sw1,
 * h3 on sw2 by both its ports (1 and 17).
 */
#include <stdlib.h>

#include "fuzz-fabric.h"
#include "yaml.h"

static const char fabric_yaml[] = "name: fuzz\n"
				  "switches:\n"
				  "  - {name: sw1, ports: 4}\n"
				  "  - {name: sw2, ports: 20}\n"
				  "hcas:\n"
				  "  - {name: h1}\n"
				  "  - {name: h2}\n"
				  "  - {name: h3, ports: 2}\n"
				  "links:\n"
				  "  - [sw1:1, h1:1]\n"
				  "  - [sw1:2, h2:1]\n"
				  "  - [sw2:1, h3:1]\n"
				  "  - [sw2:17, h3:2]\n"
				  "  - [sw1:4, sw2:4]\n";

struct ibemu_topo *ibemu_fuzz_topo(void)
{
	static struct ibemu_topo *t;
	struct ibemu_diag diag;

	if (!t && ibemu_yaml_load("fuzz.yaml", fabric_yaml,
				  sizeof(fabric_yaml) - 1, &t, &diag))
		abort();
	return t;
}

static void mad_recv_cb(void *ctx, uint32_t port, const struct ibemu_mad_msg *m)
{
	unsigned sum = port, i;

	(void)ctx;
	/* What an attached process would get: read it all (ASan checks). */
	for (i = 0; i < sizeof(m->mad); i++)
		sum += m->mad[i];
	sum += m->slid + m->dlid + m->sl;
	if (sum == 0xffffffffu)
		abort(); /* keeps the reads from being optimized away */
}

static const struct ibemu_port_ops fuzz_ops = {.mad_recv = mad_recv_cb};

void ibemu_fuzz_attach(struct ibemu_engine *e)
{
	static int owner; /* any non-NULL context names the owner */
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	uint32_t i;
	unsigned p;

	for (i = 0; i < t->nnodes; i++)
		if (t->nodes[i].type == IBEMU_NODE_HCA)
			for (p = 1; p <= t->nodes[i].nports; p++)
				if (ibemu_engine_port_attach(
					    e, ibemu_engine_port_index(e, i, p),
					    &fuzz_ops, &owner))
					abort();
}
