// SPDX-License-Identifier: MIT
/*
 * Fidelity of the fabric model, measured through traffic studies: exact
 * virtual times where the model defines them (single packets and whole
 * messages on an idle fabric), link payload bandwidth, fair sharing of a
 * port, head-of-line blocking in input buffers, and a long incast that
 * loses nothing while PortXmitWait grows on the congested ports.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "model.h"
#include "routing.h"
#include "traffic.h"
#include "yaml.h"
#include "unit.h"

/* A fabric with its routes, an engine and a finished study on it. */
struct run {
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct ibemu_traffic *tr;
};

static void run_study(struct run *x, struct ibemu_topo *t,
		      const struct ibemu_traffic_opts *o)
{
	struct ibemu_diag d;

	x->t = t;
	x->tr = NULL;
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &x->r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &x->e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(x->e, x->r), 0);
	T_EQ_INT(ibemu_traffic_create(x->e, t, o, &x->tr, &d), 0);
	T_EQ_STR(d.error ? d.error : "", "");
	ibemu_diag_fini(&d);
	if (x->tr)
		T_EQ_INT(ibemu_traffic_run(x->tr), 0);
}

static void run_fini(struct run *x)
{
	ibemu_traffic_destroy(x->tr);
	ibemu_engine_destroy(x->e);
	ibemu_routes_destroy(x->r);
	ibemu_topo_destroy(x->t);
}

/* The result of the flow src -> dst (host indices); it must exist. */
static void flow_of(const struct run *x, uint32_t src, uint32_t dst,
		    struct ibemu_traffic_flow_result *out)
{
	size_t i, n = ibemu_traffic_nflows(x->tr);

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		ibemu_traffic_flow(x->tr, i, out);
		if (out->src == src && out->dst == dst)
			return;
	}
	T_TRUE(!"flow not found");
	memset(out, 0, sizeof(*out));
}

static struct ibemu_topo *finalize(struct ibemu_topo *t)
{
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	ibemu_diag_fini(&d);
	return t;
}

/* A chain: hca a - sw1 - ... - swN - hca b, 2 m cables (10 ns each). */
static struct ibemu_topo *chain(unsigned nsw, enum ibemu_speed speed)
{
	uint32_t a, b, sw, prev = IBEMU_NONE;
	struct ibemu_topo *t;
	char name[16];
	unsigned i;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	t->defaults.speed = speed;
	t->defaults.cable_length_mm = 2000;
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "a", 1, &a);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "b", 1, &b);
	for (i = 0; i < nsw; i++) {
		snprintf(name, sizeof(name), "sw%u", i + 1);
		ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, name, 4, &sw);
		T_EQ_INT(ibemu_topo_connect(t, prev == IBEMU_NONE ? a : prev,
					    prev == IBEMU_NONE ? 1 : 2, sw, 1,
					    NULL),
			 0);
		prev = sw;
	}
	T_EQ_INT(ibemu_topo_connect(t, prev == IBEMU_NONE ? a : prev,
				    prev == IBEMU_NONE ? 1 : 2, b, 1, NULL),
		 0);
	return finalize(t);
}

/* A star: one EDR switch with n single-port hosts h1..hn on ports 1..n,
 * 2 m cables; host index i is h(i+1) on switch port i+1. */
static struct ibemu_topo *star(unsigned n)
{
	struct ibemu_topo *t;
	uint32_t sw, h;
	char name[16];
	unsigned i;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	t->defaults.speed = IBEMU_SPEED_EDR;
	t->defaults.cable_length_mm = 2000;
	ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "sw", n, &sw);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "h%u", i + 1);
		ibemu_topo_add_node(t, IBEMU_NODE_HCA, name, 1, &h);
		T_EQ_INT(ibemu_topo_connect(t, sw, i + 1, h, 1, NULL), 0);
	}
	return finalize(t);
}

static void pairs_opts(struct ibemu_traffic_opts *o,
		       const struct ibemu_traffic_pair *pairs, size_t n)
{
	ibemu_traffic_opts_init(o);
	o->pattern = IBEMU_TRAFFIC_PAIRS;
	o->pairs = pairs;
	o->npairs = n;
}

/* Wire bytes of an RC SEND packet: LRH 8 + BTH 12 + payload padded to 4
 * (BTH PadCnt) + ICRC 4 + VCRC 2. */
static uint64_t wire(uint64_t payload)
{
	return 8 + 12 + ((payload + 3) & ~3ull) + 4 + 2;
}

/*
 * Latency of one message of 'bytes' from a to b across 'nsw' switches,
 * alone on the fabric: the study creates exactly one message when the
 * window is one slot long (the slot's phase is inside it).
 */
static uint64_t one_message_ps(unsigned nsw, enum ibemu_speed speed,
			       uint64_t bytes)
{
	static const struct ibemu_traffic_pair ab = {0, 1};
	struct ibemu_traffic_flow_result f;
	struct ibemu_traffic_opts o;
	uint64_t slot = 0, left = bytes;
	struct run x;

	pairs_opts(&o, &ab, 1);
	o.msg_bytes = bytes;
	do {
		uint64_t p = left > 4096 ? 4096 : left;

		slot += ibemu_link_serialize_ps(4, speed, wire(p));
		left -= p;
	} while (left);
	o.duration_ps = slot;
	run_study(&x, chain(nsw, speed), &o);
	T_EQ_U64(ibemu_traffic_nflows(x.tr), 1);
	flow_of(&x, 0, 1, &f);
	T_EQ_U64(f.msgs, 1);
	T_EQ_U64(f.lat_p50_ps, f.lat_max_ps);
	run_fini(&x);
	return f.lat_max_ps;
}

static void test_one_packet_edr(void)
{
	/*
	 * 4x EDR: 4 lanes x 25.78125 Gbaud x 64/66 = 100 Gb/s, 80 ps a byte.
	 * 2 m cables: 10 ns. EDR switch: 90 ns from the header's arrival
	 * (LRH + BTH = 20 bytes) to the output; cut-through, so each switch
	 * adds its latency and the header time, the packet is serialized once.
	 */
	static const uint64_t sizes[] = {0, 1, 256, 1024, 2048, 4096};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(sizes); i++) {
		uint64_t ser = wire(sizes[i]) * 80, hop = 90000 + 20 * 80;

		T_EQ_U64(one_message_ps(0, IBEMU_SPEED_EDR, sizes[i]),
			 10000 + ser);
		T_EQ_U64(one_message_ps(1, IBEMU_SPEED_EDR, sizes[i]),
			 2 * 10000 + hop + ser);
		T_EQ_U64(one_message_ps(3, IBEMU_SPEED_EDR, sizes[i]),
			 4 * 10000 + 3 * hop + ser);
	}
}

static void test_one_packet_hdr(void)
{
	/* 4x HDR: 4 x 53.125 Gbaud PAM4 (2 bits a symbol) with RS(544,514)
	 * FEC over 256b/257b = 200 Gb/s of data, 40 ps a byte. HDR switch:
	 * 130 ns. */
	static const uint64_t sizes[] = {0, 256, 2048, 4096};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(sizes); i++) {
		uint64_t ser = wire(sizes[i]) * 40, hop = 130000 + 20 * 40;

		T_EQ_U64(one_message_ps(0, IBEMU_SPEED_HDR, sizes[i]),
			 10000 + ser);
		T_EQ_U64(one_message_ps(1, IBEMU_SPEED_HDR, sizes[i]),
			 2 * 10000 + hop + ser);
		T_EQ_U64(one_message_ps(3, IBEMU_SPEED_HDR, sizes[i]),
			 4 * 10000 + 3 * hop + ser);
	}
}

static void test_message_segments(void)
{
	/*
	 * 10,000 bytes at MTU 4096: packets of 4096, 4096 and 1808 bytes,
	 * sent back to back. On an idle path of equal link rates no packet
	 * waits for the one before, so the message ends when the last packet
	 * would end alone, started two full packets late.
	 */
	uint64_t full = wire(4096) * 80, last = wire(1808) * 80;

	T_EQ_U64(one_message_ps(1, IBEMU_SPEED_EDR, 10000),
		 2 * full + 2 * 10000 + 90000 + 20 * 80 + last);
	T_EQ_U64(one_message_ps(3, IBEMU_SPEED_EDR, 10000),
		 2 * full + 4 * 10000 + 3 * (90000 + 20 * 80) + last);
	/* 3 bytes travel padded to 4. */
	T_EQ_U64(one_message_ps(0, IBEMU_SPEED_EDR, 3), 10000 + wire(4) * 80);
}

/* Gb/s of payload a 4x EDR link carries in 4096-byte packets. */
static double edr_payload_gbps(void)
{
	/* 100 Gb/s of data (4 x 25.78125 Gbaud x 64/66); each 4096 bytes of
	 * payload cost 4096 + LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 4122 bytes
	 * on the wire: 100 x 4096 / 4122 = 99.369 Gb/s. */
	return 100.0 * 4096.0 / 4122.0;
}

static void test_stream_bandwidth(void)
{
	static const struct ibemu_traffic_pair ab = {0, 1};
	struct ibemu_traffic_flow_result f;
	struct ibemu_port_counters c;
	struct ibemu_traffic_opts o;
	double expect = edr_payload_gbps();
	struct run x;

	/*
	 * One stream at load 1 for 1 ms across one switch. Its throughput is
	 * measured from the start of the window to the last delivery, which
	 * includes the random phase of the first message (under one 5.3 us
	 * message slot) and the path's latency: about 0.5% at most.
	 */
	pairs_opts(&o, &ab, 1);
	o.duration_ps = 1000000000ull;
	run_study(&x, chain(1, IBEMU_SPEED_EDR), &o);
	flow_of(&x, 0, 1, &f);
	T_TRUE(f.gbps > expect * 0.99 && f.gbps <= expect);
	T_EQ_U64(f.bytes, f.msgs * 65536);
	T_EQ_U64(f.pkts_delivered, f.msgs * 16);
	/* The source link is busy exactly one wire time per packet. */
	ibemu_engine_counters(x.e, ibemu_engine_port_index(x.e, 0, 1), &c);
	T_EQ_U64(c.xmit_pkts, f.pkts_delivered);
	T_EQ_U64(c.busy_ps, c.xmit_pkts * wire(4096) * 80);
	T_EQ_U64(c.xmit_data, c.xmit_pkts * (wire(4096) - 2) / 4);
	/* At load 1 the source is never short of credit: no wait. */
	T_EQ_U64(c.xmit_wait, 0);
	run_fini(&x);
}

static void test_two_into_one(void)
{
	/* Hosts 1 and 2 at full rate into host 0 through one switch: the
	 * switch serves its inputs in round robin, so each gets half of the
	 * payload bandwidth of the port to host 0. */
	static const struct ibemu_traffic_pair p[] = {{1, 0}, {2, 0}};
	struct ibemu_traffic_flow_result f1, f2;
	struct ibemu_port_counters c;
	struct ibemu_traffic_opts o;
	double half = edr_payload_gbps() / 2;
	struct run x;

	pairs_opts(&o, p, 2);
	o.duration_ps = 1000000000ull;
	run_study(&x, star(4), &o);
	flow_of(&x, 1, 0, &f1);
	flow_of(&x, 2, 0, &f2);
	T_TRUE(f1.gbps > half * 0.99 && f1.gbps < half * 1.01);
	T_TRUE(f2.gbps > half * 0.99 && f2.gbps < half * 1.01);
	/* The senders waited for credit: the switch held them back. */
	ibemu_engine_counters(x.e, ibemu_engine_port_index(x.e, 2, 1), &c);
	T_TRUE(c.xmit_wait > 0);
	run_fini(&x);
}

/*
 * Head-of-line blocking. One switch, hosts A=h1, C=h3, D=h4 and two more
 * senders B=h2, E=h5, all at full rate:
 *
 *	A -> C, A -> D, B -> D, E -> D
 *
 * A's packets for C and D alternate (A serves its flows in round robin)
 * and wait in the same FIFO input buffer of switch port 1 on VL 0. Output
 * D is shared by three inputs and gives each a third; while the D packet
 * at the head of A's buffer waits its turn, the C packet behind it cannot
 * leave although output C is idle. So A -> C moves at the pace of A -> D,
 * a third of the link, and A's own link sits idle a third of the time.
 * An output-queued switch would give A -> C the two thirds A -> D leaves.
 * Without A -> D (the same B and E traffic to D), A -> C gets the whole
 * link.
 */
static void test_head_of_line(void)
{
	static const struct ibemu_traffic_pair alone[] = {
		{0, 2}, {1, 3}, {4, 3}};
	static const struct ibemu_traffic_pair hol[] = {
		{0, 2}, {0, 3}, {1, 3}, {4, 3}};
	struct ibemu_traffic_flow_result ac, ad;
	struct ibemu_traffic_summary s;
	struct ibemu_port_counters c;
	struct ibemu_traffic_opts o;
	double link = edr_payload_gbps();
	struct run x;

	pairs_opts(&o, alone, IBEMU_ARRAY_SIZE(alone));
	o.duration_ps = 1000000000ull;
	run_study(&x, star(5), &o);
	flow_of(&x, 0, 2, &ac);
	T_TRUE(ac.gbps > link * 0.99);
	run_fini(&x);

	pairs_opts(&o, hol, IBEMU_ARRAY_SIZE(hol));
	o.duration_ps = 1000000000ull;
	run_study(&x, star(5), &o);
	flow_of(&x, 0, 2, &ac);
	flow_of(&x, 0, 3, &ad);
	ibemu_traffic_summary(x.tr, &s);
	/* A third of the link each, within 1%. */
	T_TRUE(ac.gbps > link / 3 * 0.99 && ac.gbps < link / 3 * 1.01);
	T_TRUE(ad.gbps > link / 3 * 0.99 && ad.gbps < link / 3 * 1.01);
	/* A's link is busy two thirds of the time (within 2%), idle the
	 * rest although A always had packets waiting for credit. */
	ibemu_engine_counters(x.e, ibemu_engine_port_index(x.e, 1, 1), &c);
	T_TRUE(c.busy_ps * 300 > s.end_ps * 196 &&
	       c.busy_ps * 300 < s.end_ps * 204);
	T_TRUE(c.xmit_wait > 0);
	run_fini(&x);
}

/* What a finished incast shows. */
struct incast_check {
	uint64_t src_wait_min; /* least PortXmitWait among the source ports */
	uint64_t feed_wait;    /* PortXmitWait of the switch ports feeding it */
	uint32_t feeders;      /* switch ports that carried its traffic */
};

/*
 * Every packet delivered once and in order, nothing dropped anywhere, and
 * PortXmitWait of the source HCA ports and of the switch ports that carried
 * traffic towards the hotspot (all but the last hop, whose receiver, the
 * hotspot's HCA, drains at link rate and never withholds credit).
 */
static void check_incast(const struct run *x, uint32_t hot,
			 struct incast_check *out)
{
	uint32_t nports = ibemu_engine_nports(x->e), pi, node, hot_node;
	uint64_t sent = 0, delivered = 0, src_pkts = 0;
	struct ibemu_traffic_flow_result f;
	struct ibemu_traffic_summary s;
	struct ibemu_port_counters c;
	unsigned port, hot_port;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->src_wait_min = UINT64_MAX;
	ibemu_traffic_summary(x->tr, &s);
	T_EQ_U64(s.misordered, 0);
	for (i = 0; i < ibemu_traffic_nflows(x->tr); i++) {
		ibemu_traffic_flow(x->tr, i, &f);
		T_EQ_U64(f.misordered, 0);
		T_EQ_U64(f.pkts_delivered, f.pkts_sent);
		T_EQ_U64(f.bytes, f.msgs * 65536);
		T_TRUE(f.msgs > 0);
		sent += f.pkts_sent;
		delivered += f.pkts_delivered;
	}
	T_EQ_U64(sent, delivered);
	T_EQ_U64(s.pkts, delivered);
	T_EQ_U64(ibemu_engine_in_flight(x->e), 0);

	ibemu_traffic_host(x->tr, hot, &hot_node, &hot_port);
	for (pi = 0; pi < nports; pi++) {
		const struct ibemu_topo_port *tp;

		ibemu_engine_port_where(x->e, pi, &node, &port);
		ibemu_engine_counters(x->e, pi, &c);
		T_EQ_U64(c.xmit_discards, 0);
		T_EQ_U64(c.rcv_switch_relay_errors, 0);
		T_EQ_U64(c.vl15_dropped, 0);
		if (!port)
			continue;
		tp = &x->t->nodes[node].ports[port];
		if (node == hot_node && port == hot_port)
			T_EQ_U64(c.rcv_pkts, delivered);
		if (x->t->nodes[node].type == IBEMU_NODE_HCA && c.xmit_pkts) {
			src_pkts += c.xmit_pkts;
			if (c.xmit_wait < out->src_wait_min)
				out->src_wait_min = c.xmit_wait;
		}
		if (x->t->nodes[node].type == IBEMU_NODE_SWITCH &&
		    c.xmit_pkts &&
		    (tp->peer_node != hot_node || tp->peer_port != hot_port)) {
			T_TRUE(c.xmit_wait > 0);
			out->feed_wait += c.xmit_wait;
			out->feeders++;
		}
	}
	T_EQ_U64(src_pkts, sent);
}

static void incast_run(struct run *x, const char *topo, uint32_t nsrc,
		       uint64_t dur)
{
	struct ibemu_traffic_opts o;

	ibemu_traffic_opts_init(&o);
	o.pattern = IBEMU_TRAFFIC_INCAST;
	o.incast_sources = nsrc;
	o.duration_ps = dur;
	run_study(x, ibemu_test_load(topo), &o);
}

static void test_incast_single_switch(void)
{
	/* 7 hosts at full rate into hca1 for 100 us, then 200 us: the
	 * sources wait for the switch's input buffers, longer and longer. */
	struct incast_check a, b;
	struct ibemu_traffic_summary s;
	struct run x;

	incast_run(&x, "single-switch-8", 7, 100000000ull);
	check_incast(&x, 0, &a);
	ibemu_traffic_summary(x.tr, &s);
	T_EQ_U64(s.flows, 7);
	T_EQ_U64(a.feeders, 0); /* one switch: only the last hop */
	T_TRUE(a.src_wait_min > 0);
	run_fini(&x);

	incast_run(&x, "single-switch-8", 7, 200000000ull);
	check_incast(&x, 0, &b);
	T_TRUE(b.src_wait_min > a.src_wait_min);
	run_fini(&x);
}

static void test_incast_fat_tree(void)
{
	/*
	 * 35 hosts into hca01 on leaf01 of the 36-host fat tree. Min-hop
	 * routes send one destination through one spine: the five other
	 * leaves' uplinks to spine01 and spine01's port down to leaf01 carry
	 * the traffic, and all of them wait for the next input buffer.
	 */
	struct incast_check a, b;
	struct run x;

	incast_run(&x, "fat-tree-2l-36", 0, 20000000ull);
	check_incast(&x, 0, &a);
	T_EQ_U64(a.feeders, 6);
	T_TRUE(a.feed_wait > 0);
	run_fini(&x);

	incast_run(&x, "fat-tree-2l-36", 0, 40000000ull);
	check_incast(&x, 0, &b);
	T_TRUE(b.feed_wait > a.feed_wait);
	run_fini(&x);
}

void ibemu_test_register_traffic_fidelity(void)
{
	static const struct ibemu_test tests[] = {
		{"one_packet_edr", test_one_packet_edr},
		{"one_packet_hdr", test_one_packet_hdr},
		{"message_segments", test_message_segments},
		{"stream_bandwidth", test_stream_bandwidth},
		{"two_into_one", test_two_into_one},
		{"head_of_line", test_head_of_line},
		{"incast_single_switch", test_incast_single_switch},
		{"incast_fat_tree", test_incast_fat_tree},
		{NULL, NULL},
	};

	ibemu_test_add_suite("traffic.fidelity", tests);
}
