// SPDX-License-Identifier: MIT
/*
 * The process's virtual clock and what the library tells the daemon of
 * it (docs/design.md §3, proto/verbs_proto.h's context page): the time
 * of the completion or event that last resumed the process, plus the
 * compute time it declared (ibemu.h). Work it posts is stamped with it.
 * One clock per process, whatever the number of contexts; each context's
 * page carries the last value the library published there, which is never
 * ahead of the clock (a stale one only makes the daemon wait longer).
 * Whether the process waits is waiting.c's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost.h"
#include "ibemu.h"
#include "sess_proto.h"
#include "verbs_int.h"

static uint64_t proc_clock;
/*
 * What the clock's moves were, for 'ibemu run --report': the leaps to a
 * completion, an event or the end of a collective later than the clock
 * (time spent waiting), and the compute time declared. The rest of its
 * advance is the calls' costs.
 */
static uint64_t waited_ps, computed_ps;

/*
 * The clock starts at the fabric's time when `ibemu exec` ran the program
 * (it says so in the environment), not at 0: the program's own clocks
 * (vtime/) read it before a device is opened, and it must not go back
 * when the first context moves it to the fabric's time then.
 */
/* libibemu-vtime.so's, when `ibemu exec` preloaded it (vtime/vtime.c). */
extern void ibemu_vtime_verbs_loaded(uint64_t (*now)(void),
				     void (*compute)(uint64_t))
	__attribute__((weak));

__attribute__((constructor)) static void clock_start(void)
{
	const char *start = getenv(IBEMU_SESS_ENV_VTIME_START);

	if (start)
		__atomic_fetch_add(&proc_clock, strtoull(start, NULL, 10),
				   __ATOMIC_ACQ_REL);
	/* A plugin brought us (MPI_Init): the program's clocks follow
	 * this one from now on. */
	if (ibemu_vtime_verbs_loaded)
		ibemu_vtime_verbs_loaded(ibemu_now_ps, ibemu_compute_ps);
}

/*
 * Under 'ibemu run' the process's final clock goes to the run's pipe: one
 * write of less than PIPE_BUF bytes, whole whatever the other ranks do.
 * The variable names the pipe by fd and inode: a process that closed the
 * fd and opened something else under its number is not written to.
 */
__attribute__((destructor)) static void clock_report(void)
{
	const char *var = getenv(IBEMU_SESS_ENV_CLOCK_FD);
	unsigned long long ino;
	char line[96];
	int n, fd, saved = errno;
	struct stat st;

	if (!var || sscanf(var, "%d:%llu", &fd, &ino) != 2 || fstat(fd, &st) ||
	    !S_ISFIFO(st.st_mode) || st.st_ino != ino)
		return;
	n = snprintf(line, sizeof(line), "%s %llu %llu %llu\n",
		     getenv(IBEMU_SESS_ENV_RANK) ? getenv(IBEMU_SESS_ENV_RANK)
						 : "-1",
		     (unsigned long long)__atomic_load_n(&proc_clock,
							 __ATOMIC_ACQUIRE),
		     (unsigned long long)__atomic_load_n(&waited_ps,
							 __ATOMIC_ACQUIRE),
		     (unsigned long long)__atomic_load_n(&computed_ps,
							 __ATOMIC_ACQUIRE));
	if (write(fd, line, (size_t)n) < 0) {
		/* The run is gone: nobody to tell. */
	}
	errno = saved;
}

uint64_t ibemu__verbs_clock(void)
{
	return __atomic_load_n(&proc_clock, __ATOMIC_ACQUIRE);
}

static void clock_publish(struct ibemu_verbs_context *ctx, uint64_t t)
{
	if (__atomic_load_n(&ctx->page->clock_ps, __ATOMIC_RELAXED) != t)
		__atomic_store_n(&ctx->page->clock_ps, t, __ATOMIC_RELEASE);
}

void ibemu__verbs_clock_at_least(struct ibemu_verbs_context *ctx, uint64_t t)
{
	uint64_t cur = __atomic_load_n(&proc_clock, __ATOMIC_ACQUIRE);

	while (cur < t &&
	       !__atomic_compare_exchange_n(&proc_clock, &cur, t, 1,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	if (cur < t) {
		__atomic_fetch_add(&waited_ps, t - cur, __ATOMIC_ACQ_REL);
		ibemu__verbs_trace(IBEMU_VERBS_TRACE_WAIT, cur, t);
	}
	clock_publish(ctx, cur < t ? t : cur);
}

void ibemu__verbs_clock_publish(struct ibemu_verbs_context *ctx)
{
	clock_publish(ctx, ibemu__verbs_clock());
}

void ibemu__verbs_charge(struct ibemu_verbs_context *ctx,
			 enum ibemu_verbs_cost c, uint64_t units)
{
	uint64_t cost = ibemu_verbs_cost_ps(c, units);
	uint64_t t = __atomic_add_fetch(&proc_clock, cost, __ATOMIC_ACQ_REL);

	if (c == IBEMU_VCOST_POST_SEND)
		ibemu__verbs_trace(IBEMU_VERBS_TRACE_SEND, t - cost, t);
	else if (c == IBEMU_VCOST_POLL_HIT)
		ibemu__verbs_trace(IBEMU_VERBS_TRACE_RECV, t - cost, t);
	/* Published at once: the daemon may run the engine that far. */
	if (ctx && ctx->page)
		clock_publish(ctx, t);
}

void ibemu__verbs_charge_local(struct ibemu_verbs_context *ctx,
			       enum ibemu_verbs_cost c)
{
	ibemu__verbs_charge(ctx, c, 0);
	ibemu__verbs_calling(ctx);
	/* No message goes to the daemon: one that sleeps must still see
	 * the clock move (a kick only when it published that it sleeps). */
	if (ctx->page->rule)
		ibemu__verbs_kick(ctx);
}

static void publish_cb(struct ibemu_verbs_context *ctx, void *arg)
{
	(void)arg;
	clock_publish(ctx, ibemu__verbs_clock());
}

void ibemu__verbs_clock_raise(uint64_t t)
{
	uint64_t cur = __atomic_load_n(&proc_clock, __ATOMIC_ACQUIRE);

	while (cur < t &&
	       !__atomic_compare_exchange_n(&proc_clock, &cur, t, 1,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	if (cur < t) {
		__atomic_fetch_add(&waited_ps, t - cur, __ATOMIC_ACQ_REL);
		ibemu__verbs_trace(IBEMU_VERBS_TRACE_WAIT, cur, t);
	}
	ibemu__verbs_each_context(publish_cb, NULL);
}

/* The program's reads of its virtual clock (ibemu_now_ps). */
static uint64_t clock_reads;

void ibemu__verbs_clock_caught(struct ibemu_verbs_context *ctx, uint64_t handed)
{
	uint64_t t = __atomic_load_n(&ctx->page->land_ps, __ATOMIC_ACQUIRE);
	uint64_t was = __atomic_load_n(&ctx->caught_handed, __ATOMIC_RELAXED);

	if (t > ibemu__verbs_clock())
		ibemu__verbs_clock_at_least(ctx, t);
	if (was >= handed)
		return;
	/* Threads race here: the count only goes up. */
	while (was < handed && !__atomic_compare_exchange_n(
				       &ctx->caught_handed, &was, handed, 1,
				       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	__atomic_store_n(&ctx->reads_at_catch,
			 __atomic_load_n(&clock_reads, __ATOMIC_SEQ_CST),
			 __ATOMIC_RELAXED);
}

void ibemu__verbs_clock_observed(struct ibemu_verbs_context *ctx, int by_call)
{
	uint64_t h = __atomic_load_n(&ctx->caught_handed, __ATOMIC_RELAXED);
	uint64_t reads = __atomic_load_n(&clock_reads, __ATOMIC_SEQ_CST);

	if (!ctx->page->rule ||
	    __atomic_load_n(&ctx->page->observed, __ATOMIC_RELAXED) >= h)
		return;
	if (!by_call &&
	    reads == __atomic_load_n(&ctx->reads_at_catch, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&ctx->page->observed, h, __ATOMIC_SEQ_CST);
	ibemu__verbs_kick(ctx);
}

/*
 * Counts a read of the clock. Left out of ThreadSanitizer's view: vtime/'s
 * TSC trap reads the clock from its SIGSEGV handler, where that runtime
 * cannot make the state of an atomic it has not seen (it crashed there).
 */
__attribute__((no_sanitize("thread"))) static void count_read(void)
{
	__atomic_add_fetch(&clock_reads, 1, __ATOMIC_SEQ_CST);
}

/*
 * The program reads its clock (vtime/, the tests): counted, for the next
 * empty poll to tell the daemon that the clock's last tick was seen.
 * Nothing else: this may run in a signal handler (vtime/'s TSC trap).
 */
VERBS_EXPORT uint64_t ibemu_now_ps(void)
{
	count_read();
	return ibemu__verbs_clock();
}

VERBS_EXPORT void ibemu_compute_ps(uint64_t ps)
{
	uint64_t t;

	__atomic_fetch_add(&computed_ps, ps, __ATOMIC_ACQ_REL);
	t = __atomic_add_fetch(&proc_clock, ps, __ATOMIC_ACQ_REL);
	ibemu__verbs_trace(IBEMU_VERBS_TRACE_COMPUTE, t - ps, t);
}
