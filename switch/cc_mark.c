// SPDX-License-Identifier: MIT
/*
 * FECN marking (IBA vol 1, Annex A10.2): a switch output port whose VL has
 * too much data waiting for it sets FECN in the packets it sends, so that
 * their destinations tell their sources to slow down.
 *
 * The switch model buffers at its inputs, so "the data waiting for an
 * output VL" is what all input buffers hold for it, head or not: the
 * relay tells this file of every packet joining and leaving (queued[]).
 * Whether the port is the root of the congestion or its victim is told
 * by credits (A10.2.1.1): a port that had to wait for credit since its
 * last packet on that VL left is held back by the next hop (a victim);
 * one that had credit is slower than what comes in (a root).
 */
#include "switch_int.h"

/* A10.4.3.5 and A10.4.3.10: CC time stamps count 1.024 us. */
#define CC_TIMESTAMP_UNIT_PS 1024000ull

/* A10.4.3.6: port n is bit n of a 256-bit mask sent most significant
 * byte first, so port 0 is the low bit of the last byte. */
static int mask_has(const uint8_t *mask, unsigned port)
{
	return (mask[IBEMU_SWITCH_CC_MASK_BYTES - 1 - port / 8] >> (port % 8)) &
	       1;
}

static void mask_set(uint8_t *mask, unsigned port)
{
	mask[IBEMU_SWITCH_CC_MASK_BYTES - 1 - port / 8] |=
		(uint8_t)(1u << (port % 8));
}

/* A10.4.3.5: the switch logs each marking, and the port that marked. */
static void log_marking(struct ibemu_engine *e, struct ibemu_switch *sw,
			unsigned out, const struct ibemu_pkt *pkt)
{
	struct ibemu_switch_cc_log *log = &sw->cc_log;
	unsigned i = log->next;

	log->events++;
	mask_set(log->port_map, out);
	log->entry[i].slid = pkt->slid;
	log->entry[i].dlid = pkt->dlid;
	log->entry[i].sl = pkt->sl & 15;
	log->entry[i].timestamp = (uint32_t)(e->now / CC_TIMESTAMP_UNIT_PS);
	log->next = (uint8_t)((i + 1) % IBEMU_SWITCH_CC_LOG_ENTRIES);
	if (log->len < IBEMU_SWITCH_CC_LOG_ENTRIES)
		log->len++;
}

void ibemu__switch_cc_mark(struct ibemu_engine *e, struct ibemu_switch *sw,
			   uint32_t pi, unsigned port, struct ibemu_pkt *pkt,
			   int victim)
{
	struct ibemu_eport *out = &e->ports[pi];
	struct ibemu_swport *so = &sw->port[port];
	const struct ibemu_switch_cc *cc = &sw->cc;
	unsigned vl = pkt->vl, threshold = cc->threshold;
	unsigned packet_size = cc->packet_size, rate = cc->marking_rate;
	uint32_t depth;

	/*
	 * A10.4.3.7: a valid SwitchPortCongestionSetting of Control_Type 0
	 * overrides the switch's Threshold, Packet_Size and Marking_Rate
	 * for its port.
	 */
	if (so->cc.valid && so->cc.control_type == 0) {
		threshold = so->cc.threshold;
		packet_size = so->cc.packet_size;
		rate = so->cc.cong_parm;
	}
	/* A10.2.1.1: a packet smaller than Packet_Size (in credits) is not
	 * eligible; one marked upstream stays so. */
	if (pkt->fecn || pkt->blocks < packet_size)
		return;
	depth = so->out[vl].queued;
	/*
	 * A10.2.1.1: a port in congestion marks if it is the root of it, or
	 * a victim that Victim_Mask names (Threshold 0: never in
	 * congestion). A10.2.1.2: a port in Credit_Mask also marks while
	 * starved of credit past CS_Threshold.
	 */
	if (depth >= ibemu_switch_cc_limit(threshold, out->buf_blocks, 1)) {
		if (victim && !mask_has(cc->victim_mask, port))
			return;
	} else if (!victim || !mask_has(cc->credit_mask, port) ||
		   depth < ibemu_switch_cc_limit(cc->cs_threshold,
						 out->buf_blocks, 1)) {
		return;
	}
	/* A10.4.3.6 Marking_Rate: the mean number of eligible packets
	 * between two marked ones (0: mark every one). */
	if (so->mark_skip[vl]) {
		so->mark_skip[vl]--;
		return;
	}
	so->mark_skip[vl] = (uint16_t)rate;
	pkt->fecn = 1;
	out->cnt.fecn_marked++;
	log_marking(e, sw, port, pkt);
}
