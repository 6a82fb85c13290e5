// SPDX-License-Identifier: MIT
/*
 * osu.c: the options, patterns and output the benchmarks of examples/mpi
 * share. The options are the OSU micro-benchmarks' (-m, -i, -x, -W) so
 * that a command line moves from one to the other unchanged.
 */
#include "osu.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_sizes(const char *arg, struct osu_opts *o)
{
	const char *colon = strchr(arg, ':');
	char *end;

	if (colon) {
		o->min_size = strtoul(arg, &end, 0);
		if (end != colon)
			return -1;
		arg = colon + 1;
	}
	o->max_size = strtoul(arg, &end, 0);
	if (*end || !o->min_size || o->min_size > o->max_size)
		return -1;
	return 0;
}

static int parse_count(const char *arg, int *out, int min)
{
	char *end;
	long v = strtol(arg, &end, 0);

	if (*end || v < min || v > 1 << 24)
		return -1;
	*out = (int)v;
	return 0;
}

int osu_parse(int argc, char **argv, struct osu_opts *o, const char *usage)
{
	int c, bad = 0;

	while (!bad && (c = getopt(argc, argv, "m:i:x:W:h")) != -1) {
		switch (c) {
		case 'm':
			bad = parse_sizes(optarg, o);
			break;
		case 'i':
			bad = parse_count(optarg, &o->iters, 1);
			o->iters_large = o->iters;
			break;
		case 'x':
			bad = parse_count(optarg, &o->skip, 0);
			break;
		case 'W':
			bad = parse_count(optarg, &o->window, 1);
			break;
		default:
			bad = -1;
		}
	}
	if (bad || optind != argc) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		return -1;
	}
	return 0;
}

int osu_iters(const struct osu_opts *o, size_t size)
{
	return size > OSU_LARGE_MESSAGE ? o->iters_large : o->iters;
}

unsigned char osu_pattern(int from, int to, size_t i, int round)
{
	return (unsigned char)(from * 31 + to * 17 + i * 7 + (i >> 8) +
			       round * 3 + 1);
}

void osu_fill(unsigned char *buf, size_t len, int from, int to, int round)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = osu_pattern(from, to, i, round);
}

size_t osu_check(const unsigned char *buf, size_t len, int from, int to,
		 int round)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != osu_pattern(from, to, i, round))
			break;
	return i;
}

void osu_header(int rank, const char *name, const char *columns)
{
	if (rank)
		return;
	printf("# %s (ibemu examples/mpi, in the manner of the OSU "
	       "micro-benchmarks)\n",
	       name);
	printf("# Size %s\n", columns);
	fflush(stdout);
}

void osu_fail(const char *bench, size_t size, int rank, int from, size_t offset)
{
	if (from < 0)
		fprintf(stderr,
			"%s: rank %d: wrong result of %zu bytes at offset "
			"%zu\n",
			bench, rank, size, offset);
	else
		fprintf(stderr,
			"%s: rank %d: wrong data from rank %d in a %zu-byte "
			"message at offset %zu\n",
			bench, rank, from, size, offset);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

void *osu_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len ? len : 1)) {
		fprintf(stderr, "out of memory (%zu bytes)\n", len);
		MPI_Abort(MPI_COMM_WORLD, 1);
		exit(1);
	}
	memset(p, 0, len);
	return p;
}
