// SPDX-License-Identifier: MIT
/*
 * VL arbitration (IBA 7.6.9): weighted round robin within a table, high
 * priority before low, and LimitOfHighPriority giving low priority a turn.
 */
#include <errno.h>
#include <string.h>

#include "switch_int.h"
#include "unit.h"

/* Sends 'n' packets of 'bytes' with every VL in 'eligible' always ready;
 * records the VL chosen each time. */
static void serve(struct ibemu_vlarb *a, uint32_t eligible, unsigned bytes,
		  int *order, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		order[i] = ibemu_vlarb_pick(a, eligible);
		if (order[i] >= 0)
			ibemu_vlarb_charge(a, bytes);
	}
}

static void test_default_round_robin(void)
{
	struct ibemu_vlarb a;
	int order[8];

	/* Default: every data VL with weight 64 (4096 bytes) in the low
	 * table: one 4 KiB packet per VL in turn. */
	ibemu_vlarb_init_default(&a, 4);
	serve(&a, 0xf, 4096, order, 8);
	T_EQ_INT(order[0], 0);
	T_EQ_INT(order[1], 1);
	T_EQ_INT(order[2], 2);
	T_EQ_INT(order[3], 3);
	T_EQ_INT(order[4], 0);
	/* A VL with nothing to send is skipped (the turn is back at VL0). */
	serve(&a, 0x5, 4096, order, 4);
	T_EQ_INT(order[0], 0);
	T_EQ_INT(order[1], 2);
	T_EQ_INT(order[2], 0);
	T_EQ_INT(order[3], 2);
	T_EQ_INT(ibemu_vlarb_pick(&a, 0), -1);
}

static void test_weights(void)
{
	struct ibemu_vlarb a;
	int order[6];

	/* VL0 weight 2 (128 bytes), VL1 weight 1 (64 bytes): with 64-byte
	 * packets VL0 sends two for each of VL1's. */
	memset(&a, 0, sizeof(a));
	a.low[0] = (struct ibemu_vlarb_entry){.vl = 0, .weight = 2};
	a.low[1] = (struct ibemu_vlarb_entry){.vl = 1, .weight = 1};
	a.nlow = 2;
	a.low_left = 2 * 64;
	serve(&a, 0x3, 64, order, 6);
	T_EQ_INT(order[0], 0);
	T_EQ_INT(order[1], 0);
	T_EQ_INT(order[2], 1);
	T_EQ_INT(order[3], 0);
	T_EQ_INT(order[4], 0);
	T_EQ_INT(order[5], 1);
	/* A packet larger than the weight left still goes whole. */
	serve(&a, 0x3, 4096, order, 2);
	T_EQ_INT(order[0], 0);
	T_EQ_INT(order[1], 1);
}

static void test_high_priority_limit(void)
{
	struct ibemu_vlarb a;
	int order[6];

	/* VL1 high, VL0 low; LimitOfHighPriority 1 (4096 bytes): after
	 * 4 KiB of high priority, a waiting low-priority packet goes. */
	memset(&a, 0, sizeof(a));
	a.high[0] = (struct ibemu_vlarb_entry){.vl = 1, .weight = 255};
	a.nhigh = 1;
	a.high_left = 255 * 64;
	a.low[0] = (struct ibemu_vlarb_entry){.vl = 0, .weight = 255};
	a.nlow = 1;
	a.low_left = 255 * 64;
	a.high_limit = 1;
	serve(&a, 0x3, 2048, order, 6);
	T_EQ_INT(order[0], 1);
	T_EQ_INT(order[1], 1);
	T_EQ_INT(order[2], 0);
	T_EQ_INT(order[3], 1);
	T_EQ_INT(order[4], 1);
	T_EQ_INT(order[5], 0);
	/* Without low-priority traffic, high priority is never held back. */
	serve(&a, 0x2, 2048, order, 4);
	T_EQ_INT(order[3], 1);
	/* Limit 255: unlimited, low priority waits. */
	a.high_limit = 255;
	serve(&a, 0x3, 2048, order, 5);
	T_EQ_INT(order[4], 1);
	/* Limit 0: one high-priority packet, then a low one. */
	a.high_limit = 0;
	a.high_sent = 0;
	serve(&a, 0x3, 2048, order, 4);
	T_EQ_INT(order[0], 1);
	T_EQ_INT(order[1], 0);
	T_EQ_INT(order[2], 1);
	T_EQ_INT(order[3], 0);
}

/*
 * A table written through the engine (as Set(VLArbitrationTable) does)
 * starts its round over at its first entry, whatever the arbiter had
 * served of the old one; writing past the 64 entries is refused.
 */
static void test_set_restarts_round(void)
{
	static const struct ibemu_vlarb_entry two[] = {{0, 1}, {1, 1}};
	struct ibemu_vlarb_entry got[IBEMU_VLARB_ENTRIES];
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_routes *r;
	struct ibemu_vlarb *a;
	unsigned n = 0;
	uint32_t pi;
	int order[3];

	ibemu_test_engine_up("two-switch", 0, NULL, NULL, &t, &e, &r);
	pi = ibemu_test_port(t, e, "sw1", 7);
	a = &e->ports[pi].vlarb;
	T_EQ_INT(ibemu_engine_set_vlarb(e, pi, 0, 0, two, 2), 0);
	serve(a, 0x3, 64, order, 1); /* VL0's entry is used up */
	T_EQ_INT(order[0], 0);
	T_EQ_INT(a->low_idx, 1); /* VL1's turn next */
	/* Rewriting the same entries starts over: VL0 first again. */
	T_EQ_INT(ibemu_engine_set_vlarb(e, pi, 0, 0, two, 2), 0);
	T_EQ_INT(a->low_left, 64);
	serve(a, 0x3, 64, order, 3);
	T_EQ_INT(order[0], 0);
	T_EQ_INT(order[1], 1);
	T_EQ_INT(order[2], 0);
	T_EQ_INT(ibemu_engine_get_vlarb(e, pi, 0, got, &n), 0);
	T_EQ_INT(n, IBEMU_VLARB_ENTRIES);
	T_EQ_INT(got[1].vl, 1);
	T_EQ_INT(ibemu_engine_set_vlarb(e, pi, 1, IBEMU_VLARB_ENTRIES - 1, two,
					2),
		 -EINVAL);
	ibemu_test_engine_down(t, e, r);
}

void ibemu_test_register_switch_vl_arbitration(void)
{
	static const struct ibemu_test tests[] = {
		{"default_round_robin", test_default_round_robin},
		{"weights", test_weights},
		{"high_priority_limit", test_high_priority_limit},
		{"set_restarts_round", test_set_restarts_round},
		{NULL, NULL},
	};

	ibemu_test_add_suite("switch.vl_arbitration", tests);
}
