// SPDX-License-Identifier: MIT
/*
 * The subnet management agent (IBA 14.2): one table of the attributes every
 * node answers with Get() and Set() (IBA 14.2.5, table "Subnet Management
 * Attributes"), the M_Key check (14.2.4) in front of it, and the two
 * attributes that only describe the node: NodeDescription and NodeInfo.
 * PortInfo lives in sma_port.c, SwitchInfo and the forwarding tables in
 * sma_switch.c, the per-port tables in sma_tables.c.
 */
#include <string.h>

#include "agent_int.h"

/* IBA 14.2.5.2: the node's description, NUL-padded. */
static int node_desc(struct ibemu_agent_req *r)
{
	const struct ibemu_topo_node *tn =
		&ibemu_engine_topo(r->e)->nodes[r->node];
	struct ibemu_mad_node_desc nd;
	const char *s = tn->desc ? tn->desc : tn->name;
	size_t len = strlen(s);

	memset(&nd, 0, sizeof(nd));
	memcpy(nd.str, s, len < sizeof(nd.str) ? len : sizeof(nd.str));
	IBEMU_BUG_ON(ibemu_mad_node_desc_encode(
		&nd, r->resp + IBEMU_SMP_DATA_OFF, IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * IBA 14.2.5.3: NodeInfo. PortGUID and LocalPortNum are those of the port
 * the SMP came in through (a switch's PortGUID is its port 0's).
 */
static int node_info(struct ibemu_agent_req *r)
{
	const struct ibemu_topo_node *tn =
		&ibemu_engine_topo(r->e)->nodes[r->node];
	int sw = tn->type == IBEMU_NODE_SWITCH;
	struct ibemu_mad_node_info ni = {
		.base_version = IBEMU_MAD_BASE_VERSION,
		.class_version = IBEMU_MAD_SMP_CLASS_VERSION,
		.node_type = sw ? IBEMU_MAD_NODE_SWITCH : IBEMU_MAD_NODE_CA,
		.num_ports = tn->nports,
		.system_image_guid =
			tn->sysimage_guid ? tn->sysimage_guid : tn->guid,
		.node_guid = tn->guid,
		.port_guid = tn->ports[sw ? 0 : r->port].guid,
		.partition_cap =
			sw ? IBEMU_AGENT_SWITCH_PKEYS : IBEMU_AGENT_CA_PKEYS,
		.device_id = tn->device_id,
		.revision = IBEMU_AGENT_REVISION,
		.local_port_num = (uint8_t)r->port,
		.vendor_id = tn->vendor_id & 0xffffffu,
	};

	IBEMU_BUG_ON(ibemu_mad_node_info_encode(
		&ni, r->resp + IBEMU_SMP_DATA_OFF, IBEMU_SMP_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

#define GS  (IBEMU_AGENT_GET | IBEMU_AGENT_SET)
#define GET IBEMU_AGENT_GET

/*
 * What the SMA answers. SMInfo is the SM's (IBA 14.2.5.13), not the SMA's:
 * a node without an SM reports it unsupported. Notice takes only
 * TrapRepress() (the SMA queues no notices: IsNoticeSupported is 0).
 */
static const struct ibemu_agent_attr sma_attrs[] = {
	{IBEMU_SMP_ATTR_NODE_DESC, GET, IBEMU_AGENT_ANY, node_desc},
	{IBEMU_SMP_ATTR_NODE_INFO, GET, IBEMU_AGENT_ANY, node_info},
	{IBEMU_SMP_ATTR_SWITCH_INFO, GS, IBEMU_AGENT_SWITCH,
	 ibemu__sma_switch_info},
	{IBEMU_SMP_ATTR_GUID_INFO, GS, IBEMU_AGENT_ANY, ibemu__sma_guid_info},
	{IBEMU_SMP_ATTR_PORT_INFO, GS, IBEMU_AGENT_ANY, ibemu__sma_port_info},
	{IBEMU_SMP_ATTR_PKEY_TABLE, GS, IBEMU_AGENT_ANY, ibemu__sma_pkey_table},
	{IBEMU_SMP_ATTR_SL2VL_TABLE, GS, IBEMU_AGENT_ANY, ibemu__sma_sl2vl},
	{IBEMU_SMP_ATTR_VLARB_TABLE, GS, IBEMU_AGENT_ANY, ibemu__sma_vlarb},
	{IBEMU_SMP_ATTR_LFT, GS, IBEMU_AGENT_SWITCH, ibemu__sma_lft},
	{IBEMU_SMP_ATTR_MFT, GS, IBEMU_AGENT_SWITCH, ibemu__sma_mft},
	{IBEMU_SMP_ATTR_NOTICE, IBEMU_AGENT_TRAP_REPRESS, IBEMU_AGENT_ANY,
	 ibemu__sma_trap_repress},
	{IBEMU_SMP_ATTR_MLNX_EXT_PORT_INFO, GS, IBEMU_AGENT_ANY,
	 ibemu__sma_mlnx_ext_port_info},
};

int ibemu__sma_process(struct ibemu_agent_req *r)
{
	switch (r->method) {
	case IBEMU_MAD_METHOD_GET:
	case IBEMU_MAD_METHOD_SET:
	case IBEMU_MAD_METHOD_TRAP_REPRESS:
		break;
	case IBEMU_MAD_METHOD_TRAP:
		/* Traps are for the SM; the SMA only sends them. */
		return IBEMU_AGENT_DROP;
	default:
		return IBEMU_MAD_STATUS_METHOD_UNSUPP;
	}
	/* IBA 14.2.4: a failed M_Key check drops the SMP silently. */
	if (!ibemu__sma_mkey_check(r))
		return IBEMU_AGENT_DROP;
	memset(r->resp + IBEMU_SMP_DATA_OFF, 0, IBEMU_SMP_DATA_LEN);
	return ibemu__agent_dispatch(r, sma_attrs, IBEMU_ARRAY_SIZE(sma_attrs));
}
