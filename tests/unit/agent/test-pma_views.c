// SPDX-License-Identifier: MIT
/*
 * PMA views of the engine's counters: PortCounters fields saturate at
 * their width (IBA 16.1.3.5), PortCountersExtended keeps 64 bits, and the
 * result encodes into the PMA MAD where libibmad reads the same values.
 */
#include <infiniband/mad.h>

#include "pma_view.h"
#include "unit.h"

static void test_saturation(void)
{
	struct ibemu_port_counters c = {0};
	struct ibemu_mad_port_counters pc = {0};
	struct ibemu_mad_port_counters_ext ext = {0};

	c.xmit_data = 0x123456789ull; /* over 32 bits */
	c.rcv_data = 0xffffffffull;   /* exactly the maximum */
	c.xmit_pkts = 7;
	c.rcv_pkts = 0x100000000ull;
	c.xmit_wait = 42;
	c.xmit_discards = 70000; /* over 16 bits */
	c.rcv_switch_relay_errors = 65535;
	c.vl15_dropped = 3;
	c.unicast_xmit_pkts = 7;
	ibemu_pma_port_counters(&c, &pc);
	T_EQ_U64(pc.port_xmit_data, 0xffffffffu);
	T_EQ_U64(pc.port_rcv_data, 0xffffffffu);
	T_EQ_U64(pc.port_xmit_pkts, 7);
	T_EQ_U64(pc.port_rcv_pkts, 0xffffffffu);
	T_EQ_U64(pc.port_xmit_wait, 42);
	T_EQ_U64(pc.port_xmit_discards, 0xffff);
	T_EQ_U64(pc.port_rcv_switch_relay_errors, 0xffff);
	T_EQ_U64(pc.vl15_dropped, 3);
	ibemu_pma_port_counters_ext(&c, &ext);
	T_EQ_U64(ext.port_xmit_data, 0x123456789ull);
	T_EQ_U64(ext.port_rcv_pkts, 0x100000000ull);
	T_EQ_U64(ext.port_unicast_xmit_pkts, 7);
	T_EQ_U64(ext.port_xmit_discards, 70000);
}

/* What the engine counts reaches the wire where libibmad looks for it. */
static void test_encoded_for_libibmad(void)
{
	struct ibemu_port_counters c = {0};
	struct ibemu_mad_port_counters pc = {0};
	uint8_t data[IBEMU_PMA_DATA_LEN] = {0};

	c.xmit_data = 0x123456789ull;
	c.xmit_wait = 1234;
	c.xmit_discards = 70000;
	ibemu_pma_port_counters(&c, &pc);
	T_EQ_INT(ibemu_mad_port_counters_encode(&pc, data, sizeof(data)), 0);
	T_EQ_U64(mad_get_field(data, 0, IB_PC_XMT_BYTES_F), 0xffffffffu);
	T_EQ_U64(mad_get_field(data, 0, IB_PC_XMT_WAIT_F), 1234);
	T_EQ_U64(mad_get_field(data, 0, IB_PC_XMT_DISCARDS_F), 0xffff);
}

void ibemu_test_register_agent_pma_views(void)
{
	static const struct ibemu_test tests[] = {
		{"saturation", test_saturation},
		{"encoded_for_libibmad", test_encoded_for_libibmad},
		{NULL, NULL},
	};

	ibemu_test_add_suite("agent.pma_views", tests);
}
