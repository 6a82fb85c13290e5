// SPDX-License-Identifier: MIT
/*
 * A port's configuration as the engine keeps it and an SM programs it
 * through the SMA: the SL to VL table (IBA 7.6.6) and the VL arbitration
 * tables (IBA 7.6.9), with their power-on defaults, and the read-only view
 * of its link. The switch model's arbiter (switch/vlarb.c) serves the
 * tables; agents reach them only through these functions.
 */
#include <errno.h>
#include <string.h>

#include "node.h"

void ibemu_vlarb_init_default(struct ibemu_vlarb *a, unsigned data_vls)
{
	unsigned vl;

	/* Before an SM programs it: every data VL, equal weight, low table. */
	memset(a, 0, sizeof(*a));
	for (vl = 0; vl < data_vls && vl < 15; vl++) {
		a->low[vl].vl = (uint8_t)vl;
		a->low[vl].weight = 64;
	}
	a->nlow = (uint8_t)vl;
	a->high_limit = 0;
	a->low_left = a->nlow ? a->low[0].weight * 64 : 0;
}

int ibemu_engine_port_link(const struct ibemu_engine *e, uint32_t port,
			   struct ibemu_port_link *out)
{
	const struct ibemu_eport *p;

	if (port >= e->nports)
		return -EINVAL;
	p = &e->ports[port];
	*out = (struct ibemu_port_link){
		.node = p->node,
		.peer = p->peer,
		.num = p->num,
		.lanes = p->lanes,
		.speed = p->speed,
		.data_vls = p->data_vls,
		.state = p->state,
		.phys_state = p->phys_state,
		.buf_blocks = p->buf_blocks,
	};
	return 0;
}

int ibemu_engine_get_sl2vl(const struct ibemu_engine *e, uint32_t port,
			   uint8_t sl2vl[16])
{
	if (port >= e->nports)
		return -EINVAL;
	memcpy(sl2vl, e->ports[port].sl2vl, 16);
	return 0;
}

int ibemu_engine_set_sl2vl(struct ibemu_engine *e, uint32_t port,
			   const uint8_t sl2vl[16])
{
	struct ibemu_eport *p;
	unsigned sl;

	if (port >= e->nports)
		return -EINVAL;
	p = &e->ports[port];
	/*
	 * IBA 7.6.6: an SL mapped to VL15 or to a VL the port does not
	 * operate is dropped. The engine cannot drop by SL yet: such an SL
	 * keeps its previous VL.
	 */
	for (sl = 0; sl < 16; sl++)
		if (sl2vl[sl] < p->data_vls)
			p->sl2vl[sl] = sl2vl[sl];
	return 0;
}

int ibemu_engine_get_vlarb(const struct ibemu_engine *e, uint32_t port,
			   int high, struct ibemu_vlarb_entry *entries,
			   unsigned *n)
{
	const struct ibemu_vlarb *a;

	if (port >= e->nports)
		return -EINVAL;
	a = &e->ports[port].vlarb;
	memcpy(entries, high ? a->high : a->low,
	       IBEMU_VLARB_ENTRIES * sizeof(*entries));
	*n = IBEMU_VLARB_ENTRIES;
	return 0;
}

/* Entries of a VL arbitration table up to its last non-zero weight. */
static uint8_t table_len(const struct ibemu_vlarb_entry *t)
{
	unsigned n = IBEMU_VLARB_ENTRIES;

	while (n && !t[n - 1].weight)
		n--;
	return (uint8_t)n;
}

int ibemu_engine_set_vlarb(struct ibemu_engine *e, uint32_t port, int high,
			   unsigned first, const struct ibemu_vlarb_entry *ent,
			   unsigned n)
{
	struct ibemu_vlarb *a;

	if (port >= e->nports || first > IBEMU_VLARB_ENTRIES ||
	    n > IBEMU_VLARB_ENTRIES - first)
		return -EINVAL;
	a = &e->ports[port].vlarb;
	memcpy((high ? a->high : a->low) + first, ent, n * sizeof(*ent));
	/* A new table starts its round from its first entry. */
	a->nhigh = table_len(a->high);
	a->nlow = table_len(a->low);
	a->high_idx = a->low_idx = 0;
	a->high_left = a->high[0].weight * 64;
	a->low_left = a->low[0].weight * 64;
	return 0;
}

uint8_t ibemu_engine_get_vl_high_limit(const struct ibemu_engine *e,
				       uint32_t port)
{
	return port < e->nports ? e->ports[port].vlarb.high_limit : 0;
}

int ibemu_engine_set_vl_high_limit(struct ibemu_engine *e, uint32_t port,
				   uint8_t limit)
{
	if (port >= e->nports)
		return -EINVAL;
	e->ports[port].vlarb.high_limit = limit;
	return 0;
}
