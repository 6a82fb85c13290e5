/* SPDX-License-Identifier: MIT */
/*
 * 'ibemu run --mpi' (cli/run_mpi.c): an MPI program launched by Debian's
 * Open MPI mpirun, each rank an 'ibemu exec --rank-hosts' on its HCA, with
 * the environment that lets Open MPI use the emulated HCAs (docs/mpi.md).
 */
#ifndef IBEMU_CLI_RUN_MPI_H
#define IBEMU_CLI_RUN_MPI_H

#include <stdint.h>

struct ibemu_run_mpi {
	const char *fabric;
	int n;			  /* ranks */
	const char *const *hosts; /* n HCA names, in rank order */
	int wall_clock;		  /* leave the ranks' clocks on wall time */
	char **args;		  /* PROG ARGS..., NULL-terminated */
};

/*
 * Sets what mpirun and the ranks it starts inherit, each variable unless
 * the user set it: the pml (ucx), for ob1 the btl (self,openib) and
 * openib's settings, for ucx the btl (self) and UCX_TLS (self,rc_verbs,
 * ud_verbs: no shared memory, no TCP). Returns 0 or -errno.
 */
int ibemu__run_mpi_setenv(void);

/*
 * mpirun's argv for 'm' (NULL-terminated, malloc'd strings in one
 * malloc'd array: ibemu__run_mpi_argv_free()); NULL on ENOMEM. 'ibemu' is
 * the path of this ibemu, which each rank runs.
 */
char **ibemu__run_mpi_argv(const struct ibemu_run_mpi *m, const char *ibemu);
void ibemu__run_mpi_argv_free(char **argv);

/*
 * Runs 'm' through mpirun and waits for it: returns its exit status (128 +
 * the signal that ended it), or prints why it could not start and returns
 * 1; a SIGINT or SIGTERM to ibemu goes to mpirun, which ends every rank.
 */
int ibemu__run_mpi(const struct ibemu_run_mpi *m);

#endif
