// SPDX-License-Identifier: MIT
/*
 * A program that waits for its own clock while it polls: it spins on an
 * empty CQ until clock_gettime(CLOCK_MONOTONIC) has moved MS
 * milliseconds, as a transport's retransmission timer does (Open MPI's
 * openib connection manager sends a lost UD message again after 0.5 s,
 * from its progress loop). Nothing the fabric does would end the wait:
 * only the daemon handing the spinning process the passing of virtual
 * time (attach/sess_verbs_rule.c) moves its clock. Reads the clock once
 * per 1000 polls (each read that finds the clock unmoved costs a little
 * compute, vtime/); prints "waited N ms" with the whole milliseconds its
 * clock moved and exits 0. Linked against the system libibverbs; it
 * needs ibemu's (ibemu exec).
 *
 * usage: verbs-timer MS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	uint64_t ms, t0, t;
	unsigned polls = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: verbs-timer MS\n");
		return 2;
	}
	ms = strtoull(argv[1], NULL, 10);
	devs = ibv_get_device_list(NULL);
	if (!devs || !devs[0]) {
		fprintf(stderr, "verbs-timer: no device\n");
		return 1;
	}
	ctx = ibv_open_device(devs[0]);
	cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "verbs-timer: no CQ\n");
		return 1;
	}
	t0 = now_ns();
	for (t = t0; t - t0 < ms * 1000000ull;) {
		if (ibv_poll_cq(cq, 1, &wc) != 0) {
			fprintf(stderr,
				"verbs-timer: a completion from nothing\n");
			return 1;
		}
		if (++polls % 1000 == 0)
			t = now_ns();
	}
	printf("waited %llu ms\n", (unsigned long long)((t - t0) / 1000000ull));
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return 0;
}
