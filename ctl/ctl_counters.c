// SPDX-License-Identifier: MIT
/*
 * 'ibemu counters': the PMA counters of every cabled port (or of one node
 * or port), in the spec's units (data in 4-byte words), with the rates
 * over the virtual time since the previous 'ibemu counters' call, the
 * busiest ports first with --top, and a reset with --reset (as perfquery
 * -R does).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_commands.h"
#include "daemon.h"
#include "pma_view.h"
#include "table.h"

struct counters_args {
	int json, reset;
	unsigned top;
	const char *where; /* NODE or NODE:PORT */
};

enum { C_JSON, C_TOP, C_RESET, C_NOPTS };

static const struct ibemu_opt counters_table[] = {
	[C_JSON] = {.name = "json",
		    .type = IBEMU_OPT_FLAG,
		    .help = "print JSON instead of an aligned table"},
	[C_TOP] = {.name = "top",
		   .type = IBEMU_OPT_UINT,
		   .metavar = "N",
		   .min = 1,
		   .max = 1000000,
		   .def_help = "every port",
		   .help = "only the N ports that sent the most data in the "
			   "interval"},
	[C_RESET] = {.name = "reset",
		     .type = IBEMU_OPT_FLAG,
		     .help = "clear the counters after reading them (as "
			     "perfquery -R)"},
};

const struct ibemu_opt_cmd ibemu__counters_opts = {
	.name = "counters",
	.opts = counters_table,
	.nopts = C_NOPTS,
	.args = "[NODE[:PORT]]",
	.max_args = 1,
};

static int parse(struct ibemu_ctl_call *call, struct counters_args *a)
{
	struct ibemu_opt_val v[C_NOPTS];
	char *args[1];
	int ret, n;

	memset(a, 0, sizeof(*a));
	ret = ibemu__ctl_parse(call, &ibemu__counters_opts, v, args, &n, NULL);
	if (ret)
		return ret;
	a->json = (int)v[C_JSON].u;
	a->reset = (int)v[C_RESET].u;
	a->top = v[C_TOP].given ? (unsigned)v[C_TOP].u : 0;
	a->where = n ? args[0] : NULL;
	return 0;
}

int ibemu__ctl_where(struct ibemu_ctl_call *call, const char *cmd,
		     const char *where, uint32_t *node, unsigned *port)
{
	const struct ibemu_topo *t = call->d->topo;
	char name[128];
	const char *colon = strrchr(where, ':');
	char *end;

	*port = 0;
	snprintf(name, sizeof(name), "%s", where);
	if (colon) {
		unsigned long p = strtoul(colon + 1, &end, 10);

		name[colon - where] = '\0';
		*node = ibemu_topo_find(t, name);
		if (*node != IBEMU_NONE &&
		    (*end || p < 1 || p > t->nodes[*node].nports)) {
			ibemu_buf_printf(
				call->err, "%s: '%s' has ports 1..%u, not '%s'",
				cmd, name, t->nodes[*node].nports, colon + 1);
			return 2;
		}
		*port = (unsigned)p;
	} else {
		*node = ibemu_topo_find(t, name);
	}
	if (*node == IBEMU_NONE) {
		ibemu_buf_printf(call->err,
				 "%s: no node named '%s' in fabric '%s'", cmd,
				 name, t->name);
		return 1;
	}
	return 0;
}

struct row {
	uint32_t port; /* global index */
	uint64_t delta_data;
};

static int busiest_first(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->delta_data != y->delta_data)
		return x->delta_data < y->delta_data ? 1 : -1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static void rate_cell(struct ibemu_table *t, uint64_t words, uint64_t ps)
{
	if (!ps) {
		ibemu_table_null(t);
		return;
	}
	/* words * 32 bits / (ps * 1e-12 s) / 1e9 = Gb/s */
	ibemu_table_real(t, (double)words * 32.0 * 1000.0 / (double)ps);
}

static const struct ibemu_table_col cols[] = {
	{"node", "NODE", 0},
	{"port", "PORT", 1},
	{"xmit_data", "XMIT_DATA", 1},
	{"rcv_data", "RCV_DATA", 1},
	{"xmit_pkts", "XMIT_PKTS", 1},
	{"rcv_pkts", "RCV_PKTS", 1},
	{"xmit_wait", "XMIT_WAIT", 1},
	{"xmit_discards", "XMIT_DISCARDS", 1},
	{"rcv_switch_relay_errors", "RELAY_ERRORS", 1},
	{"vl15_dropped", "VL15_DROPPED", 1},
	{"xmit_gbps", "XMIT_GBIT/S", 1},
	{"rcv_gbps", "RCV_GBIT/S", 1},
	{"utilization_pct", "UTIL_%", 1},
	{"interval_ps", "INTERVAL_PS", 1},
};

static void add_row(struct ibemu_table *t, struct ibemu_daemon *d, uint32_t pi,
		    int have_snap, uint64_t dt)
{
	struct ibemu_port_counters c, prev = {0};
	struct ibemu_mad_port_counters pma = {0};
	uint32_t node;
	unsigned port;

	ibemu_engine_counters(d->engine, pi, &c);
	if (have_snap)
		prev = d->ctl->snap[pi];
	ibemu_pma_port_counters(&c, &pma);
	ibemu_engine_port_where(d->engine, pi, &node, &port);
	ibemu_table_row(t);
	ibemu_table_str(t, d->topo->nodes[node].name);
	ibemu_table_uint(t, port);
	/* Data and packets from PortCountersExtended (64 bits). */
	ibemu_table_uint(t, c.xmit_data);
	ibemu_table_uint(t, c.rcv_data);
	ibemu_table_uint(t, c.xmit_pkts);
	ibemu_table_uint(t, c.rcv_pkts);
	ibemu_table_uint(t, pma.port_xmit_wait);
	ibemu_table_uint(t, pma.port_xmit_discards);
	ibemu_table_uint(t, pma.port_rcv_switch_relay_errors);
	ibemu_table_uint(t, pma.vl15_dropped);
	if (!have_snap || !dt) {
		ibemu_table_null(t);
		ibemu_table_null(t);
		ibemu_table_null(t);
		ibemu_table_null(t);
		return;
	}
	rate_cell(t, c.xmit_data - prev.xmit_data, dt);
	rate_cell(t, c.rcv_data - prev.rcv_data, dt);
	ibemu_table_real(t, 100.0 * (double)(c.busy_ps - prev.busy_ps) /
				    (double)dt);
	ibemu_table_uint(t, dt);
}

int ibemu__serve_counters(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	uint32_t n = ibemu_engine_nports(d->engine), i, node = IBEMU_NONE;
	uint64_t now = ibemu_engine_now(d->engine), dt;
	struct ibemu_port_counters c;
	struct counters_args a;
	struct ibemu_table t;
	struct row *rows;
	unsigned port = 0;
	size_t nrows = 0;
	int ret, have_snap;

	ret = parse(call, &a);
	if (!ret && a.where)
		ret = ibemu__ctl_where(call, "counters", a.where, &node, &port);
	if (ret)
		return ret;
	/* A study reports what the counters gained since it began. */
	if (a.reset && d->ctl->job) {
		ibemu_buf_puts(call->err,
			       "counters: a traffic study is running; "
			       "reset the counters when it is done");
		return 1;
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	have_snap = d->ctl->snap != NULL;
	dt = have_snap ? now - d->ctl->snap_time : 0;
	for (i = 0; i < n; i++) {
		uint32_t pn;
		unsigned pp;
		const struct ibemu_topo_port *tp;

		ibemu_engine_port_where(d->engine, i, &pn, &pp);
		if (pp == 0)
			continue;
		tp = &d->topo->nodes[pn].ports[pp];
		if (node != IBEMU_NONE ? pn != node || (port && pp != port)
				       : tp->peer_node == IBEMU_NONE)
			continue;
		ibemu_engine_counters(d->engine, i, &c);
		rows[nrows].port = i;
		rows[nrows].delta_data =
			c.xmit_data -
			(have_snap ? d->ctl->snap[i].xmit_data : 0);
		nrows++;
	}
	if (a.top) {
		qsort(rows, nrows, sizeof(*rows), busiest_first);
		if (nrows > a.top)
			nrows = a.top;
	}
	ibemu_table_init(&t, "counters", cols, IBEMU_ARRAY_SIZE(cols));
	for (i = 0; i < nrows; i++)
		add_row(&t, d, rows[i].port, have_snap, dt);
	ibemu_table_render(&t, d->topo->name, a.json, call->out);
	ibemu_table_fini(&t);
	free(rows);

	/* The next call's rates cover the time from now. */
	if (!d->ctl->snap)
		d->ctl->snap = calloc(n ? n : 1, sizeof(*d->ctl->snap));
	for (i = 0; d->ctl->snap && i < n; i++) {
		if (a.reset)
			ibemu_engine_counters_reset(d->engine, i);
		ibemu_engine_counters(d->engine, i, &d->ctl->snap[i]);
	}
	d->ctl->snap_time = now;
	return 0;
}
