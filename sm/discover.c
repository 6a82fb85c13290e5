// SPDX-License-Identifier: MIT
/*
 * Discovery by directed route (IBA 14.2.2, as OpenSM's osm_state_mgr
 * sweeps): NodeInfo of the SM's own node, then from every switch found
 * SwitchInfo and the PortInfo of each port, and the NodeInfo beyond each
 * port whose link is up, all queued at once and sent through the window
 * of smp.c. A node is known by its NodeGUID, so loops and parallel links
 * end at a node already found (only the link is recorded). Then the
 * routing graph of what was found, in an order that does not depend on
 * which answer came first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm.h"

#define NODE_TYPE_CA	 1
#define NODE_TYPE_SWITCH 2
#define PHYS_LINKUP	 5 /* IBA 14.2.5.6 PortPhysicalState */
#define NONE		 UINT32_MAX

/* Where a NodeInfo was asked: the route, and the port it leaves by. */
struct probe {
	uint8_t path[SM_MAX_HOPS + 1];
	uint8_t hops;
	uint32_t from; /* NONE for the SM's own node */
	uint8_t from_port;
};

static uint64_t key(uint32_t node, unsigned port)
{
	return (uint64_t)node << 8 | port;
}

static void link_ports(struct sm *sm, uint32_t a, uint8_t pa, uint32_t b,
		       uint8_t pb)
{
	if (pa <= sm->nodes[a].ni.num_ports) {
		sm->nodes[a].ports[pa].peer = b;
		sm->nodes[a].ports[pa].peer_port = pb;
	}
	if (pb <= sm->nodes[b].ni.num_ports) {
		sm->nodes[b].ports[pb].peer = a;
		sm->nodes[b].ports[pb].peer_port = pa;
	}
}

static uint32_t hash_slot(uint64_t guid, uint32_t cap)
{
	/* Fibonacci hashing: GUIDs of one vendor differ in the low bits. */
	return (uint32_t)((guid * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* A sweep finds thousands of nodes, each answering many NodeInfos. */
static uint32_t node_find(const struct sm *sm, uint64_t guid)
{
	uint32_t i, v;

	if (!sm->hash_cap)
		return NONE;
	for (i = hash_slot(guid, sm->hash_cap); (v = sm->hash[i]);
	     i = (i + 1) & (sm->hash_cap - 1))
		if (sm->nodes[v - 1].ni.node_guid == guid)
			return v - 1;
	return NONE;
}

static void hash_put(struct sm *sm, uint32_t n)
{
	uint32_t i = hash_slot(sm->nodes[n].ni.node_guid, sm->hash_cap);

	while (sm->hash[i])
		i = (i + 1) & (sm->hash_cap - 1);
	sm->hash[i] = n + 1;
}

/* Keeps the table at most half full: node 'sm->nnodes' is coming. */
static int hash_grow(struct sm *sm)
{
	uint32_t cap = sm->hash_cap ? sm->hash_cap : 64, n;

	while ((sm->nnodes + 1) * 2 > cap)
		cap *= 2;
	if (cap == sm->hash_cap)
		return 0;
	free(sm->hash);
	sm->hash = calloc(cap, sizeof(*sm->hash));
	sm->hash_cap = sm->hash ? cap : 0;
	if (!sm->hash)
		return -ENOMEM;
	for (n = 0; n < sm->nnodes; n++)
		hash_put(sm, n);
	return 0;
}

static void on_node_info(struct sm *sm, int status,
			 const struct ibemu_mad_smp *smp, void *arg,
			 uint64_t arg2);

/* Asks for the NodeInfo beyond port 'port' of node 'n'. */
static void probe_beyond(struct sm *sm, uint32_t n, uint8_t port)
{
	const struct sm_node *node = &sm->nodes[n];
	struct probe *p;

	if (node->hops >= SM_MAX_HOPS)
		return;
	p = calloc(1, sizeof(*p));
	if (!p) {
		sm->errors++;
		return;
	}
	memcpy(p->path, node->path, (size_t)node->hops + 1);
	p->path[node->hops + 1] = port;
	p->hops = (uint8_t)(node->hops + 1);
	p->from = n;
	p->from_port = port;
	if (sm_smp(sm, p->path, p->hops, IBEMU_MAD_METHOD_GET,
		   IBEMU_SMP_ATTR_NODE_INFO, 0, NULL, on_node_info, p, 0)) {
		free(p);
		sm->errors++;
	}
}

static void on_port_info(struct sm *sm, int status,
			 const struct ibemu_mad_smp *smp, void *arg,
			 uint64_t arg2)
{
	uint32_t n = (uint32_t)(arg2 >> 8);
	uint8_t port = (uint8_t)arg2;
	struct sm_node *node = &sm->nodes[n];
	struct sm_port *p = &node->ports[port];

	(void)arg;
	if (status || smp->hdr.status ||
	    ibemu_mad_port_info_decode(smp->data, sizeof(smp->data), &p->pi) <
		    0) {
		sm->errors++;
		return;
	}
	p->have_pi = 1;
	/* Beyond a switch's up link lies a node, found or not yet; the
	 * SM's own HCA reaches out through its port. */
	if (port && p->pi.port_phys_state == PHYS_LINKUP && p->peer == NONE &&
	    (node->ni.node_type == NODE_TYPE_SWITCH || node->hops == 0))
		probe_beyond(sm, n, port);
}

/* Records the route to port 'port' of HCA 'n' and reads its PortInfo. */
static void port_route(struct sm *sm, uint32_t n, uint8_t port, uint64_t guid,
		       const struct probe *pr)
{
	struct sm_port *p = &sm->nodes[n].ports[port];

	p->guid = guid;
	memcpy(p->path, pr->path, (size_t)pr->hops + 1);
	p->hops = pr->hops;
	if (sm_smp(sm, p->path, p->hops, IBEMU_MAD_METHOD_GET,
		   IBEMU_SMP_ATTR_PORT_INFO, port, NULL, on_port_info, NULL,
		   key(n, port)))
		sm->errors++;
}

static int node_add(struct sm *sm, const struct ibemu_mad_node_info *ni,
		    const struct probe *pr, uint32_t *out)
{
	struct sm_node *grown, *node;
	unsigned i;

	if (sm->nnodes == sm->nodes_cap) {
		grown = realloc(sm->nodes,
				(sm->nodes_cap * 2 + 16) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		sm->nodes = grown;
		sm->nodes_cap = sm->nodes_cap * 2 + 16;
	}
	if (hash_grow(sm))
		return -ENOMEM;
	node = &sm->nodes[sm->nnodes];
	memset(node, 0, sizeof(*node));
	node->ni = *ni;
	node->ports = calloc((size_t)ni->num_ports + 1, sizeof(*node->ports));
	if (!node->ports)
		return -ENOMEM;
	for (i = 0; i <= ni->num_ports; i++)
		node->ports[i].peer = NONE;
	memcpy(node->path, pr->path, (size_t)pr->hops + 1);
	node->hops = pr->hops;
	node->in_port = ni->local_port_num;
	if (ni->local_port_num <= ni->num_ports) {
		memcpy(node->ports[ni->local_port_num].path, pr->path,
		       (size_t)pr->hops + 1);
		node->ports[ni->local_port_num].hops = pr->hops;
		node->ports[ni->local_port_num].guid = ni->port_guid;
	}
	hash_put(sm, sm->nnodes);
	*out = sm->nnodes++;
	return 0;
}

static void on_switch_info(struct sm *sm, int status,
			   const struct ibemu_mad_smp *smp, void *arg,
			   uint64_t arg2)
{
	struct sm_node *node = &sm->nodes[arg2 >> 8];

	(void)arg;
	if (status || smp->hdr.status ||
	    ibemu_mad_switch_info_decode(smp->data, sizeof(smp->data),
					 &node->si) < 0)
		sm->errors++;
}

static void on_node_desc(struct sm *sm, int status,
			 const struct ibemu_mad_smp *smp, void *arg,
			 uint64_t arg2)
{
	struct sm_node *node = &sm->nodes[arg2 >> 8];

	(void)arg;
	/* Only the SA's NodeRecords need it: no error if it is missing. */
	if (status || smp->hdr.status ||
	    ibemu_mad_node_desc_decode(smp->data, sizeof(smp->data),
				       &node->nd) < 0)
		memset(&node->nd, 0, sizeof(node->nd));
}

/*
 * Asks what a node just found has: its NodeDescription (for the SA),
 * SwitchInfo, PortInfo of its ports.
 */
static void explore(struct sm *sm, uint32_t n)
{
	const struct sm_node *node = &sm->nodes[n];
	unsigned first = 1, last = node->ni.num_ports, port;

	if (sm_smp(sm, node->path, node->hops, IBEMU_MAD_METHOD_GET,
		   IBEMU_SMP_ATTR_NODE_DESC, 0, NULL, on_node_desc, NULL,
		   key(n, 0)))
		sm->errors++;
	if (node->ni.node_type == NODE_TYPE_SWITCH) {
		if (sm_smp(sm, node->path, node->hops, IBEMU_MAD_METHOD_GET,
			   IBEMU_SMP_ATTR_SWITCH_INFO, 0, NULL, on_switch_info,
			   NULL, key(n, 0)))
			sm->errors++;
		first = 0; /* port 0: the switch's LID lives there */
	} else {
		/* An HCA answers for the port the route came in by; its
		 * other ports are found from the switches they cable to. */
		first = last = node->in_port;
	}
	for (port = first; port <= last; port++)
		if (sm_smp(sm, node->path, node->hops, IBEMU_MAD_METHOD_GET,
			   IBEMU_SMP_ATTR_PORT_INFO, port, NULL, on_port_info,
			   NULL, key(n, port)))
			sm->errors++;
}

static void on_node_info(struct sm *sm, int status,
			 const struct ibemu_mad_smp *smp, void *arg,
			 uint64_t arg2)
{
	struct probe *p = arg;
	struct ibemu_mad_node_info ni;
	uint32_t n;

	(void)arg2;
	if (status || smp->hdr.status ||
	    ibemu_mad_node_info_decode(smp->data, sizeof(smp->data), &ni) < 0) {
		/* Nobody answers beyond that port: no node there (yet). */
		if (status != -ETIMEDOUT)
			sm->errors++;
		free(p);
		return;
	}
	n = node_find(sm, ni.node_guid);
	if (n == NONE) {
		if (node_add(sm, &ni, p, &n)) {
			sm->errors++;
			free(p);
			return;
		}
		explore(sm, n);
	} else if (sm->nodes[n].ni.node_type != NODE_TYPE_SWITCH &&
		   ni.local_port_num <= sm->nodes[n].ni.num_ports &&
		   ni.local_port_num != sm->nodes[n].in_port &&
		   !sm->nodes[n].ports[ni.local_port_num].hops) {
		/* Another port of an HCA found: its PortInfo by its route. */
		port_route(sm, n, ni.local_port_num, ni.port_guid, p);
	}
	if (p->from != NONE)
		link_ports(sm, p->from, p->from_port, n, ni.local_port_num);
	free(p);
}

int sm_discover(struct sm *sm)
{
	struct probe *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->from = NONE;
	if (sm_smp(sm, p->path, 0, IBEMU_MAD_METHOD_GET,
		   IBEMU_SMP_ATTR_NODE_INFO, 0, NULL, on_node_info, p, 0)) {
		free(p);
		return -ENOMEM;
	}
	return sm_smp_run(sm);
}

/* --- the routing graph ---------------------------------------------- */

/*
 * The graph's node order: breadth first from the SM's node, ports in
 * increasing order, so the HCAs of a switch are neighbours (and take
 * consecutive LIDs, which the engines' port balancing relies on), and
 * nothing depends on which answer came first. Nodes no cable reaches
 * (none, after a sweep) would follow in discovery order.
 */
static void bfs_order(const struct sm *sm, uint32_t *order)
{
	uint8_t *seen = calloc(sm->nnodes, 1);
	uint32_t head = 0, tail = 0, n;
	unsigned port;

	if (!seen) { /* discovery order then: still a valid graph */
		for (n = 0; n < sm->nnodes; n++)
			order[n] = n;
		return;
	}
	order[tail++] = 0;
	seen[0] = 1;
	while (head < tail) {
		const struct sm_node *node = &sm->nodes[order[head++]];

		for (port = 1; port <= node->ni.num_ports; port++) {
			uint32_t peer = node->ports[port].peer;

			if (peer != NONE && !seen[peer]) {
				seen[peer] = 1;
				order[tail++] = peer;
			}
		}
	}
	for (n = 0; n < sm->nnodes; n++)
		if (!seen[n])
			order[tail++] = n;
	free(seen);
}

/* Data VLs of PortInfo:VLCap (IBA 14.2.5.6): 1 VL0, 2 VL0-1, 3 VL0-3, 4
 * VL0-7, 5 VL0-14. */
static uint8_t vl_cap_vls(uint8_t cap)
{
	static const uint8_t vls[] = {0, 1, 2, 4, 8, 15};

	return cap < sizeof(vls) ? vls[cap] : 0;
}

/*
 * The data VLs every link can run, for engines that put paths on virtual
 * layers: the least VLCap of the linked ports (OperationalVLs is set to
 * what both ends have); 0 if none says.
 */
static uint8_t link_vls(const struct sm *sm)
{
	uint8_t least = 0, v;
	uint32_t n;
	unsigned port;

	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		for (port = 1; port <= node->ni.num_ports; port++) {
			const struct sm_port *p = &node->ports[port];

			if (p->peer == NONE || !p->have_pi)
				continue;
			v = vl_cap_vls(p->pi.vl_cap);
			if (v && (!least || v < least))
				least = v;
		}
	}
	return least;
}

int sm_build_graph(struct sm *sm)
{
	uint32_t *order, i, g, n;
	unsigned port;
	int ret;

	if (!sm->nnodes)
		return -ENODEV;
	order = calloc(sm->nnodes, sizeof(*order));
	if (!order)
		return -ENOMEM;
	bfs_order(sm, order);
	sm->by_graph = calloc(sm->nnodes, sizeof(*sm->by_graph));
	ret = sm->by_graph ? ibemu_graph_create(&sm->graph) : -ENOMEM;
	for (i = 0; !ret && i < sm->nnodes; i++) {
		struct sm_node *node = &sm->nodes[order[i]];

		ret = ibemu_graph_add_node(
			sm->graph,
			node->ni.node_type == NODE_TYPE_SWITCH
				? IBEMU_GRAPH_SWITCH
				: IBEMU_GRAPH_HCA,
			node->ni.num_ports, node->ni.node_guid, &g);
		node->graph = g;
		if (!ret)
			sm->by_graph[g] = order[i];
	}
	for (n = 0; !ret && n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		for (port = 1; !ret && port <= node->ni.num_ports; port++) {
			const struct sm_port *p = &node->ports[port];
			const struct sm_node *peer;

			if (p->peer == NONE ||
			    key(p->peer, p->peer_port) < key(n, port))
				continue;
			peer = &sm->nodes[p->peer];
			ret = ibemu_graph_connect(sm->graph, node->graph, port,
						  peer->graph, p->peer_port);
		}
	}
	if (!ret) {
		sm->graph->vls = link_vls(sm);
		sm->graph->lmc = (uint8_t)sm->lmc;
	}
	free(order);
	return ret;
}
