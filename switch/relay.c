// SPDX-License-Identifier: MIT
/*
 * The switch model: an input-buffered virtual cut-through switch. The
 * engine hands a packet over once its header has arrived and the routing
 * latency has passed; it then waits in its input port's per-VL buffer and,
 * at the head, asks the output its DLID maps to (LFT). An
 * output that is free picks a VL by VL arbitration and, on that VL, an
 * input by round robin, among requests it can give credit to. Only the head
 * of each input buffer may ask, so a blocked head blocks those behind it
 * (head-of-line blocking, as in real input-queued switches).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "switch_int.h"

static int switch_init(struct ibemu_engine *e, uint32_t node)
{
	struct ibemu_enode *n = &e->nodes[node];
	unsigned p, vl, max_vls = 1;
	struct ibemu_switch *sw;
	struct ibemu_req *next;
	size_t lists = 0, size;

	size = sizeof(*sw) + (n->nports + 1u) * sizeof(sw->port[0]);
	size = (size + _Alignof(struct ibemu_switch) - 1) &
	       ~(_Alignof(struct ibemu_switch) - 1);
	/* Each port's hot line aligned (struct ibemu_swport). */
	sw = aligned_alloc(_Alignof(struct ibemu_switch), size);
	if (!sw)
		return -ENOMEM;
	memset(sw, 0, size);
	ibemu_node_set_model(e, node, sw);
	for (p = 1; p <= n->nports; p++)
		if (e->ports[n->first_port + p].data_vls > max_vls)
			max_vls = e->ports[n->first_port + p].data_vls;
	/* Any input (port, VL) may ask for an output VL, whatever SL2VL does. */
	sw->max_reqs = (uint16_t)((n->nports + 1u) * (max_vls + 1u));
	for (p = 1; p <= n->nports; p++) {
		const struct ibemu_eport *ep = &e->ports[n->first_port + p];

		for (vl = 0; vl < IBEMU_NUM_VLS; vl++)
			lists += vl < ep->data_vls || vl == IBEMU_VL15;
	}
	/* Not zeroed: an entry is written before it is read (nreqs), and
	 * pages never written are never faulted in. */
	sw->req_pool =
		malloc((size_t)lists * sw->max_reqs * sizeof(struct ibemu_req));
	if (!sw->req_pool)
		return -ENOMEM;
	next = sw->req_pool;
	for (p = 1; p <= n->nports; p++) {
		const struct ibemu_eport *ep = &e->ports[n->first_port + p];

		/* Requests per output VL: at most one per input (port, VL). */
		for (vl = 0; vl < IBEMU_NUM_VLS; vl++) {
			if (vl >= ep->data_vls && vl != IBEMU_VL15)
				continue;
			sw->port[p].out[vl].reqs = next;
			next += sw->max_reqs;
		}
	}
	return 0;
}

static void switch_fini(struct ibemu_engine *e, uint32_t node)
{
	struct ibemu_switch *sw = ibemu_node_model(e, node);
	struct ibemu_pkt *pkt;
	unsigned p, vl;

	if (!sw)
		return;
	for (p = 0; p <= e->nodes[node].nports; p++) {
		for (vl = 0; vl < IBEMU_NUM_VLS; vl++) {
			while ((pkt = ibemu_pktq_pop(&sw->port[p].inq[vl])))
				ibemu_engine_pkt_free(e, pkt);
		}
	}
	free(sw->req_pool);
	free(sw);
	ibemu_node_set_model(e, node, NULL);
}

struct ibemu_switch_cc *ibemu_switch_cc(struct ibemu_engine *e, uint32_t node)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	struct ibemu_switch *sw;

	if (node >= t->nnodes || e->nodes[node].type != IBEMU_NODE_SWITCH)
		return NULL;
	sw = ibemu_node_model(e, node);
	return &sw->cc;
}

struct ibemu_switch_cc_log *ibemu_switch_cc_log(struct ibemu_engine *e,
						uint32_t node)
{
	struct ibemu_switch *sw;

	if (!ibemu_switch_cc(e, node))
		return NULL;
	sw = ibemu_node_model(e, node);
	return &sw->cc_log;
}

struct ibemu_switch_port_cc *ibemu_switch_port_cc(struct ibemu_engine *e,
						  uint32_t node, unsigned port)
{
	struct ibemu_switch *sw;

	if (!ibemu_switch_cc(e, node) || port > e->nodes[node].nports)
		return NULL;
	sw = ibemu_node_model(e, node);
	return &sw->port[port].cc;
}

static uint8_t out_vl_of(const struct ibemu_eport *out,
			 const struct ibemu_pkt *pkt)
{
	return pkt->vl == IBEMU_VL15 ? IBEMU_VL15 : out->sl2vl[pkt->sl & 15];
}

/* Whether multicast packet 'pkt' goes out of port 'port' (mc_out). */
static int mc_goes_to(const struct ibemu_pkt *pkt, unsigned port)
{
	return (pkt->mc_out[port / 16u] >> (port % 16u)) & 1u;
}

/* Counts 'pkt', just queued, as waiting for output 'port' (cc_mark.c). */
static void cc_enqueue_one(struct ibemu_engine *e, struct ibemu_enode *n,
			   struct ibemu_switch *sw, const struct ibemu_pkt *pkt,
			   unsigned port)
{
	const struct ibemu_eport *out = &e->ports[n->first_port + port];
	uint8_t vl = out_vl_of(out, pkt);

	if (vl != IBEMU_VL15)
		ibemu__switch_cc_queue(sw, port, vl, pkt->blocks);
}

/* Counts 'pkt' at its output, or at each of a multicast packet's. */
static void cc_enqueue(struct ibemu_engine *e, struct ibemu_enode *n,
		       struct ibemu_switch *sw, const struct ibemu_pkt *pkt)
{
	unsigned p;

	if (!pkt->mc_out) {
		cc_enqueue_one(e, n, sw, pkt, pkt->out_port);
		return;
	}
	for (p = 1; p <= n->nports; p++)
		if (mc_goes_to(pkt, p))
			cc_enqueue_one(e, n, sw, pkt, p);
}

/* The head of input (port, VL) asks output 'port'. */
static void request_one(struct ibemu_engine *e, struct ibemu_enode *n,
			struct ibemu_switch *sw, struct ibemu_pkt *pkt,
			unsigned port)
{
	uint32_t out_pi = n->first_port + port;
	struct ibemu_eport *out = &e->ports[out_pi];
	struct ibemu_swport *so = &sw->port[port];
	uint8_t vl = out_vl_of(out, pkt);
	struct ibemu_req *r = &so->out[vl].reqs[so->out[vl].nreqs++];

	IBEMU_BUG_ON(so->out[vl].nreqs > sw->max_reqs);
	so->req_vls |= (uint16_t)(1u << vl);
	r->in_port = pkt->in_port;
	r->in_vl = pkt->in_vl;
	ibemu__engine_arb_at(e, out_pi, out->busy_until);
}

/*
 * The head of input (port, VL) asks its output port, or a multicast
 * packet every output it goes to at once: each copy leaves when its own
 * output can take it, independently of the others (IBA 18.2.4.3.2 leaves
 * the replication to the implementation; this is the common one of
 * input-buffered switches, which replicate at the output).
 */
static void request(struct ibemu_engine *e, struct ibemu_enode *n,
		    struct ibemu_switch *sw, struct ibemu_pkt *pkt)
{
	unsigned p;

	if (!pkt->mc_out) {
		request_one(e, n, sw, pkt, pkt->out_port);
		return;
	}
	for (p = 1; p <= n->nports; p++)
		if (mc_goes_to(pkt, p))
			request_one(e, n, sw, pkt, p);
}

/* Drops a packet held in input port 'pi'; the caller counts why. */
static void discard(struct ibemu_engine *e, uint32_t pi, struct ibemu_pkt *pkt)
{
	struct ibemu_eport *in = &e->ports[pi];

	in->in_used[pkt->vl] -= pkt->blocks;
	/* A multicast packet's space: once the copies sent have left. */
	ibemu__engine_release(e, pi, pkt->vl, pkt->blocks,
			      pkt->mc_end > pkt->t_tail ? pkt->mc_end
							: pkt->t_tail);
	e->in_flight--;
	ibemu_engine_pkt_free(e, pkt);
}

/*
 * The outputs of multicast packet 'pkt' that came in at port 'in_num':
 * its MFT entry's ports (IBA 14.2.5.12) but the input, which a packet
 * never goes back out of (IBA 18.2.4.3.2), nor port 0 (data is not for
 * the switch itself). A port that cannot send it (Down, uncabled) is
 * left out; a cabled one that is not Active counts PortXmitDiscards, as
 * a unicast packet routed there does. Sets pkt->mc_out and mc_left; 0,
 * or -ENOENT when its MFT entry is empty (a relay error), -EALREADY when
 * no port but the input is left (consumed: nobody else wants it).
 */
static int mc_route(struct ibemu_engine *e, struct ibemu_enode *n,
		    uint32_t node, unsigned in_num, struct ibemu_pkt *pkt)
{
	const uint16_t *entry = ibemu__engine_mft(e, node, pkt->dlid);
	unsigned npos = n->nports / 16u + 1u, p, left = 0, any = 0;
	uint16_t *out;

	if (!entry)
		return -ENOENT;
	out = calloc(npos, sizeof(*out));
	IBEMU_BUG_ON(!out); /* no memory mid-simulation: cannot recover */
	for (p = 1; p <= n->nports; p++) {
		const struct ibemu_eport *ep = &e->ports[n->first_port + p];

		if (!((entry[p / 16u] >> (p % 16u)) & 1u))
			continue;
		any = 1;
		if (p == in_num || ep->peer == IBEMU_NONE ||
		    ep->state == IBEMU_PORT_DOWN)
			continue;
		if (ep->state != IBEMU_PORT_ACTIVE) {
			e->ports[n->first_port + p].cnt.xmit_discards++;
			continue;
		}
		out[p / 16u] |= (uint16_t)(1u << (p % 16u));
		left++;
	}
	if (!left) {
		free(out);
		return any ? -EALREADY : -ENOENT;
	}
	pkt->mc_out = out;
	pkt->mc_left = (uint8_t)left;
	pkt->mc_end = 0;
	return 0;
}

static void switch_head(struct ibemu_engine *e, uint32_t pi,
			struct ibemu_pkt *pkt)
{
	struct ibemu_eport *in = &e->ports[pi];
	struct ibemu_enode *n = &e->nodes[in->node];
	struct ibemu_switch *sw = ibemu_node_model(e, in->node);
	struct ibemu_pktq *q = &sw->port[in->num].inq[pkt->vl];
	uint64_t pkt_tail;
	uint16_t blocks;
	uint8_t out, in_vl;
	int routed = 0;

	if (in->state == IBEMU_PORT_DOWN) {
		/* The link went down under it: lost, its credit given back. */
		ibemu__engine_release(e, pi, pkt->vl, pkt->blocks, pkt->t_tail);
		e->in_flight--;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	in->cnt.rcv_pkts++;
	if (ibemu_lid_is_multicast(pkt->dlid))
		in->cnt.multicast_rcv_pkts++;
	else
		in->cnt.unicast_rcv_pkts++;
	in->cnt.rcv_data += (pkt->wire_bytes - IBEMU_VCRC_BYTES) / 4;
	if (pkt->vl == IBEMU_VL15 &&
	    in->in_used[pkt->vl] + pkt->blocks > in->buf_blocks) {
		/* IBA 7.9.4: VL15 is not flow controlled; a full buffer drops. */
		in->cnt.vl15_dropped++;
		e->in_flight--;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	out = 0xff;
	in_vl = pkt->vl;
	blocks = pkt->blocks;
	pkt_tail = pkt->t_tail;
	if (pkt->mad) {
		switch (ibemu__smi_switch_head(e, pi, pkt)) {
		case IBEMU_SMI_TAKEN:
			/* Management took it from the buffer at once. */
			ibemu__engine_release(e, pi, in_vl, blocks, pkt_tail);
			e->in_flight--;
			return;
		case IBEMU_SMI_PORT:
			out = pkt->out_port;
			routed = 1;
			break;
		case IBEMU_SMI_LFT:
			break;
		}
	}
	in->in_used[pkt->vl] += pkt->blocks;
	IBEMU_BUG_ON(in->in_used[pkt->vl] > in->buf_blocks);

	if (!routed && ibemu_lid_is_multicast(pkt->dlid) && !pkt->mad) {
		switch (mc_route(e, n, in->node, in->num, pkt)) {
		case -ENOENT: /* IBA 18.2.4.3.3: no entry discards */
			in->cnt.rcv_switch_relay_errors++;
			discard(e, pi, pkt);
			return;
		case -EALREADY:
			discard(e, pi, pkt);
			return;
		}
		pkt->in_port = in->num;
		pkt->in_vl = pkt->vl;
		pkt->out_port = 0;
		goto queue;
	}
	/* IBA 18.2.4.3.3: no LFT entry (or an unusable port) discards. */
	if (!routed)
		out = pkt->dlid < n->lft_len ? n->lft[pkt->dlid] : 0xff;
	if (out == 0 || out > n->nports ||
	    e->ports[n->first_port + out].peer == IBEMU_NONE ||
	    e->ports[n->first_port + out].state == IBEMU_PORT_DOWN) {
		in->cnt.rcv_switch_relay_errors++;
		discard(e, pi, pkt);
		return;
	}
	/* IBA 7.2: only an Active port transmits data packets. */
	if (pkt->vl != IBEMU_VL15 &&
	    e->ports[n->first_port + out].state != IBEMU_PORT_ACTIVE) {
		e->ports[n->first_port + out].cnt.xmit_discards++;
		discard(e, pi, pkt);
		return;
	}
	pkt->in_port = in->num;
	pkt->in_vl = pkt->vl;
	pkt->out_port = out;
queue:
	ibemu_pktq_push(q, pkt);
	cc_enqueue(e, n, sw, pkt);
	if (q->head == pkt)
		request(e, n, sw, pkt);
}

static void switch_inject(struct ibemu_engine *e, uint32_t node,
			  struct ibemu_pkt *pkt)
{
	struct ibemu_enode *n = &e->nodes[node];
	struct ibemu_switch *sw = ibemu_node_model(e, node);
	struct ibemu_eport *mgmt = &e->ports[n->first_port];
	struct ibemu_eport *out;
	struct ibemu_pktq *q;

	IBEMU_BUG_ON(pkt->out_port == 0 || pkt->out_port > n->nports);
	out = &e->ports[n->first_port + pkt->out_port];
	if (out->peer == IBEMU_NONE || out->state == IBEMU_PORT_DOWN ||
	    (pkt->vl != IBEMU_VL15 && out->state != IBEMU_PORT_ACTIVE)) {
		out->cnt.xmit_discards++;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	if (mgmt->in_used[pkt->vl] + pkt->blocks > mgmt->buf_blocks) {
		/* The management port's buffer is full: as VL15 does. */
		mgmt->cnt.vl15_dropped++;
		ibemu_engine_pkt_free(e, pkt);
		return;
	}
	pkt->in_port = 0;
	pkt->in_vl = pkt->vl;
	pkt->t_tail = e->now;
	q = &sw->port[0].inq[pkt->vl];
	mgmt->in_used[pkt->vl] += pkt->blocks;
	e->in_flight++;
	ibemu_pktq_push(q, pkt);
	cc_enqueue(e, n, sw, pkt);
	if (q->head == pkt)
		request(e, n, sw, pkt);
}

/* Finds, on output VL 'vl', the request to serve: round robin by input. */
static int pick_request(struct ibemu_enode *n, struct ibemu_switch *sw,
			struct ibemu_eport *out, struct ibemu_swport *so,
			unsigned vl)
{
	unsigned i, best = ~0u, best_dist = ~0u, span = n->nports + 1u;

	for (i = 0; i < so->out[vl].nreqs; i++) {
		const struct ibemu_req *r = &so->out[vl].reqs[i];
		const struct ibemu_pkt *pkt =
			sw->port[r->in_port].inq[r->in_vl].head;
		unsigned dist;

		if (vl != IBEMU_VL15 && out->credits[vl] < pkt->blocks)
			continue;
		dist = (r->in_port + span - so->out[vl].rr - 1u) % span * 16u +
		       r->in_vl;
		if (dist < best_dist) {
			best_dist = dist;
			best = i;
		}
	}
	return best == ~0u ? -1 : (int)best;
}

/*
 * Output 'pi' is Down: its link carries nothing (IBA 7.2), so what waits
 * for it is discarded, as a switch does when a link goes away, and the
 * inputs it blocked move on.
 */
static void flush_down(struct ibemu_engine *e, uint32_t pi)
{
	struct ibemu_eport *out = &e->ports[pi];
	struct ibemu_enode *n = &e->nodes[out->node];
	struct ibemu_switch *sw = ibemu_node_model(e, out->node);
	struct ibemu_swport *so = &sw->port[out->num];
	unsigned v;

	for (v = 0; v < IBEMU_NUM_VLS; v++) {
		while (so->out[v].nreqs) {
			struct ibemu_req req =
				so->out[v].reqs[--so->out[v].nreqs];
			uint32_t in_pi = n->first_port + req.in_port;
			struct ibemu_pktq *q =
				&sw->port[req.in_port].inq[req.in_vl];

			out->cnt.xmit_discards++;
			if (v != IBEMU_VL15)
				ibemu__switch_cc_queue(sw, out->num, v,
						       -(int)q->head->blocks);
			/* A multicast packet loses this copy only. */
			if (q->head->mc_left > 1) {
				q->head->mc_left--;
				continue;
			}
			discard(e, in_pi, ibemu_pktq_pop(q));
			if (q->head)
				request(e, n, sw, q->head);
		}
		so->req_vls &= (uint16_t) ~(1u << v);
	}
	ibemu__engine_wait_stop(e, out);
}

/*
 * Output 'pi' starts 'pkt' on 'vl': the packet itself, or a copy of it if
 * it is multicast with other copies still to go (the head stays in its
 * input buffer). Returns when its tail has left.
 */
static uint64_t send_copy(struct ibemu_engine *e, struct ibemu_switch *sw,
			  uint32_t pi, struct ibemu_pkt *head, uint8_t vl)
{
	struct ibemu_eport *out = &e->ports[pi];
	struct ibemu_pkt *pkt = head;

	if (head->mc_left > 1) {
		pkt = ibemu__engine_pkt_copy(e, head);
		IBEMU_BUG_ON(!pkt); /* no memory mid-simulation */
		head->mc_left--;
		e->in_flight++;
	} else if (head->mc_out) {
		free(head->mc_out);
		head->mc_out = NULL;
		head->mc_left = 0;
	}
	pkt->vl = vl;
	if (vl != IBEMU_VL15) {
		ibemu_vlarb_charge(&out->vlarb, pkt->wire_bytes);
		ibemu__switch_cc_depart(e, sw, pi, out->num, pkt);
	}
	ibemu__engine_wait_stop(e, out);
	return ibemu__engine_transmit(e, pi, pkt, head->t_tail);
}

static void switch_arbitrate(struct ibemu_engine *e, uint32_t pi)
{
	struct ibemu_eport *out = &e->ports[pi];
	struct ibemu_enode *n = &e->nodes[out->node];
	struct ibemu_switch *sw = ibemu_node_model(e, out->node);
	struct ibemu_swport *so = &sw->port[out->num];
	uint32_t eligible = 0, in_pi, vls;
	int blocked = 0, vl, idx;
	unsigned v, i;
	struct ibemu_req req;
	struct ibemu_pkt *pkt;
	uint64_t end;

	if (out->state == IBEMU_PORT_DOWN) {
		flush_down(e, pi);
		return;
	}
	if (out->busy_until > e->now) {
		ibemu__engine_arb_at(e, pi, out->busy_until);
		return;
	}
	ibemu__engine_credit_sync(e, out);
	/* Evaluate: which output VLs have a request that can go now. */
	for (vls = so->req_vls; vls; vls &= vls - 1) {
		v = (unsigned)__builtin_ctz(vls);
		for (i = 0; i < so->out[v].nreqs; i++) {
			const struct ibemu_req *r = &so->out[v].reqs[i];

			pkt = sw->port[r->in_port].inq[r->in_vl].head;
			if (v == IBEMU_VL15 || out->credits[v] >= pkt->blocks) {
				eligible |= 1u << v;
			} else {
				blocked = 1;
				/* A victim, for FECN. */
				so->starved |= (uint16_t)(1u << v);
			}
		}
	}
	if (eligible & (1u << IBEMU_VL15))
		vl = IBEMU_VL15; /* VL15 goes before any data VL */
	else
		vl = ibemu_vlarb_pick(&out->vlarb, eligible);
	if (vl < 0) {
		if (blocked)
			ibemu__engine_wait_start(e, out);
		return;
	}

	/* Commit: take the packet out of its input buffer and send it. */
	idx = pick_request(n, sw, out, so, (unsigned)vl);
	IBEMU_BUG_ON(idx < 0);
	req = so->out[vl].reqs[idx];
	so->out[vl].reqs[idx] = so->out[vl].reqs[--so->out[vl].nreqs];
	if (!so->out[vl].nreqs)
		so->req_vls &= (uint16_t) ~(1u << vl);
	so->out[vl].rr = req.in_port;
	in_pi = n->first_port + req.in_port;
	pkt = sw->port[req.in_port].inq[req.in_vl].head;
	if (pkt->mc_left > 1) {
		/* A multicast copy; the packet stays for its other outputs. */
		end = send_copy(e, sw, pi, pkt, (uint8_t)vl);
		if (end > pkt->mc_end)
			pkt->mc_end = end;
		if (so->req_vls)
			ibemu__engine_arb_at(e, pi, end);
		return;
	}
	pkt = ibemu_pktq_pop(&sw->port[req.in_port].inq[req.in_vl]);
	e->ports[in_pi].in_used[req.in_vl] -= pkt->blocks;
	end = send_copy(e, sw, pi, pkt, (uint8_t)vl);
	/*
	 * The input's space is free once the tail has left: a multicast
	 * packet's once the tail of its last copy has (the one that started
	 * last need not end last: outputs may run at different rates).
	 */
	ibemu__engine_release(e, in_pi, req.in_vl, pkt->blocks,
			      end > pkt->mc_end ? end : pkt->mc_end);
	pkt = sw->port[req.in_port].inq[req.in_vl].head;
	if (pkt)
		request(e, n, sw, pkt);
	if (so->req_vls)
		ibemu__engine_arb_at(e, pi, end);
}

/* Round robin starts over: as after power-on, from the first input. */
static void switch_settle(struct ibemu_engine *e, uint32_t node)
{
	struct ibemu_switch *sw = ibemu_node_model(e, node);
	unsigned p, vl;

	for (p = 0; p <= e->nodes[node].nports; p++) {
		for (vl = 0; vl < IBEMU_NUM_VLS; vl++)
			sw->port[p].out[vl].rr = 0;
		/* And marking starts its Marking_Rate count over. */
		memset(sw->port[p].mark_skip, 0, sizeof(sw->port[p].mark_skip));
		sw->port[p].starved = 0;
	}
}

const struct ibemu_node_ops ibemu_switch_ops = {
	.init = switch_init,
	.fini = switch_fini,
	.head = switch_head,
	.arbitrate = switch_arbitrate,
	.inject = switch_inject,
	.settle = switch_settle,
	.cut_through = 1,
};
