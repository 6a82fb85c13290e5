// SPDX-License-Identifier: MIT
/* Unit tests of the topology model: nodes, cabling rules, GUIDs, rates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "topo.h"
#include "unit.h"

static void test_connect_rules(void)
{
	struct ibemu_topo *t;
	uint32_t sw, h1, h2, link;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "sw", 8, &sw), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h1", 1, &h1), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h2", 2, &h2), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h1", 1, NULL),
		 -EEXIST);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "a:b", 1, NULL),
		 -EINVAL);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "x", 0, NULL), -EINVAL);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "x", 255, NULL),
		 -EINVAL);
	T_EQ_INT(ibemu_topo_connect(t, sw, 1, h1, 1, &link), 0);
	T_EQ_INT(link, 0);
	T_EQ_INT(ibemu_topo_connect(t, sw, 1, h2, 1, NULL), -EBUSY);
	T_EQ_INT(ibemu_topo_connect(t, sw, 9, h2, 1, NULL), -ERANGE);
	T_EQ_INT(ibemu_topo_connect(t, sw, 0, h2, 1, NULL), -ERANGE);
	T_EQ_INT(ibemu_topo_connect(t, sw, 2, sw, 2, NULL), -EINVAL);
	T_EQ_INT(ibemu_topo_connect(t, h2, 2, sw, 2, NULL), 0);
	T_EQ_INT(t->nodes[sw].ports[2].peer_node, h2);
	T_EQ_INT(t->nodes[h2].ports[2].peer_port, 2);
	T_EQ_U64(t->links[1].latency_ps, 10000); /* 2 m at 5 ns/m */
	ibemu_topo_destroy(t);
}

static void test_guids(void)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t sw, h;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "sw", 4, &sw), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h", 2, &h), 0);
	T_EQ_INT(ibemu_topo_connect(t, sw, 1, h, 1, NULL), 0);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	T_EQ_U64(t->nodes[sw].guid, ibemu_topo_derive_guid("sw"));
	T_EQ_U64(t->nodes[sw].guid >> 40, IBEMU_OUI);
	T_EQ_U64(t->nodes[sw].ports[3].guid, t->nodes[sw].guid);
	T_EQ_U64(t->nodes[h].ports[2].guid, t->nodes[h].guid + 2);
	T_EQ_INT(d.nwarnings, 0);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* A given GUID equal to another node's port GUID is a clash. */
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "a", 2, NULL), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "b", 1, NULL), 0);
	t->nodes[0].guid = 0x100;
	t->nodes[1].guid = 0x102;
	T_EQ_INT(ibemu_topo_finalize(t, &d), -EINVAL);
	T_TRUE(d.error && strstr(d.error, "duplicate GUID"));
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

/* Regression: a node with many ports claims many GUIDs; finalize ends. */
static void test_many_port_guids(void)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "x", 254, NULL), 0);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	T_EQ_U64(t->nodes[0].ports[254].guid, t->nodes[0].guid + 254);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_disconnected_warns(void)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "s1", 4, NULL), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "s2", 4, NULL), 0);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	T_EQ_INT(d.nwarnings, 1);
	T_TRUE(d.nwarnings && strstr(d.warnings[0], "not connected"));
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_rates(void)
{
	uint8_t lanes;
	enum ibemu_speed s;

	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_SDR), 8000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_QDR), 32000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_FDR10),
		 40000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_FDR), 54545454545ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_EDR), 100000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_HDR), 200000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_NDR), 400000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(4, IBEMU_SPEED_XDR), 800000000000ull);
	T_EQ_U64(ibemu_link_data_rate_bps(12, IBEMU_SPEED_EDR),
		 300000000000ull);
	/* 4096 bytes on 4x EDR (100 Gb/s): 327.68 ns, rounded up. */
	T_EQ_U64(ibemu_link_serialize_ps(4, IBEMU_SPEED_EDR, 4096), 327680);
	/* 66 bytes on 1x FDR: 66*8/13.6363.. Gb/s = 38.72 ns exactly. */
	T_EQ_U64(ibemu_link_serialize_ps(1, IBEMU_SPEED_FDR, 66), 38720);
	T_EQ_INT(ibemu_width_parse("12x", &lanes), 0);
	T_EQ_INT(lanes, 12);
	T_EQ_INT(ibemu_width_parse("3x", &lanes), -EINVAL);
	T_EQ_INT(ibemu_width_parse("4", &lanes), -EINVAL);
	T_EQ_INT(ibemu_speed_parse("hdr", &s), 0);
	T_EQ_INT(s, IBEMU_SPEED_HDR);
	T_EQ_INT(ibemu_speed_parse("ZDR", &s), -EINVAL);
	T_EQ_INT(ibemu_width_to_ib(2), 16);
	T_EQ_INT(ibemu_width_from_ib(8), 12);
}

/*
 * The unicast LIDs run out (IBA 4.1.3: 0xbfff): one LID per switch and per
 * HCA port. finalize refuses a fabric that needs more, at the first node
 * without one, so every loader (and 'topo check') refuses it as 'up' does.
 */
static void test_lids_run_out(void)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char name[16];
	unsigned i;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	/* 5461 HCAs of 9 ports and 2 switches: 49151 LIDs, all of them. */
	for (i = 0; i < 5461; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, name, 9, NULL),
			 0);
	}
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "s1", 4, NULL), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "s2", 4, NULL), 0);
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	ibemu_diag_fini(&d);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "last", 1, NULL), 0);
	t->nodes[t->nnodes - 1].loc =
		(struct ibemu_loc){.file = "f.yaml", .line = 7, .col = 5};
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_finalize(t, &d), -EINVAL);
	T_EQ_STR(d.error, "f.yaml:7:5: error: the fabric needs 49152 LIDs "
			  "(one per switch and one per HCA port), more than "
			  "the 49151 unicast LIDs (IBA 4.1.3); node 'last' is "
			  "the first without one");
	ibemu_diag_fini(&d);
	ibemu_topo_destroy(t);
}

void ibemu_test_register_topo_model(void)
{
	static const struct ibemu_test tests[] = {
		{"connect_rules", test_connect_rules},
		{"guids", test_guids},
		{"many_port_guids", test_many_port_guids},
		{"disconnected_warns", test_disconnected_warns},
		{"rates", test_rates},
		{"lids_run_out", test_lids_run_out},
		{NULL, NULL},
	};

	ibemu_test_add_suite("topo.model", tests);
}
