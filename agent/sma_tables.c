// SPDX-License-Identifier: MIT
/*
 * The SMA's per-port tables, each read and written a block at a time:
 * GUIDInfo (IBA 14.2.5.5), P_KeyTable (14.2.5.7), SLtoVLMappingTable
 * (14.2.5.8) and VLArbitrationTable (14.2.5.9). The last two are the
 * engine's own (ibemu_engine_set_sl2vl, ibemu_engine_set_vlarb), so a Set
 * changes how packets are forwarded from the next arbitration on.
 */
#include <string.h>

#include "agent_int.h"

_Static_assert(2 * IBEMU_MAD_VLARB_BLOCK == IBEMU_VLARB_ENTRIES,
	       "two VLArbitrationTable blocks make an engine table");

int ibemu__sma_guid_info(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	uint32_t pi = ibemu__agent_mgmt_port(e, r->node, r->port);
	struct ibemu_agent_port *ap = ibemu__agent_port(e, pi);
	struct ibemu_mad_guid_info gi;
	uint32_t block = r->attr_mod;
	unsigned i, idx;

	/* IBA 14.2.5.5: blocks of 8 GUIDs up to PortInfo:GUIDCap. */
	if (!ap->guid_cap ||
	    block >= (ap->guid_cap + IBEMU_MAD_GUID_INFO_BLOCK - 1u) /
			     IBEMU_MAD_GUID_INFO_BLOCK)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_guid_info_decode(r->req + IBEMU_SMP_DATA_OFF,
					   IBEMU_SMP_DATA_LEN, &gi);
		/* Entry 0 is the port's own GUID and is read-only. */
		for (i = 0; i < IBEMU_MAD_GUID_INFO_BLOCK; i++) {
			idx = block * IBEMU_MAD_GUID_INFO_BLOCK + i;
			if (idx && idx < ap->guid_cap)
				ap->guids[idx] = gi.guid[i];
		}
	}
	for (i = 0; i < IBEMU_MAD_GUID_INFO_BLOCK; i++) {
		idx = block * IBEMU_MAD_GUID_INFO_BLOCK + i;
		gi.guid[i] = idx < ap->guid_cap ? ap->guids[idx] : 0;
	}
	IBEMU_BUG_ON(ibemu_mad_guid_info_encode(
		&gi, r->resp + IBEMU_SMP_DATA_OFF, IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * The port a table attribute addresses: on a switch the one its modifier
 * names (at most NumPorts), on a CA the one the SMP came in through.
 * Returns the global index, or IBEMU_NONE for a bad port number.
 */
static uint32_t table_port(const struct ibemu_agent_req *r, uint32_t num)
{
	const struct ibemu_agent_node *n = ibemu__agent_node(r->e, r->node);

	if (!n->is_switch)
		num = r->port;
	if (num > n->nports || (!n->is_switch && !num))
		return IBEMU_NONE;
	return n->first_port + num;
}

int ibemu__sma_pkey_table(struct ibemu_agent_req *r)
{
	/* IBA 14.2.5.7: bits 31-16 the switch port, bits 15-0 the block. */
	uint32_t pi = table_port(r, r->attr_mod >> 16);
	uint32_t block = r->attr_mod & 0xffffu;
	struct ibemu_mad_pkey_table t;
	struct ibemu_agent_port *ap;
	unsigned i, idx;

	if (pi == IBEMU_NONE)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	ap = ibemu__agent_port(r->e, pi);
	if (block >= (ap->npkeys + IBEMU_MAD_PKEY_TABLE_BLOCK - 1u) /
			     IBEMU_MAD_PKEY_TABLE_BLOCK)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_pkey_table_decode(r->req + IBEMU_SMP_DATA_OFF,
					    IBEMU_SMP_DATA_LEN, &t);
		for (i = 0; i < IBEMU_MAD_PKEY_TABLE_BLOCK; i++) {
			idx = block * IBEMU_MAD_PKEY_TABLE_BLOCK + i;
			if (idx < ap->npkeys)
				ap->pkeys[idx] = t.pkey[i];
		}
	}
	for (i = 0; i < IBEMU_MAD_PKEY_TABLE_BLOCK; i++) {
		idx = block * IBEMU_MAD_PKEY_TABLE_BLOCK + i;
		t.pkey[i] = idx < ap->npkeys ? ap->pkeys[idx] : 0;
	}
	IBEMU_BUG_ON(ibemu_mad_pkey_table_encode(
		&t, r->resp + IBEMU_SMP_DATA_OFF, IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * IBA 14.2.5.8: a switch has a table per (input port, output port), named
 * by bits 15-8 and 7-0 of the modifier. The engine keeps one table per
 * output port, so every input port shares its output's table: a Set for
 * any input port writes it, a Get for any input port reads it. Bits 31-16
 * (optimized programming) are refused: SwitchInfo does not offer it. A Get
 * reads what the SM wrote: the engine keeps an SL's previous VL where the
 * SM maps it to VL15 or to a VL the port does not run (IBA 7.6.6 drops
 * such SLs; the engine cannot drop by SL yet).
 */
int ibemu__sma_sl2vl(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	const struct ibemu_agent_node *n = ibemu__agent_node(e, r->node);
	struct ibemu_mad_sl2vl_table t;
	struct ibemu_agent_port *ap;
	unsigned sl;
	uint32_t pi;

	if (n->is_switch &&
	    (r->attr_mod >> 16 || ((r->attr_mod >> 8) & 0xffu) > n->nports))
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	pi = table_port(r, r->attr_mod & 0xffu);
	if (pi == IBEMU_NONE)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	ap = ibemu__agent_port(e, pi);
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_sl2vl_table_decode(r->req + IBEMU_SMP_DATA_OFF,
					     IBEMU_SMP_DATA_LEN, &t);
		memcpy(ap->sl2vl, t.vl, sizeof(ap->sl2vl));
		IBEMU_BUG_ON(ibemu_engine_set_sl2vl(e, pi, ap->sl2vl));
	}
	for (sl = 0; sl < 16; sl++)
		t.vl[sl] = ap->sl2vl[sl];
	IBEMU_BUG_ON(ibemu_mad_sl2vl_table_encode(
		&t, r->resp + IBEMU_SMP_DATA_OFF, IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * IBA 14.2.5.9: bits 31-16 of the modifier pick the block (1: low 0-31,
 * 2: high 0-31, 3: low 32-63, 4: high 32-63), bits 15-0 the switch port.
 */
int ibemu__sma_vlarb(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	uint32_t pi = table_port(r, r->attr_mod & 0xffffu);
	unsigned blk = r->attr_mod >> 16, first, n, i;
	struct ibemu_vlarb_entry tab[IBEMU_VLARB_ENTRIES];
	struct ibemu_mad_vlarb_table t;
	int high;

	if (pi == IBEMU_NONE || blk < IBEMU_MAD_VLARB_LOW_0_31 ||
	    blk > IBEMU_MAD_VLARB_HIGH_32_63)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	high = blk == IBEMU_MAD_VLARB_HIGH_0_31 ||
	       blk == IBEMU_MAD_VLARB_HIGH_32_63;
	first = blk >= IBEMU_MAD_VLARB_LOW_32_63 ? IBEMU_MAD_VLARB_BLOCK : 0;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_vlarb_table_decode(r->req + IBEMU_SMP_DATA_OFF,
					     IBEMU_SMP_DATA_LEN, &t);
		for (i = 0; i < IBEMU_MAD_VLARB_BLOCK; i++) {
			tab[i].vl = t.entry[i].vl;
			tab[i].weight = t.entry[i].weight;
		}
		/* The engine restarts both tables' rounds. */
		IBEMU_BUG_ON(ibemu_engine_set_vlarb(e, pi, high, first, tab,
						    IBEMU_MAD_VLARB_BLOCK));
	}
	IBEMU_BUG_ON(ibemu_engine_get_vlarb(e, pi, high, tab, &n));
	for (i = 0; i < IBEMU_MAD_VLARB_BLOCK; i++) {
		t.entry[i].vl = first + i < n ? tab[first + i].vl : 0;
		t.entry[i].weight = first + i < n ? tab[first + i].weight : 0;
	}
	IBEMU_BUG_ON(ibemu_mad_vlarb_table_encode(
		&t, r->resp + IBEMU_SMP_DATA_OFF, IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}
