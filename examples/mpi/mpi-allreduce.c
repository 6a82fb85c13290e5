// SPDX-License-Identifier: MIT
/*
 * mpi-allreduce: MPI_Allreduce latency over sizes, as osu_allreduce
 * measures it: for each size (bytes of 32-bit integers), ITERS reductions
 * (MPI_SUM) between barriers, each rank timing its own; printed are the
 * average over ranks of the mean time per reduction, and the minimum and
 * maximum of the ranks' means. Rank r contributes r + i + 1 at index i of
 * round k (plus k), so each sum is known and every element is checked.
 *
 * usage: mpirun -np N mpi-allreduce [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]
 */
#include "osu.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char usage[] = "[-m [MIN:]MAX] [-i ITERS] [-x WARMUP]";

static int32_t contribution(int rank, size_t i, int round)
{
	return (int32_t)(rank + 1 + (int)(i % 1000) + round);
}

static void check_sums(const int32_t *sum, size_t count, int rank, int nranks,
		       int round)
{
	int64_t n = nranks, want;
	size_t i;

	for (i = 0; i < count; i++) {
		/* sum over r of (r + 1 + i % 1000 + round) */
		want = n * (n + 1) / 2 + n * (int64_t)(i % 1000 + round);
		if (sum[i] != (int32_t)want)
			osu_fail("mpi-allreduce", count * sizeof(*sum), rank,
				 -1, i * sizeof(*sum));
	}
}

/* One size: this rank's mean time per reduction, in microseconds. */
static double reduce_loop(int rank, int nranks, size_t count, int iters,
			  int skip, int32_t *in, int32_t *out)
{
	double t0 = 0, t = 0;
	size_t i;
	int k;

	for (k = 0; k < iters + skip; k++) {
		for (i = 0; i < count; i++)
			in[i] = contribution(rank, i, k);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Allreduce(in, out, (int)count, MPI_INT32_T, MPI_SUM,
			      MPI_COMM_WORLD);
		if (k >= skip)
			t += MPI_Wtime() - t0;
		check_sums(out, count, rank, nranks, k);
	}
	return t * 1e6 / iters;
}

int main(int argc, char **argv)
{
	struct osu_opts o = {.min_size = 4,
			     .max_size = 1 << 20,
			     .iters = 1000,
			     .iters_large = 100,
			     .skip = 10};
	double mine, sum, lo, hi;
	int rank, nranks;
	int32_t *in, *out;
	size_t size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (osu_parse(argc, argv, &o, usage)) {
		MPI_Finalize();
		return 2;
	}
	if (o.min_size < sizeof(*in))
		o.min_size = sizeof(*in);
	in = osu_alloc(o.max_size);
	out = osu_alloc(o.max_size);
	osu_header(rank, "MPI Allreduce Latency Test",
		   "      Avg Latency(us)      Min Latency(us)      "
		   "Max Latency(us)  Iterations");
	for (size = o.min_size; size <= o.max_size; size *= 2) {
		mine = reduce_loop(rank, nranks, size / sizeof(*in),
				   osu_iters(&o, size), o.skip, in, out);
		MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0,
			   MPI_COMM_WORLD);
		MPI_Reduce(&mine, &lo, 1, MPI_DOUBLE, MPI_MIN, 0,
			   MPI_COMM_WORLD);
		MPI_Reduce(&mine, &hi, 1, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		if (!rank) {
			printf("%-10zu%21.2f%21.2f%21.2f%12d\n", size,
			       sum / nranks, lo, hi, osu_iters(&o, size));
			fflush(stdout);
		}
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
