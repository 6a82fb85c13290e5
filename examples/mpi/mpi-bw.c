// SPDX-License-Identifier: MIT
/*
 * mpi-bw: MPI bandwidth from rank 0 to rank 1, as osu_bw measures it:
 * for each size, rank 0 posts a window of nonblocking sends (64 by
 * default), rank 1 the matching receives, and rank 1 acknowledges each
 * window with a 4-byte message; bandwidth is the bytes of all windows
 * over the time they took, in MB/s (10^6 bytes). Timed with MPI_Wtime
 * (virtual under 'ibemu exec'). Every message of a window has its own
 * receive buffer up to 64 MiB in flight; rank 1 checks each.
 *
 * usage: mpirun -np 2 mpi-bw [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-W WINDOW]
 */
#include "osu.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "[-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-W WINDOW]";

/* Beyond this much in flight, the messages of a window share buffers. */
#define BW_BUFFERS_MAX (64u << 20)

struct bw {
	int rank, window, slots; /* 'slots' buffers, used round-robin */
	unsigned char *buf;
	MPI_Request *reqs;
};

static unsigned char *slot(struct bw *b, size_t size, int i)
{
	return b->buf + (size_t)(i % b->slots) * size;
}

static void one_window(struct bw *b, size_t size, int round)
{
	int i, count = (int)size, ack = 0;

	for (i = 0; i < b->window; i++) {
		if (b->rank == 0)
			MPI_Isend(slot(b, size, i), count, MPI_BYTE, 1, 100,
				  MPI_COMM_WORLD, &b->reqs[i]);
		else
			MPI_Irecv(slot(b, size, i), count, MPI_BYTE, 0, 100,
				  MPI_COMM_WORLD, &b->reqs[i]);
	}
	MPI_Waitall(b->window, b->reqs, MPI_STATUSES_IGNORE);
	if (b->rank == 0)
		MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(&round, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
}

static void check_window(struct bw *b, size_t size)
{
	int i;
	size_t bad;

	for (i = 0; i < b->slots && i < b->window; i++) {
		bad = osu_check(slot(b, size, i), size, 0, 1, (int)size + i);
		if (bad < size)
			osu_fail("mpi-bw", size, 1, 0, bad);
	}
}

/* One size: returns the bandwidth in MB/s (at rank 0). */
static double bandwidth(struct bw *b, size_t size, int iters, int skip)
{
	int i;
	double t0 = 0;

	b->slots = (int)(BW_BUFFERS_MAX / size);
	if (b->slots > b->window)
		b->slots = b->window;
	if (b->slots < 1)
		b->slots = 1;
	for (i = 0; i < b->slots; i++) {
		if (b->rank == 0)
			osu_fill(slot(b, size, i), size, 0, 1, (int)size + i);
		else
			memset(slot(b, size, i), 0, size);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < iters + skip; i++) {
		if (i == skip)
			t0 = MPI_Wtime();
		one_window(b, size, i);
	}
	if (b->rank == 1)
		check_window(b, size);
	return (double)size * b->window * iters / (MPI_Wtime() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	struct osu_opts o = {.min_size = 1,
			     .max_size = 4 << 20,
			     .iters = 100,
			     .iters_large = 20,
			     .skip = 10,
			     .window = 64};
	struct bw b;
	int nranks;
	size_t size, bytes;
	double mbs;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (osu_parse(argc, argv, &o, usage) || nranks != 2) {
		if (!b.rank && nranks != 2)
			fprintf(stderr, "mpi-bw: needs 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	b.window = o.window;
	bytes = o.max_size * (size_t)o.window;
	if (bytes > BW_BUFFERS_MAX)
		bytes = BW_BUFFERS_MAX > o.max_size ? BW_BUFFERS_MAX
						    : o.max_size;
	b.buf = osu_alloc(bytes);
	b.reqs = osu_alloc(sizeof(*b.reqs) * (size_t)o.window);
	osu_header(b.rank, "MPI Bandwidth Test", "     Bandwidth (MB/s)");
	for (size = o.min_size; size <= o.max_size; size *= 2) {
		mbs = bandwidth(&b, size, osu_iters(&o, size), o.skip);
		if (!b.rank) {
			printf("%-10zu%21.2f\n", size, mbs);
			fflush(stdout);
		}
	}
	free(b.buf);
	free(b.reqs);
	MPI_Finalize();
	return 0;
}
