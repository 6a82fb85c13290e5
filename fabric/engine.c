// SPDX-License-Identifier: MIT
/*
 * The event loop of the fabric and the link layer: transmitting a packet
 * takes credits from the receiver's input buffer (IBA 7.9: a sender needs
 * credit for the whole packet), occupies the link for the packet's wire
 * time, and the buffer space comes back as credits one cable delay after
 * the receiver frees it. Switch and HCA behaviour lives in switch/ and hca/,
 * reached only through the node classes given at creation (fabric/node.h).
 *
 * Two shortcuts keep the event count near two per packet and hop, without
 * changing any result: returning credits are queued on their transmitter
 * and counted when it next arbitrates (only a transmitter waiting for them
 * gets an event), and arbitrations due at the current instant wait in a
 * FIFO beside the event queue, merged in exactly its (time, phase,
 * sequence) order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

/* Stubs for the ops a class, a management or a port owner leaves out. */

static int stub_node_init(struct ibemu_engine *e, uint32_t node)
{
	(void)e;
	(void)node;
	return 0;
}

static void stub_node_fini(struct ibemu_engine *e, uint32_t node)
{
	(void)e;
	(void)node;
}

static void stub_node_pkt(struct ibemu_engine *e, uint32_t pi,
			  struct ibemu_pkt *pkt)
{
	(void)pi;
	/* A class that cannot receive loses what reaches it. */
	e->in_flight--;
	ibemu_engine_pkt_free(e, pkt);
}

static void stub_node_arbitrate(struct ibemu_engine *e, uint32_t pi)
{
	(void)e;
	(void)pi;
}

static void stub_node_inject(struct ibemu_engine *e, uint32_t node,
			     struct ibemu_pkt *pkt)
{
	(void)node;
	ibemu_engine_pkt_free(e, pkt);
}

static void stub_node_settle(struct ibemu_engine *e, uint32_t node)
{
	(void)e;
	(void)node;
}

static void fill_node_ops(struct ibemu_node_ops *out,
			  const struct ibemu_node_ops *in)
{
	static const struct ibemu_node_ops none;

	*out = in ? *in : none;
	if (!out->init)
		out->init = stub_node_init;
	if (!out->fini)
		out->fini = stub_node_fini;
	if (!out->head)
		out->head = stub_node_pkt;
	if (!out->tail)
		out->tail = stub_node_pkt;
	if (!out->arbitrate)
		out->arbitrate = stub_node_arbitrate;
	if (!out->inject)
		out->inject = stub_node_inject;
	if (!out->settle)
		out->settle = stub_node_settle;
}

static int stub_mgmt_init(struct ibemu_engine *e, void **state)
{
	(void)e;
	*state = NULL;
	return 0;
}

static void stub_mgmt_fini(struct ibemu_engine *e, void *state)
{
	(void)e;
	(void)state;
}

static int stub_mgmt_process(struct ibemu_engine *e, uint32_t node,
			     unsigned port, const uint8_t *req, uint8_t *resp)
{
	(void)e;
	(void)node;
	(void)port;
	(void)req;
	(void)resp;
	return 0; /* nobody answers */
}

static int stub_mgmt_takes(const uint8_t *mad)
{
	(void)mad;
	return 0;
}

static void stub_mgmt_event(struct ibemu_engine *e, uint32_t target, void *ptr)
{
	(void)e;
	(void)target;
	(void)ptr;
}

static void stub_mgmt_port_change(struct ibemu_engine *e, uint32_t pi)
{
	(void)e;
	(void)pi;
}

static unsigned stub_mgmt_pkeys(const struct ibemu_engine *e, uint32_t pi,
				uint16_t *pkeys, unsigned max)
{
	(void)e;
	(void)pi;
	if (max)
		pkeys[0] = 0xffff;
	return 1;
}

static void fill_mgmt_ops(struct ibemu_mgmt_ops *out,
			  const struct ibemu_mgmt_ops *in)
{
	static const struct ibemu_mgmt_ops none;

	*out = in ? *in : none;
	if (!out->init)
		out->init = stub_mgmt_init;
	if (!out->fini)
		out->fini = stub_mgmt_fini;
	if (!out->process)
		out->process = stub_mgmt_process;
	if (!out->takes)
		out->takes = stub_mgmt_takes;
	if (!out->event)
		out->event = stub_mgmt_event;
	if (!out->port_change)
		out->port_change = stub_mgmt_port_change;
	if (!out->pkeys)
		out->pkeys = stub_mgmt_pkeys;
}

static struct ibemu_pkt *stub_pull(void *ctx, uint32_t port,
				   const uint16_t *credits, int *blocked)
{
	(void)ctx;
	(void)port;
	(void)credits;
	(void)blocked;
	return NULL;
}

static void stub_mad_recv(void *ctx, uint32_t port,
			  const struct ibemu_mad_msg *m)
{
	(void)ctx;
	(void)port;
	(void)m;
}

static void stub_timer(void *ctx, uint32_t port, uint64_t cookie)
{
	(void)ctx;
	(void)port;
	(void)cookie;
}

static void stub_state_change(void *ctx, uint32_t port,
			      enum ibemu_port_state state,
			      enum ibemu_phys_state phys)
{
	(void)ctx;
	(void)port;
	(void)state;
	(void)phys;
}

/* An owner that takes no data: what reaches it is freed. */
static void stub_deliver(void *ctx, uint32_t port, struct ibemu_pkt *pkt)
{
	(void)ctx;
	(void)port;
	/* Packets are allocated one by one (ibemu_engine_pkt_alloc). */
	free(pkt->mad);
	free(pkt);
}

static int stub_lend(void *ctx, uint32_t port, enum ibemu_lend what)
{
	(void)ctx;
	(void)port;
	(void)what;
	return -EBUSY;
}

static const struct ibemu_port_ops no_owner;

/* The number of ops table 'ops' (0 for none); 0 too past the 15th. */
static uint8_t port_kind(struct ibemu_engine *e,
			 const struct ibemu_port_ops *ops)
{
	unsigned i;

	if (ops == &no_owner)
		return 0;
	for (i = 0; i < e->nkinds; i++)
		if (e->kinds[i] == ops)
			return (uint8_t)(i + 1);
	if (e->nkinds == IBEMU_ARRAY_SIZE(e->kinds))
		return 0;
	e->kinds[e->nkinds++] = ops;
	return (uint8_t)e->nkinds;
}

static void port_bind(struct ibemu_engine *e, struct ibemu_port_binding *b,
		      const struct ibemu_port_ops *ops, void *ctx)
{
	b->ops = *ops;
	if (!b->ops.pull)
		b->ops.pull = stub_pull;
	if (!b->ops.deliver)
		b->ops.deliver = stub_deliver;
	if (!b->ops.mad_recv)
		b->ops.mad_recv = stub_mad_recv;
	if (!b->ops.timer)
		b->ops.timer = stub_timer;
	if (!b->ops.state_change)
		b->ops.state_change = stub_state_change;
	if (!b->ops.lend)
		b->ops.lend = stub_lend;
	b->ctx = ctx;
	b->kind = port_kind(e, ops);
	/* Timers carry the generation in 24 bits (ev_kind()); one counter
	 * for every binding, so a borrower's never matches its owner's. */
	e->bind_gen = (e->bind_gen + 1) & 0xffffffu;
	b->gen = e->bind_gen;
}

static void port_init(struct ibemu_engine *e, struct ibemu_eport *p,
		      uint32_t node, unsigned num)
{
	const struct ibemu_topo_node *tn = &e->topo->nodes[node];
	unsigned vl;

	memset(p, 0, sizeof(*p));
	p->node = node;
	p->num = (uint8_t)num;
	p->peer = IBEMU_NONE;
	p->arb_at = UINT64_MAX;
	p->wait_since = UINT64_MAX;
	p->state = IBEMU_PORT_DOWN;
	p->phys_state = IBEMU_PHYS_POLLING;
	p->data_vls = tn->vls;
	p->buf_blocks = (uint16_t)(tn->buffer_per_vl / IBEMU_CREDIT_BYTES);
	/* IBA 7.6.6 default before an SM sets SL2VL: SL n -> VL n mod VLs. */
	for (vl = 0; vl < 16; vl++)
		p->sl2vl[vl] = (uint8_t)(vl % tn->vls);
}

/* Wires each cabled port to its peer and gives it the peer's credits. */
static void cable_ports(struct ibemu_engine *e)
{
	const struct ibemu_topo *t = e->topo;
	uint32_t i;
	unsigned vl;

	for (i = 0; i < t->nlinks; i++) {
		const struct ibemu_topo_link *l = &t->links[i];
		uint32_t a = ibemu_engine_port_index(e, l->node[0], l->port[0]);
		uint32_t b = ibemu_engine_port_index(e, l->node[1], l->port[1]);
		struct ibemu_eport *pa = &e->ports[a], *pb = &e->ports[b];
		uint8_t vls = pa->data_vls < pb->data_vls ? pa->data_vls
							  : pb->data_vls;

		pa->peer = b;
		pb->peer = a;
		/* IBA 7.2: the link trains, the logical port goes to Init. */
		pa->phys_state = pb->phys_state = IBEMU_PHYS_LINKUP;
		pa->state = pb->state = IBEMU_PORT_INIT;
		pa->lanes = pb->lanes = l->width;
		pa->speed = pb->speed = (uint8_t)l->speed;
		pa->prop_ps = pb->prop_ps = l->latency_ps;
		pa->data_vls = pb->data_vls = vls;
		for (vl = 0; vl < 16; vl++) {
			pa->sl2vl[vl] = pb->sl2vl[vl] = (uint8_t)(vl % vls);
			pa->credits[vl] = vl < vls ? pb->buf_blocks : 0;
			pb->credits[vl] = vl < vls ? pa->buf_blocks : 0;
		}
		ibemu_vlarb_init_default(&pa->vlarb, vls);
		ibemu_vlarb_init_default(&pb->vlarb, vls);
	}
}

/* A zeroed binding, its packet-path fields in one cache line. */
static struct ibemu_port_binding *binding_alloc(void)
{
	size_t size = (sizeof(struct ibemu_port_binding) + 63u) & ~(size_t)63u;
	struct ibemu_port_binding *b = aligned_alloc(64, size);

	if (b)
		memset(b, 0, sizeof(*b));
	return b;
}

/* Allocates each HCA port's binding, unattached. */
static int bind_ports(struct ibemu_engine *e)
{
	uint32_t i;

	e->owner = calloc(e->nports ? e->nports : 1, sizeof(*e->owner));
	e->owner_none = binding_alloc();
	if (!e->owner || !e->owner_none)
		return -ENOMEM;
	port_bind(e, e->owner_none, &no_owner, NULL);
	for (i = 0; i < e->nports; i++) {
		const struct ibemu_eport *p = &e->ports[i];

		if (p->num == 0 || e->nodes[p->node].type != IBEMU_NODE_HCA)
			continue;
		e->owner[i] = binding_alloc();
		if (!e->owner[i])
			return -ENOMEM;
		port_bind(e, e->owner[i], &no_owner, NULL);
	}
	return 0;
}

/* The routing latency of a switch whose file does not say: its ASIC's,
 * the generation of its fastest port. */
static uint64_t default_routing_latency(const struct ibemu_engine *e,
					const struct ibemu_enode *n)
{
	enum ibemu_speed fastest = e->topo->defaults.speed;
	unsigned p;

	for (p = 1; p <= n->nports; p++) {
		const struct ibemu_eport *ep = &e->ports[n->first_port + p];

		if (ep->peer != IBEMU_NONE && ep->speed > fastest)
			fastest = (enum ibemu_speed)ep->speed;
	}
	return ibemu_routing_latency_default_ps(fastest);
}

int ibemu_engine_create(const struct ibemu_topo *t,
			const struct ibemu_engine_classes *cls,
			struct ibemu_engine **out)
{
	struct ibemu_engine *e = calloc(1, sizeof(*e));
	uint32_t i, total = 0;
	unsigned p;
	int ret = -ENOMEM;

	if (!e)
		return -ENOMEM;
	e->topo = t;
	fill_node_ops(&e->hca_ops, cls ? cls->hca : NULL);
	fill_node_ops(&e->sw_ops, cls ? cls->sw : NULL);
	fill_mgmt_ops(&e->mgmt_ops, cls ? cls->mgmt : NULL);
	ibemu_evq_init(&e->evq);
	e->nodes = calloc(t->nnodes ? t->nnodes : 1, sizeof(*e->nodes));
	e->models = calloc(t->nnodes ? t->nnodes : 1, sizeof(*e->models));
	e->mft = calloc(t->nnodes ? t->nnodes : 1, sizeof(*e->mft));
	if (!e->nodes || !e->models || !e->mft)
		goto err;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *tn = &t->nodes[i];
		struct ibemu_enode *n = &e->nodes[i];

		n->type = tn->type;
		n->nports = tn->nports;
		n->first_port = total;
		n->routing_latency_ps = tn->routing_latency_ps;
		total += tn->nports + 1u;
	}
	e->nports = total;
	/* Aligned, as struct ibemu_eport says. */
	e->ports = aligned_alloc(_Alignof(struct ibemu_eport),
				 (total ? total : 1) * sizeof(*e->ports));
	if (!e->ports)
		goto err;
	memset(e->ports, 0, (total ? total : 1) * sizeof(*e->ports));
	for (i = 0; i < t->nnodes; i++)
		for (p = 0; p <= t->nodes[i].nports; p++)
			port_init(e, &e->ports[e->nodes[i].first_port + p], i,
				  p);
	cable_ports(e);
	ret = bind_ports(e);
	if (ret)
		goto err;
	for (i = 0; i < t->nnodes; i++) {
		struct ibemu_enode *n = &e->nodes[i];

		if (n->type == IBEMU_NODE_SWITCH) {
			if (!n->routing_latency_ps)
				n->routing_latency_ps =
					default_routing_latency(e, n);
		}
		ret = ibemu__node_ops(e, n)->init(e, i);
		if (ret)
			goto err;
	}
	ret = e->mgmt_ops.init(e, &e->mgmt);
	if (ret)
		goto err;
	*out = e;
	return 0;

err:
	ibemu_engine_destroy(e);
	return ret;
}

static void free_queued(struct ibemu_engine *e)
{
	struct ibemu_event ev;
	struct ibemu_pkt *p;
	uint32_t i;

	/* Packets live in exactly one place: an event or a queue. */
	while (!ibemu_evq_empty(&e->evq)) {
		ibemu_evq_pop(&e->evq, &ev);
		if ((ev.kind == IBEMU_EV_HEAD || ev.kind == IBEMU_EV_TAIL ||
		     ev.kind == IBEMU_EV_MAD) &&
		    ev.ptr)
			ibemu_engine_pkt_free(e, ev.ptr);
	}
	for (i = 0; i < e->nports; i++) {
		while ((p = ibemu_pktq_pop(&e->ports[i].vl15_out)))
			ibemu_engine_pkt_free(e, p);
		while ((p = ibemu_pktq_pop(&e->ports[i].mad_out)))
			ibemu_engine_pkt_free(e, p);
	}
}

void ibemu_engine_destroy(struct ibemu_engine *e)
{
	struct ibemu_pkt *p;
	uint32_t i;

	if (!e)
		return;
	if (e->ports)
		free_queued(e);
	e->mgmt_ops.fini(e, e->mgmt);
	e->mgmt = NULL;
	/* The classes free what their nodes hold (packets in buffers). */
	if (e->nodes && e->models && e->ports)
		for (i = 0; i < e->topo->nnodes; i++)
			ibemu__node_ops(e, &e->nodes[i])->fini(e, i);
	while ((p = e->free_pkts)) {
		e->free_pkts = p->next;
		free(p);
	}
	ibemu_evq_fini(&e->evq);
	free(e->arbs);
	for (i = 0; e->ports && i < e->nports; i++) {
		free(e->ports[i].cret);
		if (e->owner && e->owner[i]) {
			free(e->owner[i]->lent);
			free(e->owner[i]);
		}
	}
	for (i = 0; e->nodes && i < e->topo->nnodes; i++)
		free(e->nodes[i].lft);
	for (i = 0; e->mft && i < e->topo->nnodes; i++)
		free(e->mft[i]);
	free(e->mft);
	free(e->owner);
	free(e->owner_none);
	free(e->ports);
	free(e->models);
	free(e->nodes);
	free(e);
}

int ibemu_engine_port_attach(struct ibemu_engine *e, uint32_t port,
			     const struct ibemu_port_ops *ops, void *ctx)
{
	struct ibemu_port_binding *b;

	if (port >= e->nports || !e->owner[port] || !ops || !ctx)
		return -EINVAL;
	b = e->owner[port];
	if (b->attached)
		return -EBUSY;
	port_bind(e, b, ops, ctx);
	b->attached = 1;
	return 0;
}

void ibemu_engine_on_unowned_mad(struct ibemu_engine *e,
				 void (*fn)(void *ctx, uint32_t port,
					    const struct ibemu_mad_msg *m),
				 void *ctx)
{
	e->unowned_mad = fn;
	e->unowned_ctx = ctx;
}

void ibemu_engine_port_detach(struct ibemu_engine *e, uint32_t port)
{
	struct ibemu_port_binding *b;

	if (port >= e->nports || !e->owner[port])
		return;
	b = e->owner[port];
	if (b->lent) {
		/* The owner goes while it lends the port: the borrower keeps
		 * it, as the only owner now. */
		struct ibemu_port_binding *l = b->lent;

		*b = *l;
		b->lent = NULL;
		free(l);
		return;
	}
	port_bind(e, b, &no_owner, NULL);
	b->attached = 0;
}

void *ibemu_engine_port_owner(const struct ibemu_engine *e, uint32_t port)
{
	if (port >= e->nports || !e->owner[port] || !e->owner[port]->attached)
		return NULL;
	return e->owner[port]->ctx;
}

int ibemu_engine_port_usable(const struct ibemu_engine *e, uint32_t port)
{
	struct ibemu_port_binding *b;

	if (port >= e->nports || !e->owner[port])
		return 0;
	b = e->owner[port];
	if (!b->attached)
		return 1;
	return !b->lent && !b->ops.lend(b->ctx, port, IBEMU_LEND_ASK);
}

int ibemu_engine_port_borrow(struct ibemu_engine *e, uint32_t port,
			     const struct ibemu_port_ops *ops, void *ctx)
{
	struct ibemu_port_binding *b, *lent;
	int ret;

	if (port >= e->nports || !e->owner[port] || !ops || !ctx)
		return -EINVAL;
	b = e->owner[port];
	if (!b->attached)
		return ibemu_engine_port_attach(e, port, ops, ctx);
	if (b->lent)
		return -EBUSY;
	lent = binding_alloc();
	if (!lent)
		return -ENOMEM;
	ret = b->ops.lend(b->ctx, port, IBEMU_LEND_TAKE);
	if (ret) {
		free(lent);
		return ret;
	}
	port_bind(e, lent, ops, ctx);
	lent->attached = 1;
	b->lent = lent;
	return 0;
}

void ibemu_engine_port_unborrow(struct ibemu_engine *e, uint32_t port,
				void *ctx)
{
	struct ibemu_port_binding *b;

	if (port >= e->nports || !e->owner[port])
		return;
	b = e->owner[port];
	if (b->lent && b->lent->ctx == ctx) {
		free(b->lent);
		b->lent = NULL;
		b->ops.lend(b->ctx, port, IBEMU_LEND_RETURN);
	} else if (!b->lent && b->attached && b->ctx == ctx) {
		/* Never lent, or its owner went meanwhile. */
		ibemu_engine_port_detach(e, port);
	}
}

const struct ibemu_topo *ibemu_engine_topo(const struct ibemu_engine *e)
{
	return e->topo;
}

void *ibemu_engine_mgmt(const struct ibemu_engine *e)
{
	return e->mgmt;
}

uint64_t ibemu_engine_now(const struct ibemu_engine *e)
{
	return e->now;
}

size_t ibemu_engine_pending(const struct ibemu_engine *e)
{
	return e->evq.len + e->arbs_len - e->arbs_head;
}

uint64_t ibemu_engine_events(const struct ibemu_engine *e)
{
	return e->events;
}

uint64_t ibemu_engine_in_flight(const struct ibemu_engine *e)
{
	return e->in_flight;
}

uint32_t ibemu_engine_nports(const struct ibemu_engine *e)
{
	return e->nports;
}

uint32_t ibemu_engine_port_index(const struct ibemu_engine *e, uint32_t node,
				 unsigned port)
{
	return e->nodes[node].first_port + port;
}

void ibemu_engine_port_where(const struct ibemu_engine *e, uint32_t index,
			     uint32_t *node, unsigned *port)
{
	*node = e->ports[index].node;
	*port = e->ports[index].num;
}

int ibemu_engine_set_lid(struct ibemu_engine *e, uint32_t node, unsigned port,
			 uint16_t lid)
{
	struct ibemu_enode *n;

	if (node >= e->topo->nnodes || lid >= IBEMU_LID_COUNT)
		return -EINVAL;
	n = &e->nodes[node];
	if (port > n->nports)
		return -EINVAL;
	if (n->type == IBEMU_NODE_SWITCH)
		n->lid = lid;
	else
		e->ports[n->first_port + port].lid = lid;
	return 0;
}

int ibemu_engine_set_lmc(struct ibemu_engine *e, uint32_t node, unsigned port,
			 uint8_t lmc)
{
	struct ibemu_enode *n;

	if (node >= e->topo->nnodes || lmc > 7)
		return -EINVAL;
	n = &e->nodes[node];
	if (port < 1 || port > n->nports || n->type == IBEMU_NODE_SWITCH)
		return -EINVAL;
	e->ports[n->first_port + port].lmc = lmc;
	return 0;
}

const char *ibemu_port_state_name(enum ibemu_port_state s)
{
	switch (s) {
	case IBEMU_PORT_DOWN:
		return "Down";
	case IBEMU_PORT_INIT:
		return "Init";
	case IBEMU_PORT_ARMED:
		return "Armed";
	case IBEMU_PORT_ACTIVE:
		return "Active";
	}
	return "?";
}

const char *ibemu_phys_state_name(enum ibemu_phys_state s)
{
	switch (s) {
	case IBEMU_PHYS_SLEEP:
		return "Sleep";
	case IBEMU_PHYS_POLLING:
		return "Polling";
	case IBEMU_PHYS_DISABLED:
		return "Disabled";
	case IBEMU_PHYS_LINKUP:
		return "LinkUp";
	}
	return "?";
}

enum ibemu_port_state ibemu_engine_port_state(const struct ibemu_engine *e,
					      uint32_t port)
{
	return (enum ibemu_port_state)e->ports[port].state;
}

enum ibemu_phys_state ibemu_engine_phys_state(const struct ibemu_engine *e,
					      uint32_t port)
{
	return (enum ibemu_phys_state)e->ports[port].phys_state;
}

int ibemu_engine_set_port_state(struct ibemu_engine *e, uint32_t port,
				enum ibemu_port_state state)
{
	struct ibemu_eport *p;

	if (port >= e->nports || state < IBEMU_PORT_INIT ||
	    state > IBEMU_PORT_ACTIVE)
		return -EINVAL;
	p = &e->ports[port];
	if (p->peer == IBEMU_NONE)
		return -EINVAL;
	if (p->state == state)
		return 0;
	p->state = (uint8_t)state;
	/* A port that may now send data looks at what waits for it. */
	if (state == IBEMU_PORT_ACTIVE)
		ibemu__engine_arb_at(e, port, p->busy_until);
	ibemu__link_changed(e, port);
	return 0;
}

uint16_t ibemu_engine_get_lid(const struct ibemu_engine *e, uint32_t node,
			      unsigned port)
{
	const struct ibemu_enode *n;

	if (node >= e->topo->nnodes)
		return 0;
	n = &e->nodes[node];
	if (n->type == IBEMU_NODE_SWITCH)
		return n->lid;
	return port <= n->nports ? e->ports[n->first_port + port].lid : 0;
}

/* Makes room for LID 'lid' in the LFT of 'n'; 0 or -ENOMEM. */
static int lft_grow(struct ibemu_enode *n, uint16_t lid)
{
	uint32_t len = n->lft_len ? n->lft_len : 64;
	uint8_t *lft;

	while (len <= lid)
		len *= 2;
	if (len > IBEMU_LID_COUNT)
		len = IBEMU_LID_COUNT;
	lft = realloc(n->lft, len);
	if (!lft)
		return -ENOMEM;
	/* IBA 14.2.5.10: no route until an SM sets one. */
	memset(lft + n->lft_len, 0xff, len - n->lft_len);
	n->lft = lft;
	n->lft_len = len;
	return 0;
}

int ibemu_engine_set_lft(struct ibemu_engine *e, uint32_t node, uint16_t lid,
			 uint8_t port)
{
	struct ibemu_enode *n;
	int ret;

	if (node >= e->topo->nnodes || lid >= IBEMU_LID_COUNT)
		return -EINVAL;
	n = &e->nodes[node];
	if (n->type != IBEMU_NODE_SWITCH)
		return -EINVAL;
	if (lid >= n->lft_len) {
		if (port == 0xff)
			return 0; /* no route there already */
		ret = lft_grow(n, lid);
		if (ret)
			return ret;
	}
	n->lft[lid] = port;
	return 0;
}

int ibemu_engine_set_lft_block(struct ibemu_engine *e, uint32_t node,
			       uint32_t first_lid, const uint8_t *ports,
			       unsigned n)
{
	struct ibemu_enode *sw;
	unsigned last = n;
	int ret;

	if (node >= e->topo->nnodes || first_lid + n > IBEMU_LID_COUNT)
		return -EINVAL;
	sw = &e->nodes[node];
	if (sw->type != IBEMU_NODE_SWITCH)
		return -EINVAL;
	/* Past the table's end "no route" is there already: grow only for
	 * the last entry that routes somewhere. */
	while (last && ports[last - 1] == 0xff)
		last--;
	if (last && first_lid + last - 1 >= sw->lft_len) {
		ret = lft_grow(sw, (uint16_t)(first_lid + last - 1));
		if (ret)
			return ret;
	}
	if (first_lid < sw->lft_len)
		memcpy(sw->lft + first_lid, ports,
		       sw->lft_len - first_lid < n ? sw->lft_len - first_lid
						   : n);
	return 0;
}

int ibemu_engine_get_lft_block(const struct ibemu_engine *e, uint32_t node,
			       uint32_t first_lid, uint8_t *ports, unsigned n)
{
	const struct ibemu_enode *sw;
	unsigned have = 0;

	if (node >= e->topo->nnodes || first_lid + n > IBEMU_LID_COUNT)
		return -EINVAL;
	sw = &e->nodes[node];
	if (sw->type != IBEMU_NODE_SWITCH)
		return -EINVAL;
	if (first_lid < sw->lft_len)
		have = sw->lft_len - first_lid < n ? sw->lft_len - first_lid
						   : n;
	if (have)
		memcpy(ports, sw->lft + first_lid, have);
	memset(ports + have, 0xff, n - have);
	return 0;
}

uint16_t ibemu_engine_lft_top(const struct ibemu_engine *e, uint32_t node)
{
	const struct ibemu_enode *n;
	uint32_t lid;

	if (node >= e->topo->nnodes)
		return 0;
	n = &e->nodes[node];
	for (lid = n->lft_len; lid-- > 1;)
		if (n->lft[lid] != 0xff)
			return (uint16_t)lid;
	return 0;
}

unsigned ibemu_engine_mft_positions(const struct ibemu_engine *e, uint32_t node)
{
	if (node >= e->topo->nnodes || e->nodes[node].type != IBEMU_NODE_SWITCH)
		return 0;
	return e->nodes[node].nports / 16u + 1u;
}

/* Whether switch 'node' has an MFT entry for 'mlid' at position 'pos'. */
static int mft_check(const struct ibemu_engine *e, uint32_t node, uint16_t mlid,
		     unsigned pos)
{
	return pos < ibemu_engine_mft_positions(e, node) &&
	       mlid >= IBEMU_MLID_FIRST &&
	       mlid - IBEMU_MLID_FIRST < IBEMU_MFT_CAP;
}

int ibemu_engine_set_mft(struct ibemu_engine *e, uint32_t node, uint16_t mlid,
			 unsigned pos, uint16_t mask)
{
	unsigned npos, nports;
	uint16_t valid;

	if (!mft_check(e, node, mlid, pos))
		return -EINVAL;
	npos = ibemu_engine_mft_positions(e, node);
	nports = e->nodes[node].nports;
	if (!e->mft[node]) {
		if (!mask)
			return 0; /* empty already */
		e->mft[node] = calloc((size_t)npos * IBEMU_MFT_CAP,
				      sizeof(*e->mft[node]));
		if (!e->mft[node])
			return -ENOMEM;
	}
	/* Ports of this position that exist (port 0 included). */
	valid = nports - pos * 16u >= 15u
			? 0xffffu
			: (uint16_t)((1u << (nports - pos * 16u + 1u)) - 1u);
	e->mft[node][(size_t)(mlid - IBEMU_MLID_FIRST) * npos + pos] =
		mask & valid;
	return 0;
}

int ibemu_engine_get_mft(const struct ibemu_engine *e, uint32_t node,
			 uint16_t mlid, unsigned pos, uint16_t *mask)
{
	if (!mft_check(e, node, mlid, pos))
		return -EINVAL;
	*mask = e->mft[node] ? ibemu__engine_mft(e, node, mlid)[pos] : 0;
	return 0;
}

int ibemu_engine_get_lft(const struct ibemu_engine *e, uint32_t node,
			 uint16_t lid, uint8_t *port)
{
	const struct ibemu_enode *n;

	if (node >= e->topo->nnodes || lid >= IBEMU_LID_COUNT)
		return -EINVAL;
	n = &e->nodes[node];
	if (n->type != IBEMU_NODE_SWITCH)
		return -EINVAL;
	*port = lid < n->lft_len ? n->lft[lid] : 0xff;
	return 0;
}

struct ibemu_pkt *ibemu_engine_pkt_alloc(struct ibemu_engine *e)
{
	struct ibemu_pkt *p = e->free_pkts;

	if (p)
		e->free_pkts = p->next;
	else
		p = malloc(sizeof(*p));
	if (p)
		memset(p, 0, sizeof(*p));
	return p;
}

struct ibemu_pkt *ibemu__engine_pkt_copy(struct ibemu_engine *e,
					 const struct ibemu_pkt *pkt)
{
	struct ibemu_pkt *copy = ibemu_engine_pkt_alloc(e);
	const struct ibemu_port_ops *ops;

	if (!copy)
		return NULL;
	IBEMU_BUG_ON(pkt->mad); /* management packets are never multicast */
	*copy = *pkt;
	copy->next = NULL;
	copy->mc_out = NULL;
	copy->mc_left = 0;
	/* The kinds' tables are kept as bound, without stubs. */
	ops = pkt->kind ? e->kinds[pkt->kind - 1] : NULL;
	if (ops && ops->pkt_copied)
		ops->pkt_copied(pkt, copy);
	return copy;
}

void ibemu_engine_pkt_free(struct ibemu_engine *e, struct ibemu_pkt *p)
{
	free(p->mad);
	p->mad = NULL;
	free(p->mc_out);
	p->mc_out = NULL;
	p->next = e->free_pkts;
	e->free_pkts = p;
}

void ibemu__engine_push(struct ibemu_engine *e, uint64_t time, uint64_t phase,
			enum ibemu_ev_kind kind, uint32_t target, void *ptr)
{
	struct ibemu_event ev = {
		.time = time,
		.order = phase << 56 | e->seq++,
		.kind = kind,
		.target = target,
		.ptr = ptr,
	};

	IBEMU_BUG_ON(time < e->now);
	/* Running out of memory mid-simulation cannot be recovered from. */
	IBEMU_BUG_ON(ibemu_evq_push(&e->evq, &ev));
}

void ibemu__engine_arb_at(struct ibemu_engine *e, uint32_t pi, uint64_t time)
{
	struct ibemu_eport *p = &e->ports[pi];

	if (time < e->now)
		time = e->now;
	/* An earlier pending ARB will look again when it runs. */
	if (p->arb_at <= time)
		return;
	p->arb_at = time;
	if (time != e->now) {
		ibemu__engine_push(e, time, IBEMU_PHASE_DECIDE, IBEMU_EV_ARB,
				   pi, NULL);
		return;
	}
	if (e->arbs_len == e->arbs_cap) {
		/* The FIFO empties at every instant: slide, or grow. */
		if (e->arbs_head) {
			memmove(e->arbs, e->arbs + e->arbs_head,
				(e->arbs_len - e->arbs_head) *
					sizeof(*e->arbs));
			e->arbs_len -= e->arbs_head;
			e->arbs_head = 0;
		}
		if (e->arbs_len == e->arbs_cap) {
			e->arbs_cap = e->arbs_cap ? 2 * e->arbs_cap : 256;
			e->arbs = realloc(e->arbs,
					  e->arbs_cap * sizeof(*e->arbs));
			IBEMU_BUG_ON(!e->arbs);
		}
	}
	e->arbs[e->arbs_len].seq = e->seq++;
	e->arbs[e->arbs_len].port = pi;
	e->arbs_len++;
}

void ibemu_engine_send_vl15(struct ibemu_engine *e, uint32_t pi,
			    struct ibemu_pkt *pkt)
{
	pkt->vl = IBEMU_VL15;
	ibemu_pktq_push(&e->ports[pi].vl15_out, pkt);
	ibemu_engine_kick(e, pi);
}

void ibemu_engine_kick(struct ibemu_engine *e, uint32_t pi)
{
	ibemu__engine_arb_at(e, pi, e->ports[pi].busy_until);
}

void ibemu_engine_mgmt_at(struct ibemu_engine *e, uint64_t when,
			  uint32_t target, void *ptr)
{
	ibemu__engine_push(e, when < e->now ? e->now : when, IBEMU_PHASE_UPDATE,
			   IBEMU_EV_MGMT, target, ptr);
}

/*
 * A timer's event kind carries its port's owner generation above the low
 * byte, so that a timer outliving its owner reaches nobody.
 */
#define EV_KIND(kind) ((kind)&0xffu)

void ibemu_engine_timer(struct ibemu_engine *e, uint32_t port, uint64_t when,
			uint64_t cookie)
{
	struct ibemu_port_binding *b;

	IBEMU_BUG_ON(port >= e->nports || !e->owner[port]);
	b = ibemu__port_data(e, port);
	ibemu__engine_push(e, when < e->now ? e->now : when, IBEMU_PHASE_UPDATE,
			   (enum ibemu_ev_kind)(IBEMU_EV_TIMER | b->gen << 8),
			   port, (void *)(uintptr_t)cookie);
}

static void timer_fire(struct ibemu_engine *e, const struct ibemu_event *ev)
{
	struct ibemu_port_binding *b = ibemu__port_data(e, ev->target);

	if (b->gen == ev->kind >> 8)
		b->ops.timer(b->ctx, ev->target, (uint64_t)(uintptr_t)ev->ptr);
}

void ibemu__engine_credit_sync(struct ibemu_engine *e, struct ibemu_eport *p)
{
	uint32_t i, k = 0;

	for (i = 0; i < p->ncret; i++) {
		struct ibemu_cret *c = &p->cret[i];

		if (c->time <= e->now) {
			p->credits[c->vl] += c->blocks;
			/* More credit than the receiver has buffer is a bug. */
			IBEMU_BUG_ON(p->credits[c->vl] >
				     e->ports[p->peer].buf_blocks);
		} else {
			p->cret[k++] = *c;
		}
	}
	p->ncret = k;
}

void ibemu__engine_wait_start(struct ibemu_engine *e, struct ibemu_eport *p)
{
	uint64_t first = UINT64_MAX;
	uint32_t i;

	if (p->wait_since == UINT64_MAX)
		p->wait_since = e->now;
	/* Look again when the first credit on its way comes back. */
	for (i = 0; i < p->ncret; i++)
		if (p->cret[i].time < first)
			first = p->cret[i].time;
	if (first != UINT64_MAX)
		ibemu__engine_arb_at(e, (uint32_t)(p - e->ports),
				     first > p->busy_until ? first
							   : p->busy_until);
}

void ibemu__engine_wait_stop(struct ibemu_engine *e, struct ibemu_eport *p)
{
	if (p->wait_since == UINT64_MAX)
		return;
	p->cnt.xmit_wait += (e->now - p->wait_since) / IBEMU_XMIT_WAIT_TICK_PS;
	p->wait_since = UINT64_MAX;
}

/* Whether the next data packet of port 'p' is lost (splitmix64 draws). */
static int drop_draw(struct ibemu_eport *p)
{
	uint64_t z = (p->drop_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z % 1000000u < p->drop_ppm;
}

int ibemu_engine_set_drop(struct ibemu_engine *e, uint32_t port,
			  uint32_t rate_ppm, uint64_t seed)
{
	if (port >= e->nports || rate_ppm > 1000000u)
		return -EINVAL;
	e->ports[port].drop_ppm = rate_ppm;
	e->ports[port].drop_rng = seed;
	return 0;
}

uint32_t ibemu_engine_drop_rate(const struct ibemu_engine *e, uint32_t port)
{
	return port < e->nports ? e->ports[port].drop_ppm : 0;
}

unsigned ibemu_engine_pkeys(const struct ibemu_engine *e, uint32_t port,
			    uint16_t *pkeys, unsigned max)
{
	return e->mgmt_ops.pkeys(e, port, pkeys, max);
}

uint64_t ibemu__engine_transmit(struct ibemu_engine *e, uint32_t pi,
				struct ibemu_pkt *pkt, uint64_t tail_in)
{
	struct ibemu_eport *p = &e->ports[pi];
	struct ibemu_eport *peer = &e->ports[p->peer];
	uint64_t ser, end, head;

	IBEMU_BUG_ON(p->peer == IBEMU_NONE || p->busy_until > e->now);
	if (pkt->vl != IBEMU_VL15) {
		IBEMU_BUG_ON(pkt->vl >= p->data_vls);
		IBEMU_BUG_ON(p->credits[pkt->vl] < pkt->blocks);
		p->credits[pkt->vl] -= pkt->blocks;
	}
	ser = ibemu_link_serialize_ps(p->lanes, (enum ibemu_speed)p->speed,
				      pkt->wire_bytes);
	end = e->now + ser;
	/* Cut-through: the last byte cannot leave before it came in. */
	if (end < tail_in)
		end = tail_in;
	p->busy_until = end;
	p->cnt.busy_ps += end - e->now;
	p->cnt.xmit_pkts++;
	if (ibemu_lid_is_multicast(pkt->dlid))
		p->cnt.multicast_xmit_pkts++;
	else
		p->cnt.unicast_xmit_pkts++;
	p->cnt.xmit_data += (pkt->wire_bytes - IBEMU_VCRC_BYTES) / 4;
	pkt->t_tail = end + p->prop_ps;
	if (p->drop_ppm && pkt->vl != IBEMU_VL15 && drop_draw(p)) {
		/* Corrupted on the wire: the receiver frees its space at the
		 * tail and passes it to nobody (see dispatch()). */
		pkt->lost = 1;
		p->cnt.xmit_discards++;
		ibemu__engine_push(e, pkt->t_tail, IBEMU_PHASE_UPDATE,
				   IBEMU_EV_TAIL, p->peer, pkt);
	} else if (ibemu__node_ops(e, &e->nodes[peer->node])->cut_through) {
		/* The header event fires once the switch has routed it. */
		head = e->now + p->prop_ps +
		       ibemu_link_serialize_ps(p->lanes,
					       (enum ibemu_speed)p->speed,
					       pkt->hdr_bytes) +
		       e->nodes[peer->node].routing_latency_ps;
		ibemu__engine_push(e, head, IBEMU_PHASE_UPDATE, IBEMU_EV_HEAD,
				   p->peer, pkt);
	} else {
		ibemu__engine_push(e, pkt->t_tail, IBEMU_PHASE_UPDATE,
				   IBEMU_EV_TAIL, p->peer, pkt);
	}
	return end;
}

void ibemu__engine_release(struct ibemu_engine *e, uint32_t pi, uint8_t vl,
			   uint16_t blocks, uint64_t when)
{
	struct ibemu_eport *p = &e->ports[pi], *tx;
	uint64_t t;

	if (vl == IBEMU_VL15)
		return; /* not flow controlled */
	if (p->num == 0)
		return; /* a switch's management port has no link */
	IBEMU_BUG_ON(p->peer == IBEMU_NONE);
	tx = &e->ports[p->peer];
	t = when + p->prop_ps;
	/* No event: the transmitter adds it when it next looks at its
	 * credits, and only a waiting one needs waking up. */
	if (tx->ncret == tx->cret_cap) {
		tx->cret_cap = tx->cret_cap ? tx->cret_cap * 2 : 8;
		tx->cret = realloc(tx->cret, tx->cret_cap * sizeof(*tx->cret));
		IBEMU_BUG_ON(!tx->cret);
	}
	tx->cret[tx->ncret++] =
		(struct ibemu_cret){.time = t, .blocks = blocks, .vl = vl};
	if (tx->wait_since != UINT64_MAX)
		ibemu__engine_arb_at(e, p->peer,
				     t > tx->busy_until ? t : tx->busy_until);
}

/* The tail of a packet lost on the wire reached port 'pi': its space is
 * free again, nobody receives it. */
static void lost_tail(struct ibemu_engine *e, uint32_t pi,
		      struct ibemu_pkt *pkt)
{
	ibemu__engine_release(e, pi, pkt->vl, pkt->blocks, e->now);
	e->in_flight--;
	ibemu_engine_pkt_free(e, pkt);
}

static void dispatch(struct ibemu_engine *e, const struct ibemu_event *ev)
{
	struct ibemu_eport *p = &e->ports[ev->target];

	switch (EV_KIND(ev->kind)) {
	case IBEMU_EV_HEAD:
		ibemu__node_ops(e, &e->nodes[p->node])
			->head(e, ev->target, ev->ptr);
		break;
	case IBEMU_EV_TAIL:
		if (((struct ibemu_pkt *)ev->ptr)->lost) {
			lost_tail(e, ev->target, ev->ptr);
			break;
		}
		ibemu__node_ops(e, &e->nodes[p->node])
			->tail(e, ev->target, ev->ptr);
		break;
	case IBEMU_EV_ARB:
		if (p->arb_at != ev->time)
			break; /* superseded by an earlier one */
		p->arb_at = UINT64_MAX;
		ibemu__node_ops(e, &e->nodes[p->node])
			->arbitrate(e, ev->target);
		break;
	case IBEMU_EV_TIMER:
		timer_fire(e, ev);
		break;
	case IBEMU_EV_MGMT:
		e->mgmt_ops.event(e, ev->target, ev->ptr);
		break;
	case IBEMU_EV_MAD:
		ibemu__smi_hca_receive(e, ev->target, ev->ptr);
		break;
	case IBEMU_EV_LINK:
		ibemu__link_train(e, ev->target, (uint32_t)(uintptr_t)ev->ptr);
		break;
	}
}

size_t ibemu_engine_run(struct ibemu_engine *e, uint64_t until,
			size_t max_events)
{
	struct ibemu_event ev;
	size_t n = 0;

	while (n < max_events) {
		const struct ibemu_event *top =
			ibemu_evq_empty(&e->evq) ? NULL
						 : ibemu_evq_top(&e->evq);

		if (e->arbs_head < e->arbs_len) {
			const struct ibemu_arb_now *a = &e->arbs[e->arbs_head];
			uint64_t order = IBEMU_PHASE_DECIDE << 56 | a->seq;

			if (!top || top->time > e->now || top->order > order) {
				ev = (struct ibemu_event){
					.time = e->now,
					.order = order,
					.kind = IBEMU_EV_ARB,
					.target = a->port,
				};
				if (++e->arbs_head == e->arbs_len)
					e->arbs_head = e->arbs_len = 0;
				dispatch(e, &ev);
				n++;
				continue;
			}
		}
		if (!top || top->time > until)
			break;
		ibemu_evq_pop(&e->evq, &ev);
		e->now = ev.time;
		dispatch(e, &ev);
		n++;
	}
	if (ibemu_evq_empty(&e->evq) && until != UINT64_MAX && until > e->now)
		e->now = until;
	e->events += n;
	return n;
}

uint64_t ibemu_engine_next_time(const struct ibemu_engine *e)
{
	if (e->arbs_head < e->arbs_len)
		return e->now;
	return ibemu_evq_empty(&e->evq) ? UINT64_MAX
					: ibemu_evq_top(&e->evq)->time;
}

void ibemu_engine_advance(struct ibemu_engine *e, uint64_t t)
{
	IBEMU_BUG_ON(ibemu_engine_next_time(e) < t);
	if (t > e->now)
		e->now = t;
}

void ibemu_engine_counters(const struct ibemu_engine *e, uint32_t port,
			   struct ibemu_port_counters *out)
{
	const struct ibemu_eport *p = &e->ports[port];

	*out = p->cnt;
	if (p->wait_since != UINT64_MAX)
		out->xmit_wait +=
			(e->now - p->wait_since) / IBEMU_XMIT_WAIT_TICK_PS;
}

void ibemu_engine_counters_reset(struct ibemu_engine *e, uint32_t port)
{
	struct ibemu_eport *p = &e->ports[port];

	memset(&p->cnt, 0, sizeof(p->cnt));
	if (p->wait_since != UINT64_MAX)
		p->wait_since = e->now;
}

void ibemu_engine_counters_clear(struct ibemu_engine *e, uint32_t port,
				 unsigned what)
{
	struct ibemu_eport *p;
	struct ibemu_port_counters *c;

	if (port >= e->nports)
		return;
	p = &e->ports[port];
	c = &p->cnt;
	if (what & IBEMU_CNT_XMIT_DATA)
		c->xmit_data = 0;
	if (what & IBEMU_CNT_RCV_DATA)
		c->rcv_data = 0;
	if (what & IBEMU_CNT_XMIT_PKTS)
		c->xmit_pkts = 0;
	if (what & IBEMU_CNT_RCV_PKTS)
		c->rcv_pkts = 0;
	if (what & IBEMU_CNT_UNICAST_XMIT)
		c->unicast_xmit_pkts = 0;
	if (what & IBEMU_CNT_UNICAST_RCV)
		c->unicast_rcv_pkts = 0;
	if (what & IBEMU_CNT_MULTICAST_XMIT)
		c->multicast_xmit_pkts = 0;
	if (what & IBEMU_CNT_MULTICAST_RCV)
		c->multicast_rcv_pkts = 0;
	if (what & IBEMU_CNT_RCV_ERRORS)
		c->rcv_errors = 0;
	if (what & IBEMU_CNT_RELAY_ERRORS)
		c->rcv_switch_relay_errors = 0;
	if (what & IBEMU_CNT_XMIT_DISCARDS)
		c->xmit_discards = 0;
	if (what & IBEMU_CNT_VL15_DROPPED)
		c->vl15_dropped = 0;
	if (what & IBEMU_CNT_XMIT_WAIT) {
		c->xmit_wait = 0;
		/* A wait in progress counts again from now. */
		if (p->wait_since != UINT64_MAX)
			p->wait_since = e->now;
	}
	if (what & IBEMU_CNT_P_KEY_VIOLATIONS)
		c->p_key_violations = 0;
	if (what & IBEMU_CNT_Q_KEY_VIOLATIONS)
		c->q_key_violations = 0;
}

void ibemu_engine_count_violation(struct ibemu_engine *e, uint32_t port,
				  unsigned what)
{
	struct ibemu_port_counters *c;

	if (port >= e->nports)
		return;
	c = &e->ports[port].cnt;
	if ((what & IBEMU_CNT_P_KEY_VIOLATIONS) &&
	    c->p_key_violations != UINT16_MAX)
		c->p_key_violations++;
	if ((what & IBEMU_CNT_Q_KEY_VIOLATIONS) &&
	    c->q_key_violations != UINT16_MAX)
		c->q_key_violations++;
}

int ibemu_engine_settle(struct ibemu_engine *e)
{
	uint64_t rest = e->now;
	uint32_t i, k;

	for (i = 0; i < e->nports; i++) {
		const struct ibemu_eport *p = &e->ports[i];

		if (p->busy_until > rest)
			rest = p->busy_until;
		for (k = 0; k < p->ncret; k++)
			if (p->cret[k].time > rest)
				rest = p->cret[k].time;
	}
	ibemu_engine_run(e, rest, SIZE_MAX);
	/* Nothing is due before 'rest' any more: time may jump there. */
	if (e->now < rest)
		e->now = rest;
	for (i = 0; i < e->nports; i++) {
		struct ibemu_vlarb *a = &e->ports[i].vlarb;

		if (e->ports[i].peer != IBEMU_NONE)
			ibemu__engine_credit_sync(e, &e->ports[i]);
		/* IBA 7.6.9: each table starts over at its first entry. */
		a->high_idx = a->low_idx = 0;
		a->high_left = a->high[0].weight * 64;
		a->low_left = a->low[0].weight * 64;
		a->high_sent = 0;
		a->picked_high = 0;
	}
	for (i = 0; i < e->topo->nnodes; i++)
		ibemu__node_ops(e, &e->nodes[i])->settle(e, i);
	return e->in_flight ? -EBUSY : 0;
}
