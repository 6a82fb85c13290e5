// SPDX-License-Identifier: MIT
/*
 * mpi-alltoall: MPI_Alltoall latency over sizes (bytes per block, as
 * osu_alltoall counts them): ITERS exchanges between barriers, each rank
 * timing its own; printed are the average, minimum and maximum of the
 * ranks' mean times. The block from rank s to rank d carries the pattern
 * of (s, d, round) and every block received is checked.
 *
 * usage: mpirun -np N mpi-alltoall [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]
 */
#include "osu.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "[-m [MIN:]MAX] [-i ITERS] [-x WARMUP]";

static void fill_blocks(unsigned char *out, size_t size, int rank, int nranks,
			int round)
{
	int d;

	for (d = 0; d < nranks; d++)
		osu_fill(out + (size_t)d * size, size, rank, d, round);
}

static void check_blocks(const unsigned char *in, size_t size, int rank,
			 int nranks, int round)
{
	size_t bad;
	int s;

	for (s = 0; s < nranks; s++) {
		bad = osu_check(in + (size_t)s * size, size, s, rank, round);
		if (bad < size)
			osu_fail("mpi-alltoall", size, rank, s, bad);
	}
}

/* One size: this rank's mean time per exchange, in microseconds. */
static double exchange_loop(int rank, int nranks, size_t size, int iters,
			    int skip, unsigned char *out, unsigned char *in)
{
	double t0, t = 0;
	int k;

	for (k = 0; k < iters + skip; k++) {
		/* The round in the pattern: a stale block fails the check. */
		fill_blocks(out, size, rank, nranks, k);
		memset(in, 0, size * (size_t)nranks);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Alltoall(out, (int)size, MPI_BYTE, in, (int)size, MPI_BYTE,
			     MPI_COMM_WORLD);
		if (k >= skip)
			t += MPI_Wtime() - t0;
		check_blocks(in, size, rank, nranks, k);
	}
	return t * 1e6 / iters;
}

int main(int argc, char **argv)
{
	struct osu_opts o = {.min_size = 1,
			     .max_size = 1 << 20,
			     .iters = 1000,
			     .iters_large = 100,
			     .skip = 10};
	double mine, sum, lo, hi;
	unsigned char *in, *out;
	int rank, nranks;
	size_t size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (osu_parse(argc, argv, &o, usage)) {
		MPI_Finalize();
		return 2;
	}
	out = osu_alloc(o.max_size * (size_t)nranks);
	in = osu_alloc(o.max_size * (size_t)nranks);
	osu_header(rank, "MPI All-to-All Personalized Exchange Latency Test",
		   "      Avg Latency(us)      Min Latency(us)      "
		   "Max Latency(us)  Iterations");
	for (size = o.min_size; size <= o.max_size; size *= 2) {
		mine = exchange_loop(rank, nranks, size, osu_iters(&o, size),
				     o.skip, out, in);
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
