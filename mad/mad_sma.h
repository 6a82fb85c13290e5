/* SPDX-License-Identifier: MIT */
/*
 * Subnet management attributes (IBA vol 1, 14.2.5), as the SMA answers and
 * the SM sets them: host structs, their encodings and the constants their
 * fields use. Each attribute's wire form fits the 64-byte SMP data
 * (IBEMU_SMP_DATA_LEN); the Notice also has an 80-byte GMP form.
 *
 * The codecs follow mad_layout.h: encode returns 0, -ENOSPC or -ERANGE;
 * decode returns 0 or -EINVAL and reads no byte past 'len'.
 */
#ifndef IBEMU_MAD_SMA_H
#define IBEMU_MAD_SMA_H

#include <stddef.h>
#include <stdint.h>

#include "mad.h"

/* Attribute IDs (IBA 14.2.5, table "Subnet Management Attributes"). */
#define IBEMU_SMP_ATTR_NOTICE	   0x0002
#define IBEMU_SMP_ATTR_NODE_DESC   0x0010
#define IBEMU_SMP_ATTR_NODE_INFO   0x0011
#define IBEMU_SMP_ATTR_SWITCH_INFO 0x0012
#define IBEMU_SMP_ATTR_GUID_INFO   0x0014
#define IBEMU_SMP_ATTR_PORT_INFO   0x0015
#define IBEMU_SMP_ATTR_PKEY_TABLE  0x0016
#define IBEMU_SMP_ATTR_SL2VL_TABLE 0x0017
#define IBEMU_SMP_ATTR_VLARB_TABLE 0x0018
#define IBEMU_SMP_ATTR_LFT	   0x0019
#define IBEMU_SMP_ATTR_RFT	   0x001a
#define IBEMU_SMP_ATTR_MFT	   0x001b
#define IBEMU_SMP_ATTR_SM_INFO	   0x0020
#define IBEMU_SMP_ATTR_VENDOR_DIAG 0x0030
#define IBEMU_SMP_ATTR_LED_INFO	   0x0031

/* Wire lengths of the attributes. */
#define IBEMU_MAD_NODE_DESC_LEN	     64
#define IBEMU_MAD_NODE_INFO_LEN	     40
#define IBEMU_MAD_SWITCH_INFO_LEN    20
#define IBEMU_MAD_GUID_INFO_LEN	     64
#define IBEMU_MAD_PORT_INFO_LEN	     64
#define IBEMU_MAD_PKEY_TABLE_LEN     64
#define IBEMU_MAD_SL2VL_TABLE_LEN    8
#define IBEMU_MAD_VLARB_TABLE_LEN    64
#define IBEMU_MAD_LFT_LEN	     64
#define IBEMU_MAD_MFT_LEN	     64
#define IBEMU_MAD_SM_INFO_LEN	     21
#define IBEMU_MAD_NOTICE_LEN	     80 /* with IssuerGID: GMPs */
#define IBEMU_MAD_NOTICE_SMP_LEN     64 /* what fits an SMP: no IssuerGID */
#define IBEMU_MAD_NOTICE_DETAILS_LEN 54

_Static_assert(IBEMU_MAD_PORT_INFO_LEN <= IBEMU_SMP_DATA_LEN &&
		       IBEMU_MAD_NODE_INFO_LEN <= IBEMU_SMP_DATA_LEN &&
		       IBEMU_MAD_SWITCH_INFO_LEN <= IBEMU_SMP_DATA_LEN &&
		       IBEMU_MAD_SM_INFO_LEN <= IBEMU_SMP_DATA_LEN &&
		       IBEMU_MAD_NOTICE_SMP_LEN == IBEMU_SMP_DATA_LEN,
	       "SMP attributes fit the SMP data");
_Static_assert(IBEMU_MAD_NOTICE_LEN <= IBEMU_PMA_DATA_LEN,
	       "a Notice fits GS data");
_Static_assert(10 + IBEMU_MAD_NOTICE_DETAILS_LEN == IBEMU_MAD_NOTICE_SMP_LEN,
	       "DataDetails run from byte 10 to the end of the SMP data");

/* Entries per block, the attribute modifier selecting the block. */
#define IBEMU_MAD_GUID_INFO_BLOCK  8
#define IBEMU_MAD_PKEY_TABLE_BLOCK 32
#define IBEMU_MAD_VLARB_BLOCK	   32
#define IBEMU_MAD_LFT_BLOCK	   64
#define IBEMU_MAD_MFT_BLOCK	   32

/* NodeInfo NodeType (IBA 14.2.5.3). */
#define IBEMU_MAD_NODE_CA     1
#define IBEMU_MAD_NODE_SWITCH 2
#define IBEMU_MAD_NODE_ROUTER 3

/* PortInfo PortState and PortPhysicalState (IBA 14.2.5.6). */
#define IBEMU_MAD_PORT_NOP    0 /* "no state change" in a Set */
#define IBEMU_MAD_PORT_DOWN   1
#define IBEMU_MAD_PORT_INIT   2
#define IBEMU_MAD_PORT_ARMED  3
#define IBEMU_MAD_PORT_ACTIVE 4

#define IBEMU_MAD_PHYS_NOP		0
#define IBEMU_MAD_PHYS_SLEEP		1
#define IBEMU_MAD_PHYS_POLLING		2
#define IBEMU_MAD_PHYS_DISABLED		3
#define IBEMU_MAD_PHYS_TRAINING		4
#define IBEMU_MAD_PHYS_LINKUP		5
#define IBEMU_MAD_PHYS_LINK_ERR_RECOVER 6
#define IBEMU_MAD_PHYS_PHY_TEST		7

/* LinkWidth* bits, LinkSpeed* and LinkSpeedExt* bits. */
#define IBEMU_MAD_WIDTH_1X  0x01
#define IBEMU_MAD_WIDTH_4X  0x02
#define IBEMU_MAD_WIDTH_8X  0x04
#define IBEMU_MAD_WIDTH_12X 0x08
#define IBEMU_MAD_WIDTH_2X  0x10

#define IBEMU_MAD_SPEED_SDR 0x1
#define IBEMU_MAD_SPEED_DDR 0x2
#define IBEMU_MAD_SPEED_QDR 0x4

#define IBEMU_MAD_SPEED_EXT_FDR 0x1
#define IBEMU_MAD_SPEED_EXT_EDR 0x2
#define IBEMU_MAD_SPEED_EXT_HDR 0x4
#define IBEMU_MAD_SPEED_EXT_NDR 0x8

/* NeighborMTU, MTUCap (IBA 14.2.5.6, as in the LRH/path records). */
#define IBEMU_MAD_MTU_256  1
#define IBEMU_MAD_MTU_512  2
#define IBEMU_MAD_MTU_1024 3
#define IBEMU_MAD_MTU_2048 4
#define IBEMU_MAD_MTU_4096 5

/* VLCap, OperationalVLs: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14. */
#define IBEMU_MAD_VLS_1	 1
#define IBEMU_MAD_VLS_2	 2
#define IBEMU_MAD_VLS_4	 3
#define IBEMU_MAD_VLS_8	 4
#define IBEMU_MAD_VLS_15 5

/* PortInfo CapabilityMask bits (IBA 14.2.5.6). */
#define IBEMU_MAD_CAP_IS_SM			 (1u << 1)
#define IBEMU_MAD_CAP_NOTICE			 (1u << 2)
#define IBEMU_MAD_CAP_TRAP			 (1u << 3)
#define IBEMU_MAD_CAP_SL_MAPPING		 (1u << 6)
#define IBEMU_MAD_CAP_SM_DISABLED		 (1u << 10)
#define IBEMU_MAD_CAP_SYSTEM_IMAGE_GUID		 (1u << 11)
#define IBEMU_MAD_CAP_EXTENDED_SPEEDS		 (1u << 14)
#define IBEMU_MAD_CAP_CAPABILITY_MASK2		 (1u << 15)
#define IBEMU_MAD_CAP_COMM_MGMT			 (1u << 16)
#define IBEMU_MAD_CAP_VENDOR_CLASS		 (1u << 20)
#define IBEMU_MAD_CAP_DR_NOTICE			 (1u << 21)
#define IBEMU_MAD_CAP_CAPABILITY_MASK_NOTICE	 (1u << 22)
#define IBEMU_MAD_CAP_LINK_ROUND_TRIP_LATENCY	 (1u << 24)
#define IBEMU_MAD_CAP_CLIENT_REREGISTRATION	 (1u << 25)
#define IBEMU_MAD_CAP_OTHER_LOCAL_CHANGES_NOTICE (1u << 26)
#define IBEMU_MAD_CAP_MULTICAST_FDB_TOP		 (1u << 30)

/* VLArbitrationTable attribute modifier (IBA 14.2.5.9). */
#define IBEMU_MAD_VLARB_LOW_0_31   1
#define IBEMU_MAD_VLARB_HIGH_0_31  2
#define IBEMU_MAD_VLARB_LOW_32_63  3
#define IBEMU_MAD_VLARB_HIGH_32_63 4

/* SMInfo SMState (IBA 14.2.5.13). */
#define IBEMU_MAD_SM_NOT_ACTIVE	 0
#define IBEMU_MAD_SM_DISCOVERING 1
#define IBEMU_MAD_SM_STANDBY	 2
#define IBEMU_MAD_SM_MASTER	 3

/* Notice Type (IBA 13.4.8.2) and the SMA's trap numbers (IBA 14.2.5.1). */
#define IBEMU_MAD_NOTICE_FATAL	  0
#define IBEMU_MAD_NOTICE_URGENT	  1
#define IBEMU_MAD_NOTICE_SECURITY 2
#define IBEMU_MAD_NOTICE_SM	  3
#define IBEMU_MAD_NOTICE_INFO	  4

#define IBEMU_MAD_TRAP_LINK_STATE_CHANGE   128
#define IBEMU_MAD_TRAP_LINK_INTEGRITY	   129
#define IBEMU_MAD_TRAP_BUFFER_OVERRUN	   130
#define IBEMU_MAD_TRAP_FLOW_WATCHDOG	   131
#define IBEMU_MAD_TRAP_LOCAL_CHANGES	   144
#define IBEMU_MAD_TRAP_SYSTEM_IMAGE_GUID   145
#define IBEMU_MAD_TRAP_BAD_MKEY		   256
#define IBEMU_MAD_TRAP_BAD_PKEY		   257
#define IBEMU_MAD_TRAP_BAD_QKEY		   258
#define IBEMU_MAD_TRAP_SWITCH_EXT_BAD_PKEY 259

/* NodeDescription (IBA 14.2.5.2): UTF-8, NUL-padded, not NUL-terminated. */
struct ibemu_mad_node_desc {
	char str[IBEMU_MAD_NODE_DESC_LEN];
};

/* NodeInfo (IBA 14.2.5.3). */
struct ibemu_mad_node_info {
	uint8_t base_version;
	uint8_t class_version;
	uint8_t node_type;
	uint8_t num_ports;
	uint64_t system_image_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	uint16_t partition_cap;
	uint16_t device_id;
	uint32_t revision;
	uint8_t local_port_num;
	uint32_t vendor_id; /* 24 bits */
};

/* SwitchInfo (IBA 14.2.5.4). */
struct ibemu_mad_switch_info {
	uint16_t linear_fdb_cap;
	uint16_t random_fdb_cap;
	uint16_t multicast_fdb_cap;
	uint16_t linear_fdb_top;
	uint8_t default_port;
	uint8_t default_mcast_primary_port;
	uint8_t default_mcast_not_primary_port;
	uint8_t life_time_value;   /* 5 bits */
	uint8_t port_state_change; /* 1 bit; a Set writes 1 to clear it */
	uint8_t optimized_sl2vl_programming; /* 2 bits */
	uint16_t lids_per_port;
	uint16_t partition_enforcement_cap;
	uint8_t inbound_enforcement_cap;
	uint8_t outbound_enforcement_cap;
	uint8_t filter_raw_inbound_cap;
	uint8_t filter_raw_outbound_cap;
	uint8_t enhanced_port0;
	uint16_t multicast_fdb_top;
};

/* GUIDInfo (IBA 14.2.5.5): one block of 8 port GUIDs. */
struct ibemu_mad_guid_info {
	uint64_t guid[IBEMU_MAD_GUID_INFO_BLOCK];
};

/* PortInfo (IBA 14.2.5.6), every field; widths in bits where not whole. */
struct ibemu_mad_port_info {
	uint64_t m_key;
	uint64_t gid_prefix;
	uint16_t lid;
	uint16_t master_sm_lid;
	uint32_t capability_mask;
	uint16_t diag_code;
	uint16_t m_key_lease_period;
	uint8_t local_port_num;
	uint8_t link_width_enabled;
	uint8_t link_width_supported;
	uint8_t link_width_active;
	uint8_t link_speed_supported;	 /* 4 */
	uint8_t port_state;		 /* 4 */
	uint8_t port_phys_state;	 /* 4 */
	uint8_t link_down_default_state; /* 4 */
	uint8_t m_key_protect_bits;	 /* 2 */
	uint8_t lmc;			 /* 3 */
	uint8_t link_speed_active;	 /* 4 */
	uint8_t link_speed_enabled;	 /* 4 */
	uint8_t neighbor_mtu;		 /* 4 */
	uint8_t master_sm_sl;		 /* 4 */
	uint8_t vl_cap;			 /* 4 */
	uint8_t init_type;		 /* 4 */
	uint8_t vl_high_limit;
	uint8_t vl_arb_high_cap;
	uint8_t vl_arb_low_cap;
	uint8_t init_type_reply;		/* 4 */
	uint8_t mtu_cap;			/* 4 */
	uint8_t vl_stall_count;			/* 3 */
	uint8_t hoq_life;			/* 5 */
	uint8_t operational_vls;		/* 4 */
	uint8_t partition_enforcement_inbound;	/* 1 */
	uint8_t partition_enforcement_outbound; /* 1 */
	uint8_t filter_raw_inbound;		/* 1 */
	uint8_t filter_raw_outbound;		/* 1 */
	uint16_t m_key_violations;
	uint16_t p_key_violations;
	uint16_t q_key_violations;
	uint8_t guid_cap;
	uint8_t client_reregister;	     /* 1 */
	uint8_t mcast_pkey_trap_suppression; /* 2 */
	uint8_t subnet_timeout;		     /* 5 */
	uint8_t resp_time_value;	     /* 5 */
	uint8_t local_phy_errors;	     /* 4 */
	uint8_t overrun_errors;		     /* 4 */
	uint16_t max_credit_hint;
	uint32_t link_round_trip_latency; /* 24 */
	uint16_t capability_mask2;
	uint8_t link_speed_ext_active;	  /* 4 */
	uint8_t link_speed_ext_supported; /* 4 */
	uint8_t link_speed_ext_enabled;	  /* 5 */
};

/* P_KeyTable (IBA 14.2.5.7): one block; bit 15 is full membership. */
struct ibemu_mad_pkey_table {
	uint16_t pkey[IBEMU_MAD_PKEY_TABLE_BLOCK];
};

/* SLtoVLMappingTable (IBA 14.2.5.8): the VL of each SL. */
struct ibemu_mad_sl2vl_table {
	uint8_t vl[16];
};

/* VLArbitrationTable (IBA 14.2.5.9): one block of 32 (VL, weight). */
struct ibemu_mad_vlarb_table {
	struct {
		uint8_t vl;	/* 4 */
		uint8_t weight; /* in 64-byte units */
	} entry[IBEMU_MAD_VLARB_BLOCK];
};

/* LinearForwardingTable (IBA 14.2.5.10): output ports of 64 LIDs. */
struct ibemu_mad_lft {
	uint8_t port[IBEMU_MAD_LFT_BLOCK];
};

/*
 * MulticastForwardingTable (IBA 14.2.5.12): port masks of 32 MLIDs, for
 * the 16 ports of one position (bits 31-28 of the modifier); bit 0 is the
 * lowest-numbered port of the position.
 */
struct ibemu_mad_mft {
	uint16_t port_mask[IBEMU_MAD_MFT_BLOCK];
};

/* SMInfo (IBA 14.2.5.13). */
struct ibemu_mad_sm_info {
	uint64_t guid;
	uint64_t sm_key;
	uint32_t act_count;
	uint8_t priority; /* 4 */
	uint8_t sm_state; /* 4 */
};

/*
 * Notice (IBA 13.4.8.2), the attribute of Trap() and Report(). For a
 * generic notice (is_generic 1) 'producer_type' is the producer's node
 * type and 'trap_number' the trap; for a vendor notice they are VendorID
 * and DeviceID. DataDetails depend on the trap (the trap_* layouts below).
 */
struct ibemu_mad_notice {
	uint8_t is_generic;	/* 1 */
	uint8_t type;		/* 7 */
	uint32_t producer_type; /* 24 */
	uint16_t trap_number;
	uint16_t issuer_lid;
	uint8_t toggle; /* 1 */
	uint16_t count; /* 15 */
	uint8_t data_details[IBEMU_MAD_NOTICE_DETAILS_LEN];
	uint8_t issuer_gid[16]; /* network order; only in the 80-byte form */
};

/* DataDetails of trap 128: the LID of the port whose link changed. */
struct ibemu_mad_trap_lid {
	uint16_t lid;
};

/* DataDetails of traps 129, 130 and 131: a LID and a port number. */
struct ibemu_mad_trap_port {
	uint16_t lid;
	uint8_t port_num;
};

/* DataDetails of trap 144 (local changes, capability mask changes). */
struct ibemu_mad_trap_local_changes {
	uint16_t lid;
	uint8_t other_local_changes; /* 1 */
	uint32_t capability_mask;
	uint8_t link_speed_enabled_change; /* 1 */
	uint8_t link_width_enabled_change; /* 1 */
	uint8_t node_description_change;   /* 1 */
	uint16_t capability_mask2;
};

int ibemu_mad_node_desc_encode(const struct ibemu_mad_node_desc *v,
			       uint8_t *buf, size_t len);
int ibemu_mad_node_desc_decode(const uint8_t *buf, size_t len,
			       struct ibemu_mad_node_desc *v);
int ibemu_mad_node_info_encode(const struct ibemu_mad_node_info *v,
			       uint8_t *buf, size_t len);
int ibemu_mad_node_info_decode(const uint8_t *buf, size_t len,
			       struct ibemu_mad_node_info *v);
int ibemu_mad_switch_info_encode(const struct ibemu_mad_switch_info *v,
				 uint8_t *buf, size_t len);
int ibemu_mad_switch_info_decode(const uint8_t *buf, size_t len,
				 struct ibemu_mad_switch_info *v);
int ibemu_mad_guid_info_encode(const struct ibemu_mad_guid_info *v,
			       uint8_t *buf, size_t len);
int ibemu_mad_guid_info_decode(const uint8_t *buf, size_t len,
			       struct ibemu_mad_guid_info *v);
int ibemu_mad_port_info_encode(const struct ibemu_mad_port_info *v,
			       uint8_t *buf, size_t len);
int ibemu_mad_port_info_decode(const uint8_t *buf, size_t len,
			       struct ibemu_mad_port_info *v);
int ibemu_mad_pkey_table_encode(const struct ibemu_mad_pkey_table *v,
				uint8_t *buf, size_t len);
int ibemu_mad_pkey_table_decode(const uint8_t *buf, size_t len,
				struct ibemu_mad_pkey_table *v);
int ibemu_mad_sl2vl_table_encode(const struct ibemu_mad_sl2vl_table *v,
				 uint8_t *buf, size_t len);
int ibemu_mad_sl2vl_table_decode(const uint8_t *buf, size_t len,
				 struct ibemu_mad_sl2vl_table *v);
int ibemu_mad_vlarb_table_encode(const struct ibemu_mad_vlarb_table *v,
				 uint8_t *buf, size_t len);
int ibemu_mad_vlarb_table_decode(const uint8_t *buf, size_t len,
				 struct ibemu_mad_vlarb_table *v);
int ibemu_mad_lft_encode(const struct ibemu_mad_lft *v, uint8_t *buf,
			 size_t len);
int ibemu_mad_lft_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_lft *v);
int ibemu_mad_mft_encode(const struct ibemu_mad_mft *v, uint8_t *buf,
			 size_t len);
int ibemu_mad_mft_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_mft *v);
int ibemu_mad_sm_info_encode(const struct ibemu_mad_sm_info *v, uint8_t *buf,
			     size_t len);
int ibemu_mad_sm_info_decode(const uint8_t *buf, size_t len,
			     struct ibemu_mad_sm_info *v);
/*
 * The Notice has two forms: 'len' of at least IBEMU_MAD_NOTICE_LEN (GS
 * data) carries IssuerGID; 'len' of IBEMU_MAD_NOTICE_SMP_LEN up to that (SMP
 * data) leaves it out (encode ignores it, decode sets it to zeros).
 */
int ibemu_mad_notice_encode(const struct ibemu_mad_notice *v, uint8_t *buf,
			    size_t len);
int ibemu_mad_notice_decode(const uint8_t *buf, size_t len,
			    struct ibemu_mad_notice *v);
/* The trap details codecs work on the Notice's DataDetails bytes. */
int ibemu_mad_trap_lid_encode(const struct ibemu_mad_trap_lid *v, uint8_t *buf,
			      size_t len);
int ibemu_mad_trap_lid_decode(const uint8_t *buf, size_t len,
			      struct ibemu_mad_trap_lid *v);
int ibemu_mad_trap_port_encode(const struct ibemu_mad_trap_port *v,
			       uint8_t *buf, size_t len);
int ibemu_mad_trap_port_decode(const uint8_t *buf, size_t len,
			       struct ibemu_mad_trap_port *v);
int ibemu_mad_trap_local_changes_encode(
	const struct ibemu_mad_trap_local_changes *v, uint8_t *buf, size_t len);
int ibemu_mad_trap_local_changes_decode(const uint8_t *buf, size_t len,
					struct ibemu_mad_trap_local_changes *v);

extern const struct ibemu_mad_layout ibemu_mad_node_desc_layout;
extern const struct ibemu_mad_layout ibemu_mad_node_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_switch_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_guid_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_port_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_pkey_table_layout;
extern const struct ibemu_mad_layout ibemu_mad_sl2vl_table_layout;
extern const struct ibemu_mad_layout ibemu_mad_vlarb_table_layout;
extern const struct ibemu_mad_layout ibemu_mad_lft_layout;
extern const struct ibemu_mad_layout ibemu_mad_mft_layout;
extern const struct ibemu_mad_layout ibemu_mad_sm_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_notice_layout;
extern const struct ibemu_mad_layout ibemu_mad_notice_smp_layout;
extern const struct ibemu_mad_layout ibemu_mad_trap_lid_layout;
extern const struct ibemu_mad_layout ibemu_mad_trap_port_layout;
extern const struct ibemu_mad_layout ibemu_mad_trap_local_changes_layout;

#endif
