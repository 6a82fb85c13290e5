/* SPDX-License-Identifier: MIT */
/*
 * Congestion control attributes (IBA vol 1, Annex A10.4.3), as the CC agent
 * of a switch or CA answers them and a CC manager sets them. All but the
 * CongestionLog sit in the 192 bytes at MAD offset 64; the CongestionLog
 * takes the 224 bytes from offset 32 (see ibemu_mad_cc_payload()).
 *
 * The codecs follow mad_layout.h: encode returns 0, -ENOSPC or -ERANGE;
 * decode returns 0 or -EINVAL and reads no byte past 'len'.
 */
#ifndef IBEMU_MAD_CC_H
#define IBEMU_MAD_CC_H

#include <stddef.h>
#include <stdint.h>

#include "mad.h"

/* Attribute IDs (A10.4.3, table "Congestion Control Attributes"). */
#define IBEMU_CC_ATTR_CLASS_PORT_INFO		0x0001
#define IBEMU_CC_ATTR_NOTICE			0x0002
#define IBEMU_CC_ATTR_CONGESTION_INFO		0x0011
#define IBEMU_CC_ATTR_CONGESTION_KEY_INFO	0x0012
#define IBEMU_CC_ATTR_CONGESTION_LOG		0x0013
#define IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING 0x0014
#define IBEMU_CC_ATTR_SWITCH_PORT_CONG_SETTING	0x0015
#define IBEMU_CC_ATTR_CA_CONGESTION_SETTING	0x0016
#define IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE	0x0017
#define IBEMU_CC_ATTR_TIMESTAMP			0x0018

#define IBEMU_MAD_CONGESTION_INFO_LEN		     3
#define IBEMU_MAD_CONGESTION_KEY_INFO_LEN	     14
#define IBEMU_MAD_CONGESTION_LOG_LEN		     220
#define IBEMU_MAD_SWITCH_CONGESTION_SETTING_LEN	     76
#define IBEMU_MAD_SWITCH_PORT_CONGESTION_SETTING_LEN 128
#define IBEMU_MAD_CA_CONGESTION_SETTING_LEN	     132
#define IBEMU_MAD_CC_TABLE_LEN			     132
#define IBEMU_MAD_CC_TIMESTAMP_LEN		     4
_Static_assert(IBEMU_MAD_CONGESTION_LOG_LEN <= IBEMU_CC_LOG_DATA_LEN &&
		       IBEMU_MAD_CONGESTION_LOG_LEN > IBEMU_CC_DATA_LEN,
	       "only the CongestionLog needs the log data area");
_Static_assert(IBEMU_MAD_CA_CONGESTION_SETTING_LEN <= IBEMU_CC_DATA_LEN &&
		       IBEMU_MAD_CC_TABLE_LEN <= IBEMU_CC_DATA_LEN &&
		       IBEMU_MAD_SWITCH_PORT_CONGESTION_SETTING_LEN <=
			       IBEMU_CC_DATA_LEN &&
		       IBEMU_MAD_SWITCH_CONGESTION_SETTING_LEN <=
			       IBEMU_CC_DATA_LEN,
	       "CC attributes fit the CC data");

/* CongestionLog LogType (A10.4.3.5). */
#define IBEMU_CC_LOG_SWITCH 1
#define IBEMU_CC_LOG_CA	    2

#define IBEMU_CC_LOG_SWITCH_ENTRIES 15
#define IBEMU_CC_LOG_CA_ENTRIES	    13
#define IBEMU_CC_SWITCH_PORT_BLOCK \
	32 /* ports per SwitchPortCongestionSetting */
#define IBEMU_CC_CA_SETTING_ENTRIES 16 /* one per SL */
#define IBEMU_CC_TABLE_BLOCK	    64 /* CCT entries per block */
#define IBEMU_CC_PORT_MASK_LEN	    32 /* 256-bit port masks */

/* CongestionInfo (A10.4.3.3). */
struct ibemu_mad_congestion_info {
	uint16_t congestion_info;
	uint8_t control_table_cap; /* CCT blocks of 64 entries supported */
};

/* CongestionKeyInfo (A10.4.3.4). */
struct ibemu_mad_congestion_key_info {
	uint64_t cc_key;
	uint8_t cc_key_protect_bit; /* 1 */
	uint16_t cc_key_lease_period;
	uint16_t cc_key_violations;
};

/* CongestionLog of a switch (A10.4.3.5, LogType 1). */
struct ibemu_mad_congestion_log_switch {
	uint8_t log_type;
	uint8_t congestion_flags;
	uint16_t log_events_counter;
	uint32_t current_time_stamp;
	uint8_t port_map[IBEMU_CC_PORT_MASK_LEN]; /* ports that marked FECN */
	struct {
		uint16_t slid;
		uint16_t dlid;
		uint8_t sl; /* 4 */
		uint32_t timestamp;
	} entry[IBEMU_CC_LOG_SWITCH_ENTRIES];
};

/* CongestionLog of a CA (A10.4.3.5, LogType 2). */
struct ibemu_mad_congestion_log_ca {
	uint8_t log_type;
	uint8_t congestion_flags;
	uint16_t threshold_event_counter;
	uint16_t threshold_congestion_event_map; /* one bit per SL */
	uint32_t current_time_stamp;
	struct {
		uint32_t local_qp;    /* 24 */
		uint8_t sl;	      /* 4 */
		uint8_t service_type; /* 4 */
		uint32_t remote_qp;   /* 24 */
		uint16_t local_lid;
		uint16_t remote_lid;
		uint32_t timestamp;
	} entry[IBEMU_CC_LOG_CA_ENTRIES];
};

/* SwitchCongestionSetting (A10.4.3.6). */
struct ibemu_mad_switch_congestion_setting {
	uint32_t control_map;
	uint8_t victim_mask[IBEMU_CC_PORT_MASK_LEN];
	uint8_t credit_mask[IBEMU_CC_PORT_MASK_LEN];
	uint8_t threshold;	  /* 4 */
	uint8_t packet_size;	  /* in 64-byte credits */
	uint8_t cs_threshold;	  /* 4 */
	uint16_t cs_return_delay; /* shift (2) and multiplier (14) */
	uint16_t marking_rate;
};

/*
 * SwitchPortCongestionSetting (A10.4.3.7): the 32 ports of the block the
 * attribute modifier selects.
 */
struct ibemu_mad_switch_port_congestion_setting {
	struct {
		uint8_t valid;	      /* 1 */
		uint8_t control_type; /* 1: 0 congestion, 1 credit starvation */
		uint8_t threshold;    /* 4 */
		uint8_t packet_size;
		uint16_t cong_parm; /* Marking_Rate when control_type is 0 */
	} block[IBEMU_CC_SWITCH_PORT_BLOCK];
};

/* CACongestionSetting (A10.4.3.8): one entry per SL. */
struct ibemu_mad_ca_congestion_setting {
	uint16_t port_control;
	uint16_t control_map; /* one bit per SL */
	struct {
		uint16_t ccti_timer;
		uint8_t ccti_increase;
		uint8_t trigger_threshold;
		uint8_t ccti_min;
	} entry[IBEMU_CC_CA_SETTING_ENTRIES];
};

/*
 * CongestionControlTable (A10.4.3.9): the block of 64 entries the
 * attribute modifier selects; each entry's inter-packet delay is
 * multiplier << shift.
 */
struct ibemu_mad_cc_table {
	uint16_t ccti_limit;
	struct {
		uint8_t shift;	     /* 2 */
		uint16_t multiplier; /* 14 */
	} entry[IBEMU_CC_TABLE_BLOCK];
};

/* TimeStamp (A10.4.3.10), in units of 1.024 us. */
struct ibemu_mad_cc_timestamp {
	uint32_t timestamp;
};

/*
 * 256-bit port masks (PortMap, Victim_Mask, Credit_Mask) are big-endian
 * numbers in which bit N stands for port N: port 0 is the lowest bit of
 * the last byte.
 */
static inline int ibemu_mad_port_mask_get(const uint8_t *mask, unsigned port)
{
	return (mask[IBEMU_CC_PORT_MASK_LEN - 1 - port / 8] >> (port % 8)) & 1;
}

static inline void ibemu_mad_port_mask_set(uint8_t *mask, unsigned port, int on)
{
	uint8_t *b = &mask[IBEMU_CC_PORT_MASK_LEN - 1 - port / 8];

	*b = (uint8_t)(on ? *b | 1u << (port % 8) : *b & ~(1u << (port % 8)));
}

/* The LogType of an encoded CongestionLog, or -EINVAL if 'len' is 0. */
int ibemu_mad_congestion_log_type(const uint8_t *buf, size_t len);

int ibemu_mad_congestion_info_encode(const struct ibemu_mad_congestion_info *v,
				     uint8_t *buf, size_t len);
int ibemu_mad_congestion_info_decode(const uint8_t *buf, size_t len,
				     struct ibemu_mad_congestion_info *v);
int ibemu_mad_congestion_key_info_encode(
	const struct ibemu_mad_congestion_key_info *v, uint8_t *buf,
	size_t len);
int ibemu_mad_congestion_key_info_decode(
	const uint8_t *buf, size_t len,
	struct ibemu_mad_congestion_key_info *v);
int ibemu_mad_congestion_log_switch_encode(
	const struct ibemu_mad_congestion_log_switch *v, uint8_t *buf,
	size_t len);
int ibemu_mad_congestion_log_switch_decode(
	const uint8_t *buf, size_t len,
	struct ibemu_mad_congestion_log_switch *v);
int ibemu_mad_congestion_log_ca_encode(
	const struct ibemu_mad_congestion_log_ca *v, uint8_t *buf, size_t len);
int ibemu_mad_congestion_log_ca_decode(const uint8_t *buf, size_t len,
				       struct ibemu_mad_congestion_log_ca *v);
int ibemu_mad_switch_congestion_setting_encode(
	const struct ibemu_mad_switch_congestion_setting *v, uint8_t *buf,
	size_t len);
int ibemu_mad_switch_congestion_setting_decode(
	const uint8_t *buf, size_t len,
	struct ibemu_mad_switch_congestion_setting *v);
int ibemu_mad_switch_port_congestion_setting_encode(
	const struct ibemu_mad_switch_port_congestion_setting *v, uint8_t *buf,
	size_t len);
int ibemu_mad_switch_port_congestion_setting_decode(
	const uint8_t *buf, size_t len,
	struct ibemu_mad_switch_port_congestion_setting *v);
int ibemu_mad_ca_congestion_setting_encode(
	const struct ibemu_mad_ca_congestion_setting *v, uint8_t *buf,
	size_t len);
int ibemu_mad_ca_congestion_setting_decode(
	const uint8_t *buf, size_t len,
	struct ibemu_mad_ca_congestion_setting *v);
int ibemu_mad_cc_table_encode(const struct ibemu_mad_cc_table *v, uint8_t *buf,
			      size_t len);
int ibemu_mad_cc_table_decode(const uint8_t *buf, size_t len,
			      struct ibemu_mad_cc_table *v);
int ibemu_mad_cc_timestamp_encode(const struct ibemu_mad_cc_timestamp *v,
				  uint8_t *buf, size_t len);
int ibemu_mad_cc_timestamp_decode(const uint8_t *buf, size_t len,
				  struct ibemu_mad_cc_timestamp *v);

extern const struct ibemu_mad_layout ibemu_mad_congestion_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_congestion_key_info_layout;
extern const struct ibemu_mad_layout ibemu_mad_congestion_log_switch_layout;
extern const struct ibemu_mad_layout ibemu_mad_congestion_log_ca_layout;
extern const struct ibemu_mad_layout ibemu_mad_switch_congestion_setting_layout;
extern const struct ibemu_mad_layout
	ibemu_mad_switch_port_congestion_setting_layout;
extern const struct ibemu_mad_layout ibemu_mad_ca_congestion_setting_layout;
extern const struct ibemu_mad_layout ibemu_mad_cc_table_layout;
extern const struct ibemu_mad_layout ibemu_mad_cc_timestamp_layout;

#endif
