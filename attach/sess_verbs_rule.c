// SPDX-License-Identifier: MIT
/*
 * The quiescence rule (clock/rule.h) applied to the verbs streams: their
 * context pages read and written, hand-offs counted there, the horizon
 * the running processes leave the engine, and their CPU use from /proc
 * for the grace period (sess_verbs_bell.c wakes the engine when the
 * horizon moves).
 */
#include <dirent.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "sess_verbs_int.h"

/* What the process published on its context page. */
static struct ibemu_rule_words words(const struct ibemu_sess_verbs *v)
{
	return (struct ibemu_rule_words){
		.wait_seq =
			__atomic_load_n(&v->page->wait_seq, __ATOMIC_SEQ_CST),
		.calls = __atomic_load_n(&v->page->calls, __ATOMIC_RELAXED),
		.clock_ps =
			__atomic_load_n(&v->page->clock_ps, __ATOMIC_ACQUIRE),
		.took = __atomic_load_n(&v->page->took, __ATOMIC_RELAXED),
	};
}

/*
 * A hand-off begins: bumps 'handing' before anything becomes visible to
 * the process, so that it never claims to wait on a count older than
 * what it saw. Returns whether the process waited.
 */
int ibemu__vs_handoff_begin(struct ibemu_sess_verbs *v)
{
	int was;

	/* A free clock counts nothing: the page's words are the rule's. */
	if (!ibemu__vs_rule_on(vs_daemon(v)))
		return 0;
	was = ibemu_rule_waiting(&v->rule, __atomic_load_n(&v->page->wait_seq,
							   __ATOMIC_SEQ_CST));
	__atomic_store_n(&v->page->handing, v->rule.handed + 1,
			 __ATOMIC_SEQ_CST);
	return was;
}

/* Something at virtual time 't' became visible to the process. */
void ibemu__vs_handoff(struct ibemu_sess_verbs *v, int was_waiting, uint64_t t)
{
	struct ibemu_daemon *d = vs_daemon(v);
	uint64_t handed;

	if (!ibemu__vs_rule_on(d))
		return;
	handed = ibemu_rule_handoff(&d->rule, &v->rule, was_waiting, t);
	__atomic_store_n(&v->page->handed, handed, __ATOMIC_SEQ_CST);
}

/*
 * Whether a thread of process 'pid' other than its main one is runnable
 * ('R' in /proc/PID/task/TID/stat): a worker may run while the main thread
 * sleeps in pthread_join (the library counts waiting per thread).
 */
static int task_runnable(pid_t pid)
{
	char path[64], line[1024], *p;
	struct dirent *e;
	int found = 0;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atol(e->d_name) == (long)pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%.20s/stat",
			 (long)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		found = p && p[1] == ' ' && p[2] == 'R';
	}
	closedir(d);
	return found;
}

/*
 * The rule's CPU op for process 'ctx' (a pid): clock ticks over all its
 * threads, and whether one of them is runnable.
 */
static int proc_cpu(void *ctx, uint64_t *ticks, int *runnable)
{
	pid_t pid = (pid_t)(intptr_t)ctx;
	unsigned long long ut = 0, st = 0;
	char path[64], line[1024], *p, state;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* After the name: state, then 10 fields, then utime and stime. */
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
			 "%llu",
			 &state, &ut, &st) != 3)
		return -EIO;
	*ticks = ut + st;
	*runnable = state == 'R' || task_runnable(pid);
	return 0;
}

/* The rule's on-CPU op: /proc/PID/schedstat's first field (ns). */
static int proc_cpu_ns(void *ctx, uint64_t *ns)
{
	pid_t pid = (pid_t)(intptr_t)ctx;
	unsigned long long v;
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%ld/schedstat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EIO;
	*ns = v;
	return 0;
}

static const struct ibemu_rule_cpu_ops proc_cpu_ops = {
	.cpu = proc_cpu,
	.cpu_ns = proc_cpu_ns,
};

/*
 * The task clock of the main thread of the process of 'v', as perf
 * counts it (PERF_COUNT_SW_TASK_CLOCK), or -1. schedstat's figure for a
 * thread that stays on its CPU moves only at the scheduler's tick (every
 * 4 ms at HZ=250), so a spinner proved its 20 us there milliseconds
 * late; reading a perf counter updates it on the thread's CPU. Ptrace
 * access is the library's prctl(PR_SET_PTRACER) already; a kernel whose
 * perf_event_paranoid forbids it (Debian's 3, Ubuntu's 4) leaves
 * schedstat, and says so once.
 */
static int task_clock_fd(struct ibemu_sess_verbs *v)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_kernel = 1, /* what perf_event_paranoid 2 allows */
		.exclude_hv = 1,
	};
	struct ibemu_sess_server *s = v->c->s;

	if (v->cpu_fd_tried)
		return v->cpu_fd;
	v->cpu_fd_tried = 1;
	v->cpu_fd = (int)syscall(SYS_perf_event_open, &a, v->c->pid, -1, -1,
				 PERF_FLAG_FD_CLOEXEC);
	if (v->cpu_fd < 0 && !s->task_clock_told) {
		s->task_clock_told = 1;
		ibemu_daemon_log(vs_daemon(v),
				 "memory polling: no task clock for process "
				 "%ld (perf_event_open: %s; "
				 "/proc/sys/kernel/perf_event_paranoid "
				 "at most 2 allows it): CPU time from "
				 "schedstat, milliseconds late",
				 (long)v->c->pid, strerror(errno));
	}
	return v->cpu_fd;
}

/* The memory-polling on-CPU op for stream 'ctx': its task clock (1: up
 * to date), else schedstat (0). */
static int stream_cpu_ns(void *ctx, uint64_t *ns)
{
	struct ibemu_sess_verbs *v = ctx;
	int fd = task_clock_fd(v);
	uint64_t val;

	if (fd >= 0 && read(fd, &val, sizeof(val)) == sizeof(val)) {
		*ns = val;
		return 1; /* up to date */
	}
	return proc_cpu_ns((void *)(intptr_t)v->c->pid, ns);
}

/* Memory polling asks for on-CPU time alone. */
static int no_cpu(void *ctx, uint64_t *ticks, int *runnable)
{
	(void)ctx;
	(void)ticks;
	(void)runnable;
	return -EOPNOTSUPP;
}

static const struct ibemu_rule_cpu_ops stream_cpu_ops = {
	.cpu = no_cpu,
	.cpu_ns = stream_cpu_ns,
};

void ibemu__vs_rule_close(struct ibemu_sess_verbs *v)
{
	if (v->tick.armed)
		ibemu_due_cancel(vs_daemon(v), &v->tick);
	if (v->cpu_fd_tried && v->cpu_fd >= 0)
		close(v->cpu_fd);
	v->cpu_fd_tried = 0;
}

/* Whether the stream registered memory for remote writes or atomics. */
static int remote_target(const struct ibemu_sess_verbs *v)
{
	uint32_t i;

	for (i = 0; i < v->nmrs; i++)
		if (v->mrs[i].remote)
			return 1;
	return 0;
}

void ibemu__vs_mem_landing(struct ibemu_sess_hca *h, pid_t pid)
{
	struct ibemu_daemon *d = h->s->d;
	enum ibemu_rule_landing what;
	struct ibemu_sess_verbs *v;
	struct ibemu_rule_words w;
	uint64_t t;

	if (!ibemu__vs_rule_on(d))
		return;
	t = ibemu_engine_now(d->engine);
	for (v = h->verbs; v; v = v->next) {
		if (v->c->pid != pid)
			continue;
		w = words(v);
		what = ibemu_rule_mem_landed(&v->rule, &w, remote_target(v));
		if (what == IBEMU_LANDING_NONE)
			continue;
		/* Before the bytes: a process that sees them stamps its
		 * next post at 't' at least (verbs/clock.c). */
		if (__atomic_load_n(&v->page->land_ps, __ATOMIC_RELAXED) < t)
			__atomic_store_n(&v->page->land_ps, t,
					 __ATOMIC_RELEASE);
		if (what == IBEMU_LANDING_HANDOFF) {
			ibemu__vs_handoff_begin(v);
			ibemu__vs_handoff(v, 1, t);
		}
	}
}

static void mempoll_cb(uv_poll_t *h, int status, int events)
{
	struct ibemu_sess_server *s = h->data;
	uint64_t n;

	(void)status;
	(void)events;
	if (read(s->mempoll_fd, &n, sizeof(n)) < 0)
		n = 0; /* EAGAIN: disarmed meanwhile */
	s->mempoll_at = 0;
	/* A process may count as polling memory now. */
	ibemu_daemon_pump(s->d);
}

void ibemu__vs_mempoll_start(struct ibemu_sess_server *s)
{
	s->mempoll_at = 0;
	s->mempoll_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->mempoll_fd < 0)
		return; /* then only the grace period applies */
	uv_poll_init(&s->d->loop, &s->mempoll, s->mempoll_fd);
	s->mempoll.data = s;
	uv_poll_start(&s->mempoll, UV_READABLE, mempoll_cb);
}

void ibemu__vs_mempoll_stop(struct ibemu_sess_server *s)
{
	if (s->mempoll_fd < 0)
		return;
	uv_close((uv_handle_t *)&s->mempoll, NULL);
	close(s->mempoll_fd);
	s->mempoll_fd = -1;
}

/* Arms the timer for wall time 'at_ns' (uv_hrtime's clock) if sooner. */
static void mempoll_arm(struct ibemu_sess_server *s, uint64_t at_ns)
{
	struct itimerspec its = {0};

	if (s->mempoll_fd < 0 || (s->mempoll_at && s->mempoll_at <= at_ns))
		return;
	its.it_value.tv_sec = (time_t)(at_ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(at_ns % 1000000000ull);
	if (!timerfd_settime(s->mempoll_fd, TFD_TIMER_ABSTIME, &its, NULL))
		s->mempoll_at = at_ns;
}

/*
 * Memory polling for stream 'c': 1 if its process counts as waiting for
 * its memory; arms the timer for when it would.
 */
static int mem_waits(struct ibemu_daemon *d, struct ibemu_sess_conn *c,
		     const struct ibemu_rule_words *w, uint64_t now_ns)
{
	int wrong = 0, was = d->rule.nondet, ret;
	uint64_t wake;

	ret = ibemu_rule_mem_wait(&d->rule, &c->verbs->rule, w,
				  remote_target(c->verbs), now_ns,
				  ibemu_engine_now(d->engine), &stream_cpu_ops,
				  c->verbs, &wake, &wrong);
	if (wrong && !was)
		ibemu_daemon_log(d,
				 "process %ld was counted as polling its "
				 "memory but computed: virtual time is not "
				 "deterministic in this run",
				 (long)c->pid);
	if (wake)
		mempoll_arm(d->sess, wake);
	return ret;
}

/*
 * The rule's view of connection 'c': its words and its state, if it takes
 * part (a verbs stream, or a port stream that waited once); else NULL.
 */
static struct ibemu_rule_proc *rule_of(struct ibemu_sess_conn *c,
				       struct ibemu_rule_words *w)
{
	/* A process held in a job collective waits, whatever it said last. */
	if (c->closing || c->job_held)
		return NULL;
	if (c->kind == IBEMU_SESS_CONN_VERBS && c->verbs) {
		*w = words(c->verbs);
		return &c->verbs->rule;
	}
	if (c->kind == IBEMU_SESS_CONN_STREAM && !ibemu__su_words(c, w))
		return &c->time.rule;
	return NULL;
}

/*
 * Whether verbs stream 'c' waits because its library took a thread asleep
 * in the kernel for one that waits (the page's asleep_seq is that of its
 * wait).
 */
static int asleep_waits(const struct ibemu_sess_conn *c,
			const struct ibemu_rule_words *w)
{
	return c->kind == IBEMU_SESS_CONN_VERBS && w->wait_seq &&
	       __atomic_load_n(&c->verbs->page->asleep_seq, __ATOMIC_SEQ_CST) ==
		       w->wait_seq;
}

/*
 * Time passes for a process that waits, as it does on a host: one that
 * spins in polls with nothing to take may be waiting for its own clock (a
 * retransmission timer), and its sends are stamped with that clock: Open
 * MPI's openib connection manager resends a lost UD request from its
 * progress loop, and a request stamped at a clock that stood still since
 * the wait began reaches the peer before the receives it posted since,
 * again and again. So a spinning wait that nothing ends for TICK_PS of
 * virtual time is handed the fabric's time then, with nothing in it, and
 * again every TICK_PS: its clock moves there at its next poll (land_ps).
 *
 * The times are virtual (the wait's start plus TICK_PS), and so is their
 * pace: a tick after the first is earned by a call or a read of the
 * virtual clock that took the last one in, or else by
 * IBEMU_VERBS_TICK_POLLS empty polls since (proto/verbs_proto.h), and the
 * fabric waits at the tick's time until it is earned, as it waits for a
 * running process. A program that reads its clock between polls then
 * sees each second pass, one at a time, the same in every run, however
 * the host scheduled it. A wait that blocks (a completion channel) is
 * left alone: nothing would see the hand-off, and the process would hold
 * the fabric as running.
 */
#define TICK_PS 1000000000000ull /* 1 s */

/*
 * Whether stream 'v' went on polling lately: its empty polls moved within
 * POLLING_MS of wall time, or within RUNNABLE_MS if a thread of its
 * process is runnable (a spinner the host did not schedule for a while).
 * One that stopped waits on something else: a file, a socket.
 */
#define POLLING_MS  100
#define RUNNABLE_MS 2000

static int polling(struct ibemu_sess_verbs *v, uint64_t now_ms)
{
	uint64_t n = __atomic_load_n(&v->page->spin_polls, __ATOMIC_RELAXED);
	uint64_t ticks;
	int runnable = 0;

	if (n != v->polls_mark) {
		v->polls_mark = n;
		v->polls_mark_ms = now_ms;
		return 1;
	}
	if (now_ms - v->polls_mark_ms < POLLING_MS)
		return 1;
	return now_ms - v->polls_mark_ms < RUNNABLE_MS &&
	       !proc_cpu((void *)(intptr_t)v->c->pid, &ticks, &runnable) &&
	       runnable;
}

static int waits_spinning(const struct ibemu_sess_verbs *v)
{
	return ibemu_rule_waiting(
		       &v->rule,
		       __atomic_load_n(&v->page->wait_seq, __ATOMIC_SEQ_CST)) &&
	       __atomic_load_n(&v->page->spins, __ATOMIC_SEQ_CST);
}

/*
 * Whether the process of 'v' earned its next tick: its clock took in the
 * last before a call or a read of it, or it made the polls.
 */
static int tick_earned(const struct ibemu_sess_verbs *v)
{
	return __atomic_load_n(&v->page->observed, __ATOMIC_SEQ_CST) >=
		       v->tick_handed ||
	       __atomic_load_n(&v->page->spin_polls, __ATOMIC_RELAXED) -
			       v->tick_polls >=
		       IBEMU_VERBS_TICK_POLLS;
}

/*
 * Whether time may be handed to the spinning waits now: nobody counts as
 * waiting by presumption alone, and every process whose last wait was an
 * empty poll still polls. One presumed (its grace period, memory polling)
 * may be computing or starting, and one that stopped polling waits on
 * something outside the fabric (the test harness's go file,
 * fi_pingpong's out-of-band sync): what they do next comes at a wall
 * time, and the fabric's time must not have run on by ticks meanwhile.
 */
static int all_still_poll(struct ibemu_daemon *d)
{
	uint64_t now_ms = uv_now(&d->loop);
	struct ibemu_sess_conn *c;

	if (d->sess && d->sess->presumed_any)
		return 0;
	for (c = d->sess ? d->sess->conns : NULL; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && c->verbs &&
		    !c->closing && !c->job_held && waits_spinning(c->verbs) &&
		    !polling(c->verbs, now_ms))
			return 0;
	return 1;
}

/*
 * Where the tick of the wait 'v' is in starts from: the process's clock
 * at the wait (published by its last call) or its last hand-off's time.
 */
static uint64_t tick_from(const struct ibemu_sess_verbs *v, uint64_t clock_ps)
{
	return clock_ps < v->rule.hand_ps ? v->rule.hand_ps : clock_ps;
}

static void tick_set(struct ibemu_daemon *d, struct ibemu_sess_verbs *v,
		     uint64_t seq, uint64_t from, int at_now);

static void tick_fire(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct ibemu_sess_verbs *v =
		(struct ibemu_sess_verbs *)((char *)due -
					    offsetof(struct ibemu_sess_verbs,
						     tick));
	struct ibemu_verbs_page *p = v->page;
	uint64_t t = due->at_ps, from;

	v->tick_held = 0;
	if (v->c->closing || v->c->job_held ||
	    __atomic_load_n(&p->wait_seq, __ATOMIC_SEQ_CST) != v->tick_seq ||
	    !ibemu_rule_waiting(&v->rule, v->tick_seq))
		return;
	/* The process ran since, and waits again from a later clock: its
	 * tick counts from there, whether a look saw it run or not. */
	from = tick_from(v, __atomic_load_n(&p->clock_ps, __ATOMIC_ACQUIRE));
	if (from != v->tick_from) {
		if (from <= IBEMU_VERBS_MAX_STAMP_PS)
			tick_set(d, v, v->tick_seq, from, 0);
		return;
	}
	/* Given once every spinning process polls again (tick_arm). */
	if (!tick_earned(v) || !all_still_poll(d)) {
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
	v->tick_handed = v->rule.handed;
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

/* Arms the tick of 'v' for a wait from 'from' (now: 'at_now'). */
static void tick_set(struct ibemu_daemon *d, struct ibemu_sess_verbs *v,
		     uint64_t seq, uint64_t from, int at_now)
{
	v->tick_seq = seq;
	v->tick_from = from;
	v->tick_polls = __atomic_load_n(&v->page->spin_polls, __ATOMIC_RELAXED);
	v->tick_stalled = v->tick_held = 0;
	v->tick.fire = tick_fire;
	ibemu_due_arm(d, &v->tick,
		      at_now ? ibemu_engine_now(d->engine) : from + TICK_PS);
	d->sess->tick_armed = 1;
}

/*
 * Arms or drops the tick of verbs stream 'c', waiting or not by 'w'. A
 * process that runs keeps its tick armed: the tick fires only for the
 * wait it was armed for (tick_fire), and leaving it spares the due list
 * an arm and a cancel at every call of a process that calls between its
 * polls.
 */
static void tick_arm(struct ibemu_daemon *d, struct ibemu_sess_conn *c,
		     const struct ibemu_rule_words *w)
{
	struct ibemu_sess_verbs *v = c->verbs;
	uint64_t from;

	/* While anyone is only presumed to wait, there is no tick to run
	 * the engine to: it comes back, at its own time, once nobody is. */
	if (d->sess->presumed_any) {
		if (v->tick.armed)
			ibemu_due_cancel(d, &v->tick);
		v->tick_held = 0;
		return;
	}
	if (!ibemu_rule_waiting(&v->rule, w->wait_seq))
		return;
	if (!__atomic_load_n(&v->page->spins, __ATOMIC_SEQ_CST)) {
		if (v->tick.armed)
			ibemu_due_cancel(d, &v->tick);
		v->tick_stalled = v->tick_held = 0;
		return;
	}
	from = tick_from(v, w->clock_ps);
	if (from > IBEMU_VERBS_MAX_STAMP_PS)
		return; /* garbage: no time to tick at */
	if (v->tick_seq == w->wait_seq && v->tick_from == from) {
		if (v->tick.armed || (v->tick_stalled && !all_still_poll(d)))
			return;
		/* All poll again: the tick it missed is due now. */
		if (v->tick_stalled) {
			tick_set(d, v, w->wait_seq, from, 1);
			return;
		}
	}
	/* A new wait, or the same one spinning again after a block. */
	tick_set(d, v, w->wait_seq, from, 0);
}

/*
 * The horizon the ticks leave: the time of each one not yet earned by a
 * process that still polls (the fabric waits there for its polls); a
 * tick earned since the last look lets the engine run to it.
 */
static uint64_t tick_horizon(struct ibemu_daemon *d)
{
	uint64_t h = UINT64_MAX, now_ms = uv_now(&d->loop);
	struct ibemu_sess_verbs *v;
	struct ibemu_sess_conn *c;

	for (c = d->sess ? d->sess->conns : NULL; c; c = c->next) {
		if (c->kind != IBEMU_SESS_CONN_VERBS || !c->verbs ||
		    !c->verbs->tick.armed || c->closing || c->job_held)
			continue;
		v = c->verbs;
		if (!tick_earned(v) && polling(v, now_ms)) {
			v->tick_held = 1;
			if (v->tick.at_ps < h)
				h = v->tick.at_ps;
		} else if (v->tick_held) {
			v->tick_held = 0;
			d->sess->tick_armed = 1;
		}
	}
	return h;
}

uint64_t ibemu__sess_horizon(struct ibemu_daemon *d, pid_t *presumed)
{
	struct ibemu_sess_server *s = d->sess;
	uint64_t h = UINT64_MAX, b, now_ms = uv_now(&d->loop);
	uint64_t now_ns = uv_hrtime();
	struct ibemu_rule_proc *p;
	struct ibemu_rule_words w;
	struct ibemu_sess_conn *c;
	int grace;

	d->rule.presumed_asleep = 0;
	if (s)
		s->presumed_any = 0;
	for (c = s ? s->conns : NULL; c; c = c->next) {
		p = rule_of(c, &w);
		if (!p)
			continue;
		grace = 0;
		/* Memory polling is the verbs streams' alone. */
		if (c->kind == IBEMU_SESS_CONN_VERBS &&
		    mem_waits(d, c, &w, now_ns)) {
			s->presumed_any = 1;
			continue;
		}
		b = ibemu_rule_bound(&d->rule, p, &w, now_ms, &proc_cpu_ops,
				     (void *)(intptr_t)c->pid, &grace);
		if (grace) {
			*presumed = c->pid;
			d->rule.presumed_asleep = 0;
			s->presumed_any = 1;
		} else if (b == UINT64_MAX && asleep_waits(c, &w)) {
			*presumed = c->pid;
			d->rule.presumed_asleep = 1;
		}
		if (b < h)
			h = b;
	}
	/* The ticks once all are looked at: a presumption stalls them. */
	for (c = s ? s->conns : NULL; c; c = c->next)
		if (c->kind == IBEMU_SESS_CONN_VERBS && rule_of(c, &w))
			tick_arm(d, c, &w);
	b = tick_horizon(d);
	return b < h ? b : h;
}

/* Whether 'c' spins toward a tick not yet earned, at 'horizon'. */
static int tick_holds(const struct ibemu_sess_conn *c, uint64_t horizon)
{
	return c->kind == IBEMU_SESS_CONN_VERBS && c->verbs->tick_held &&
	       c->verbs->tick.at_ps == horizon;
}

int ibemu__sess_holder(struct ibemu_daemon *d, uint64_t horizon, pid_t *pid,
		       uint32_t *node)
{
	struct ibemu_sess_server *s = d->sess;
	struct ibemu_rule_proc *p;
	struct ibemu_rule_words w;
	struct ibemu_sess_conn *c;

	for (c = s ? s->conns : NULL; c; c = c->next) {
		p = rule_of(c, &w);
		if (p && (ibemu_rule_clock_bound(&d->rule, p, &w) == horizon ||
			  tick_holds(c, horizon))) {
			*pid = c->pid;
			*node = c->kind == IBEMU_SESS_CONN_VERBS
					? c->verbs->hca->node
					: c->node;
			return 0;
		}
	}
	return -ENOENT;
}
