/* SPDX-License-Identifier: MIT */
/*
 * The quiescence rule (docs/design.md §3): virtual time advances only
 * while every attached verbs process waits, and a process's work enters
 * the fabric at its own clock. This is the rule alone, with no loop, no
 * shared memory and no /proc: the caller gives what each process
 * published (the words of its context page), the wall clock and, when the
 * grace period asks, the process's CPU use; the rule says how far the
 * engine may run. attach/sess_verbs_rule.c applies it to the verbs
 * streams; the daemon's pump (daemon/daemon.c) runs the engine up to it.
 */
#ifndef IBEMU_CLOCK_RULE_H
#define IBEMU_CLOCK_RULE_H

#include <stdint.h>

/*
 * How virtual time relates to the attached processes ('ibemu up
 * --clock'). QUIESCE: the rule. FREE: the engine runs whenever it has
 * events (fastest, not deterministic).
 */
enum ibemu_clock {
	IBEMU_CLOCK_QUIESCE = 0,
	IBEMU_CLOCK_FREE = 1,
};

/* "quiesce" or "free". */
const char *ibemu_clock_name(enum ibemu_clock c);

/*
 * Wall-clock milliseconds a process may run without any verbs call (a
 * program spinning on memory that an RDMA WRITE fills) before it is
 * counted as waiting; if virtual time then advances, the run is marked
 * non-deterministic.
 */
#define IBEMU_GRACE_MS 10u
/*
 * The same for a umad process (a subnet manager): its long computations
 * (routing 10,000 HCAs takes most of a second) are part of what it does
 * in virtual time, and it waits in umad_recv() otherwise.
 */
#define IBEMU_UMAD_GRACE_MS 2000u

/*
 * Memory polling (docs/design.md §3): wall-clock nanoseconds after which
 * a process that took a completion last, made no call since and has
 * memory registered for remote writes or atomics counts as waiting for
 * that memory (ib_write_lat's pattern). Long enough that a program
 * between two calls (its own work after a completion: microseconds)
 * is rarely taken for one that polls memory; short next to the grace
 * period, so a WRITE ping-pong goes at some thousands of round trips a
 * second.
 */
#define IBEMU_MEMPOLL_NS 150000ull
/*
 * And only once it was seen on a CPU this long without a call: a process
 * that a loaded host keeps off its CPU is not taken for one that spins.
 * With an up-to-date CPU clock this counts from the start of the silence
 * (IBEMU_MEMPOLL_CPU_EXACT_NS, below: a spinner is presumed at
 * IBEMU_MEMPOLL_NS, at the first look), else
 * from the end of IBEMU_MEMPOLL_NS (a figure as of the last tick may hold
 * time from before the silence), looked at every IBEMU_MEMPOLL_CHECK_NS.
 */
#define IBEMU_MEMPOLL_CPU_NS   20000ull
#define IBEMU_MEMPOLL_CHECK_NS 50000ull
/*
 * With the up-to-date clock, counted from the start of the silence, it
 * must have been on a CPU for most of IBEMU_MEMPOLL_NS: a spinner is, a
 * process writing its output after a completion (a write() of some tens
 * of microseconds, which the task clock counts, longer under a sanitizer
 * on a loaded host) is not. With 20 us of 100, such writes were taken
 * for spinning (integration.time, one run in five).
 */
#define IBEMU_MEMPOLL_CPU_EXACT_NS 130000ull

/* The rule for the engine of one fabric. */
struct ibemu_rule {
	enum ibemu_clock clock;
	/* Nothing a process posts at its clock T acts before T plus this
	 * (the HCA's doorbell delay): the lookahead of every hand-off. */
	uint64_t lookahead_ps;
	uint64_t run_cap; /* a run stops before this (hand-offs lower it) */
	uint64_t last_horizon; /* the bound at the last look */
	int nondet;	       /* the grace period let time advance */
	int mid_run;	       /* a run stopped at its batch limit */
	/* The process the last horizon presumed to wait did so because a
	 * thread of it sleeps on a lock (verbs/waiting.c), not by its
	 * grace period. */
	int presumed_asleep;
	int logged_grace, logged_asleep; /* each said once in the log */
};

/* One attached process as the rule follows it. */
struct ibemu_rule_proc {
	uint64_t handed;  /* hand-offs made visible to it so far */
	uint64_t hand_ps; /* its earliest clock since the hand-off that
			     resumed it */
	/* The grace period: what it last published, since when; its
	 * length (0: IBEMU_GRACE_MS). */
	uint64_t idle_mark, idle_since_ms, idle_cpu;
	uint32_t grace_ms;
	int idle_known, idle_cpu_known;
	/* Memory polling: its calls and waits as last seen, since when
	 * (wall ns); whether it is presumed to poll memory now, and the
	 * bound its clock set then; whether a landing resumed it (it then
	 * runs until its next call, however long it takes to see the
	 * bytes). */
	uint64_t mem_mark, mem_since_ns, mem_from_ps, mem_cpu_ns;
	int mem_known, mem_presumed, mem_resumed, mem_cpu_known, mem_cpu_exact;
	/* Its CPU time is read once at the start of a silence, then not
	 * before mem_look_ns (the daemon looks at the horizon far more
	 * often than that). */
	int mem_cpu_tried;
	uint64_t mem_look_ns;
};

/*
 * What a process published, the words of its context page: 'wait_seq' is
 * 1 + the 'handed' it read before it found nothing to take (0 at any
 * other call), 'calls' counts its library calls, 'clock_ps' is its
 * virtual clock.
 */
struct ibemu_rule_words {
	uint64_t wait_seq;
	uint64_t calls;
	uint64_t clock_ps;
	uint32_t took; /* its last call took a completion */
};

/*
 * The CPU use of a process, asked only once its grace period is over:
 * clock ticks over all its threads, and whether one of them is runnable.
 * 0, or -errno when it cannot be known (the process is gone).
 */
struct ibemu_rule_cpu_ops {
	int (*cpu)(void *ctx, uint64_t *ticks, int *runnable);
	/* Nanoseconds its main thread spent on a CPU: 1 if the figure is
	 * up to date (a perf task clock), 0 if only as of the thread's last
	 * tick or switch (schedstat: a thread that stays on its CPU shows
	 * its time milliseconds late), or -errno. */
	int (*cpu_ns)(void *ctx, uint64_t *ns);
};

void ibemu_rule_init(struct ibemu_rule *r, enum ibemu_clock clock,
		     uint64_t lookahead_ps);

/* Whether the rule applies (not --clock free). */
static inline int ibemu_rule_on(const struct ibemu_rule *r)
{
	return r->clock == IBEMU_CLOCK_QUIESCE;
}

/* Whether a process that published 'wait_seq' waits: it saw every hand-off. */
int ibemu_rule_waiting(const struct ibemu_rule_proc *p, uint64_t wait_seq);

/*
 * Something at virtual time 't' became visible to process 'p', which
 * waited or not ('was_waiting', read before): it runs from now on, with a
 * clock of at least 't' if it waited, and the engine may run only a
 * lookahead past 't'. Returns the new hand-off count to publish.
 */
uint64_t ibemu_rule_handoff(struct ibemu_rule *r, struct ibemu_rule_proc *p,
			    int was_waiting, uint64_t t);

/*
 * The virtual time before which process 'p' lets the engine run: its
 * clock plus the lookahead while it runs, UINT64_MAX while it waits. A
 * process that published nothing new for its grace period of 'now_ms',
 * twice over, and used the CPU meanwhile or has no runnable thread, counts
 * as waiting: *presumed is set then.
 */
uint64_t ibemu_rule_bound(const struct ibemu_rule *r, struct ibemu_rule_proc *p,
			  const struct ibemu_rule_words *w, uint64_t now_ms,
			  const struct ibemu_rule_cpu_ops *ops, void *ctx,
			  int *presumed);

/* The same bound by its clock alone, the grace period aside (who holds
 * virtual time, for 'ibemu status'). */
uint64_t ibemu_rule_clock_bound(const struct ibemu_rule *r,
				const struct ibemu_rule_proc *p,
				const struct ibemu_rule_words *w);

/* A completion written at virtual time 't': the run stops a lookahead
 * later, whatever it was allowed before. */
void ibemu_rule_completion(struct ibemu_rule *r, uint64_t t);

/*
 * Memory polling: whether process 'p', which published 'w' and has
 * memory registered for remote writes or atomics ('target'), counts as
 * waiting for that memory at wall time 'now_ns' (the engine at
 * 'engine_ps'): it runs, took a completion last, published nothing new
 * for IBEMU_MEMPOLL_NS, and spent IBEMU_MEMPOLL_CPU_NS on a CPU without a
 * call (ops->cpu_ns; since the silence began if that clock is up to date,
 * else after IBEMU_MEMPOLL_NS). Returns 1 if so (its bound is
 * UINT64_MAX then). Otherwise *wake_ns is when to look again, or 0.
 * A presumption found wrong (the process calls again with no landing
 * handed to it, the engine past the bound its clock set) marks the run
 * non-deterministic and sets *wrong.
 */
int ibemu_rule_mem_wait(struct ibemu_rule *r, struct ibemu_rule_proc *p,
			const struct ibemu_rule_words *w, int target,
			uint64_t now_ns, uint64_t engine_ps,
			const struct ibemu_rule_cpu_ops *ops, void *ctx,
			uint64_t *wake_ns, int *wrong);

/* What a landing in a process's memory is to it (ibemu_rule_mem_landed). */
enum ibemu_rule_landing {
	IBEMU_LANDING_NONE,    /* nothing: it runs, and polls no memory */
	IBEMU_LANDING_FLOOR,   /* its clock's floor: it may see the bytes */
	IBEMU_LANDING_HANDOFF, /* the floor, and a hand-off: it polled */
};

/*
 * An RDMA WRITE or atomic is about to land in the memory of 'p', which
 * published 'w' and has memory for remote writes or atomics ('target').
 * A process presumed to poll memory gets it as a completion: the caller
 * makes the engine's time the floor of its clock (before the bytes land)
 * and hands it over (ibemu_rule_handoff, waiting, at that time). One that
 * would be presumed but for the wall time (it runs, took a completion
 * last, and may be spinning on these bytes), or that waits on a CQ (and
 * will look at them after the completion that resumes it), gets the
 * floor alone: a post it makes on seeing them is stamped after the
 * landing, wherever the engine's runs stopped.
 */
enum ibemu_rule_landing ibemu_rule_mem_landed(struct ibemu_rule_proc *p,
					      const struct ibemu_rule_words *w,
					      int target);

#endif
