// SPDX-License-Identifier: MIT
/*
 * Topology model: nodes with numbered ports and the cables between them.
 * Building it checks what can be checked locally (names, port ranges, ports
 * cabled twice); ibemu_topo_finalize() checks what needs the whole fabric.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "yaml_keys.h"
#include "util.h"

int ibemu_topo_create(struct ibemu_topo **out)
{
	struct ibemu_topo *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	/* The YAML key table states the defaults; the format documents them
	 * from there, and a topology built without a file has them too. */
	IBEMU_BUG_ON(ibemu__yaml_defaults_init(&t->defaults));
	ibemu_cc_policy_default(&t->cc);
	ibemu_strmap_init(&t->by_name);
	*out = t;
	return 0;
}

void ibemu_topo_destroy(struct ibemu_topo *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].desc);
		free(t->nodes[i].ports);
	}
	free(t->nodes);
	free(t->links);
	ibemu_strmap_fini(&t->by_name);
	free(t->name);
	free(t->source);
	free(t);
}

int ibemu_topo_set_name(struct ibemu_topo *t, const char *name)
{
	char *s = strdup(name);

	if (!s)
		return -ENOMEM;
	free(t->name);
	t->name = s;
	return 0;
}

int ibemu_name_valid(const char *name)
{
	const char *p;

	if (!*name || strlen(name) > 63)
		return 0;
	for (p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.' || c == '+'))
			return 0;
	}
	return 1;
}

int ibemu_topo_add_node(struct ibemu_topo *t, enum ibemu_node_type type,
			const char *name, unsigned nports, uint32_t *idx)
{
	struct ibemu_topo_node *n;
	unsigned i;
	int ret;

	if (!ibemu_name_valid(name) || nports < 1 || nports > IBEMU_MAX_PORTS)
		return -EINVAL;
	if (ibemu_topo_find(t, name) != IBEMU_NONE)
		return -EEXIST;
	ret = ibemu_array_grow((void **)&t->nodes, &t->nodes_cap, t->nnodes + 1,
			       sizeof(*t->nodes));
	if (ret)
		return ret;
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->name = strdup(name);
	n->desc = strdup(name);
	n->ports = calloc(nports + 1, sizeof(*n->ports));
	if (!n->name || !n->desc || !n->ports)
		goto err_free;
	for (i = 0; i <= nports; i++) {
		n->ports[i].peer_node = IBEMU_NONE;
		n->ports[i].link = IBEMU_NONE;
	}
	n->nports = (uint8_t)nports;
	n->vendor_id = IBEMU_OUI;
	n->device_id = type == IBEMU_NODE_SWITCH ? IBEMU_DEVICE_SWITCH
						 : IBEMU_DEVICE_HCA;
	n->vls = t->defaults.vls;
	n->buffer_per_vl = t->defaults.buffer_per_vl;
	n->routing_latency_ps = t->defaults.routing_latency_ps;
	n->hca_model = t->defaults.hca_model;
	/* Node pointers move when the array grows; the map keys move too. */
	if (ibemu_strmap_insert(&t->by_name, n->name, t->nnodes))
		goto err_free;
	if (idx)
		*idx = t->nnodes;
	t->nnodes++;
	return 0;

err_free:
	free(n->name);
	free(n->desc);
	free(n->ports);
	return -ENOMEM;
}

uint32_t ibemu_topo_find(const struct ibemu_topo *t, const char *name)
{
	return ibemu_strmap_get(&t->by_name, name);
}

int ibemu_topo_set_desc(struct ibemu_topo *t, uint32_t node, const char *desc)
{
	char *s;

	if (strlen(desc) > IBEMU_NODEDESC_MAX)
		return -EINVAL;
	s = strdup(desc);
	if (!s)
		return -ENOMEM;
	free(t->nodes[node].desc);
	t->nodes[node].desc = s;
	return 0;
}

void ibemu_topo_link_set_length(struct ibemu_topo_link *l, uint32_t mm)
{
	l->length_mm = mm;
	l->latency_ps = (uint64_t)mm * IBEMU_CABLE_PS_PER_M / 1000u;
}

int ibemu_topo_connect(struct ibemu_topo *t, uint32_t a, unsigned ap,
		       uint32_t b, unsigned bp, uint32_t *link)
{
	struct ibemu_topo_node *na = &t->nodes[a], *nb = &t->nodes[b];
	struct ibemu_topo_link *l;
	int ret;

	IBEMU_BUG_ON(a >= t->nnodes || b >= t->nnodes);
	if (ap < 1 || ap > na->nports || bp < 1 || bp > nb->nports)
		return -ERANGE;
	if (a == b && ap == bp)
		return -EINVAL;
	if (na->ports[ap].peer_node != IBEMU_NONE ||
	    nb->ports[bp].peer_node != IBEMU_NONE)
		return -EBUSY;
	ret = ibemu_array_grow((void **)&t->links, &t->links_cap, t->nlinks + 1,
			       sizeof(*t->links));
	if (ret)
		return ret;
	l = &t->links[t->nlinks];
	memset(l, 0, sizeof(*l));
	l->node[0] = a;
	l->port[0] = (uint8_t)ap;
	l->node[1] = b;
	l->port[1] = (uint8_t)bp;
	l->width = t->defaults.width;
	l->speed = t->defaults.speed;
	ibemu_topo_link_set_length(l, t->defaults.cable_length_mm);
	na->ports[ap].peer_node = b;
	na->ports[ap].peer_port = (uint8_t)bp;
	na->ports[ap].link = t->nlinks;
	nb->ports[bp].peer_node = a;
	nb->ports[bp].peer_port = (uint8_t)ap;
	nb->ports[bp].link = t->nlinks;
	if (link)
		*link = t->nlinks;
	t->nlinks++;
	return 0;
}

uint64_t ibemu_topo_derive_guid(const char *name)
{
	/* OUI in the top 24 bits, 32 bits of name hash, 8 bits for ports. */
	uint64_t h = ibemu_hash_fnv1a(name, strlen(name));

	h = (h ^ (h >> 32)) & 0xffffffffull;
	return ((uint64_t)IBEMU_OUI << 40) | (h << 8);
}

uint64_t ibemu_routing_latency_default_ps(enum ibemu_speed speed)
{
	/* Port-to-port latency of the switch ASICs of each generation. */
	switch (speed) {
	case IBEMU_SPEED_SDR:
	case IBEMU_SPEED_DDR:
		return 200000;
	case IBEMU_SPEED_QDR:
		return 100000;
	case IBEMU_SPEED_FDR10:
	case IBEMU_SPEED_FDR:
		return 170000;
	case IBEMU_SPEED_EDR:
		return 90000;
	default:
		return 130000;
	}
}

void ibemu_topo_count(const struct ibemu_topo *t, uint32_t *switches,
		      uint32_t *hcas)
{
	uint32_t i, s = 0;

	for (i = 0; i < t->nnodes; i++)
		s += t->nodes[i].type == IBEMU_NODE_SWITCH;
	*switches = s;
	*hcas = t->nnodes - s;
}

/* A set of GUIDs, each remembering which node holds it. */
struct guid_set {
	struct {
		uint64_t guid;
		uint32_t node;
	} * slots;
	size_t cap;
};

static int guid_set_init(struct guid_set *s, size_t n)
{
	s->cap = 64;
	while (s->cap < n * 2)
		s->cap *= 2;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	return s->slots ? 0 : -ENOMEM;
}

/* Returns the node holding 'guid' already, or IBEMU_NONE after adding it. */
static uint32_t guid_set_add(struct guid_set *s, uint64_t guid, uint32_t node)
{
	size_t i = (size_t)(guid * 0x9e3779b97f4a7c15ull >> 20) & (s->cap - 1);

	while (s->slots[i].guid) {
		if (s->slots[i].guid == guid)
			return s->slots[i].node;
		i = (i + 1) & (s->cap - 1);
	}
	s->slots[i].guid = guid;
	s->slots[i].node = node;
	return IBEMU_NONE;
}

static int guid_taken(struct guid_set *s, uint64_t guid)
{
	size_t i = (size_t)(guid * 0x9e3779b97f4a7c15ull >> 20) & (s->cap - 1);

	while (s->slots[i].guid) {
		if (s->slots[i].guid == guid)
			return 1;
		i = (i + 1) & (s->cap - 1);
	}
	return 0;
}

static uint64_t port_guid(const struct ibemu_topo_node *n, unsigned port)
{
	if (n->ports[port].guid)
		return n->ports[port].guid;
	return n->type == IBEMU_NODE_SWITCH ? n->guid : n->guid + port;
}

/* Claims the node GUID and port GUIDs of node 'i'; reports a clash. */
static int claim_guids(struct ibemu_topo *t, struct guid_set *set, uint32_t i,
		       struct ibemu_diag *d)
{
	struct ibemu_topo_node *n = &t->nodes[i];
	const struct ibemu_loc *loc = n->guid_loc.line ? &n->guid_loc : &n->loc;
	unsigned p, first = n->type == IBEMU_NODE_SWITCH ? 0 : 1;
	uint32_t other;

	other = guid_set_add(set, n->guid, i);
	if (other != IBEMU_NONE)
		goto clash;
	for (p = first; p <= n->nports; p++) {
		uint64_t g = port_guid(n, p);

		n->ports[p].guid = g;
		if (g == n->guid)
			continue;
		other = guid_set_add(set, g, i);
		if (other != IBEMU_NONE)
			goto clash;
	}
	return 0;

clash:
	return ibemu_diag_error(
		d, loc,
		"duplicate GUID: node '%s' uses a GUID of node '%s'"
		" (GUIDs must be unique in a fabric)",
		n->name, t->nodes[other].name);
}

/* A derived GUID and its port GUIDs must all be free; try again if not. */
static uint64_t derive_free_guid(struct guid_set *set,
				 const struct ibemu_topo_node *n)
{
	char salted[IBEMU_NODEDESC_MAX + 16];
	uint64_t g = ibemu_topo_derive_guid(n->name);
	unsigned salt = 0, p;

	for (;;) {
		int free_ = !guid_taken(set, g);

		for (p = 1;
		     free_ && n->type == IBEMU_NODE_HCA && p <= n->nports; p++)
			free_ = !guid_taken(set, g + p);
		if (free_)
			return g;
		snprintf(salted, sizeof(salted), "%s#%u", n->name, ++salt);
		g = ibemu_topo_derive_guid(salted);
	}
}

static void check_connected(struct ibemu_topo *t, struct ibemu_diag *d)
{
	uint32_t *queue, head = 0, tail = 0, i, reached = 0;
	uint8_t *seen;

	if (t->nnodes < 2)
		return;
	queue = malloc(t->nnodes * sizeof(*queue));
	seen = calloc(t->nnodes, 1);
	if (!queue || !seen)
		goto out;
	seen[0] = 1;
	queue[tail++] = 0;
	while (head < tail) {
		const struct ibemu_topo_node *n = &t->nodes[queue[head++]];
		unsigned p;

		reached++;
		for (p = 1; p <= n->nports; p++) {
			uint32_t peer = n->ports[p].peer_node;

			if (peer != IBEMU_NONE && !seen[peer]) {
				seen[peer] = 1;
				queue[tail++] = peer;
			}
		}
	}
	for (i = 0; i < t->nnodes && reached < t->nnodes; i++) {
		if (!seen[i]) {
			ibemu_diag_warn(
				d, &t->nodes[i].loc,
				"fabric is not connected: %u of %u nodes"
				" cannot be reached from '%s', '%s' "
				"among them",
				t->nnodes - reached, t->nnodes,
				t->nodes[0].name, t->nodes[i].name);
			break;
		}
	}
out:
	free(queue);
	free(seen);
}

/*
 * The LIDs the fabric needs must exist: the same check for every file, so
 * 'topo check' refuses what 'up' would. Reported at the first node past
 * the limit.
 */
static int check_lids(const struct ibemu_topo *t, struct ibemu_diag *d)
{
	uint64_t total = 0;
	uint32_t i, first = IBEMU_NONE;

	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		total += n->type == IBEMU_NODE_SWITCH ? 1 : n->nports;
		if (total > IBEMU_MAX_LIDS && first == IBEMU_NONE)
			first = i;
	}
	if (first == IBEMU_NONE)
		return 0;
	return ibemu_diag_error(
		d, &t->nodes[first].loc,
		"the fabric needs %llu LIDs (one per switch and one per HCA "
		"port), more than the %u unicast LIDs (IBA 4.1.3); node '%s' "
		"is the first without one",
		(unsigned long long)total, IBEMU_MAX_LIDS,
		t->nodes[first].name);
}

enum ibemu_hca_kind ibemu_topo_hca_kind(const struct ibemu_topo *t,
					uint32_t node)
{
	const struct ibemu_topo_node *n = &t->nodes[node];
	enum ibemu_speed speed = t->defaults.speed;

	if (n->hca_model != IBEMU_HCA_AUTO)
		return n->hca_model;
	if (n->nports && n->ports[1].link != IBEMU_NONE)
		speed = t->links[n->ports[1].link].speed;
	return ibemu_hca_kind_for_speed(speed);
}

/* An HCA of a ConnectX preset that was given no DeviceID reports its
 * adapter's, as the hardware would. */
static void preset_device_ids(struct ibemu_topo *t)
{
	uint32_t i;
	unsigned id;

	for (i = 0; i < t->nnodes; i++) {
		struct ibemu_topo_node *n = &t->nodes[i];

		if (n->type != IBEMU_NODE_HCA ||
		    n->device_id != IBEMU_DEVICE_HCA)
			continue;
		id = ibemu_hca_kind_device_id(ibemu_topo_hca_kind(t, i));
		if (id)
			n->device_id = (uint16_t)id;
	}
}

struct port_ip {
	uint32_t ip;
	uint32_t node;
	unsigned port;
};

static int port_ip_cmp(const void *a, const void *b)
{
	const struct port_ip *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->node != y->node ? (x->node < y->node ? -1 : 1) : 0;
}

static int ip_clash(const struct ibemu_topo *t, const struct port_ip *a,
		    const struct port_ip *b, struct ibemu_diag *d)
{
	const struct ibemu_topo_node *na = &t->nodes[a->node];
	const struct ibemu_topo_node *nb = &t->nodes[b->node];
	const struct ibemu_loc *loc = nb->ip_loc.line ? &nb->ip_loc : &nb->loc;

	return ibemu_diag_error(
		d, loc,
		"ip %u.%u.%u.%u of '%s' port %u is also that of '%s' port "
		"%u%s, "
		"expected an address unique in the fabric",
		b->ip >> 24, (b->ip >> 16) & 0xff, (b->ip >> 8) & 0xff,
		b->ip & 0xff, nb->name, b->port, na->name, a->port,
		na->ip_loc.line ? " (given)" : " (by the address plan)");
}

/*
 * Gives every HCA without ip: its address by the plan (topo.h), then
 * checks that no two HCA ports share one.
 */
static int assign_ips(struct ibemu_topo *t, struct ibemu_diag *d)
{
	struct port_ip *all;
	uint32_t i, hca = 0;
	size_t n = 0, k;
	int ret = 0;

	for (i = 0; i < t->nnodes; i++) {
		struct ibemu_topo_node *nd = &t->nodes[i];

		if (nd->type != IBEMU_NODE_HCA)
			continue;
		if (!nd->ip)
			nd->ip = IBEMU_TOPO_IP_PLAN_BASE +
				 IBEMU_TOPO_IP_PLAN_STEP * hca + 1;
		hca++;
		n += nd->nports;
	}
	if (!n)
		return 0;
	all = calloc(n, sizeof(*all));
	if (!all)
		return ibemu_diag_error(d, NULL, "out of memory");
	for (i = 0, k = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *nd = &t->nodes[i];
		unsigned p;

		for (p = 1; nd->type == IBEMU_NODE_HCA && p <= nd->nports; p++)
			all[k++] = (struct port_ip){ibemu_topo_port_ip(nd, p),
						    i, p};
	}
	qsort(all, n, sizeof(*all), port_ip_cmp);
	for (k = 1; k < n && !ret; k++)
		if (all[k].ip == all[k - 1].ip)
			ret = ip_clash(t, &all[k - 1], &all[k], d);
	free(all);
	return ret;
}

int ibemu_topo_finalize(struct ibemu_topo *t, struct ibemu_diag *d)
{
	size_t nguids = 0;
	struct guid_set set;
	uint32_t i;
	int ret;

	ret = check_lids(t, d);
	if (ret)
		return ret;
	preset_device_ids(t);
	ret = assign_ips(t, d);
	if (ret)
		return ret;

	/* Each node claims its GUID and, on an HCA, one per port. */
	for (i = 0; i < t->nnodes; i++)
		nguids += 2u + t->nodes[i].nports;
	ret = guid_set_init(&set, nguids);
	if (ret)
		return ibemu_diag_error(d, NULL, "out of memory");
	/* Given GUIDs first: a derived GUID must never steal one of them. */
	for (i = 0; i < t->nnodes; i++) {
		if (!t->nodes[i].guid)
			continue;
		ret = claim_guids(t, &set, i, d);
		if (ret)
			goto out;
	}
	for (i = 0; i < t->nnodes; i++) {
		struct ibemu_topo_node *n = &t->nodes[i];

		if (n->guid)
			continue;
		n->guid = derive_free_guid(&set, n);
		ret = claim_guids(t, &set, i, d);
		if (ret)
			goto out;
	}
	for (i = 0; i < t->nnodes; i++)
		if (!t->nodes[i].sysimage_guid)
			t->nodes[i].sysimage_guid = t->nodes[i].guid;
	check_connected(t, d);
out:
	free(set.slots);
	return ret;
}
