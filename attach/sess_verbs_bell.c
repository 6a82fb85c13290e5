// SPDX-License-Identifier: MIT
/*
 * The doorbell protocol of the verbs streams, the daemon's side. Before
 * the loop may block (a uv_prepare hook) the daemon takes what the rings
 * hold and runs the engine; then it polls the rings and the context pages
 * for a short, adaptive while (docs/design.md §6: a polled cache line
 * hands over in well under a microsecond, a wake across cores costs tens);
 * only then does it publish 'sleeps', look once more and let the loop
 * block. A uv_check hook clears 'sleeps' when the loop wakes.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sess_verbs_int.h"

/*
 * The poll before sleeping: at most SPIN_MAX_NS, halved after a poll in
 * vain, doubled when a sleep turned out shorter than SPIN_MAX_NS (the
 * work would have been caught by polling). A poll step that took longer
 * than SPIN_PREEMPT_NS means another thread wanted this CPU (two
 * busy-polling programs on two cores): polling then only delays them, so
 * the daemon sleeps at once for SPIN_BACKOFF_MIN_NS, twice as long after
 * each such poll in a row, up to SPIN_BACKOFF_MAX_NS. Nor does it poll
 * while more threads are runnable than there are CPUs (cpu_spare), which
 * spares most of those descheduled polls.
 */
#define SPIN_MAX_NS	    50000ull
#define SPIN_MIN_NS	    2000ull
#define SPIN_PREEMPT_NS	    20000ull
#define SPIN_BACKOFF_MIN_NS 1000000ull
#define SPIN_BACKOFF_MAX_NS 1000000000ull
#define SPIN_LOAD_EVERY_NS  1000000ull

/* Rounds of 'look, take, look again' before the loop may sleep. */
#define SLEEP_ROUNDS_MAX 8

static void spin_idle_cb(uv_idle_t *h)
{
	(void)h; /* only keeps the loop from blocking: prepare_cb polls */
}

/*
 * Takes what the rings hold (a turn's budget) and runs the engine.
 * Returns what ibemu__sess_drain() did; with IBEMU_DAEMON_DRAIN_MORE the
 * loop is kept from blocking, so it serves its sockets and comes back.
 */
static int drain_all(struct ibemu_sess_server *s)
{
	int did = ibemu__sess_drain(s->d);

	if (did)
		ibemu_daemon_pump(s->d);
	if (did & IBEMU_DAEMON_DRAIN_MORE)
		uv_idle_start(&s->verbs_spin, spin_idle_cb);
	return did;
}

static void set_sleeps(struct ibemu_sess_server *s, uint32_t val)
{
	struct ibemu_sess_conn *c;

	for (c = s->conns; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && !c->closing)
			__atomic_store_n(&c->verbs->page->sleeps, val,
					 __ATOMIC_SEQ_CST);
}

/* Whether the horizon moved up since the engine last stopped. */
static int horizon_moved(struct ibemu_sess_server *s)
{
	struct ibemu_daemon *d = s->d;
	pid_t presumed = 0;

	return ibemu__vs_rule_on(d) && ibemu_engine_pending(d->engine) &&
	       ibemu__sess_horizon(d, &presumed) > d->rule.last_horizon;
}

/*
 * Under the time rule: whether a process went waiting since the engine
 * last stopped (the horizon moved up), and if so, the engine runs again.
 * Returns 1 then.
 */
static int rule_pump(struct ibemu_sess_server *s)
{
	struct ibemu_daemon *d = s->d;
	pid_t presumed = 0;
	uint64_t h;

	if (!ibemu__vs_rule_on(d))
		return 0;
	/* With nothing pending, a look still arms the tick of a process
	 * that went on spinning in its waits (sess_verbs_rule.c). */
	s->tick_armed = 0;
	h = ibemu__sess_horizon(d, &presumed);
	if (!ibemu_engine_pending(d->engine) && !s->tick_armed)
		return 0;
	if (h <= d->rule.last_horizon && !s->tick_armed)
		return 0;
	d->rule.last_horizon = h;
	ibemu_daemon_pump(d);
	return 1;
}

/* What a process did since the last look: posts, or going waiting. */
static int work_waits(struct ibemu_sess_server *s, int *streams)
{
	struct ibemu_sess_conn *c;

	*streams = 0;
	for (c = s->conns; c; c = c->next) {
		if (c->kind != IBEMU_SESS_CONN_VERBS || c->closing)
			continue;
		*streams = 1;
		if (ibemu__vs_verbs_pending(c->verbs))
			return 1;
	}
	return *streams && horizon_moved(s);
}

/* Returns 1 if a ring still holds work (more than a turn's budget). */
static int take_work(struct ibemu_sess_server *s)
{
	int more = drain_all(s) & IBEMU_DAEMON_DRAIN_MORE;

	ibemu__sess_flush(s->d);
	if (!more)
		rule_pump(s);
	return more;
}

static int loop_busy(struct ibemu_sess_server *s)
{
	return uv_is_active((uv_handle_t *)&s->d->pump_idle);
}

/*
 * Whether a CPU is free for polling: no more threads runnable than CPUs
 * (this one included). With more, one of them is descheduled while the
 * daemon polls, and if it is the program that would post, the poll waits
 * for the scheduler's time slice (milliseconds), where a kick would have
 * woken the daemon in microseconds.
 */
static int cpu_spare(struct ibemu_sess_spin *sp, uint64_t now)
{
	char buf[128], *slash;
	ssize_t n;

	if (sp->load_fd < 0 || now - sp->load_at < SPIN_LOAD_EVERY_NS)
		return sp->spare;
	sp->load_at = now;
	/* "0.50 0.40 0.30 RUNNABLE/THREADS LASTPID" */
	n = pread(sp->load_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	slash = strchr(buf, '/');
	if (!slash)
		return sp->spare;
	while (slash > buf && slash[-1] != ' ')
		slash--;
	sp->spare = atoi(slash) <= sp->ncpus;
	return sp->spare;
}

static void spin_init(struct ibemu_sess_spin *sp)
{
	cpu_set_t set;

	memset(sp, 0, sizeof(*sp));
	sp->ns = SPIN_MIN_NS;
	sp->spare = 1;
	sp->ncpus =
		sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
	sp->load_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

/*
 * A poll step was descheduled: sleep at once for a while, twice as long
 * as last time unless polling went well for longer than that pause.
 */
static void spin_contended(struct ibemu_sess_server *s, uint64_t now)
{
	uint64_t b = s->spin.backoff_ns;

	if (!b)
		b = SPIN_BACKOFF_MIN_NS;
	else if (now - s->spin.off_until > b)
		b = b / 2 < SPIN_BACKOFF_MIN_NS ? SPIN_BACKOFF_MIN_NS : b / 2;
	else if (b * 2 <= SPIN_BACKOFF_MAX_NS)
		b *= 2;
	s->spin.backoff_ns = b;
	s->spin.off_until = now + b;
}

/*
 * Polls the rings and the pages for up to spin_ns, giving the CPU away
 * at each step (a busy-polling program may share it). Returns 1 if work
 * came.
 */
static int spin(struct ibemu_sess_server *s)
{
	uint64_t start = uv_hrtime(), now = start, prev;
	int streams;

	if (now < s->spin.off_until || !cpu_spare(&s->spin, now))
		return 0;
	for (;;) {
		if (work_waits(s, &streams))
			return 1;
		if (!streams || now - start >= s->spin.ns)
			break;
		sched_yield();
		prev = now;
		now = uv_hrtime();
		if (now - prev > SPIN_PREEMPT_NS) {
			spin_contended(s, now);
			return 0;
		}
	}
	/* In vain: shorter next time. */
	if (streams)
		s->spin.ns = s->spin.ns / 2 < SPIN_MIN_NS ? SPIN_MIN_NS
							  : s->spin.ns / 2;
	return 0;
}

/*
 * Before the loop may block: take what the rings hold, make what the
 * engine wrote visible, poll for more a short while, then publish that
 * the daemon sleeps and look once more (a post, or a process going
 * waiting, that raced with the flag saw it clear and did not kick; the
 * seq_cst stores and loads order the two sides as Dekker's protocol
 * does).
 */
static void prepare_cb(uv_prepare_t *h)
{
	struct ibemu_sess_server *s = h->data;
	struct ibemu_sess_conn *c;
	int again, round;

	if (take_work(s) || loop_busy(s))
		return; /* the loop will not block */
	if (spin(s)) {
		take_work(s);
		/* The loop looks at its sockets, then comes back here. */
		uv_idle_start(&s->verbs_spin, spin_idle_cb);
		return;
	}
	uv_idle_stop(&s->verbs_spin);
	/*
	 * Each round takes work or runs the engine, and a ring never holds
	 * work the drain leaves there (what a queue cannot take puts its QP
	 * in error): a few rounds at most, bounded all the same, so the loop
	 * always comes back to its sockets.
	 */
	for (round = 0; round < SLEEP_ROUNDS_MAX; round++) {
		set_sleeps(s, 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		again = 0;
		for (c = s->conns; c; c = c->next)
			if (c->kind == IBEMU_SESS_CONN_VERBS && !c->closing &&
			    ibemu__vs_verbs_pending(c->verbs))
				again = 1;
		if (again) {
			set_sleeps(s, 0);
			if (drain_all(s) & IBEMU_DAEMON_DRAIN_MORE) {
				ibemu__sess_flush(s->d);
				return; /* the idle handle brings it back */
			}
		} else if (rule_pump(s)) {
			set_sleeps(s, 0);
			again = 1;
		}
		ibemu__sess_flush(s->d);
		if (!again) {
			s->spin.slept_at = uv_hrtime();
			return;
		}
		if (loop_busy(s))
			return;
	}
	set_sleeps(s, 0);
	uv_idle_start(&s->verbs_spin, spin_idle_cb);
}

/* Awake: a sleep shorter than the longest poll means polling pays. */
static void check_cb(uv_check_t *h)
{
	struct ibemu_sess_server *s = h->data;
	uint64_t slept;

	set_sleeps(s, 0);
	if (!s->spin.slept_at)
		return;
	slept = uv_hrtime() - s->spin.slept_at;
	s->spin.slept_at = 0;
	if (slept < SPIN_MAX_NS) {
		s->spin.ns *= 2;
		if (s->spin.ns < 2 * slept)
			s->spin.ns = 2 * slept;
		if (s->spin.ns > SPIN_MAX_NS)
			s->spin.ns = SPIN_MAX_NS;
	}
}

void ibemu__sess_verbs_start(struct ibemu_sess_server *s)
{
	uv_prepare_init(&s->d->loop, &s->verbs_prepare);
	uv_check_init(&s->d->loop, &s->verbs_check);
	uv_idle_init(&s->d->loop, &s->verbs_spin);
	s->verbs_prepare.data = s;
	s->verbs_check.data = s;
	s->verbs_spin.data = s;
	spin_init(&s->spin);
	uv_prepare_start(&s->verbs_prepare, prepare_cb);
	uv_check_start(&s->verbs_check, check_cb);
	ibemu__vs_mempoll_start(s);
}

void ibemu__sess_verbs_stop(struct ibemu_sess_server *s)
{
	uv_close((uv_handle_t *)&s->verbs_prepare, NULL);
	uv_close((uv_handle_t *)&s->verbs_check, NULL);
	uv_close((uv_handle_t *)&s->verbs_spin, NULL);
	ibemu__vs_mempoll_stop(s);
	if (s->spin.load_fd >= 0)
		close(s->spin.load_fd);
}
