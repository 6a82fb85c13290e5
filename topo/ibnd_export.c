// SPDX-License-Identifier: MIT
/*
 * Export of a topology as ibnetdiscover prints a fabric, so that ibsim and
 * the ibnetdiscover importer read it back. Node names are the quoted ids
 * (ibnetdiscover writes "S-<guid>" there) so that names survive; LIDs are
 * 0 since no subnet manager has run on a topology.
 */
#include <inttypes.h>

#include "ibnd.h"
#include "util.h"

/*
 * Appends a description inside quotes. A line feed would end the line; in a
 * port line's comment ibsim reads '=' as a port option and stops at a
 * quote. The header's copy is the one that is read back (up to its last
 * quote), so only the comment's copy ('peer') loses those characters.
 */
static void put_desc(struct ibemu_buf *out, const char *desc, int peer)
{
	const char *p;

	ibemu_buf_puts(out, "\"");
	for (p = desc; *p; p++) {
		char c = *p;

		if (c == '\n' || (peer && (c == '"' || c == '=')))
			c = ' ';
		ibemu_buf_append(out, &c, 1);
	}
	ibemu_buf_puts(out, "\"");
}

static uint64_t port_guid(const struct ibemu_topo_node *n, unsigned p)
{
	if (n->ports[p].guid)
		return n->ports[p].guid;
	return n->type == IBEMU_NODE_SWITCH ? n->guid : n->guid + p;
}

static void export_port(const struct ibemu_topo *t,
			const struct ibemu_topo_node *n, unsigned p,
			struct ibemu_buf *out)
{
	const struct ibemu_topo_port *port = &n->ports[p];
	const struct ibemu_topo_node *peer = &t->nodes[port->peer_node];
	unsigned width = t->defaults.width;
	enum ibemu_speed speed = t->defaults.speed;

	if (port->link != IBEMU_NONE) {
		width = t->links[port->link].width;
		speed = t->links[port->link].speed;
	}
	/* ibnetdiscover gives port GUIDs of CAs only: switch ports have none. */
	if (n->type == IBEMU_NODE_SWITCH)
		ibemu_buf_printf(out, "[%u]\t\"%s\"[%u]", p, peer->name,
				 port->peer_port);
	else
		ibemu_buf_printf(out, "[%u](%" PRIx64 ") \t\"%s\"[%u]", p,
				 port_guid(n, p), peer->name, port->peer_port);
	if (peer->type == IBEMU_NODE_HCA)
		ibemu_buf_printf(out, "%s(%" PRIx64 ") ",
				 n->type == IBEMU_NODE_SWITCH ? "" : " ",
				 port_guid(peer, port->peer_port));
	ibemu_buf_puts(out, n->type == IBEMU_NODE_SWITCH
				    ? "\t\t# "
				    : "\t\t# lid 0 lmc 0 ");
	put_desc(out, peer->desc, 1);
	ibemu_buf_printf(out, " lid 0 %ux%s\n", width, ibemu_speed_name(speed));
}

static void export_node(const struct ibemu_topo *t, uint32_t i,
			struct ibemu_buf *out)
{
	const struct ibemu_topo_node *n = &t->nodes[i];
	unsigned p;

	ibemu_buf_printf(out, "\nvendid=0x%x\ndevid=0x%x\n", n->vendor_id,
			 n->device_id);
	if (n->sysimage_guid)
		ibemu_buf_printf(out, "sysimgguid=0x%" PRIx64 "\n",
				 n->sysimage_guid);
	if (n->type == IBEMU_NODE_SWITCH) {
		ibemu_buf_printf(out,
				 "switchguid=0x%" PRIx64 "(%" PRIx64 ")\n"
				 "Switch\t%u \"%s\"\t\t# ",
				 n->guid, port_guid(n, 0), n->nports, n->name);
		put_desc(out, n->desc, 0);
		ibemu_buf_puts(out, " enhanced port 0 lid 0 lmc 0\n");
	} else {
		ibemu_buf_printf(out,
				 "caguid=0x%" PRIx64 "\nCa\t%u \"%s\"\t\t# ",
				 n->guid, n->nports, n->name);
		put_desc(out, n->desc, 0);
		ibemu_buf_puts(out, "\n");
	}
	for (p = 1; p <= n->nports; p++)
		if (n->ports[p].peer_node != IBEMU_NONE)
			export_port(t, n, p, out);
}

void ibemu_ibnd_export(const struct ibemu_topo *t, struct ibemu_buf *out)
{
	uint32_t switches, hcas, i;

	ibemu_topo_count(t, &switches, &hcas);
	ibemu_buf_printf(out,
			 "#\n# Topology file: fabric \"%s\", written by ibemu\n"
			 "# %u switches, %u HCAs, %u links\n#\n",
			 t->name ? t->name : "", switches, hcas, t->nlinks);
	for (i = 0; i < t->nnodes; i++)
		export_node(t, i, out);
}
