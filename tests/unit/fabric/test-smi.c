// SPDX-License-Identifier: MIT
/*
 * Unit tests of the management interfaces (fabric/smi.c): directed-route
 * SMPs hop by hop (hop count 0, through one and two switches, back along
 * the return path, mixed LID and directed routes), their exact virtual
 * round-trip times, drops the spec asks for (missing ports, too many hops,
 * an HCA asked to forward), LID-routed SMPs and GMPs once LIDs exist.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "engine.h"
#include "mad.h"
#include "mad_pma.h"
#include "mad_sma.h"
#include "rate.h"
#include "routing.h"
#include "topo.h"
#include "unit.h"

#define PERMISSIVE 0xffff

/* What the HCA ports' attached side received. */
struct inbox {
	unsigned n;
	uint32_t port;
	uint64_t time;
	struct ibemu_mad_msg msg;
	struct ibemu_engine *e;
};

static void mad_recv_cb(void *ctx, uint32_t port, const struct ibemu_mad_msg *m)
{
	struct inbox *in = ctx;

	in->n++;
	in->port = port;
	in->time = ibemu_engine_now(in->e);
	in->msg = *m;
}

static const struct ibemu_port_ops ops = {.mad_recv = mad_recv_cb};

struct fixture {
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_routes *r;
	struct inbox in;
};

/* two-switch.yaml: sw1(1)-hca1, sw1(2)-hca2, sw2(1)-hca3, sw2(2)-hca4,
 * sw1(7)-sw2(7), sw1(8)-sw2(8); 4x HDR, 2 m host and 5 m switch cables. */
static void setup(struct fixture *f, int with_routes)
{
	memset(f, 0, sizeof(*f));
	ibemu_test_engine_up("two-switch", with_routes, &ops, &f->in, &f->t,
			     &f->e, &f->r);
	f->in.e = f->e;
}

static void teardown(struct fixture *f)
{
	ibemu_test_engine_down(f->t, f->e, f->r);
}

static uint32_t port_of(struct fixture *f, const char *node, unsigned port)
{
	return ibemu_test_port(f->t, f->e, node, port);
}

/* A DR SMP Get(NodeInfo) along 'path' (path[0] unused, hops path[1..]). */
static void dr_get(struct ibemu_mad_msg *m, unsigned attr, const uint8_t *path,
		   unsigned hops, uint64_t tid)
{
	struct ibemu_mad_smp smp = {
		.hdr = {.base_version = 1,
			.mgmt_class = IBEMU_MAD_CLASS_SUBN_DR,
			.class_version = 1,
			.method = IBEMU_MAD_METHOD_GET,
			.tid = tid,
			.attr_id = (uint16_t)attr},
		.hop_cnt = (uint8_t)hops,
		.dr_slid = PERMISSIVE,
		.dr_dlid = PERMISSIVE,
	};

	memcpy(smp.initial_path, path,
	       hops < IBEMU_SMP_PATH_LEN ? hops + 1 : IBEMU_SMP_PATH_LEN);
	memset(m, 0, sizeof(*m));
	T_EQ_INT(ibemu_mad_smp_encode(&smp, m->mad, sizeof(m->mad)), 0);
	/* As libibmad addresses a DR SMP; the source LID is the port's. */
	m->dlid = PERMISSIVE;
}

static void decode_node_info(const struct ibemu_mad_msg *m,
			     struct ibemu_mad_smp *smp,
			     struct ibemu_mad_node_info *ni)
{
	T_EQ_INT(ibemu_mad_smp_decode(m->mad, sizeof(m->mad), smp), 0);
	T_EQ_INT(ibemu_mad_node_info_decode(smp->data, sizeof(smp->data), ni),
		 0);
}

static void test_dr_hop0(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_node_info ni;
	const uint8_t path[1] = {0};
	uint32_t hca1;

	setup(&f, 0);
	hca1 = port_of(&f, "hca1", 1);
	dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, path, 0, 0x1234);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	/* Answered by the node's own SMA without touching the wire. */
	T_EQ_INT(f.in.n, 1);
	T_EQ_INT(f.in.port, hca1);
	T_EQ_U64(f.in.time, 0);
	decode_node_info(&f.in.msg, &smp, &ni);
	T_EQ_INT(smp.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_INT(smp.hdr.status, 0);
	T_EQ_INT(smp.d, 1);
	T_EQ_INT(smp.hop_ptr, 0);
	T_EQ_U64(smp.hdr.tid, 0x1234);
	T_EQ_INT(ni.node_type, IBEMU_MAD_NODE_CA);
	T_EQ_U64(ni.node_guid, f.t->nodes[ibemu_topo_find(f.t, "hca1")].guid);
	T_EQ_INT(ni.local_port_num, 1);
	teardown(&f);
}

static void test_dr_one_switch_timing(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_node_info ni;
	const uint8_t path[2] = {0, 1};
	const struct ibemu_topo_node *sw1;
	uint64_t prop, ser_hdr, ser_all, rl, expect;
	uint32_t hca1;

	setup(&f, 0);
	hca1 = port_of(&f, "hca1", 1);
	sw1 = &f.t->nodes[ibemu_topo_find(f.t, "sw1")];
	dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, path, 1, 7);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 1);
	decode_node_info(&f.in.msg, &smp, &ni);
	T_EQ_INT(ni.node_type, IBEMU_MAD_NODE_SWITCH);
	T_EQ_U64(ni.node_guid, sw1->guid);
	T_EQ_INT(ni.local_port_num, 1); /* the port the SMP came in */
	T_EQ_INT(smp.hop_ptr, 0);
	T_EQ_INT(smp.return_path[1], 1);
	/*
	 * Out: 2 m of cable, the header, the switch's routing latency; the
	 * SMA answers at once; back: the whole packet and 2 m of cable.
	 * A MAD packet is LRH+BTH+DETH, 256 bytes, ICRC, VCRC.
	 */
	prop = 2000 * 5;
	ser_hdr = ibemu_link_serialize_ps(4, IBEMU_SPEED_HDR, 8 + 12 + 8);
	ser_all = ibemu_link_serialize_ps(4, IBEMU_SPEED_HDR,
					  8 + 12 + 8 + 256 + 4 + 2);
	rl = ibemu_routing_latency_default_ps(IBEMU_SPEED_HDR);
	expect = prop + ser_hdr + rl + ser_all + prop;
	T_EQ_U64(f.in.time, expect);
	teardown(&f);
}

/* hca1 -> sw1 -> (port 7) sw2 -> (port 2) hca4, and back. */
static void test_dr_three_hops(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_node_info ni;
	const uint8_t path[4] = {0, 1, 7, 2};
	uint32_t hca1;

	setup(&f, 0);
	hca1 = port_of(&f, "hca1", 1);
	dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, path, 3, 9);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 1);
	decode_node_info(&f.in.msg, &smp, &ni);
	T_EQ_U64(ni.node_guid, f.t->nodes[ibemu_topo_find(f.t, "hca4")].guid);
	T_EQ_INT(ni.node_type, IBEMU_MAD_NODE_CA);
	/* The return path records the port each hop came in through. */
	T_EQ_INT(smp.return_path[1], 1);
	T_EQ_INT(smp.return_path[2], 7);
	T_EQ_INT(smp.return_path[3], 1);
	T_EQ_INT(smp.hop_ptr, 0);
	T_EQ_INT(smp.hop_cnt, 3);
	T_EQ_U64(ibemu_engine_in_flight(f.e), 0);
	teardown(&f);
}

/*
 * The spec drops these silently: nothing comes back, nothing is stuck.
 * 'left' says whether the SMP left hca1 at all; 'relay_errors' how many
 * sw1 counted on its port 1.
 */
static void expect_dropped(const uint8_t *path, unsigned hops, int left,
			   unsigned relay_errors)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_port_counters c;
	uint32_t hca1;

	setup(&f, 0);
	hca1 = port_of(&f, "hca1", 1);
	dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, path, hops, 1);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 0);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	T_EQ_U64(ibemu_engine_in_flight(f.e), 0);
	ibemu_engine_counters(f.e, hca1, &c);
	T_EQ_U64(c.xmit_pkts, (uint64_t)left);
	ibemu_engine_counters(f.e, port_of(&f, "sw1", 1), &c);
	T_EQ_U64(c.rcv_switch_relay_errors, relay_errors);
	teardown(&f);
}

static void test_dr_drops(void)
{
	uint8_t path[IBEMU_SMP_PATH_LEN] = {0, 1};

	/* An uncabled switch port (sw1:5), a port beyond the switch (99). */
	path[2] = 5;
	expect_dropped(path, 2, 1, 1);
	path[2] = 99;
	expect_dropped(path, 2, 1, 1);
	/* The first hop must be the sending port itself (C14-9:1). */
	path[1] = 2;
	expect_dropped(path, 1, 0, 0);
	/* An HCA does not forward (C14-9:2): hca4 asked to go on. */
	path[1] = 1;
	path[2] = 7;
	path[3] = 2;
	path[4] = 1;
	expect_dropped(path, 4, 1, 0);
	/* IBA 14.2.1.2: at most 63 hops; 64 is dropped at once. */
	memset(path + 1, 7, sizeof(path) - 1);
	path[1] = 1;
	expect_dropped(path, 64, 0, 0);
}

/* Bouncing between the two switches 63 times is a valid path. */
static void test_dr_63_hops(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_node_info ni;
	uint8_t path[IBEMU_SMP_PATH_LEN];
	uint32_t hca1;

	memset(path, 7, sizeof(path));
	path[0] = 0;
	path[1] = 1;
	setup(&f, 0);
	hca1 = port_of(&f, "hca1", 1);
	dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, path, 63, 5);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 1);
	decode_node_info(&f.in.msg, &smp, &ni);
	/* 62 crossings of the 7-7 cable from sw1 end at sw1. */
	T_EQ_U64(ni.node_guid, f.t->nodes[ibemu_topo_find(f.t, "sw1")].guid);
	teardown(&f);
}

/* With LIDs: a LID-routed SMP to sw2 and back. */
static void test_lid_routed_smp(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_smp smp = {
		.hdr = {.base_version = 1,
			.mgmt_class = IBEMU_MAD_CLASS_SUBN_LID,
			.class_version = 1,
			.method = IBEMU_MAD_METHOD_GET,
			.tid = 77,
			.attr_id = IBEMU_SMP_ATTR_NODE_INFO},
	};
	struct ibemu_mad_node_info ni;
	uint32_t hca1, sw2;

	setup(&f, 1);
	hca1 = port_of(&f, "hca1", 1);
	sw2 = ibemu_topo_find(f.t, "sw2");
	memset(&m, 0, sizeof(m));
	T_EQ_INT(ibemu_mad_smp_encode(&smp, m.mad, sizeof(m.mad)), 0);
	m.dlid = ibemu_engine_get_lid(f.e, sw2, 0);
	T_TRUE(m.dlid != 0);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 1);
	decode_node_info(&f.in.msg, &smp, &ni);
	T_EQ_U64(ni.node_guid, f.t->nodes[sw2].guid);
	T_EQ_INT(f.in.msg.slid, m.dlid);
	T_EQ_INT(f.in.msg.dlid,
		 ibemu_engine_get_lid(f.e, ibemu_topo_find(f.t, "hca1"), 1));
	teardown(&f);
}

/* A LID no node has: the first switch has no LFT entry and drops it. */
static void test_lid_to_missing_node(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_port_counters c;
	struct ibemu_mad_smp smp = {
		.hdr = {.base_version = 1,
			.mgmt_class = IBEMU_MAD_CLASS_SUBN_LID,
			.class_version = 1,
			.method = IBEMU_MAD_METHOD_GET,
			.attr_id = IBEMU_SMP_ATTR_NODE_INFO},
	};

	setup(&f, 1);
	memset(&m, 0, sizeof(m));
	T_EQ_INT(ibemu_mad_smp_encode(&smp, m.mad, sizeof(m.mad)), 0);
	m.dlid = 999;
	T_EQ_INT(ibemu_engine_mad_send(f.e, port_of(&f, "hca1", 1), &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 0);
	ibemu_engine_counters(f.e, port_of(&f, "sw1", 1), &c);
	T_EQ_U64(c.rcv_switch_relay_errors, 1);
	T_EQ_U64(ibemu_engine_in_flight(f.e), 0);
	teardown(&f);
}

/*
 * A mixed route: LID-routed to sw2 (DrSLID = hca1's LID), then directed
 * from sw2 out of port 2 to hca4; the answer comes back the same way.
 */
static void test_dr_mixed(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_node_info ni;
	const uint8_t path[2] = {0, 2};
	uint32_t hca1;
	uint16_t lid1;

	setup(&f, 1);
	hca1 = port_of(&f, "hca1", 1);
	lid1 = ibemu_engine_get_lid(f.e, ibemu_topo_find(f.t, "hca1"), 1);
	dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, path, 1, 11);
	T_EQ_INT(ibemu_mad_smp_decode(m.mad, sizeof(m.mad), &smp), 0);
	smp.dr_slid = lid1;
	T_EQ_INT(ibemu_mad_smp_encode(&smp, m.mad, sizeof(m.mad)), 0);
	m.slid = lid1;
	m.dlid = ibemu_engine_get_lid(f.e, ibemu_topo_find(f.t, "sw2"), 0);
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 1);
	decode_node_info(&f.in.msg, &smp, &ni);
	T_EQ_U64(ni.node_guid, f.t->nodes[ibemu_topo_find(f.t, "hca4")].guid);
	T_EQ_INT(smp.hop_ptr, 0);
	T_EQ_INT(f.in.msg.dlid, lid1);
	teardown(&f);
}

/* A PMA Get(PortCounters) to hca3 by LID, on a data VL. */
static void test_gmp_pma(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;
	struct ibemu_mad_pma pma = {
		.hdr = {.base_version = 1,
			.mgmt_class = IBEMU_MAD_CLASS_PERF,
			.class_version = 1,
			.method = IBEMU_MAD_METHOD_GET,
			.tid = 3,
			.attr_id = IBEMU_PMA_ATTR_PORT_COUNTERS},
	};
	struct ibemu_mad_port_counters pc = {.port_select = 1};
	uint32_t hca1, hca3;

	setup(&f, 1);
	hca1 = port_of(&f, "hca1", 1);
	hca3 = ibemu_topo_find(f.t, "hca3");
	T_EQ_INT(
		ibemu_mad_port_counters_encode(&pc, pma.data, sizeof(pma.data)),
		0);
	memset(&m, 0, sizeof(m));
	T_EQ_INT(ibemu_mad_pma_encode(&pma, m.mad, sizeof(m.mad)), 0);
	m.dlid = ibemu_engine_get_lid(f.e, hca3, 1);
	m.src_qp = 1;
	m.dst_qp = 1;
	m.qkey = 0x80010000u;
	T_EQ_INT(ibemu_engine_mad_send(f.e, hca1, &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 1);
	T_EQ_INT(ibemu_mad_pma_decode(f.in.msg.mad, sizeof(f.in.msg.mad), &pma),
		 0);
	T_EQ_INT(pma.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_INT(pma.hdr.status, 0);
	T_EQ_INT(f.in.msg.src_qp, 1);
	T_EQ_INT(
		ibemu_mad_port_counters_decode(pma.data, sizeof(pma.data), &pc),
		0);
	/* hca3's port received exactly the request packet so far. */
	T_EQ_U64(pc.port_rcv_pkts, 1);
	teardown(&f);
}

/* GMPs need an Active port (IBA 7.2): without an SM they go nowhere. */
static void test_gmp_needs_active(void)
{
	struct fixture f;
	struct ibemu_mad_msg m;

	setup(&f, 0);
	memset(&m, 0, sizeof(m));
	m.mad[0] = 1;
	m.mad[1] = IBEMU_MAD_CLASS_PERF;
	m.mad[2] = 1;
	m.mad[3] = IBEMU_MAD_METHOD_GET;
	m.dlid = 5;
	T_EQ_INT(ibemu_engine_mad_send(f.e, port_of(&f, "hca1", 1), &m), 0);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_INT(f.in.n, 0);
	T_EQ_U64(ibemu_engine_in_flight(f.e), 0);
	/* Only HCA ports send MADs for attached processes. */
	T_EQ_INT(ibemu_engine_mad_send(f.e, port_of(&f, "sw1", 1), &m),
		 -EINVAL);
	teardown(&f);
}

/* Asks 'node''s SMA to take its port 'port' down (Get, then Set Down). */
static void port_down(struct fixture *f, const char *node, unsigned port)
{
	struct ibemu_mad_smp smp = {
		.hdr = {.base_version = 1,
			.mgmt_class = IBEMU_MAD_CLASS_SUBN_LID,
			.class_version = 1,
			.method = IBEMU_MAD_METHOD_GET,
			.attr_id = IBEMU_SMP_ATTR_PORT_INFO,
			.attr_mod = port},
	};
	uint8_t req[IBEMU_MAD_LEN], resp[IBEMU_MAD_LEN];
	struct ibemu_mad_port_info pi;
	uint32_t n = ibemu_topo_find(f->t, node);

	T_EQ_INT(ibemu_mad_smp_encode(&smp, req, sizeof(req)), 0);
	T_EQ_INT(ibemu__agent_process(f->e, n, port, req, resp), 1);
	T_EQ_INT(ibemu_mad_smp_decode(resp, sizeof(resp), &smp), 0);
	T_EQ_INT(ibemu_mad_port_info_decode(smp.data, sizeof(smp.data), &pi),
		 0);
	pi.port_state = IBEMU_MAD_PORT_DOWN;
	pi.port_phys_state = IBEMU_MAD_PHYS_NOP;
	T_EQ_INT(ibemu_mad_port_info_encode(&pi, smp.data, sizeof(smp.data)),
		 0);
	smp.hdr.method = IBEMU_MAD_METHOD_SET;
	T_EQ_INT(ibemu_mad_smp_encode(&smp, req, sizeof(req)), 0);
	T_EQ_INT(ibemu__agent_process(f->e, n, port, req, resp), 1);
	T_EQ_INT(ibemu_engine_port_state(f->e, port_of(f, node, port)),
		 IBEMU_PORT_DOWN);
}

/*
 * SMPs from hca1 and hca2 queue at sw1 for the one cable to sw2 (port 7);
 * the SM takes that link down meanwhile. What waits for the Down port is
 * discarded there (PortXmitDiscards) and nothing is stuck.
 */
static void test_down_port_discards_its_queue(void)
{
	const uint8_t p1[3] = {0, 1, 7}, p2[3] = {0, 1, 7};
	struct ibemu_port_counters c, in;
	struct fixture f;
	struct ibemu_mad_msg m;
	unsigned i, sent = 16;
	uint64_t relay;
	uint32_t out;

	setup(&f, 1);
	out = port_of(&f, "sw1", 7);
	for (i = 0; i < sent / 2; i++) {
		dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, p1, 2, i);
		T_EQ_INT(ibemu_engine_mad_send(f.e, port_of(&f, "hca1", 1), &m),
			 0);
		dr_get(&m, IBEMU_SMP_ATTR_NODE_INFO, p2, 2, 100 + i);
		m.mad[IBEMU_SMP_INITIAL_PATH_OFF + 1] = 1;
		T_EQ_INT(ibemu_engine_mad_send(f.e, port_of(&f, "hca2", 1), &m),
			 0);
	}
	/* Until some SMPs have left by sw1:7 and others wait for it. */
	ibemu_engine_run(f.e, 300000, SIZE_MAX);
	ibemu_engine_counters(f.e, out, &c);
	T_TRUE(c.xmit_pkts > 0 && c.xmit_pkts < sent);
	port_down(&f, "sw1", 7);
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	ibemu_engine_counters(f.e, out, &c);
	T_TRUE(c.xmit_discards > 0);
	/*
	 * Each SMP left before, was discarded while it waited for sw1:7, or
	 * came after and found no usable output (PortRcvSwitchRelayErrors
	 * at the input). None comes back: the way back was the same link,
	 * and what was on the cable when it went down is lost.
	 */
	relay = 0;
	for (i = 1; i <= 2; i++) {
		ibemu_engine_counters(f.e, port_of(&f, "sw1", i), &in);
		relay += in.rcv_switch_relay_errors;
	}
	T_EQ_U64(c.xmit_pkts + c.xmit_discards + relay, sent);
	T_EQ_U64(f.in.n, 0);
	T_EQ_U64(ibemu_engine_in_flight(f.e), 0);
	/* The link retrained: both ends Init again, waiting for an SM. */
	T_EQ_INT(ibemu_engine_port_state(f.e, out), IBEMU_PORT_INIT);
	T_EQ_INT(ibemu_engine_port_state(f.e, port_of(&f, "sw2", 7)),
		 IBEMU_PORT_INIT);
	teardown(&f);
}

static const struct ibemu_test tests[] = {
	{"dr_hop0", test_dr_hop0},
	{"dr_one_switch_timing", test_dr_one_switch_timing},
	{"dr_three_hops", test_dr_three_hops},
	{"dr_drops", test_dr_drops},
	{"dr_63_hops", test_dr_63_hops},
	{"lid_routed_smp", test_lid_routed_smp},
	{"dr_mixed", test_dr_mixed},
	{"lid_to_missing_node", test_lid_to_missing_node},
	{"gmp_pma", test_gmp_pma},
	{"gmp_needs_active", test_gmp_needs_active},
	{"down_port_discards_its_queue", test_down_port_discards_its_queue},
	{NULL, NULL},
};

void ibemu_test_register_fabric_smi(void)
{
	ibemu_test_add_suite("fabric.smi", tests);
}
