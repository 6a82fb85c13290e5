// SPDX-License-Identifier: MIT
/*
 * The performance management agent (IBA 16.1): ClassPortInfo says what it
 * supports, PortCounters and PortCountersExtended read the engine's
 * counters through the views of pma_view.c, and a Set clears the
 * counters its CounterSelect names. There is one set of counters per
 * port: clearing PortXmitData through either attribute clears both views.
 */
#include <string.h>

#include "agent_int.h"
#include "pma_view.h"

/*
 * IBA 16.1.2 / 13.4.8.1: AllPortSelect, the extended counters with their
 * unicast and multicast ones (not only the IETF MIB's), PortXmitWait;
 * CapabilityMask2 bit 1, IsAdditionalPortCountersExtendedSupported: the
 * 64-bit error counters of PortCountersExtended are kept too. infiniband-
 * diags' perfquery reads exactly these bits.
 */
#define PMA_CAP                                                    \
	(IBEMU_PMA_CAP_ALL_PORT_SELECT | IBEMU_PMA_CAP_EXT_WIDTH | \
	 IBEMU_PMA_CAP_XMIT_WAIT)
#define PMA_CAP2_ADDL_EXT (1u << 1)

static int class_port_info(struct ibemu_agent_req *r)
{
	struct ibemu_mad_class_port_info cpi;

	memset(&cpi, 0, sizeof(cpi));
	cpi.base_version = IBEMU_MAD_BASE_VERSION;
	cpi.class_version = IBEMU_MAD_PERF_CLASS_VERSION;
	cpi.capability_mask = PMA_CAP;
	cpi.capability_mask2 = PMA_CAP2_ADDL_EXT;
	cpi.resp_time_value = IBEMU_AGENT_RESP_TIME;
	IBEMU_BUG_ON(ibemu_mad_class_port_info_encode(
		&cpi, r->resp + IBEMU_PMA_DATA_OFF, IBEMU_PMA_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * The ports PortSelect names: one port, or with 0xFF all of them (IBA
 * 16.1.3.5, AllPortSelect). A switch has ports 0..N, a CA 1..N. Sets
 * [*first, *last] as global indices; returns 0 or -1 for a bad PortSelect.
 */
static int port_range(const struct ibemu_agent_req *r, unsigned sel,
		      uint32_t *first, uint32_t *last)
{
	const struct ibemu_agent_node *n = ibemu__agent_node(r->e, r->node);
	unsigned lo = n->is_switch ? 0 : 1;

	if (sel == IBEMU_PMA_ALL_PORTS) {
		*first = n->first_port + lo;
		*last = n->first_port + n->nports;
		return 0;
	}
	if (sel < lo || sel > n->nports)
		return -1;
	*first = *last = n->first_port + sel;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The counters of ports [first, last], summed (each stops at its max). */
static void counters_sum(const struct ibemu_engine *e, uint32_t first,
			 uint32_t last, struct ibemu_port_counters *sum)
{
	struct ibemu_port_counters c;
	uint32_t pi;

	memset(sum, 0, sizeof(*sum));
	for (pi = first; pi <= last; pi++) {
		ibemu_engine_counters(e, pi, &c);
		sum->xmit_data = sat_add(sum->xmit_data, c.xmit_data);
		sum->rcv_data = sat_add(sum->rcv_data, c.rcv_data);
		sum->xmit_pkts = sat_add(sum->xmit_pkts, c.xmit_pkts);
		sum->rcv_pkts = sat_add(sum->rcv_pkts, c.rcv_pkts);
		sum->xmit_wait = sat_add(sum->xmit_wait, c.xmit_wait);
		sum->xmit_discards =
			sat_add(sum->xmit_discards, c.xmit_discards);
		sum->rcv_switch_relay_errors =
			sat_add(sum->rcv_switch_relay_errors,
				c.rcv_switch_relay_errors);
		sum->vl15_dropped = sat_add(sum->vl15_dropped, c.vl15_dropped);
		sum->rcv_errors = sat_add(sum->rcv_errors, c.rcv_errors);
		sum->unicast_xmit_pkts =
			sat_add(sum->unicast_xmit_pkts, c.unicast_xmit_pkts);
		sum->unicast_rcv_pkts =
			sat_add(sum->unicast_rcv_pkts, c.unicast_rcv_pkts);
		sum->multicast_xmit_pkts = sat_add(sum->multicast_xmit_pkts,
						   c.multicast_xmit_pkts);
		sum->multicast_rcv_pkts =
			sat_add(sum->multicast_rcv_pkts, c.multicast_rcv_pkts);
	}
}

/*
 * Zeroes the selected counters (IBEMU_CNT_* bits) of ports [first, last]
 * in the engine. The counters no port model increments yet (symbol errors,
 * link downed...) are always 0 and need nothing.
 */
static void counters_clear(struct ibemu_engine *e, uint32_t first,
			   uint32_t last, unsigned what)
{
	uint32_t pi;

	for (pi = first; pi <= last; pi++)
		ibemu_engine_counters_clear(e, pi, what);
}

/* IBA 16.1.3.5: CounterSelect and CounterSelect2 of PortCounters. */
static unsigned pc_clear_mask(const struct ibemu_mad_port_counters *in)
{
	unsigned cs = in->counter_select, what = 0;

	if (cs & IBEMU_PMA_CS_RCV_ERRORS)
		what |= IBEMU_CNT_RCV_ERRORS;
	if (cs & IBEMU_PMA_CS_RCV_SWITCH_RELAY)
		what |= IBEMU_CNT_RELAY_ERRORS;
	if (cs & IBEMU_PMA_CS_XMIT_DISCARDS)
		what |= IBEMU_CNT_XMIT_DISCARDS;
	if (cs & IBEMU_PMA_CS_VL15_DROPPED)
		what |= IBEMU_CNT_VL15_DROPPED;
	if (cs & IBEMU_PMA_CS_XMIT_DATA)
		what |= IBEMU_CNT_XMIT_DATA;
	if (cs & IBEMU_PMA_CS_RCV_DATA)
		what |= IBEMU_CNT_RCV_DATA;
	if (cs & IBEMU_PMA_CS_XMIT_PKTS)
		what |= IBEMU_CNT_XMIT_PKTS;
	if (cs & IBEMU_PMA_CS_RCV_PKTS)
		what |= IBEMU_CNT_RCV_PKTS;
	if (in->counter_select2 & IBEMU_PMA_CS2_XMIT_WAIT)
		what |= IBEMU_CNT_XMIT_WAIT;
	return what;
}

static int port_counters(struct ibemu_agent_req *r)
{
	struct ibemu_mad_port_counters in, out;
	struct ibemu_port_counters c;
	uint32_t first, last;

	ibemu_mad_port_counters_decode(r->req + IBEMU_PMA_DATA_OFF,
				       IBEMU_PMA_DATA_LEN, &in);
	if (port_range(r, in.port_select, &first, &last))
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET)
		counters_clear(r->e, first, last, pc_clear_mask(&in));
	counters_sum(r->e, first, last, &c);
	memset(&out, 0, sizeof(out));
	out.port_select = in.port_select;
	out.counter_select = in.counter_select;
	out.counter_select2 = in.counter_select2;
	ibemu_pma_port_counters(&c, &out);
	IBEMU_BUG_ON(ibemu_mad_port_counters_encode(
		&out, r->resp + IBEMU_PMA_DATA_OFF, IBEMU_PMA_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * IBA 16.1.4.11: CounterSelect bits 0-7 name the 64-bit traffic counters
 * in order, CounterSelect2 bits 0-13 the error counters (PortRcvErrors is
 * bit 3, PortRcvSwitchRelayErrors 5, PortXmitDiscards 6, VL15Dropped 11,
 * PortXmitWait 12), as perfquery -x -R sends them.
 */
static unsigned ext_clear_mask(const struct ibemu_mad_port_counters_ext *in)
{
	static const struct {
		uint32_t bit;
		unsigned what;
	} sel[] = {{1u << 0, IBEMU_CNT_XMIT_DATA},
		   {1u << 1, IBEMU_CNT_RCV_DATA},
		   {1u << 2, IBEMU_CNT_XMIT_PKTS},
		   {1u << 3, IBEMU_CNT_RCV_PKTS},
		   {1u << 4, IBEMU_CNT_UNICAST_XMIT},
		   {1u << 5, IBEMU_CNT_UNICAST_RCV},
		   {1u << 6, IBEMU_CNT_MULTICAST_XMIT},
		   {1u << 7, IBEMU_CNT_MULTICAST_RCV}},
	  sel2[] = {{1u << 3, IBEMU_CNT_RCV_ERRORS},
		    {1u << 5, IBEMU_CNT_RELAY_ERRORS},
		    {1u << 6, IBEMU_CNT_XMIT_DISCARDS},
		    {1u << 11, IBEMU_CNT_VL15_DROPPED},
		    {1u << 12, IBEMU_CNT_XMIT_WAIT}};
	unsigned what = 0, i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(sel); i++)
		if (in->counter_select & sel[i].bit)
			what |= sel[i].what;
	for (i = 0; i < IBEMU_ARRAY_SIZE(sel2); i++)
		if (in->counter_select2 & sel2[i].bit)
			what |= sel2[i].what;
	return what;
}

static int port_counters_ext(struct ibemu_agent_req *r)
{
	struct ibemu_mad_port_counters_ext in, out;
	struct ibemu_port_counters c;
	uint32_t first, last;

	ibemu_mad_port_counters_ext_decode(r->req + IBEMU_PMA_DATA_OFF,
					   IBEMU_PMA_DATA_LEN, &in);
	if (port_range(r, in.port_select, &first, &last))
		return IBEMU_MAD_STATUS_INVALID_FIELD;
	if (r->method == IBEMU_MAD_METHOD_SET)
		counters_clear(r->e, first, last, ext_clear_mask(&in));
	counters_sum(r->e, first, last, &c);
	memset(&out, 0, sizeof(out));
	out.port_select = in.port_select;
	out.counter_select = in.counter_select;
	out.counter_select2 = in.counter_select2;
	ibemu_pma_port_counters_ext(&c, &out);
	IBEMU_BUG_ON(ibemu_mad_port_counters_ext_encode(
		&out, r->resp + IBEMU_PMA_DATA_OFF, IBEMU_PMA_DATA_LEN));
	return IBEMU_MAD_STATUS_OK;
}

/*
 * PortSamplesControl and PortSamplesResult (IBA 16.1.3) are not kept:
 * they answer METHOD_ATTR_UNSUPP, as any attribute missing here.
 */
static const struct ibemu_agent_attr pma_attrs[] = {
	{IBEMU_PMA_ATTR_CLASS_PORT_INFO, IBEMU_AGENT_GET, IBEMU_AGENT_ANY,
	 class_port_info},
	{IBEMU_PMA_ATTR_PORT_COUNTERS, IBEMU_AGENT_GET | IBEMU_AGENT_SET,
	 IBEMU_AGENT_ANY, port_counters},
	{IBEMU_PMA_ATTR_PORT_COUNTERS_EXT, IBEMU_AGENT_GET | IBEMU_AGENT_SET,
	 IBEMU_AGENT_ANY, port_counters_ext},
};

int ibemu__pma_process(struct ibemu_agent_req *r)
{
	/* The PMA sends no traps and takes no TrapRepress(). */
	if (r->method != IBEMU_MAD_METHOD_GET &&
	    r->method != IBEMU_MAD_METHOD_SET)
		return IBEMU_MAD_STATUS_METHOD_UNSUPP;
	memset(r->resp + IBEMU_PMA_DATA_OFF, 0, IBEMU_PMA_DATA_LEN);
	return ibemu__agent_dispatch(r, pma_attrs, IBEMU_ARRAY_SIZE(pma_attrs));
}
