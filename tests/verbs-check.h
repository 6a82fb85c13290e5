// SPDX-License-Identifier: MIT
/*
 * The checks of the verbs test programs (verbs-client.c, verbs-ex.c):
 * each broken rule prints "FAIL: line N: ..." with what it got and what
 * it wanted, and counts in 'failures', which the program returns.
 */
#ifndef IBEMU_TESTS_VERBS_CHECK_H
#define IBEMU_TESTS_VERBS_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                     \
	do {                                                 \
		if (!(cond)) {                               \
			printf("FAIL: line %d: ", __LINE__); \
			printf(__VA_ARGS__);                 \
			printf("\n");                        \
			failures++;                          \
		}                                            \
	} while (0)

/* A constructor that must fail with errno 'want'. */
#define CHECK_NULL_ERRNO(expr, want)                             \
	do {                                                     \
		void *p_;                                        \
		errno = 0;                                       \
		p_ = (void *)(expr);                             \
		CHECK(!p_ && errno == (want),                    \
		      "%s: got %p errno %d (%s), "               \
		      "want NULL errno %d (%s)",                 \
		      #expr, p_, errno, strerror(errno), (want), \
		      strerror(want));                           \
	} while (0)

/* A call that must return 'want'. */
#define CHECK_RET(expr, want)                                         \
	do {                                                          \
		int r_ = (expr);                                      \
		CHECK(r_ == (want), "%s: got %d, want %d", #expr, r_, \
		      (int)(want));                                   \
	} while (0)

#endif
