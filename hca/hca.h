/* SPDX-License-Identifier: MIT */
/*
 * The HCA model as others see it: the node class the composition layer
 * (model/) registers with the engine, and the state an HCA port owns that
 * its agents read and write: the congestion control settings of IBA Annex
 * A10 (the CC agent in agent/cc.c encodes them; injection will be
 * throttled by them when CCTI and IPD are modelled).
 */
#ifndef IBEMU_HCA_H
#define IBEMU_HCA_H

#include <stdint.h>

#include "engine.h"

/* The HCA class: ports that pull from their owner (hca/port.c). */
extern const struct ibemu_node_ops ibemu_hca_ops;

#define IBEMU_HCA_CC_SLS     16	  /* CACongestionSetting entries: per SL */
#define IBEMU_HCA_CCT_BLOCKS 16	  /* CongestionInfo ControlTableCap */
#define IBEMU_HCA_CCT_BLOCK  64	  /* CongestionControlTable block */
#define IBEMU_HCA_CCT_LEN    1024 /* entries: blocks x block */

/* A10.4.3.8 CACongestionSetting and A10.4.3.9 CongestionControlTable. */
struct ibemu_hca_cc {
	uint16_t port_control;
	uint16_t control_map; /* one bit per SL */
	struct {
		uint16_t ccti_timer;
		uint8_t ccti_increase;
		uint8_t trigger_threshold;
		uint8_t ccti_min;
	} sl[IBEMU_HCA_CC_SLS];
	uint16_t ccti_limit;
	struct {
		uint8_t shift;	     /* 2 bits */
		uint16_t multiplier; /* 14 bits */
	} cct[IBEMU_HCA_CCT_LEN]; /* inter-packet delay: multiplier << shift */
};

/*
 * The CC settings of HCA port 'port' (global index). They take 4 KiB a
 * port, so they exist only once written: with 'create' 0 this returns NULL
 * until then (read them as zeros); with 'create' 1 it allocates them.
 * NULL too if 'port' is not an HCA port or memory runs out.
 */
struct ibemu_hca_cc *ibemu_hca_cc(struct ibemu_engine *e, uint32_t port,
				  int create);

#endif
