// SPDX-License-Identifier: MIT
/*
 * What only a switch's SMA answers: SwitchInfo (IBA 14.2.5.4), the linear
 * forwarding table in blocks of 64 LIDs (14.2.5.10, kept by the engine)
 * and the multicast forwarding table (14.2.5.12, kept by the engine,
 * which replicates multicast packets by it). Also PortStateChange and the Trap 128
 * (14.2.5.1) a switch sends its master SM when a link goes down or up,
 * repeated until the SM represses it.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

/*
 * LinearFDBTop. Until an SM writes it, ibemu reports the highest LID its
 * LFT routes: routes loaded straight into the engine
 * (ibemu_engine_apply_routes, in benchmarks and unit tests) stand for an
 * SM that has already programmed the switch.
 */
static uint16_t fdb_top(const struct ibemu_engine *e, uint32_t node)
{
	const struct ibemu_agent_node *an = ibemu__agent_node(e, node);
	uint16_t top;

	if (an->fdb_top_set)
		return an->linear_fdb_top;
	top = ibemu_engine_lft_top(e, node);
	return top > IBEMU_AGENT_UNICAST_LID_MAX ? IBEMU_AGENT_UNICAST_LID_MAX
						 : top;
}

static void switch_info_fill(const struct ibemu_engine *e, uint32_t node,
			     uint8_t *data)
{
	const struct ibemu_agent_node *an = ibemu__agent_node(e, node);
	struct ibemu_mad_switch_info si;

	memset(&si, 0, sizeof(si));
	si.linear_fdb_cap = IBEMU_AGENT_LFT_CAP;
	si.multicast_fdb_cap = IBEMU_AGENT_MFT_CAP;
	si.linear_fdb_top = fdb_top(e, node);
	si.default_port = an->default_port;
	si.default_mcast_primary_port = an->default_mcast_primary;
	si.default_mcast_not_primary_port = an->default_mcast_not_primary;
	si.life_time_value = an->life_time_value;
	si.port_state_change = an->port_state_change;
	si.partition_enforcement_cap = IBEMU_AGENT_SWITCH_ENF_PKEYS;
	si.inbound_enforcement_cap = 1;
	si.outbound_enforcement_cap = 1;
	/* EnhancedPort0 0: a base port 0, without PMA counters of its own. */
	IBEMU_BUG_ON(
		ibemu_mad_switch_info_encode(&si, data, IBEMU_SMP_DATA_LEN));
}

static int port_or_none(unsigned port, unsigned nports)
{
	return port <= nports || port == 0xff;
}

int ibemu__sma_switch_info(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	struct ibemu_agent_node *an = ibemu__agent_node(e, r->node);
	unsigned nports = an->nports;
	struct ibemu_mad_switch_info in;
	int status = IBEMU_MAD_STATUS_OK;

	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_switch_info_decode(r->req + IBEMU_SMP_DATA_OFF,
					     IBEMU_SMP_DATA_LEN, &in);
		/* IBA 14.2.5.4: LinearFDBTop within LinearFDBCap; ports. */
		if (in.linear_fdb_top > IBEMU_AGENT_UNICAST_LID_MAX ||
		    !port_or_none(in.default_port, nports) ||
		    !port_or_none(in.default_mcast_primary_port, nports) ||
		    !port_or_none(in.default_mcast_not_primary_port, nports)) {
			status = IBEMU_MAD_STATUS_INVALID_FIELD;
		} else {
			an->linear_fdb_top = in.linear_fdb_top;
			an->fdb_top_set = 1;
			an->default_port = in.default_port;
			an->default_mcast_primary =
				in.default_mcast_primary_port;
			an->default_mcast_not_primary =
				in.default_mcast_not_primary_port;
			an->life_time_value = in.life_time_value;
			/* Writing 1 to PortStateChange clears it. */
			if (in.port_state_change)
				an->port_state_change = 0;
		}
	}
	switch_info_fill(e, r->node, r->resp + IBEMU_SMP_DATA_OFF);
	return status;
}

int ibemu__sma_lft(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	struct ibemu_mad_lft lft;
	uint32_t block = r->attr_mod;

	/* IBA 14.2.5.10: blocks of 64 LIDs up to LinearFDBCap. */
	if (block >= IBEMU_AGENT_LFT_CAP / IBEMU_MAD_LFT_BLOCK)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_lft_decode(r->req + IBEMU_SMP_DATA_OFF,
				     IBEMU_SMP_DATA_LEN, &lft);
		ibemu_engine_set_lft_block(e, r->node,
					   block * IBEMU_MAD_LFT_BLOCK,
					   lft.port, IBEMU_MAD_LFT_BLOCK);
	}
	ibemu_engine_get_lft_block(e, r->node, block * IBEMU_MAD_LFT_BLOCK,
				   lft.port, IBEMU_MAD_LFT_BLOCK);
	IBEMU_BUG_ON(ibemu_mad_lft_encode(&lft, r->resp + IBEMU_SMP_DATA_OFF,
					  IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

_Static_assert(IBEMU_AGENT_MFT_CAP == IBEMU_MFT_CAP,
	       "MulticastFDBCap: the MLIDs the engine's MFT holds");

int ibemu__sma_mft(struct ibemu_agent_req *r)
{
	struct ibemu_engine *e = r->e;
	/* IBA 14.2.5.12: bits 31-28 the position, bits 8-0 the block. */
	unsigned pos = r->attr_mod >> 28, block = r->attr_mod & 0x1ffu, i;
	uint16_t first =
		(uint16_t)(IBEMU_MLID_FIRST +
			   (r->attr_mod & 0x1ffu) * IBEMU_MAD_MFT_BLOCK);
	struct ibemu_mad_mft mft;

	if (pos >= ibemu_engine_mft_positions(e, r->node) ||
	    block >= IBEMU_AGENT_MFT_CAP / IBEMU_MAD_MFT_BLOCK)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_mft_decode(r->req + IBEMU_SMP_DATA_OFF,
				     IBEMU_SMP_DATA_LEN, &mft);
		for (i = 0; i < IBEMU_MAD_MFT_BLOCK; i++)
			/* Out of memory: fail the Set, as a busy agent. */
			if (ibemu_engine_set_mft(e, r->node,
						 (uint16_t)(first + i), pos,
						 mft.port_mask[i]))
				return IBEMU_MAD_STATUS_BUSY;
	}
	for (i = 0; i < IBEMU_MAD_MFT_BLOCK; i++)
		IBEMU_BUG_ON(ibemu_engine_get_mft(e, r->node,
						  (uint16_t)(first + i), pos,
						  &mft.port_mask[i]));
	IBEMU_BUG_ON(ibemu_mad_mft_encode(&mft, r->resp + IBEMU_SMP_DATA_OFF,
					  IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

void ibemu__sma_port_state_change(struct ibemu_engine *e, uint32_t node)
{
	struct ibemu_agent_node *an = ibemu__agent_node(e, node);
	struct ibemu_mad_trap_lid details = {
		.lid = ibemu_engine_get_lid(e, node, 0),
	};
	uint8_t data[IBEMU_MAD_NOTICE_DETAILS_LEN];

	an->port_state_change = 1;
	memset(data, 0, sizeof(data));
	IBEMU_BUG_ON(ibemu_mad_trap_lid_encode(&details, data, sizeof(data)));
	ibemu__sma_trap_raise(e, an->first_port,
			      IBEMU_MAD_TRAP_LINK_STATE_CHANGE, data);
}
