// SPDX-License-Identifier: MIT
/*
 * The congestion control agent (IBA Annex A10, class 0x21 version 2): it
 * keeps what a CC manager sets (switch and switch port congestion
 * settings, each CA port's congestion setting and Congestion Control
 * Table, the CC_Key) and answers with it, after the checks of A10.4.
 * Nothing here marks FECN or throttles a flow yet: the congestion model
 * comes later and will read these settings; until then CongestionLog is
 * empty.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

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

/* The CC TimeStamp clock: 1.024 us units, wrapping (A10.4.3.10). */
static uint32_t timestamp(const struct ibemu_engine *e)
{
	return (uint32_t)(e->now / 1024000u);
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
					     : IBEMU_AGENT_CCT_CAP,
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

/* A10.4.3.5: no congestion model yet, so no event has been logged. */
static int congestion_log(struct ibemu_agent_req *r)
{
	if (ibemu__agent_is_switch(r->e, r->node)) {
		struct ibemu_mad_congestion_log_switch log;

		memset(&log, 0, sizeof(log));
		log.log_type = IBEMU_CC_LOG_SWITCH;
		log.current_time_stamp = timestamp(r->e);
		IBEMU_BUG_ON(ibemu_mad_congestion_log_switch_encode(
			&log, payload(r), IBEMU_CC_LOG_DATA_LEN));
	} else {
		struct ibemu_mad_congestion_log_ca log;

		memset(&log, 0, sizeof(log));
		log.log_type = IBEMU_CC_LOG_CA;
		log.current_time_stamp = timestamp(r->e);
		IBEMU_BUG_ON(ibemu_mad_congestion_log_ca_encode(
			&log, payload(r), IBEMU_CC_LOG_DATA_LEN));
	}
	return IBEMU_MAD_STATUS_OK;
}

static struct ibemu_agent_cc_switch *cc_switch(struct ibemu_agent_req *r)
{
	struct ibemu_agent_node *an = ibemu__agent_node(r->e, r->node);
	struct ibemu_agent_cc_switch *s = an->cc_sw;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->port = calloc(r->e->nodes[r->node].nports + 1u, sizeof(*s->port));
	if (!s->port) {
		free(s);
		return NULL;
	}
	an->cc_sw = s;
	return s;
}

/*
 * A10.4.3.6: a Set changes only what Control_Map names: bit 0 Victim_Mask,
 * bit 1 Credit_Mask, bit 2 Threshold and Packet_Size, bit 3 CS_Threshold
 * and CS_ReturnDelay, bit 4 Marking_Rate.
 */
static int switch_congestion_setting(struct ibemu_agent_req *r)
{
	struct ibemu_agent_node *an = ibemu__agent_node(r->e, r->node);
	struct ibemu_mad_switch_congestion_setting in, *cur;
	struct ibemu_agent_cc_switch *s;

	if (r->method == IBEMU_MAD_METHOD_SET) {
		s = cc_switch(r);
		if (!s)
			return IBEMU_MAD_STATUS_BUSY;
		cur = &s->setting;
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
	if (an->cc_sw)
		in = an->cc_sw->setting;
	else
		memset(&in, 0, sizeof(in));
	IBEMU_BUG_ON(ibemu_mad_switch_congestion_setting_encode(
		&in, payload(r), IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/* A10.4.3.7: the modifier picks a block of 32 ports (port 0 included). */
static int switch_port_congestion_setting(struct ibemu_agent_req *r)
{
	struct ibemu_agent_node *an = ibemu__agent_node(r->e, r->node);
	unsigned nports = r->e->nodes[r->node].nports, i, port;
	struct ibemu_mad_switch_port_congestion_setting t;
	struct ibemu_agent_cc_switch *s;
	uint32_t block = r->attr_mod;

	if (block > nports / IBEMU_CC_SWITCH_PORT_BLOCK)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		s = cc_switch(r);
		if (!s)
			return IBEMU_MAD_STATUS_BUSY;
		ibemu_mad_switch_port_congestion_setting_decode(
			r->req + IBEMU_CC_DATA_OFF, IBEMU_CC_DATA_LEN, &t);
		for (i = 0; i < IBEMU_CC_SWITCH_PORT_BLOCK; i++) {
			port = block * IBEMU_CC_SWITCH_PORT_BLOCK + i;
			if (port > nports)
				break;
			s->port[port].valid = t.block[i].valid;
			s->port[port].control_type = t.block[i].control_type;
			s->port[port].threshold = t.block[i].threshold;
			s->port[port].packet_size = t.block[i].packet_size;
			s->port[port].cong_parm = t.block[i].cong_parm;
		}
	}
	memset(&t, 0, sizeof(t));
	for (i = 0; an->cc_sw && i < IBEMU_CC_SWITCH_PORT_BLOCK; i++) {
		port = block * IBEMU_CC_SWITCH_PORT_BLOCK + i;
		if (port > nports)
			break;
		t.block[i].valid = an->cc_sw->port[port].valid;
		t.block[i].control_type = an->cc_sw->port[port].control_type;
		t.block[i].threshold = an->cc_sw->port[port].threshold;
		t.block[i].packet_size = an->cc_sw->port[port].packet_size;
		t.block[i].cong_parm = an->cc_sw->port[port].cong_parm;
	}
	IBEMU_BUG_ON(ibemu_mad_switch_port_congestion_setting_encode(
		&t, payload(r), IBEMU_CC_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

static struct ibemu_agent_cc_ca *cc_ca(struct ibemu_agent_req *r)
{
	struct ibemu_agent_port *ap = key_port(r);

	if (!ap->cc_ca)
		ap->cc_ca = calloc(1, sizeof(*ap->cc_ca));
	return ap->cc_ca;
}

/* A10.4.3.8: Control_Map bit n: the Set updates SL n's entry. */
static int ca_congestion_setting(struct ibemu_agent_req *r)
{
	struct ibemu_agent_port *ap = key_port(r);
	struct ibemu_mad_ca_congestion_setting in;
	struct ibemu_agent_cc_ca *ca;
	unsigned sl;

	if (r->method == IBEMU_MAD_METHOD_SET) {
		ca = cc_ca(r);
		if (!ca)
			return IBEMU_MAD_STATUS_BUSY;
		ibemu_mad_ca_congestion_setting_decode(
			r->req + IBEMU_CC_DATA_OFF, IBEMU_CC_DATA_LEN, &in);
		ca->setting.port_control = in.port_control;
		ca->setting.control_map = in.control_map;
		for (sl = 0; sl < IBEMU_CC_CA_SETTING_ENTRIES; sl++)
			if (in.control_map & (1u << sl))
				ca->setting.entry[sl] = in.entry[sl];
	}
	if (ap->cc_ca)
		in = ap->cc_ca->setting;
	else
		memset(&in, 0, sizeof(in));
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
	struct ibemu_agent_port *ap = key_port(r);
	struct ibemu_mad_cc_table t;
	struct ibemu_agent_cc_ca *ca;
	uint32_t block = r->attr_mod;
	unsigned i, idx;

	if (block >= IBEMU_AGENT_CCT_CAP)
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET) {
		ibemu_mad_cc_table_decode(r->req + IBEMU_CC_DATA_OFF,
					  IBEMU_CC_DATA_LEN, &t);
		if (t.ccti_limit >= IBEMU_AGENT_CCT_CAP * IBEMU_CC_TABLE_BLOCK)
			return IBEMU_MAD_STATUS_INVALID_FIELD;
		ca = cc_ca(r);
		if (!ca)
			return IBEMU_MAD_STATUS_BUSY;
		ca->ccti_limit = t.ccti_limit;
		for (i = 0; i < IBEMU_CC_TABLE_BLOCK; i++) {
			idx = block * IBEMU_CC_TABLE_BLOCK + i;
			ca->cct[idx].shift = t.entry[i].shift;
			ca->cct[idx].multiplier = t.entry[i].multiplier;
		}
	}
	memset(&t, 0, sizeof(t));
	if (ap->cc_ca) {
		t.ccti_limit = ap->cc_ca->ccti_limit;
		for (i = 0; i < IBEMU_CC_TABLE_BLOCK; i++) {
			idx = block * IBEMU_CC_TABLE_BLOCK + i;
			t.entry[i].shift = ap->cc_ca->cct[idx].shift;
			t.entry[i].multiplier = ap->cc_ca->cct[idx].multiplier;
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

void ibemu__cc_fini(struct ibemu_engine *e)
{
	struct ibemu_agents *a = e->agents;
	uint32_t i;

	for (i = 0; a->ports && i < e->nports; i++)
		free(a->ports[i].cc_ca);
	for (i = 0; a->nodes && i < e->topo->nnodes; i++) {
		if (a->nodes[i].cc_sw)
			free(a->nodes[i].cc_sw->port);
		free(a->nodes[i].cc_sw);
	}
}
