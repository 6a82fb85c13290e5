// SPDX-License-Identifier: MIT
/*
 * 'ibemu node down|up NODE': a node switched off and on again, as fault
 * injection: every cabled port of it goes Disabled (its peers poll, both
 * ends logically Down), or every one of them polls again and trains back
 * to Init, as 'ibemu link' does for one cable (ctl_link.c). An SM that
 * sweeps finds the node gone, routes around it, and brings it back.
 */
#include <errno.h>
#include <string.h>

#include "ctl.h"
#include "ctl_commands.h"
#include "daemon.h"
#include "table.h"

enum { N_DOWN, N_UP };
static const char *const actions[] = {
	[N_DOWN] = "down",
	[N_UP] = "up",
	NULL,
};

enum { N_JSON, N_AT, N_NOPTS };

static const struct ibemu_opt node_table[] = {
	[N_JSON] = {.name = "json",
		    .type = IBEMU_OPT_FLAG,
		    .help = "print JSON instead of an aligned table"},
	[N_AT] = {.name = "at",
		  .type = IBEMU_OPT_STRING,
		  .metavar = "US",
		  .help = "at this virtual time, in microseconds since the "
			  "fabric started (+US: from now), the same point of "
			  "every run"},
};

const struct ibemu_opt_cmd ibemu__node_opts = {
	.name = "node",
	.opts = node_table,
	.nopts = N_NOPTS,
	.args = "down|up NODE",
	.max_args = 1,
	.variants = actions,
	.variant_what = "action",
	.variant_first = 1,
};

/* One row per cabled port of node 'n': its state after the change. */
static void render(struct ibemu_ctl_call *call, uint32_t n, int json)
{
	static const struct ibemu_table_col cols[] = {
		{"node", "NODE", 0},
		{"port", "PORT", 1},
		{"phys_state", "PHYS", 0},
		{"state", "STATE", 0},
	};
	const struct ibemu_daemon *d = call->d;
	const struct ibemu_topo *t = d->topo;
	struct ibemu_table tab;
	uint32_t pi;
	unsigned p;

	ibemu_table_init(&tab, "node", cols, IBEMU_ARRAY_SIZE(cols));
	for (p = 1; p <= t->nodes[n].nports; p++) {
		if (t->nodes[n].ports[p].link == IBEMU_NONE)
			continue;
		pi = ibemu_engine_port_index(d->engine, n, p);
		ibemu_table_row(&tab);
		ibemu_table_str(&tab, t->nodes[n].name);
		ibemu_table_uint(&tab, p);
		ibemu_table_str(
			&tab, ibemu_phys_state_name(
				      ibemu_engine_phys_state(d->engine, pi)));
		ibemu_table_str(
			&tab, ibemu_port_state_name(
				      ibemu_engine_port_state(d->engine, pi)));
	}
	ibemu_table_render(&tab, t->name, json, call->out);
	ibemu_table_fini(&tab);
}

int ibemu__serve_node(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	const struct ibemu_topo *t = d->topo;
	struct ibemu_opt_val v[N_NOPTS];
	char *args[1] = {NULL};
	int ret, nargs = 0, action = -1;
	uint32_t n;
	unsigned p;

	ret = ibemu__ctl_parse(call, &ibemu__node_opts, v, args, &nargs,
			       &action);
	if (ret)
		return ret;
	if (nargs != 1) {
		ibemu_buf_puts(call->err,
			       "node: usage: ibemu node down|up NODE");
		return 2;
	}
	n = ibemu_topo_find(t, args[0]);
	if (n == IBEMU_NONE) {
		ibemu_buf_printf(call->err,
				 "node: no node named '%s' in fabric '%s'",
				 args[0], t->name);
		return 1;
	}
	/* As for 'ibemu link': a study must not see its links vanish. */
	if (d->ctl->job) {
		ibemu_buf_puts(call->err, "node: a traffic study is running on "
					  "this fabric; try again when it is "
					  "done, or stop it with 'ibemu "
					  "traffic --stop'");
		return 1;
	}
	if (v[N_AT].given)
		return ibemu__ctl_at(call, "node", v[N_AT].s, action == N_UP, 1,
				     n);
	for (p = 1; !ret && p <= t->nodes[n].nports; p++) {
		uint32_t pi = ibemu_engine_port_index(d->engine, n, p);

		if (t->nodes[n].ports[p].link == IBEMU_NONE)
			continue;
		ret = action == N_DOWN ? ibemu__link_down(d, pi)
				       : ibemu__link_up(d, pi);
	}
	if (ret) {
		ibemu_buf_printf(call->err, "node %s %s: %s", actions[action],
				 args[0], strerror(-ret));
		return 1;
	}
	ibemu_daemon_log(d, "node %s %s", actions[action], args[0]);
	ibemu_daemon_pump(d);
	render(call, n, (int)v[N_JSON].u);
	return 0;
}
