/* SPDX-License-Identifier: MIT */
/*
 * The PMA's views of a port's counters (IBA vol 1, 16.1.3.5 PortCounters
 * and 16.1.4.11 PortCountersExtended): fixed-width fields that stop at
 * their maximum instead of wrapping, taken from the engine's full-width
 * counters.
 */
#ifndef IBEMU_PMA_H
#define IBEMU_PMA_H

#include <stdint.h>

#include "engine.h"

struct ibemu_pma_port_counters {
	uint16_t port_rcv_switch_relay_errors;
	uint16_t port_xmit_discards;
	uint16_t vl15_dropped;
	uint32_t port_xmit_data; /* 4-byte words */
	uint32_t port_rcv_data;
	uint32_t port_xmit_pkts;
	uint32_t port_rcv_pkts;
	uint32_t port_xmit_wait;
};

/* Saturates 'c' into the 16- and 32-bit fields of PortCounters. */
void ibemu_pma_port_counters(const struct ibemu_port_counters *c,
			     struct ibemu_pma_port_counters *out);

#endif
