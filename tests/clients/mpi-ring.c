// SPDX-License-Identifier: MIT
/*
 * An MPI program for tests/integration/test_mpi.py, built there with the
 * system's mpicc (Open MPI is not a build dependency): each rank sends a
 * 64 KiB message of its own pattern to the next rank and checks the one
 * from the one before, four rounds, then an MPI_Allreduce of the ranks and
 * an MPI_Alltoall of A2A_LEN ints to each rank, each naming its sender,
 * receiver and place. Prints "rank=R bad=N sum=S"; exits 0 when N is 0
 * (every message and every value checked) and S is right.
 *
 * usage: mpirun -np N mpi-ring
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN    (64 * 1024)
#define ROUNDS 4
/* Ints each rank sends each other in the MPI_Alltoall. */
#define A2A_LEN 256

static unsigned char pattern(int rank, int i, int round)
{
	return (unsigned char)(rank * 31 + i * 7 + round);
}

static int a2a_value(int from, int to, int i)
{
	return from * 1000003 + to * 1009 + i;
}

/* An MPI_Alltoall whose every value is checked: the count of wrong ones. */
static int alltoall_bad(int rank, int size)
{
	int *out = malloc(sizeof(int) * A2A_LEN * size);
	int *in = calloc((size_t)A2A_LEN * size, sizeof(int));
	int bad = 0, peer, i;

	if (!out || !in) {
		free(out);
		free(in);
		return 1;
	}
	for (peer = 0; peer < size; peer++)
		for (i = 0; i < A2A_LEN; i++)
			out[peer * A2A_LEN + i] = a2a_value(rank, peer, i);
	MPI_Alltoall(out, A2A_LEN, MPI_INT, in, A2A_LEN, MPI_INT,
		     MPI_COMM_WORLD);
	for (peer = 0; peer < size; peer++)
		for (i = 0; i < A2A_LEN; i++)
			bad += in[peer * A2A_LEN + i] !=
			       a2a_value(peer, rank, i);
	free(out);
	free(in);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0, round, i, from, to;
	unsigned char *out, *in;
	long mine, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	out = malloc(LEN);
	in = malloc(LEN);
	from = (rank + size - 1) % size;
	to = (rank + 1) % size;
	for (round = 0; round < ROUNDS && out && in; round++) {
		for (i = 0; i < LEN; i++)
			out[i] = pattern(rank, i, round);
		memset(in, 0, LEN);
		MPI_Sendrecv(out, LEN, MPI_BYTE, to, round, in, LEN, MPI_BYTE,
			     from, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 0; i < LEN; i++)
			if (in[i] != pattern(from, i, round))
				break;
		bad += i < LEN;
	}
	mine = rank + 1;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (!out || !in || sum != (long)size * (size + 1) / 2)
		bad++;
	bad += alltoall_bad(rank, size);
	printf("rank=%d bad=%d sum=%ld\n", rank, bad, sum);
	free(out);
	free(in);
	MPI_Finalize();
	return bad != 0;
}
