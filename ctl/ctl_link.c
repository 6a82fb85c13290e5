// SPDX-License-Identifier: MIT
/*
 * 'ibemu link down|up|drop NODE:PORT': fault injection from the CLI. Down
 * disables the port (IBA 7.2: its peer polls, both ends go logically Down);
 * up lets both ends poll again, and the link trains back to Init after
 * IBEMU_LINK_TRAIN_PS of virtual time; the subnet manager then makes both
 * ends Active again (the SMAs' Trap 128 tells it, or its light sweep
 * finds the change), routing around a link down meanwhile. Drop makes the
 * port lose data packets it sends, seeded, counted in PortXmitDiscards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_commands.h"
#include "daemon.h"
#include "table.h"

enum { A_DOWN, A_UP, A_DROP };
static const char *const actions[] = {
	[A_DOWN] = "down",
	[A_UP] = "up",
	[A_DROP] = "drop",
	NULL,
};

enum { L_JSON, L_SEED, L_AT, L_NOPTS };

static const struct ibemu_opt link_table[] = {
	[L_JSON] = {.name = "json",
		    .type = IBEMU_OPT_FLAG,
		    .help = "print JSON instead of an aligned table"},
	[L_SEED] = {.name = "seed",
		    .type = IBEMU_OPT_UINT,
		    .metavar = "N",
		    .def = "1",
		    .max = UINT64_MAX,
		    .only = 1u << A_DROP,
		    .help = "seed of the generator that picks the lost "
			    "packets (same seed, same losses)"},
	[L_AT] = {.name = "at",
		  .type = IBEMU_OPT_STRING,
		  .metavar = "US",
		  .only = 1u << A_DOWN | 1u << A_UP,
		  .help = "at this virtual time, in microseconds since the "
			  "fabric started (+US: from now), the same point of "
			  "every run"},
};

const struct ibemu_opt_cmd ibemu__link_opts = {
	.name = "link",
	.opts = link_table,
	.nopts = L_NOPTS,
	.args = "down|up NODE:PORT | drop NODE:PORT RATE",
	.max_args = 2,
	.variants = actions,
	.variant_what = "action",
	.variant_first = 1,
};

/* Resolves NODE:PORT to a cabled port's global index. */
static int parse_port(struct ibemu_ctl_call *call, const char *text,
		      uint32_t *pi)
{
	const struct ibemu_topo *t = call->d->topo;
	const char *colon = strrchr(text, ':');
	char name[128];
	unsigned long p;
	uint32_t node;
	char *end;

	if (!colon || colon == text || !colon[1]) {
		ibemu_buf_printf(call->err,
				 "link: expected NODE:PORT, not '%s'", text);
		return 2;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(colon - text), text);
	node = ibemu_topo_find(t, name);
	if (node == IBEMU_NONE) {
		ibemu_buf_printf(call->err,
				 "link: no node named '%s' in fabric '%s'",
				 name, t->name);
		return 1;
	}
	p = strtoul(colon + 1, &end, 10);
	if (*end || p < 1 || p > t->nodes[node].nports) {
		ibemu_buf_printf(call->err,
				 "link: '%s' has ports 1..%u, not '%s'", name,
				 t->nodes[node].nports, colon + 1);
		return 2;
	}
	if (t->nodes[node].ports[p].link == IBEMU_NONE) {
		ibemu_buf_printf(call->err, "link: %s is not cabled", text);
		return 1;
	}
	*pi = ibemu_engine_port_index(call->d->engine, node, (unsigned)p);
	return 0;
}

/*
 * RATE: a fraction of the packets (0.1), a percentage (10%) or parts per
 * million (100000ppm). 0 turns the loss off.
 */
static int parse_rate(struct ibemu_ctl_call *call, const char *text,
		      uint32_t *ppm)
{
	double v, scale = 1e6;
	char *end;

	v = strtod(text, &end);
	if (end != text && !strcmp(end, "%"))
		scale = 1e4;
	else if (end != text && !strcmp(end, "ppm"))
		scale = 1;
	else if (end == text || *end)
		v = -1;
	v *= scale;
	if (!(v >= 0 && v <= 1e6)) {
		ibemu_buf_printf(call->err,
				 "link: bad RATE '%s': expected a fraction "
				 "0..1 (0.1), a percentage (10%%) or parts "
				 "per million (100000ppm)",
				 text);
		return 2;
	}
	*ppm = (uint32_t)(v + 0.5);
	return 0;
}

static void end_cells(struct ibemu_table *t, const struct ibemu_daemon *d,
		      uint32_t pi)
{
	uint32_t node;
	unsigned port;

	ibemu_engine_port_where(d->engine, pi, &node, &port);
	ibemu_table_str(t, d->topo->nodes[node].name);
	ibemu_table_uint(t, port);
	ibemu_table_str(t, ibemu_phys_state_name(
				   ibemu_engine_phys_state(d->engine, pi)));
	ibemu_table_str(t, ibemu_port_state_name(
				   ibemu_engine_port_state(d->engine, pi)));
	ibemu_table_uint(t, ibemu_engine_drop_rate(d->engine, pi));
}

/* One row per end of the cable, the port named first. */
static void render(struct ibemu_ctl_call *call, uint32_t pi, int json)
{
	static const struct ibemu_table_col cols[] = {
		{"node", "NODE", 0},	     {"port", "PORT", 1},
		{"phys_state", "PHYS", 0},   {"state", "STATE", 0},
		{"drop_ppm", "DROP_PPM", 1},
	};
	const struct ibemu_daemon *d = call->d;
	struct ibemu_port_link l;
	struct ibemu_table t;

	ibemu_table_init(&t, "link", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_table_row(&t);
	end_cells(&t, d, pi);
	if (!ibemu_engine_port_link(d->engine, pi, &l) &&
	    l.peer != IBEMU_NONE) {
		ibemu_table_row(&t);
		end_cells(&t, d, l.peer);
	}
	ibemu_table_render(&t, d->topo->name, json, call->out);
	ibemu_table_fini(&t);
}

int ibemu__link_up(struct ibemu_daemon *d, uint32_t pi)
{
	struct ibemu_engine *e = d->engine;
	struct ibemu_port_link l;
	int ret = 0;

	if (ibemu_engine_phys_state(e, pi) == IBEMU_PHYS_LINKUP)
		return 0; /* up already: polling again would take it down */
	if (ibemu_engine_port_link(e, pi, &l) || l.peer == IBEMU_NONE)
		return -EINVAL;
	/* The cable is enabled at both ends: whichever was disabled. */
	if (ibemu_engine_phys_state(e, l.peer) != IBEMU_PHYS_POLLING)
		ret = ibemu_engine_set_phys_state(e, l.peer,
						  IBEMU_PHYS_POLLING);
	if (!ret && ibemu_engine_phys_state(e, pi) != IBEMU_PHYS_POLLING)
		ret = ibemu_engine_set_phys_state(e, pi, IBEMU_PHYS_POLLING);
	if (ret)
		return ret;
	/* Runs the training now when no process paces virtual time. */
	ibemu_daemon_pump(d);
	return 0;
}

int ibemu__link_down(struct ibemu_daemon *d, uint32_t pi)
{
	if (ibemu_engine_phys_state(d->engine, pi) == IBEMU_PHYS_DISABLED)
		return 0;
	return ibemu_engine_set_phys_state(d->engine, pi, IBEMU_PHYS_DISABLED);
}

int ibemu__serve_link(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_opt_val v[L_NOPTS];
	char *args[2] = {NULL, NULL};
	uint32_t pi = 0, ppm = 0;
	int ret, nargs = 0, action = -1;

	ret = ibemu__ctl_parse(call, &ibemu__link_opts, v, args, &nargs,
			       &action);
	if (ret)
		return ret;
	if (nargs != (action == A_DROP ? 2 : 1)) {
		ibemu_buf_puts(call->err,
			       "link: usage: ibemu link down|up NODE:PORT, "
			       "or ibemu link drop NODE:PORT RATE [--seed N]");
		return 2;
	}
	ret = parse_port(call, args[0], &pi);
	if (!ret && action == A_DROP)
		ret = parse_rate(call, args[1], &ppm);
	if (ret)
		return ret;
	/*
	 * A study that saw a link vanish under it would lose the packets
	 * the switch then discards: faults wait until it is done.
	 */
	if (d->ctl->job) {
		ibemu_buf_puts(call->err, "link: a traffic study is running on "
					  "this fabric; try again when it is "
					  "done, or stop it with 'ibemu "
					  "traffic --stop'");
		return 1;
	}
	if (v[L_AT].given)
		return ibemu__ctl_at(call, "link", v[L_AT].s, action == A_UP, 0,
				     pi);
	switch (action) {
	case A_DOWN:
		ret = ibemu__link_down(d, pi);
		break;
	case A_UP:
		ret = ibemu__link_up(d, pi);
		break;
	default:
		ret = ibemu_engine_set_drop(d->engine, pi, ppm, v[L_SEED].u);
		break;
	}
	if (ret) {
		ibemu_buf_printf(call->err, "link %s %s: %s", actions[action],
				 args[0], strerror(-ret));
		return 1;
	}
	ibemu_daemon_log(d, "link %s %s%s%s", actions[action], args[0],
			 action == A_DROP ? " " : "",
			 action == A_DROP ? args[1] : "");
	/* Management packets (Trap 128, an SM's SMPs) may be due now. */
	ibemu_daemon_pump(d);
	render(call, pi, (int)v[L_JSON].u);
	return 0;
}
