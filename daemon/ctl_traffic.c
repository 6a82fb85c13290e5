// SPDX-License-Identifier: MIT
/*
 * 'ibemu traffic': a traffic study on the running fabric, without
 * processes. The daemon runs it as a job, in bounded batches of engine
 * events between other requests, sends progress lines while it runs and
 * the report (per-flow throughput, latency percentiles, busiest links) when
 * the fabric has drained. Counters keep what the study did.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_commands.h"
#include "daemon.h"
#include "sess.h"
#include "traffic.h"
#include "units.h"

/* Engine events per turn of the loop: a few ms, so requests stay quick. */
#define TRAFFIC_BATCH 100000

struct traffic_job {
	struct ibemu_job job; /* first: the daemon sees only this */
	struct ibemu_traffic *tr;
	int json;
	size_t top;
	int ret; /* of the last step */
};

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
		ibemu_traffic_render(tj->tr, tj->json, tj->top, out);
		return 0;
	case -EIO:
		ibemu_buf_puts(err, "traffic: packets were lost: the fabric "
				    "went idle with messages undelivered (a "
				    "destination without a route?)");
		return 1;
	case -EDEADLK:
		ibemu_buf_puts(err, "traffic: the fabric deadlocked: packets "
				    "wait for credits that never come (a "
				    "credit loop in the routes; 'ibemu up FILE "
				    "--routes updown' avoids them)");
		return 1;
	default:
		ibemu_buf_printf(err, "traffic: %s", strerror(-tj->ret));
		return 1;
	}
}

static void job_destroy(struct ibemu_job *job)
{
	struct traffic_job *tj = (struct traffic_job *)job;

	ibemu_traffic_destroy(tj->tr);
	free(tj);
}

/*
 * A study needs what a subnet manager provides: a LID and an Active state
 * on every cabled HCA port (test routes, or an SM such as OpenSM).
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
			ibemu_buf_printf(
				call->err,
				"traffic: %s:%u is not configured "
				"(LID %u, %s): run a subnet manager "
				"first (the fabric was started with "
				"routes '%s')",
				t->nodes[i].name, p,
				ibemu_engine_get_lid(d->engine, i, p),
				ibemu_port_state_name(
					ibemu_engine_port_state(d->engine, pi)),
				ibemu_daemon_routes_name(d->routing));
			return 1;
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
		return 2;
	}
	return 0;
}

static int bad_value(struct ibemu_ctl_call *call, const char *opt,
		     const char *value, const char *expected)
{
	ibemu_buf_printf(call->err, "traffic: bad %s '%s', expected %s", opt,
			 value, expected);
	return 2;
}

static int parse_options(struct ibemu_ctl_call *call,
			 struct ibemu_traffic_opts *o, struct traffic_job *tj)
{
	uint64_t v;
	char *end;
	int i;

	if (call->argc < 2) {
		ibemu_buf_puts(call->err,
			       "traffic: which pattern? uniform, shift, "
			       "permutation, alltoall, bisection or incast");
		return 2;
	}
	if (ibemu_traffic_pattern_parse(call->argv[1], &o->pattern) ||
	    o->pattern == IBEMU_TRAFFIC_PAIRS)
		return bad_value(call, "pattern", call->argv[1],
				 "uniform, shift, permutation, alltoall, "
				 "bisection or incast");
	for (i = 2; i < call->argc; i++) {
		const char *opt = call->argv[i];
		const char *val = i + 1 < call->argc ? call->argv[i + 1] : NULL;

		if (!strcmp(opt, "--json")) {
			tj->json = 1;
			continue;
		}
		if (!strcmp(opt, "--victims")) {
			o->victims = 1;
			continue;
		}
		if (!val || opt[0] != '-') {
			ibemu_buf_printf(call->err,
					 "traffic: unexpected argument '%s'",
					 opt);
			return 2;
		}
		i++;
		if (!strcmp(opt, "--size")) {
			if (ibemu_parse_size(val, &o->msg_bytes))
				return bad_value(call, opt, val,
						 "bytes, like 4096 or 64KiB");
		} else if (!strcmp(opt, "--load")) {
			o->load = strtod(val, &end);
			if (*end || !(o->load >= 0.001 && o->load <= 1.0))
				return bad_value(call, opt, val,
						 "a fraction of the link rate "
						 "between 0.001 and 1");
		} else if (!strcmp(opt, "--duration")) {
			if (ibemu_parse_duration(val, &o->duration_ps) ||
			    !o->duration_ps)
				return bad_value(call, opt, val,
						 "virtual time, like 100us");
		} else if (!strcmp(opt, "--seed")) {
			o->seed = strtoull(val, &end, 0);
			if (*end)
				return bad_value(call, opt, val, "an integer");
		} else if (!strcmp(opt, "--shift")) {
			v = strtoull(val, &end, 0);
			if (*end || !v || v > UINT32_MAX)
				return bad_value(call, opt, val,
						 "a positive integer");
			o->shift = (uint32_t)v;
		} else if (!strcmp(opt, "--sources")) {
			v = strtoull(val, &end, 0);
			if (*end || v > UINT32_MAX)
				return bad_value(call, opt, val,
						 "a count of hosts");
			o->incast_sources = (uint32_t)v;
		} else if (!strcmp(opt, "--hotspot")) {
			int ret = parse_host(call, val, &o->incast_dst);

			if (ret)
				return ret;
		} else if (!strcmp(opt, "--sl")) {
			v = strtoull(val, &end, 0);
			if (*end || v > 15)
				return bad_value(call, opt, val,
						 "an SL, 0..15");
			o->sl = (uint8_t)v;
		} else if (!strcmp(opt, "--mtu")) {
			v = strtoull(val, &end, 0);
			if (*end || (v != 256 && v != 512 && v != 1024 &&
				     v != 2048 && v != 4096))
				return bad_value(
					call, opt, val,
					"256, 512, 1024, 2048 or 4096");
			o->mtu = (uint16_t)v;
		} else if (!strcmp(opt, "--top")) {
			v = strtoull(val, &end, 0);
			if (*end || v > 1000000)
				return bad_value(call, opt, val,
						 "a count of rows (0: all)");
			tj->top = (size_t)v;
		} else {
			ibemu_buf_printf(call->err,
					 "traffic: unknown option '%s'", opt);
			return 2;
		}
	}
	return 0;
}

int ibemu__serve_traffic(struct ibemu_ctl_call *call)
{
	struct ibemu_daemon *d = call->d;
	struct ibemu_traffic_opts o;
	struct traffic_job *tj;
	struct ibemu_diag diag;
	int ret;

	if (d->job) {
		ibemu_buf_puts(call->err, "traffic: a study is running on this "
					  "fabric; try again when it is done");
		return 1;
	}
	ret = check_configured(call);
	if (ret)
		return ret;
	/* HCAs of processes that have exited are hosts again. */
	if (d->sess)
		ibemu__sess_bind_prune(d->sess);
	tj = calloc(1, sizeof(*tj));
	if (!tj)
		return -ENOMEM;
	tj->top = 10;
	ibemu_traffic_opts_init(&o);
	ret = parse_options(call, &o, tj);
	if (ret) {
		free(tj);
		return ret;
	}
	ibemu_diag_init(&diag);
	ret = ibemu_traffic_create(d->engine, d->topo, &o, &tj->tr, &diag);
	if (ret) {
		ibemu_buf_printf(call->err, "traffic: %s",
				 diag.error ? diag.error : strerror(-ret));
		ibemu_diag_fini(&diag);
		free(tj);
		return ret == -EINVAL ? 2 : 1;
	}
	ibemu_diag_fini(&diag);
	tj->job.step = job_step;
	tj->job.progress = job_progress;
	tj->job.finish = job_finish;
	tj->job.destroy = job_destroy;
	call->job = &tj->job;
	ibemu_daemon_log(d, "traffic study %s started",
			 ibemu_traffic_pattern_name(o.pattern));
	return 0;
}
