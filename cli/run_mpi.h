/* SPDX-License-Identifier: MIT */
/*
 * 'ibemu run --mpi' (cli/run_mpi.c): an MPI program launched by Debian's
 * Open MPI mpirun, each rank an 'ibemu exec --rank-hosts' on its HCA, with
 * the environment that lets Open MPI use the emulated HCAs (docs/mpi.md).
 */
#ifndef IBEMU_CLI_RUN_MPI_H
#define IBEMU_CLI_RUN_MPI_H

#include <stdint.h>

struct ibemu_run_job;

/*
 * Set by 'run --mpi' for the ranks: the path of the run's pipe for the
 * ranks' final clocks (/proc/PID/fd/N). mpirun closes the descriptors it
 * does not know in the processes it starts, so 'exec --rank-hosts' opens
 * the pipe again by this path and gives it to the program as 'ibemu run'
 * gives its own ranks theirs ($IBEMU_RUN_CLOCK_FD, with $IBEMU_RANK).
 */
#define IBEMU_RUN_MPI_CLOCK_PATH "IBEMU_RUN_CLOCK_PATH"

struct ibemu_run_mpi {
	const char *fabric;
	int n;			  /* ranks */
	const char *const *hosts; /* n HCA names, in rank order */
	int wall_clock;		  /* leave the ranks' clocks on wall time */
	char **args;		  /* PROG ARGS..., NULL-terminated */
	/* Takes what the ranks' libibverbs said at exit (its ranks' records
	 * and its end: ibemu__run_clock_line()); borrowed. */
	struct ibemu_run_job *job;
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
 * Meanwhile it reads the ranks' final clocks into m->job.
 */
int ibemu__run_mpi(const struct ibemu_run_mpi *m);

#endif
