// SPDX-License-Identifier: MIT
/*
 * alltoall: every rank sends a block of its own to every other rank, by
 * pairwise exchange over RC SENDs: in step k (1..N-1) rank r sends to
 * r + k and receives from r - k (mod N), one step after the other, so
 * that each link carries one exchange at a time. Every receive is posted
 * (into its block's place) before the barrier that starts an iteration,
 * and every block received is checked against its sender's pattern for
 * that round. Rank 0 prints its times as perftest prints latencies, the
 * bandwidth counting the bytes this rank sent.
 *
 * usage: ibemu run -n N alltoall [-s [MIN:]MAX] [-n ITERS] [-x WARMUP]
 */
#include "common/ex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	size_t min, max; /* bytes of a block */
	int iters, skip;
};

/* The buffer: N send blocks of 'max' bytes, then N receive blocks. */
static size_t send_off(const struct opts *o, int dst)
{
	return (size_t)dst * o->max;
}

static size_t recv_off(const struct ex *e, const struct opts *o, int src)
{
	return ((size_t)e->size + (size_t)src) * o->max;
}

/* wr_ids: the receive from rank s is s, the send to rank d is N + d. */
static void exchange(struct ex *e, const struct opts *o, size_t size,
		     unsigned char *done)
{
	int k, to, from;
	uint64_t ids[2];

	for (k = 1; k < e->size; k++) {
		to = (e->rank + k) % e->size;
		from = (e->rank + e->size - k) % e->size;
		ex_post(e, to, IBV_WR_SEND, send_off(o, to), size, 0,
			(uint64_t)(e->size + to), 1);
		ids[0] = (uint64_t)from;
		ids[1] = (uint64_t)(e->size + to);
		ex_wait_ids(e, done, 2 * (size_t)e->size, ids, 2);
	}
}

static void prepare(struct ex *e, const struct opts *o, size_t size, int round,
		    unsigned char *done)
{
	int p;

	memset(done, 0, 2 * (size_t)e->size);
	for (p = 0; p < e->size; p++) {
		ex_fill(e->buf + send_off(o, p), size, e->rank, p, round);
		memset(e->buf + recv_off(e, o, p), 0, size);
		if (p != e->rank)
			ex_post_recv(e, p, recv_off(e, o, p), size,
				     (uint64_t)p);
	}
}

static void check(struct ex *e, const struct opts *o, size_t size, int round)
{
	int p;

	for (p = 0; p < e->size; p++)
		if (p != e->rank)
			ex_check(e, e->buf + recv_off(e, o, p), size, p,
				 e->rank, round, "alltoall");
}

static void one_size(struct ex *e, const struct opts *o, size_t size,
		     uint64_t *samples, unsigned char *done)
{
	int k, n = 0;
	uint64_t t0;
	struct ex_times t;
	size_t sent = size * (size_t)(e->size - 1);

	for (k = 0; k < o->iters + o->skip; k++) {
		prepare(e, o, size, k, done);
		ex_barrier(e);
		t0 = ex_now_ps();
		exchange(e, o, size, done);
		if (k >= o->skip)
			samples[n++] = ex_now_ps() - t0;
		check(e, o, size, k);
	}
	if (e->rank)
		return;
	t = ex_times_of(samples, n);
	printf(" %-10zu %-11d %-14.2f %-16.2f %-14.2f %.2f\n", size, o->iters,
	       t.min, t.typical, t.max,
	       t.typical > 0 ? sent * 8 / (t.typical * 1e3) : 0.0);
	fflush(stdout);
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "s:n:x:")) != -1) {
		switch (c) {
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
	struct opts o = {.min = 8, .max = 1 << 20, .iters = 100, .skip = 5};
	unsigned char *done;
	uint64_t *samples;
	struct ex e;
	size_t size;

	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: %s [-s [MIN:]MAX] [-n ITERS] "
			"[-x WARMUP]\n",
			argv[0]);
		return 2;
	}
	ex_open(&e, "alltoall");
	ex_register(&e, 2 * (size_t)e.size * o.max, 0);
	ex_connect(&e, 4, 4);
	done = calloc(2 * (size_t)e.size, 1);
	samples = calloc((size_t)o.iters, sizeof(*samples));
	if (!done || !samples)
		ex_fail(&e, "out of memory");
	if (e.rank == 0) {
		printf("# alltoall (pairwise exchange) over %d ranks, bytes "
		       "per block, rank 0's times\n",
		       e.size);
		printf(" %-10s %-11s %-14s %-16s %-14s %s\n", "#bytes",
		       "#iterations", "t_min[usec]", "t_typical[usec]",
		       "t_max[usec]", "BW[Gb/sec]");
	}
	for (size = o.min; size <= o.max; size *= 2)
		one_size(&e, &o, size, samples, done);
	free(samples);
	free(done);
	ex_close(&e);
	return 0;
}
