/* SPDX-License-Identifier: MIT */
/*
 * The management agents every node runs (IBA 14.2 SMA, 16.1 PMA, Annex
 * A10 CC agent): they answer the MADs that reach a node, read and change
 * the engine's model (port states, LIDs, LFTs, SL2VL, VL arbitration,
 * counters) and the node models' settings through their public interfaces,
 * and raise traps. They register with the engine as its management ops
 * (ibemu_agent_ops): the subnet management interface (fabric/smi.c) hands
 * them the MADs addressed to a node, after the directed-route hop
 * processing and before the return path.
 */
#ifndef IBEMU_AGENT_H
#define IBEMU_AGENT_H

#include <stdint.h>

#include "engine.h"
#include "mad_sma.h"

/* Reads what Get(PortInfo) of HCA or switch port 'port' (global index)
 * would return, for the daemon (umad_get_port) and the CLI. */
int ibemu_agent_port_info(const struct ibemu_engine *e, uint32_t port,
			  struct ibemu_mad_port_info *out);
/* Copies up to 'max' P_Keys of port 'port' into 'pkeys'; returns how many
 * the port has. */
unsigned ibemu_agent_pkeys(const struct ibemu_engine *e, uint32_t port,
			   uint16_t *pkeys, unsigned max);

/*
 * Sets then clears bits of port 'port''s PortInfo:CapabilityMask, as a
 * local process does (an SM sets IsSM while it runs). Returns 0 or -EINVAL.
 */
int ibemu_agent_set_port_cap(struct ibemu_engine *e, uint32_t port,
			     uint32_t set, uint32_t clear);

/*
 * The agents as the engine's management (struct ibemu_mgmt_ops): init
 * allocates their state with its power-on values, process and takes are
 * the two functions below, event runs their delayed work (trap repeats,
 * M_Key leases), port_change turns a switch port's change by the link
 * state machine into PortStateChange and Trap 128. For model/ to register.
 */
extern const struct ibemu_mgmt_ops ibemu_agent_ops;

/* Internal from here on (the ops above; the unit tests call them). */

/*
 * Request 'req' (IBEMU_MAD_LEN bytes) reached the agents of node 'node'
 * through its port 'port' (a switch's SMA sits on port 0 but the MAD came
 * in on 'port'; for an HCA, the port it reached). Writes the response
 * into 'resp' (a copy of the request with the R bit, Status and data set;
 * for a directed-route SMP the caller sets D and the path). Returns 1 when
 * a response is to be sent, 0 when the MAD is dropped silently (IBA
 * 13.5.3: responses and Traps that nobody answers, unknown classes).
 */
int ibemu__agent_process(struct ibemu_engine *e, uint32_t node, unsigned port,
			 const uint8_t *req, uint8_t *resp);

/*
 * Whether a MAD that reached an HCA port is for the node's own agents
 * (SMA Get/Set except SMInfo, TrapRepress; PMA and CC requests) rather
 * than for an attached process (responses, SMInfo, Traps, SA, others).
 */
int ibemu__agent_takes(const uint8_t *mad);

#endif
