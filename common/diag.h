/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics for bad input. Every message names where the input came from
 * (file:line:column, as compilers print it) and what was expected. Loaders
 * stop at the first error and keep going after warnings.
 */
#ifndef IBEMU_DIAG_H
#define IBEMU_DIAG_H

#include <stddef.h>
#include "util.h"

/* A place in an input file; line and column count from 1. */
struct ibemu_loc {
	const char *file; /* borrowed; NULL for command-line input */
	unsigned line;
	unsigned col;
};

struct ibemu_diag {
	char *error;	 /* first error, formatted; NULL while there is none */
	char **warnings; /* formatted warnings, in order */
	size_t nwarnings;
};

void ibemu_diag_init(struct ibemu_diag *d);
void ibemu_diag_fini(struct ibemu_diag *d);

/*
 * Records an error at 'loc' unless one is already recorded (the first error
 * is the one worth reading). Returns -EINVAL so callers can write
 * 'return ibemu_diag_error(...)'.
 */
int ibemu_diag_error(struct ibemu_diag *d, const struct ibemu_loc *loc,
		     const char *fmt, ...) IBEMU_PRINTF(3, 4);
void ibemu_diag_warn(struct ibemu_diag *d, const struct ibemu_loc *loc,
		     const char *fmt, ...) IBEMU_PRINTF(3, 4);

/*
 * 'msg' without the "error: " that starts a message without a place, for
 * callers that put their own prefix before it ("traffic: ..."). Returns a
 * pointer into 'msg'.
 */
const char *ibemu_diag_what(const char *msg);

#endif
