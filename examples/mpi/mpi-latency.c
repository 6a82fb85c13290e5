// SPDX-License-Identifier: MIT
/*
 * mpi-latency: MPI ping-pong latency between ranks 0 and 1, as
 * osu_latency measures it: for each size, rank 0 sends and waits for the
 * reply ITERS times; the one-way latency is half the mean round trip.
 * Timed with MPI_Wtime, which reads virtual time under 'ibemu exec'. Each
 * side checks the last message it received against the pattern its peer
 * sent.
 *
 * usage: mpirun -np 2 mpi-latency [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]
 */
#include "osu.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "[-m [MIN:]MAX] [-i ITERS] [-x WARMUP]";

/* One size: returns the one-way latency in microseconds (at rank 0). */
static double ping_pong(int rank, size_t size, int iters, int skip,
			unsigned char *out, unsigned char *in)
{
	int peer = !rank, i, count = (int)size;
	size_t bad;
	double t0 = 0;

	osu_fill(out, size, rank, peer, (int)size);
	memset(in, 0, size);
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < iters + skip; i++) {
		if (i == skip)
			t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(out, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(in, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(in, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(out, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
	}
	bad = osu_check(in, size, peer, rank, (int)size);
	if (bad < size)
		osu_fail("mpi-latency", size, rank, peer, bad);
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

int main(int argc, char **argv)
{
	struct osu_opts o = {.min_size = 1,
			     .max_size = 4 << 20,
			     .iters = 1000,
			     .iters_large = 100,
			     .skip = 10};
	unsigned char *out, *in;
	int rank, nranks;
	size_t size;
	double us;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (osu_parse(argc, argv, &o, usage) || nranks != 2) {
		if (!rank && nranks != 2)
			fprintf(stderr, "mpi-latency: needs 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	out = osu_alloc(o.max_size);
	in = osu_alloc(o.max_size);
	osu_header(rank, "MPI Latency Test", "         Latency (us)");
	for (size = o.min_size; size <= o.max_size; size *= 2) {
		us = ping_pong(rank, size, osu_iters(&o, size), o.skip, out,
			       in);
		if (!rank) {
			printf("%-10zu%18.2f\n", size, us);
			fflush(stdout);
		}
	}
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
