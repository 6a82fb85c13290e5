// SPDX-License-Identifier: MIT
/*
 * The quiescence rule (rule.h): when a process waits, what a hand-off
 * changes, how far one running process lets the engine go, and the grace
 * period of a process that runs without library calls.
 */
#include "rule.h"

#include "verbs_proto.h"

const char *ibemu_clock_name(enum ibemu_clock c)
{
	return c == IBEMU_CLOCK_FREE ? "free" : "quiesce";
}

void ibemu_rule_init(struct ibemu_rule *r, enum ibemu_clock clock,
		     uint64_t lookahead_ps)
{
	*r = (struct ibemu_rule){.clock = clock,
				 .lookahead_ps = lookahead_ps,
				 .run_cap = UINT64_MAX};
}

int ibemu_rule_waiting(const struct ibemu_rule_proc *p, uint64_t wait_seq)
{
	return wait_seq == p->handed + 1;
}

uint64_t ibemu_rule_handoff(struct ibemu_rule *r, struct ibemu_rule_proc *p,
			    int was_waiting, uint64_t t)
{
	if (was_waiting && t > p->hand_ps)
		p->hand_ps = t;
	ibemu_rule_completion(r, t);
	return ++p->handed;
}

void ibemu_rule_completion(struct ibemu_rule *r, uint64_t t)
{
	if (t + r->lookahead_ps < r->run_cap)
		r->run_cap = t + r->lookahead_ps;
}

/*
 * Whether the grace period of 'p' is over: nothing new published for its
 * length (IBEMU_GRACE_MS unless set), then as long again still nothing,
 * and either
 * CPU time used meanwhile (it spins, on memory an RDMA WRITE fills) or no
 * thread runnable (it sleeps in the kernel, in anything but verbs: a
 * socket, pause()). One runnable but not scheduled (a loaded host) still
 * runs, as far as the rule knows.
 */
static int grace_over(struct ibemu_rule_proc *p,
		      const struct ibemu_rule_words *w, uint64_t now_ms,
		      const struct ibemu_rule_cpu_ops *ops, void *ctx)
{
	uint64_t mark = w->calls + w->wait_seq + p->handed, cpu;
	int runnable;

	if (!p->idle_known || mark != p->idle_mark) {
		p->idle_known = 1;
		p->idle_cpu_known = 0;
		p->idle_mark = mark;
		p->idle_since_ms = now_ms;
		return 0;
	}
	if (now_ms - p->idle_since_ms <
	    (p->grace_ms ? p->grace_ms : IBEMU_GRACE_MS))
		return 0;
	if (ops->cpu(ctx, &cpu, &runnable))
		return 0;
	/* A landing resumed it: it has bytes to act on, and CPU time is
	 * that, however late a loaded host lets it run; only a sleep in
	 * the kernel (a socket) counts then. */
	if (p->idle_cpu_known &&
	    ((cpu > p->idle_cpu && !p->mem_resumed) || !runnable))
		return 1;
	p->idle_cpu_known = 1;
	p->idle_cpu = cpu;
	p->idle_since_ms = now_ms;
	return 0;
}

uint64_t ibemu_rule_clock_bound(const struct ibemu_rule *r,
				const struct ibemu_rule_proc *p,
				const struct ibemu_rule_words *w)
{
	uint64_t clk = w->clock_ps;

	if (ibemu_rule_waiting(p, w->wait_seq))
		return UINT64_MAX;
	/* A clock past any stamp is garbage: it must not wrap. */
	if (clk > IBEMU_VERBS_MAX_STAMP_PS)
		clk = IBEMU_VERBS_MAX_STAMP_PS;
	if (clk < p->hand_ps)
		clk = p->hand_ps;
	return clk + r->lookahead_ps;
}

/*
 * The start of the CPU time 'p' must spend silent, taken while its silence
 * lasts shorter than IBEMU_MEMPOLL_NS, from an up-to-date clock only.
 */
static void mem_cpu_mark(struct ibemu_rule_proc *p,
			 const struct ibemu_rule_cpu_ops *ops, void *ctx)
{
	uint64_t ns;

	p->mem_cpu_tried = 1;
	if (ops->cpu_ns(ctx, &ns) != 1)
		return; /* a stale figure: counted after the silence */
	p->mem_cpu_known = 1;
	p->mem_cpu_exact = 1;
	p->mem_cpu_ns = ns;
}

/* The CPU time that proves a spin, by the kind of clock 'p' is read by. */
static uint64_t mem_cpu_need(const struct ibemu_rule_proc *p)
{
	return p->mem_cpu_exact ? IBEMU_MEMPOLL_CPU_EXACT_NS
				: IBEMU_MEMPOLL_CPU_NS;
}

/*
 * Whether 'p', silent for IBEMU_MEMPOLL_NS, has been on a CPU long enough
 * to be spinning; sets *wake_ns to look again if not yet: when it could
 * have, by an up-to-date clock, else IBEMU_MEMPOLL_CHECK_NS later.
 */
static int mem_spins(struct ibemu_rule_proc *p, uint64_t now_ns,
		     const struct ibemu_rule_cpu_ops *ops, void *ctx,
		     uint64_t *wake_ns)
{
	uint64_t ns, on;
	int ret;

	if (now_ns < p->mem_look_ns) {
		*wake_ns = p->mem_look_ns;
		return 0;
	}
	ret = ops->cpu_ns(ctx, &ns);
	if (ret < 0)
		return 0; /* unknown: the grace period decides */
	/* Figures of two clocks do not subtract: start again. */
	if (p->mem_cpu_known && p->mem_cpu_exact != (ret == 1))
		p->mem_cpu_known = 0;
	on = p->mem_cpu_known ? ns - p->mem_cpu_ns : 0;
	if (p->mem_cpu_known && on >= mem_cpu_need(p))
		return 1;
	if (!p->mem_cpu_known) {
		p->mem_cpu_known = 1;
		p->mem_cpu_exact = ret == 1;
		p->mem_cpu_ns = ns;
	}
	*wake_ns = now_ns + (p->mem_cpu_exact ? mem_cpu_need(p) - on
					      : IBEMU_MEMPOLL_CHECK_NS);
	p->mem_look_ns = *wake_ns;
	return 0;
}

int ibemu_rule_mem_wait(struct ibemu_rule *r, struct ibemu_rule_proc *p,
			const struct ibemu_rule_words *w, int target,
			uint64_t now_ns, uint64_t engine_ps,
			const struct ibemu_rule_cpu_ops *ops, void *ctx,
			uint64_t *wake_ns, int *wrong)
{
	uint64_t mark = w->calls + w->wait_seq;

	*wake_ns = 0;
	if (!p->mem_known || mark != p->mem_mark) {
		/* It called: a presumption still standing (no landing
		 * resumed it) was wrong if virtual time went past what its
		 * clock allowed: it was computing, not polling. */
		if (p->mem_known && p->mem_presumed &&
		    engine_ps >= p->mem_from_ps) {
			r->nondet = 1;
			*wrong = 1;
		}
		p->mem_known = 1;
		p->mem_mark = mark;
		p->mem_since_ns = now_ns;
		p->mem_presumed = 0;
		p->mem_resumed = 0;
		p->mem_cpu_known = 0;
		p->mem_cpu_exact = 0;
		p->mem_cpu_tried = 0;
		p->mem_look_ns = 0;
	}
	if (p->mem_resumed || ibemu_rule_waiting(p, w->wait_seq) || !target ||
	    !w->took)
		return 0;
	if (p->mem_presumed)
		return 1;
	if (!p->mem_cpu_tried && now_ns - p->mem_since_ns < IBEMU_MEMPOLL_NS)
		mem_cpu_mark(p, ops, ctx);
	if (now_ns - p->mem_since_ns < IBEMU_MEMPOLL_NS) {
		*wake_ns = p->mem_since_ns + IBEMU_MEMPOLL_NS;
		return 0;
	}
	if (!mem_spins(p, now_ns, ops, ctx, wake_ns))
		return 0;
	p->mem_presumed = 1;
	p->mem_from_ps = ibemu_rule_clock_bound(r, p, w);
	return 1;
}

enum ibemu_rule_landing ibemu_rule_mem_landed(struct ibemu_rule_proc *p,
					      const struct ibemu_rule_words *w,
					      int target)
{
	if (p->mem_presumed) {
		p->mem_presumed = 0;
		p->mem_resumed = 1;
		return IBEMU_LANDING_HANDOFF;
	}
	/* Waiting, it sees the bytes after the completion that resumes
	 * it, which the same run publishes: the floor is the same however
	 * runs are cut. */
	if (ibemu_rule_waiting(p, w->wait_seq))
		return IBEMU_LANDING_FLOOR;
	if (!target || !w->took)
		return IBEMU_LANDING_NONE;
	return IBEMU_LANDING_FLOOR;
}

uint64_t ibemu_rule_bound(const struct ibemu_rule *r, struct ibemu_rule_proc *p,
			  const struct ibemu_rule_words *w, uint64_t now_ms,
			  const struct ibemu_rule_cpu_ops *ops, void *ctx,
			  int *presumed)
{
	if (ibemu_rule_waiting(p, w->wait_seq)) {
		p->idle_known = 0;
		return UINT64_MAX;
	}
	if (grace_over(p, w, now_ms, ops, ctx)) {
		*presumed = 1;
		return UINT64_MAX;
	}
	return ibemu_rule_clock_bound(r, p, w);
}
