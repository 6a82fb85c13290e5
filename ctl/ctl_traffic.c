// SPDX-License-Identifier: MIT
/*
 * 'ibemu traffic': a traffic study on the running fabric, without
 * processes. The daemon runs it as a job, in bounded batches of engine
 * events between other requests, sends progress lines while it runs and
 * the report (per-flow throughput, latency percentiles, busiest links) when
 * the fabric has drained. Counters keep what the study did. A study stops
 * early on 'ibemu traffic --stop' or when its client goes away; the bounds
 * of fabric/traffic.h keep its memory in check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_commands.h"
#include "daemon.h"
#include "attach.h"
#include "traffic.h"
#include "rate.h"
#include "units.h"

/* Engine events per turn of the loop: a few ms, so requests stay quick. */
#define TRAFFIC_BATCH 100000

struct traffic_job {
	struct ibemu_job job; /* first: the daemon sees only this */
	struct ibemu_daemon *d;
	struct ibemu_traffic *tr;
	int json;
	int stop; /* --stop: no study, stop the running one */
	size_t top;
	int ret;    /* of the last step */
	char *plot; /* --plot FILE (absolute), or NULL */
};

/* Ports that 'ibemu link drop' made lose data packets. */
static unsigned dropping_ports(const struct ibemu_daemon *d)
{
	uint32_t pi, n = ibemu_engine_nports(d->engine);
	unsigned count = 0;

	for (pi = 0; pi < n; pi++)
		count += ibemu_engine_drop_rate(d->engine, pi) != 0;
	return count;
}

static void job_step(struct ibemu_job *job, int *done)
{
	struct traffic_job *tj = (struct traffic_job *)job;

	tj->ret = ibemu_traffic_step(tj->tr, TRAFFIC_BATCH, done);
	if (tj->ret)
		*done = 1;
}

static void job_progress(struct ibemu_job *job, struct ibemu_buf *line)
{
	ibemu_traffic_progress_line(((struct traffic_job *)job)->tr, line);
}

static int job_finish(struct ibemu_job *job, struct ibemu_buf *out,
		      struct ibemu_buf *err)
{
	struct traffic_job *tj = (struct traffic_job *)job;

	switch (tj->ret) {
	case 0:
		if (tj->plot && ibemu_traffic_plot_file(tj->tr, tj->plot, err))
			return 1;
		ibemu_traffic_render(tj->tr, tj->json, tj->top, out);
		if (tj->plot && !tj->json) {
			/* The path is the user's: never raw on a terminal. */
			ibemu_buf_puts(out, "\nPlot: ");
			ibemu_buf_escape(out, tj->plot, 0);
			ibemu_buf_puts(out, "\n");
		}
		return 0;
	case -EIO:
		if (dropping_ports(tj->d)) {
			ibemu_buf_printf(err,
					 "traffic: packets were lost: %u "
					 "port(s) drop data packets ('ibemu "
					 "link drop'; see PortXmitDiscards in "
					 "'ibemu counters'), and a study does "
					 "not retransmit",
					 dropping_ports(tj->d));
			return 1;
		}
		ibemu_buf_puts(err, "traffic: packets were lost: the fabric "
				    "went idle with messages undelivered (a "
				    "destination without a route?)");
		return 1;
	case -E2BIG:
		ibemu_buf_printf(err,
				 "traffic: the study reached its bound of %u "
				 "messages or %u flows and was stopped; "
				 "shorten --duration, raise --size or lower "
				 "--load",
				 IBEMU_TRAFFIC_MAX_MSGS,
				 IBEMU_TRAFFIC_MAX_FLOWS);
		return 1;
	case -EDEADLK:
		ibemu_buf_puts(err, "traffic: the fabric deadlocked: packets "
				    "wait for credits that never come (a "
				    "credit loop in the routes; 'ibemu up FILE "
				    "--routing updown' avoids them)");
		return 1;
	default:
		ibemu_buf_printf(err, "traffic: %s", strerror(-tj->ret));
		return 1;
	}
}

static void job_destroy(struct ibemu_job *job)
{
	struct traffic_job *tj = (struct traffic_job *)job;

	ibemu__cc_study_end(tj->d);
	ibemu_traffic_destroy(tj->tr);
	free(tj->plot);
	free(tj);
}

/*
 * A study needs what a subnet manager provides: a LID and an Active state
 * on every cabled HCA port (ibemu-sm, or another SM such as OpenSM).
 */
static int check_configured(struct ibemu_ctl_call *call)
{
	const struct ibemu_daemon *d = call->d;
	const struct ibemu_topo *t = d->topo;
	uint32_t i;
	unsigned p;

	for (i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].type == IBEMU_NODE_SWITCH)
			continue;
		for (p = 1; p <= t->nodes[i].nports; p++) {
			uint32_t pi = ibemu_engine_port_index(d->engine, i, p);

			if (t->nodes[i].ports[p].link == IBEMU_NONE)
				continue;
			if (ibemu_engine_get_lid(d->engine, i, p) &&
			    ibemu_engine_port_state(d->engine, pi) ==
				    IBEMU_PORT_ACTIVE)
				continue;
			if (ibemu_engine_phys_state(d->engine, pi) !=
			    IBEMU_PHYS_LINKUP) {
				ibemu_buf_printf(
					call->err,
					"traffic: %s:%u has its link down "
					"(%s): 'ibemu link up %s:%u' brings "
					"it back",
					t->nodes[i].name, p,
					ibemu_phys_state_name(
						ibemu_engine_phys_state(
							d->engine, pi)),
					t->nodes[i].name, p);
				return 1;
			}
			ibemu_buf_printf(
				call->err,
				"traffic: %s:%u is not configured "
				"(LID %u, %s): %s",
				t->nodes[i].name, p,
				ibemu_engine_get_lid(d->engine, i, p),
				ibemu_port_state_name(
					ibemu_engine_port_state(d->engine, pi)),
				ibemu__sess_sm_port(d) == IBEMU_NONE
					? "no subnet manager runs ('ibemu up "
					  "FILE' starts ibemu-sm)"
					: "the subnet manager has not brought "
					  "it up yet");
			return 1;
		}
	}
	return 0;
}

/*
 * A study loses nothing: one with a flow the LFTs would send into a link
 * taken down ('ibemu link down' between switches, before the subnet
 * manager routes around it) is refused, naming the pair and the hop. Looked for
 * only when some cabled port is not Active, so a healthy fabric of
 * thousands of hosts pays nothing.
 */
static int check_routes(struct ibemu_ctl_call *call)
{
	const struct ibemu_daemon *d = call->d;
	const struct ibemu_topo *t = d->topo;
	uint32_t pi, n = ibemu_engine_nports(d->engine), i, j, node;
	struct ibemu_port_link l;
	unsigned p, q, port;
	const char *why;
	int broken = 0;

	for (pi = 0; pi < n && !broken; pi++)
		broken = !ibemu_engine_port_link(d->engine, pi, &l) &&
			 l.peer != IBEMU_NONE && l.state != IBEMU_PORT_ACTIVE;
	if (!broken)
		return 0;
	for (i = 0; i < t->nnodes; i++) {
		for (p = 1; p <= t->nodes[i].nports; p++) {
			if (ibemu_traffic_host_number(d->engine, i, p) ==
			    IBEMU_NONE)
				continue;
			for (j = 0; j < t->nnodes; j++) {
				for (q = 1; q <= t->nodes[j].nports; q++) {
					if ((i == j && p == q) ||
					    ibemu_traffic_host_number(d->engine,
								      j, q) ==
						    IBEMU_NONE)
						continue;
					why = ibemu__route_stop(d, i, p, j, q,
								&node, &port);
					if (!why)
						continue;
					ibemu_buf_printf(
						call->err,
						"traffic: %s:%u cannot reach "
						"%s:%u: at %s:%u %s ('ibemu "
						"route %s:%u %s:%u' shows the "
						"path); a study does not lose "
						"packets, bring the link back "
						"with 'ibemu link up'",
						t->nodes[i].name, p,
						t->nodes[j].name, q,
						t->nodes[node].name, port, why,
						t->nodes[i].name, p,
						t->nodes[j].name, q);
					return 1;
				}
			}
		}
	}
	return 0;
}

/* Resolves NODE[:PORT] (port 1 by default) to a host number. */
static int parse_host(struct ibemu_ctl_call *call, const char *text,
		      uint32_t *host)
{
	const struct ibemu_topo *t = call->d->topo;
	char name[128];
	char *colon;
	unsigned long port = 1;
	uint32_t node;

	snprintf(name, sizeof(name), "%s", text);
	colon = strrchr(name, ':');
	if (colon) {
		*colon = '\0';
		port = strtoul(colon + 1, NULL, 10);
	}
	node = ibemu_topo_find(t, name);
	*host = node == IBEMU_NONE
			? IBEMU_NONE
			: ibemu_traffic_host_number(call->d->engine, node,
						    (unsigned)port);
	if (*host == IBEMU_NONE) {
		ibemu_buf_printf(call->err,
				 "traffic: '%s' is not a cabled HCA port of "
				 "fabric '%s' free of attached processes",
				 text, t->name);
		return 1;
	}
	return 0;
}

/* The patterns a user may ask for ('pairs' is for programs). */
enum {
	P_UNIFORM,
	P_SHIFT,
	P_PERMUTATION,
	P_ALLTOALL,
	P_BISECTION,
	P_INCAST,
	P_CTREE
};
static const char *const patterns[] = {
	[P_UNIFORM] = "uniform",	 [P_SHIFT] = "shift",
	[P_PERMUTATION] = "permutation", [P_ALLTOALL] = "alltoall",
	[P_BISECTION] = "bisection",	 [P_INCAST] = "incast",
	[P_CTREE] = "congestion-tree",	 NULL,
};

enum {
	T_JSON,
	T_SIZE,
	T_LOAD,
	T_DURATION,
	T_SEED,
	T_SHIFT,
	T_HOTSPOT,
	T_SOURCES,
	T_VICTIMS,
	T_SL,
	T_SL_MAP,
	T_MTU,
	T_TOP,
	T_BACKLOG,
	T_CC,
	T_PLOT,
	T_STOP,
	T_NOPTS
};

/* In the order of enum ibemu_traffic_cc. */
static const char *const cc_values[] = {"on", "off", NULL};

static const struct ibemu_opt traffic_table[] = {
	[T_JSON] = {.name = "json",
		    .type = IBEMU_OPT_FLAG,
		    .help = "print the report as JSON"},
	[T_SIZE] = {.name = "size",
		    .type = IBEMU_OPT_SIZE,
		    .metavar = "BYTES",
		    .parse = ibemu_parse_size,
		    .min = 1,
		    .max = IBEMU_TRAFFIC_MAX_MSG_BYTES,
		    .range_help = "1B..2GiB, IBA's largest message",
		    .def = "64KiB",
		    .help = "bytes per message (a source starts one "
			    "every 20 ns at most)"},
	[T_LOAD] = {.name = "load",
		    .type = IBEMU_OPT_FRACTION,
		    .metavar = "F",
		    .lo = 0.001,
		    .hi = 1.0,
		    .def = "1",
		    .help = "offered load per source, a fraction of its link's "
			    "rate"},
	[T_DURATION] = {.name = "duration",
			.type = IBEMU_OPT_DURATION,
			.metavar = "T",
			.parse = ibemu_parse_duration,
			.min = 1,
			.max = UINT64_MAX / 4,
			.range_help = "1ps..2^62ps",
			.def = "100us",
			.help = "virtual time during which messages start"},
	[T_SEED] = {.name = "seed",
		    .type = IBEMU_OPT_UINT,
		    .metavar = "N",
		    .max = UINT64_MAX,
		    .def = "1",
		    .help = "seed of the pattern's and the arrivals' draws"},
	[T_SHIFT] = {.name = "shift",
		     .type = IBEMU_OPT_UINT,
		     .metavar = "K",
		     .min = 1,
		     .max = UINT32_MAX,
		     .def = "1",
		     .only = 1u << P_SHIFT,
		     .help = "host i sends to host i+K"},
	[T_HOTSPOT] = {.name = "hotspot",
		       .type = IBEMU_OPT_NODE_PORT,
		       .metavar = "NODE[:PORT]",
		       .def_help = "the first host",
		       .only = 1u << P_INCAST | 1u << P_CTREE,
		       .help = "the HCA port every source sends to (port 1 "
			       "by default)"},
	[T_SOURCES] = {.name = "sources",
		       .type = IBEMU_OPT_UINT,
		       .metavar = "N",
		       .max = UINT32_MAX,
		       .def = "0",
		       .only = 1u << P_INCAST | 1u << P_CTREE,
		       .help = "hosts sending to the hotspot: incast, those "
			       "after it (0: all others); congestion-tree, "
			       "dealt over the other leaf switches (0: all "
			       "but one per leaf)"},
	[T_VICTIMS] = {.name = "victims",
		       .type = IBEMU_OPT_FLAG,
		       .only = 1u << P_INCAST,
		       .help = "each switch's last source also sends a victim "
			       "flow, which never touches the hotspot"},
	[T_SL] = {.name = "sl",
		  .type = IBEMU_OPT_UINT,
		  .metavar = "SL",
		  .max = 15,
		  .def = "0",
		  .help = "service level of every packet (of every path "
			  "the SL map does not name)"},
	[T_SL_MAP] = {.name = "sl-map",
		      .type = IBEMU_OPT_STRING,
		      .metavar = "FILE",
		      .help = "the SL of each path: lines 'SLID DLID SL', as "
			      "'ibemu-sm --sl-dump' writes them for routes on "
			      "virtual layers (an absolute path: the daemon "
			      "reads it); without --sl or --sl-map, the map "
			      "the fabric's ibemu-sm publishes"},
	[T_MTU] = {.name = "mtu",
		   .type = IBEMU_OPT_UINT,
		   .metavar = "MTU",
		   .parse = ibemu_mtu_parse,
		   .min = IBEMU_MTU_MIN,
		   .max = IBEMU_MTU_MAX,
		   .range_help = IBEMU_MTU_NAMES,
		   .def_help = "the fabric's (defaults: mtu)",
		   .help = "bytes of payload per packet"},
	[T_TOP] = {.name = "top",
		   .type = IBEMU_OPT_UINT,
		   .metavar = "N",
		   .max = 1000000,
		   .def = "10",
		   .help = "rows of the busiest links in the report (0: all)"},
	[T_BACKLOG] =
		{.name = "backlog",
		 .type = IBEMU_OPT_UINT,
		 .metavar = "N",
		 .max = UINT32_MAX,
		 .def = "0",
		 .help = "messages a flow may have waiting at its source; "
			 "a slot that finds them makes none, as a program "
			 "with N work requests outstanding (0: no bound)"},
	[T_CC] = {.name = "cc",
		  .type = IBEMU_OPT_ENUM,
		  .values = cc_values,
		  .def = "on",
		  .help = "congestion control (IBA Annex A10) at the hosts: "
			  "'on' answers FECN with CNPs and throttles sources "
			  "as the subnet manager configured them; 'off' "
			  "ignores it (switches still mark)"},
	[T_PLOT] = {.name = "plot",
		    .type = IBEMU_OPT_STRING,
		    .metavar = "FILE",
		    .path = 1,
		    .help = "draw each flow's throughput and its source's "
			    "CCTI over time into FILE.svg, or FILE.png "
			    "(with rsvg-convert or ImageMagick's convert)"},
	[T_STOP] = {.name = "stop",
		    .type = IBEMU_OPT_FLAG,
		    .alone = 1,
		    .help = "stop the running study (alone, without a "
			    "pattern); its client gets 'stopped'"},
};

const struct ibemu_opt_cmd ibemu__traffic_opts = {
	.name = "traffic",
	.opts = traffic_table,
	.nopts = T_NOPTS,
	.args = "PATTERN",
	.variants = patterns,
	.variant_what = "pattern",
	.variant_first = 1,
};

/* Pairs an SL map may name: one per flow a study may hold. */
#define SL_MAP_MAX IBEMU_TRAFFIC_MAX_FLOWS

/*
 * Reads the SL map 'path' (lines 'SLID DLID SL', decimal or 0x hex, '#'
 * comments) into o->path_sls (the caller frees it). 0, or 2 (usage) with
 * the reason in call->err.
 */
static int read_sl_map(struct ibemu_ctl_call *call, const char *path,
		       struct ibemu_traffic_opts *o)
{
	struct ibemu_traffic_sl *v = NULL, *grown;
	unsigned long slid, dlid, sl;
	size_t n = 0, cap = 0;
	unsigned line = 0;
	char buf[256], *p, *end;
	FILE *f;

	if (path[0] != '/') {
		ibemu_buf_printf(call->err,
				 "traffic: --sl-map '%s': give an absolute "
				 "path (the daemon reads it)",
				 path);
		return 2;
	}
	f = fopen(path, "r");
	if (!f) {
		ibemu_buf_printf(call->err, "traffic: --sl-map %s: %s", path,
				 strerror(errno));
		return 2;
	}
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		p = buf + strspn(buf, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		errno = 0;
		slid = strtoul(p, &end, 0);
		p = end;
		dlid = strtoul(p, &end, 0);
		if (end == p)
			goto bad;
		p = end;
		sl = strtoul(p, &end, 0);
		if (end == p || errno || slid > 0xffff || dlid > 0xffff ||
		    sl > 15 || end[strspn(end, " \t\r\n")])
			goto bad;
		if (n == SL_MAP_MAX) {
			ibemu_buf_printf(call->err,
					 "traffic: %s:%u: more than %u paths",
					 path, line, SL_MAP_MAX);
			goto err;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				ibemu_buf_printf(call->err, "traffic: %s",
						 strerror(ENOMEM));
				goto err;
			}
			v = grown;
		}
		v[n].slid = (uint16_t)slid;
		v[n].dlid = (uint16_t)dlid;
		v[n++].sl = (uint8_t)sl;
	}
	fclose(f);
	o->path_sls = v;
	o->npath_sls = n;
	return 0;

bad:
	ibemu_buf_printf(call->err,
			 "traffic: %s:%u: expected 'SLID DLID SL' (LIDs up to "
			 "0xffff, SL 0..15)",
			 path, line);
err:
	fclose(f);
	free(v);
	return 2;
}

static int parse_options(struct ibemu_ctl_call *call,
			 struct ibemu_traffic_opts *o, struct traffic_job *tj)
{
	struct ibemu_opt_val v[T_NOPTS];
	int ret, n, pattern;

	ret = ibemu__ctl_parse(call, &ibemu__traffic_opts, v, NULL, &n,
			       &pattern);
	if (ret)
		return ret;
	if (v[T_STOP].u) {
		tj->stop = 1;
		return 0;
	}
	/* The table's names are the engine's. */
	if (ibemu_traffic_pattern_parse(patterns[pattern], &o->pattern)) {
		ibemu_buf_printf(call->err,
				 "traffic: pattern '%s' unknown to "
				 "the engine",
				 patterns[pattern]);
		return 1;
	}
	tj->json = (int)v[T_JSON].u;
	tj->top = (size_t)v[T_TOP].u;
	if (v[T_PLOT].given) {
		ret = ibemu_traffic_plot_check(v[T_PLOT].s, call->err);
		if (ret)
			return ret;
		tj->plot = strdup(v[T_PLOT].s);
		if (!tj->plot)
			return -ENOMEM;
		o->series = 1;
	}
	o->msg_bytes = v[T_SIZE].u;
	o->load = v[T_LOAD].f;
	o->duration_ps = v[T_DURATION].u;
	o->seed = v[T_SEED].u;
	o->shift = (uint32_t)v[T_SHIFT].u;
	o->incast_sources = (uint32_t)v[T_SOURCES].u;
	o->victims = (int)v[T_VICTIMS].u;
	o->sl = (uint8_t)v[T_SL].u;
	o->cc = (enum ibemu_traffic_cc)v[T_CC].u;
	o->backlog = (uint32_t)v[T_BACKLOG].u;
	o->min_slot_ps = IBEMU_TRAFFIC_MIN_SLOT_PS;
	if (v[T_MTU].given)
		o->mtu = (uint16_t)v[T_MTU].u;
	if (v[T_SL_MAP].given) {
		ret = read_sl_map(call, v[T_SL_MAP].s, o);
		if (ret)
			return ret;
	} else if (!v[T_SL].given && !access(call->d->paths.sl_map, R_OK)) {
		/* The SLs the fabric's ibemu-sm publishes for its paths, as
		 * an application gets them in PathRecords. */
		ret = read_sl_map(call, call->d->paths.sl_map, o);
		if (ret)
			return ret;
	}
	if (v[T_HOTSPOT].given)
		return parse_host(call, v[T_HOTSPOT].s, &o->incast_dst);
	return 0;
}

/* 'ibemu traffic --stop': ends the running study, whoever started it. */
static int serve_stop(struct ibemu_ctl_call *call)
{
	if (ibemu__ctl_job_cancel(call->d, "traffic: stopped by 'ibemu "
					   "traffic --stop'")) {
		ibemu_buf_puts(call->err, "traffic: no study is running");
		return 1;
	}
	ibemu_buf_puts(call->out, "traffic: the running study stops\n");
	return 0;
}

static int serve(struct ibemu_ctl_call *call, struct ibemu_traffic_opts *op)
{
	struct ibemu_daemon *d = call->d;
	struct traffic_job *tj;
	struct ibemu_diag diag;
	int ret;

	/* HCAs of processes that have exited are hosts again (before the
	 * options: --hotspot counts hosts). */
	ibemu__sess_prune(d);
	/* Bad usage first: it is an error whatever the fabric's state. */
	tj = calloc(1, sizeof(*tj));
	if (!tj)
		return -ENOMEM;
	ret = parse_options(call, op, tj);
	if (ret || tj->stop) {
		free(tj->plot);
		free(tj);
		return ret ? ret : serve_stop(call);
	}
	if (d->ctl->job) {
		ibemu_buf_puts(call->err, "traffic: a study is running on this "
					  "fabric; try again when it is done, "
					  "or stop it with 'ibemu traffic "
					  "--stop'");
		free(tj->plot);
		free(tj);
		return 1;
	}
	ret = check_configured(call);
	if (!ret)
		ret = check_routes(call);
	if (ret) {
		free(tj->plot);
		free(tj);
		return ret;
	}
	ibemu_diag_init(&diag);
	ret = ibemu_traffic_create(d->engine, d->topo, op, &tj->tr, &diag);
	if (ret) {
		ibemu_buf_printf(call->err, "traffic: %s",
				 diag.error ? ibemu_diag_what(diag.error)
					    : strerror(-ret));
		ibemu_diag_fini(&diag);
		free(tj->plot);
		free(tj);
		return ret == -EINVAL ? 2 : 1;
	}
	ibemu_diag_fini(&diag);
	tj->d = d;
	tj->job.step = job_step;
	tj->job.progress = job_progress;
	tj->job.finish = job_finish;
	tj->job.destroy = job_destroy;
	call->job = &tj->job;
	ibemu__cc_study_start(d, tj->tr);
	ibemu_daemon_log(d, "traffic study %s started",
			 ibemu_traffic_pattern_name(op->pattern));
	return 0;
}

int ibemu__serve_traffic(struct ibemu_ctl_call *call)
{
	struct ibemu_traffic_opts o;
	int ret;

	ibemu_traffic_opts_init(&o);
	ret = serve(call, &o);
	/* The study keeps a copy of the SL map. */
	free((void *)o.path_sls);
	return ret;
}
