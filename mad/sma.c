// SPDX-License-Identifier: MIT
/*
 * The subnet management attributes as layouts. Each table transcribes the
 * attribute's table in IBA vol 1, 14.2.5 (bit offsets counted from the most
 * significant bit of the attribute's first byte); reserved fields are left
 * out, so they encode as 0 and are ignored on decode (IBA 13.4.1).
 */
#include "mad_sma.h"

/* IBA 14.2.5.2 */
static const struct ibemu_mad_field node_desc_fields[] = {
	IBEMU_MAD_A(struct ibemu_mad_node_desc, str, 0, 8,
		    IBEMU_MAD_NODE_DESC_LEN, 8, "NodeString"),
};

const struct ibemu_mad_layout ibemu_mad_node_desc_layout = IBEMU_MAD_LAYOUT(
	"NodeDescription", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_NODE_DESC,
	struct ibemu_mad_node_desc, IBEMU_MAD_NODE_DESC_LEN, node_desc_fields);

/* IBA 14.2.5.3 */
#define T struct ibemu_mad_node_info
static const struct ibemu_mad_field node_info_fields[] = {
	IBEMU_MAD_F(T, base_version, 0, 8, "BaseVersion"),
	IBEMU_MAD_F(T, class_version, 8, 8, "ClassVersion"),
	IBEMU_MAD_F(T, node_type, 16, 8, "NodeType"),
	IBEMU_MAD_F(T, num_ports, 24, 8, "NumPorts"),
	IBEMU_MAD_F(T, system_image_guid, 32, 64, "SystemImageGUID"),
	IBEMU_MAD_F(T, node_guid, 96, 64, "NodeGUID"),
	IBEMU_MAD_F(T, port_guid, 160, 64, "PortGUID"),
	IBEMU_MAD_F(T, partition_cap, 224, 16, "PartitionCap"),
	IBEMU_MAD_F(T, device_id, 240, 16, "DeviceID"),
	IBEMU_MAD_F(T, revision, 256, 32, "Revision"),
	IBEMU_MAD_F(T, local_port_num, 288, 8, "LocalPortNum"),
	IBEMU_MAD_F(T, vendor_id, 296, 24, "VendorID"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_node_info_layout = IBEMU_MAD_LAYOUT(
	"NodeInfo", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_NODE_INFO,
	struct ibemu_mad_node_info, IBEMU_MAD_NODE_INFO_LEN, node_info_fields);

/* IBA 14.2.5.4 */
#define T struct ibemu_mad_switch_info
static const struct ibemu_mad_field switch_info_fields[] = {
	IBEMU_MAD_F(T, linear_fdb_cap, 0, 16, "LinearFDBCap"),
	IBEMU_MAD_F(T, random_fdb_cap, 16, 16, "RandomFDBCap"),
	IBEMU_MAD_F(T, multicast_fdb_cap, 32, 16, "MulticastFDBCap"),
	IBEMU_MAD_F(T, linear_fdb_top, 48, 16, "LinearFDBTop"),
	IBEMU_MAD_F(T, default_port, 64, 8, "DefaultPort"),
	IBEMU_MAD_F(T, default_mcast_primary_port, 72, 8,
		    "DefaultMulticastPrimaryPort"),
	IBEMU_MAD_F(T, default_mcast_not_primary_port, 80, 8,
		    "DefaultMulticastNotPrimaryPort"),
	IBEMU_MAD_F(T, life_time_value, 88, 5, "LifeTimeValue"),
	IBEMU_MAD_F(T, port_state_change, 93, 1, "PortStateChange"),
	IBEMU_MAD_F(T, optimized_sl2vl_programming, 94, 2,
		    "OptimizedSLtoVLMappingProgramming"),
	IBEMU_MAD_F(T, lids_per_port, 96, 16, "LIDsPerPort"),
	IBEMU_MAD_F(T, partition_enforcement_cap, 112, 16,
		    "PartitionEnforcementCap"),
	IBEMU_MAD_F(T, inbound_enforcement_cap, 128, 1,
		    "InboundEnforcementCap"),
	IBEMU_MAD_F(T, outbound_enforcement_cap, 129, 1,
		    "OutboundEnforcementCap"),
	IBEMU_MAD_F(T, filter_raw_inbound_cap, 130, 1, "FilterRawInboundCap"),
	IBEMU_MAD_F(T, filter_raw_outbound_cap, 131, 1, "FilterRawOutboundCap"),
	IBEMU_MAD_F(T, enhanced_port0, 132, 1, "EnhancedPort0"),
	IBEMU_MAD_F(T, multicast_fdb_top, 144, 16, "MulticastFDBTop"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_switch_info_layout = IBEMU_MAD_LAYOUT(
	"SwitchInfo", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_SWITCH_INFO,
	struct ibemu_mad_switch_info, IBEMU_MAD_SWITCH_INFO_LEN,
	switch_info_fields);

/* IBA 14.2.5.5 */
static const struct ibemu_mad_field guid_info_fields[] = {
	IBEMU_MAD_A(struct ibemu_mad_guid_info, guid, 0, 64,
		    IBEMU_MAD_GUID_INFO_BLOCK, 64, "GUID"),
};

const struct ibemu_mad_layout ibemu_mad_guid_info_layout = IBEMU_MAD_LAYOUT(
	"GUIDInfo", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_GUID_INFO,
	struct ibemu_mad_guid_info, IBEMU_MAD_GUID_INFO_LEN, guid_info_fields);

/* IBA 14.2.5.6 */
#define T struct ibemu_mad_port_info
static const struct ibemu_mad_field port_info_fields[] = {
	IBEMU_MAD_F(T, m_key, 0, 64, "M_Key"),
	IBEMU_MAD_F(T, gid_prefix, 64, 64, "GidPrefix"),
	IBEMU_MAD_F(T, lid, 128, 16, "LID"),
	IBEMU_MAD_F(T, master_sm_lid, 144, 16, "MasterSMLID"),
	IBEMU_MAD_F(T, capability_mask, 160, 32, "CapabilityMask"),
	IBEMU_MAD_F(T, diag_code, 192, 16, "DiagCode"),
	IBEMU_MAD_F(T, m_key_lease_period, 208, 16, "M_KeyLeasePeriod"),
	IBEMU_MAD_F(T, local_port_num, 224, 8, "LocalPortNum"),
	IBEMU_MAD_F(T, link_width_enabled, 232, 8, "LinkWidthEnabled"),
	IBEMU_MAD_F(T, link_width_supported, 240, 8, "LinkWidthSupported"),
	IBEMU_MAD_F(T, link_width_active, 248, 8, "LinkWidthActive"),
	IBEMU_MAD_F(T, link_speed_supported, 256, 4, "LinkSpeedSupported"),
	IBEMU_MAD_F(T, port_state, 260, 4, "PortState"),
	IBEMU_MAD_F(T, port_phys_state, 264, 4, "PortPhysicalState"),
	IBEMU_MAD_F(T, link_down_default_state, 268, 4, "LinkDownDefaultState"),
	IBEMU_MAD_F(T, m_key_protect_bits, 272, 2, "M_KeyProtectBits"),
	IBEMU_MAD_F(T, lmc, 277, 3, "LMC"),
	IBEMU_MAD_F(T, link_speed_active, 280, 4, "LinkSpeedActive"),
	IBEMU_MAD_F(T, link_speed_enabled, 284, 4, "LinkSpeedEnabled"),
	IBEMU_MAD_F(T, neighbor_mtu, 288, 4, "NeighborMTU"),
	IBEMU_MAD_F(T, master_sm_sl, 292, 4, "MasterSMSL"),
	IBEMU_MAD_F(T, vl_cap, 296, 4, "VLCap"),
	IBEMU_MAD_F(T, init_type, 300, 4, "InitType"),
	IBEMU_MAD_F(T, vl_high_limit, 304, 8, "VLHighLimit"),
	IBEMU_MAD_F(T, vl_arb_high_cap, 312, 8, "VLArbitrationHighCap"),
	IBEMU_MAD_F(T, vl_arb_low_cap, 320, 8, "VLArbitrationLowCap"),
	IBEMU_MAD_F(T, init_type_reply, 328, 4, "InitTypeReply"),
	IBEMU_MAD_F(T, mtu_cap, 332, 4, "MTUCap"),
	IBEMU_MAD_F(T, vl_stall_count, 336, 3, "VLStallCount"),
	IBEMU_MAD_F(T, hoq_life, 339, 5, "HOQLife"),
	IBEMU_MAD_F(T, operational_vls, 344, 4, "OperationalVLs"),
	IBEMU_MAD_F(T, partition_enforcement_inbound, 348, 1,
		    "PartitionEnforcementInbound"),
	IBEMU_MAD_F(T, partition_enforcement_outbound, 349, 1,
		    "PartitionEnforcementOutbound"),
	IBEMU_MAD_F(T, filter_raw_inbound, 350, 1, "FilterRawInbound"),
	IBEMU_MAD_F(T, filter_raw_outbound, 351, 1, "FilterRawOutbound"),
	IBEMU_MAD_F(T, m_key_violations, 352, 16, "M_KeyViolations"),
	IBEMU_MAD_F(T, p_key_violations, 368, 16, "P_KeyViolations"),
	IBEMU_MAD_F(T, q_key_violations, 384, 16, "Q_KeyViolations"),
	IBEMU_MAD_F(T, guid_cap, 400, 8, "GUIDCap"),
	IBEMU_MAD_F(T, client_reregister, 408, 1, "ClientReregister"),
	IBEMU_MAD_F(T, mcast_pkey_trap_suppression, 409, 2,
		    "MulticastPKeyTrapSuppressionEnabled"),
	IBEMU_MAD_F(T, subnet_timeout, 411, 5, "SubnetTimeOut"),
	IBEMU_MAD_F(T, resp_time_value, 419, 5, "RespTimeValue"),
	IBEMU_MAD_F(T, local_phy_errors, 424, 4, "LocalPhyErrors"),
	IBEMU_MAD_F(T, overrun_errors, 428, 4, "OverrunErrors"),
	IBEMU_MAD_F(T, max_credit_hint, 432, 16, "MaxCreditHint"),
	IBEMU_MAD_F(T, link_round_trip_latency, 456, 24,
		    "LinkRoundTripLatency"),
	IBEMU_MAD_F(T, capability_mask2, 480, 16, "CapabilityMask2"),
	IBEMU_MAD_F(T, link_speed_ext_active, 496, 4, "LinkSpeedExtActive"),
	IBEMU_MAD_F(T, link_speed_ext_supported, 500, 4,
		    "LinkSpeedExtSupported"),
	IBEMU_MAD_F(T, link_speed_ext_enabled, 507, 5, "LinkSpeedExtEnabled"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_port_info_layout = IBEMU_MAD_LAYOUT(
	"PortInfo", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_PORT_INFO,
	struct ibemu_mad_port_info, IBEMU_MAD_PORT_INFO_LEN, port_info_fields);

/* IBA 14.2.5.7 */
static const struct ibemu_mad_field pkey_table_fields[] = {
	IBEMU_MAD_A(struct ibemu_mad_pkey_table, pkey, 0, 16,
		    IBEMU_MAD_PKEY_TABLE_BLOCK, 16, "P_KeyEntry"),
};

const struct ibemu_mad_layout ibemu_mad_pkey_table_layout =
	IBEMU_MAD_LAYOUT("P_KeyTable", IBEMU_MAD_CLASS_SUBN_LID,
			 IBEMU_SMP_ATTR_PKEY_TABLE, struct ibemu_mad_pkey_table,
			 IBEMU_MAD_PKEY_TABLE_LEN, pkey_table_fields);

/* IBA 14.2.5.8: SL0 in the upper nibble of byte 0. */
static const struct ibemu_mad_field sl2vl_table_fields[] = {
	IBEMU_MAD_A(struct ibemu_mad_sl2vl_table, vl, 0, 4, 16, 4, "SLtoVL"),
};

const struct ibemu_mad_layout ibemu_mad_sl2vl_table_layout = IBEMU_MAD_LAYOUT(
	"SLtoVLMappingTable", IBEMU_MAD_CLASS_SUBN_LID,
	IBEMU_SMP_ATTR_SL2VL_TABLE, struct ibemu_mad_sl2vl_table,
	IBEMU_MAD_SL2VL_TABLE_LEN, sl2vl_table_fields);

/* IBA 14.2.5.9: each entry is 4 reserved bits, VL (4), Weight (8). */
static const struct ibemu_mad_field vlarb_table_fields[] = {
	IBEMU_MAD_S(struct ibemu_mad_vlarb_table, entry, vl, 4, 4,
		    IBEMU_MAD_VLARB_BLOCK, 16, "VL"),
	IBEMU_MAD_S(struct ibemu_mad_vlarb_table, entry, weight, 8, 8,
		    IBEMU_MAD_VLARB_BLOCK, 16, "Weight"),
};

const struct ibemu_mad_layout ibemu_mad_vlarb_table_layout = IBEMU_MAD_LAYOUT(
	"VLArbitrationTable", IBEMU_MAD_CLASS_SUBN_LID,
	IBEMU_SMP_ATTR_VLARB_TABLE, struct ibemu_mad_vlarb_table,
	IBEMU_MAD_VLARB_TABLE_LEN, vlarb_table_fields);

/* IBA 14.2.5.10 */
static const struct ibemu_mad_field lft_fields[] = {
	IBEMU_MAD_A(struct ibemu_mad_lft, port, 0, 8, IBEMU_MAD_LFT_BLOCK, 8,
		    "Port"),
};

const struct ibemu_mad_layout ibemu_mad_lft_layout = IBEMU_MAD_LAYOUT(
	"LinearForwardingTable", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_LFT,
	struct ibemu_mad_lft, IBEMU_MAD_LFT_LEN, lft_fields);

/* IBA 14.2.5.12 */
static const struct ibemu_mad_field mft_fields[] = {
	IBEMU_MAD_A(struct ibemu_mad_mft, port_mask, 0, 16, IBEMU_MAD_MFT_BLOCK,
		    16, "PortMask"),
};

const struct ibemu_mad_layout ibemu_mad_mft_layout =
	IBEMU_MAD_LAYOUT("MulticastForwardingTable", IBEMU_MAD_CLASS_SUBN_LID,
			 IBEMU_SMP_ATTR_MFT, struct ibemu_mad_mft,
			 IBEMU_MAD_MFT_LEN, mft_fields);

/* IBA 14.2.5.13 */
#define T struct ibemu_mad_sm_info
static const struct ibemu_mad_field sm_info_fields[] = {
	IBEMU_MAD_F(T, guid, 0, 64, "GUID"),
	IBEMU_MAD_F(T, sm_key, 64, 64, "SM_Key"),
	IBEMU_MAD_F(T, act_count, 128, 32, "ActCount"),
	IBEMU_MAD_F(T, priority, 160, 4, "Priority"),
	IBEMU_MAD_F(T, sm_state, 164, 4, "SMState"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_sm_info_layout = IBEMU_MAD_LAYOUT(
	"SMInfo", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_SM_INFO,
	struct ibemu_mad_sm_info, IBEMU_MAD_SM_INFO_LEN, sm_info_fields);

/* IBA 13.4.8.2; the SMP form stops before IssuerGID (bytes 64-79). */
#define T struct ibemu_mad_notice
#define NOTICE_FIELDS                                                 \
	IBEMU_MAD_F(T, is_generic, 0, 1, "IsGeneric"),                \
		IBEMU_MAD_F(T, type, 1, 7, "Type"),                   \
		IBEMU_MAD_F(T, producer_type, 8, 24, "ProducerType"), \
		IBEMU_MAD_F(T, trap_number, 32, 16, "TrapNumber"),    \
		IBEMU_MAD_F(T, issuer_lid, 48, 16, "IssuerLID"),      \
		IBEMU_MAD_F(T, toggle, 64, 1, "NoticeToggle"),        \
		IBEMU_MAD_F(T, count, 65, 15, "NoticeCount"),         \
		IBEMU_MAD_A(T, data_details, 80, 8,                   \
			    IBEMU_MAD_NOTICE_DETAILS_LEN, 8, "DataDetails")
static const struct ibemu_mad_field notice_fields[] = {
	NOTICE_FIELDS,
	IBEMU_MAD_A(T, issuer_gid, 512, 8, 16, 8, "IssuerGID"),
};
static const struct ibemu_mad_field notice_smp_fields[] = {
	NOTICE_FIELDS,
};
#undef NOTICE_FIELDS
#undef T

const struct ibemu_mad_layout ibemu_mad_notice_layout = IBEMU_MAD_LAYOUT(
	"Notice", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_NOTICE,
	struct ibemu_mad_notice, IBEMU_MAD_NOTICE_LEN, notice_fields);

const struct ibemu_mad_layout ibemu_mad_notice_smp_layout = IBEMU_MAD_LAYOUT(
	"NoticeSMP", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_NOTICE,
	struct ibemu_mad_notice, IBEMU_MAD_NOTICE_SMP_LEN, notice_smp_fields);

/* Trap 128 (IBA 14.2.5.1, table "Notice DataDetails"). */
static const struct ibemu_mad_field trap_lid_fields[] = {
	IBEMU_MAD_F(struct ibemu_mad_trap_lid, lid, 0, 16, "LIDADDR"),
};

const struct ibemu_mad_layout ibemu_mad_trap_lid_layout =
	IBEMU_MAD_LAYOUT("Trap128", IBEMU_MAD_CLASS_SUBN_LID,
			 IBEMU_SMP_ATTR_NOTICE, struct ibemu_mad_trap_lid,
			 IBEMU_MAD_NOTICE_DETAILS_LEN, trap_lid_fields);

/* Traps 129, 130, 131: Reserved 16, LIDADDR 16, Reserved 8, PORTNO 8. */
static const struct ibemu_mad_field trap_port_fields[] = {
	IBEMU_MAD_F(struct ibemu_mad_trap_port, lid, 16, 16, "LIDADDR"),
	IBEMU_MAD_F(struct ibemu_mad_trap_port, port_num, 40, 8, "PORTNO"),
};

const struct ibemu_mad_layout ibemu_mad_trap_port_layout =
	IBEMU_MAD_LAYOUT("Trap129-131", IBEMU_MAD_CLASS_SUBN_LID,
			 IBEMU_SMP_ATTR_NOTICE, struct ibemu_mad_trap_port,
			 IBEMU_MAD_NOTICE_DETAILS_LEN, trap_port_fields);

/* Trap 144. */
#define T struct ibemu_mad_trap_local_changes
static const struct ibemu_mad_field trap_local_changes_fields[] = {
	IBEMU_MAD_F(T, lid, 16, 16, "LIDADDR"),
	IBEMU_MAD_F(T, other_local_changes, 47, 1, "OtherLocalChanges"),
	IBEMU_MAD_F(T, capability_mask, 48, 32, "CAPABILITYMASK"),
	IBEMU_MAD_F(T, link_speed_enabled_change, 93, 1,
		    "LinkSpeedEnabledChange"),
	IBEMU_MAD_F(T, link_width_enabled_change, 94, 1,
		    "LinkWidthEnabledChange"),
	IBEMU_MAD_F(T, node_description_change, 95, 1, "NodeDescriptionChange"),
	IBEMU_MAD_F(T, capability_mask2, 96, 16, "CapabilityMask2"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_trap_local_changes_layout =
	IBEMU_MAD_LAYOUT(
		"Trap144", IBEMU_MAD_CLASS_SUBN_LID, IBEMU_SMP_ATTR_NOTICE,
		struct ibemu_mad_trap_local_changes,
		IBEMU_MAD_NOTICE_DETAILS_LEN, trap_local_changes_fields);

IBEMU_MAD_DEFINE_CODEC(node_desc)
IBEMU_MAD_DEFINE_CODEC(node_info)
IBEMU_MAD_DEFINE_CODEC(switch_info)
IBEMU_MAD_DEFINE_CODEC(guid_info)
IBEMU_MAD_DEFINE_CODEC(port_info)
IBEMU_MAD_DEFINE_CODEC(pkey_table)
IBEMU_MAD_DEFINE_CODEC(sl2vl_table)
IBEMU_MAD_DEFINE_CODEC(vlarb_table)
IBEMU_MAD_DEFINE_CODEC(lft)
IBEMU_MAD_DEFINE_CODEC(mft)
IBEMU_MAD_DEFINE_CODEC(sm_info)
IBEMU_MAD_DEFINE_CODEC(trap_lid)
IBEMU_MAD_DEFINE_CODEC(trap_port)
IBEMU_MAD_DEFINE_CODEC(trap_local_changes)

static const struct ibemu_mad_layout *notice_layout(size_t len)
{
	return len >= IBEMU_MAD_NOTICE_LEN ? &ibemu_mad_notice_layout
					   : &ibemu_mad_notice_smp_layout;
}

int ibemu_mad_notice_encode(const struct ibemu_mad_notice *v, uint8_t *buf,
			    size_t len)
{
	return ibemu_mad_layout_encode(notice_layout(len), v, buf, len);
}

int ibemu_mad_notice_decode(const uint8_t *buf, size_t len,
			    struct ibemu_mad_notice *v)
{
	return ibemu_mad_layout_decode(notice_layout(len), buf, len, v);
}
