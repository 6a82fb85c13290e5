// SPDX-License-Identifier: MIT
/*
 * The congestion control attributes as layouts, transcribed from the tables
 * of IBA vol 1, Annex A10.4.3. Entries of the lists (log events, per-port
 * and per-SL settings, CCT entries) are struct arrays with a fixed stride.
 */
#include <errno.h>

#include "mad_cc.h"

/* A10.4.3.3 */
#define T struct ibemu_mad_congestion_info
static const struct ibemu_mad_field congestion_info_fields[] = {
	IBEMU_MAD_F(T, congestion_info, 0, 16, "CongestionInfo"),
	IBEMU_MAD_F(T, control_table_cap, 16, 8, "ControlTableCap"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_congestion_info_layout =
	IBEMU_MAD_LAYOUT("CongestionInfo", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_CONGESTION_INFO,
			 struct ibemu_mad_congestion_info,
			 IBEMU_MAD_CONGESTION_INFO_LEN, congestion_info_fields);

/* A10.4.3.4 */
#define T struct ibemu_mad_congestion_key_info
static const struct ibemu_mad_field congestion_key_info_fields[] = {
	IBEMU_MAD_F(T, cc_key, 0, 64, "CC_Key"),
	IBEMU_MAD_F(T, cc_key_protect_bit, 64, 1, "CC_KeyProtectBit"),
	IBEMU_MAD_F(T, cc_key_lease_period, 80, 16, "CC_KeyLeasePeriod"),
	IBEMU_MAD_F(T, cc_key_violations, 96, 16, "CC_KeyViolations"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_congestion_key_info_layout =
	IBEMU_MAD_LAYOUT("CongestionKeyInfo", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_CONGESTION_KEY_INFO,
			 struct ibemu_mad_congestion_key_info,
			 IBEMU_MAD_CONGESTION_KEY_INFO_LEN,
			 congestion_key_info_fields);

/* A10.4.3.5, switch form: 40 bytes of header, then 15 events of 12 bytes. */
#define T struct ibemu_mad_congestion_log_switch
#define E(m, off, width, name)                       \
	IBEMU_MAD_S(T, entry, m, 320 + (off), width, \
		    IBEMU_CC_LOG_SWITCH_ENTRIES, 96, name)
static const struct ibemu_mad_field congestion_log_switch_fields[] = {
	IBEMU_MAD_F(T, log_type, 0, 8, "LogType"),
	IBEMU_MAD_F(T, congestion_flags, 8, 8, "CongestionFlags"),
	IBEMU_MAD_F(T, log_events_counter, 16, 16, "LogEventsCounter"),
	IBEMU_MAD_F(T, current_time_stamp, 32, 32, "CurrentTimeStamp"),
	IBEMU_MAD_A(T, port_map, 64, 8, IBEMU_CC_PORT_MASK_LEN, 8, "PortMap"),
	E(slid, 0, 16, "SLID"),
	E(dlid, 16, 16, "DLID"),
	E(sl, 32, 4, "SL"),
	E(timestamp, 64, 32, "Timestamp"),
};
#undef E
#undef T

const struct ibemu_mad_layout ibemu_mad_congestion_log_switch_layout =
	IBEMU_MAD_LAYOUT("CongestionLogSwitch", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_CONGESTION_LOG,
			 struct ibemu_mad_congestion_log_switch,
			 IBEMU_MAD_CONGESTION_LOG_LEN,
			 congestion_log_switch_fields);

/*
 * A10.4.3.5, CA form: 12 bytes of header (16 reserved bits before
 * CurrentTimeStamp keep it 32-bit aligned), then 13 events of 16 bytes.
 */
#define T struct ibemu_mad_congestion_log_ca
#define E(m, off, width, name)                                               \
	IBEMU_MAD_S(T, entry, m, 96 + (off), width, IBEMU_CC_LOG_CA_ENTRIES, \
		    128, name)
static const struct ibemu_mad_field congestion_log_ca_fields[] = {
	IBEMU_MAD_F(T, log_type, 0, 8, "LogType"),
	IBEMU_MAD_F(T, congestion_flags, 8, 8, "CongestionFlags"),
	IBEMU_MAD_F(T, threshold_event_counter, 16, 16,
		    "ThresholdEventCounter"),
	IBEMU_MAD_F(T, threshold_congestion_event_map, 32, 16,
		    "ThresholdCongestionEventMap"),
	IBEMU_MAD_F(T, current_time_stamp, 64, 32, "CurrentTimeStamp"),
	E(local_qp, 0, 24, "Local_QP_CN_Entry"),
	E(sl, 24, 4, "SL_CN_Entry"),
	E(service_type, 28, 4, "Service_Type_CN_Entry"),
	E(remote_qp, 32, 24, "Remote_QP_Number_CN_Entry"),
	E(local_lid, 64, 16, "Local_LID_CN"),
	E(remote_lid, 80, 16, "Remote_LID_CN_Entry"),
	E(timestamp, 96, 32, "Timestamp_CN_Entry"),
};
#undef E
#undef T

const struct ibemu_mad_layout ibemu_mad_congestion_log_ca_layout =
	IBEMU_MAD_LAYOUT("CongestionLogCA", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_CONGESTION_LOG,
			 struct ibemu_mad_congestion_log_ca,
			 IBEMU_MAD_CONGESTION_LOG_LEN,
			 congestion_log_ca_fields);

/* A10.4.3.6 */
#define T struct ibemu_mad_switch_congestion_setting
static const struct ibemu_mad_field switch_congestion_setting_fields[] = {
	IBEMU_MAD_F(T, control_map, 0, 32, "Control_Map"),
	IBEMU_MAD_A(T, victim_mask, 32, 8, IBEMU_CC_PORT_MASK_LEN, 8,
		    "Victim_Mask"),
	IBEMU_MAD_A(T, credit_mask, 288, 8, IBEMU_CC_PORT_MASK_LEN, 8,
		    "Credit_Mask"),
	IBEMU_MAD_F(T, threshold, 544, 4, "Threshold"),
	IBEMU_MAD_F(T, packet_size, 552, 8, "Packet_Size"),
	IBEMU_MAD_F(T, cs_threshold, 560, 4, "CS_Threshold"),
	IBEMU_MAD_F(T, cs_return_delay, 576, 16, "CS_ReturnDelay"),
	IBEMU_MAD_F(T, marking_rate, 592, 16, "Marking_Rate"),
};
#undef T

const struct ibemu_mad_layout ibemu_mad_switch_congestion_setting_layout =
	IBEMU_MAD_LAYOUT("SwitchCongestionSetting", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING,
			 struct ibemu_mad_switch_congestion_setting,
			 IBEMU_MAD_SWITCH_CONGESTION_SETTING_LEN,
			 switch_congestion_setting_fields);

/* A10.4.3.7: 32 elements of Valid, Control_Type, 2 reserved, ... */
#define T struct ibemu_mad_switch_port_congestion_setting
#define E(m, off, width, name)                                               \
	IBEMU_MAD_S(T, block, m, off, width, IBEMU_CC_SWITCH_PORT_BLOCK, 32, \
		    name)
static const struct ibemu_mad_field switch_port_congestion_setting_fields[] = {
	E(valid, 0, 1, "Valid"),
	E(control_type, 1, 1, "Control_Type"),
	E(threshold, 4, 4, "Threshold"),
	E(packet_size, 8, 8, "Packet_Size"),
	E(cong_parm, 16, 16, "Cong_Parm"),
};
#undef E
#undef T

const struct ibemu_mad_layout ibemu_mad_switch_port_congestion_setting_layout =
	IBEMU_MAD_LAYOUT("SwitchPortCongestionSetting", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_SWITCH_PORT_CONG_SETTING,
			 struct ibemu_mad_switch_port_congestion_setting,
			 IBEMU_MAD_SWITCH_PORT_CONGESTION_SETTING_LEN,
			 switch_port_congestion_setting_fields);

/* A10.4.3.8: entries of 8 bytes, the last 24 bits reserved. */
#define T struct ibemu_mad_ca_congestion_setting
#define E(m, off, width, name)                      \
	IBEMU_MAD_S(T, entry, m, 32 + (off), width, \
		    IBEMU_CC_CA_SETTING_ENTRIES, 64, name)
static const struct ibemu_mad_field ca_congestion_setting_fields[] = {
	IBEMU_MAD_F(T, port_control, 0, 16, "Port_Control"),
	IBEMU_MAD_F(T, control_map, 16, 16, "Control_Map"),
	E(ccti_timer, 0, 16, "CCTI_Timer"),
	E(ccti_increase, 16, 8, "CCTI_Increase"),
	E(trigger_threshold, 24, 8, "Trigger_Threshold"),
	E(ccti_min, 32, 8, "CCTI_Min"),
};
#undef E
#undef T

const struct ibemu_mad_layout ibemu_mad_ca_congestion_setting_layout =
	IBEMU_MAD_LAYOUT("CACongestionSetting", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_CA_CONGESTION_SETTING,
			 struct ibemu_mad_ca_congestion_setting,
			 IBEMU_MAD_CA_CONGESTION_SETTING_LEN,
			 ca_congestion_setting_fields);

/* A10.4.3.9: CCTI_Limit, 16 reserved bits, 64 entries of 16 bits. */
#define T struct ibemu_mad_cc_table
#define E(m, off, width, name)                                                \
	IBEMU_MAD_S(T, entry, m, 32 + (off), width, IBEMU_CC_TABLE_BLOCK, 16, \
		    name)
static const struct ibemu_mad_field cc_table_fields[] = {
	IBEMU_MAD_F(T, ccti_limit, 0, 16, "CCTI_Limit"),
	E(shift, 0, 2, "CCT_Shift"),
	E(multiplier, 2, 14, "CCT_Multiplier"),
};
#undef E
#undef T

const struct ibemu_mad_layout ibemu_mad_cc_table_layout = IBEMU_MAD_LAYOUT(
	"CongestionControlTable", IBEMU_MAD_CLASS_CC,
	IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, struct ibemu_mad_cc_table,
	IBEMU_MAD_CC_TABLE_LEN, cc_table_fields);

/* A10.4.3.10 */
static const struct ibemu_mad_field cc_timestamp_fields[] = {
	IBEMU_MAD_F(struct ibemu_mad_cc_timestamp, timestamp, 0, 32,
		    "Timestamp"),
};

const struct ibemu_mad_layout ibemu_mad_cc_timestamp_layout =
	IBEMU_MAD_LAYOUT("TimeStamp", IBEMU_MAD_CLASS_CC,
			 IBEMU_CC_ATTR_TIMESTAMP, struct ibemu_mad_cc_timestamp,
			 IBEMU_MAD_CC_TIMESTAMP_LEN, cc_timestamp_fields);

IBEMU_MAD_DEFINE_CODEC(congestion_info)
IBEMU_MAD_DEFINE_CODEC(congestion_key_info)
IBEMU_MAD_DEFINE_CODEC(congestion_log_switch)
IBEMU_MAD_DEFINE_CODEC(congestion_log_ca)
IBEMU_MAD_DEFINE_CODEC(switch_congestion_setting)
IBEMU_MAD_DEFINE_CODEC(switch_port_congestion_setting)
IBEMU_MAD_DEFINE_CODEC(ca_congestion_setting)
IBEMU_MAD_DEFINE_CODEC(cc_table)
IBEMU_MAD_DEFINE_CODEC(cc_timestamp)

int ibemu_mad_congestion_log_type(const uint8_t *buf, size_t len)
{
	/* LogType is the first byte of both forms (A10.4.3.5). */
	if (!len)
		return -EINVAL;
	return buf[0];
}
