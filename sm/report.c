// SPDX-License-Identifier: MIT
/*
 * The routes report (--report FILE), rewritten at every SUBNET UP: how the
 * routes just programmed spread shift and all-to-all traffic over the
 * directed switch-to-switch cables (routing/quality.c, on the graph the
 * SM discovered and the LFTs it wrote) and how long the paths are.
 * 'ibemu sm report' reads it: the CLI never asks the daemon for routes.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "routing.h"
#include "sm.h"

static void write_json(const struct sm *sm, const struct ibemu_route_quality *q,
		       FILE *f)
{
	int free_ = ibemu_routes_deadlock_free(sm->graph, sm->routes);
	unsigned i, last = 0;

	for (i = 0; i < IBEMU_QUALITY_HOPS; i++)
		if (q->hops_hist[i])
			last = i;
	fprintf(f,
		"{\n  \"pid\": %ld,\n  \"routing\": \"%s\",\n"
		"  \"heavy_sweep\": %lu,\n  \"at\": %lld,\n"
		"  \"hosts\": %u,\n  \"links\": %u,\n  \"max_lid\": %u,\n"
		"  \"layers\": %u,\n  \"deadlock_free\": %s,\n",
		(long)getpid(), sm->routing, sm->heavy_sweeps,
		(long long)time(NULL), q->hosts, q->links, sm->routes->max_lid,
		sm->routes->nlayers, free_ == 1 ? "true" : "false");
	fprintf(f,
		"  \"shift_max\": %u,\n  \"shift_mean\": %.6f,\n"
		"  \"a2a_max\": %u,\n  \"a2a_mean\": %.6f,\n"
		"  \"a2a_ideal\": %.6f,\n  \"a2a_links_used\": %u,\n"
		"  \"unrouted\": %llu,\n  \"path_lengths\": [",
		q->shift_max, q->shift_mean, q->a2a_max, q->a2a_mean,
		q->a2a_ideal, q->a2a_used, (unsigned long long)q->unrouted);
	for (i = 0; i <= last; i++)
		fprintf(f, "%s%llu", i ? ", " : "",
			(unsigned long long)q->hops_hist[i]);
	fprintf(f, "]\n}\n");
}

struct report {
	const struct sm *sm;
	const struct ibemu_route_quality *q;
};

static void report_json(FILE *f, const void *arg)
{
	const struct report *r = arg;

	write_json(r->sm, r->q, f);
}

int sm_report_write(const struct sm *sm)
{
	struct ibemu_route_quality q;
	struct report r = {sm, &q};
	int ret;

	if (!sm->report_path || !sm->routes || !sm->graph)
		return 0;
	ret = ibemu_routes_quality(sm->graph, sm->routes, &q);
	if (ret)
		return ret;
	return sm_file_write(sm->report_path, report_json, &r);
}
