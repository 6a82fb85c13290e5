/* SPDX-License-Identifier: MIT */
/*
 * The PMA's views of a port's counters (IBA vol 1, 16.1.3.5 PortCounters
 * and 16.1.4.11 PortCountersExtended), in the MAD structs of mad/, taken
 * from the engine's full-width counters: PortCounters fields stop at their
 * maximum instead of wrapping; the extended ones are 64 bits.
 */
#ifndef IBEMU_PMA_VIEW_H
#define IBEMU_PMA_VIEW_H

#include "engine.h"
#include "mad_pma.h"

/* Fills the counter fields of 'out' (PortSelect, CounterSelect untouched). */
void ibemu_pma_port_counters(const struct ibemu_port_counters *c,
			     struct ibemu_mad_port_counters *out);
void ibemu_pma_port_counters_ext(const struct ibemu_port_counters *c,
				 struct ibemu_mad_port_counters_ext *out);

#endif
