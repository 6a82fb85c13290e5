/* SPDX-License-Identifier: MIT */
/*
 * 'ibemu run' inside (cli/run*.c): a job is N ranks, each a program with
 * its argv, an HCA and its own environment; run.c places the ranks on
 * HCAs, builds each rank's argv and environment, then launches and
 * supervises them (run_procs.c): output prefixed line by line, every rank
 * ended when one fails or on a signal, the worst status returned. A mode
 * that launches otherwise (--mpi) builds its own job and hands it to the
 * same supervisor.
 */
#ifndef IBEMU_CLI_RUN_H
#define IBEMU_CLI_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Wall-clock milliseconds between SIGTERM and SIGKILL to the ranks. */
#define IBEMU_RUN_GRACE_MS 3000u

/* An environment variable a rank gets, besides what 'exec' sets. */
struct ibemu_run_env {
	const char *name;
	char *value; /* owned */
};

#define IBEMU_RUN_MAX_ENV 8

/* One rank: where it runs, what, and with what. */
struct ibemu_run_rank {
	int rank;
	const char *host; /* HCA name (borrowed from the job's list) */
	char **argv;	  /* NULL-terminated, borrowed */
	struct ibemu_run_env env[IBEMU_RUN_MAX_ENV];
	unsigned nenv;
	/* Filled by the supervisor. */
	pid_t pid;
	int status;	 /* as waitpid() gives it */
	int exited;	 /* waited for */
	int ended_by_us; /* ended by the supervisor's signal */
	/* What its libibverbs said at exit (the latest of its processes'):
	 * its final clock, the time it waited, the compute it declared. */
	int reported;
	uint64_t end_ps, waited_ps, compute_ps;
};

struct ibemu_run_job {
	const char *fabric;
	char id[64]; /* IBEMU_JOB: unique in the fabric */
	int n;
	struct ibemu_run_rank *ranks; /* n of them, owned */
	int prefix;		      /* "[rank] " before each line */
	int wall_clock;		      /* leave the ranks' clocks on wall time */
	uint64_t vstart;	      /* the fabric's virtual time at launch */
	/* Filled by the supervisor: the latest final clock a rank's
	 * libibverbs reported at its exit (IBEMU_RUN_CLOCK_FD), or 0. */
	uint64_t vend;
};

/* Adds NAME=value ('value' formatted, copied) to the environment of rank
 * 'r'; 0 or -ENOMEM/-E2BIG. */
int ibemu__run_rank_setenv(struct ibemu_run_rank *r, const char *name,
			   const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An HCA of the fabric and the switch its first cabled port reaches. */
struct ibemu_run_hca {
	char name[64];
	char leaf[64];
};

/* How ranks are placed without --hosts (run.c's --map says it in full). */
enum ibemu_run_map {
	IBEMU_RUN_MAP_SPREAD, /* round robin over the leaves */
	IBEMU_RUN_MAP_BLOCK,  /* a leaf's HCAs before the next leaf's */
	IBEMU_RUN_MAP_CYCLIC, /* the HCAs in name order */
};

/*
 * The HCAs of ranks 0..*n-1 on fabric 'fabric', from the daemon: as
 * 'hosts' (a --hosts LIST; then *n, if 0, becomes its length) names them,
 * else as 'map' places them. Returns 0 and the fabric's HCAs in *out
 * (malloc'd, the first *n in rank order), or prints why and returns the
 * exit status (more ranks than HCAs, an unknown or repeated host).
 */
int ibemu__run_place(const char *fabric, const char *hosts, int map, int *n,
		     struct ibemu_run_hca **out);

/*
 * Fills job->ranks for job->n ranks on HCAs 'h' (borrowed until the job
 * ends), each running 'argv' (borrowed) with IBEMU_RANK, IBEMU_SIZE and
 * IBEMU_JOB (job->id, made here) set; 0 or -ENOMEM. A mode may then add
 * environment (ibemu__run_rank_setenv) or change a rank's argv.
 * ibemu__run_job_fini() frees what it made.
 */
int ibemu__run_job_init(struct ibemu_run_job *job,
			const struct ibemu_run_hca *h, char **argv);
void ibemu__run_job_fini(struct ibemu_run_job *job);

/*
 * Launches every rank of 'job' (each child binds to its HCA as 'ibemu
 * exec' does, sets its environment and becomes its program) and
 * supervises them until all are gone. Returns the exit status of the run:
 * the worst of the ranks' (128+signal for a rank killed by one), or 128 +
 * the signal that ended the run; messages name the rank, host and status.
 */
int ibemu__run_supervise(struct ibemu_run_job *job);

/* Takes one line "RANK CLOCK WAITED COMPUTE" a rank's libibverbs wrote at
 * exit (verbs/clock.c) into 'job': its rank's record (the latest clock of
 * its processes) and the run's end. Lines of no rank of 'job' only move
 * the end. */
void ibemu__run_clock_line(struct ibemu_run_job *job, const char *line);

/*
 * --plot (run_plot.c): _begin makes a directory for the ranks' traces in
 * 'dir' and names it to them ($IBEMU_RUN_TRACE); _write draws the timeline
 * of 'job' from its start to 'vend' into 'svg'; _end removes the traces.
 * _begin and _write return 0 or the exit status, having said why.
 */
int ibemu__run_plot_begin(char *dir, size_t len);
int ibemu__run_plot_write(const char *svg, const char *dir,
			  const struct ibemu_run_job *job, uint64_t vend);
void ibemu__run_plot_end(const char *dir);

#endif
