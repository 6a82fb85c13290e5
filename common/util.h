/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by every part of ibemu: array sizes, invariant
 * checks and branch hints. Nothing here allocates or keeps state.
 */
#ifndef IBEMU_UTIL_H
#define IBEMU_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define IBEMU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define IBEMU_NONE 0xffffffffu /* "no index" for uint32_t indices */

/*
 * A broken model invariant is a bug in ibemu, never bad input: report where
 * and abort, so that tests catch it at the first wrong step.
 */
#define IBEMU_BUG_ON(cond)                                                     \
	do {                                                                   \
		if (__builtin_expect(!!(cond), 0)) {                           \
			fprintf(stderr, "ibemu: BUG at %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#define IBEMU_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* Value of hexadecimal digit 'c', or -1. */
static inline int ibemu_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Makes the array *arr of *cap elements of 'elem' bytes hold at least
 * 'need', doubling its capacity. Returns 0 or -ENOMEM (*arr untouched).
 */
int ibemu_array_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem);

#endif
