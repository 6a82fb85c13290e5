// SPDX-License-Identifier: MIT
/*
 * 'ibemu route SRC DST': the path a packet from HCA port SRC to DST takes,
 * hop by hop, read from the LFTs the engine forwards with (whoever wrote
 * them: test routes or a subnet manager through SMPs). It stops where a
 * real packet would: a missing LFT entry, a port that is not Active, a
 * loop, or the wrong destination, and says which.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_commands.h"
#include "daemon.h"
#include "table.h"

/* Resolves NODE[:PORT] (port 1 by default) to a cabled port. */
static int parse_port(struct ibemu_ctl_call *call, const char *text,
		      uint32_t *node, unsigned *port)
{
	const struct ibemu_topo *t = call->d->topo;
	char name[128];
	char *colon, *end;
	unsigned long p = 1;

	snprintf(name, sizeof(name), "%s", text);
	colon = strrchr(name, ':');
	if (colon) {
		*colon = '\0';
		p = strtoul(colon + 1, &end, 10);
		if (*end || colon[1] == '\0')
			p = 0;
	}
	*node = ibemu_topo_find(t, name);
	/* A name that does not exist is a failure, as for 'ibemu ports'. */
	if (*node == IBEMU_NONE) {
		ibemu_buf_printf(call->err,
				 "route: no node named '%s' in fabric '%s'",
				 name, t->name);
		return 1;
	}
	if (p == 0 || p > t->nodes[*node].nports) {
		ibemu_buf_printf(call->err,
				 "route: '%s' is not a port of fabric '%s' "
				 "(expected NODE or NODE:PORT, ports 1..%u)",
				 text, t->name, t->nodes[*node].nports);
		return 2;
	}
	*port = (unsigned)p;
	return 0;
}

static const struct ibemu_opt route_table[] = {
	{.name = "json",
	 .type = IBEMU_OPT_FLAG,
	 .help = "print JSON instead of an aligned table"},
};

const struct ibemu_opt_cmd ibemu__route_opts = {
	.name = "route",
	.opts = route_table,
	.nopts = IBEMU_ARRAY_SIZE(route_table),
	.args = "SRC DST",
	.max_args = 2,
};

struct route_walk {
	struct ibemu_table t;
	int rows; /* fill the table; 0: only find where it stops */
	unsigned hops;
	const char *stop; /* why the walk ended early, or NULL */
	uint32_t at_node; /* the last hop's node and port (out, else in) */
	unsigned at_port;
};

static void hop_row(struct route_walk *w, const struct ibemu_daemon *d,
		    uint32_t node, unsigned in, unsigned out)
{
	const struct ibemu_topo_node *n = &d->topo->nodes[node];

	w->at_node = node;
	w->at_port = out ? out : in;
	if (!w->rows)
		return;
	ibemu_table_row(&w->t);
	ibemu_table_uint(&w->t, w->hops);
	ibemu_table_str(&w->t, n->name);
	ibemu_table_str(&w->t, n->type == IBEMU_NODE_SWITCH ? "switch" : "hca");
	if (in)
		ibemu_table_uint(&w->t, in);
	else
		ibemu_table_null(&w->t);
	if (out)
		ibemu_table_uint(&w->t, out);
	else
		ibemu_table_null(&w->t);
	ibemu_table_uint(&w->t,
			 ibemu_engine_get_lid(d->engine, node, out ? out : in));
}

/* Follows the LFTs from (node, port) to 'dlid'; fills w. */
static void walk(struct route_walk *w, const struct ibemu_daemon *d,
		 uint32_t node, unsigned port, uint16_t dlid, uint32_t dst,
		 unsigned dst_port)
{
	const struct ibemu_topo *t = d->topo;
	const struct ibemu_engine *e = d->engine;
	unsigned in = 0, out = port;
	uint8_t lft_port;

	for (;;) {
		const struct ibemu_topo_port *tp;
		uint32_t pi = ibemu_engine_port_index(e, node, out);

		hop_row(w, d, node, in, out);
		if (ibemu_engine_port_state(e, pi) != IBEMU_PORT_ACTIVE) {
			w->stop = "the output port is not Active: data "
				  "packets are discarded";
			return;
		}
		tp = &t->nodes[node].ports[out];
		node = tp->peer_node;
		in = tp->peer_port;
		w->hops++;
		if (t->nodes[node].type != IBEMU_NODE_SWITCH)
			break;
		if (w->hops > t->nnodes) {
			w->stop = "the path loops";
			return;
		}
		if (ibemu_engine_get_lft(e, node, dlid, &lft_port) ||
		    lft_port == 0xff || lft_port == 0 ||
		    (out = lft_port) > t->nodes[node].nports ||
		    t->nodes[node].ports[out].link == IBEMU_NONE) {
			hop_row(w, d, node, in, 0);
			w->stop = "no LFT entry for the destination LID: "
				  "the packet is discarded";
			return;
		}
	}
	hop_row(w, d, node, in, 0);
	if (node != dst || in != dst_port)
		w->stop = "the LFTs lead to another HCA port";
}

const char *ibemu__route_stop(const struct ibemu_daemon *d, uint32_t src,
			      unsigned sp, uint32_t dst, unsigned dp,
			      uint32_t *at_node, unsigned *at_port)
{
	struct route_walk w = {0};
	uint16_t dlid = ibemu_engine_get_lid(d->engine, dst, dp);

	*at_node = dst;
	*at_port = dp;
	if (!dlid)
		return "the destination has no LID";
	walk(&w, d, src, sp, dlid, dst, dp);
	*at_node = w.at_node;
	*at_port = w.at_port;
	return w.stop;
}

int ibemu__serve_route(struct ibemu_ctl_call *call)
{
	static const struct ibemu_table_col cols[] = {
		{"hop", "HOP", 1},	{"node", "NODE", 0},
		{"type", "TYPE", 0},	{"in_port", "IN", 1},
		{"out_port", "OUT", 1}, {"lid", "LID", 1},
	};
	struct ibemu_daemon *d = call->d;
	struct ibemu_opt_val v[1];
	char *args[2] = {NULL, NULL};
	uint32_t src = 0, dst = 0;
	unsigned sp = 0, dp = 0;
	struct route_walk w = {0};
	uint16_t dlid;
	int nargs = 0, json, ret;

	ret = ibemu__ctl_parse(call, &ibemu__route_opts, v, args, &nargs, NULL);
	if (ret)
		return ret;
	json = (int)v[0].u;
	/* Names first: a node that does not exist says more than a count. */
	ret = nargs > 0 ? parse_port(call, args[0], &src, &sp) : 0;
	if (!ret && nargs > 1)
		ret = parse_port(call, args[1], &dst, &dp);
	if (ret)
		return ret;
	if (nargs != 2)
		goto usage;
	if (d->topo->nodes[src].type == IBEMU_NODE_SWITCH ||
	    d->topo->nodes[dst].type == IBEMU_NODE_SWITCH) {
		ibemu_buf_puts(call->err, "route: both ends must be HCA ports");
		return 2;
	}
	if (d->topo->nodes[src].ports[sp].link == IBEMU_NONE) {
		ibemu_buf_printf(call->err, "route: %s is not cabled", args[0]);
		return 1;
	}
	dlid = ibemu_engine_get_lid(d->engine, dst, dp);
	if (!dlid) {
		ibemu_buf_printf(call->err,
				 "route: %s has no LID: no subnet manager has "
				 "configured it",
				 args[1]);
		return 1;
	}
	ibemu_table_init(&w.t, "route", cols, IBEMU_ARRAY_SIZE(cols));
	w.rows = 1;
	walk(&w, d, src, sp, dlid, dst, dp);
	ibemu_table_render(&w.t, d->topo->name, json, call->out);
	ibemu_table_fini(&w.t);
	if (w.stop) {
		ibemu_buf_printf(call->err, "route: %s to LID %u: %s", args[0],
				 dlid, w.stop);
		return 1;
	}
	return 0;

usage:
	ibemu_buf_puts(call->err, "route: which ports? usage: ibemu route SRC "
				  "DST (NODE or NODE:PORT of two HCAs) "
				  "[--json]");
	return 2;
}
