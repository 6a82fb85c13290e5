// SPDX-License-Identifier: MIT
/*
 * A process that keeps calling and never waits (docs/design.md §3, "No
 * call holds time still"), for test_time.py. Each call moves its clock
 * by its cost (verbs/cost.h), and the fabric with it.
 *
 *   verbs-busy cq STOPFILE   creates and destroys a CQ until STOPFILE
 *                            exists; prints "cq N DELTA EXPECTED": the
 *                            loops, how far its clock moved over them,
 *                            and N times the two calls' costs
 *   verbs-busy port          prints "ready", then queries port 1 every
 *                            millisecond of wall time; prints "down" at
 *                            the first answer that is not LinkUp, and
 *                            "linkup CALLS STATE PS" at the first LinkUp
 *                            after it: the queries made since the open,
 *                            the port's state, the clock since the open
 *
 * Linked against the system libibverbs; it needs ibemu's (ibemu exec).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cost.h"
#include "ibemu.h"

#define PHYS_LINKUP 5
#define MAX_QUERIES 100000

static int busy_cq(struct ibv_context *ctx, const char *stop)
{
	uint64_t t0 = ibemu_now_ps(), n = 0;
	struct ibv_cq *cq;

	while (access(stop, F_OK)) {
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		if (!cq || ibv_destroy_cq(cq))
			return 1;
		n++;
	}
	printf("cq %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", n,
	       ibemu_now_ps() - t0,
	       n * (ibemu_verbs_cost_ps(IBEMU_VCOST_CQ_CREATE, 0) +
		    ibemu_verbs_cost_ps(IBEMU_VCOST_CQ_DESTROY, 0)));
	return 0;
}

static int busy_port(struct ibv_context *ctx, uint64_t t0)
{
	struct timespec ms = {0, 1000 * 1000};
	struct ibv_port_attr pa;
	int calls = 0, down = 0;

	printf("ready\n");
	fflush(stdout);
	while (calls < MAX_QUERIES) {
		if (ibv_query_port(ctx, 1, &pa))
			return 1;
		calls++;
		if (!down && pa.phys_state != PHYS_LINKUP) {
			down = 1;
			printf("down\n");
			fflush(stdout);
		} else if (down && pa.phys_state == PHYS_LINKUP) {
			printf("linkup %d %s %" PRIu64 "\n", calls,
			       ibv_port_state_str(pa.state),
			       ibemu_now_ps() - t0);
			return 0;
		}
		/* Wall time between calls, so that the test's 'link up'
		 * comes long before the retraining's millisecond of the
		 * clock (the grace period is far longer). */
		nanosleep(&ms, NULL);
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	uint64_t t0;
	int ret;

	if (argc < 2 || !ibemu_now_ps)
		return 2;
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx)
		return 1;
	t0 = ibemu_now_ps();
	if (!strcmp(argv[1], "cq") && argc == 3)
		ret = busy_cq(ctx, argv[2]);
	else if (!strcmp(argv[1], "port"))
		ret = busy_port(ctx, t0);
	else
		ret = 2;
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret;
}
