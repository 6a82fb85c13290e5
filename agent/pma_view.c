// SPDX-License-Identifier: MIT
/*
 * PortCounters fields saturate: IBA 16.1.3.5 has each counter stop at all
 * ones rather than wrap, so a reader can tell "at least this many". The
 * engine keeps 64-bit counters; these views are what a PMA reports.
 */
#include "pma_view.h"

static uint16_t sat16(uint64_t v)
{
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void ibemu_pma_port_counters(const struct ibemu_port_counters *c,
			     struct ibemu_mad_port_counters *out)
{
	out->port_rcv_errors = sat16(c->rcv_errors);
	out->port_rcv_switch_relay_errors = sat16(c->rcv_switch_relay_errors);
	out->port_xmit_discards = sat16(c->xmit_discards);
	out->vl15_dropped = sat16(c->vl15_dropped);
	out->port_xmit_data = sat32(c->xmit_data);
	out->port_rcv_data = sat32(c->rcv_data);
	out->port_xmit_pkts = sat32(c->xmit_pkts);
	out->port_rcv_pkts = sat32(c->rcv_pkts);
	out->port_xmit_wait = sat32(c->xmit_wait);
}

void ibemu_pma_port_counters_ext(const struct ibemu_port_counters *c,
				 struct ibemu_mad_port_counters_ext *out)
{
	out->port_xmit_data = c->xmit_data;
	out->port_rcv_data = c->rcv_data;
	out->port_xmit_pkts = c->xmit_pkts;
	out->port_rcv_pkts = c->rcv_pkts;
	out->port_unicast_xmit_pkts = c->unicast_xmit_pkts;
	out->port_unicast_rcv_pkts = c->unicast_rcv_pkts;
	out->port_multicast_xmit_pkts = c->multicast_xmit_pkts;
	out->port_multicast_rcv_pkts = c->multicast_rcv_pkts;
	out->port_rcv_errors = c->rcv_errors;
	out->port_rcv_switch_relay_errors = c->rcv_switch_relay_errors;
	out->port_xmit_discards = c->xmit_discards;
	out->vl15_dropped = c->vl15_dropped;
	out->port_xmit_wait = c->xmit_wait;
}
