// SPDX-License-Identifier: MIT
/*
 * Multicast forwarding at a switch (IBA 14.2.5.12, 18.2.4.3): replication
 * by the MFT, never back out of the input port, each copy with its own
 * credits, the input buffer freed when the last copy has left, the
 * counters of every copy, and the discards; times worked out by hand.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "model.h"
#include "routing.h"
#include "unit.h"

#define MLID 0xc001u

/* Packets sent from port 'src' to 'dlid'; what each HCA got, and when. */
struct mc_ul {
	struct ibemu_engine *e;
	uint32_t src;
	uint16_t dlid;
	unsigned left, payload;
	unsigned got[4];
	uint64_t last[4];
	uint32_t port_of[4]; /* global port of HCA i */
};

static struct ibemu_pkt *mc_pull(void *ctx, uint32_t port,
				 const uint16_t *credits, int *blocked)
{
	struct mc_ul *u = ctx;
	struct ibemu_pkt *p;

	if (port != u->src || !u->left)
		return NULL;
	p = ibemu_engine_pkt_alloc(u->e);
	ibemu_pkt_set_size(p, 20, u->payload);
	if (credits[0] < p->blocks) {
		*blocked = 1;
		ibemu_engine_pkt_free(u->e, p);
		return NULL;
	}
	p->dlid = u->dlid;
	u->left--;
	return p;
}

static void mc_deliver(void *ctx, uint32_t port, struct ibemu_pkt *p)
{
	struct mc_ul *u = ctx;
	unsigned i;

	for (i = 0; i < 4; i++)
		if (u->port_of[i] == port) {
			u->got[i]++;
			u->last[i] = ibemu_engine_now(u->e);
		}
	ibemu_engine_pkt_free(u->e, p);
}

static const struct ibemu_port_ops mc_ops = {
	.pull = mc_pull,
	.deliver = mc_deliver,
};

/*
 * One 4-port EDR switch (node 0), HCA i on its port i + 1, 2 m cables;
 * 'slow_c': the link to HCA c (port 3) is 4x SDR; 'buf': the switch's
 * input buffer per VL in bytes (0: the default).
 */
static void star(int slow_c, uint32_t buf, struct ibemu_topo **tp,
		 struct ibemu_routes **rp, struct ibemu_engine **ep,
		 struct mc_ul *u)
{
	static const char *const names[] = {"a", "b", "c", "d"};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t sw, h, link;
	unsigned i;

	ibemu_diag_init(&d);
	ibemu_topo_create(&t);
	t->defaults.speed = IBEMU_SPEED_EDR;
	ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "sw", 4, &sw);
	if (buf)
		t->nodes[sw].buffer_per_vl = buf;
	for (i = 0; i < 4; i++) {
		ibemu_topo_add_node(t, IBEMU_NODE_HCA, names[i], 1, &h);
		ibemu_topo_connect(t, sw, i + 1, h, 1, &link);
		if (slow_c && i == 2)
			t->links[link].speed = IBEMU_SPEED_SDR;
	}
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	ibemu_diag_fini(&d);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, rp),
		 0);
	T_EQ_INT(ibemu_model_create(t, ep), 0);
	T_EQ_INT(ibemu_engine_apply_routes(*ep, *rp), 0);
	u->e = *ep;
	for (i = 0; i < 4; i++)
		u->port_of[i] = ibemu_engine_port_index(*ep, i + 1, 1);
	u->src = u->port_of[0];
	u->dlid = MLID;
	ibemu_test_attach_all(*ep, &mc_ops, u);
	*tp = t;
}

static void star_free(struct ibemu_topo *t, struct ibemu_routes *r,
		      struct ibemu_engine *e)
{
	T_EQ_U64(ibemu_engine_in_flight(e), 0);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
}

static void counters(struct ibemu_engine *e, unsigned sw_port,
		     struct ibemu_port_counters *c)
{
	ibemu_engine_counters(e, ibemu_engine_port_index(e, 0, sw_port), c);
}

/*
 * The MFT's entry holds a, b and c: a's packet reaches b and c at the same
 * instant, one copy each, never back to a, nothing to d. EDR: 80 ps a
 * byte; 2 m: 10 ns; switch routing latency 90 ns; wire bytes = 20 of
 * headers + payload + ICRC 4 + VCRC 2.
 */
static void test_replicates_by_mft(void)
{
	uint64_t ser = (26 + 1024) * 80ull, hdr = 20 * 80ull;
	struct ibemu_port_counters c;
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct mc_ul u = {0};

	star(0, 0, &t, &r, &e, &u);
	T_EQ_INT(ibemu_engine_mft_positions(e, 0), 1);
	/* Ports 1, 2, 3 (bits 1..3); bit 0 (the switch itself) ignored. */
	T_EQ_INT(ibemu_engine_set_mft(e, 0, MLID, 0, 0x000f), 0);
	u.payload = 1024;
	u.left = 1;
	ibemu_engine_kick(e, u.src);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(u.got[0], 0);
	T_EQ_INT(u.got[1], 1);
	T_EQ_INT(u.got[2], 1);
	T_EQ_INT(u.got[3], 0);
	T_EQ_U64(u.last[1], 2 * 10000 + 90000 + hdr + ser);
	T_EQ_U64(u.last[2], 2 * 10000 + 90000 + hdr + ser);
	/* One packet in, a copy out of each member's port. */
	counters(e, 1, &c);
	T_EQ_U64(c.rcv_pkts, 1);
	T_EQ_U64(c.multicast_rcv_pkts, 1);
	T_EQ_U64(c.unicast_rcv_pkts, 0);
	T_EQ_U64(c.xmit_pkts, 0);
	counters(e, 2, &c);
	T_EQ_U64(c.xmit_pkts, 1);
	T_EQ_U64(c.multicast_xmit_pkts, 1);
	T_EQ_U64(c.unicast_xmit_pkts, 0);
	T_EQ_U64(c.xmit_data, (26 + 1024 - 2) / 4);
	counters(e, 3, &c);
	T_EQ_U64(c.multicast_xmit_pkts, 1);
	counters(e, 4, &c);
	T_EQ_U64(c.xmit_pkts, 0);
	ibemu_engine_counters(e, u.port_of[1], &c);
	T_EQ_U64(c.multicast_rcv_pkts, 1);
	ibemu_engine_counters(e, u.src, &c);
	T_EQ_U64(c.multicast_xmit_pkts, 1);
	T_EQ_U64(c.unicast_xmit_pkts, 0);
	star_free(t, r, e);
}

/*
 * The switch's input buffer holds one packet; the copy to c crosses 4x
 * SDR (1000 ps a byte). The input's space comes back only once the slow
 * copy has left, so a's second packet waits for it, and b gets it late
 * although b's link was free long before: each copy is a packet of its
 * own on its output, the input buffer one for all of them.
 */
static void test_input_freed_by_last_copy(void)
{
	uint64_t fast = 1050 * 80ull, slow = 1050 * 1000ull, hdr = 20 * 80ull;
	uint64_t head1 = 10000 + hdr + 90000, free1, head2;
	struct ibemu_port_counters c;
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct mc_ul u = {0};

	star(1, 17 * 64, &t, &r, &e, &u); /* 1050 bytes: 17 blocks */
	T_EQ_INT(ibemu_engine_set_mft(e, 0, MLID, 0, 0x000e), 0);
	u.payload = 1024;
	u.left = 2;
	ibemu_engine_kick(e, u.src);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(u.got[1], 2);
	T_EQ_INT(u.got[2], 2);
	/* The first copies start as the header is routed. */
	free1 = head1 + slow;	       /* the slow copy's tail has left */
	head2 = free1 + 10000 + head1; /* credit back to a, then as before */
	T_EQ_U64(u.last[1], head2 + fast + 10000);
	T_EQ_U64(u.last[2], head2 + slow + 10000);
	/* a waited for credit from the first packet's end to free1 + 10 ns. */
	ibemu_engine_counters(e, u.src, &c);
	T_EQ_U64(c.xmit_wait, (free1 + 10000 - fast) / 1000);
	star_free(t, r, e);
}

/*
 * IBA 18.2.4.3.3: an MLID without an MFT entry is discarded and counted
 * in PortRcvSwitchRelayErrors of the input; an entry whose only port is
 * the input is no error (nobody else is a member): consumed, uncounted.
 * A member port not Active counts PortXmitDiscards, the others get theirs.
 */
static void test_discards(void)
{
	struct ibemu_port_counters c;
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct mc_ul u = {0};

	star(0, 0, &t, &r, &e, &u);
	u.payload = 64;
	u.left = 3; /* an empty entry */
	ibemu_engine_kick(e, u.src);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	counters(e, 1, &c);
	T_EQ_U64(c.rcv_switch_relay_errors, 3);

	T_EQ_INT(ibemu_engine_set_mft(e, 0, MLID, 0, 1u << 1), 0);
	u.left = 2; /* the input port only */
	ibemu_engine_kick(e, u.src);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	counters(e, 1, &c);
	T_EQ_U64(c.rcv_switch_relay_errors, 3);
	T_EQ_U64(c.rcv_pkts, 5);

	/* b, c, d; d's port is Armed. */
	T_EQ_INT(ibemu_engine_set_mft(e, 0, MLID, 0, 0x1c), 0);
	T_EQ_INT(ibemu_engine_set_port_state(
			 e, ibemu_engine_port_index(e, 0, 4), IBEMU_PORT_ARMED),
		 0);
	u.left = 4;
	ibemu_engine_kick(e, u.src);
	ibemu_engine_run(e, UINT64_MAX, 1000000);
	T_EQ_INT(u.got[1], 4);
	T_EQ_INT(u.got[2], 4);
	T_EQ_INT(u.got[3], 0);
	counters(e, 4, &c);
	T_EQ_U64(c.xmit_discards, 4);
	T_EQ_U64(c.xmit_pkts, 0);
	star_free(t, r, e);
}

/* The MFT as the SMA sets it: range checks, unknown ports masked off. */
static void test_mft_table(void)
{
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct mc_ul u = {0};
	uint16_t mask = 1;

	star(0, 0, &t, &r, &e, &u);
	T_EQ_INT(ibemu_engine_get_mft(e, 0, MLID, 0, &mask), 0);
	T_EQ_INT(mask, 0);
	T_EQ_INT(ibemu_engine_set_mft(e, 0, MLID, 0, 0xffff), 0);
	T_EQ_INT(ibemu_engine_get_mft(e, 0, MLID, 0, &mask), 0);
	T_EQ_INT(mask, 0x1f); /* ports 0..4 */
	T_EQ_INT(ibemu_engine_set_mft(e, 0, MLID, 1, 1), -EINVAL);
	T_EQ_INT(ibemu_engine_set_mft(e, 0, 0xbfff, 0, 1), -EINVAL);
	T_EQ_INT(ibemu_engine_set_mft(e, 0, 0xc000 + IBEMU_MFT_CAP, 0, 1),
		 -EINVAL);
	T_EQ_INT(ibemu_engine_set_mft(e, 1, MLID, 0, 1), -EINVAL); /* HCA */
	star_free(t, r, e);
}

void ibemu_test_register_switch_multicast(void)
{
	static const struct ibemu_test tests[] = {
		{"replicates_by_mft", test_replicates_by_mft},
		{"input_freed_by_last_copy", test_input_freed_by_last_copy},
		{"discards", test_discards},
		{"mft_table", test_mft_table},
		{NULL, NULL},
	};

	ibemu_test_add_suite("switch.multicast", tests);
}
