/* SPDX-License-Identifier: MIT */
/*
 * ex.h: what the verbs examples share. A rank opens its HCA, registers one
 * buffer, and connects an RC QP to every other rank through the
 * bootstrap's key-value store (ibemu.h: put its LID, QPN, PSN, rkey and
 * address, fence, get the peers'), as an MPI library does through PMI.
 * Errors end the program with a message naming the rank: an example that
 * goes wrong must fail loudly.
 */
#ifndef IBEMU_EXAMPLES_EX_H
#define IBEMU_EXAMPLES_EX_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#include "ibemu.h"

/* What a rank publishes for each peer, and learns of it. */
struct ex_remote {
	uint32_t qpn, psn, rkey, lid;
	uint64_t addr;
};

struct ex {
	int rank, size;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq; /* every QP's sends and receives */
	struct ibv_port_attr port;
	int rd_atomic;	    /* outstanding READs per QP */
	unsigned char *buf; /* the registered buffer */
	size_t len;
	struct ibv_mr *mr;
	int remote_access;  /* IBV_ACCESS_REMOTE_* of the buffer and QPs */
	struct ibv_qp **qp; /* [size]: to each peer, NULL for self */
	struct ex_remote *remote; /* [size]: each peer's end */
};

/*
 * Joins the job (ibemu_init) and opens the first HCA (or $EX_DEVICE);
 * exits on failure. 'prog' names the program in messages.
 */
void ex_open(struct ex *e, const char *prog);

/*
 * Allocates and registers the zeroed buffer of 'len' bytes (once), for
 * local writes and 'remote' access (IBV_ACCESS_REMOTE_*, or 0). Under
 * ibemu, a process with memory open to remote writes that computes for a
 * while after a completion may be taken for one spinning on that memory
 * (docs/design.md §3), so ask only for what the program uses.
 */
void ex_register(struct ex *e, size_t len, int remote);

/*
 * Connects an RC QP to every other rank (collective: every rank calls
 * it): 'sq' send and 'rq' receive work requests deep.
 */
void ex_connect(struct ex *e, int sq, int rq);

/* Destroys what ex_open and ex_connect made, and leaves the job. */
void ex_close(struct ex *e);

/* Posts a receive of 'len' bytes at offset 'off' of the buffer. */
void ex_post_recv(struct ex *e, int peer, size_t off, size_t len,
		  uint64_t wr_id);

/*
 * Posts 'opcode' (SEND, RDMA_WRITE[_WITH_IMM], RDMA_READ) of 'len' bytes
 * at offset 'off' of the buffer to 'peer' ('roff': offset in the peer's
 * buffer, for RDMA); 'signaled' asks for a completion.
 */
void ex_post(struct ex *e, int peer, enum ibv_wr_opcode opcode, size_t off,
	     size_t len, size_t roff, uint64_t wr_id, int signaled);

/*
 * Waits for 'n' completions and stores them in 'wc' (may be NULL); a
 * completion in error ends the program.
 */
void ex_wait(struct ex *e, int n, struct ibv_wc *wc);

/*
 * Polls completions until every work request of 'ids' (n of them) has
 * completed; 'done' (indexed by wr_id, 'ndone' entries) records the
 * completions seen, including those of other requests, so that a later
 * call finds them. A wr_id beyond 'ndone' or a completion in error ends
 * the program.
 */
void ex_wait_ids(struct ex *e, unsigned char *done, size_t ndone,
		 const uint64_t *ids, int n);

/* Barrier over the job through the bootstrap. */
void ex_barrier(struct ex *e);

/*
 * Picoseconds: the process's virtual clock under ibemu (ibemu_now_ps),
 * else CLOCK_MONOTONIC, so the same source runs on a real cluster.
 */
uint64_t ex_now_ps(void);

/* Prints "PROG: rank R: ..." (before ibemu_init: "PROG: ...") to stderr
 * and exits 1. */
void ex_fail(const struct ex *e, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* The byte at offset 'i' of data from 'from' to 'to' in 'round'. */
unsigned char ex_pattern(int from, int to, size_t i, int round);

void ex_fill(unsigned char *p, size_t len, int from, int to, int round);

/* Fails the program unless 'p' holds the pattern of (from, to, round). */
void ex_check(const struct ex *e, const unsigned char *p, size_t len, int from,
	      int to, int round, const char *what);

/* What a run of timed iterations took, in microseconds. */
struct ex_times {
	double min, typical, max; /* typical: the median, as perftest's */
};

/* Sorts the 'n' samples (picoseconds) and summarises them. */
struct ex_times ex_times_of(uint64_t *ps, int n);

/* Reads sizes "MIN:MAX" or one size "N"; returns -1 if malformed. */
int ex_parse_sizes(const char *arg, size_t *min, size_t *max);

/*
 * The options of a sweep over sizes, which pingpong, allreduce and
 * alltoall share: -s MIN:MAX, -n ITERATIONS (at least 1), -x WARMUP (at
 * least 0). Takes getopt's option 'c' and its argument; returns -1 if
 * 'c' is none of them or its value is bad.
 */
int ex_sweep_opt(int c, const char *arg, size_t *min, size_t *max, int *iters,
		 int *skip);

#endif
