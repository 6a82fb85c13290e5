// SPDX-License-Identifier: MIT
/*
 * Inspect commands served by the daemon: status, nodes, ports, links, and
 * the stop request behind 'ibemu down'. Each fills a table and lets it
 * render as text or JSON. Port states are the engine's (IBA 14.2.5.6
 * PortPhysicalState, PortState).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "ctl_commands.h"
#include "ctl_proto.h"
#include "daemon.h"
#include "table.h"

int ibemu__ctl_parse(struct ibemu_ctl_call *call,
		     const struct ibemu_opt_cmd *cmd,
		     struct ibemu_opt_val *vals, char **args, int *nargs,
		     int *variant)
{
	return ibemu_opt_parse(cmd, call->argc, call->argv, vals, args, nargs,
			       variant, call->err)
		       ? 2
		       : 0;
}

/* --json, which every inspect command takes, is option 0 of its table. */
#define OPT_JSON                                                 \
	{                                                        \
		.name = "json", .type = IBEMU_OPT_FLAG,          \
		.help = "print JSON instead of an aligned table" \
	}

static const struct ibemu_opt json_opts[] = {OPT_JSON};

static const struct ibemu_opt_cmd status_opts = {
	.name = "status",
	.opts = json_opts,
	.nopts = 1,
};

static const struct ibemu_opt_cmd links_opts = {
	.name = "links",
	.opts = json_opts,
	.nopts = 1,
};

static const struct ibemu_opt_cmd ports_opts = {
	.name = "ports",
	.opts = json_opts,
	.nopts = 1,
	.args = "[NODE]",
	.max_args = 1,
};

static const char *const node_types[] = {"switch", "hca", NULL};

static const struct ibemu_opt nodes_table[] = {
	OPT_JSON,
	{.name = "type",
	 .type = IBEMU_OPT_ENUM,
	 .values = node_types,
	 .def_help = "both",
	 .help = "list only the nodes of this type"},
};

static const struct ibemu_opt_cmd nodes_opts = {
	.name = "nodes",
	.opts = nodes_table,
	.nopts = IBEMU_ARRAY_SIZE(nodes_table),
};

static const struct ibemu_opt_cmd down_opts = {.name = "down"};

static const char *node_type_name(enum ibemu_node_type type)
{
	return type == IBEMU_NODE_SWITCH ? "switch" : "hca";
}

/* Data rate after encoding, in Gb/s (FDR's is not a whole number). */
static void rate_cell(struct ibemu_table *t, const struct ibemu_topo_link *l)
{
	ibemu_table_real(
		t, (double)ibemu_link_data_rate_bps(l->width, l->speed) / 1e9);
}

/* Where a subnet manager runs (holds a port's issm device), or null. */
static void sm_port_cell(struct ibemu_table *t, const struct ibemu_daemon *d)
{
	uint32_t pi = ibemu__sess_sm_port(d), node;
	unsigned port;
	char where[320];

	if (pi == IBEMU_NONE) {
		ibemu_table_null(t);
		return;
	}
	ibemu_engine_port_where(d->engine, pi, &node, &port);
	snprintf(where, sizeof(where), "%s:%u", d->topo->nodes[node].name,
		 port);
	ibemu_table_str(t, where);
}

/*
 * Who holds virtual time (the quiescence rule waits for a running verbs
 * process while the engine has events past its bound): "pid P (HCA)
 * since T (S s)", its pid and when it began; nulls when nobody does.
 */
static void time_holder_cells(struct ibemu_table *t, struct ibemu_daemon *d)
{
	uint64_t next = ibemu_engine_next_time(d->engine);
	char when[32] = "?", iso[40] = "?";
	uint32_t node;
	struct tm tm;
	double held_s;
	pid_t pid;

	/* What the pump noted may be stale: the holder must still hold. */
	if (!d->held.pid || next == UINT64_MAX || next < d->rule.last_horizon ||
	    ibemu__sess_holder(d, d->rule.last_horizon, &pid, &node) ||
	    pid != d->held.pid) {
		ibemu_table_null(t);
		ibemu_table_null(t);
		ibemu_table_null(t);
		return;
	}
	if (gmtime_r(&d->held.since.tv_sec, &tm)) {
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	held_s = (double)(uv_now(&d->loop) - d->held.since_ms) / 1000;
	ibemu_table_strf(t, "pid %ld (%s) since %s (%.1f s)", (long)pid,
			 d->topo->nodes[node].name, when, held_s);
	ibemu_table_uint(t, (uint64_t)pid);
	ibemu_table_str(t, iso);
}

static int serve_status(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_buf *out = call->out, *err = call->err;
	static const struct ibemu_table_col cols[] = {
		{"fabric", "Fabric", 0},
		{"source", "Source", 0},
		{"pid", "Pid", 1},
		{"uptime_s", "Uptime (s)", 1},
		{"switches", "Switches", 1},
		{"hcas", "HCAs", 1},
		{"links", "Links", 1},
		{"sm", "SM port", 0},
		{"mtu", "MTU", 1},
		{"socket", "Socket", 0},
		{"log", "Log", 0},
		{"protocol", "Protocol", 1},
		{"clock", "Clock", 0},
		{"deterministic", "Deterministic", 0},
		{"virtual_time_ps", "Virtual time (ps)", 1},
		{"time_held_by", "Virtual time held by", 0},
		{"time_held_by_pid", "Held by pid", 1},
		{"time_held_since", "Held since", 0},
	};
	struct ibemu_opt_val v[1];
	struct ibemu_table t;
	uint32_t sw, hca;
	int ret, n;

	(void)err;
	ret = ibemu__ctl_parse(call, &status_opts, v, NULL, &n, NULL);
	if (ret)
		return ret;
	ibemu_topo_count(d->topo, &sw, &hca);
	ibemu_table_init(&t, "status", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_table_row(&t);
	ibemu_table_str(&t, d->topo->name);
	if (d->topo->source)
		ibemu_table_str(&t, d->topo->source);
	else
		ibemu_table_null(&t);
	ibemu_table_uint(&t, (uint64_t)getpid());
	ibemu_table_uint(&t, (uv_now(&d->loop) - d->started_ms) / 1000);
	ibemu_table_uint(&t, sw);
	ibemu_table_uint(&t, hca);
	ibemu_table_uint(&t, d->topo->nlinks);
	sm_port_cell(&t, d);
	ibemu_table_uint(&t, d->topo->defaults.mtu);
	ibemu_table_str(&t, d->paths.sock);
	ibemu_table_str(&t, d->paths.log);
	ibemu_table_uint(&t, IBEMU_CTL_VERSION);
	ibemu_table_str(&t, ibemu_clock_name(d->rule.clock));
	/* Free running is never deterministic with processes attached; the
	 * rule is, unless the grace period let time advance. */
	ibemu_table_str(&t, d->rule.clock == IBEMU_CLOCK_FREE ? "no"
			    : d->rule.nondet		      ? "no"
							      : "yes");
	ibemu_table_uint(&t, ibemu_engine_now(d->engine));
	time_holder_cells(&t, d);
	ibemu_table_render_record(&t, d->topo->name, (int)v[0].u, out);
	ibemu_table_fini(&t);
	return 0;
}

/* An HCA's addresses (rdma_cm's), port 1 first, comma-separated. */
static void node_ips(struct ibemu_table *t, const struct ibemu_topo_node *n)
{
	struct ibemu_buf b;
	unsigned p;

	if (n->type != IBEMU_NODE_HCA || !n->ip) {
		ibemu_table_null(t);
		return;
	}
	ibemu_buf_init(&b);
	for (p = 1; p <= n->nports; p++) {
		uint32_t ip = ibemu_topo_port_ip(n, p);

		ibemu_buf_printf(&b, "%s%u.%u.%u.%u", p > 1 ? "," : "",
				 ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff,
				 ip & 0xff);
	}
	ibemu_table_str(t, b.data ? b.data : "");
	ibemu_buf_fini(&b);
}

/* An HCA's host interface: its preset ('auto' resolved), "+tuned" when
 * the topology's hca_tuning: changes it (docs/hca-model.md). */
static void node_model(struct ibemu_table *t, const struct ibemu_topo *topo,
		       uint32_t i)
{
	enum ibemu_hca_kind kind;

	if (topo->nodes[i].type != IBEMU_NODE_HCA) {
		ibemu_table_null(t);
		return;
	}
	kind = ibemu_topo_hca_kind(topo, i);
	ibemu_table_strf(t, "%s%s", ibemu_hca_kind_name(kind),
			 kind != IBEMU_HCA_WIRE &&
					 ibemu_hca_tuning_any(&topo->hca_tuning)
				 ? "+tuned"
				 : "");
}

static int serve_nodes(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_buf *out = call->out, *err = call->err;
	static const struct ibemu_table_col cols[] = {
		{"name", "NAME", 0},
		{"type", "TYPE", 0},
		{"ports", "PORTS", 1},
		{"guid", "GUID", 0},
		{"ip", "IP", 0},
		{"hca_model", "HCA_MODEL", 0},
		{"description", "DESCRIPTION", 0},
	};
	const struct ibemu_topo *topo = d->topo;
	struct ibemu_opt_val v[IBEMU_ARRAY_SIZE(nodes_table)];
	struct ibemu_table t;
	uint32_t i;
	int ret, npos;

	(void)err;
	ret = ibemu__ctl_parse(call, &nodes_opts, v, NULL, &npos, NULL);
	if (ret)
		return ret;
	ibemu_table_init(&t, "nodes", cols, IBEMU_ARRAY_SIZE(cols));
	for (i = 0; i < topo->nnodes; i++) {
		const struct ibemu_topo_node *n = &topo->nodes[i];

		if (v[1].given && strcmp(v[1].s, node_type_name(n->type)))
			continue;
		ibemu_table_row(&t);
		ibemu_table_str(&t, n->name);
		ibemu_table_str(&t, node_type_name(n->type));
		ibemu_table_uint(&t, n->nports);
		ibemu_table_strf(&t, "0x%016llx", (unsigned long long)n->guid);
		node_ips(&t, n);
		node_model(&t, topo, i);
		ibemu_table_str(&t, n->desc);
	}
	ibemu_table_render(&t, topo->name, (int)v[0].u, out);
	ibemu_table_fini(&t);
	return 0;
}

static void port_row(struct ibemu_table *t, const struct ibemu_daemon *d,
		     uint32_t node, unsigned p)
{
	const struct ibemu_topo *topo = d->topo;
	const struct ibemu_topo_node *n = &topo->nodes[node];
	const struct ibemu_topo_port *port = &n->ports[p];
	uint32_t pi = ibemu_engine_port_index(d->engine, node, p);
	uint16_t lid = ibemu_engine_get_lid(d->engine, node, p);

	ibemu_table_row(t);
	ibemu_table_str(t, n->name);
	ibemu_table_uint(t, p);
	ibemu_table_strf(t, "0x%016llx", (unsigned long long)port->guid);
	if (lid)
		ibemu_table_uint(t, lid);
	else
		ibemu_table_null(t);
	if (port->link == IBEMU_NONE) {
		ibemu_table_null(t);
		ibemu_table_null(t);
		ibemu_table_null(t);
	} else {
		const struct ibemu_topo_link *l = &topo->links[port->link];

		ibemu_table_strf(t, "%ux", l->width);
		ibemu_table_str(t, ibemu_speed_name(l->speed));
		rate_cell(t, l);
	}
	ibemu_table_str(t, ibemu_phys_state_name(
				   ibemu_engine_phys_state(d->engine, pi)));
	ibemu_table_str(t, ibemu_port_state_name(
				   ibemu_engine_port_state(d->engine, pi)));
	if (port->link == IBEMU_NONE) {
		ibemu_table_null(t);
		ibemu_table_null(t);
	} else {
		ibemu_table_str(t, topo->nodes[port->peer_node].name);
		ibemu_table_uint(t, port->peer_port);
	}
}

static int serve_ports(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_buf *out = call->out, *err = call->err;
	static const struct ibemu_table_col cols[] = {
		{"node", "NODE", 0},	       {"port", "PORT", 1},
		{"guid", "GUID", 0},	       {"lid", "LID", 1},
		{"width", "WIDTH", 0},	       {"speed", "SPEED", 0},
		{"rate_gbps", "GBIT/S", 1},    {"phys_state", "PHYS", 0},
		{"state", "STATE", 0},	       {"peer_node", "PEER", 0},
		{"peer_port", "PEER_PORT", 1},
	};
	const struct ibemu_topo *topo = d->topo;
	struct ibemu_opt_val v[1];
	struct ibemu_table t;
	uint32_t i, only = IBEMU_NONE;
	char *args[1];
	unsigned p;
	int ret, npos;

	ret = ibemu__ctl_parse(call, &ports_opts, v, args, &npos, NULL);
	if (ret)
		return ret;
	if (npos) {
		only = ibemu_topo_find(topo, args[0]);
		if (only == IBEMU_NONE) {
			ibemu_buf_printf(err,
					 "ports: no node named '%s' in "
					 "fabric '%s'",
					 args[0], topo->name);
			return 1;
		}
	}
	ibemu_table_init(&t, "ports", cols, IBEMU_ARRAY_SIZE(cols));
	for (i = 0; i < topo->nnodes; i++) {
		const struct ibemu_topo_node *n = &topo->nodes[i];

		if (only != IBEMU_NONE && i != only)
			continue;
		for (p = 1; p <= n->nports; p++)
			port_row(&t, d, i, p);
	}
	ibemu_table_render(&t, topo->name, (int)v[0].u, out);
	ibemu_table_fini(&t);
	return 0;
}

static int serve_links(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_buf *out = call->out, *err = call->err;
	static const struct ibemu_table_col cols[] = {
		{"a_node", "A", 0},
		{"a_port", "PORT", 1},
		{"b_node", "B", 0},
		{"b_port", "PORT", 1},
		{"width", "WIDTH", 0},
		{"speed", "SPEED", 0},
		{"rate_gbps", "GBIT/S", 1},
		{"length_mm", "LENGTH_MM", 1},
		{"latency_ps", "LATENCY_PS", 1},
	};
	const struct ibemu_topo *topo = d->topo;
	struct ibemu_opt_val v[1];
	struct ibemu_table t;
	uint32_t i;
	int ret, npos;

	(void)err;
	ret = ibemu__ctl_parse(call, &links_opts, v, NULL, &npos, NULL);
	if (ret)
		return ret;
	ibemu_table_init(&t, "links", cols, IBEMU_ARRAY_SIZE(cols));
	for (i = 0; i < topo->nlinks; i++) {
		const struct ibemu_topo_link *l = &topo->links[i];

		ibemu_table_row(&t);
		ibemu_table_str(&t, topo->nodes[l->node[0]].name);
		ibemu_table_uint(&t, l->port[0]);
		ibemu_table_str(&t, topo->nodes[l->node[1]].name);
		ibemu_table_uint(&t, l->port[1]);
		ibemu_table_strf(&t, "%ux", l->width);
		ibemu_table_str(&t, ibemu_speed_name(l->speed));
		rate_cell(&t, l);
		ibemu_table_uint(&t, l->length_mm);
		ibemu_table_uint(&t, l->latency_ps);
	}
	ibemu_table_render(&t, topo->name, (int)v[0].u, out);
	ibemu_table_fini(&t);
	return 0;
}

static int serve_down(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_buf *out = call->out, *err = call->err;
	int npos;

	if (ibemu__ctl_parse(call, &down_opts, NULL, NULL, &npos, NULL))
		return 2;
	(void)err;
	ibemu_daemon_log(d, "stop requested by a control client");
	ibemu_buf_printf(out, "fabric %s: stopping\n", d->topo->name);
	call->stop = 1;
	return 0;
}

const struct ibemu_ctl_command ibemu_ctl_commands[] = {
	{"status", &status_opts, "show the fabric's daemon and size", 1,
	 serve_status},
	{"nodes", &nodes_opts, "list nodes with GUIDs and descriptions", 1,
	 serve_nodes},
	{"ports", &ports_opts, "list ports: LID, width, speed, states and peer",
	 1, serve_ports},
	{"links", &links_opts,
	 "list cables: ends, width, speed, length and latency", 1, serve_links},
	{"route", &ibemu__route_opts,
	 "follow the LFTs hop by hop from HCA port SRC to DST "
	 "(NODE or NODE:PORT)",
	 1, ibemu__serve_route},
	{"counters", &ibemu__counters_opts,
	 "PMA counters and rates over the last interval of virtual time", 1,
	 ibemu__serve_counters},
	{"cc", &ibemu__cc_opts,
	 "congestion control: settings, FECN/CNP/BECN counts, each source's "
	 "CCTI",
	 1, ibemu__serve_cc},
	{"traffic", &ibemu__traffic_opts,
	 "run a traffic study (uniform, shift, permutation, alltoall, "
	 "bisection, incast, congestion-tree) in virtual time",
	 1, ibemu__serve_traffic},
	{"link", &ibemu__link_opts,
	 "fault injection: take a link down, bring it up, or make a port "
	 "drop data packets",
	 1, ibemu__serve_link},
	{"node", &ibemu__node_opts,
	 "fault injection: take every cable of a node down, or bring them "
	 "up",
	 1, ibemu__serve_node},
	{"down", &down_opts, "stop the fabric's daemon and remove its files", 0,
	 serve_down},
	{NULL, NULL, NULL, 0, NULL},
};

const struct ibemu_ctl_command *ibemu_ctl_command_find(const char *name)
{
	const struct ibemu_ctl_command *c;

	for (c = ibemu_ctl_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int ibemu__ctl_dispatch(struct ibemu_ctl_call *call)
{
	const struct ibemu_ctl_command *c;

	if (call->argc < 1) {
		ibemu_buf_puts(call->err, "empty request");
		return 2;
	}
	/* A link that trained while a study held the engine. */
	c = ibemu_ctl_command_find(call->argv[0]);
	if (!c) {
		ibemu_buf_printf(call->err, "unknown command '%s'",
				 call->argv[0]);
		return 2;
	}
	return c->serve(call);
}
