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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/*
 * For libraries that hand the program work the verbs calls do not show
 * (ibemu's librdmacm: its connection events). While any such work is
 * queued and not yet taken, the process counts as running, so virtual
 * time does not pass it by: ibemu_outside_work(+1) when an item is
 * queued, ibemu_outside_work(-1) when the program takes it (or it is
 * dropped). A thread about to block until such work comes calls
 * ibemu_outside_wait(1), and ibemu_outside_wait(0) once it woke: it
 * counts as waiting meanwhile, as in ibv_get_cq_event().
 */
void ibemu_outside_work(int delta) __attribute__((weak));
void ibemu_outside_wait(int begin) __attribute__((weak));

/*
 * The bootstrap of 'ibemu run' (what PMI gives an MPI process): the
 * rank's place in the job, a key-value store to exchange QP numbers and
 * LIDs through the fabric's daemon, a fence that makes every value put
 * before it visible to all, and a barrier. Weak like the clock functions
 * (test ibemu_init before calling; on a real cluster a small shim over
 * PMI can define them, examples/README.md). Functions return 0 (or a
 * length) on success, -1 with errno on failure; any thread may call them,
 * one request at a time.
 *
 * Costs in virtual time: a put or a get moves the caller's clock by a
 * few microseconds (verbs/cost.h); a fence or a barrier completes when
 * the last rank arrives, at the latest arrival clock plus ceil(log2 N)
 * rounds of 2 us (and, for a fence, 80 ps per byte put since the last
 * one), and every rank resumes at that time. A rank that waits in one
 * counts as waiting under the time rule.
 *
 *	#include <ibemu.h>
 *
 *	struct ibv_port_attr pa;          // after ibv_query_port()
 *	struct { uint16_t lid; uint32_t qpn; } me, peer;
 *	if (!ibemu_init || ibemu_init())
 *		return 1;                 // not under 'ibemu run'
 *	me.lid = pa.lid;
 *	me.qpn = qp->qp_num;
 *	ibemu_kv_put("addr", &me, sizeof(me));
 *	ibemu_kv_fence();
 *	ibemu_kv_get((ibemu_rank() + 1) % ibemu_size(), "addr", &peer,
 *		     sizeof(peer));
 *	... connect the QP to peer.lid, peer.qpn; exchange data ...
 *	ibemu_barrier();
 *	ibemu_finalize();
 */
#define IBEMU_KV_KEY_MAX 64   /* bytes of a key, with its NUL */
#define IBEMU_KV_VAL_MAX 1024 /* bytes of a value */

/*
 * Joins the job: 0, or -1 with errno ENOENT (not under 'ibemu run':
 * IBEMU_RANK, IBEMU_SIZE or IBEMU_JOB unset), EINVAL (they disagree),
 * ECONNREFUSED (the fabric's daemon is gone), EEXIST (this rank joined
 * from another process). A second call does nothing.
 */
int ibemu_init(void) __attribute__((weak));
/* This rank, 0..size-1, and the job's size; -1 before ibemu_init(). */
int ibemu_rank(void) __attribute__((weak));
int ibemu_size(void) __attribute__((weak));
/* The node name of this rank's HCA ("hca07"); NULL before ibemu_init(). */
const char *ibemu_host(void) __attribute__((weak));
/*
 * Puts 'len' bytes (at most IBEMU_KV_VAL_MAX) under (this rank, 'key'),
 * replacing what this rank put under 'key' before; others see it after
 * the next fence. EINVAL: a key empty or of IBEMU_KV_KEY_MAX bytes or
 * more, a value too long; ENOSPC: too many keys (4,096 a rank).
 */
int ibemu_kv_put(const char *key, const void *val, size_t len)
	__attribute__((weak));
/* Collective: every put before it, by any rank, is visible after it. */
int ibemu_kv_fence(void) __attribute__((weak));
/*
 * Copies at most 'cap' bytes of rank 'rank''s value for 'key' (as the
 * last fence left it) to 'val'; returns its whole length, or -1 with
 * errno ENOENT (none), EINVAL (no such rank, a bad key).
 */
ssize_t ibemu_kv_get(int rank, const char *key, void *val, size_t cap)
	__attribute__((weak));
/* Collective: returns when every rank has called it. EPIPE: a rank of the
 * job has left (finalized or exited) and never will. */
int ibemu_barrier(void) __attribute__((weak));
/* Leaves the job (collectives of the others then fail with EPIPE). */
void ibemu_finalize(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
