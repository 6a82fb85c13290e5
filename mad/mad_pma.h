/* SPDX-License-Identifier: MIT */
/*
 * Performance management attributes (IBA vol 1, 16.1): ClassPortInfo,
 * which every GS class shares (IBA 13.4.8.1), PortCounters and
 * PortCountersExtended. They live in the 192-byte data of a PMA MAD
 * (IBEMU_PMA_DATA_LEN).
 *
 * The codecs follow mad_layout.h: encode returns 0, -ENOSPC or -ERANGE;
 * decode returns 0 or -EINVAL and reads no byte past 'len'.
 */
#ifndef IBEMU_MAD_PMA_H
#define IBEMU_MAD_PMA_H

#include <stddef.h>
#include <stdint.h>

#include "mad.h"

/* Attribute IDs (IBA 16.1.2). */
#define IBEMU_PMA_ATTR_CLASS_PORT_INFO	    0x0001
#define IBEMU_PMA_ATTR_PORT_SAMPLES_CONTROL 0x0010
#define IBEMU_PMA_ATTR_PORT_SAMPLES_RESULT  0x0011
#define IBEMU_PMA_ATTR_PORT_COUNTERS	    0x0012
#define IBEMU_PMA_ATTR_PORT_COUNTERS_EXT    0x001d

#define IBEMU_MAD_CLASS_PORT_INFO_LEN	72
#define IBEMU_MAD_PORT_COUNTERS_LEN	44
#define IBEMU_MAD_PORT_COUNTERS_EXT_LEN 184
_Static_assert(IBEMU_MAD_CLASS_PORT_INFO_LEN <= IBEMU_PMA_DATA_LEN &&
		       IBEMU_MAD_PORT_COUNTERS_LEN <= IBEMU_PMA_DATA_LEN &&
		       IBEMU_MAD_PORT_COUNTERS_EXT_LEN <= IBEMU_PMA_DATA_LEN,
	       "PMA attributes fit the PMA data");

/* PortSelect 0xff: all ports at once, if AllPortSelect is supported. */
#define IBEMU_PMA_ALL_PORTS 0xff

/* The PMA's ClassPortInfo CapabilityMask bits (IBA 16.1.2). */
#define IBEMU_PMA_CAP_ALL_PORT_SELECT  (1u << 8)
#define IBEMU_PMA_CAP_EXT_WIDTH	       (1u << 9)
#define IBEMU_PMA_CAP_EXT_WIDTH_NOIETF (1u << 10)
#define IBEMU_PMA_CAP_SAMPLES_ONLY     (1u << 11)
#define IBEMU_PMA_CAP_XMIT_WAIT	       (1u << 12)
#define IBEMU_PMA_CAP_QP1_DROP	       (1u << 15)

/*
 * PortCounters CounterSelect: in a Set, the counters to reset, one bit per
 * counter in the attribute's order (IBA 16.1.3.5); CounterSelect2 adds
 * PortXmitWait (bit 0) and QP1Dropped (bit 1).
 */
#define IBEMU_PMA_CS_SYMBOL_ERRORS	    (1u << 0)
#define IBEMU_PMA_CS_LINK_ERROR_RECOVERY    (1u << 1)
#define IBEMU_PMA_CS_LINK_DOWNED	    (1u << 2)
#define IBEMU_PMA_CS_RCV_ERRORS		    (1u << 3)
#define IBEMU_PMA_CS_RCV_REMOTE_PHYS_ERRORS (1u << 4)
#define IBEMU_PMA_CS_RCV_SWITCH_RELAY	    (1u << 5)
#define IBEMU_PMA_CS_XMIT_DISCARDS	    (1u << 6)
#define IBEMU_PMA_CS_XMIT_CONSTRAINT	    (1u << 7)
#define IBEMU_PMA_CS_RCV_CONSTRAINT	    (1u << 8)
#define IBEMU_PMA_CS_LOCAL_LINK_INTEGRITY   (1u << 9)
#define IBEMU_PMA_CS_EXCESSIVE_OVERRUN	    (1u << 10)
#define IBEMU_PMA_CS_VL15_DROPPED	    (1u << 11)
#define IBEMU_PMA_CS_XMIT_DATA		    (1u << 12)
#define IBEMU_PMA_CS_RCV_DATA		    (1u << 13)
#define IBEMU_PMA_CS_XMIT_PKTS		    (1u << 14)
#define IBEMU_PMA_CS_RCV_PKTS		    (1u << 15)
#define IBEMU_PMA_CS2_XMIT_WAIT		    (1u << 0)
#define IBEMU_PMA_CS2_QP1_DROPPED	    (1u << 1)

/*
 * ClassPortInfo (IBA 13.4.8.1). GIDs are 16 bytes in network order; TC,
 * SL, FL, QP are 8, 4, 20 and 24 bits.
 */
struct ibemu_mad_class_port_info {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t capability_mask;
	uint32_t capability_mask2; /* 27 */
	uint8_t resp_time_value;   /* 5 */
	uint8_t redirect_gid[16];
	uint8_t redirect_tc;
	uint8_t redirect_sl;
	uint32_t redirect_fl;
	uint16_t redirect_lid;
	uint16_t redirect_pkey;
	uint32_t redirect_qp;
	uint32_t redirect_qkey;
	uint8_t trap_gid[16];
	uint8_t trap_tc;
	uint8_t trap_sl;
	uint32_t trap_fl;
	uint16_t trap_lid;
	uint16_t trap_pkey;
	uint8_t trap_hl;
	uint32_t trap_qp;
	uint32_t trap_qkey;
};

/*
 * PortCounters (IBA 16.1.3.5). Counters stop at all ones; PortXmitData
 * and PortRcvData count 4-byte words.
 */
struct ibemu_mad_port_counters {
	uint8_t port_select;
	uint16_t counter_select;
	uint16_t symbol_error_counter;
	uint8_t link_error_recovery_counter;
	uint8_t link_downed_counter;
	uint16_t port_rcv_errors;
	uint16_t port_rcv_remote_physical_errors;
	uint16_t port_rcv_switch_relay_errors;
	uint16_t port_xmit_discards;
	uint8_t port_xmit_constraint_errors;
	uint8_t port_rcv_constraint_errors;
	uint8_t counter_select2;
	uint8_t local_link_integrity_errors;	 /* 4 */
	uint8_t excessive_buffer_overrun_errors; /* 4 */
	uint16_t qp1_dropped;
	uint16_t vl15_dropped;
	uint32_t port_xmit_data;
	uint32_t port_rcv_data;
	uint32_t port_xmit_pkts;
	uint32_t port_rcv_pkts;
	uint32_t port_xmit_wait;
};

/*
 * PortCountersExtended (IBA 16.1.4.11): 64-bit traffic counters, then
 * 64-bit copies of the error counters (used when ClassPortInfo says the
 * PMA supports them).
 */
struct ibemu_mad_port_counters_ext {
	uint8_t port_select;
	uint16_t counter_select;
	uint32_t counter_select2;
	uint64_t port_xmit_data;
	uint64_t port_rcv_data;
	uint64_t port_xmit_pkts;
	uint64_t port_rcv_pkts;
	uint64_t port_unicast_xmit_pkts;
	uint64_t port_unicast_rcv_pkts;
	uint64_t port_multicast_xmit_pkts;
	uint64_t port_multicast_rcv_pkts;
	uint64_t symbol_error_counter;
	uint64_t link_error_recovery_counter;
	uint64_t link_downed_counter;
	uint64_t port_rcv_errors;
	uint64_t port_rcv_remote_physical_errors;
	uint64_t port_rcv_switch_relay_errors;
	uint64_t port_xmit_discards;
	uint64_t port_xmit_constraint_errors;
	uint64_t port_rcv_constraint_errors;
	uint64_t local_link_integrity_errors;
	uint64_t excessive_buffer_overrun_errors;
	uint64_t vl15_dropped;
	uint64_t port_xmit_wait;
	uint64_t qp1_dropped;
};

int ibemu_mad_class_port_info_encode(const struct ibemu_mad_class_port_info *v,
				     uint8_t *buf, size_t len);
int ibemu_mad_class_port_info_decode(const uint8_t *buf, size_t len,
				     struct ibemu_mad_class_port_info *v);
int ibemu_mad_port_counters_encode(const struct ibemu_mad_port_counters *v,
				   uint8_t *buf, size_t len);
int ibemu_mad_port_counters_decode(const uint8_t *buf, size_t len,
				   struct ibemu_mad_port_counters *v);
int ibemu_mad_port_counters_ext_encode(
	const struct ibemu_mad_port_counters_ext *v, uint8_t *buf, size_t len);
int ibemu_mad_port_counters_ext_decode(const uint8_t *buf, size_t len,
				       struct ibemu_mad_port_counters_ext *v);

extern const struct ibemu_mad_layout ibemu_mad_class_port_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_port_counters_layout;
extern const struct ibemu_mad_layout ibemu_mad_port_counters_ext_layout;

#endif
