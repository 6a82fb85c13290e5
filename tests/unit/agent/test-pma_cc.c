// SPDX-License-Identifier: MIT
/*
 * The general services agents of every node (agent/pma.c, agent/cc.c):
 * the PMA's ClassPortInfo and counters equal the engine's after some
 * traffic, a Set clears exactly the counters selected (one port or all),
 * and the CC agent stores and returns what a CC manager sets, with the
 * checks of IBA Annex A10 (blocks, CC_Key).
 */
#include <string.h>

#include "agent.h"
#include "engine.h"
#include "mad.h"
#include "mad_cc.h"
#include "mad_pma.h"
#include "pma_view.h"
#include "routing.h"
#include "unit.h"

struct fx {
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_routes *r;
	/* Up to two HCA ports sending 'left' packets each to 'dlid'. */
	uint32_t src[2];
	unsigned left[2];
	uint16_t dlid;
	unsigned got;
};

static struct ibemu_pkt *pull(void *ctx, uint32_t port, const uint16_t *credits,
			      int *blocked)
{
	struct fx *f = ctx;
	struct ibemu_pkt *p;
	unsigned i = port == f->src[0] ? 0 : 1;

	if (port != f->src[i] || !f->left[i])
		return NULL;
	p = ibemu_engine_pkt_alloc(f->e);
	ibemu_pkt_set_size(p, 20, 2048);
	if (credits[0] < p->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(f->e, p);
		return NULL;
	}
	p->dlid = f->dlid;
	f->left[i]--;
	return p;
}

static void deliver(void *ctx, uint32_t port, struct ibemu_pkt *p)
{
	struct fx *f = ctx;

	(void)port;
	f->got++;
	ibemu_engine_pkt_free(f->e, p);
}

static const struct ibemu_port_ops ops = {.pull = pull, .deliver = deliver};

/* two-switch.yaml with min-hop routes: hca1 is LID 3, hca4 LID 6. */
static void setup(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	ibemu_test_engine_up("two-switch", 1, &ops, f, &f->t, &f->e, &f->r);
}

static void teardown(struct fx *f)
{
	ibemu_test_engine_down(f->t, f->e, f->r);
}

static uint32_t node_of(struct fx *f, const char *name)
{
	return ibemu_test_node(f->t, name);
}

static uint32_t port_of(struct fx *f, const char *name, unsigned port)
{
	return ibemu_test_port(f->t, f->e, name, port);
}

/*
 * 'n' packets of 2 KiB from hca1 to 'dlid' and, with 'hca2', as many from
 * hca2 at once, run to the end; returns how many were delivered.
 */
static unsigned send_to(struct fx *f, uint16_t dlid, unsigned n, int hca2)
{
	f->src[0] = port_of(f, "hca1", 1);
	f->src[1] = port_of(f, "hca2", 1);
	f->left[0] = n;
	f->left[1] = hca2 ? n : 0;
	f->dlid = dlid;
	f->got = 0;
	ibemu_engine_kick(f->e, f->src[0]);
	ibemu_engine_kick(f->e, f->src[1]);
	ibemu_engine_run(f->e, UINT64_MAX, SIZE_MAX);
	return f->got;
}

/* 'n' packets of 2 KiB from hca1 to hca4, run to the end. */
static void traffic(struct fx *f, unsigned n)
{
	T_EQ_INT(
		send_to(f, ibemu_routes_lid(f->r, node_of(f, "hca4"), 1), n, 0),
		n);
}

/* A PMA request with 'data' (192 bytes, or NULL); returns the Status and
 * the response data in 'data'. */
static int pma(struct fx *f, const char *node, unsigned port, uint8_t method,
	       uint16_t attr, uint8_t *data)
{
	struct ibemu_mad_pma m = {.hdr = {.base_version = 1,
					  .mgmt_class = IBEMU_MAD_CLASS_PERF,
					  .class_version = 1,
					  .method = method,
					  .tid = 99,
					  .attr_id = attr}};
	uint8_t req[IBEMU_MAD_LEN], resp[IBEMU_MAD_LEN];

	if (data)
		memcpy(m.data, data, sizeof(m.data));
	T_EQ_INT(ibemu_mad_pma_encode(&m, req, sizeof(req)), 0);
	T_EQ_INT(ibemu__agent_process(f->e, node_of(f, node), port, req, resp),
		 1);
	T_EQ_INT(ibemu_mad_pma_decode(resp, sizeof(resp), &m), 0);
	T_EQ_INT(m.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_U64(m.hdr.tid, 99);
	if (data)
		memcpy(data, m.data, sizeof(m.data));
	return m.hdr.status;
}

/* Sends a Get(PortCounters) GMP from HCA port 'port' to 'dlid'. */
static void gmp_send(struct fx *f, uint32_t port, uint16_t dlid)
{
	struct ibemu_mad_pma m = {
		.hdr = {.base_version = 1,
			.mgmt_class = IBEMU_MAD_CLASS_PERF,
			.class_version = 1,
			.method = IBEMU_MAD_METHOD_GET,
			.tid = 98,
			.attr_id = IBEMU_PMA_ATTR_PORT_COUNTERS}};
	struct ibemu_mad_msg msg;

	memset(&msg, 0, sizeof(msg));
	T_EQ_INT(ibemu_mad_pma_encode(&m, msg.mad, sizeof(msg.mad)), 0);
	msg.src_qp = msg.dst_qp = 1;
	msg.qkey = 0x80010000u;
	msg.pkey = 0xffff;
	msg.dlid = dlid;
	T_EQ_INT(ibemu_engine_mad_send(f->e, port, &msg), 0);
}

static int pc_do(struct fx *f, const char *node, uint8_t method,
		 struct ibemu_mad_port_counters *pc)
{
	uint8_t d[IBEMU_PMA_DATA_LEN] = {0};
	int st;

	T_EQ_INT(ibemu_mad_port_counters_encode(pc, d, sizeof(d)), 0);
	st = pma(f, node, 1, method, IBEMU_PMA_ATTR_PORT_COUNTERS, d);
	T_EQ_INT(ibemu_mad_port_counters_decode(d, sizeof(d), pc), 0);
	return st;
}

static int ext_do(struct fx *f, const char *node, uint8_t method,
		  struct ibemu_mad_port_counters_ext *pc)
{
	uint8_t d[IBEMU_PMA_DATA_LEN] = {0};
	int st;

	T_EQ_INT(ibemu_mad_port_counters_ext_encode(pc, d, sizeof(d)), 0);
	st = pma(f, node, 1, method, IBEMU_PMA_ATTR_PORT_COUNTERS_EXT, d);
	T_EQ_INT(ibemu_mad_port_counters_ext_decode(d, sizeof(d), pc), 0);
	return st;
}

static void test_class_port_info(void)
{
	struct ibemu_mad_class_port_info cpi;
	uint8_t d[IBEMU_PMA_DATA_LEN] = {0};
	uint8_t req[IBEMU_MAD_LEN], resp[IBEMU_MAD_LEN];
	struct ibemu_mad_pma m;
	struct fx f;

	setup(&f);
	T_EQ_INT(pma(&f, "sw1", 3, IBEMU_MAD_METHOD_GET,
		     IBEMU_PMA_ATTR_CLASS_PORT_INFO, d),
		 0);
	T_EQ_INT(ibemu_mad_class_port_info_decode(d, sizeof(d), &cpi), 0);
	T_EQ_INT(cpi.base_version, 1);
	T_EQ_INT(cpi.class_version, 1);
	/* What makes perfquery use AllPortSelect, -x and PortXmitWait. */
	T_TRUE(cpi.capability_mask & IBEMU_PMA_CAP_ALL_PORT_SELECT);
	T_TRUE(cpi.capability_mask & IBEMU_PMA_CAP_EXT_WIDTH);
	T_TRUE(cpi.capability_mask & IBEMU_PMA_CAP_XMIT_WAIT);
	T_EQ_INT(cpi.capability_mask2, 1u << 1);
	/* Where perfquery reads them: bytes 2-3, and 4-7 shifted by 5. */
	T_EQ_INT(d[2] << 8 | d[3], cpi.capability_mask);
	T_EQ_INT((uint32_t)(d[4] << 24 | d[5] << 16 | d[6] << 8 | d[7]) >> 5,
		 2);
	/* Set(ClassPortInfo), PortSamplesControl, other methods, versions. */
	T_EQ_INT(pma(&f, "sw1", 3, IBEMU_MAD_METHOD_SET,
		     IBEMU_PMA_ATTR_CLASS_PORT_INFO, d),
		 IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	T_EQ_INT(pma(&f, "hca2", 1, IBEMU_MAD_METHOD_GET,
		     IBEMU_PMA_ATTR_PORT_SAMPLES_CONTROL, d),
		 IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	memset(&m, 0, sizeof(m));
	m.hdr = (struct ibemu_mad_hdr){.base_version = 1,
				       .mgmt_class = IBEMU_MAD_CLASS_PERF,
				       .class_version = 1,
				       .method = IBEMU_MAD_METHOD_REPORT,
				       .attr_id = IBEMU_PMA_ATTR_PORT_COUNTERS};
	T_EQ_INT(ibemu_mad_pma_encode(&m, req, sizeof(req)), 0);
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "hca2"), 1, req, resp),
		 1);
	T_EQ_INT(resp[3], IBEMU_MAD_METHOD_REPORT_RESP);
	T_EQ_INT(resp[5], IBEMU_MAD_STATUS_METHOD_UNSUPP);
	req[3] = IBEMU_MAD_METHOD_GET;
	req[2] = 2;
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "hca2"), 1, req, resp),
		 1);
	T_EQ_INT(resp[5], IBEMU_MAD_STATUS_BAD_VERSION);
	req[2] = 1;
	req[3] = IBEMU_MAD_METHOD_TRAP;
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "hca2"), 1, req, resp),
		 0);
	teardown(&f);
}

static void test_counters_equal_engine(void)
{
	struct ibemu_mad_port_counters pc, want;
	struct ibemu_mad_port_counters_ext ext, want_ext;
	struct ibemu_port_counters c, sum;
	unsigned p;
	struct fx f;

	setup(&f);
	traffic(&f, 40);
	/* hca1's port 1 sent them all. */
	memset(&pc, 0, sizeof(pc));
	pc.port_select = 1;
	T_EQ_INT(pc_do(&f, "hca1", IBEMU_MAD_METHOD_GET, &pc), 0);
	ibemu_engine_counters(f.e, port_of(&f, "hca1", 1), &c);
	memset(&want, 0, sizeof(want));
	want.port_select = 1;
	ibemu_pma_port_counters(&c, &want);
	T_TRUE(!memcmp(&pc, &want, sizeof(pc)));
	T_EQ_U64(pc.port_xmit_pkts, 40);
	T_EQ_U64(pc.port_xmit_data, 40 * (8 + 12 + 2048 + 4) / 4);
	/* The extended view of sw2's port 2, toward hca4. */
	memset(&ext, 0, sizeof(ext));
	ext.port_select = 2;
	T_EQ_INT(ext_do(&f, "sw2", IBEMU_MAD_METHOD_GET, &ext), 0);
	ibemu_engine_counters(f.e, port_of(&f, "sw2", 2), &c);
	memset(&want_ext, 0, sizeof(want_ext));
	want_ext.port_select = 2;
	ibemu_pma_port_counters_ext(&c, &want_ext);
	T_TRUE(!memcmp(&ext, &want_ext, sizeof(ext)));
	T_EQ_U64(ext.port_xmit_pkts, 40);
	T_EQ_U64(ext.port_unicast_xmit_pkts, 40);
	/* PortSelect 0xFF: all of sw1's ports summed. */
	memset(&sum, 0, sizeof(sum));
	for (p = 0; p <= 8; p++) {
		ibemu_engine_counters(f.e, port_of(&f, "sw1", p), &c);
		sum.xmit_pkts += c.xmit_pkts;
		sum.rcv_pkts += c.rcv_pkts;
		sum.xmit_data += c.xmit_data;
	}
	memset(&ext, 0, sizeof(ext));
	ext.port_select = 0xff;
	T_EQ_INT(ext_do(&f, "sw1", IBEMU_MAD_METHOD_GET, &ext), 0);
	T_EQ_INT(ext.port_select, 0xff);
	T_EQ_U64(ext.port_xmit_pkts, sum.xmit_pkts);
	T_EQ_U64(ext.port_rcv_pkts, 40);
	T_EQ_U64(ext.port_xmit_data, sum.xmit_data);
	/* Ports that do not exist. */
	memset(&pc, 0, sizeof(pc));
	pc.port_select = 9;
	T_EQ_INT(pc_do(&f, "sw1", IBEMU_MAD_METHOD_GET, &pc),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	pc.port_select = 0; /* a CA has no port 0 */
	T_EQ_INT(pc_do(&f, "hca1", IBEMU_MAD_METHOD_GET, &pc),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	pc.port_select = 0;
	T_EQ_INT(pc_do(&f, "sw1", IBEMU_MAD_METHOD_GET, &pc), 0);
	teardown(&f);
}

static void test_counters_clear(void)
{
	struct ibemu_mad_port_counters pc;
	struct ibemu_mad_port_counters_ext ext;
	struct ibemu_port_counters c;
	uint32_t hca1, sw1p1;
	unsigned p;
	struct fx f;

	setup(&f);
	hca1 = port_of(&f, "hca1", 1);
	sw1p1 = port_of(&f, "sw1", 1);
	/* hca1 and hca2 share sw1's link to sw2: with more than the 16 KiB
	 * buffers hold, both wait for credits. */
	T_EQ_INT(send_to(&f, ibemu_routes_lid(f.r, node_of(&f, "hca4"), 1), 40,
			 1),
		 80);
	/* A GMP from a port that is not Active is discarded there. */
	T_EQ_INT(ibemu_engine_set_port_state(f.e, hca1, IBEMU_PORT_ARMED), 0);
	for (p = 0; p < 5; p++)
		gmp_send(&f, hca1,
			 ibemu_routes_lid(f.r, node_of(&f, "hca4"), 1));
	T_EQ_INT(ibemu_engine_set_port_state(f.e, hca1, IBEMU_PORT_ACTIVE), 0);
	ibemu_engine_counters(f.e, hca1, &c);
	T_TRUE(c.xmit_wait > 0);
	T_EQ_U64(c.xmit_discards, 5);
	/* Clear PortXmitData and PortXmitWait only (perfquery -R 0x1000,
	 * with CounterSelect2 bit 0). */
	memset(&pc, 0, sizeof(pc));
	pc.port_select = 1;
	pc.counter_select = IBEMU_PMA_CS_XMIT_DATA;
	pc.counter_select2 = IBEMU_PMA_CS2_XMIT_WAIT;
	T_EQ_INT(pc_do(&f, "hca1", IBEMU_MAD_METHOD_SET, &pc), 0);
	T_EQ_U64(pc.port_xmit_data, 0);
	T_EQ_U64(pc.port_xmit_wait, 0);
	T_EQ_U64(pc.port_xmit_pkts, 40);
	T_EQ_U64(pc.port_xmit_discards, 5);
	ibemu_engine_counters(f.e, hca1, &c);
	T_EQ_U64(c.xmit_data, 0);
	T_EQ_U64(c.xmit_wait, 0);
	T_EQ_U64(c.xmit_pkts, 40);
	T_EQ_U64(c.unicast_xmit_pkts, 40);
	/* Every counter of PortCounters. */
	pc.counter_select = 0xffff;
	pc.counter_select2 = 0xff;
	T_EQ_INT(pc_do(&f, "hca1", IBEMU_MAD_METHOD_SET, &pc), 0);
	ibemu_engine_counters(f.e, hca1, &c);
	T_EQ_U64(c.xmit_pkts, 0);
	T_EQ_U64(c.xmit_discards, 0);
	/* The unicast counters are PortCountersExtended's only. */
	T_EQ_U64(c.unicast_xmit_pkts, 40);
	memset(&ext, 0, sizeof(ext));
	ext.port_select = 1;
	ext.counter_select = 1u << 4; /* PortUnicastXmitPkts */
	T_EQ_INT(ext_do(&f, "hca1", IBEMU_MAD_METHOD_SET, &ext), 0);
	T_EQ_U64(ext.port_unicast_xmit_pkts, 0);
	ibemu_engine_counters(f.e, hca1, &c);
	T_EQ_U64(c.unicast_xmit_pkts, 0);
	/* Extended, all ports of sw1, error counters through CounterSelect2
	 * (PortRcvSwitchRelayErrors is bit 5) and the traffic ones. A LID
	 * no switch routes is a relay error at sw1's input. */
	T_EQ_INT(send_to(&f, 0x40, 3, 0), 0);
	ibemu_engine_counters(f.e, sw1p1, &c);
	T_EQ_U64(c.rcv_switch_relay_errors, 3);
	memset(&ext, 0, sizeof(ext));
	ext.port_select = 0xff;
	ext.counter_select2 = 1u << 5;
	T_EQ_INT(ext_do(&f, "sw1", IBEMU_MAD_METHOD_SET, &ext), 0);
	T_EQ_U64(ext.port_rcv_switch_relay_errors, 0);
	T_TRUE(ext.port_rcv_pkts > 0);
	ext.counter_select = 0xff;
	ext.counter_select2 = 0x3fff;
	T_EQ_INT(ext_do(&f, "sw1", IBEMU_MAD_METHOD_SET, &ext), 0);
	for (p = 0; p <= 8; p++) {
		ibemu_engine_counters(f.e, port_of(&f, "sw1", p), &c);
		T_EQ_U64(c.rcv_pkts + c.xmit_pkts + c.xmit_data + c.rcv_data,
			 0);
		T_EQ_U64(c.unicast_rcv_pkts + c.unicast_xmit_pkts, 0);
	}
	/* sw2 kept its counters. */
	ibemu_engine_counters(f.e, port_of(&f, "sw2", 2), &c);
	T_EQ_U64(c.xmit_pkts, 80);
	teardown(&f);
}

/* A CC MAD (class 0x21, version 2) with 'key'; payload in and out. */
static int cc(struct fx *f, const char *node, unsigned port, uint8_t method,
	      uint16_t attr, uint32_t mod, uint64_t key, uint8_t *payload)
{
	struct ibemu_mad_cc m = {.hdr = {.base_version = 1,
					 .mgmt_class = IBEMU_MAD_CLASS_CC,
					 .class_version = 2,
					 .method = method,
					 .tid = 7,
					 .attr_id = attr,
					 .attr_mod = mod},
				 .cc_key = key};
	uint8_t req[IBEMU_MAD_LEN], resp[IBEMU_MAD_LEN];
	uint8_t *p;
	size_t len;

	p = ibemu_mad_cc_payload(&m, &len);
	if (payload)
		memcpy(p, payload, len);
	T_EQ_INT(ibemu_mad_cc_encode(&m, req, sizeof(req)), 0);
	if (!ibemu__agent_process(f->e, node_of(f, node), port, req, resp))
		return -1;
	T_EQ_INT(ibemu_mad_cc_decode(resp, sizeof(resp), &m), 0);
	T_EQ_INT(m.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	p = ibemu_mad_cc_payload(&m, &len);
	if (payload)
		memcpy(payload, p, len);
	return m.hdr.status;
}

static void test_cc(void)
{
	uint8_t d[IBEMU_CC_LOG_DATA_LEN] = {0};
	struct ibemu_mad_class_port_info cpi;
	struct ibemu_mad_congestion_info ci;
	struct ibemu_mad_switch_congestion_setting ss;
	struct ibemu_mad_switch_port_congestion_setting sps;
	struct ibemu_mad_ca_congestion_setting cas;
	struct ibemu_mad_cc_table cct;
	struct ibemu_mad_cc_timestamp ts;
	struct ibemu_mad_congestion_log_switch lsw;
	struct ibemu_mad_congestion_log_ca lca;
	struct fx f;

	setup(&f);
	T_EQ_INT(cc(&f, "sw1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CLASS_PORT_INFO, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_class_port_info_decode(d, IBEMU_CC_DATA_LEN, &cpi),
		 0);
	T_EQ_INT(cpi.class_version, 2);
	T_EQ_INT(cc(&f, "sw1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_INFO, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_congestion_info_decode(d, IBEMU_CC_DATA_LEN, &ci),
		 0);
	T_EQ_INT(ci.control_table_cap, 0);
	T_EQ_INT(cc(&f, "hca1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_INFO, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_congestion_info_decode(d, IBEMU_CC_DATA_LEN, &ci),
		 0);
	T_EQ_INT(ci.control_table_cap, 16);

	/* SwitchCongestionSetting: Control_Map picks what a Set changes. */
	memset(&ss, 0, sizeof(ss));
	ss.control_map = 0x1f;
	ibemu_mad_port_mask_set(ss.victim_mask, 3, 1);
	ss.threshold = 7;
	ss.packet_size = 8;
	ss.cs_threshold = 2;
	ss.cs_return_delay = 0x4005;
	ss.marking_rate = 10;
	T_EQ_INT(ibemu_mad_switch_congestion_setting_encode(&ss, d,
							    IBEMU_CC_DATA_LEN),
		 0);
	T_EQ_INT(cc(&f, "sw1", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING, 0, 0, d),
		 0);
	ss.control_map = 1u << 4;
	ss.threshold = 1;
	ss.marking_rate = 20;
	T_EQ_INT(ibemu_mad_switch_congestion_setting_encode(&ss, d,
							    IBEMU_CC_DATA_LEN),
		 0);
	T_EQ_INT(cc(&f, "sw1", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING, 0, 0, d),
		 0);
	memset(d, 0, sizeof(d));
	T_EQ_INT(cc(&f, "sw1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_switch_congestion_setting_decode(
			 d, IBEMU_CC_DATA_LEN, &ss),
		 0);
	T_EQ_INT(ss.threshold, 7);
	T_EQ_INT(ss.marking_rate, 20);
	T_EQ_INT(ss.cs_return_delay, 0x4005);
	T_EQ_INT(ibemu_mad_port_mask_get(ss.victim_mask, 3), 1);
	T_EQ_INT(cc(&f, "hca1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING, 0, 0, d),
		 IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);

	/* SwitchPortCongestionSetting: block 0 holds ports 0..8. */
	memset(&sps, 0, sizeof(sps));
	sps.block[7].valid = 1;
	sps.block[7].threshold = 9;
	sps.block[7].cong_parm = 300;
	sps.block[20].valid = 1; /* no port 20: dropped */
	T_EQ_INT(ibemu_mad_switch_port_congestion_setting_encode(
			 &sps, d, IBEMU_CC_DATA_LEN),
		 0);
	T_EQ_INT(cc(&f, "sw2", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_SWITCH_PORT_CONG_SETTING, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_switch_port_congestion_setting_decode(
			 d, IBEMU_CC_DATA_LEN, &sps),
		 0);
	T_EQ_INT(sps.block[7].cong_parm, 300);
	T_EQ_INT(sps.block[7].threshold, 9);
	T_EQ_INT(sps.block[20].valid, 0);
	T_EQ_INT(cc(&f, "sw2", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_SWITCH_PORT_CONG_SETTING, 1, 0, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);

	/* CACongestionSetting: Control_Map bit n updates SL n. */
	memset(&cas, 0, sizeof(cas));
	cas.port_control = 1;
	cas.control_map = 0x0005;
	cas.entry[0].ccti_timer = 100;
	cas.entry[1].ccti_timer = 111; /* not in the map */
	cas.entry[2].ccti_increase = 3;
	cas.entry[2].ccti_min = 2;
	T_EQ_INT(ibemu_mad_ca_congestion_setting_encode(&cas, d,
							IBEMU_CC_DATA_LEN),
		 0);
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_CA_CONGESTION_SETTING, 0, 0, d),
		 0);
	memset(d, 0, sizeof(d));
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CA_CONGESTION_SETTING, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_ca_congestion_setting_decode(d, IBEMU_CC_DATA_LEN,
							&cas),
		 0);
	T_EQ_INT(cas.port_control, 1);
	T_EQ_INT(cas.entry[0].ccti_timer, 100);
	T_EQ_INT(cas.entry[1].ccti_timer, 0);
	T_EQ_INT(cas.entry[2].ccti_increase, 3);
	T_EQ_INT(cas.entry[2].ccti_min, 2);
	/* Another CA port has its own. */
	T_EQ_INT(cc(&f, "hca4", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CA_CONGESTION_SETTING, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_ca_congestion_setting_decode(d, IBEMU_CC_DATA_LEN,
							&cas),
		 0);
	T_EQ_INT(cas.entry[0].ccti_timer, 0);

	/* CongestionControlTable: blocks under ControlTableCap. */
	memset(&cct, 0, sizeof(cct));
	cct.ccti_limit = 127;
	cct.entry[1].shift = 1;
	cct.entry[1].multiplier = 1000;
	T_EQ_INT(ibemu_mad_cc_table_encode(&cct, d, IBEMU_CC_DATA_LEN), 0);
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, 1, 0, d),
		 0);
	memset(d, 0, sizeof(d));
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, 1, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_cc_table_decode(d, IBEMU_CC_DATA_LEN, &cct), 0);
	T_EQ_INT(cct.ccti_limit, 127);
	T_EQ_INT(cct.entry[1].shift, 1);
	T_EQ_INT(cct.entry[1].multiplier, 1000);
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, 16, 0, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	cct.ccti_limit = 16 * 64;
	T_EQ_INT(ibemu_mad_cc_table_encode(&cct, d, IBEMU_CC_DATA_LEN), 0);
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, 0, 0, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);

	/* TimeStamp and the (empty) CongestionLog, in 1.024 us units. */
	ibemu_engine_run(f.e, ibemu_engine_now(f.e) + 1024000000ull, SIZE_MAX);
	T_EQ_INT(cc(&f, "hca3", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_TIMESTAMP, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_cc_timestamp_decode(d, IBEMU_CC_DATA_LEN, &ts), 0);
	T_EQ_U64(ts.timestamp, ibemu_engine_now(f.e) / 1024000u);
	T_TRUE(ts.timestamp >= 1000);
	T_EQ_INT(cc(&f, "sw1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_LOG, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_congestion_log_switch_decode(
			 d, IBEMU_CC_LOG_DATA_LEN, &lsw),
		 0);
	T_EQ_INT(lsw.log_type, IBEMU_CC_LOG_SWITCH);
	T_EQ_U64(lsw.current_time_stamp, ts.timestamp);
	T_EQ_INT(cc(&f, "hca2", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_LOG, 0, 0, d),
		 0);
	T_EQ_INT(ibemu_mad_congestion_log_ca_decode(d, IBEMU_CC_LOG_DATA_LEN,
						    &lca),
		 0);
	T_EQ_INT(lca.log_type, IBEMU_CC_LOG_CA);
	T_EQ_INT(cc(&f, "hca2", 1, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_CONGESTION_LOG, 0, 0, d),
		 IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	teardown(&f);
}

static void test_cc_key(void)
{
	uint8_t d[IBEMU_CC_LOG_DATA_LEN] = {0};
	struct ibemu_mad_congestion_key_info ki = {.cc_key = 0x77,
						   .cc_key_lease_period = 5};
	struct fx f;

	setup(&f);
	T_EQ_INT(
		ibemu_mad_congestion_key_info_encode(&ki, d, IBEMU_CC_DATA_LEN),
		0);
	T_EQ_INT(cc(&f, "sw1", 2, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_CONGESTION_KEY_INFO, 0, 0, d),
		 0);
	/* A wrong key: dropped and counted... */
	T_EQ_INT(cc(&f, "sw1", 2, IBEMU_MAD_METHOD_GET, IBEMU_CC_ATTR_TIMESTAMP,
		    0, 1, d),
		 -1);
	T_EQ_INT(cc(&f, "sw1", 3, IBEMU_MAD_METHOD_GET, IBEMU_CC_ATTR_TIMESTAMP,
		    0, 0x77, d),
		 0);
	/* ...except Get(CongestionKeyInfo) while unprotected: key reads 0. */
	T_EQ_INT(cc(&f, "sw1", 2, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_KEY_INFO, 0, 1, d),
		 0);
	T_EQ_INT(
		ibemu_mad_congestion_key_info_decode(d, IBEMU_CC_DATA_LEN, &ki),
		0);
	T_EQ_U64(ki.cc_key, 0);
	T_EQ_INT(ki.cc_key_violations, 1);
	T_EQ_INT(ki.cc_key_lease_period, 5);
	ki.cc_key_protect_bit = 1;
	ki.cc_key = 0x77;
	T_EQ_INT(
		ibemu_mad_congestion_key_info_encode(&ki, d, IBEMU_CC_DATA_LEN),
		0);
	T_EQ_INT(cc(&f, "sw1", 2, IBEMU_MAD_METHOD_SET,
		    IBEMU_CC_ATTR_CONGESTION_KEY_INFO, 0, 0x77, d),
		 0);
	T_EQ_INT(cc(&f, "sw1", 2, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_KEY_INFO, 0, 1, d),
		 -1);
	T_EQ_INT(cc(&f, "sw1", 2, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_CONGESTION_KEY_INFO, 0, 0x77, d),
		 0);
	T_EQ_INT(
		ibemu_mad_congestion_key_info_decode(d, IBEMU_CC_DATA_LEN, &ki),
		0);
	T_EQ_U64(ki.cc_key, 0x77);
	T_EQ_INT(ki.cc_key_violations, 2);
	/* The CA ports have keys of their own. */
	T_EQ_INT(cc(&f, "hca1", 1, IBEMU_MAD_METHOD_GET,
		    IBEMU_CC_ATTR_TIMESTAMP, 0, 1, d),
		 0);
	teardown(&f);
}

void ibemu_test_register_agent_pma_cc(void)
{
	static const struct ibemu_test tests[] = {
		{"class_port_info", test_class_port_info},
		{"counters_equal_engine", test_counters_equal_engine},
		{"counters_clear", test_counters_clear},
		{"cc", test_cc},
		{"cc_key", test_cc_key},
		{NULL, NULL},
	};

	ibemu_test_add_suite("agent.pma_cc", tests);
}
