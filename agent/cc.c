// SPDX-License-Identifier: MIT
/*
 * The congestion control agent (IBA Annex A10, class 0x21 version 2): it
 * decodes what a CC manager sets into the node models' own settings
 * (switch and switch port congestion settings in switch/, each CA port's
 * congestion setting and Congestion Control Table in hca/), keeps the
 * CC_Key, and answers with them, after the checks of A10.4. The switch
 * relay (switch/cc_mark.c) and the sources on HCA ports (hca/cc.c) act
 * on them and fill the CongestionLog this agent reads out.
 */
#include <string.h>

#include "agent_int.h"
#include "hca.h"
#include "switch.h"

_Static_assert(IBEMU_CC_PORT_MASK_LEN == IBEMU_SWITCH_CC_MASK_BYTES,
	       "a SwitchCongestionSetting port mask is the switch's");
_Static_assert(IBEMU_CC_CA_SETTING_ENTRIES == IBEMU_HCA_CC_SLS,
	       "a CACongestionSetting entry per SL the HCA keeps");
_Static_assert(IBEMU_CC_TABLE_BLOCK == IBEMU_HCA_CCT_BLOCK,
	       "a CongestionControlTable block is the HCA's");

/* CC_Key state serves the whole switch (port 0) or one CA port. */
static struct ibemu_agent_port *key_port(struct ibemu_agent_req *r)
{
	return ibemu__agent_port(
		r->e, ibemu__agent_mgmt_port(r->e, r->node, r->port));
}

static uint8_t *payload(struct ibemu_agent_req *r)
{
	return r->resp + (r->attr_id == IBEMU_CC_ATTR_CONGESTION_LOG
				  ? IBEMU_CC_LOG_DATA_OFF
				  : IBEMU_CC_DATA_OFF);
}

static struct ibemu_hca_cc *ca_cc(struct ibemu_agent_req *r, int create);

/* The CC TimeStamp clock: 1.024 us units, wrapping (A10.4.3.10). */
static uint32_t timestamp(const struct ibemu_engine *e)
{
	return (uint32_t)(ibemu_engine_now(e) / 1024000u);
}

static int class_port_info(struct ibemu_agent_req *r)
{
	struct ibemu_mad_class_port_info cpi;

	memset(&cpi, 0, sizeof(cpi));
	cpi.base_version = IBEMU_MAD_BASE_VERSION;
	cpi.class_version = IBEMU_MAD_CC_CLASS_VERSION;
	cpi.resp_time_value = IBEMU_AGENT_RESP_TIME;
	IBEMU_BUG_ON(ibemu_mad_class_port_info_encode(&cpi, payload(r),
						      IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/* A10.4.3.3: a CA has a Congestion Control Table, a switch none. */
static int congestion_info(struct ibemu_agent_req *r)
{
	struct ibemu_mad_congestion_info ci = {
		.congestion_info = 0,
		.control_table_cap = ibemu__agent_is_switch(r->e, r->node)
					     ? 0
					     : IBEMU_HCA_CCT_BLOCKS,
	};

	IBEMU_BUG_ON(ibemu_mad_congestion_info_encode(&ci, payload(r),
						      IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

static int congestion_key_info(struct ibemu_agent_req *r)
{
	struct ibemu_agent_port *ap = key_port(r);
	struct ibemu_mad_congestion_key_info ki;

	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_congestion_key_info_decode(r->req + IBEMU_CC_DATA_OFF,
						     IBEMU_CC_DATA_LEN, &ki);
		ap->cc_key = ki.cc_key;
		ap->cc_key_protect = ki.cc_key_protect_bit;
		ap->cc_key_lease_period = ki.cc_key_lease_period;
		if (!ki.cc_key_violations)
			ap->cc_key_violations = 0;
	}
	ki = (struct ibemu_mad_congestion_key_info){
		.cc_key = r->hide_mkey ? 0 : ap->cc_key,
		.cc_key_protect_bit = ap->cc_key_protect,
		.cc_key_lease_period = ap->cc_key_lease_period,
		.cc_key_violations = ap->cc_key_violations,
	};
	IBEMU_BUG_ON(ibemu_mad_congestion_key_info_encode(&ki, payload(r),
							  IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * A10.4.3.5: the events logged since the last read, newest first; reading
 * the log clears it (entries, port or SL map), while the event counter
 * keeps counting.
 */
static void switch_log(struct ibemu_agent_req *r)
{
	struct ibemu_switch_cc_log *cur = ibemu_switch_cc_log(r->e, r->node);
	struct ibemu_mad_congestion_log_switch log;
	unsigned i, k;

	memset(&log, 0, sizeof(log));
	log.log_type = IBEMU_CC_LOG_SWITCH;
	log.current_time_stamp = timestamp(r->e);
	if (cur) {
		log.log_events_counter = cur->events;
		memcpy(log.port_map, cur->port_map, sizeof(log.port_map));
		for (i = 0; i < cur->len; i++) {
			k = (cur->next + IBEMU_SWITCH_CC_LOG_ENTRIES - 1 - i) %
			    IBEMU_SWITCH_CC_LOG_ENTRIES;
			log.entry[i].slid = cur->entry[k].slid;
			log.entry[i].dlid = cur->entry[k].dlid;
			log.entry[i].sl = cur->entry[k].sl;
			log.entry[i].timestamp = cur->entry[k].timestamp;
		}
		memset(cur->port_map, 0, sizeof(cur->port_map));
		cur->len = 0;
	}
	IBEMU_BUG_ON(ibemu_mad_congestion_log_switch_encode(
		&log, payload(r), IBEMU_CC_LOG_DATA_LEN));
}

static void ca_log(struct ibemu_agent_req *r)
{
	struct ibemu_hca_cc *cur = ca_cc(r, 0);
	struct ibemu_mad_congestion_log_ca log;
	unsigned i, k;

	memset(&log, 0, sizeof(log));
	log.log_type = IBEMU_CC_LOG_CA;
	log.current_time_stamp = timestamp(r->e);
	if (cur) {
		log.threshold_event_counter = cur->log_events;
		log.threshold_congestion_event_map = cur->log_sl_map;
		for (i = 0; i < cur->log_len; i++) {
			k = (cur->log_next + IBEMU_HCA_CC_LOG_ENTRIES - 1 - i) %
			    IBEMU_HCA_CC_LOG_ENTRIES;
			log.entry[i].local_qp = cur->log[k].ev.local_qp;
			log.entry[i].remote_qp = cur->log[k].ev.remote_qp;
			log.entry[i].sl = cur->log[k].sl;
			log.entry[i].service_type = cur->log[k].ev.service_type;
			log.entry[i].local_lid = cur->log[k].local_lid;
			log.entry[i].remote_lid = cur->log[k].ev.remote_lid;
			log.entry[i].timestamp = cur->log[k].timestamp;
		}
		cur->log_sl_map = 0;
		cur->log_len = 0;
	}
	IBEMU_BUG_ON(ibemu_mad_congestion_log_ca_encode(&log, payload(r),
							IBEMU_CC_LOG_DATA_LEN));
}

static int congestion_log(struct ibemu_agent_req *r)
{
	if (ibemu__agent_is_switch(r->e, r->node))
		switch_log(r);
	else
		ca_log(r);
	return IBEMU_MAD_STATUS_OK;
}

/*
 * A10.4.3.6: a Set changes only what Control_Map names: bit 0 Victim_Mask,
 * bit 1 Credit_Mask, bit 2 Threshold and Packet_Size, bit 3 CS_Threshold
 * and CS_ReturnDelay, bit 4 Marking_Rate.
 */
static int switch_congestion_setting(struct ibemu_agent_req *r)
{
	struct ibemu_switch_cc *cur = ibemu_switch_cc(r->e, r->node);
	struct ibemu_mad_switch_congestion_setting in;

	/* The table lets only switches here; each has its settings. */
	if (!cur)
		return IBEMU_MAD_STATUS_BUSY;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_switch_congestion_setting_decode(
			r->req + IBEMU_CC_DATA_OFF, IBEMU_CC_DATA_LEN, &in);
		cur->control_map = in.control_map;
		if (in.control_map & (1u << 0))
			memcpy(cur->victim_mask, in.victim_mask,
			       sizeof(cur->victim_mask));
		if (in.control_map & (1u << 1))
			memcpy(cur->credit_mask, in.credit_mask,
			       sizeof(cur->credit_mask));
		if (in.control_map & (1u << 2)) {
			cur->threshold = in.threshold;
			cur->packet_size = in.packet_size;
		}
		if (in.control_map & (1u << 3)) {
			cur->cs_threshold = in.cs_threshold;
			cur->cs_return_delay = in.cs_return_delay;
		}
		if (in.control_map & (1u << 4))
			cur->marking_rate = in.marking_rate;
	}
	memset(&in, 0, sizeof(in));
	in.control_map = cur->control_map;
	memcpy(in.victim_mask, cur->victim_mask, sizeof(in.victim_mask));
	memcpy(in.credit_mask, cur->credit_mask, sizeof(in.credit_mask));
	in.threshold = cur->threshold;
	in.packet_size = cur->packet_size;
	in.cs_threshold = cur->cs_threshold;
	in.cs_return_delay = cur->cs_return_delay;
	in.marking_rate = cur->marking_rate;
	IBEMU_BUG_ON(ibemu_mad_switch_congestion_setting_encode(
		&in, payload(r), IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/* A10.4.3.7: the modifier picks a block of 32 ports (port 0 included). */
static int switch_port_congestion_setting(struct ibemu_agent_req *r)
{
	unsigned nports = ibemu__agent_node(r->e, r->node)->nports, i, port;
	struct ibemu_mad_switch_port_congestion_setting t;
	struct ibemu_switch_port_cc *pc;
	uint32_t block = r->attr_mod;

	if (block > nports / IBEMU_CC_SWITCH_PORT_BLOCK)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_switch_port_congestion_setting_decode(
			r->req + IBEMU_CC_DATA_OFF, IBEMU_CC_DATA_LEN, &t);
		for (i = 0; i < IBEMU_CC_SWITCH_PORT_BLOCK; i++) {
			port = block * IBEMU_CC_SWITCH_PORT_BLOCK + i;
			pc = ibemu_switch_port_cc(r->e, r->node, port);
			if (!pc)
				break; /* past NumPorts */
			pc->valid = t.block[i].valid;
			pc->control_type = t.block[i].control_type;
			pc->threshold = t.block[i].threshold;
			pc->packet_size = t.block[i].packet_size;
			pc->cong_parm = t.block[i].cong_parm;
		}
	}
	memset(&t, 0, sizeof(t));
	for (i = 0; i < IBEMU_CC_SWITCH_PORT_BLOCK; i++) {
		port = block * IBEMU_CC_SWITCH_PORT_BLOCK + i;
		pc = ibemu_switch_port_cc(r->e, r->node, port);
		if (!pc)
			break;
		t.block[i].valid = pc->valid;
		t.block[i].control_type = pc->control_type;
		t.block[i].threshold = pc->threshold;
		t.block[i].packet_size = pc->packet_size;
		t.block[i].cong_parm = pc->cong_parm;
	}
	IBEMU_BUG_ON(ibemu_mad_switch_port_congestion_setting_encode(
		&t, payload(r), IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * The CC settings of the CA port the MAD came in through: NULL until a Set
 * creates them (they read as zeros), or when memory runs out then.
 */
static struct ibemu_hca_cc *ca_cc(struct ibemu_agent_req *r, int create)
{
	return ibemu_hca_cc(
		r->e, ibemu__agent_mgmt_port(r->e, r->node, r->port), create);
}

/* A10.4.3.8: Control_Map bit n: the Set updates SL n's entry. */
static int ca_congestion_setting(struct ibemu_agent_req *r)
{
	struct ibemu_mad_ca_congestion_setting in;
	struct ibemu_hca_cc *cc;
	unsigned sl;

	if (r->method == IBEMU_MAD_METHOD_SET) {
		cc = ca_cc(r, 1);
		if (!cc)
			return IBEMU_MAD_STATUS_BUSY;
		ibemu_mad_ca_congestion_setting_decode(
			r->req + IBEMU_CC_DATA_OFF, IBEMU_CC_DATA_LEN, &in);
		cc->port_control = in.port_control;
		cc->control_map = in.control_map;
		for (sl = 0; sl < IBEMU_HCA_CC_SLS; sl++) {
			if (!(in.control_map & (1u << sl)))
				continue;
			cc->sl[sl].ccti_timer = in.entry[sl].ccti_timer;
			cc->sl[sl].ccti_increase = in.entry[sl].ccti_increase;
			cc->sl[sl].trigger_threshold =
				in.entry[sl].trigger_threshold;
			cc->sl[sl].ccti_min = in.entry[sl].ccti_min;
		}
	}
	memset(&in, 0, sizeof(in));
	cc = ca_cc(r, 0);
	if (cc) {
		in.port_control = cc->port_control;
		in.control_map = cc->control_map;
		for (sl = 0; sl < IBEMU_HCA_CC_SLS; sl++) {
			in.entry[sl].ccti_timer = cc->sl[sl].ccti_timer;
			in.entry[sl].ccti_increase = cc->sl[sl].ccti_increase;
			in.entry[sl].trigger_threshold =
				cc->sl[sl].trigger_threshold;
			in.entry[sl].ccti_min = cc->sl[sl].ccti_min;
		}
	}
	IBEMU_BUG_ON(ibemu_mad_ca_congestion_setting_encode(&in, payload(r),
							    IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * A10.4.3.9: the modifier picks a block of 64 entries, fewer than
 * CongestionInfo:ControlTableCap; CCTI_Limit is the last valid index.
 */
static int cc_table(struct ibemu_agent_req *r)
{
	struct ibemu_mad_cc_table t;
	struct ibemu_hca_cc *cc;
	uint32_t block = r->attr_mod;
	unsigned i, idx;

	if (block >= IBEMU_HCA_CCT_BLOCKS)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_cc_table_decode(r->req + IBEMU_CC_DATA_OFF,
					  IBEMU_CC_DATA_LEN, &t);
		if (t.ccti_limit >= IBEMU_HCA_CCT_LEN)
			return IBEMU_MAD_STATUS_INVALID_FIELD;
		cc = ca_cc(r, 1);
		if (!cc)
			return IBEMU_MAD_STATUS_BUSY;
		cc->ccti_limit = t.ccti_limit;
		for (i = 0; i < IBEMU_HCA_CCT_BLOCK; i++) {
			idx = block * IBEMU_HCA_CCT_BLOCK + i;
			cc->cct[idx].shift = t.entry[i].shift;
			cc->cct[idx].multiplier = t.entry[i].multiplier;
		}
	}
	memset(&t, 0, sizeof(t));
	cc = ca_cc(r, 0);
	if (cc) {
		t.ccti_limit = cc->ccti_limit;
		for (i = 0; i < IBEMU_HCA_CCT_BLOCK; i++) {
			idx = block * IBEMU_HCA_CCT_BLOCK + i;
			t.entry[i].shift = cc->cct[idx].shift;
			t.entry[i].multiplier = cc->cct[idx].multiplier;
		}
	}
	IBEMU_BUG_ON(
		ibemu_mad_cc_table_encode(&t, payload(r), IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

static int cc_timestamp(struct ibemu_agent_req *r)
{
	struct ibemu_mad_cc_timestamp ts = {.timestamp = timestamp(r->e)};

	IBEMU_BUG_ON(ibemu_mad_cc_timestamp_encode(&ts, payload(r),
						   IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

#define GS (IBEMU_AGENT_GET | IBEMU_AGENT_SET)

static const struct ibemu_agent_attr cc_attrs[] = {
	{IBEMU_CC_ATTR_CLASS_PORT_INFO, IBEMU_AGENT_GET, IBEMU_AGENT_ANY,
	 class_port_info},
	{IBEMU_CC_ATTR_CONGESTION_INFO, IBEMU_AGENT_GET, IBEMU_AGENT_ANY,
	 congestion_info},
	{IBEMU_CC_ATTR_CONGESTION_KEY_INFO, GS, IBEMU_AGENT_ANY,
	 congestion_key_info},
	{IBEMU_CC_ATTR_CONGESTION_LOG, IBEMU_AGENT_GET, IBEMU_AGENT_ANY,
	 congestion_log},
	{IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING, GS, IBEMU_AGENT_SWITCH,
	 switch_congestion_setting},
	{IBEMU_CC_ATTR_SWITCH_PORT_CONG_SETTING, GS, IBEMU_AGENT_SWITCH,
	 switch_port_congestion_setting},
	{IBEMU_CC_ATTR_CA_CONGESTION_SETTING, GS, IBEMU_AGENT_CA,
	 ca_congestion_setting},
	{IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, GS, IBEMU_AGENT_CA, cc_table},
	{IBEMU_CC_ATTR_TIMESTAMP, IBEMU_AGENT_GET, IBEMU_AGENT_ANY,
	 cc_timestamp},
};

/*
 * Annex A10.4.1: with a non-zero CC_Key, a MAD carrying another key is
 * dropped and counted, except a Get(CongestionKeyInfo) while the protect
 * bit is clear, which is answered with the key read as 0.
 */
static int cc_key_check(struct ibemu_agent_req *r)
{
	struct ibemu_agent_port *ap = key_port(r);
	uint64_t key = ibemu_mad_bits_get(r->req, IBEMU_CC_KEY_OFF * 8, 64);

	if (!ap->cc_key || key == ap->cc_key)
		return 1;
	if (r->method == IBEMU_MAD_METHOD_GET &&
	    r->attr_id == IBEMU_CC_ATTR_CONGESTION_KEY_INFO &&
	    !ap->cc_key_protect) {
		r->hide_mkey = 1;
		return 1;
	}
	if (ap->cc_key_violations != UINT16_MAX)
		ap->cc_key_violations++;
	return 0;
}

int ibemu__cc_process(struct ibemu_agent_req *r)
{
	if (r->method != IBEMU_MAD_METHOD_GET &&
	    r->method != IBEMU_MAD_METHOD_SET)
		return IBEMU_MAD_STATUS_METHOD_UNSUPP;
	if (!cc_key_check(r))
		return IBEMU_AGENT_DROP;
	memset(r->resp + IBEMU_CC_LOG_DATA_OFF, 0, IBEMU_CC_LOG_DATA_LEN);
	return ibemu__agent_dispatch(r, cc_attrs, IBEMU_ARRAY_SIZE(cc_attrs));
}
