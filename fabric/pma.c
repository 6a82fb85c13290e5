// SPDX-License-Identifier: MIT
/*
 * PortCounters fields saturate: IBA 16.1.3.5 has each counter stop at all
 * ones rather than wrap, so a reader can tell "at least this many".
 */
#include "pma.h"

static uint16_t sat16(uint64_t v)
{
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void ibemu_pma_port_counters(const struct ibemu_port_counters *c,
			     struct ibemu_pma_port_counters *out)
{
	out->port_rcv_switch_relay_errors = sat16(c->rcv_switch_relay_errors);
	out->port_xmit_discards = sat16(c->xmit_discards);
	out->vl15_dropped = sat16(c->vl15_dropped);
	out->port_xmit_data = sat32(c->xmit_data);
	out->port_rcv_data = sat32(c->rcv_data);
	out->port_xmit_pkts = sat32(c->xmit_pkts);
	out->port_rcv_pkts = sat32(c->rcv_pkts);
	out->port_xmit_wait = sat32(c->xmit_wait);
}
