// SPDX-License-Identifier: MIT
/*
 * pingpong: the latency between ranks 0 and 1 over an RC QP, with SEND,
 * RDMA WRITE and RDMA READ, over sizes (8 B to 4 MiB by default), printed
 * as perftest prints its latencies (#bytes, #iterations, t_min,
 * t_typical, t_max in microseconds) with the bandwidth of the typical
 * time. SEND and WRITE are ping-pongs, their one-way latency half a round
 * trip; the WRITE is WRITE with immediate, so that each side learns of
 * the other's by a completion (perftest's ib_write_lat spins on memory
 * instead). A READ's latency is its whole round trip, as ib_read_lat's.
 * Each side checks the last data it received. Other ranks only wait.
 *
 * usage: ibemu run -n 2 pingpong [-t send|write|read|all] [-s [MIN:]MAX]
 *                               [-n ITERS] [-x WARMUP]
 */
#include "common/ex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	size_t min, max;
	int iters, skip;
	int modes; /* bits of MODE_* */
};

enum { MODE_SEND = 1, MODE_WRITE = 2, MODE_READ = 4 };

static const char *const mode_name[] = {"SEND", "RDMA WRITE", "RDMA READ"};

/* Iterations for large messages: perftest's latency default too. */
static int iters_for(const struct opts *o, size_t size)
{
	return size > 65536 && o->iters > 100 ? 100 : o->iters;
}

/*
 * One ping-pong of SEND or WRITE with immediate: the recv area (the
 * buffer's second half) receives; returns the round trip (rank 0).
 */
static uint64_t ping(struct ex *e, enum ibv_wr_opcode op, size_t size, int last)
{
	int peer = !e->rank;
	uint64_t t0;

	if (e->rank == 0) {
		ex_post_recv(e, peer, e->len / 2, size, 1);
		t0 = ex_now_ps();
		ex_post(e, peer, op, 0, size, e->len / 2, 2, 1);
		ex_wait(e, 2, NULL);
		return ex_now_ps() - t0;
	}
	/* rank 1: its receive was posted before; the next, then the reply */
	ex_wait(e, 1, NULL);
	if (!last)
		ex_post_recv(e, peer, e->len / 2, size, 1);
	ex_post(e, peer, op, 0, size, e->len / 2, 2, 1);
	ex_wait(e, 1, NULL);
	return 0;
}

static uint64_t read_once(struct ex *e, size_t size)
{
	uint64_t t0 = ex_now_ps();

	ex_post(e, 1, IBV_WR_RDMA_READ, e->len / 2, size, 0, 3, 1);
	ex_wait(e, 1, NULL);
	return ex_now_ps() - t0;
}

/* One size of one mode between ranks 0 and 1; prints its row (rank 0). */
static void one_size(struct ex *e, int mode, size_t size, int iters, int skip,
		     uint64_t *samples)
{
	int peer = !e->rank, i, n = 0;
	struct ex_times t;

	ex_fill(e->buf, size, e->rank, peer, (int)size);
	memset(e->buf + e->len / 2, 0, size);
	/* rank 1's first receive (ping posts the others) */
	if (e->rank == 1 && mode != MODE_READ)
		ex_post_recv(e, peer, e->len / 2, size, 1);
	ex_barrier(e);
	for (i = 0; i < iters + skip; i++) {
		uint64_t ps;

		if (mode == MODE_READ)
			ps = e->rank == 0 ? read_once(e, size) : 0;
		else
			ps = ping(e,
				  mode == MODE_SEND
					  ? IBV_WR_SEND
					  : IBV_WR_RDMA_WRITE_WITH_IMM,
				  size, i == iters + skip - 1);
		if (i >= skip)
			samples[n++] = mode == MODE_READ ? ps : ps / 2;
	}
	ex_barrier(e);
	if (e->rank == 1 && mode == MODE_READ)
		return;
	ex_check(e, e->buf + e->len / 2, size, peer, e->rank, (int)size,
		 mode_name[mode >> 1]);
	if (e->rank)
		return;
	t = ex_times_of(samples, n);
	printf(" %-10zu %-11d %-14.2f %-16.2f %-14.2f %.2f\n", size, iters,
	       t.min, t.typical, t.max, size * 8 / (t.typical * 1e3));
	fflush(stdout);
}

static void run_mode(struct ex *e, const struct opts *o, int mode,
		     uint64_t *samples)
{
	size_t size;

	if (e->rank == 0) {
		printf("# %s latency, ranks 0 and 1, %s\n",
		       mode_name[mode >> 1],
		       mode == MODE_READ ? "the whole round trip"
					 : "one way (half a round trip)");
		printf(" %-10s %-11s %-14s %-16s %-14s %s\n", "#bytes",
		       "#iterations", "t_min[usec]", "t_typical[usec]",
		       "t_max[usec]", "BW[Gb/sec]");
	}
	for (size = o->min; size <= o->max; size *= 2) {
		if (e->rank <= 1) {
			one_size(e, mode, size, iters_for(o, size), o->skip,
				 samples);
			continue;
		}
		/* the others keep step with one_size's two barriers */
		ex_barrier(e);
		ex_barrier(e);
	}
}

static int parse_modes(const char *arg)
{
	if (!strcmp(arg, "send"))
		return MODE_SEND;
	if (!strcmp(arg, "write"))
		return MODE_WRITE;
	if (!strcmp(arg, "read"))
		return MODE_READ;
	if (!strcmp(arg, "all"))
		return MODE_SEND | MODE_WRITE | MODE_READ;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "t:s:n:x:")) != -1) {
		switch (c) {
		case 't':
			o->modes = parse_modes(optarg);
			if (!o->modes)
				return -1;
			break;
		default:
			if (ex_sweep_opt(c, optarg, &o->min, &o->max, &o->iters,
					 &o->skip))
				return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o = {.min = 8,
			 .max = 4 << 20,
			 .iters = 1000,
			 .skip = 10,
			 .modes = MODE_SEND | MODE_WRITE | MODE_READ};
	uint64_t *samples;
	struct ex e;
	int mode;

	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: %s [-t send|write|read|all] [-s [MIN:]MAX] "
			"[-n ITERS] [-x WARMUP]\n",
			argv[0]);
		return 2;
	}
	ex_open(&e, "pingpong");
	if (e.size < 2)
		ex_fail(&e, "needs 2 ranks or more (ranks 0 and 1 take part)");
	ex_register(&e, 2 * o.max,
		    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ex_connect(&e, 4, 4);
	samples = calloc((size_t)o.iters + 1, sizeof(*samples));
	if (!samples)
		ex_fail(&e, "out of memory");
	for (mode = MODE_SEND; mode <= MODE_READ; mode <<= 1)
		if (o.modes & mode)
			run_mode(&e, &o, mode, samples);
	free(samples);
	ex_close(&e);
	return 0;
}
