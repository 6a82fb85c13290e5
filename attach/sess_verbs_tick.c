// SPDX-License-Identifier: MIT
/*
 * The tick: time passing for a verbs process that spins in its waits with
 * nothing to take (docs/design.md §3, the time rule's item on spinning
 * waits), armed from the horizon the rule computes (sess_verbs_rule.c)
 * as one of the daemon's items due.
 */
#include <stddef.h>
#include <stdint.h>

#include "sess_verbs_int.h"

/*
 * Time passes for a process that waits, as it does on a host: one that
 * spins in polls with nothing to take may be waiting for its own clock (a
 * retransmission timer: Open MPI's openib connection manager sends a lost
 * UD message again after 0.5 s), which without a hand-off would stand at
 * its wait's start however far the fabric goes (an SM's sweeps). So a
 * spinning wait that nothing ends for TICK_PS of virtual time is handed
 * the fabric's time then, with nothing in it, and again every TICK_PS:
 * its clock moves there at its next poll (land_ps). The times are
 * virtual (the wait's start plus TICK_PS), the same in every run. A wait
 * that blocks (a completion channel) is left alone: nothing would see
 * the hand-off, and the process would hold the fabric as running.
 */
/* Long enough that a peer still starting in wall time (its process not
 * attached yet, under a loaded host) is rarely taken for a timer. */
#define TICK_PS 5000000000000ull /* 5 s */

/*
 * Whether stream 'v' went on polling lately (its empty polls moved within
 * POLLING_MS of wall time), as far as looks at it can tell.
 */
#define POLLING_MS 100

static int polling(struct ibemu_sess_verbs *v, uint64_t now_ms)
{
	uint64_t n = __atomic_load_n(&v->page->spin_polls, __ATOMIC_RELAXED);

	if (n != v->polls_mark) {
		v->polls_mark = n;
		v->polls_mark_ms = now_ms;
		return 1;
	}
	return now_ms - v->polls_mark_ms < POLLING_MS;
}

static int waits_spinning(const struct ibemu_sess_verbs *v)
{
	return ibemu_rule_waiting(
		       &v->rule,
		       __atomic_load_n(&v->page->wait_seq, __ATOMIC_SEQ_CST)) &&
	       __atomic_load_n(&v->page->spins, __ATOMIC_SEQ_CST);
}

/*
 * Whether time may be handed to the spinning waits now: every process
 * whose last wait was an empty poll still polls. One that stopped (it
 * waits on a file, a socket, another process: the test harness's go
 * file, fi_pingpong's out-of-band sync) keeps the fabric's idea of it,
 * a frozen clock, and with it everyone's: what it waits for comes in
 * wall time, and the virtual time of its coming must not depend on how
 * long that took.
 */
static int all_still_poll(struct ibemu_daemon *d)
{
	uint64_t now_ms = uv_now(&d->loop);
	struct ibemu_sess_conn *c;

	for (c = d->sess ? d->sess->conns : NULL; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && c->verbs &&
		    !c->closing && !c->job_held && waits_spinning(c->verbs) &&
		    !polling(c->verbs, now_ms))
			return 0;
	return 1;
}

static void tick_fire(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct ibemu_sess_verbs *v =
		(struct ibemu_sess_verbs *)((char *)due -
					    offsetof(struct ibemu_sess_verbs,
						     tick));
	struct ibemu_verbs_page *p = v->page;
	uint64_t t = due->at_ps;

	if (v->c->closing || v->c->job_held ||
	    __atomic_load_n(&p->wait_seq, __ATOMIC_SEQ_CST) != v->tick_seq ||
	    !ibemu_rule_waiting(&v->rule, v->tick_seq))
		return;
	/* Given once every spinning process polls again (tick_arm). */
	if (!all_still_poll(d)) {
		v->tick_stalled = 1;
		return;
	}
	/*
	 * A thread that goes on to block stores 'spins' 0 before it reads
	 * 'handing' (verbs/waiting.c): after our store of 'handing', either
	 * we see its 0 here and call the hand-off off (it then looks again
	 * and waits as before), or it sees the hand-off and waits anew.
	 */
	ibemu__vs_handoff_begin(v);
	if (!__atomic_load_n(&p->spins, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&p->handing, v->rule.handed, __ATOMIC_SEQ_CST);
		return;
	}
	/* Before the hand-off: the poll that sees it finds its clock. */
	if (__atomic_load_n(&p->land_ps, __ATOMIC_RELAXED) < t)
		__atomic_store_n(&p->land_ps, t, __ATOMIC_RELEASE);
	ibemu__vs_handoff(v, 1, t);
	if (!v->tick_logged++)
		ibemu_daemon_log(d,
				 "process %ld spun in its waits for %llu ms of "
				 "virtual time with nothing to take: time is "
				 "handed to it (its own timers) every %llu ms "
				 "while that lasts",
				 (long)v->c->pid,
				 (unsigned long long)(TICK_PS / 1000000000ull),
				 (unsigned long long)(TICK_PS / 1000000000ull));
}

void ibemu__vs_tick_arm(struct ibemu_daemon *d, struct ibemu_sess_conn *c,
			const struct ibemu_rule_words *w)
{
	struct ibemu_sess_verbs *v = c->verbs;
	uint64_t from;

	if (!ibemu_rule_waiting(&v->rule, w->wait_seq) ||
	    !__atomic_load_n(&v->page->spins, __ATOMIC_SEQ_CST)) {
		if (v->tick.armed)
			ibemu_due_cancel(d, &v->tick);
		v->tick_stalled = 0;
		return;
	}
	if (v->tick_seq == w->wait_seq) {
		if (v->tick.armed || (v->tick_stalled && !all_still_poll(d)))
			return;
		if (v->tick_stalled) {
			/* All poll again: the tick it missed is due now. */
			v->tick_stalled = 0;
			ibemu_due_arm(d, &v->tick, ibemu_engine_now(d->engine));
			c->s->tick_armed = 1;
			return;
		}
	}
	from = w->clock_ps < v->rule.hand_ps ? v->rule.hand_ps : w->clock_ps;
	if (from > IBEMU_VERBS_MAX_STAMP_PS)
		return; /* garbage: no time to tick at */
	v->tick_seq = w->wait_seq;
	v->tick_stalled = 0;
	v->tick.fire = tick_fire;
	ibemu_due_arm(d, &v->tick, from + TICK_PS);
	c->s->tick_armed = 1;
}

void ibemu__vs_tick_close(struct ibemu_sess_verbs *v)
{
	if (v->tick.armed)
		ibemu_due_cancel(vs_daemon(v), &v->tick);
}
