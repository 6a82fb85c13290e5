// SPDX-License-Identifier: MIT
/*
 * What changed between two heavy sweeps, for 'ibemu sm status': the nodes
 * (by NodeGUID) and links (by both ends' GUID and port number) that one
 * discovery found and the one before did not, and the reverse. Each sweep
 * keeps a sorted list of what it found, so the comparison is one merge:
 * O(n log n) for n nodes and links, next to the sweep's own SMPs.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm.h"

static int node_cmp(const void *a, const void *b)
{
	const struct sm_seen_node *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static int link_cmp(const void *a, const void *b)
{
	const struct sm_seen_link *x = a, *y = b;
	int i;

	for (i = 0; i < 2; i++) {
		if (x->guid[i] != y->guid[i])
			return x->guid[i] < y->guid[i] ? -1 : 1;
		if (x->port[i] != y->port[i])
			return x->port[i] < y->port[i] ? -1 : 1;
	}
	return 0;
}

/* A NodeDescription as text: up to its NUL, non-printing bytes as '?'. */
static void desc_of(const struct ibemu_mad_node_desc *nd, char *out)
{
	size_t i;

	for (i = 0; i < IBEMU_MAD_NODE_DESC_LEN - 1 && nd->str[i]; i++)
		out[i] = isprint((unsigned char)nd->str[i]) ? nd->str[i] : '?';
	out[i] = '\0';
}

static const char *desc_find(const struct sm_seen_node *nodes, uint32_t n,
			     uint64_t guid)
{
	struct sm_seen_node key = {.guid = guid};
	const struct sm_seen_node *at =
		bsearch(&key, nodes, n, sizeof(*nodes), node_cmp);

	return at && at->desc[0] ? at->desc : "?";
}

/* Names one change, if there is room for it in the list. */
static void list(struct sm_changes *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void list(struct sm_changes *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nlisted == SM_CHANGES_LISTED)
		return;
	va_start(ap, fmt);
	vsnprintf(c->listed[c->nlisted++], sizeof(c->listed[0]), fmt, ap);
	va_end(ap);
}

static void list_node(struct sm_changes *c, char sign,
		      const struct sm_seen_node *n)
{
	list(c, "%c node %s (0x%016" PRIx64 ")", sign, n->desc, n->guid);
}

static void list_link(struct sm_changes *c, char sign,
		      const struct sm_seen_link *l,
		      const struct sm_seen_node *nodes, uint32_t nnodes)
{
	list(c, "%c link %s:%u (0x%016" PRIx64 ") - %s:%u (0x%016" PRIx64 ")",
	     sign, desc_find(nodes, nnodes, l->guid[0]), l->port[0], l->guid[0],
	     desc_find(nodes, nnodes, l->guid[1]), l->port[1], l->guid[1]);
}

/* What the sweep just found, sorted: its nodes and links. */
static int collect(const struct sm *sm, struct sm_seen_node **nodes_out,
		   struct sm_seen_link **links_out, uint32_t *nlinks_out)
{
	struct sm_seen_node *nodes;
	struct sm_seen_link *links;
	uint32_t n, nlinks = 0, cap = 0;
	unsigned p;

	for (n = 0; n < sm->nnodes; n++)
		cap += sm->nodes[n].ni.num_ports;
	nodes = calloc(sm->nnodes ? sm->nnodes : 1, sizeof(*nodes));
	links = calloc(cap ? cap : 1, sizeof(*links));
	if (!nodes || !links) {
		free(nodes);
		free(links);
		return -ENOMEM;
	}
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		nodes[n].guid = node->ni.node_guid;
		desc_of(&node->nd, nodes[n].desc);
		for (p = 1; p <= node->ni.num_ports; p++) {
			const struct sm_port *port = &node->ports[p];
			struct sm_seen_link l;
			uint64_t peer;

			if (port->peer == UINT32_MAX)
				continue;
			peer = sm->nodes[port->peer].ni.node_guid;
			/* Each cable once: from its lower end. */
			if (peer < node->ni.node_guid ||
			    (peer == node->ni.node_guid && port->peer_port < p))
				continue;
			l = (struct sm_seen_link){
				{node->ni.node_guid, peer},
				{(uint8_t)p, port->peer_port}};
			links[nlinks++] = l;
		}
	}
	qsort(nodes, sm->nnodes, sizeof(*nodes), node_cmp);
	qsort(links, nlinks, sizeof(*links), link_cmp);
	*nodes_out = nodes;
	*links_out = links;
	*nlinks_out = nlinks;
	return 0;
}

int sm_changes_update(struct sm *sm)
{
	struct sm_changes *c = &sm->changes;
	struct sm_seen_node *nodes;
	struct sm_seen_link *links;
	uint32_t nlinks, i = 0, j = 0;
	int ret, cmp, first = !c->sweep;

	ret = collect(sm, &nodes, &links, &nlinks);
	if (ret)
		return ret;
	snprintf(c->why, sizeof(c->why), "%s", sm->last.why);
	c->at = sm->last.at;
	c->sweep = sm->heavy_sweeps;
	c->nodes_added = c->nodes_removed = 0;
	c->links_added = c->links_removed = 0;
	/* The first sweep finds everything: counted, but not named. */
	c->nlisted = first ? SM_CHANGES_LISTED : 0;
	/* Both lists sorted: one merge tells what each has alone. */
	while (i < c->nnodes || j < sm->nnodes) {
		cmp = i == c->nnodes	? 1
		      : j == sm->nnodes ? -1
					: node_cmp(&c->nodes[i], &nodes[j]);
		if (cmp < 0) {
			c->nodes_removed++;
			list_node(c, '-', &c->nodes[i++]);
		} else if (cmp > 0) {
			c->nodes_added++;
			list_node(c, '+', &nodes[j++]);
		} else {
			i++;
			j++;
		}
	}
	for (i = j = 0; i < c->nlinks || j < nlinks;) {
		cmp = i == c->nlinks ? 1
		      : j == nlinks  ? -1
				     : link_cmp(&c->links[i], &links[j]);
		if (cmp < 0) {
			c->links_removed++;
			list_link(c, '-', &c->links[i++], c->nodes, c->nnodes);
		} else if (cmp > 0) {
			c->links_added++;
			list_link(c, '+', &links[j++], nodes, sm->nnodes);
		} else {
			i++;
			j++;
		}
	}
	if (first)
		c->nlisted = 0;
	free(c->nodes);
	free(c->links);
	c->nodes = nodes;
	c->nnodes = sm->nnodes;
	c->links = links;
	c->nlinks = nlinks;
	return 0;
}

void sm_changes_free(struct sm *sm)
{
	free(sm->changes.nodes);
	free(sm->changes.links);
	sm->changes.nodes = NULL;
	sm->changes.links = NULL;
	sm->changes.nnodes = sm->changes.nlinks = 0;
}
