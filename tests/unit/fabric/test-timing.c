// SPDX-License-Identifier: MIT
/*
 * The engine's timing, checked against times worked out by hand from link
 * rates, cable delays, routing latency and header sizes.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "model.h"
#include "routing.h"
#include "unit.h"

/* A minimal upper layer: one flow of 'count' packets from src to dst. */
struct flow {
	struct ibemu_engine *e;
	uint32_t src_port;
	uint16_t dlid;
	unsigned payload, left, got;
	uint64_t last_tail;
};

static struct ibemu_pkt *pull(void *ctx, uint32_t port, const uint16_t *credits,
			      int *blocked)
{
	struct flow *f = ctx;
	struct ibemu_pkt *p;

	if (port != f->src_port || !f->left)
		return NULL;
	p = ibemu_engine_pkt_alloc(f->e);
	ibemu_pkt_set_size(p, 20, f->payload);
	if (credits[0] < p->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(f->e, p);
		return NULL;
	}
	p->dlid = f->dlid;
	p->sl = 0;
	f->left--;
	return p;
}

static void deliver(void *ctx, uint32_t port, struct ibemu_pkt *p)
{
	struct flow *f = ctx;

	(void)port;
	f->got++;
	f->last_tail = ibemu_engine_now(f->e);
	ibemu_engine_pkt_free(f->e, p);
}

static const struct ibemu_port_ops flow_ops = {
	.pull = pull,
	.deliver = deliver,
};

/* A chain: hca-a - sw1 - ... - swN - hca-b, 2 m cables. */
static struct ibemu_topo *chain(unsigned nsw, enum ibemu_speed speed)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t a, b, sw, prev = IBEMU_NONE;
	char name[16];
	unsigned i;

	ibemu_diag_init(&d);
	ibemu_topo_create(&t);
	t->defaults.speed = speed;
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "a", 1, &a);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "b", 1, &b);
	for (i = 0; i < nsw; i++) {
		snprintf(name, sizeof(name), "sw%u", i + 1);
		ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, name, 4, &sw);
		if (prev == IBEMU_NONE)
			ibemu_topo_connect(t, a, 1, sw, 1, NULL);
		else
			ibemu_topo_connect(t, prev, 2, sw, 1, NULL);
		prev = sw;
	}
	if (prev == IBEMU_NONE)
		ibemu_topo_connect(t, a, 1, b, 1, NULL);
	else
		ibemu_topo_connect(t, prev, 2, b, 1, NULL);
	ibemu_topo_finalize(t, &d);
	ibemu_diag_fini(&d);
	return t;
}

static uint64_t one_packet_ps(unsigned nsw, enum ibemu_speed speed,
			      unsigned payload)
{
	struct ibemu_topo *t = chain(nsw, speed);
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct flow f = {0};

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(e, r), 0);
	f.e = e;
	f.src_port = ibemu_engine_port_index(e, 0, 1);
	f.dlid = ibemu_routes_lid(r, 1, 1);
	f.payload = payload;
	f.left = 1;
	ibemu_test_attach_all(e, &flow_ops, &f);
	ibemu_engine_kick(e, f.src_port);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(f.got, 1);
	T_EQ_U64(ibemu_engine_in_flight(e), 0);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
	return f.last_tail;
}

static void test_one_packet_edr(void)
{
	/* 4x EDR: 100 Gb/s, 80 ps a byte; 2 m cable: 10 ns; EDR switch 90 ns.
	 * Wire bytes = LRH 8 + BTH 12 + payload + ICRC 4 + VCRC 2. */
	static const unsigned sizes[] = {0, 256, 1024, 4096};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(sizes); i++) {
		uint64_t wire = 26 + sizes[i], ser = wire * 80, hdr = 20 * 80;

		T_EQ_U64(one_packet_ps(0, IBEMU_SPEED_EDR, sizes[i]),
			 10000 + ser);
		T_EQ_U64(one_packet_ps(1, IBEMU_SPEED_EDR, sizes[i]),
			 2 * 10000 + (90000 + hdr) + ser);
		T_EQ_U64(one_packet_ps(3, IBEMU_SPEED_EDR, sizes[i]),
			 4 * 10000 + 3 * (90000 + hdr) + ser);
	}
}

static void test_one_packet_hdr(void)
{
	/* 4x HDR: 200 Gb/s, 40 ps a byte; HDR switch 130 ns. */
	uint64_t wire = 26 + 2048, ser = wire * 40, hdr = 20 * 40;

	T_EQ_U64(one_packet_ps(0, IBEMU_SPEED_HDR, 2048), 10000 + ser);
	T_EQ_U64(one_packet_ps(1, IBEMU_SPEED_HDR, 2048),
		 2 * 10000 + 130000 + hdr + ser);
	T_EQ_U64(one_packet_ps(3, IBEMU_SPEED_HDR, 2048),
		 4 * 10000 + 3 * (130000 + hdr) + ser);
}

/*
 * PortXmitWait counts while a packet is ready but lacks credit, and stops
 * when the upper layer withdraws it (the port is then idle, not waiting).
 */
struct wait_ul {
	struct ibemu_engine *e;
	uint32_t port;
	int ready; /* a packet is ready but (says the upper layer) lacks credit */
};

static struct ibemu_pkt *wait_pull(void *ctx, uint32_t port,
				   const uint16_t *credits, int *blocked)
{
	struct wait_ul *u = ctx;

	(void)credits;
	if (port == u->port && u->ready)
		*blocked = 1;
	return NULL;
}

static void wait_timer(void *ctx, uint32_t port, uint64_t cookie)
{
	struct wait_ul *u = ctx;

	(void)port;
	(void)cookie;
	u->ready = 0; /* withdrawn (QP flushed, CC throttled, ...) */
	ibemu_engine_kick(u->e, u->port);
}

static const struct ibemu_port_ops wait_ops = {
	.pull = wait_pull,
	.timer = wait_timer,
};

static void test_wait_stops_when_idle(void)
{
	struct ibemu_topo *t = chain(0, IBEMU_SPEED_EDR);
	struct ibemu_port_counters c;
	struct ibemu_engine *e;
	struct wait_ul u;

	T_EQ_INT(ibemu_model_create(t, &e), 0);
	u.e = e;
	u.port = ibemu_engine_port_index(e, 0, 1);
	u.ready = 1;
	/* Data leaves Active ports only. */
	T_EQ_INT(ibemu_engine_set_port_state(e, u.port, IBEMU_PORT_ACTIVE), 0);
	ibemu_test_attach_all(e, &wait_ops, &u);
	ibemu_engine_kick(e, u.port);		   /* blocked from t = 0 */
	ibemu_engine_timer(e, u.port, 1000000, 0); /* nothing from 1 us */
	ibemu_engine_run(e, 10000000, 1000);	   /* look at 10 us */
	ibemu_engine_counters(e, u.port, &c);
	T_EQ_U64(c.xmit_wait, 1000); /* 1 us of 1 ns ticks */
	ibemu_engine_destroy(e);
	ibemu_topo_destroy(t);
}

/*
 * VL15 is not flow controlled (IBA 7.9.4): two HCAs sending management
 * packets at line rate into one switch output overflow the switch's VL15
 * input buffers, which drop and count VL15Dropped; every packet is either
 * delivered or counted as dropped.
 */
struct vl15_ul {
	struct ibemu_engine *e;
	unsigned got;
};

static void vl15_deliver(void *ctx, uint32_t port, struct ibemu_pkt *p)
{
	struct vl15_ul *u = ctx;

	(void)port;
	T_EQ_INT(p->vl, IBEMU_VL15);
	u->got++;
	ibemu_engine_pkt_free(u->e, p);
}

static const struct ibemu_port_ops vl15_ops = {
	.deliver = vl15_deliver,
};

static void test_vl15_drops_when_full(void)
{
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct ibemu_diag d;
	struct ibemu_port_counters c;
	struct vl15_ul u = {0};
	uint32_t sw, h[3];
	uint64_t dropped = 0;
	unsigned i;

	ibemu_diag_init(&d);
	ibemu_topo_create(&t);
	ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "sw", 4, &sw);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "a", 1, &h[0]);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "b", 1, &h[1]);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "c", 1, &h[2]);
	for (i = 0; i < 3; i++)
		ibemu_topo_connect(t, sw, i + 1, h[i], 1, NULL);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(e, r), 0);
	/* Management works before an SM activates anything: back to Init. */
	for (i = 0; i < ibemu_engine_nports(e); i++)
		ibemu_engine_set_port_state(e, i, IBEMU_PORT_INIT);
	u.e = e;
	ibemu_test_attach_all(e, &vl15_ops, &u);
	for (i = 0; i < 2000; i++) {
		struct ibemu_pkt *p = ibemu_engine_pkt_alloc(e);

		/* A UD SMP: LRH, BTH, DETH and a 256-byte MAD. */
		ibemu_pkt_set_size(p, 8 + 12 + 8, 256);
		p->dlid = ibemu_routes_lid(r, h[2], 1);
		ibemu_engine_send_vl15(
			e, ibemu_engine_port_index(e, h[i % 2], 1), p);
	}
	ibemu_engine_run(e, UINT64_MAX, 10000000);
	for (i = 1; i <= 2; i++) {
		ibemu_engine_counters(e, ibemu_engine_port_index(e, sw, i), &c);
		dropped += c.vl15_dropped;
		T_EQ_U64(c.rcv_pkts, 1000);
	}
	T_TRUE(dropped > 0);
	T_EQ_U64(u.got + dropped, 2000);
	T_EQ_U64(ibemu_engine_in_flight(e), 0);
	/* No credit was taken or owed on a data VL. */
	ibemu_engine_counters(e, ibemu_engine_port_index(e, h[0], 1), &c);
	T_EQ_U64(c.xmit_wait, 0);
	T_EQ_U64(c.xmit_pkts, 1000);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

/*
 * IBA 18.2.4.3.3: a switch discards a packet whose DLID has no LFT entry
 * and counts it in PortRcvSwitchRelayErrors of the input port; the buffer
 * space comes back to the sender as credits.
 */
static void test_no_route_discards(void)
{
	struct ibemu_topo *t = chain(1, IBEMU_SPEED_EDR);
	struct ibemu_port_counters c;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct flow f = {0};
	uint32_t sw_in;

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(e, r), 0);
	f.e = e;
	f.src_port = ibemu_engine_port_index(e, 0, 1);
	f.dlid = (uint16_t)(r->max_lid + 7); /* assigned to nobody */
	f.payload = 1024;
	f.left = 300; /* more than the switch's buffer holds at once */
	ibemu_test_attach_all(e, &flow_ops, &f);
	ibemu_engine_kick(e, f.src_port);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(f.got, 0);
	T_EQ_INT(f.left, 0);
	sw_in = ibemu_engine_port_index(e, 2, 1);
	ibemu_engine_counters(e, sw_in, &c);
	T_EQ_U64(c.rcv_switch_relay_errors, 300);
	T_EQ_U64(c.rcv_pkts, 300);
	T_EQ_U64(ibemu_engine_in_flight(e), 0);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

/*
 * IBA 7.2: data leaves only Active ports. An HCA port in Init sends no
 * data; a switch discards data routed to a port that is not Active and
 * counts PortXmitDiscards there.
 */
static void test_data_needs_active_ports(void)
{
	struct ibemu_topo *t = chain(1, IBEMU_SPEED_EDR);
	struct ibemu_port_counters c;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct flow f = {0};
	uint32_t sw_out;

	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(e, r), 0);
	f.e = e;
	f.src_port = ibemu_engine_port_index(e, 0, 1);
	f.dlid = ibemu_routes_lid(r, 1, 1);
	f.payload = 1024;
	f.left = 10;
	ibemu_test_attach_all(e, &flow_ops, &f);

	T_EQ_INT(ibemu_engine_port_state(e, f.src_port), IBEMU_PORT_ACTIVE);
	T_EQ_INT(ibemu_engine_phys_state(e, f.src_port), IBEMU_PHYS_LINKUP);
	T_EQ_INT(ibemu_engine_set_port_state(e, f.src_port, IBEMU_PORT_INIT),
		 0);
	ibemu_engine_kick(e, f.src_port);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(f.left, 10);
	ibemu_engine_counters(e, f.src_port, &c);
	T_EQ_U64(c.xmit_pkts, 0);

	/* Active again, but the switch's way out is Armed. */
	sw_out = ibemu_engine_port_index(e, 2, 2);
	T_EQ_INT(ibemu_engine_set_port_state(e, sw_out, IBEMU_PORT_ARMED), 0);
	T_EQ_INT(ibemu_engine_set_port_state(e, f.src_port, IBEMU_PORT_ACTIVE),
		 0);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(f.left, 0);
	T_EQ_INT(f.got, 0);
	ibemu_engine_counters(e, sw_out, &c);
	T_EQ_U64(c.xmit_discards, 10);
	T_EQ_U64(c.xmit_pkts, 0);
	T_EQ_U64(ibemu_engine_in_flight(e), 0);
	/* An uncabled port has no logical state to set. */
	T_EQ_INT(ibemu_engine_set_port_state(e,
					     ibemu_engine_port_index(e, 2, 3),
					     IBEMU_PORT_ACTIVE),
		 -EINVAL);
	T_EQ_INT(ibemu_engine_port_state(e, ibemu_engine_port_index(e, 2, 3)),
		 IBEMU_PORT_DOWN);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

void ibemu_test_register_fabric_timing(void)
{
	static const struct ibemu_test tests[] = {
		{"one_packet_edr", test_one_packet_edr},
		{"one_packet_hdr", test_one_packet_hdr},
		{"wait_stops_when_idle", test_wait_stops_when_idle},
		{"vl15_drops_when_full", test_vl15_drops_when_full},
		{"no_route_discards", test_no_route_discards},
		{"data_needs_active_ports", test_data_needs_active_ports},
		{NULL, NULL},
	};

	ibemu_test_add_suite("fabric.timing", tests);
}
