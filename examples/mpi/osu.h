/* SPDX-License-Identifier: MIT */
/*
 * osu.h: what the MPI micro-benchmarks of examples/mpi share: their
 * options (as the OSU micro-benchmarks spell them), the sizes they sweep,
 * the byte patterns they send and check, and their output.
 */
#ifndef IBEMU_EXAMPLES_OSU_H
#define IBEMU_EXAMPLES_OSU_H

#include <stddef.h>

/* OSU's threshold between its small- and large-message loop counts. */
#define OSU_LARGE_MESSAGE 8192

struct osu_opts {
	size_t min_size, max_size;
	int iters;	 /* timed iterations per size, small messages */
	int iters_large; /* above OSU_LARGE_MESSAGE */
	int skip;	 /* untimed warm-up iterations per size */
	int window;	 /* messages in flight (bandwidth) */
};

/*
 * Reads -m [MIN:]MAX, -i ITERS, -x WARMUP, -W WINDOW into 'o' (which holds
 * the defaults); prints the usage and returns -1 on a bad option.
 */
int osu_parse(int argc, char **argv, struct osu_opts *o, const char *usage);

/* The timed iterations for a message of 'size' bytes. */
int osu_iters(const struct osu_opts *o, size_t size);

/* The byte at offset 'i' of a message from 'from' to 'to', in 'round'. */
unsigned char osu_pattern(int from, int to, size_t i, int round);

void osu_fill(unsigned char *buf, size_t len, int from, int to, int round);

/*
 * The offset of the first byte of 'buf' that is not the pattern of
 * (from, to, round), or 'len' when all are.
 */
size_t osu_check(const unsigned char *buf, size_t len, int from, int to,
		 int round);

/*
 * Prints (rank 0) "# NAME" and the column header; every rank gets the
 * same options. 'columns' is the header after "# Size".
 */
void osu_header(int rank, const char *name, const char *columns);

/*
 * Reports a data error (from rank 'from', or a wrong result if 'from' is
 * negative) and aborts the job: a transport that delivers wrong bytes
 * must fail loudly.
 */
void osu_fail(const char *bench, size_t size, int rank, int from, size_t offset)
	__attribute__((noreturn));

/* malloc'ed, page-aligned, or exits the job. */
void *osu_alloc(size_t len);

#endif
