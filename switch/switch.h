/* SPDX-License-Identifier: MIT */
/*
 * The switch model as others see it: the node class the composition layer
 * (model/) registers with the engine, and the state the switch owns that
 * its agents read and write: the congestion control settings of IBA Annex
 * A10 (the CC agent in agent/cc.c encodes them; the relay marks FECN by
 * them, switch/cc_mark.c) and the CongestionLog the marking fills.
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
	/* First: the relay reads it at every hop (switch_int.h). */
	uint8_t threshold;	  /* 0..15 */
	uint8_t packet_size;	  /* in 64-byte credits */
	uint8_t cs_threshold;	  /* 0..15 */
	uint16_t cs_return_delay; /* shift (2 bits) and multiplier (14) */
	uint16_t marking_rate;
	uint32_t control_map;
	uint8_t victim_mask[IBEMU_SWITCH_CC_MASK_BYTES]; /* bit per port */
	uint8_t credit_mask[IBEMU_SWITCH_CC_MASK_BYTES];
};

/* A10.4.3.7 SwitchPortCongestionSetting of one port. */
struct ibemu_switch_port_cc {
	uint8_t valid;
	uint8_t control_type; /* 0 congestion, 1 credit starvation */
	uint8_t threshold;
	uint8_t packet_size;
	uint16_t cong_parm; /* Marking_Rate when control_type is 0 */
};

#define IBEMU_SWITCH_CC_LOG_ENTRIES 15 /* a switch CongestionLog holds 15 */

/* A10.4.3.5 CongestionLog (switch): markings since it was last read. */
struct ibemu_switch_cc_log {
	uint16_t events; /* LogEventsCounter (wraps) */
	uint8_t port_map[IBEMU_SWITCH_CC_MASK_BYTES]; /* ports that marked */
	uint8_t len, next;
	struct {
		uint16_t slid, dlid;
		uint8_t sl;
		uint32_t timestamp; /* 1.024 us units */
	} entry[IBEMU_SWITCH_CC_LOG_ENTRIES];
};

/* The CC settings of switch 'node' (zeroed at power-on); NULL if 'node' is
 * not a switch. The pointer stays valid for the engine's life. */
struct ibemu_switch_cc *ibemu_switch_cc(struct ibemu_engine *e, uint32_t node);
/* Those of its port 'port' (0..NumPorts); NULL if out of range. */
struct ibemu_switch_port_cc *ibemu_switch_port_cc(struct ibemu_engine *e,
						  uint32_t node, unsigned port);
/* Its CongestionLog; NULL if 'node' is not a switch. */
struct ibemu_switch_cc_log *ibemu_switch_cc_log(struct ibemu_engine *e,
						uint32_t node);

/*
 * A port's VL is "in congestion" (A10.2.1.1) once the blocks queued in the
 * switch for it pass a share of what the switch can hold for it, one
 * buffer of that VL at each of its 'nports' inputs: Threshold 15 marks at
 * 1/16 of it, 1 at 15/16; 0 never marks. The spec leaves the scale to the
 * implementation; ibemu's is linear.
 */
static inline uint32_t
ibemu_switch_cc_limit(unsigned threshold, uint32_t buf_blocks, unsigned nports)
{
	return threshold ? buf_blocks * nports * (16u - threshold) / 16u
			 : UINT32_MAX;
}

#endif
