// SPDX-License-Identifier: MIT
/*
 * What 'ibemu cc' shows of a traffic study: each flow's congestion
 * control state as a source (IBA Annex A10.3.1), read through the HCA's
 * CC calls so that per-SL control and the CCTI_Timer expiries so far are
 * accounted for. Read-only: the study's pacing lives in traffic.c.
 */
#include "traffic_int.h"

size_t ibemu_traffic_flow_cc_count(const struct ibemu_traffic *tr)
{
	return tr->nflows;
}

void ibemu_traffic_flow_cc(const struct ibemu_traffic *tr, size_t i,
			   struct ibemu_traffic_flow_cc *out)
{
	struct ibemu_traffic_flow *f = &tr->flows[i];
	uint32_t pi = tr->hosts[f->src].pi;
	struct ibemu_cc_src *s = ibemu_hca_cc_src(tr->e, pi, f->sl, &f->cc);
	/* A full packet: the study's headers, one MTU, ICRC and VCRC. */
	uint32_t full = IBEMU_TRAFFIC_HDR_BYTES + tr->mtu + IBEMU_ICRC_BYTES +
			IBEMU_VCRC_BYTES;

	IBEMU_BUG_ON(i >= tr->nflows);
	out->src = f->src;
	out->dst = f->dst;
	out->sl = f->sl;
	out->ccti = (uint16_t)ibemu_hca_cc_ccti(tr->e, pi, f->sl, &f->cc);
	out->becns = s ? s->becns : 0;
	out->mtu = tr->mtu;
	out->ipd_ps = ibemu_hca_cc_ipd(tr->e, pi, f->sl, &f->cc, full);
}
