// SPDX-License-Identifier: MIT
/*
 * allreduce: a sum of 64-bit integers over all ranks, by one of two
 * algorithms over RC SENDs between neighbours:
 *   ring: reduce-scatter then allgather round the ring, 2(N-1) steps of
 *         a chunk (1/N of the vector) each: bandwidth-optimal;
 *   rd:   recursive doubling, log2(N) steps of the whole vector with the
 *         partner rank ^ 2^k (N a power of two): latency-optimal.
 * Every receive of an iteration is posted before the barrier that starts
 * it, so no SEND waits for a receive. Each iteration's sums are checked
 * at every rank. Rank 0 prints its times (from the barrier to its result)
 * as perftest prints latencies.
 *
 * usage: ibemu run -n N allreduce [-a ring|rd] [-s [MIN:]MAX] [-n ITERS]
 *                                [-x WARMUP]
 */
#include "common/ex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	size_t min, max; /* bytes of the vector */
	int iters, skip;
	int rd; /* recursive doubling, else ring */
};

/* The buffer: the vector, then a staging area of one slot per step. */
struct layout {
	size_t count;	     /* elements of the vector */
	size_t slot;	     /* bytes of a staging slot */
	int steps;	     /* receives per iteration */
	int64_t *vec;	     /* at offset 0 */
	size_t stage_off;    /* offset of the staging area */
	unsigned char *done; /* completions seen, by wr_id */
};

/* wr_ids: receive of step s is s, send of step s is 64 + s. */
#define SEND_ID(s) (64 + (uint64_t)(s))
#define IDS	   128

static int64_t contribution(int rank, size_t i, int round)
{
	return rank + 1 + (int64_t)(i % 1000) + round;
}

static void check_sums(const struct ex *e, const struct layout *l, int round)
{
	int64_t n = e->size, want;
	size_t i;

	for (i = 0; i < l->count; i++) {
		want = n * (n + 1) / 2 + n * ((int64_t)(i % 1000) + round);
		if (l->vec[i] != want)
			ex_fail(e,
				"wrong sum at element %zu of %zu (round %d): "
				"%lld, not %lld",
				i, l->count, round, (long long)l->vec[i],
				(long long)want);
	}
}

/* Elements [first, first + n) of chunk c of the vector (ring). */
static void chunk(const struct ex *e, const struct layout *l, int c,
		  size_t *first, size_t *n)
{
	size_t size = (size_t)e->size;

	c = ((c % e->size) + e->size) % e->size;
	*first = l->count * (size_t)c / size;
	*n = l->count * (size_t)(c + 1) / size - *first;
}

static void add_into(int64_t *dst, const int64_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] += src[i];
}

static void step_wait(struct ex *e, struct layout *l, int s)
{
	uint64_t ids[2] = {(uint64_t)s, SEND_ID(s)};

	ex_wait_ids(e, l->done, IDS, ids, 2);
}

static void ring_post_recvs(struct ex *e, struct layout *l)
{
	int left = (e->rank + e->size - 1) % e->size, s, n1 = e->size - 1;
	size_t first, n;

	for (s = 0; s < n1; s++) {
		chunk(e, l, e->rank - s - 1, &first, &n);
		ex_post_recv(e, left, l->stage_off + (size_t)s * l->slot, n * 8,
			     (uint64_t)s);
	}
	/* allgather: straight into the vector, the chunk being final */
	for (s = 0; s < n1; s++) {
		chunk(e, l, e->rank - s, &first, &n);
		ex_post_recv(e, left, first * 8, n * 8, (uint64_t)(n1 + s));
	}
}

static void ring(struct ex *e, struct layout *l)
{
	int right = (e->rank + 1) % e->size, s, n1 = e->size - 1;
	size_t first, n, rfirst, rn;

	for (s = 0; s < n1; s++) {
		chunk(e, l, e->rank - s, &first, &n);
		ex_post(e, right, IBV_WR_SEND, first * 8, n * 8, 0, SEND_ID(s),
			1);
		step_wait(e, l, s);
		chunk(e, l, e->rank - s - 1, &rfirst, &rn);
		add_into(l->vec + rfirst,
			 (int64_t *)(e->buf + l->stage_off +
				     (size_t)s * l->slot),
			 rn);
	}
	for (s = 0; s < n1; s++) {
		chunk(e, l, e->rank + 1 - s, &first, &n);
		ex_post(e, right, IBV_WR_SEND, first * 8, n * 8, 0,
			SEND_ID(n1 + s), 1);
		step_wait(e, l, n1 + s);
	}
}

static void rd_post_recvs(struct ex *e, struct layout *l)
{
	int s;

	for (s = 0; s < l->steps; s++)
		ex_post_recv(e, e->rank ^ (1 << s),
			     l->stage_off + (size_t)s * l->slot, l->count * 8,
			     (uint64_t)s);
}

static void recursive_doubling(struct ex *e, struct layout *l)
{
	int s;

	for (s = 0; s < l->steps; s++) {
		ex_post(e, e->rank ^ (1 << s), IBV_WR_SEND, 0, l->count * 8, 0,
			SEND_ID(s), 1);
		step_wait(e, l, s);
		add_into(l->vec,
			 (int64_t *)(e->buf + l->stage_off +
				     (size_t)s * l->slot),
			 l->count);
	}
}

static int log2_exact(int n)
{
	int k = 0;

	while ((1 << k) < n)
		k++;
	return (1 << k) == n ? k : -1;
}

static void one_size(struct ex *e, const struct opts *o, struct layout *l,
		     size_t bytes, uint64_t *samples)
{
	int k, n = 0;
	size_t i;
	uint64_t t0;
	struct ex_times t;

	l->count = bytes / 8;
	for (k = 0; k < o->iters + o->skip; k++) {
		for (i = 0; i < l->count; i++)
			l->vec[i] = contribution(e->rank, i, k);
		memset(l->done, 0, IDS);
		if (o->rd)
			rd_post_recvs(e, l);
		else
			ring_post_recvs(e, l);
		ex_barrier(e);
		t0 = ex_now_ps();
		if (o->rd)
			recursive_doubling(e, l);
		else
			ring(e, l);
		if (k >= o->skip)
			samples[n++] = ex_now_ps() - t0;
		check_sums(e, l, k);
	}
	if (e->rank)
		return;
	t = ex_times_of(samples, n);
	printf(" %-10zu %-11d %-14.2f %-16.2f %-14.2f %.2f\n", bytes, o->iters,
	       t.min, t.typical, t.max, bytes * 8 / (t.typical * 1e3));
	fflush(stdout);
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "a:s:n:x:")) != -1) {
		switch (c) {
		case 'a':
			if (strcmp(optarg, "ring") && strcmp(optarg, "rd"))
				return -1;
			o->rd = !strcmp(optarg, "rd");
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
	struct opts o = {.min = 8, .max = 1 << 20, .iters = 100, .skip = 5};
	struct layout l = {0};
	uint64_t *samples;
	struct ex e;
	size_t bytes, max_chunk;

	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: %s [-a ring|rd] [-s [MIN:]MAX] [-n ITERS] "
			"[-x WARMUP]\n",
			argv[0]);
		return 2;
	}
	o.min = (o.min + 7) / 8 * 8;
	o.max = o.max / 8 * 8;
	ex_open(&e, "allreduce");
	/* The ring sends chunks of 1/N of the vector: none empty. */
	while (!o.rd && o.min && o.min < 8 * (size_t)e.size)
		o.min *= 2;
	l.steps = o.rd ? log2_exact(e.size) : 2 * (e.size - 1);
	if (o.rd && l.steps < 0)
		ex_fail(&e,
			"recursive doubling needs a power-of-two number "
			"of ranks, not %d",
			e.size);
	if (l.steps > 63 || o.min < 8 || o.min > o.max)
		ex_fail(&e, "too many ranks, or sizes out of range");
	/* The ring's staging slots hold a chunk, recursive doubling's the
	 * vector. */
	max_chunk = (o.max / 8 + (size_t)e.size - 1) / (size_t)e.size * 8;
	l.slot = o.rd ? o.max : max_chunk;
	l.stage_off = (o.max + 4095) / 4096 * 4096;
	ex_register(&e, l.stage_off + l.slot * (size_t)l.steps, 0);
	ex_connect(&e, 2 * e.size + 4, 2 * e.size + 4);
	l.vec = (int64_t *)e.buf;
	l.done = calloc(IDS, 1);
	samples = calloc((size_t)o.iters, sizeof(*samples));
	if (!l.done || !samples)
		ex_fail(&e, "out of memory");
	if (e.rank == 0) {
		printf("# allreduce (%s) of 64-bit integers over %d ranks, "
		       "rank 0's times\n",
		       o.rd ? "recursive doubling" : "ring", e.size);
		printf(" %-10s %-11s %-14s %-16s %-14s %s\n", "#bytes",
		       "#iterations", "t_min[usec]", "t_typical[usec]",
		       "t_max[usec]", "BW[Gb/sec]");
	}
	for (bytes = o.min; bytes <= o.max; bytes *= 2)
		one_size(&e, &o, &l, bytes, samples);
	free(samples);
	free(l.done);
	ex_close(&e);
	return 0;
}
