/* SPDX-License-Identifier: MIT */
/*
 * The switch model as others see it: the node class the composition layer
 * (model/) registers with the engine, and the state the switch owns that
 * its agents read and write: the congestion control settings of IBA Annex
 * A10 (the CC agent in agent/cc.c encodes them; the relay will act on
 * them when FECN marking is modelled).
 */
#ifndef IBEMU_SWITCH_H
#define IBEMU_SWITCH_H

#include <stdint.h>

#include "engine.h"

/* The switch class: input-buffered virtual cut-through (switch/relay.c). */
extern const struct ibemu_node_ops ibemu_switch_ops;

/* Ports a CC port mask covers (A10.4.3.6: 256 bits). */
#define IBEMU_SWITCH_CC_MASK_BYTES 32

/* A10.4.3.6 SwitchCongestionSetting, as the switch applies it. */
struct ibemu_switch_cc {
	uint32_t control_map;
	uint8_t victim_mask[IBEMU_SWITCH_CC_MASK_BYTES]; /* bit per port */
	uint8_t credit_mask[IBEMU_SWITCH_CC_MASK_BYTES];
	uint8_t threshold;	  /* 0..15 */
	uint8_t packet_size;	  /* in 64-byte credits */
	uint8_t cs_threshold;	  /* 0..15 */
	uint16_t cs_return_delay; /* shift (2 bits) and multiplier (14) */
	uint16_t marking_rate;
};

/* A10.4.3.7 SwitchPortCongestionSetting of one port. */
struct ibemu_switch_port_cc {
	uint8_t valid;
	uint8_t control_type; /* 0 congestion, 1 credit starvation */
	uint8_t threshold;
	uint8_t packet_size;
	uint16_t cong_parm; /* Marking_Rate when control_type is 0 */
};

/* The CC settings of switch 'node' (zeroed at power-on); NULL if 'node' is
 * not a switch. The pointer stays valid for the engine's life. */
struct ibemu_switch_cc *ibemu_switch_cc(struct ibemu_engine *e, uint32_t node);
/* Those of its port 'port' (0..NumPorts); NULL if out of range. */
struct ibemu_switch_port_cc *ibemu_switch_port_cc(struct ibemu_engine *e,
						  uint32_t node, unsigned port);

#endif
