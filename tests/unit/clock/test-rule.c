// SPDX-License-Identifier: MIT
/*
 * The quiescence rule (clock/rule.c) on fake processes: a process is a
 * struct of the words it publishes and a CPU counter the test moves, so
 * waiting, hand-offs, the horizon, the lookahead and the grace period are
 * checked exactly, without a loop, shared memory or /proc.
 */
#include <errno.h>

#include "rule.h"
#include "unit.h"
#include "verbs_proto.h"

#define LOOKAHEAD 300000ull /* ps: the doorbell delay */

/* A fake process: what it publishes and what /proc would say of it. */
struct fake {
	struct ibemu_rule_proc p;
	struct ibemu_rule_words w;
	uint64_t ticks;
	uint64_t on_cpu_ns; /* schedstat, or a task clock if 'exact' */
	int runnable, gone, asked, exact;
};

static int fake_cpu(void *ctx, uint64_t *ticks, int *runnable)
{
	struct fake *f = ctx;

	f->asked++;
	if (f->gone)
		return -ESRCH;
	*ticks = f->ticks;
	*runnable = f->runnable;
	return 0;
}

static int fake_cpu_ns(void *ctx, uint64_t *ns)
{
	struct fake *f = ctx;

	if (f->gone)
		return -ESRCH;
	*ns = f->on_cpu_ns;
	return f->exact;
}

static const struct ibemu_rule_cpu_ops fake_ops = {.cpu = fake_cpu,
						   .cpu_ns = fake_cpu_ns};

static uint64_t bound(struct ibemu_rule *r, struct fake *f, uint64_t now_ms,
		      int *presumed)
{
	return ibemu_rule_bound(r, &f->p, &f->w, now_ms, &fake_ops, f,
				presumed);
}

/* The least bound of 'n' processes: the horizon the engine runs to. */
static uint64_t horizon(struct ibemu_rule *r, struct fake *f, unsigned n,
			uint64_t now_ms)
{
	uint64_t h = UINT64_MAX, b;
	int presumed;
	unsigned i;

	for (i = 0; i < n; i++) {
		presumed = 0;
		b = bound(r, &f[i], now_ms, &presumed);
		if (b < h)
			h = b;
	}
	return h;
}

/* The process looks and finds nothing: it waits on what it was handed. */
static void goes_waiting(struct fake *f)
{
	f->w.wait_seq = f->p.handed + 1;
}

static void test_waiting(void)
{
	struct fake f = {0};

	/* Not waiting until it says so, on the count it saw. */
	T_TRUE(!ibemu_rule_waiting(&f.p, 0));
	goes_waiting(&f);
	T_TRUE(ibemu_rule_waiting(&f.p, f.w.wait_seq));
	/* A hand-off after it looked makes it run again at once. */
	f.p.handed++;
	T_TRUE(!ibemu_rule_waiting(&f.p, f.w.wait_seq));
	goes_waiting(&f);
	T_TRUE(ibemu_rule_waiting(&f.p, f.w.wait_seq));
}

static void test_horizon(void)
{
	struct ibemu_rule r;
	struct fake f[3];

	memset(f, 0, sizeof(f));

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	T_TRUE(ibemu_rule_on(&r));
	T_EQ_U64(r.run_cap, UINT64_MAX);
	/* All wait: nothing bounds the engine. */
	goes_waiting(&f[0]);
	goes_waiting(&f[1]);
	goes_waiting(&f[2]);
	T_EQ_U64(horizon(&r, f, 3, 0), UINT64_MAX);
	/* The running ones bound it at their clock plus the lookahead; the
	 * least wins. */
	f[1].w = (struct ibemu_rule_words){.clock_ps = 5000000};
	f[2].w = (struct ibemu_rule_words){.clock_ps = 2000000};
	T_EQ_U64(horizon(&r, f, 3, 0), 2000000 + LOOKAHEAD);
	goes_waiting(&f[2]);
	T_EQ_U64(horizon(&r, f, 3, 0), 5000000 + LOOKAHEAD);
	/* A clock past any stamp is garbage and must not wrap. */
	f[1].w.clock_ps = UINT64_MAX - 1;
	T_EQ_U64(horizon(&r, f, 3, 0), IBEMU_VERBS_MAX_STAMP_PS + LOOKAHEAD);
	T_TRUE(!ibemu_rule_on(&(struct ibemu_rule){.clock = IBEMU_CLOCK_FREE}));
	T_EQ_STR(ibemu_clock_name(IBEMU_CLOCK_FREE), "free");
	T_EQ_STR(ibemu_clock_name(IBEMU_CLOCK_QUIESCE), "quiesce");
}

static void test_handoff(void)
{
	struct ibemu_rule r;
	struct fake f = {0};

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	r.run_cap = 90000000;
	goes_waiting(&f);
	/* A completion at 7 us to a waiting process: it runs, from 7 us at
	 * least, and the run stops a lookahead later. */
	T_EQ_U64(ibemu_rule_handoff(&r, &f.p, 1, 7000000), 1);
	T_EQ_U64(f.p.hand_ps, 7000000);
	T_EQ_U64(r.run_cap, 7000000 + LOOKAHEAD);
	T_TRUE(!ibemu_rule_waiting(&f.p, f.w.wait_seq));
	/* Its stale clock (it has not read the completion yet) is raised
	 * to the hand-off's time. */
	f.w.clock_ps = 1000;
	T_EQ_U64(horizon(&r, &f, 1, 0), 7000000 + LOOKAHEAD);
	/* A later hand-off to the running process does not move its
	 * earliest clock, nor an earlier cap. */
	T_EQ_U64(ibemu_rule_handoff(&r, &f.p, 0, 9000000), 2);
	T_EQ_U64(f.p.hand_ps, 7000000);
	T_EQ_U64(r.run_cap, 7000000 + LOOKAHEAD);
	/* A completion written for another process lowers the cap too. */
	ibemu_rule_completion(&r, 1000000);
	T_EQ_U64(r.run_cap, 1000000 + LOOKAHEAD);
	/* Its own clock past the hand-off wins. */
	f.w.clock_ps = 8000000;
	T_EQ_U64(horizon(&r, &f, 1, 0), 8000000 + LOOKAHEAD);
}

/* Runs the grace clock: 'f' published nothing new from 0 to 'ms'. */
static int presumed_at(struct ibemu_rule *r, struct fake *f, uint64_t ms)
{
	int presumed = 0;

	bound(r, f, ms, &presumed);
	return presumed;
}

/* A process with a grace period of its own (a umad process's). */
static void test_grace_of_its_own(void)
{
	struct ibemu_rule r;
	struct fake f = {.w = {.clock_ps = 1000}, .runnable = 1};

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	f.p.grace_ms = IBEMU_UMAD_GRACE_MS;
	T_TRUE(!presumed_at(&r, &f, 100));
	f.ticks = 50;
	/* Twice the default's span: still running, /proc not asked. */
	T_TRUE(!presumed_at(&r, &f, 100 + 2 * IBEMU_GRACE_MS));
	T_EQ_INT(f.asked, 0);
	T_TRUE(!presumed_at(&r, &f, 100 + IBEMU_UMAD_GRACE_MS));
	T_EQ_INT(f.asked, 1);
	f.ticks = 51;
	T_TRUE(!presumed_at(&r, &f, 100 + 2 * IBEMU_UMAD_GRACE_MS - 1));
	T_TRUE(presumed_at(&r, &f, 100 + 2 * IBEMU_UMAD_GRACE_MS));
}

static void test_grace_spinning(void)
{
	struct ibemu_rule r;
	struct fake f = {.w = {.clock_ps = 1000}, .runnable = 1};

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	/* First look: the mark is taken. Within the grace period nothing
	 * changes and /proc is not read. */
	T_TRUE(!presumed_at(&r, &f, 100));
	T_TRUE(!presumed_at(&r, &f, 100 + IBEMU_GRACE_MS - 1));
	T_EQ_INT(f.asked, 0);
	/* Once over, its CPU time is read; over again with CPU used: it
	 * spins on memory, and counts as waiting. */
	f.ticks = 50;
	T_TRUE(!presumed_at(&r, &f, 100 + IBEMU_GRACE_MS));
	T_EQ_INT(f.asked, 1);
	f.ticks = 51;
	T_TRUE(!presumed_at(&r, &f, 100 + 2 * IBEMU_GRACE_MS - 1));
	T_TRUE(presumed_at(&r, &f, 100 + 2 * IBEMU_GRACE_MS));
	/* A library call starts it over. */
	f.w.calls++;
	T_TRUE(!presumed_at(&r, &f, 100 + 3 * IBEMU_GRACE_MS));
	T_EQ_U64(horizon(&r, &f, 1, 100 + 3 * IBEMU_GRACE_MS),
		 1000 + LOOKAHEAD);
}

static void test_grace_loaded_or_asleep(void)
{
	struct ibemu_rule r;
	struct fake f = {.w = {.clock_ps = 1000}, .runnable = 1};
	uint64_t t = 0;

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	/* Runnable but not scheduled (no CPU time used): it still runs. */
	T_TRUE(!presumed_at(&r, &f, t));
	t += IBEMU_GRACE_MS;
	T_TRUE(!presumed_at(&r, &f, t));
	t += IBEMU_GRACE_MS;
	T_TRUE(!presumed_at(&r, &f, t));
	t += IBEMU_GRACE_MS;
	T_TRUE(!presumed_at(&r, &f, t));
	/* Asleep in the kernel in every thread (a socket, pause()): it
	 * counts as waiting. */
	f.runnable = 0;
	t += IBEMU_GRACE_MS;
	T_TRUE(presumed_at(&r, &f, t));
	/* A process whose CPU use cannot be read is not presumed. */
	f = (struct fake){.w = {.clock_ps = 1000}, .gone = 1};
	T_TRUE(!presumed_at(&r, &f, 0));
	T_TRUE(!presumed_at(&r, &f, 3 * IBEMU_GRACE_MS));
	/* Waiting resets the grace clock. */
	f = (struct fake){.w = {.clock_ps = 1000}, .runnable = 1};
	T_TRUE(!presumed_at(&r, &f, 0));
	goes_waiting(&f);
	T_EQ_U64(horizon(&r, &f, 1, IBEMU_GRACE_MS), UINT64_MAX);
	f.w.wait_seq = 0;
	T_TRUE(!presumed_at(&r, &f, 2 * IBEMU_GRACE_MS));
	T_EQ_INT(f.asked, 0);
}

/* Memory polling at wall time 'ns' (engine at 'ps'): 1 if presumed. */
static int mem_at(struct ibemu_rule *r, struct fake *f, int target, uint64_t ns,
		  uint64_t ps, uint64_t *wake, int *wrong)
{
	return ibemu_rule_mem_wait(r, &f->p, &f->w, target, ns, ps, &fake_ops,
				   f, wake, wrong);
}

/* Silent for IBEMU_MEMPOLL_NS from 'ns', then IBEMU_MEMPOLL_CPU_NS on a
 * CPU: presumed at the second look (returns 1 if so). */
static int spins_from(struct ibemu_rule *r, struct fake *f, uint64_t ns,
		      uint64_t ps, int *wrong)
{
	uint64_t wake;

	if (mem_at(r, f, 1, ns + IBEMU_MEMPOLL_NS, ps, &wake, wrong))
		return 0;
	if (wake != ns + IBEMU_MEMPOLL_NS + IBEMU_MEMPOLL_CHECK_NS)
		return 0;
	f->on_cpu_ns += IBEMU_MEMPOLL_CPU_NS;
	return mem_at(r, f, 1, wake, ps, &wake, wrong);
}

static void test_mem_poll(void)
{
	struct ibemu_rule r;
	struct fake f = {.w = {.clock_ps = 1000, .calls = 5, .took = 1}};
	uint64_t wake, t = 1000000, t_land = 5000;
	int wrong = 0;

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	/* It took a completion and calls no more: after IBEMU_MEMPOLL_NS
	 * of wall time, and only then, its time on a CPU is looked at. */
	T_TRUE(!mem_at(&r, &f, 1, t, 1000, &wake, &wrong));
	T_EQ_U64(wake, t + IBEMU_MEMPOLL_NS);
	T_TRUE(!mem_at(&r, &f, 1, t + IBEMU_MEMPOLL_NS - 1, 1000, &wake,
		       &wrong));
	T_TRUE(!mem_at(&r, &f, 1, t + IBEMU_MEMPOLL_NS, 1000, &wake, &wrong));
	T_EQ_U64(wake, t + IBEMU_MEMPOLL_NS + IBEMU_MEMPOLL_CHECK_NS);
	/* Kept off the CPU (a loaded host): not taken for a spinner. */
	f.on_cpu_ns += IBEMU_MEMPOLL_CPU_NS - 1;
	T_TRUE(!mem_at(&r, &f, 1, wake, 1000, &wake, &wrong));
	/* Then on a CPU without a call: it spins on memory. */
	f.on_cpu_ns += 1;
	T_TRUE(mem_at(&r, &f, 1, wake, 1000, &wake, &wrong));
	/* A WRITE lands: handed to it as a completion at its time; it
	 * runs from there, and the run stops a lookahead later. */
	T_EQ_INT(ibemu_rule_mem_landed(&f.p, &f.w, 1), IBEMU_LANDING_HANDOFF);
	f.w.wait_seq = 0;
	ibemu_rule_handoff(&r, &f.p, 1, t_land);
	T_EQ_U64(r.run_cap, t_land + LOOKAHEAD);
	T_TRUE(!mem_at(&r, &f, 1, t + 2 * IBEMU_MEMPOLL_NS, t_land, &wake,
		       &wrong));
	T_EQ_U64(ibemu_rule_clock_bound(&r, &f.p, &f.w), t_land + LOOKAHEAD);
	/* Resumed, it runs until its next call, however long it takes to
	 * see the bytes: never presumed again before it. */
	T_TRUE(!mem_at(&r, &f, 1, t + 50 * IBEMU_MEMPOLL_NS, t_land, &wake,
		       &wrong));
	T_EQ_U64(wake, 0);
	/* Its post, stamped at the landing: the presumption held. */
	f.w.calls++;
	f.w.took = 0;
	T_TRUE(!mem_at(&r, &f, 1, t + 3 * IBEMU_MEMPOLL_NS, t_land, &wake,
		       &wrong));
	T_EQ_U64(wake, 0); /* no completion taken last: not a candidate */
	T_EQ_INT(wrong, 0);
	T_EQ_INT(r.nondet, 0);
	/* Not landed on, while the engine moved: it was computing. */
	f.w.took = 1;
	T_TRUE(spins_from(&r, &f, t + 3 * IBEMU_MEMPOLL_NS, 6000, &wrong));
	/* Events within its own bound ran meanwhile: harmless. */
	f.w.calls++;
	T_TRUE(!mem_at(&r, &f, 1, t + 6 * IBEMU_MEMPOLL_NS,
		       t_land + LOOKAHEAD - 1, &wake, &wrong));
	T_EQ_INT(wrong, 0);
	/* Past it: the engine ran on while the process computed. */
	T_TRUE(spins_from(&r, &f, t + 6 * IBEMU_MEMPOLL_NS, 6000, &wrong));
	f.w.calls++;
	T_TRUE(!mem_at(&r, &f, 1, t + 9 * IBEMU_MEMPOLL_NS, t_land + LOOKAHEAD,
		       &wake, &wrong));
	T_EQ_INT(wrong, 1);
	T_EQ_INT(r.nondet, 1);
	/* No memory for remote writes, or waiting already: never. */
	f = (struct fake){.w = {.clock_ps = 1000, .took = 1}};
	T_TRUE(!mem_at(&r, &f, 0, 0, 0, &wake, &wrong));
	T_TRUE(!mem_at(&r, &f, 0, 10 * IBEMU_MEMPOLL_NS, 0, &wake, &wrong));
	T_EQ_INT(ibemu_rule_mem_landed(&f.p, &f.w, 0), IBEMU_LANDING_NONE);
	/* A candidate not yet presumed: the landing is its clock's floor. */
	T_EQ_INT(ibemu_rule_mem_landed(&f.p, &f.w, 1), IBEMU_LANDING_FLOOR);
	/* Waiting on a CQ: never presumed; a landing is its floor. */
	goes_waiting(&f);
	T_TRUE(!mem_at(&r, &f, 1, 20 * IBEMU_MEMPOLL_NS, 0, &wake, &wrong));
	T_EQ_INT(ibemu_rule_mem_landed(&f.p, &f.w, 0), IBEMU_LANDING_FLOOR);
	/* Running, no completion taken last: it polls no memory. */
	f.w.wait_seq = 0;
	f.w.took = 0;
	T_EQ_INT(ibemu_rule_mem_landed(&f.p, &f.w, 1), IBEMU_LANDING_NONE);
}

/*
 * With an up-to-date CPU clock (a perf task clock), the time on a CPU
 * counts from the start of the silence: a spinner is presumed at the
 * first look, IBEMU_MEMPOLL_NS after its completion, and one kept off its
 * CPU is looked at again when it could have had enough.
 */
static void test_mem_poll_exact(void)
{
	struct ibemu_rule r;
	struct fake f = {.w = {.clock_ps = 1000, .calls = 5, .took = 1},
			 .on_cpu_ns = 7000000,
			 .exact = 1};
	uint64_t wake, t = 1000000;
	int wrong = 0;

	ibemu_rule_init(&r, IBEMU_CLOCK_QUIESCE, LOOKAHEAD);
	/* The silence begins: its CPU time is taken then. */
	T_TRUE(!mem_at(&r, &f, 1, t, 1000, &wake, &wrong));
	T_EQ_U64(wake, t + IBEMU_MEMPOLL_NS);
	/* It spun all along: presumed at once. */
	f.on_cpu_ns += IBEMU_MEMPOLL_NS;
	T_TRUE(mem_at(&r, &f, 1, t + IBEMU_MEMPOLL_NS, 1000, &wake, &wrong));
	/* Its next post; a completion, then a write of 60 us before its
	 * next call: not a spin. */
	f.w.calls++;
	T_TRUE(!mem_at(&r, &f, 1, t + IBEMU_MEMPOLL_NS + 1, 1000, &wake,
		       &wrong));
	f.on_cpu_ns += 60000;
	T_TRUE(!mem_at(&r, &f, 1, t + 2 * IBEMU_MEMPOLL_NS + 1, 1000, &wake,
		       &wrong));
	/* Its next post; then a completion, and it is kept off its CPU
	 * but for 5 us: not presumed, looked at again when it could have
	 * spent the rest. */
	f.w.calls++;
	T_TRUE(!mem_at(&r, &f, 1, t + 2 * IBEMU_MEMPOLL_NS, 1000, &wake,
		       &wrong));
	f.on_cpu_ns += 5000;
	T_TRUE(!mem_at(&r, &f, 1, t + 3 * IBEMU_MEMPOLL_NS, 1000, &wake,
		       &wrong));
	T_EQ_U64(wake,
		 t + 3 * IBEMU_MEMPOLL_NS + IBEMU_MEMPOLL_CPU_EXACT_NS - 5000);
	f.on_cpu_ns += IBEMU_MEMPOLL_CPU_EXACT_NS - 5000 - 1;
	T_TRUE(!mem_at(&r, &f, 1, wake, 1000, &wake, &wrong));
	f.on_cpu_ns += 1;
	T_TRUE(mem_at(&r, &f, 1, wake, 1000, &wake, &wrong));
	/* The clock lost (schedstat's figure now): counted afresh after
	 * the silence, never across the two clocks. */
	f.w.calls++;
	T_TRUE(!mem_at(&r, &f, 1, t + 5 * IBEMU_MEMPOLL_NS, 1000, &wake,
		       &wrong));
	f.exact = 0;
	f.on_cpu_ns = 900000000;
	T_TRUE(!mem_at(&r, &f, 1, t + 6 * IBEMU_MEMPOLL_NS, 1000, &wake,
		       &wrong));
	T_EQ_U64(wake, t + 6 * IBEMU_MEMPOLL_NS + IBEMU_MEMPOLL_CHECK_NS);
	f.on_cpu_ns += IBEMU_MEMPOLL_CPU_NS;
	T_TRUE(mem_at(&r, &f, 1, wake, 1000, &wake, &wrong));
	T_EQ_INT(wrong, 0);
}

void ibemu_test_register_clock_rule(void)
{
	static const struct ibemu_test tests[] = {
		{"waiting", test_waiting},
		{"horizon", test_horizon},
		{"handoff", test_handoff},
		{"grace_spinning", test_grace_spinning},
		{"grace_of_its_own", test_grace_of_its_own},
		{"grace_loaded_or_asleep", test_grace_loaded_or_asleep},
		{"mem_poll", test_mem_poll},
		{"mem_poll_exact", test_mem_poll_exact},
		{NULL, NULL},
	};

	ibemu_test_add_suite("clock.rule", tests);
}
