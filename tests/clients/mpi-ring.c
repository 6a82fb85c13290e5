// SPDX-License-Identifier: MIT
/*
 * An MPI program for tests/integration/test_mpi.py, built there with the
 * system's mpicc (Open MPI is not a build dependency): each rank sends a
 * 64 KiB message of its own pattern to the next rank and checks the one
 * from the one before, four rounds, then an MPI_Allreduce of the ranks.
 * Prints "rank=R bad=N sum=S"; exits 0 when N is 0 and S is right.
 *
 * usage: mpirun -np N mpi-ring
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN    (64 * 1024)
#define ROUNDS 4

static unsigned char pattern(int rank, int i, int round)
{
	return (unsigned char)(rank * 31 + i * 7 + round);
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
	printf("rank=%d bad=%d sum=%ld\n", rank, bad, sum);
	free(out);
	free(in);
	MPI_Finalize();
	return bad != 0;
}
