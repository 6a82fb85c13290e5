// SPDX-License-Identifier: MIT
/*
 * An MPI program that times itself with the TSC, as benchmarks do, for
 * tests/integration/test_mpi.py (built there with the system's mpicc):
 * ranks 0 and 1 make ITERS ping-pongs of 8 bytes, timed by rdtsc (ticks
 * of /proc/cpuinfo's "cpu MHz", as perftest converts them) and by
 * MPI_Wtime. Its libibverbs comes with Open MPI's transports, in
 * MPI_Init, so the TSC reads virtual time only if every thread's trap
 * was set then (vtime/threads.c). Rank 0 prints "rdtsc_ns N" and
 * "wtime_ns N", the one-way latency by each.
 *
 * usage: mpirun -np 2 mpi-tsc
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "vtime-clients.h"

#define ITERS 100
#define SKIP  10

int main(int argc, char **argv)
{
	char buf[8] = {0};
	int rank, size, i, peer;
	uint64_t t0 = 0;
	double w0 = 0, w, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		MPI_Finalize();
		return 2;
	}
	peer = !rank;
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < ITERS + SKIP; i++) {
		if (i == SKIP) {
			w0 = MPI_Wtime();
			t0 = tsc_read();
		}
		if (rank == 0) {
			MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
	}
	t = (double)(tsc_read() - t0) / (tsc_cpuinfo_khz() / 1000.0) * 1000;
	w = (MPI_Wtime() - w0) * 1e9;
	if (rank == 0) {
		printf("rdtsc_ns %.0f\n", t / (2.0 * ITERS));
		printf("wtime_ns %.0f\n", w / (2.0 * ITERS));
	}
	MPI_Finalize();
	return 0;
}
