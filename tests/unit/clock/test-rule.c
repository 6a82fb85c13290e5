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
	int runnable, gone, asked;
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

static const struct ibemu_rule_cpu_ops fake_ops = {.cpu = fake_cpu};

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

void ibemu_test_register_clock_rule(void)
{
	static const struct ibemu_test tests[] = {
		{"waiting", test_waiting},
		{"horizon", test_horizon},
		{"handoff", test_handoff},
		{"grace_spinning", test_grace_spinning},
		{"grace_of_its_own", test_grace_of_its_own},
		{"grace_loaded_or_asleep", test_grace_loaded_or_asleep},
		{NULL, NULL},
	};

	ibemu_test_add_suite("clock.rule", tests);
}
