// SPDX-License-Identifier: MIT
/*
 * Completion queues and completion channels. A CQ is a ring in memory
 * shared with the daemon, which writes the completions of the HCA's
 * transport into it; ibv_poll_cq() reads them without a system call. A
 * channel's fd is an eventfd (semaphore mode) the daemon writes once per
 * event, so it polls readable exactly while ibv_get_cq_event() has one to
 * return, and a program may make it non-blocking. An armed CQ
 * (ibv_req_notify_cq, a flag in the ring's header) raises one event at its
 * next completion (IBA 11.4.2.2); destroying a CQ waits until every event
 * it raised is acknowledged, as rdma-core does.
 */
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "verbs_int.h"

VERBS_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibemu_verbs_channel *c = calloc(1, sizeof(*c));

	if (!c)
		return ibemu__verbs_null(ENOMEM);
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL; /* errno from eventfd: EMFILE, ENFILE, ENOMEM */
	}
	c->ch.context = context;
	pthread_mutex_init(&c->lock, NULL);
	ibemu__verbs_charge_local(ibemu__verbs_ctx(context),
				  IBEMU_VCOST_CHANNEL_CREATE);
	return &c->ch;
}

/* EBUSY while a CQ uses it (refcnt, under the context's mutex). */
VERBS_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibemu_verbs_channel *c = (struct ibemu_verbs_channel *)channel;
	struct ibv_context *context = channel->context;

	ibemu__verbs_charge_local(ibemu__verbs_ctx(context),
				  IBEMU_VCOST_CHANNEL_DESTROY);
	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	pthread_mutex_unlock(&context->mutex);
	ibemu__verbs_users_forget(ibemu__verbs_ctx(context), c);
	close(channel->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

/*
 * The ring of a CQ of 'cqe' entries: the smallest power of two above it,
 * as ConnectX sizes CQs (which report 2^n - 1), and at least 256 entries
 * (16 KiB), room that ibv_resize_cq() may grow into.
 */
#define CQ_MIN_RING 256u

static uint32_t cq_ring_size(int cqe)
{
	uint32_t n = ibemu__verbs_pow2((uint32_t)cqe + 1);

	return n < CQ_MIN_RING ? CQ_MIN_RING : n;
}

static int cq_size(int cqe)
{
	return (int)(ibemu__verbs_pow2((uint32_t)cqe + 1) - 1);
}

struct ibemu_verbs_cq *ibemu__verbs_cq_create(struct ibv_context *context,
					      int cqe, void *cq_context,
					      struct ibv_comp_channel *channel,
					      int comp_vector)
{
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_cq *cq;

	if (cqe < 1 || (unsigned)cqe > ctx->dev->lim->max_cqe ||
	    comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
	    (channel && channel->context != context))
		return ibemu__verbs_null(EINVAL);
	struct ibemu_verbs_cq_req r = {0};
	int fds[2], ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return ibemu__verbs_null(ENOMEM);
	fds[0] = ibemu__verbs_ring_create(&cq->ring, cq_ring_size(cqe),
					  sizeof(struct ibemu_verbs_cqe));
	if (fds[0] < 0) {
		free(cq);
		return ibemu__verbs_null(-fds[0]);
	}
	r.entries = cq->ring.size;
	r.channel = !!channel;
	if (channel)
		fds[1] = channel->fd;
	ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_CQ_CREATE, &r, sizeof(r),
				fds, channel ? 2 : 1);
	close(fds[0]);
	if (ret) {
		ibemu__verbs_ring_destroy(&cq->ring);
		free(cq);
		return ibemu__verbs_null(ret);
	}
	cq->cq.handle = r.id;
	pthread_mutex_lock(&context->mutex);
	if (ctx->ncqs >= IBEMU_VERBS_MAX_CQ) {
		struct ibemu_verbs_obj o = {.id = r.id};

		pthread_mutex_unlock(&context->mutex);
		ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_CQ_DESTROY, &o,
				  sizeof(o), NULL, 0);
		ibemu__verbs_ring_destroy(&cq->ring);
		free(cq);
		return ibemu__verbs_null(ENOMEM);
	}
	ctx->ncqs++;
	if (channel)
		channel->refcnt++;
	cq->next = ctx->cqs;
	ctx->cqs = cq;
	pthread_mutex_unlock(&context->mutex);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cq_size(cqe);
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_mutex_init(&cq->poll_lock, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel) {
		struct ibemu_verbs_channel *c =
			(struct ibemu_verbs_channel *)channel;

		pthread_mutex_lock(&c->lock);
		cq->next_on_channel = c->cqs;
		c->cqs = cq;
		pthread_mutex_unlock(&c->lock);
	}
	return cq;
}

VERBS_EXPORT struct ibv_cq *
ibemu__ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
		     struct ibv_comp_channel *channel, int comp_vector);
VERBS_SYMVER_DEFAULT(ibemu__ibv_create_cq, ibv_create_cq, "IBVERBS_1.1");
struct ibv_cq *ibemu__ibv_create_cq(struct ibv_context *context, int cqe,
				    void *cq_context,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct ibemu_verbs_cq *cq = ibemu__verbs_cq_create(
		context, cqe, cq_context, channel, comp_vector);

	return cq ? &cq->cq : NULL;
}

/* Takes CQ 'cq' off its channel's list: its unread events are skipped. */
static void channel_unlink(struct ibemu_verbs_cq *cq)
{
	struct ibemu_verbs_channel *c;
	struct ibemu_verbs_cq **p;

	if (!cq->cq.channel)
		return;
	c = (struct ibemu_verbs_channel *)cq->cq.channel;
	pthread_mutex_lock(&c->lock);
	for (p = &c->cqs; *p; p = &(*p)->next_on_channel) {
		if (*p == cq) {
			*p = cq->next_on_channel;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
}

VERBS_EXPORT int ibemu__ibv_destroy_cq(struct ibv_cq *cq);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_cq, ibv_destroy_cq, "IBVERBS_1.1");
int ibemu__ibv_destroy_cq(struct ibv_cq *cq)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq, **pp;
	struct ibv_context *context = cq->context;
	struct ibemu_verbs_obj o = {.id = cq->handle};
	int ret;

	/* EBUSY while a QP uses it. */
	ret = ibemu__verbs_call(ibemu__verbs_ctx(context),
				IBEMU_SESS_VERBS_CQ_DESTROY, &o, sizeof(o),
				NULL, 0);
	if (ret)
		return ret;
	channel_unlink(q);
	/* ibv_destroy_cq(3): every event read must have been acked. */
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != q->events_read)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	pthread_mutex_lock(&context->mutex);
	ibemu__verbs_ctx(context)->ncqs--;
	if (cq->channel)
		cq->channel->refcnt--;
	for (pp = &ibemu__verbs_ctx(context)->cqs; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	pthread_mutex_unlock(&context->mutex);
	ibemu__verbs_users_forget(ibemu__verbs_ctx(context), q);
	ibemu__verbs_ring_destroy(&q->ring);
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	pthread_mutex_destroy(&q->poll_lock);
	free(q);
	return 0;
}

VERBS_EXPORT int ibemu__ibv_resize_cq(struct ibv_cq *cq, int cqe);
VERBS_SYMVER_DEFAULT(ibemu__ibv_resize_cq, ibv_resize_cq, "IBVERBS_1.1");
int ibemu__ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq;

	if (cqe < 1 ||
	    (unsigned)cqe > ibemu__verbs_ctx(cq->context)->dev->lim->max_cqe)
		return EINVAL;
	/* Within the ring's room; moving completions to a larger ring is
	 * not done yet. */
	if ((uint32_t)cqe >= q->ring.size)
		return ENOMEM;
	cq->cqe = cq_size(cqe);
	return 0;
}

/* A CQ of channel 'c' whose header counts an event not taken yet. */
static struct ibemu_verbs_cq *channel_pending(struct ibemu_verbs_channel *c)
{
	struct ibemu_verbs_cq *q;

	pthread_mutex_lock(&c->lock);
	for (q = c->cqs; q; q = q->next_on_channel)
		if (__atomic_load_n(&q->ring.hdr->events, __ATOMIC_ACQUIRE) !=
		    q->events_taken)
			break;
	pthread_mutex_unlock(&c->lock);
	return q;
}

/*
 * Wall time, by the system call: under `ibemu exec` the program's
 * clock_gettime is virtual (vtime/), and a spin timed by it would charge
 * its reads to the process's virtual clock while it waits.
 */
static uint64_t now_ns(void)
{
	struct timespec t;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/*
 * Before blocking in the eventfd: an awake daemon raises the event a few
 * microseconds after the process said it waits, and a wake across cores
 * costs tens (docs/design.md §6), so look for up to CHANNEL_SPIN_NS
 * first, giving the CPU away at each step (the daemon may share it). A
 * non-blocking channel answers at once, as the program asked.
 */
#define CHANNEL_SPIN_NS 20000ull

static void channel_spin(struct ibemu_verbs_channel *c)
{
	uint64_t start = now_ns();
	int fl = fcntl(c->ch.fd, F_GETFL);

	if (fl < 0 || (fl & O_NONBLOCK))
		return;

	while (!channel_pending(c) && now_ns() - start < CHANNEL_SPIN_NS)
		sched_yield();
}

/*
 * Reads one count of the channel's eventfd; a blocking read also wakes when
 * the daemon goes. Returns what read() returns; once the daemon is gone
 * and nothing is left, -1 with EIO, as the kernel's channel after a device
 * removal.
 */
static ssize_t channel_read(struct ibemu_verbs_context *ctx,
			    struct ibv_comp_channel *ch, uint64_t *one)
{
	struct pollfd p[2] = {{.fd = ch->fd, .events = POLLIN},
			      {.fd = ctx->sess_fd, .events = POLLRDHUP}};
	int fl = fcntl(ch->fd, F_GETFL);
	ssize_t n;

	if (fl >= 0 && !(fl & O_NONBLOCK)) {
		if (poll(p, 2, -1) < 0)
			return -1; /* EINTR */
		/* Nothing counted, and no daemon left to count more. */
		if (!(p[0].revents & POLLIN) && ibemu__verbs_stream_gone(ctx)) {
			errno = EIO;
			return -1;
		}
	}
	n = read(ch->fd, one, sizeof(*one));
	if (n < 0 && errno == EAGAIN && ibemu__verbs_stream_gone(ctx))
		errno = EIO;
	return n;
}

/*
 * Returns the next CQ with an event, blocking unless the program made the
 * fd non-blocking (then -1 with EAGAIN). A count left by a destroyed CQ is
 * consumed and skipped.
 */
VERBS_EXPORT int ibemu__ibv_get_cq_event(struct ibv_comp_channel *channel,
					 struct ibv_cq **cq, void **cq_context);
VERBS_SYMVER_DEFAULT(ibemu__ibv_get_cq_event, ibv_get_cq_event, "IBVERBS_1.1");
int ibemu__ibv_get_cq_event(struct ibv_comp_channel *channel,
			    struct ibv_cq **cq, void **cq_context)
{
	struct ibemu_verbs_channel *c = (struct ibemu_verbs_channel *)channel;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(channel->context);
	struct ibemu_verbs_cq *q;
	uint64_t one, seen;
	ssize_t n;

	for (;;) {
		/* About to block with no event raised: the process waits. */
		do {
			seen = ibemu__verbs_handed(ctx);
			q = channel_pending(c);
		} while (!q && !ibemu__verbs_waiting(
				       ctx, seen, IBEMU_VERBS_WAIT_CHANNEL, c));
		if (!q)
			channel_spin(c);
		n = channel_read(ctx, channel, &one);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(one))
			return -1;
		/* Running before it takes the event (waiting.c). */
		ibemu__verbs_running(ctx);
		/* The CQ whose header counts more events than were taken. */
		pthread_mutex_lock(&c->lock);
		for (q = c->cqs; q; q = q->next_on_channel) {
			if (__atomic_load_n(&q->ring.hdr->events,
					    __ATOMIC_ACQUIRE) !=
			    q->events_taken) {
				q->events_taken++;
				q->event_prod = __atomic_load_n(
					&q->ring.hdr->prod, __ATOMIC_ACQUIRE);
				__atomic_store_n(&q->polled, 0,
						 __ATOMIC_RELAXED);
				break;
			}
		}
		pthread_mutex_unlock(&c->lock);
		if (q)
			break;
	}
	ibemu__verbs_took_event(ctx, c);
	ibemu__verbs_charge(ctx, IBEMU_VCOST_GET_EVENT, 0);
	pthread_mutex_lock(&q->cq.mutex);
	q->events_read++;
	pthread_mutex_unlock(&q->cq.mutex);
	*cq = &q->cq;
	*cq_context = q->cq.cq_context;
	return 0;
}

VERBS_EXPORT void ibemu__ibv_ack_cq_events(struct ibv_cq *cq,
					   unsigned int nevents);
VERBS_SYMVER_DEFAULT(ibemu__ibv_ack_cq_events, ibv_ack_cq_events,
		     "IBVERBS_1.1");
void ibemu__ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/*
 * Reads completions from the CQ's ring: no system call. Under the time
 * rule the clock moves to the latest time among those returned (the
 * daemon makes visible at once every completion up to a doorbell delay
 * past the one that resumes the process, and nothing more until it waits
 * again, so what a call finds does not depend on when it looked). An
 * empty CQ means the process waits.
 */
int ibemu__verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(cq->context);
	struct ibemu_verbs_ring *r = &q->ring;
	const struct ibemu_verbs_cqe *e;
	int rule = (int)ctx->page->rule;
	uint64_t seen = 0, t0 = 0;
	uint32_t prod;
	int n = 0;

	if (num_entries < 0)
		return -1;
	if (rule)
		seen = ibemu__verbs_handed(ctx);
	pthread_mutex_lock(&q->poll_lock);
	__atomic_store_n(&q->polled, 1, __ATOMIC_RELAXED);
	prod = __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE);
	/* Running before it takes anything (waiting.c). */
	if (rule && num_entries && r->idx != prod)
		ibemu__verbs_running(ctx);
	while (n < num_entries && r->idx != prod) {
		e = (const void *)(r->ents +
				   (size_t)(r->idx & (r->size - 1)) * r->esz);
		if (e->time_ps > t0)
			t0 = e->time_ps;
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = e->wr_id;
		wc[n].status = (enum ibv_wc_status)e->status;
		wc[n].opcode = (enum ibv_wc_opcode)e->opcode;
		wc[n].vendor_err = e->vendor_err;
		wc[n].byte_len = e->byte_len;
		wc[n].imm_data = htobe32(e->imm_data);
		wc[n].qp_num = e->qp_num;
		wc[n].src_qp = e->src_qp;
		wc[n].wc_flags = e->wc_flags;
		wc[n].pkey_index = e->pkey_index;
		wc[n].slid = e->slid;
		wc[n].sl = e->sl;
		wc[n].dlid_path_bits = e->dlid_path_bits;
		n++;
		r->idx++;
	}
	if (n)
		__atomic_store_n(&r->hdr->cons, r->idx, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&q->poll_lock);
	if (rule && n) {
		ibemu__verbs_took(ctx);
		ibemu__verbs_clock_at_least(ctx, t0);
		ibemu__verbs_charge(ctx, IBEMU_VCOST_POLL_HIT, 0);
		ibemu__verbs_took_kick(ctx);
	} else if (rule) {
		ibemu__verbs_waiting(ctx, seen, IBEMU_VERBS_WAIT_CQ, q);
	}
	if (!n) {
		ibemu__verbs_empty_poll(ctx);
		ibemu__verbs_poll_idle(ctx);
	}
	/* A CQ the daemon put into error (overrun) fails, as a provider's
	 * poll on a CQ in error does. */
	if (!n && __atomic_load_n(&r->hdr->error, __ATOMIC_ACQUIRE))
		return -1;
	return n;
}

/*
 * Armed with completions in the CQ that the program cannot know of, the
 * CQ raises its event at once (one the arm covers: any, or a solicited
 * or failed one). Those are the completions it left after polling the CQ
 * since its last event, or, if it has not polled since, those that came
 * after that event: Open MPI's udcm polls 20 completions an event and
 * arms after the sends that answer them, so a message that came
 * meanwhile, or the 21st, would wait for another, and the last message
 * of a connection (its COMPLETE, never sent again once the sender is
 * connected) for ever. A program that arms on taking an event and polls
 * after (ibv_get_cq_event(3)'s pattern, ibv_rc_pingpong -e) gets no event
 * for what it is about to poll. verbs/README.md says why this, not IBA's
 * "next completion" alone. The daemon disarms with the same
 * compare-and-swap, so one event is raised.
 */
static void arm_pending(struct ibemu_verbs_cq *q, uint32_t arm)
{
	struct ibemu_verbs_ring *r = &q->ring;
	const struct ibemu_verbs_cqe *e;
	uint32_t i, prod, fire = 0;
	uint64_t one = 1;
	ssize_t n;

	if (!arm)
		return; /* the daemon raised it already */
	pthread_mutex_lock(&q->poll_lock);
	prod = __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE);
	i = r->idx;
	if (!__atomic_load_n(&q->polled, __ATOMIC_RELAXED) &&
	    (int32_t)(q->event_prod - i) > 0)
		i = q->event_prod;
	for (; (int32_t)(prod - i) > 0 && !fire; i++) {
		e = (const void *)(r->ents +
				   (size_t)(i & (r->size - 1)) * r->esz);
		fire = arm == 1 || e->solicited || e->status;
	}
	pthread_mutex_unlock(&q->poll_lock);
	if (!fire ||
	    !__atomic_compare_exchange_n(&r->hdr->arm, &arm, 0, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_add(&r->hdr->events, 1, __ATOMIC_RELEASE);
	n = write(q->cq.channel->fd, &one, sizeof(one));
	(void)n;
}

/*
 * Arms the CQ for its next completion (any, or solicited only) through
 * the ring's header; the daemon raises the event and disarms it. A CQ
 * armed for any completion stays so when asked for solicited ones only
 * (IBA 11.4.2.2: the request for the next completion is the wider one).
 */
int ibemu__verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(cq->context);
	const struct ibemu_verbs_ring_hdr *h = q->ring.hdr;
	uint32_t unarmed = 0;
	uint64_t seen;

	ibemu__verbs_charge_local(ctx, IBEMU_VCOST_REQ_NOTIFY);
	if (solicited_only)
		__atomic_compare_exchange_n(&q->ring.hdr->arm, &unarmed, 2u, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	else
		__atomic_store_n(&q->ring.hdr->arm, 1u, __ATOMIC_SEQ_CST);
	/* Orders the arm before the next poll's read of the producer index,
	 * against the daemon's store of the index before its read of 'arm'
	 * (attach/sess_verbs_tp.c, tp_cqe_cb). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (cq->channel)
		arm_pending(q, __atomic_load_n(&h->arm, __ATOMIC_SEQ_CST));
	/* Armed with nothing left to poll: a thread that takes its events
	 * from the channel waits on it from here (waiting.c). */
	if (cq->channel && ctx->page->rule)
		do
			seen = ibemu__verbs_handed(ctx);
		while (__atomic_load_n(&h->prod, __ATOMIC_SEQ_CST) ==
			       __atomic_load_n(&h->cons, __ATOMIC_SEQ_CST) &&
		       !ibemu__verbs_armed(ctx, seen, cq->channel));
	return 0;
}
