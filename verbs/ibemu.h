/* SPDX-License-Identifier: MIT */
/*
 * ibemu.h: what a program may ask of ibemu's virtual time (docs/design.md
 * §3). Plain C, no other header of ibemu needed.
 *
 * Under 'ibemu exec' a process's verbs run on an emulated HCA whose time
 * is virtual: it advances only while every attached process waits (polls
 * an empty CQ, blocks in ibv_get_cq_event or ibv_get_async_event), and
 * the work a process posts is stamped with its own virtual clock, the
 * time of the completion or event that last resumed it plus the compute
 * time it declared. These two functions read and move that clock. They
 * live in ibemu's libibverbs.so.1 (symbol version IBEMU_1.0) and are
 * declared weak here: a program built against the system's libibverbs
 * links without them, and on real hardware (or outside 'ibemu exec') their
 * addresses are NULL, so test before calling:
 *
 *	if (ibemu_now_ps)
 *		printf("%llu\n", (unsigned long long)ibemu_now_ps());
 */
#ifndef IBEMU_H
#define IBEMU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The process's virtual clock, in picoseconds since the fabric started. */
uint64_t ibemu_now_ps(void) __attribute__((weak));

/*
 * Declares 'ps' picoseconds of computation: the clock moves forward, so
 * work posted next is stamped that much later.
 */
void ibemu_compute_ps(uint64_t ps) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
