// SPDX-License-Identifier: MIT
/*
 * The source side of InfiniBand congestion control (IBA vol 1, Annex A10.3):
 * what a CA does with the BECNs that come back to it. Each source (a QP, or
 * an SL of the port: CACongestionSetting's Port_Control bit 0) keeps a
 * Congestion Control Table Index. A BECN raises it by CCTI_Increase, up to
 * CCTI_Limit; each expiry of CCTI_Timer lowers it by one, down to
 * CCTI_Min; the table entry it indexes spaces the source's packets.
 *
 * The timer is kept lazily: a source notes the last expiry it accounted
 * for, and each call first applies the expiries since, so an idle source
 * costs no event and its CCTI is exact whenever it is read.
 */
#include "hca.h"
#include "node.h"
#include "rate.h"

/* A10.4.3.8: CCTI_Timer counts in units of 1.024 us. */
#define CCTI_TIMER_UNIT_PS 1024000ull
/* A10.4.3.5 and A10.4.3.10: the CC time stamps count 1.024 us too. */
#define CC_TIMESTAMP_UNIT_PS 1024000ull

struct ibemu_cc_src *ibemu_hca_cc_src(struct ibemu_engine *e, uint32_t pi,
				      unsigned sl, struct ibemu_cc_src *own)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(e, pi, 0);

	if (!cc)
		return NULL;
	/* A10.4.3.8 Port_Control bit 0: 1 controls per SL, 0 per QP. */
	if (cc->port_control & 1u)
		return &cc->sl_src[sl & 15];
	return own;
}

/* Applies the CCTI_Timer expiries up to now (A10.3.1.2). */
static void run_timer(struct ibemu_engine *e, const struct ibemu_hca_cc *cc,
		      unsigned sl, struct ibemu_cc_src *s)
{
	uint64_t period = cc->sl[sl & 15].ccti_timer * CCTI_TIMER_UNIT_PS;
	uint64_t now = e->now, ticks;
	unsigned min = cc->sl[sl & 15].ccti_min;

	/* A10.4.3.8: CCTI_Min is the least CCTI a source has, from the
	 * moment a CC manager sets it. */
	if (s->ccti < min)
		s->ccti = (uint16_t)min;
	/*
	 * A fresh source's timer starts when it is first used: counted from
	 * virtual time 0, the phase of its expiries, and so a flow's rate,
	 * would depend on when the study started (how long the SM took to
	 * bring the subnet up), and the same study on the same fabric under
	 * OpenSM and under ibemu-sm, or run twice, would differ.
	 */
	if (!s->started) {
		s->started = 1;
		s->timer_ps = now;
	}
	if (!period) {
		/* A zero timer never expires. */
		s->timer_ps = now;
		return;
	}
	if (now < s->timer_ps + period)
		return;
	ticks = (now - s->timer_ps) / period;
	s->timer_ps += ticks * period;
	if (s->ccti <= min)
		return;
	s->ccti = ticks >= (uint64_t)(s->ccti - min)
			  ? (uint16_t)min
			  : (uint16_t)(s->ccti - ticks);
}

unsigned ibemu_hca_cc_ccti(struct ibemu_engine *e, uint32_t pi, unsigned sl,
			   struct ibemu_cc_src *own)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(e, pi, 0);
	struct ibemu_cc_src *s = ibemu_hca_cc_src(e, pi, sl, own);

	if (!s)
		return 0;
	run_timer(e, cc, sl, s);
	return s->ccti;
}

/* A10.4.3.5: a CA logs the source whose CCTI reached Trigger_Threshold. */
static void log_event(struct ibemu_engine *e, uint32_t pi,
		      struct ibemu_hca_cc *cc, unsigned sl,
		      const struct ibemu_cc_event *ev)
{
	unsigned i = cc->log_next;

	cc->log_events++;
	cc->log_sl_map |= (uint16_t)(1u << (sl & 15));
	cc->log[i].ev = *ev;
	cc->log[i].local_lid = e->ports[pi].lid;
	cc->log[i].sl = (uint8_t)(sl & 15);
	cc->log[i].timestamp = (uint32_t)(e->now / CC_TIMESTAMP_UNIT_PS);
	cc->log_next = (uint8_t)((i + 1) % IBEMU_HCA_CC_LOG_ENTRIES);
	if (cc->log_len < IBEMU_HCA_CC_LOG_ENTRIES)
		cc->log_len++;
}

void ibemu_hca_cc_becn(struct ibemu_engine *e, uint32_t pi, unsigned sl,
		       struct ibemu_cc_src *own,
		       const struct ibemu_cc_event *ev)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(e, pi, 0);
	struct ibemu_cc_src *s = ibemu_hca_cc_src(e, pi, sl, own);
	unsigned inc, next, trigger;

	e->ports[pi].cnt.becn_rcvd++;
	if (!s)
		return;
	s->becns++;
	run_timer(e, cc, sl, s);
	/* A10.3.1.1: CCTI rises by CCTI_Increase, never past CCTI_Limit. */
	inc = cc->sl[sl & 15].ccti_increase;
	next = s->ccti + inc;
	if (next > cc->ccti_limit)
		next = cc->ccti_limit;
	/* Trigger_Threshold 0 logs nothing (A10.4.3.8). */
	trigger = cc->sl[sl & 15].trigger_threshold;
	if (trigger && s->ccti < trigger && next >= trigger)
		log_event(e, pi, cc, sl, ev);
	s->ccti = (uint16_t)next;
}

/*
 * A10.3.1: the inter-packet delay of the CCT entry at CCTI, relative to the
 * packet's own time on the link: (packet time x CCT_Multiplier) >>
 * CCT_Shift. A delay of one packet time halves the source's rate.
 */
static uint64_t ipd_ps(const struct ibemu_hca_cc *cc, unsigned ccti,
		       uint64_t pkt_ps)
{
	unsigned mult = cc->cct[ccti].multiplier, shift = cc->cct[ccti].shift;

	return (pkt_ps * mult) >> shift;
}

uint64_t ibemu_hca_cc_wait(struct ibemu_engine *e, uint32_t pi, unsigned sl,
			   struct ibemu_cc_src *own)
{
	struct ibemu_cc_src *s = ibemu_hca_cc_src(e, pi, sl, own);

	if (!s || s->next_ps <= e->now)
		return 0;
	return s->next_ps;
}

void ibemu_hca_cc_sent(struct ibemu_engine *e, uint32_t pi, unsigned sl,
		       struct ibemu_cc_src *own, uint32_t wire_bytes)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(e, pi, 0);
	struct ibemu_cc_src *s = ibemu_hca_cc_src(e, pi, sl, own);
	const struct ibemu_eport *p = &e->ports[pi];
	uint64_t pkt_ps, delay;

	if (!s)
		return;
	run_timer(e, cc, sl, s);
	pkt_ps = ibemu_link_serialize_ps(p->lanes, (enum ibemu_speed)p->speed,
					 wire_bytes);
	delay = ipd_ps(cc, s->ccti, pkt_ps);
	s->delayed_ps += delay;
	s->next_ps = e->now + pkt_ps + delay;
}

uint64_t ibemu_hca_cc_ipd(struct ibemu_engine *e, uint32_t pi, unsigned sl,
			  struct ibemu_cc_src *own, uint32_t wire_bytes)
{
	struct ibemu_hca_cc *cc = ibemu_hca_cc(e, pi, 0);
	struct ibemu_cc_src *s = ibemu_hca_cc_src(e, pi, sl, own);
	const struct ibemu_eport *p = &e->ports[pi];

	if (!s)
		return 0;
	run_timer(e, cc, sl, s);
	return ipd_ps(cc, s->ccti,
		      ibemu_link_serialize_ps(p->lanes,
					      (enum ibemu_speed)p->speed,
					      wire_bytes));
}

void ibemu_hca_cc_fecn(struct ibemu_engine *e, uint32_t pi, int cnp_sent)
{
	e->ports[pi].cnt.fecn_rcvd++;
	e->ports[pi].cnt.cnp_sent += cnp_sent != 0;
}
