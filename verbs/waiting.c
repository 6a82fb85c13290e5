// SPDX-License-Identifier: MIT
/*
 * Whether the process waits, as the time rule must know it (docs/design.md
 * §3; the context page of proto/verbs_proto.h). A context waits only
 * while every thread that takes part in it waits: a thread takes part from
 * its first post, poll or wait on the context until it exits, and its
 * record here (one per thread and context, found through a thread-local
 * cache) says whether its last call was a wait, and on what. With one such
 * thread the page is written as it always was, without a lock; with more,
 * each change between running and waiting is made under 'users_lock', and
 * the thread that completes the set of waiters checks that the others
 * still have nothing to take. verbs/README.md ("Virtual time") states the
 * rule.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ibemu.h"
#include "verbs_int.h"

/* One thread's part in one context. */
struct ibemu_verbs_user {
	struct ibemu_verbs_context *ctx;      /* NULL once the context closed */
	struct ibemu_verbs_user *next_in_ctx; /* under users_lock */
	struct ibemu_verbs_user *next_in_thread; /* the owner's own list */
	/* Its last call waited ('waiting', atomic), after hand-off 'seen',
	 * on 'on' (a CQ, a channel or the async ring, by 'kind'); these
	 * three are written under users_lock (by the owner, or on a
	 * destroy), and other threads read them under it. */
	uint32_t waiting;
	uint32_t kind;
	void *on;
	uint64_t seen;
	/* The channel it last took an event from, and the hand-off count
	 * at its last wait (the owner's only). */
	void *events_from;
	uint64_t caught;
	/* The owner: its thread id, its count of calls under way that wait
	 * for the daemon, and what the last look at it found (asleep.c;
	 * read and written under users_lock). */
	pid_t tid;
	const uint32_t *in_call;
	struct ibemu_verbs_nap nap;
};

/* Guards every context's list of users and the changes made while more
 * than one thread takes part; contexts shared by threads are few. */
static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
/* Work queued by other libraries and not yet taken (ibemu_outside_work):
 * while there is any, no context of the process waits; since when (the
 * host's monotonic clock, in ns) there has been some. */
static uint32_t outside_queued;
static uint64_t outside_since_ns;

/*
 * How long a process that has work queued outside and goes on polling
 * counts as calling: the daemon's grace period (which takes a process
 * that spins without calls for one that waits on something else) is kept
 * off it that long, so the fabric waits for it to take the work, however
 * late the library that queued it looks (libfabric's ofi_rxm reads its
 * connection events every 10 ms of wall time). Beyond, a program that
 * never takes the work (a channel nobody reads) falls under the grace
 * period rather than hold every other process forever.
 */
#define OUTSIDE_HOLD_NS 2000000000ull
/*
 * A thread that waits in verbs while another thread of the process runs
 * looks at the running ones this often (wall time), and takes one that
 * has slept on a futex for ASLEEP_NS, outside the library, for one that
 * waits (asleep.c says why): long enough that a lock passed on at once
 * is not taken, far shorter than the grace period.
 */
#define ASLEEP_LOOK_NS 250000ull
#define ASLEEP_NS      1000000ull
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int exit_key_ok;

/* initial-exec: the fast path reads them without calling
 * __tls_get_addr (two pointers of the static TLS surplus). */
#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS struct ibemu_verbs_user *my_users;
static TLS struct ibemu_verbs_user *my_last;
static TLS uint32_t my_in_call;
static TLS uint64_t my_look_ns; /* when this thread looks at others next */

static uint32_t nusers(const struct ibemu_verbs_context *ctx)
{
	return __atomic_load_n(&ctx->nusers, __ATOMIC_SEQ_CST);
}

static void page_wait_seq(struct ibemu_verbs_context *ctx, uint64_t v)
{
	if (__atomic_load_n(&ctx->page->wait_seq, __ATOMIC_RELAXED) != v)
		__atomic_store_n(&ctx->page->wait_seq, v, __ATOMIC_SEQ_CST);
}

/*
 * Whether the wait the page states next is a spin (the daemon may hand
 * it the passing of time) or a block; stored before the wait reads
 * 'handing', which the daemon stores before it reads this
 * (attach/sess_verbs_rule.c, tick_fire).
 */
static void page_spins(struct ibemu_verbs_context *ctx, uint32_t v)
{
	if (__atomic_load_n(&ctx->page->spins, __ATOMIC_RELAXED) != v)
		__atomic_store_n(&ctx->page->spins, v, __ATOMIC_SEQ_CST);
}

/* Whether anything waits for user 'u' to take it (users_lock held). */
static int has_work(const struct ibemu_verbs_user *u)
{
	struct ibemu_verbs_channel *c;
	const struct ibemu_verbs_ring_hdr *h;
	const struct ibemu_verbs_cq *q;
	int found = 0;

	switch (u->kind) {
	case IBEMU_VERBS_WAIT_CQ:
		h = ((const struct ibemu_verbs_cq *)u->on)->ring.hdr;
		return __atomic_load_n(&h->prod, __ATOMIC_SEQ_CST) !=
		       __atomic_load_n(&h->cons, __ATOMIC_SEQ_CST);
	case IBEMU_VERBS_WAIT_CHANNEL:
		c = u->on;
		pthread_mutex_lock(&c->lock);
		for (q = c->cqs; q && !found; q = q->next_on_channel)
			found = __atomic_load_n(&q->ring.hdr->events,
						__ATOMIC_SEQ_CST) !=
				q->events_taken;
		pthread_mutex_unlock(&c->lock);
		return found;
	case IBEMU_VERBS_WAIT_ASYNC:
		h = &u->ctx->page->async_hdr;
		return __atomic_load_n(&h->prod, __ATOMIC_SEQ_CST) !=
		       __atomic_load_n(&h->cons, __ATOMIC_SEQ_CST);
	case IBEMU_VERBS_WAIT_OUTSIDE:
		return 0; /* all_wait() looks at the count for every user */
	case IBEMU_VERBS_WAIT_ASLEEP:
		/* A hand-off since it was presumed: the thread that took it
		 * may have woken this one (released its lock). */
		return 1;
	}
	return 0; /* what it waited on was destroyed */
}

/* Counts the users that run (users_lock held); returns the count. */
static uint32_t recount(struct ibemu_verbs_context *ctx)
{
	struct ibemu_verbs_user *u;
	uint32_t n = 0;

	for (u = ctx->users; u; u = u->next_in_ctx)
		n += !__atomic_load_n(&u->waiting, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ctx->nrunning, n, __ATOMIC_SEQ_CST);
	return n;
}

/*
 * Every user waits; 'seen' is the hand-off count read before the last of
 * them looked (users_lock held). Those that looked before a later hand-off
 * are checked for work it left them: a thread woken but not yet running
 * has some (it marks itself running before it takes anything). Returns 1
 * if the page now says the context waits (kicking the daemon if that is
 * news), 0 if a user has work (it will run), -1 if a hand-off is under way
 * (look again).
 */
static int all_wait(struct ibemu_verbs_context *ctx, uint64_t seen)
{
	struct ibemu_verbs_page *p = ctx->page;
	struct ibemu_verbs_user *u;

	for (u = ctx->users; u; u = u->next_in_ctx)
		if (u->seen != seen && has_work(u))
			return 0;
	if (__atomic_load_n(&outside_queued, __ATOMIC_SEQ_CST))
		return 0;
	if (__atomic_load_n(&p->handing, __ATOMIC_SEQ_CST) != seen)
		return -1;
	if (__atomic_load_n(&p->wait_seq, __ATOMIC_RELAXED) == seen + 1)
		return 1;
	__atomic_store_n(&p->wait_seq, seen + 1, __ATOMIC_SEQ_CST);
	ibemu__verbs_kick(ctx);
	return 1;
}

/*
 * After a user left or a thread joined while one waited alone (users_lock
 * held): the page says what the users now are. A hand-off under way ends
 * within microseconds; if it does not (a daemon gone), the context is left
 * running, which the grace period settles.
 */
static void settle(struct ibemu_verbs_context *ctx)
{
	int tries = 1000;

	if (recount(ctx)) {
		page_wait_seq(ctx, 0);
		return;
	}
	while (all_wait(ctx, ibemu__verbs_handed(ctx)) < 0 && --tries)
		sched_yield();
}

static void user_unlink(struct ibemu_verbs_user *u)
{
	struct ibemu_verbs_context *ctx = u->ctx;
	struct ibemu_verbs_user **pp;

	for (pp = &ctx->users; *pp != u; pp = &(*pp)->next_in_ctx)
		;
	*pp = u->next_in_ctx;
	__atomic_store_n(&ctx->nusers, ctx->nusers - 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u->ctx, NULL, __ATOMIC_RELAXED);
}

/* Frees this thread's records of closed contexts (users_lock held). */
static void prune_mine(void)
{
	struct ibemu_verbs_user **pp = &my_users, *u;

	while ((u = *pp)) {
		if (u->ctx) {
			pp = &u->next_in_thread;
			continue;
		}
		*pp = u->next_in_thread;
		if (my_last == u)
			my_last = NULL;
		free(u);
	}
}

/*
 * A thread that exits stops taking part: if the others all wait, the
 * context waits (with no other user too: what is left of the process made
 * control calls only, and is treated as a thread that stays silent).
 */
static void thread_exit_cb(void *arg)
{
	struct ibemu_verbs_context *ctx;
	struct ibemu_verbs_user *u;

	pthread_mutex_lock(&users_lock);
	while ((u = my_users)) {
		my_users = u->next_in_thread;
		ctx = u->ctx;
		if (ctx) {
			user_unlink(u);
			settle(ctx);
		}
		free(u);
	}
	my_last = NULL;
	pthread_mutex_unlock(&users_lock);
}

static void key_create(void)
{
	exit_key_ok = !pthread_key_create(&exit_key, thread_exit_cb);
}

static struct ibemu_verbs_user *user_find(struct ibemu_verbs_context *ctx)
{
	struct ibemu_verbs_user *u = my_last;

	if (u && __atomic_load_n(&u->ctx, __ATOMIC_RELAXED) == ctx)
		return u;
	for (u = my_users; u; u = u->next_in_thread)
		if (__atomic_load_n(&u->ctx, __ATOMIC_RELAXED) == ctx)
			return my_last = u;
	return NULL;
}

/*
 * The calling thread takes part in 'ctx' from now on, running. NULL if it
 * cannot be recorded (no memory, no thread key): its calls then count as
 * control calls, which never make the context wait wrongly.
 */
static struct ibemu_verbs_user *user_add(struct ibemu_verbs_context *ctx)
{
	struct ibemu_verbs_user *u;

	pthread_once(&key_once, key_create);
	if (!exit_key_ok || pthread_setspecific(exit_key, &my_users))
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->ctx = ctx;
	u->tid = (pid_t)syscall(SYS_gettid);
	u->in_call = &my_in_call;
	pthread_mutex_lock(&users_lock);
	prune_mine();
	u->next_in_thread = my_users;
	my_users = u;
	u->next_in_ctx = ctx->users;
	ctx->users = u;
	/* Before the page says running: a lone user that goes waiting at
	 * once looks at the count after its store and settles if needed. */
	__atomic_store_n(&ctx->nusers, ctx->nusers + 1, __ATOMIC_SEQ_CST);
	recount(ctx);
	page_wait_seq(ctx, 0);
	pthread_mutex_unlock(&users_lock);
	return my_last = u;
}

static void note(struct ibemu_verbs_user *u, uint64_t seen,
		 enum ibemu_verbs_wait kind, void *on)
{
	u->seen = seen;
	u->kind = kind;
	u->on = on;
	__atomic_store_n(&u->waiting, 1, __ATOMIC_SEQ_CST);
}

static int noted(const struct ibemu_verbs_user *u, uint64_t seen,
		 enum ibemu_verbs_wait kind, void *on)
{
	return __atomic_load_n(&u->waiting, __ATOMIC_RELAXED) &&
	       u->seen == seen && u->kind == kind && u->on == on;
}

/* Running, from waiting (the page says so before the thread takes
 * anything). */
static void to_running(struct ibemu_verbs_context *ctx,
		       struct ibemu_verbs_user *u)
{
	if (nusers(ctx) == 1) {
		__atomic_store_n(&u->waiting, 0, __ATOMIC_SEQ_CST);
		page_wait_seq(ctx, 0);
		return;
	}
	pthread_mutex_lock(&users_lock);
	__atomic_store_n(&u->waiting, 0, __ATOMIC_SEQ_CST);
	recount(ctx);
	page_wait_seq(ctx, 0);
	pthread_mutex_unlock(&users_lock);
}

/* A call that runs, by user 'u' or (NULL) a thread that does not take
 * part: with no user at all the context is as its last call says. */
static void run(struct ibemu_verbs_context *ctx, struct ibemu_verbs_user *u)
{
	struct ibemu_verbs_page *p = ctx->page;

	__atomic_store_n(&p->calls,
			 __atomic_load_n(&p->calls, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	if (__atomic_load_n(&p->took, __ATOMIC_RELAXED))
		__atomic_store_n(&p->took, 0, __ATOMIC_RELAXED);
	ibemu__verbs_clock_caught(ctx, ibemu__verbs_handed(ctx));
	ibemu__verbs_clock_observed(ctx, 1);
	ibemu__verbs_clock_publish(ctx);
	if (u && __atomic_load_n(&u->waiting, __ATOMIC_RELAXED))
		to_running(ctx, u);
	else if (u || !nusers(ctx))
		page_wait_seq(ctx, 0);
}

void ibemu__verbs_running(struct ibemu_verbs_context *ctx)
{
	struct ibemu_verbs_user *u;

	if (!ctx->page->rule)
		return;
	u = user_find(ctx);
	run(ctx, u ? u : user_add(ctx));
}

void ibemu__verbs_calling(struct ibemu_verbs_context *ctx)
{
	if (ctx->page->rule)
		run(ctx, user_find(ctx));
}

void ibemu__verbs_took(struct ibemu_verbs_context *ctx)
{
	/* Before the clock moves: once the daemon sees the new clock it
	 * may land a WRITE, and must then know what the process did. */
	if (!__atomic_load_n(&ctx->page->took, __ATOMIC_RELAXED))
		__atomic_store_n(&ctx->page->took, 1, __ATOMIC_SEQ_CST);
}

void ibemu__verbs_took_kick(struct ibemu_verbs_context *ctx)
{
	/* Taking a completion changes no bound, so nothing else would
	 * wake a sleeping daemon: it would see the spin only at its next
	 * wake for something else (the 10 ms grace timer). */
	if (__atomic_load_n(&ctx->remote_mrs, __ATOMIC_RELAXED))
		ibemu__verbs_kick(ctx);
}

uint64_t ibemu__verbs_handed(struct ibemu_verbs_context *ctx)
{
	return __atomic_load_n(&ctx->page->handed, __ATOMIC_SEQ_CST);
}

/* The only user: the page is its state, as with one thread always. */
static int alone_waits(struct ibemu_verbs_context *ctx,
		       struct ibemu_verbs_user *u, uint64_t seen,
		       enum ibemu_verbs_wait kind, void *on)
{
	struct ibemu_verbs_page *p = ctx->page;

	/* A hand-off under way since 'seen' was read: look again. */
	if (__atomic_load_n(&p->handing, __ATOMIC_SEQ_CST) != seen)
		return 0;
	if (!noted(u, seen, kind, on)) {
		/* Other threads read the record under users_lock, and one
		 * may have joined since the count said 1 (or be leaving).
		 * Once a wait, not once a poll. */
		pthread_mutex_lock(&users_lock);
		note(u, seen, kind, on);
		pthread_mutex_unlock(&users_lock);
	}
	if (__atomic_load_n(&p->wait_seq, __ATOMIC_RELAXED) == seen + 1)
		return 1;
	__atomic_store_n(&p->wait_seq, seen + 1, __ATOMIC_SEQ_CST);
	/* After the store: work queued outside meanwhile is seen here, or
	 * its producer's store (ibemu_outside_work) comes after ours. */
	if (__atomic_load_n(&outside_queued, __ATOMIC_SEQ_CST)) {
		page_wait_seq(ctx, 0);
		return 1;
	}
	if (nusers(ctx) != 1) {
		/* A thread joined meanwhile, running: the page says so. */
		pthread_mutex_lock(&users_lock);
		settle(ctx);
		pthread_mutex_unlock(&users_lock);
		return 1;
	}
	/* From running to waiting: the daemon may advance time now. */
	ibemu__verbs_kick(ctx);
	return 1;
}

/* The host's monotonic clock, not the program's (vtime/ makes that one
 * virtual). */
static uint64_t host_now_ns(void)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A wait while work is queued outside: the process still calls, as far
 * as the grace period looks (OUTSIDE_HOLD_NS). */
static void outside_busy(struct ibemu_verbs_context *ctx)
{
	struct ibemu_verbs_page *p = ctx->page;
	uint64_t since = __atomic_load_n(&outside_since_ns, __ATOMIC_RELAXED);

	if (host_now_ns() - since < OUTSIDE_HOLD_NS)
		__atomic_store_n(&p->calls,
				 __atomic_load_n(&p->calls, __ATOMIC_RELAXED) +
					 1,
				 __ATOMIC_RELAXED);
}

/*
 * Presumptions made before hand-off 'seen' lapse (users_lock held): the
 * thread that took it may have woken the sleeper (released the lock it
 * slept on), which then runs until it calls or is found asleep again.
 */
static void asleep_lapse(struct ibemu_verbs_context *ctx, uint64_t seen)
{
	struct ibemu_verbs_user *u;

	for (u = ctx->users; u; u = u->next_in_ctx)
		if (u->kind == IBEMU_VERBS_WAIT_ASLEEP && u->seen != seen &&
		    __atomic_load_n(&u->waiting, __ATOMIC_RELAXED)) {
			u->kind = IBEMU_VERBS_WAIT_NOTHING;
			__atomic_store_n(&u->waiting, 0, __ATOMIC_SEQ_CST);
		}
}

/*
 * The calling thread waits after hand-off 'seen' while others run: each
 * of those found asleep on a futex for ASLEEP_NS (asleep.c), and not in a
 * call to the daemon, is taken to wait too, on the process itself (a lock
 * that a waiting thread holds). It runs again at its next call or the next
 * hand-off. The page records it (asleep_seq): a condition may also be
 * signalled by a thread that reads a socket, whose peer acts in wall time,
 * so the daemon marks the run not deterministic.
 */
static void asleep_look(struct ibemu_verbs_context *ctx, uint64_t seen)
{
	struct ibemu_verbs_user *u;
	uint64_t now = host_now_ns();
	int found = 0;

	if (now < my_look_ns)
		return;
	my_look_ns = now + ASLEEP_LOOK_NS;
	pthread_mutex_lock(&users_lock);
	for (u = ctx->users; u; u = u->next_in_ctx) {
		if (__atomic_load_n(&u->waiting, __ATOMIC_SEQ_CST))
			continue;
		if (__atomic_load_n(u->in_call, __ATOMIC_SEQ_CST)) {
			u->nap.known = 0;
			continue;
		}
		if (!ibemu__verbs_thread_asleep(u->tid, &u->nap, now,
						ASLEEP_NS))
			continue;
		u->nap.known = 0;
		note(u, seen, IBEMU_VERBS_WAIT_ASLEEP, NULL);
		found = 1;
	}
	if (found && !recount(ctx)) {
		__atomic_store_n(&ctx->page->asleep_seq, seen + 1,
				 __ATOMIC_SEQ_CST);
		all_wait(ctx, seen);
	}
	pthread_mutex_unlock(&users_lock);
}

void ibemu__verbs_call_enter(void)
{
	__atomic_add_fetch(&my_in_call, 1, __ATOMIC_SEQ_CST);
}

void ibemu__verbs_call_leave(void)
{
	__atomic_sub_fetch(&my_in_call, 1, __ATOMIC_SEQ_CST);
}

int ibemu__verbs_waiting(struct ibemu_verbs_context *ctx, uint64_t seen,
			 enum ibemu_verbs_wait kind, void *on)
{
	struct ibemu_verbs_user *u;
	int ret = 1;

	if (!ctx->page->rule)
		return 1;
	if (__atomic_load_n(&outside_queued, __ATOMIC_SEQ_CST))
		outside_busy(ctx);
	/* A wait is a call: what the process did last is no longer taking
	 * a completion (a hand-off that resumes it must not find it a
	 * memory poller before it polls again). */
	if (__atomic_load_n(&ctx->page->took, __ATOMIC_RELAXED))
		__atomic_store_n(&ctx->page->took, 0, __ATOMIC_SEQ_CST);
	u = user_find(ctx);
	if (!u)
		u = user_add(ctx);
	if (!u)
		return 1; /* not recorded: the context stays running */
	/* A hand-off seen for the first time may carry the fabric's time
	 * and nothing else (a tick, attach/sess_verbs_rule.c): the clock
	 * moves there before the program reads it again. */
	if (u->caught != seen) {
		u->caught = seen;
		ibemu__verbs_clock_caught(ctx, seen);
	}
	page_spins(ctx, kind == IBEMU_VERBS_WAIT_CQ);
	if (nusers(ctx) == 1)
		return alone_waits(ctx, u, seen, kind, on);
	/* Others run, or the context already waits as of 'seen'. */
	if (noted(u, seen, kind, on)) {
		if (__atomic_load_n(&ctx->nrunning, __ATOMIC_SEQ_CST)) {
			asleep_look(ctx, seen);
			return 1;
		}
		if (__atomic_load_n(&ctx->page->wait_seq, __ATOMIC_SEQ_CST) ==
		    seen + 1)
			return 1;
	}
	pthread_mutex_lock(&users_lock);
	note(u, seen, kind, on);
	asleep_lapse(ctx, seen);
	if (!recount(ctx))
		ret = all_wait(ctx, seen) >= 0;
	pthread_mutex_unlock(&users_lock);
	return ret;
}

/* The page of 'ctx' says running; under users_lock, as all_wait() looks
 * at the count under it (the list's lock comes first, as everywhere). */
static void outside_runs(struct ibemu_verbs_context *ctx, void *arg)
{
	(void)arg;
	if (!ctx->page->rule)
		return;
	pthread_mutex_lock(&users_lock);
	page_wait_seq(ctx, 0);
	pthread_mutex_unlock(&users_lock);
}

VERBS_EXPORT void ibemu_outside_work(int delta)
{
	if (delta <= 0) {
		/* Taken: the taker runs, and waits again by a call. */
		__atomic_sub_fetch(&outside_queued, (uint32_t)-delta,
				   __ATOMIC_SEQ_CST);
		return;
	}
	if (__atomic_fetch_add(&outside_queued, (uint32_t)delta,
			       __ATOMIC_SEQ_CST) == 0)
		__atomic_store_n(&outside_since_ns, host_now_ns(),
				 __ATOMIC_RELAXED);
	ibemu__verbs_each_context(outside_runs, NULL);
}

static void outside_wait_begin(struct ibemu_verbs_context *ctx, void *arg)
{
	(void)arg;
	ibemu__verbs_waiting(ctx, ibemu__verbs_handed(ctx),
			     IBEMU_VERBS_WAIT_OUTSIDE, &outside_queued);
}

static void outside_wait_end(struct ibemu_verbs_context *ctx, void *arg)
{
	(void)arg;
	ibemu__verbs_running(ctx);
}

VERBS_EXPORT void ibemu_outside_wait(int begin)
{
	ibemu__verbs_each_context(begin ? outside_wait_begin : outside_wait_end,
				  NULL);
}

void ibemu__verbs_took_event(struct ibemu_verbs_context *ctx, void *channel)
{
	struct ibemu_verbs_user *u;

	if (ctx->page->rule && (u = user_find(ctx)))
		u->events_from = channel;
}

int ibemu__verbs_armed(struct ibemu_verbs_context *ctx, uint64_t seen,
		       void *channel)
{
	struct ibemu_verbs_user *u;

	if (!ctx->page->rule)
		return 1;
	u = user_find(ctx);
	if (!u || u->events_from != channel)
		return 1;
	return ibemu__verbs_waiting(ctx, seen, IBEMU_VERBS_WAIT_CHANNEL,
				    channel);
}

void ibemu__verbs_poll_idle(struct ibemu_verbs_context *ctx)
{
	if (ctx->page->rule)
		sched_yield();
}

void ibemu__verbs_users_forget(struct ibemu_verbs_context *ctx, void *on)
{
	struct ibemu_verbs_user *u;

	pthread_mutex_lock(&users_lock);
	for (u = ctx->users; u; u = u->next_in_ctx)
		if (u->on == on) {
			u->kind = IBEMU_VERBS_WAIT_NOTHING;
			u->on = NULL;
		}
	pthread_mutex_unlock(&users_lock);
}

void ibemu__verbs_users_detach(struct ibemu_verbs_context *ctx)
{
	pthread_mutex_lock(&users_lock);
	while (ctx->users)
		user_unlink(ctx->users);
	prune_mine();
	pthread_mutex_unlock(&users_lock);
}
