// SPDX-License-Identifier: MIT
/*
 * Daemon life cycle: take the fabric's lock, detach, listen, run the loop,
 * and on the way out remove the socket, pid and lock files. The parent of a
 * detached daemon waits on a pipe until the daemon listens, so 'ibemu up'
 * returns only once the fabric answers (or says why it could not start).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "model.h"
#include "transport.h"

/*
 * Starts a new daemon.log once the current one has grown past
 * IBEMU_LOG_MAX_BYTES; the old one becomes daemon.log.1 (one kept). The
 * log is the daemon's stdout and stderr, where sanitizer reports go too.
 */
static void log_rotate(struct ibemu_daemon *d)
{
	char old[IBEMU_PATH_MAX + 2];
	int fd;

	if (snprintf(old, sizeof(old), "%s.1", d->paths.log) >=
		    (int)sizeof(old) ||
	    rename(d->paths.log, old))
		return; /* keep writing where we are; try again later */
	fd = open(d->paths.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return;
	fflush(stderr);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	d->log_bytes = 0;
	ibemu_daemon_log(d, "log rotated at %u bytes; earlier lines are in %s",
			 IBEMU_LOG_MAX_BYTES, old);
}

static void log_line(struct ibemu_daemon *d, const char *fmt, va_list ap,
		     const char *tail) IBEMU_PRINTF(2, 0);

static void log_line(struct ibemu_daemon *d, const char *fmt, va_list ap,
		     const char *tail)
{
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int n, total = 0;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = fprintf(stderr, "%s ibemu[%ld] %s: ", stamp, (long)getpid(),
		    d->topo ? d->topo->name : "-");
	total += n > 0 ? n : 0;
	n = vfprintf(stderr, fmt, ap);
	total += n > 0 ? n : 0;
	n = fprintf(stderr, "%s\n", tail);
	total += n > 0 ? n : 0;
	fflush(stderr);
	if (!d->log_rotates)
		return;
	d->log_bytes += (uint64_t)total;
	if (d->log_bytes >= IBEMU_LOG_MAX_BYTES)
		log_rotate(d);
}

void ibemu_daemon_log(struct ibemu_daemon *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(d, fmt, ap, "");
	va_end(ap);
}

int ibemu_daemon_peer_allowed(struct ibemu_daemon *d, int fd, const char *sock,
			      char *why, size_t whylen)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		snprintf(why, whylen,
			 "permission denied: the peer's uid is "
			 "unknown");
		return 0;
	}
	if (cred.uid == getuid())
		return 1;
	/* The same words the CLI finds by itself (ibemu_runtime_other_owner):
	 * a peer that could reach the socket (root) hears why. */
	snprintf(why, whylen,
		 "permission denied: fabric '%s' belongs to uid %u; uid %u "
		 "may not use it",
		 d->topo->name, (unsigned)getuid(), (unsigned)cred.uid);
	ibemu_daemon_log_limited(d, &d->refusals,
				 "refused a %s client of uid %u (pid %ld): "
				 "another user",
				 sock, (unsigned)cred.uid, (long)cred.pid);
	return 0;
}

void ibemu_daemon_log_limited(struct ibemu_daemon *d, struct ibemu_log_limit *l,
			      const char *fmt, ...)
{
	uint64_t now = uv_now(&d->loop), secs;
	char tail[96] = "";
	va_list ap;

	if (!l->primed) {
		l->primed = 1;
		l->tokens = IBEMU_LOG_BURST;
		l->refill_ms = now;
	}
	/* A token bucket: one line a second, IBEMU_LOG_BURST at most. */
	secs = (now - l->refill_ms) / 1000;
	if (secs) {
		l->tokens = secs >= IBEMU_LOG_BURST - l->tokens
				    ? IBEMU_LOG_BURST
				    : l->tokens + (uint32_t)secs;
		l->refill_ms += secs * 1000;
	}
	if (!l->tokens) {
		l->suppressed++;
		l->suppressed_total++;
		return;
	}
	l->tokens--;
	if (l->suppressed)
		snprintf(tail, sizeof(tail),
			 " (%llu more like this suppressed)",
			 (unsigned long long)l->suppressed);
	l->suppressed = 0;
	va_start(ap, fmt);
	log_line(d, fmt, ap, tail);
	va_end(ap);
}

static void signal_cb(uv_signal_t *h, int signum)
{
	struct ibemu_daemon *d = h->data;
	uint32_t sw, hca;

	if (signum == SIGUSR1) {
		ibemu_topo_count(d->topo, &sw, &hca);
		ibemu_daemon_log(
			d,
			"received %s: running %llu s, %u switches, "
			"%u HCAs, %s",
			strsignal(signum),
			(unsigned long long)(uv_now(&d->loop) - d->started_ms) /
				1000,
			sw, hca, d->servers->doing(d));
		return;
	}
	ibemu_daemon_log(d, "received %s, stopping", strsignal(signum));
	ibemu_daemon_stop(d);
}

/*
 * How often the daemon checks that its control socket is still the one it
 * bound. Once its runtime directory is removed nothing can reach it, and
 * a daemon started later under the same name must not meet its files.
 */
#define WATCH_MS 1000

static void watch_cb(uv_timer_t *t)
{
	struct ibemu_daemon *d = t->data;
	struct stat st;

	if (!lstat(d->paths.sock, &st) && st.st_dev == d->sock_dev &&
	    st.st_ino == d->sock_ino)
		return;
	d->orphaned = 1;
	ibemu_daemon_log(d,
			 "%s is gone or replaced (was the runtime directory "
			 "removed?); nothing can reach this daemon, stopping",
			 d->paths.sock);
	ibemu_daemon_stop(d);
}

static void signals_start(struct ibemu_daemon *d)
{
	struct {
		uv_signal_t *h;
		int signum;
	} sigs[] = {
		{&d->sigterm, SIGTERM}, {&d->sigint, SIGINT},
		{&d->sighup, SIGHUP},	{&d->sigquit, SIGQUIT},
		{&d->sigusr1, SIGUSR1},
	};
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(sigs); i++) {
		uv_signal_init(&d->loop, sigs[i].h);
		sigs[i].h->data = d;
		uv_signal_start(sigs[i].h, signal_cb, sigs[i].signum);
	}
}

/*
 * The one way the daemon's own handles close, each exactly once: on a stop
 * and when a start fails half way (libuv aborts on a handle closed twice).
 * The servers close theirs before; the loop then runs until every close
 * callback has been called.
 */
void ibemu__daemon_pump_init(struct ibemu_daemon *d)
{
	uv_idle_init(&d->loop, &d->pump_idle);
	d->pump_idle.data = d;
	uv_timer_init(&d->loop, &d->pace_timer);
	d->pace_timer.data = d;
	uv_timer_init(&d->loop, &d->grace_timer);
	d->grace_timer.data = d;
	uv_timer_init(&d->loop, &d->leap_timer);
	d->leap_timer.data = d;
}

void ibemu__daemon_pump_close(struct ibemu_daemon *d)
{
	uv_close((uv_handle_t *)&d->pump_idle, NULL);
	uv_close((uv_handle_t *)&d->pace_timer, NULL);
	uv_close((uv_handle_t *)&d->grace_timer, NULL);
	uv_close((uv_handle_t *)&d->leap_timer, NULL);
}

static void close_handles(struct ibemu_daemon *d)
{
	d->stopping = 1;
	ibemu__daemon_pump_close(d);
	uv_close((uv_handle_t *)&d->watch_timer, NULL);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	uv_close((uv_handle_t *)&d->sighup, NULL);
	uv_close((uv_handle_t *)&d->sigquit, NULL);
	uv_close((uv_handle_t *)&d->sigusr1, NULL);
	if (d->reserve_fd >= 0)
		close(d->reserve_fd);
	d->reserve_fd = -1;
}

void ibemu_daemon_stop(struct ibemu_daemon *d)
{
	if (d->stopping)
		return;
	d->servers->stop(d);
	close_handles(d);
}

/* No process attached (no session server, or one that stopped). */
static int none_any(const struct ibemu_daemon *d)
{
	(void)d;
	return 0;
}

static uint64_t none_horizon(struct ibemu_daemon *d, pid_t *presumed)
{
	(void)d;
	(void)presumed;
	return UINT64_MAX;
}

static int none_holder(struct ibemu_daemon *d, uint64_t horizon, pid_t *pid,
		       uint32_t *node)
{
	(void)d;
	(void)horizon;
	(void)pid;
	(void)node;
	return -ENOENT;
}

static int none_drain(struct ibemu_daemon *d)
{
	(void)d;
	return 0;
}

static void none_flush(struct ibemu_daemon *d)
{
	(void)d;
}

const struct ibemu_daemon_attached_ops ibemu__daemon_none_attached = {
	.any = none_any,
	.horizon = none_horizon,
	.holder = none_holder,
	.drain = none_drain,
	.flush = none_flush,
};

/* Engine events per turn of the loop for MADs: requests stay quick. */
#define PUMP_BATCH 100000

/*
 * Virtual time may not leap over a gap longer than this faster than the
 * wall clock: under --clock free while processes are attached (they live
 * in wall time there, and a retransmission timer must not beat them);
 * under the rule while every process waits (leap_ok()). A MAD's round
 * trip stays far below it and is never slowed down.
 */
#define PUMP_LEAP_PS 100000000ull /* 100 us */

static void pump_cb(uv_idle_t *h);

static void pace_cb(uv_timer_t *t)
{
	struct ibemu_daemon *d = t->data;

	/* The wall clock has caught up: run the event that waited. */
	if (d->rule.clock == IBEMU_CLOCK_FREE &&
	    d->pace_until < ibemu__due_next(d)) {
		d->attached->drain(d); /* receives come without a kick */
		ibemu_engine_run(d->engine, d->pace_until, PUMP_BATCH);
	}
	ibemu_daemon_pump(d);
}

static void leap_cb(uv_timer_t *t)
{
	ibemu_daemon_pump(t->data);
}

static void grace_cb(uv_timer_t *t)
{
	/* A process that ran without verbs calls may count as waiting now. */
	ibemu_daemon_pump(t->data);
}

/*
 * Under the time rule, while every process waits: whether virtual time
 * may leap from the engine's time to 't' now. A gap longer than
 * PUMP_LEAP_PS waits as long on the wall clock, counted from when the
 * engine first stood before it (the leap timer calls the pump then): an
 * idle fabric's timers (a port polling, an SM's sweep period) keep to the
 * wall clock, and a process outside the rule (one that never waited in
 * the library) gets time to act. Virtual times do not depend on it.
 */
static int leap_ok(struct ibemu_daemon *d, uint64_t t, pid_t presumed)
{
	uint64_t now = ibemu_engine_now(d->engine), wait_ms, waited;

	if (t <= now + PUMP_LEAP_PS)
		return 1;
	/* A timer that leaps (a CM retransmission) does so only while
	 * every process waits by the rule: one only presumed to wait (its
	 * grace period) may be computing what would have ended the timer
	 * (the REP a REQ's retry waits for), so the leap keeps to the
	 * wall clock and gives it the time to act. */
	if (d->due_head && d->due_head->leaps && t == d->due_head->at_ps &&
	    !presumed)
		return 1;
	if (d->leap_to != t || d->leap_from != now) {
		d->leap_to = t;
		d->leap_from = now;
		d->leap_since_ms = uv_now(&d->loop);
	}
	wait_ms = (t - now + 999999999ull) / 1000000000ull;
	waited = uv_now(&d->loop) - d->leap_since_ms;
	if (waited >= wait_ms)
		return 1;
	uv_timer_start(&d->leap_timer, leap_cb, wait_ms - waited, 0);
	return 0;
}

/*
 * Notes who holds virtual time: a running process whose bound is below
 * the engine's next event ('held' is 1), named with when it began, for
 * 'ibemu status'. The same process holding on keeps its start.
 */
static void note_holder(struct ibemu_daemon *d, uint64_t horizon, int held)
{
	uint32_t node = 0;
	pid_t pid = 0;

	if (!held || d->attached->holder(d, horizon, &pid, &node)) {
		d->held.pid = 0;
		return;
	}
	if (pid == d->held.pid && node == d->held.node)
		return;
	d->held.pid = pid;
	d->held.node = node;
	d->held.since_ms = uv_now(&d->loop);
	clock_gettime(CLOCK_REALTIME, &d->held.since);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * Time advanced while process 'presumed' only counted as waiting: the run
 * is not deterministic. Each way of presuming is logged once.
 */
static void note_presumed(struct ibemu_daemon *d, pid_t presumed)
{
	d->rule.nondet = 1;
	if (d->rule.presumed_asleep && !d->rule.logged_asleep) {
		d->rule.logged_asleep = 1;
		ibemu_daemon_log(
			d,
			"process %ld: a thread of it slept on a lock or a "
			"condition outside the library while another waited "
			"in it, and was counted as waiting: virtual time is "
			"not deterministic in this run",
			(long)presumed);
	} else if (!d->rule.presumed_asleep && !d->rule.logged_grace) {
		d->rule.logged_grace = 1;
		ibemu_daemon_log(
			d,
			"process %ld ran past its grace period (%u ms, "
			"twice; %u ms for a umad process) without a "
			"library call and was counted as waiting: "
			"virtual time is not deterministic in this run",
			(long)presumed, IBEMU_GRACE_MS, IBEMU_UMAD_GRACE_MS);
	}
}

/*
 * The quiescence rule (docs/design.md §3): runs the events and the items
 * due before the horizon the running processes leave (each one's clock
 * plus the doorbell delay: nothing it does can act earlier), one at a
 * time, since something handed to a process at T lowers the cap to T plus
 * that delay. Items due fire before the engine's events of their time.
 * Returns 1 if the idle handler should go on.
 */
static int quiesce_step(struct ibemu_daemon *d)
{
	struct ibemu_engine *e = d->engine;
	uint64_t next, due, horizon;
	pid_t presumed = 0;
	size_t n = 0;
	int drained;

	horizon = d->attached->horizon(d, &presumed);
	d->rule.last_horizon = horizon;
	/* Work posted before a process said it waits enters first, all of
	 * it: the engine waits while a ring holds more than a turn's. */
	drained = d->attached->drain(d);
	if (drained & IBEMU_DAEMON_DRAIN_MORE)
		return 1;
	next = min_u64(ibemu_engine_next_time(e), ibemu__due_next(d));
	note_holder(d, horizon, next >= horizon && next != UINT64_MAX);
	if (next >= horizon) {
		/* A process runs: time waits for it (or for its grace). */
		if (!uv_is_active((uv_handle_t *)&d->grace_timer))
			uv_timer_start(&d->grace_timer, grace_cb,
				       IBEMU_GRACE_MS, 0);
		return 0;
	}
	d->rule.run_cap = horizon;
	while (n < PUMP_BATCH) {
		next = ibemu_engine_next_time(e);
		due = ibemu__due_next(d);
		if (min_u64(next, due) >= d->rule.run_cap)
			break;
		/* Nobody runs (no cap): a long leap keeps to the wall. */
		if (d->rule.run_cap == UINT64_MAX &&
		    !leap_ok(d, min_u64(next, due), presumed))
			break;
		if (due <= next) {
			ibemu__due_fire_first(d);
			n++;
			continue;
		}
		n += ibemu_engine_run(e, next, 1);
		d->leap_to = 0; /* the next leap is paced afresh */
	}
	if (n && presumed)
		note_presumed(d, presumed);
	/* A run cut short by the batch limit publishes nothing yet: a
	 * process must find every completion up to the cap at once. */
	d->rule.mid_run = n == PUMP_BATCH;
	if (!d->rule.mid_run)
		d->attached->flush(d);
	return d->rule.mid_run || ibemu_engine_pending(e) != 0;
}

/* --clock free: runs a batch of events; 1 if the idle handler should go on. */
static int free_step(struct ibemu_daemon *d)
{
	struct ibemu_engine *e = d->engine;
	uint64_t now = ibemu_engine_now(e), next, due;
	uint64_t wait_ms;
	int drained;

	/* Receives are posted without a kick: the transport must see every
	 * one the process posted before the packets that may need it. */
	drained = d->attached->drain(d);
	if (drained & IBEMU_DAEMON_DRAIN_MORE)
		return 1;
	next = ibemu_engine_next_time(e);
	due = ibemu__due_next(d);
	if (min_u64(next, due) == UINT64_MAX)
		return 0;
	if (d->attached->any(d) && min_u64(next, due) > now + PUMP_LEAP_PS) {
		wait_ms = (min_u64(next, due) - now + 999999999ull) /
			  1000000000ull;
		d->pace_until = min_u64(next, due);
		uv_timer_start(&d->pace_timer, pace_cb, wait_ms, 0);
		return 0;
	}
	if (due <= next) {
		ibemu__due_fire_first(d);
		return 1;
	}
	/* Events of a due item's time run after it. */
	ibemu_engine_run(e, min_u64(now + PUMP_LEAP_PS, due - 1), PUMP_BATCH);
	return 1;
}

static int pump_step_once(struct ibemu_daemon *d)
{
	struct ibemu_engine *e = d->engine;

	if (!d->attached->any(d) && !d->due_head) {
		ibemu_engine_run(e, UINT64_MAX, PUMP_BATCH);
		return ibemu_engine_pending(e) != 0;
	}
	if (d->rule.clock == IBEMU_CLOCK_QUIESCE)
		return quiesce_step(d);
	return free_step(d);
}

/*
 * Runs a batch of events; returns 1 if the idle handler should go on. An
 * item due, or an event, that feeds the engine and asks for the pump
 * finds it running: the run under way takes what it fed.
 */
static int pump_step(struct ibemu_daemon *d)
{
	int ret;

	if (d->pumping)
		return 1;
	d->pumping = 1;
	ret = pump_step_once(d);
	d->pumping = 0;
	return ret;
}

static void pump_cb(uv_idle_t *h)
{
	struct ibemu_daemon *d = h->data;

	/* A traffic study runs the engine itself, MADs included. */
	if (d->engine_held || !pump_step(d))
		uv_idle_stop(h);
}

void ibemu_daemon_pump(struct ibemu_daemon *d)
{
	if (d->stopping || d->engine_held ||
	    (!ibemu_engine_pending(d->engine) && !d->due_head))
		return;
	/*
	 * Only items due, far off (an SM's wait for its sweep period is
	 * armed all along): the leap timer waits for the first, and a call
	 * costs no look at every process's rings (the loop's prepare hook
	 * drains them).
	 */
	if (d->rule.clock == IBEMU_CLOCK_QUIESCE &&
	    !ibemu_engine_pending(d->engine) &&
	    !leap_ok(d, d->due_head->at_ps, 0))
		return;
	uv_timer_stop(&d->pace_timer);
	/*
	 * At once: a MAD's round trip through the fabric is short, and the
	 * process that sent it waits for the answer. What a batch leaves
	 * runs in the loop's idle time.
	 */
	if (pump_step(d))
		uv_idle_start(&d->pump_idle, pump_cb);
}

static int write_pid(const struct ibemu_runtime_paths *p)
{
	FILE *f = fopen(p->pid, "w");

	if (!f)
		return -errno;
	fprintf(f, "%ld\n", (long)getpid());
	return fclose(f) ? -errno : 0;
}

/* Sets up the loop and the socket; on success the daemon is listening. */
static int daemon_init(struct ibemu_daemon *d, char *why, size_t whylen)
{
	struct stat st;
	int ret;

	ret = ibemu_model_create(d->topo, &d->engine);
	if (ret) {
		snprintf(why, whylen, "cannot build the fabric: %s",
			 strerror(-ret));
		goto err_fabric;
	}
	ret = uv_loop_init(&d->loop);
	if (ret) {
		snprintf(why, whylen, "cannot create event loop: %s",
			 uv_strerror(ret));
		goto err_fabric;
	}
	d->loop.data = d;
	signal(SIGPIPE, SIG_IGN);
	signals_start(d);
	uv_timer_init(&d->loop, &d->watch_timer);
	d->watch_timer.data = d;
	ibemu__daemon_pump_init(d);
	d->reserve_fd = ibemu__reserve_fd_open();
	ret = write_pid(&d->paths);
	if (ret) {
		snprintf(why, whylen, "cannot write %s: %s", d->paths.pid,
			 strerror(-ret));
		goto err_close;
	}
	ret = d->servers->start(d, why, whylen);
	if (ret)
		goto err_close;
	if (!lstat(d->paths.sock, &st)) {
		d->sock_dev = st.st_dev;
		d->sock_ino = st.st_ino;
		uv_timer_start(&d->watch_timer, watch_cb, WATCH_MS, WATCH_MS);
	}
	d->started_ms = uv_now(&d->loop);
	d->started_at = time(NULL);
	return 0;

err_close:
	/* The servers closed their handles if they failed to start. */
	close_handles(d);
	uv_run(&d->loop, UV_RUN_DEFAULT);
	uv_loop_close(&d->loop);
	d->servers->fini(d);
err_fabric:
	ibemu_engine_destroy(d->engine);
	d->engine = NULL;
	return ret;
}

static void daemon_fini(struct ibemu_daemon *d)
{
	int ret = uv_loop_close(&d->loop);

	if (ret)
		ibemu_daemon_log(d, "event loop closed with handles open: %s",
				 uv_strerror(ret));
	ibemu_daemon_log(d, "stopped");
	d->servers->fini(d);
	ibemu_engine_destroy(d->engine);
	ibemu_topo_destroy(d->topo);
	d->topo = NULL;
	/* Last: once the lock is gone a new daemon may take the name. */
	if (d->orphaned)
		close(d->lock_fd);
	else
		ibemu_runtime_release(&d->paths, d->lock_fd);
}

static void log_start(struct ibemu_daemon *d, int stale)
{
	uint32_t sw, hca;

	ibemu_topo_count(d->topo, &sw, &hca);
	if (stale)
		ibemu_daemon_log(d,
				 "replaced the stale socket %s left by a "
				 "daemon that did not stop cleanly",
				 d->paths.sock);
	ibemu_daemon_log(d,
			 "listening on %s: %u switches, %u HCAs, %u links, "
			 "clock %s",
			 d->paths.sock, sw, hca, d->topo->nlinks,
			 ibemu_clock_name(d->rule.clock));
}

/* Body of the detached child: never returns. */
static void run_detached(struct ibemu_daemon *d, int ready_fd, int stale)
{
	char why[256] = "";
	int fd, ret;

	setsid();
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	fd = open(d->paths.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		  0600);
	if (fd >= 0) {
		struct stat st;

		if (!fstat(fd, &st)) {
			d->log_rotates = 1;
			d->log_bytes = (uint64_t)st.st_size;
		}
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	ret = daemon_init(d, why, sizeof(why));
	if (ret) {
		ibemu_daemon_log(d, "cannot start: %s", why);
		/* Files first: 'ibemu up' returns when it reads the reason,
		 * and nothing of this daemon may be left by then. */
		ibemu_runtime_release(&d->paths, d->lock_fd);
		if (write(ready_fd, why, strlen(why)) < 0)
			ret = -errno;
		ibemu_topo_destroy(d->topo);
		exit(1);
	}
	log_start(d, stale);
	/* One byte '\0' means "listening"; then the parent may go. */
	if (write(ready_fd, "", 1) < 0)
		ibemu_daemon_log(d, "parent went away before start completed");
	close(ready_fd);
	uv_run(&d->loop, UV_RUN_DEFAULT);
	daemon_fini(d);
	exit(0);
}

/* How often 'ibemu up' says the daemon is still building its fabric. */
#define BUILD_NOTE_MS 3000

static int wait_ready(int ready_fd, pid_t child, const char *log, char *why,
		      size_t whylen)
{
	struct pollfd pfd = {.fd = ready_fd, .events = POLLIN};
	char msg[256];
	unsigned waited = 0;
	ssize_t n;

	/*
	 * Building a large fabric (its engine) takes a while:
	 * say so every few seconds rather than look hung.
	 */
	while (poll(&pfd, 1, BUILD_NOTE_MS) == 0) {
		waited += BUILD_NOTE_MS / 1000;
		fprintf(stderr,
			"ibemu: up: daemon (pid %ld) still building the "
			"fabric after %u s (see %s)\n",
			(long)child, waited, log);
	}
	do
		n = read(ready_fd, msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(ready_fd);
	if (n == 1 && msg[0] == '\0')
		return 0;
	if (n > 0) {
		msg[n] = '\0';
		snprintf(why, whylen, "%s", msg);
	} else {
		snprintf(why, whylen,
			 "daemon (pid %ld) exited during start; see %s",
			 (long)child, log);
	}
	return -EIO;
}

/*
 * The pid of the daemon that holds the lock of 'name'. The winner of two
 * 'up's at once writes its pid file only once its fabric is built: wait a
 * little for it rather than report pid 0.
 */
static pid_t locked_pid(const char *name)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	pid_t pid;
	int i;

	for (i = 0; i < 50 && !(pid = ibemu_runtime_pid(name)); i++)
		nanosleep(&ts, NULL);
	return pid;
}

int ibemu_daemon_start(struct ibemu_topo *t,
		       const struct ibemu_daemon_opts *opts,
		       const struct ibemu_daemon_servers *servers, char *why,
		       size_t whylen)
{
	static struct ibemu_daemon daemon; /* lives as long as the process */
	struct ibemu_daemon *d = &daemon;
	struct stat st;
	int pipefd[2], stale, ret;
	pid_t pid;

	memset(d, 0, sizeof(*d));
	d->reserve_fd = -1;
	d->topo = t;
	d->lock_fd = -1;
	d->servers = servers;
	d->attached = &ibemu__daemon_none_attached;
	ibemu_rule_init(&d->rule, opts->clock, IBEMU_TP_DOORBELL_PS);
	ret = ibemu_runtime_paths(t->name, &d->paths);
	if (ret) {
		ibemu_runtime_explain(ret, t->name, why, whylen);
		goto err_topo;
	}
	ret = ibemu_runtime_prepare(&d->paths, why, whylen);
	if (ret)
		goto err_topo;
	d->lock_fd = ibemu_runtime_lock(&d->paths);
	if (d->lock_fd < 0) {
		ret = d->lock_fd;
		pid = ret == -EBUSY ? locked_pid(t->name) : 0;
		if (pid > 0)
			snprintf(why, whylen,
				 "fabric '%s' is already running (pid %ld); "
				 "stop it with 'ibemu down --fabric %s'",
				 t->name, (long)pid, t->name);
		else if (ret == -EBUSY)
			snprintf(why, whylen,
				 "fabric '%s' is starting (another 'ibemu up' "
				 "holds its lock and has not written its pid "
				 "yet); try 'ibemu status --fabric %s' later",
				 t->name, t->name);
		else
			snprintf(why, whylen, "cannot lock %s: %s",
				 d->paths.lock, strerror(-ret));
		goto err_topo;
	}
	/* We hold the lock: a socket still there belongs to a dead daemon. */
	stale = !lstat(d->paths.sock, &st);
	if (stale)
		unlink(d->paths.sock);

	if (opts->foreground) {
		ret = daemon_init(d, why, whylen);
		if (ret) {
			ibemu_runtime_release(&d->paths, d->lock_fd);
			goto err_topo;
		}
		log_start(d, stale);
		uv_run(&d->loop, UV_RUN_DEFAULT);
		daemon_fini(d);
		return 0;
	}

	if (pipe2(pipefd, O_CLOEXEC)) {
		ret = -errno;
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		goto err_unlock;
	}
	fflush(NULL);
	/*
	 * Loading a large fabric leaves much of the heap free; handed back
	 * to the kernel now, the child's allocations there are fresh pages,
	 * not copies of pages it shares with this process (a 10,000-HCA
	 * fabric's start spent a third of its time copying them).
	 */
	malloc_trim(0);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		goto err_unlock;
	}
	if (pid == 0) {
		close(pipefd[0]);
		run_detached(d, pipefd[1], stale);
	}
	close(pipefd[1]);
	/* The child holds the lock now; our copy of the fd goes. */
	close(d->lock_fd);
	ret = wait_ready(pipefd[0], pid, d->paths.log, why, whylen);
	ibemu_topo_destroy(t);
	return ret;

err_unlock:
	ibemu_runtime_release(&d->paths, d->lock_fd);
err_topo:
	ibemu_topo_destroy(t);
	return ret;
}
