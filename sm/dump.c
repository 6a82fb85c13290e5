// SPDX-License-Identifier: MIT
/*
 * OpenSM's dump files (--dump-dir DIR), written after every heavy sweep
 * that brought the subnet up, so that the outputs of ibemu-sm and of
 * OpenSM 3.3 compare file against file:
 *   opensm-lfts.dump   each switch's LFT, as OpenSM's dump_ucast_lfts()
 *                      writes it (OpenSM writes it with OSM_LOG_ROUTING);
 *   opensm-subnet.lst  one line per port with a link, both ends, as its
 *                      dump_topology_node() writes it;
 *   guid2lid           the LIDs, as guid2lid.c writes them.
 * The lines reproduce OpenSM's, quirks included: nodes come in the order
 * of OpenSM's maps, keyed by the GUID in network byte order and compared
 * as a host integer (on little-endian hosts: by the byte-reversed GUID),
 * and the far end's DevID prints a 16-bit field swapped as 32 bits.
 */
#include <byteswap.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm.h"
#include "util.h"

#define NODE_TYPE_CA	 1 /* IBA 14.2.5.3 NodeInfo NodeType */
#define NODE_TYPE_SWITCH 2
#define NODE_TYPE_ROUTER 3
/* IBA 14.2.5.6 PortInfo: CapabilityMask IsExtendedSpeedsSupported,
 * CapabilityMask2 IsLinkWidth2XSupported. */
#define CAP_EXT_SPEEDS 0x4000u
#define CAP2_WIDTH_2X  0x0010u

/* OpenSM's map key order: the network-order GUID as a host integer. */
static uint64_t map_key(uint64_t guid)
{
	return __BYTE_ORDER == __LITTLE_ENDIAN ? bswap_64(guid) : guid;
}

/* The 16-bit DevID as OpenSM prints the far end's: through ntoh32. */
static uint32_t devid_quirk(uint16_t devid)
{
	uint16_t net = htobe16(devid);

	return be32toh((uint32_t)net);
}

/* NodeDescription as OpenSM prints it: 63 bytes, non-printing as ' '. */
static void print_desc(const struct sm_node *node, char *out)
{
	size_t i;

	memcpy(out, node->nd.str, IBEMU_MAD_NODE_DESC_LEN);
	out[IBEMU_MAD_NODE_DESC_LEN - 1] = '\0';
	for (i = 0; out[i]; i++)
		if (!isprint((unsigned char)out[i]))
			out[i] = ' ';
}

static const char *type_name(uint8_t type)
{
	switch (type) {
	case NODE_TYPE_CA:
		return "Channel Adapter";
	case NODE_TYPE_SWITCH:
		return "Switch";
	case NODE_TYPE_ROUTER:
		return "Router";
	default:
		return "UNKNOWN";
	}
}

struct keyed {
	uint64_t key;
	uint32_t n;
};

static int key_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* The nodes' indices in OpenSM's map order; NULL if out of memory. */
static uint32_t *map_order(const struct sm *sm)
{
	uint32_t *order = calloc(sm->nnodes ? sm->nnodes : 1, sizeof(*order));
	struct keyed *k = calloc(sm->nnodes ? sm->nnodes : 1, sizeof(*k));
	uint32_t n;

	if (!order || !k) {
		free(order);
		free(k);
		return NULL;
	}
	for (n = 0; n < sm->nnodes; n++)
		k[n] = (struct keyed){map_key(sm->nodes[n].ni.node_guid), n};
	qsort(k, sm->nnodes, sizeof(*k), key_cmp);
	for (n = 0; n < sm->nnodes; n++)
		order[n] = k[n].n;
	free(k);
	return order;
}

/* The LID of port 'port' of node 'n' (a switch's is its port 0's). */
static uint16_t lid_of(const struct sm *sm, uint32_t n, unsigned port)
{
	const struct sm_node *node = &sm->nodes[n];

	return ibemu_routes_lid(sm->routes, node->graph,
				node->ni.node_type == NODE_TYPE_SWITCH ? 0
								       : port);
}

/* The port GUID of port 'port' of node 'n': a switch has one. */
static uint64_t port_guid_of(const struct sm *sm, uint32_t n, unsigned port)
{
	const struct sm_node *node = &sm->nodes[n];

	return node->ni.node_type == NODE_TYPE_SWITCH ? node->ni.port_guid
						      : node->ports[port].guid;
}

static void dump_lft(const struct sm *sm, uint32_t n, FILE *f)
{
	const struct sm_node *sw = &sm->nodes[n];
	const uint8_t *lft = sm->routes->lft[sw->graph];
	char desc[IBEMU_MAD_NODE_DESC_LEN];
	unsigned lid, max_lid = sm->routes->max_lid;

	print_desc(sw, desc);
	fprintf(f,
		"Unicast lids [0-%u] of switch Lid %u guid 0x%016" PRIx64
		" ('%s'):\n",
		max_lid, lid_of(sm, n, 0), sw->ni.node_guid, desc);
	for (lid = 0; lid <= max_lid; lid++) {
		uint32_t owner = sm->routes->lid_node[lid];

		/* OpenSM skips entries past the switch's ports (no route). */
		if (!lft || lft[lid] > sw->ni.num_ports)
			continue;
		fprintf(f, "0x%04x %03u # ", lid, lft[lid]);
		if (owner == IBEMU_NONE) {
			fprintf(f, "unknown node and type\n");
			continue;
		}
		owner = sm->by_graph[owner];
		print_desc(&sm->nodes[owner], desc);
		fprintf(f, "%s portguid 0x%016" PRIx64 ": '%s'\n",
			type_name(sm->nodes[owner].ni.node_type),
			port_guid_of(sm, owner, sm->routes->lid_port[lid]),
			desc);
	}
	fprintf(f, "%u lids dumped\n", max_lid);
}

static const char *short_type(uint8_t type)
{
	return type == NODE_TYPE_SWITCH	  ? "SW"
	       : type == NODE_TYPE_CA	  ? "CA"
	       : type == NODE_TYPE_ROUTER ? "Rt"
					  : "**";
}

/* The PortInfo OpenSM reads a node's LID and capabilities from. */
static const struct ibemu_mad_port_info *default_pi(const struct sm_node *node,
						    unsigned port)
{
	return &node->ports[node->ni.node_type == NODE_TYPE_SWITCH ? 0 : port]
			.pi;
}

/* One end of a link: "{ SW-SM Ports:.. ... LID:.. PN:.. } ". */
static void end(const struct sm *sm, uint32_t n, unsigned port, int far,
		FILE *f)
{
	const struct sm_node *node = &sm->nodes[n];
	char desc[IBEMU_MAD_NODE_DESC_LEN];
	uint16_t lid = lid_of(sm, n, port);

	print_desc(node, desc);
	fprintf(f,
		"{ %s%s Ports:%02X SystemGUID:%016" PRIx64
		" NodeGUID:%016" PRIx64 " PortGUID:%016" PRIx64,
		short_type(node->ni.node_type), lid == sm->sm_lid ? "-SM" : "",
		node->ni.num_ports, node->ni.system_image_guid,
		node->ni.node_guid, port_guid_of(sm, n, port));
	if (far)
		fprintf(f, " VenID:%08X DevID:%04X", node->ni.vendor_id,
			devid_quirk(node->ni.device_id));
	else
		fprintf(f, " VenID:%06X DevID:%04X", node->ni.vendor_id,
			node->ni.device_id);
	fprintf(f, " Rev:%08X {%s} LID:%04X PN:%02X } ", node->ni.revision,
		desc, lid, port);
}

static const char *width_name(const struct ibemu_mad_port_info *pi,
			      const struct ibemu_mad_port_info *def)
{
	switch (pi->link_width_active) {
	case 1:
		return "1x";
	case 2:
		return "4x";
	case 4:
		return "8x";
	case 8:
		return "12x";
	case 16:
		return def->capability_mask2 & CAP2_WIDTH_2X ? "2x" : "??";
	default:
		return "??";
	}
}

static const char *speed_name(const struct ibemu_mad_port_info *pi,
			      const struct ibemu_mad_port_info *def)
{
	static const char *const names[] = {[1] = "2.5", [2] = "5", [4] = "10"};
	static const char *const ext[] = {[1] = "14", [2] = "25", [4] = "50"};
	const char *s = "??";

	if (pi->link_speed_active < 5 && names[pi->link_speed_active])
		s = names[pi->link_speed_active];
	if (def->capability_mask & CAP_EXT_SPEEDS && pi->link_speed_ext_active)
		s = pi->link_speed_ext_active < 5 &&
				    ext[pi->link_speed_ext_active]
			    ? ext[pi->link_speed_ext_active]
			    : "??";
	return s;
}

static const char *state_name(uint8_t state)
{
	/* IBA 14.2.5.6 PortState: 2 Init, 3 Armed, 4 Active. */
	return state == 4   ? "ACT"
	       : state == 3 ? "ARM"
	       : state == 2 ? "INI"
			    : "DWN";
}

static void dump_links(const struct sm *sm, uint32_t n, FILE *f)
{
	const struct sm_node *node = &sm->nodes[n];
	unsigned port;

	for (port = 1; port <= node->ni.num_ports; port++) {
		const struct sm_port *p = &node->ports[port];

		if (p->peer == UINT32_MAX)
			continue;
		end(sm, n, port, 0, f);
		end(sm, p->peer, p->peer_port, 1, f);
		fprintf(f, "PHY=%s LOG=%s SPD=%s\n",
			width_name(&p->pi, default_pi(node, port)),
			state_name(p->pi.port_state),
			speed_name(&p->pi, default_pi(node, port)));
	}
}

struct dump {
	const struct sm *sm;
	const uint32_t *order;
	int lfts;
};

static void dump_nodes(FILE *f, const void *arg)
{
	const struct dump *d = arg;
	const struct sm *sm = d->sm;
	uint32_t i;

	for (i = 0; i < sm->nnodes; i++) {
		if (!d->lfts)
			dump_links(sm, d->order[i], f);
		else if (sm->nodes[d->order[i]].ni.node_type ==
			 NODE_TYPE_SWITCH)
			dump_lft(sm, d->order[i], f);
	}
}

/* Writes 'name' in the dump directory, aside and renamed; 0 or -errno. */
static int dump_file(const struct sm *sm, const char *name,
		     const uint32_t *order, int lfts)
{
	struct dump d = {sm, order, lfts};
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", sm->dump_dir, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	return sm_file_write(path, dump_nodes, &d);
}

int sm_dump_write(const struct sm *sm)
{
	char path[4096];
	uint32_t *order;
	int ret;

	if (!sm->dump_dir || !sm->routes)
		return 0;
	order = map_order(sm);
	if (!order)
		return -ENOMEM;
	ret = dump_file(sm, "opensm-lfts.dump", order, 1);
	if (!ret)
		ret = dump_file(sm, "opensm-subnet.lst", order, 0);
	free(order);
	if (!ret && (size_t)snprintf(path, sizeof(path), "%s/guid2lid",
				     sm->dump_dir) >= sizeof(path))
		ret = -ENAMETOOLONG;
	/* The same file as --guid2lid's when 'ibemu up' names both. */
	if (!ret && (!sm->guid2lid_path || strcmp(path, sm->guid2lid_path)))
		ret = sm_guid2lid_save(sm, path);
	return ret;
}
