// SPDX-License-Identifier: MIT
/*
 * The performance management attributes as layouts, transcribed from the
 * tables of IBA vol 1, 13.4.8.1 (ClassPortInfo), 16.1.3.5 (PortCounters)
 * and 16.1.4.11 (PortCountersExtended). Reserved fields are left out.
 */
#include "mad_pma.h"

#define T struct ibemu_mad_class_port_info
static const struct ibemu_mad_field class_port_info_fields[] = {
	IBEMU_MAD_F(T, base_version, 0, 8, "BaseVersion"),
	IBEMU_MAD_F(T, class_version, 8, 8, "ClassVersion"),
	IBEMU_MAD_F(T, capability_mask, 16, 16, "CapabilityMask"),
	IBEMU_MAD_F(T, capability_mask2, 32, 27, "CapabilityMask2"),
	IBEMU_MAD_F(T, resp_time_value, 59, 5, "RespTimeValue"),
	IBEMU_MAD_A(T, redirect_gid, 64, 8, 16, 8, "RedirectGID"),
	IBEMU_MAD_F(T, redirect_tc, 192, 8, "RedirectTC"),
	IBEMU_MAD_F(T, redirect_sl, 200, 4, "RedirectSL"),
	IBEMU_MAD_F(T, redirect_fl, 204, 20, "RedirectFL"),
	IBEMU_MAD_F(T, redirect_lid, 224, 16, "RedirectLID"),
	IBEMU_MAD_F(T, redirect_pkey, 240, 16, "RedirectP_Key"),
	IBEMU_MAD_F(T, redirect_qp, 264, 24, "RedirectQP"),
	IBEMU_MAD_F(T, redirect_qkey, 288, 32, "RedirectQ_Key"),
	IBEMU_MAD_A(T, trap_gid, 320, 8, 16, 8, "TrapGID"),
	IBEMU_MAD_F(T, trap_tc, 448, 8, "TrapTC"),
	IBEMU_MAD_F(T, trap_sl, 456, 4, "TrapSL"),
	IBEMU_MAD_F(T, trap_fl, 460, 20, "TrapFL"),
	IBEMU_MAD_F(T, trap_lid, 480, 16, "TrapLID"),
	IBEMU_MAD_F(T, trap_pkey, 496, 16, "TrapP_Key"),
	IBEMU_MAD_F(T, trap_hl, 512, 8, "TrapHL"),
	IBEMU_MAD_F(T, trap_qp, 520, 24, "TrapQP"),
	IBEMU_MAD_F(T, trap_qkey, 544, 32, "TrapQ_Key"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_class_port_info_layout =
	IBEMU_MAD_LAYOUT("ClassPortInfo", IBEMU_MAD_CLASS_PERF,
			 IBEMU_PMA_ATTR_CLASS_PORT_INFO,
			 struct ibemu_mad_class_port_info,
			 IBEMU_MAD_CLASS_PORT_INFO_LEN, class_port_info_fields);

/* Byte 0 is reserved; QP1Dropped took reserved bits 160-175 in IBA 1.3. */
#define T struct ibemu_mad_port_counters
static const struct ibemu_mad_field port_counters_fields[] = {
	IBEMU_MAD_F(T, port_select, 8, 8, "PortSelect"),
	IBEMU_MAD_F(T, counter_select, 16, 16, "CounterSelect"),
	IBEMU_MAD_F(T, symbol_error_counter, 32, 16, "SymbolErrorCounter"),
	IBEMU_MAD_F(T, link_error_recovery_counter, 48, 8,
		    "LinkErrorRecoveryCounter"),
	IBEMU_MAD_F(T, link_downed_counter, 56, 8, "LinkDownedCounter"),
	IBEMU_MAD_F(T, port_rcv_errors, 64, 16, "PortRcvErrors"),
	IBEMU_MAD_F(T, port_rcv_remote_physical_errors, 80, 16,
		    "PortRcvRemotePhysicalErrors"),
	IBEMU_MAD_F(T, port_rcv_switch_relay_errors, 96, 16,
		    "PortRcvSwitchRelayErrors"),
	IBEMU_MAD_F(T, port_xmit_discards, 112, 16, "PortXmitDiscards"),
	IBEMU_MAD_F(T, port_xmit_constraint_errors, 128, 8,
		    "PortXmitConstraintErrors"),
	IBEMU_MAD_F(T, port_rcv_constraint_errors, 136, 8,
		    "PortRcvConstraintErrors"),
	IBEMU_MAD_F(T, counter_select2, 144, 8, "CounterSelect2"),
	IBEMU_MAD_F(T, local_link_integrity_errors, 152, 4,
		    "LocalLinkIntegrityErrors"),
	IBEMU_MAD_F(T, excessive_buffer_overrun_errors, 156, 4,
		    "ExcessiveBufferOverrunErrors"),
	IBEMU_MAD_F(T, qp1_dropped, 160, 16, "QP1Dropped"),
	IBEMU_MAD_F(T, vl15_dropped, 176, 16, "VL15Dropped"),
	IBEMU_MAD_F(T, port_xmit_data, 192, 32, "PortXmitData"),
	IBEMU_MAD_F(T, port_rcv_data, 224, 32, "PortRcvData"),
	IBEMU_MAD_F(T, port_xmit_pkts, 256, 32, "PortXmitPkts"),
	IBEMU_MAD_F(T, port_rcv_pkts, 288, 32, "PortRcvPkts"),
	IBEMU_MAD_F(T, port_xmit_wait, 320, 32, "PortXmitWait"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_port_counters_layout = IBEMU_MAD_LAYOUT(
	"PortCounters", IBEMU_MAD_CLASS_PERF, IBEMU_PMA_ATTR_PORT_COUNTERS,
	struct ibemu_mad_port_counters, IBEMU_MAD_PORT_COUNTERS_LEN,
	port_counters_fields);

#define T		struct ibemu_mad_port_counters_ext
#define C64(m, i, name) IBEMU_MAD_F(T, m, 64 + 64 * (i), 64, name)
static const struct ibemu_mad_field port_counters_ext_fields[] = {
	IBEMU_MAD_F(T, port_select, 8, 8, "PortSelect"),
	IBEMU_MAD_F(T, counter_select, 16, 16, "CounterSelect"),
	IBEMU_MAD_F(T, counter_select2, 32, 32, "CounterSelect2"),
	C64(port_xmit_data, 0, "PortXmitData"),
	C64(port_rcv_data, 1, "PortRcvData"),
	C64(port_xmit_pkts, 2, "PortXmitPkts"),
	C64(port_rcv_pkts, 3, "PortRcvPkts"),
	C64(port_unicast_xmit_pkts, 4, "PortUnicastXmitPkts"),
	C64(port_unicast_rcv_pkts, 5, "PortUnicastRcvPkts"),
	C64(port_multicast_xmit_pkts, 6, "PortMulticastXmitPkts"),
	C64(port_multicast_rcv_pkts, 7, "PortMulticastRcvPkts"),
	C64(symbol_error_counter, 8, "SymbolErrorCounter"),
	C64(link_error_recovery_counter, 9, "LinkErrorRecoveryCounter"),
	C64(link_downed_counter, 10, "LinkDownedCounter"),
	C64(port_rcv_errors, 11, "PortRcvErrors"),
	C64(port_rcv_remote_physical_errors, 12, "PortRcvRemotePhysicalErrors"),
	C64(port_rcv_switch_relay_errors, 13, "PortRcvSwitchRelayErrors"),
	C64(port_xmit_discards, 14, "PortXmitDiscards"),
	C64(port_xmit_constraint_errors, 15, "PortXmitConstraintErrors"),
	C64(port_rcv_constraint_errors, 16, "PortRcvConstraintErrors"),
	C64(local_link_integrity_errors, 17, "LocalLinkIntegrityErrors"),
	C64(excessive_buffer_overrun_errors, 18,
	    "ExcessiveBufferOverrunErrors"),
	C64(vl15_dropped, 19, "VL15Dropped"),
	C64(port_xmit_wait, 20, "PortXmitWait"),
	C64(qp1_dropped, 21, "QP1Dropped"),
};
#undef C64
#undef T

const struct ibemu_mad_layout ibemu_mad_port_counters_ext_layout =
	IBEMU_MAD_LAYOUT("PortCountersExtended", IBEMU_MAD_CLASS_PERF,
			 IBEMU_PMA_ATTR_PORT_COUNTERS_EXT,
			 struct ibemu_mad_port_counters_ext,
			 IBEMU_MAD_PORT_COUNTERS_EXT_LEN,
			 port_counters_ext_fields);

IBEMU_MAD_DEFINE_CODEC(class_port_info)
IBEMU_MAD_DEFINE_CODEC(port_counters)
IBEMU_MAD_DEFINE_CODEC(port_counters_ext)
