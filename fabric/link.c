// SPDX-License-Identifier: MIT
/*
 * The link state machine (IBA 7.2): a port that leaves LinkUp takes the
 * logical link down at both ends, its peer polling again; when both ends
 * poll, the link trains and both logical ports come up in Init. Set(PortInfo)
 * drives it through the SMA, and fault injection can drive it the same way.
 * The nodes' management hears of the changes it makes on its own
 * (PortStateChange, Trap 128), the HCA ports' owners of every change.
 */
#include <errno.h>

#include "node.h"

/* Tells whoever cares that port 'pi' changed state by itself or by 'why'. */
static void changed(struct ibemu_engine *e, uint32_t pi, int by_itself)
{
	struct ibemu_eport *p = &e->ports[pi];
	struct ibemu_port_binding *b = e->owner[pi];

	if (by_itself)
		e->mgmt_ops.port_change(e, pi);
	if (b)
		b->ops.state_change(b->ctx, pi, (enum ibemu_port_state)p->state,
				    (enum ibemu_phys_state)p->phys_state);
	if (b && b->lent)
		b->lent->ops.state_change(b->lent->ctx, pi,
					  (enum ibemu_port_state)p->state,
					  (enum ibemu_phys_state)p->phys_state);
}

void ibemu__link_changed(struct ibemu_engine *e, uint32_t pi)
{
	changed(e, pi, 0);
}

/* Restarts training of the link of port 'pi' (both ends polling). */
static void train_later(struct ibemu_engine *e, uint32_t pi)
{
	uint32_t peer = e->ports[pi].peer;
	uint32_t first = peer < pi ? peer : pi;
	struct ibemu_eport *fp = &e->ports[first];

	/* One generation per cable, kept on its lower port, cancels older. */
	fp->train_gen++;
	if (e->ports[pi].phys_state == IBEMU_PHYS_POLLING &&
	    e->ports[peer].phys_state == IBEMU_PHYS_POLLING)
		ibemu__engine_push(e, e->now + IBEMU_LINK_TRAIN_PS,
				   IBEMU_PHASE_UPDATE, IBEMU_EV_LINK, first,
				   (void *)(uintptr_t)fp->train_gen);
}

/*
 * Port 'pi' leaves the link, its physical side going to 'phys'. IBA 7.2:
 * the logical link goes down at both ends. IBA 14.2.5.4: whoever asked
 * for it knows; the peer's port goes down by its link state machine.
 */
static void link_down(struct ibemu_engine *e, uint32_t pi, uint8_t phys)
{
	struct ibemu_eport *p = &e->ports[pi], *q;

	p->state = IBEMU_PORT_DOWN;
	p->phys_state = phys;
	changed(e, pi, 0);
	if (p->peer == IBEMU_NONE)
		return;
	q = &e->ports[p->peer];
	if (q->state != IBEMU_PORT_DOWN || q->phys_state == IBEMU_PHYS_LINKUP) {
		q->state = IBEMU_PORT_DOWN;
		if (q->phys_state == IBEMU_PHYS_LINKUP)
			q->phys_state = IBEMU_PHYS_POLLING;
		changed(e, p->peer, 1);
	}
	/* What waits for these outputs is discarded now (switch/relay.c). */
	ibemu__engine_arb_at(e, pi, e->now);
	ibemu__engine_arb_at(e, p->peer, e->now);
	train_later(e, pi);
}

int ibemu_engine_set_phys_state(struct ibemu_engine *e, uint32_t pi,
				enum ibemu_phys_state phys)
{
	struct ibemu_eport *p;

	if (pi >= e->nports ||
	    (phys != IBEMU_PHYS_POLLING && phys != IBEMU_PHYS_SLEEP &&
	     phys != IBEMU_PHYS_DISABLED))
		return -EINVAL;
	p = &e->ports[pi];
	if (p->num == 0)
		return -EINVAL; /* a switch's management port has no link */
	if (p->phys_state == IBEMU_PHYS_LINKUP) {
		link_down(e, pi, (uint8_t)phys);
		return 0;
	}
	/* Down already: polling again may train the link; Sleep and
	 * Disabled cancel a training under way. */
	p->state = IBEMU_PORT_DOWN;
	p->phys_state = (uint8_t)phys;
	changed(e, pi, 0);
	if (p->peer != IBEMU_NONE)
		train_later(e, pi);
	return 0;
}

void ibemu__link_train(struct ibemu_engine *e, uint32_t pi, uint32_t gen)
{
	struct ibemu_eport *p = &e->ports[pi], *q;

	if (gen != p->train_gen || p->peer == IBEMU_NONE)
		return;
	q = &e->ports[p->peer];
	if (p->phys_state != IBEMU_PHYS_POLLING ||
	    q->phys_state != IBEMU_PHYS_POLLING)
		return;
	/* IBA 7.2: the link is up; both logical ports enter Init. */
	p->phys_state = q->phys_state = IBEMU_PHYS_LINKUP;
	p->state = q->state = IBEMU_PORT_INIT;
	/* HCAs kept their management packets while the link was down. */
	ibemu__engine_arb_at(e, pi, e->now);
	ibemu__engine_arb_at(e, p->peer, e->now);
	/* IBA 14.2.5.4: Down -> Init sets PortStateChange. */
	changed(e, pi, 1);
	changed(e, p->peer, 1);
}
