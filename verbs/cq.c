// SPDX-License-Identifier: MIT
/*
 * Completion queues and completion channels. A channel's fd is an eventfd
 * (semaphore mode) that counts the completion events queued on it, so it
 * polls readable exactly while ibv_get_cq_event() has one to return, and a
 * program may make it non-blocking. An armed CQ (ibv_req_notify_cq) raises
 * one event at its next completion (IBA 11.4.2.2); destroying a CQ waits
 * until every event it raised is acknowledged, as rdma-core does. The
 * completions themselves come with the transport: until then a CQ stays
 * empty and ibv_poll_cq() returns 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
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
	return &c->ch;
}

/* EBUSY while a CQ uses it (refcnt, under the context's mutex). */
VERBS_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibemu_verbs_channel *c = (struct ibemu_verbs_channel *)channel;
	struct ibv_context *context = channel->context;

	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	pthread_mutex_unlock(&context->mutex);
	close(channel->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

/* The smallest 2^n - 1 that holds 'cqe' entries, as ConnectX sizes CQs. */
static int cq_size(int cqe)
{
	unsigned n = 1;

	while (n - 1 < (unsigned)cqe)
		n <<= 1;
	return (int)(n - 1);
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
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_cq *cq;

	if (cqe < 1 || (unsigned)cqe > IBEMU_VERBS_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors ||
	    (channel && channel->context != context))
		return ibemu__verbs_null(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return ibemu__verbs_null(ENOMEM);
	pthread_mutex_lock(&context->mutex);
	if (ctx->ncqs >= IBEMU_VERBS_MAX_CQ) {
		pthread_mutex_unlock(&context->mutex);
		free(cq);
		return ibemu__verbs_null(ENOMEM);
	}
	ctx->ncqs++;
	if (channel)
		channel->refcnt++;
	pthread_mutex_unlock(&context->mutex);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cq_size(cqe);
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	return &cq->cq;
}

/* Takes CQ 'cq' off its channel's queue if its event is still there. */
static void channel_unqueue(struct ibemu_verbs_cq *cq)
{
	struct ibemu_verbs_channel *c;
	struct ibemu_verbs_cq **p;

	if (!cq->cq.channel)
		return;
	c = (struct ibemu_verbs_channel *)cq->cq.channel;
	pthread_mutex_lock(&c->lock);
	if (cq->queued) {
		for (p = &c->head; *p != cq; p = &(*p)->next_event)
			;
		*p = cq->next_event;
		if (c->tail == cq) {
			c->tail = NULL;
			for (p = &c->head; *p; p = &(*p)->next_event)
				c->tail = *p;
		}
		cq->queued = 0;
		c->stale++; /* its count stays in the eventfd */
	}
	pthread_mutex_unlock(&c->lock);
}

VERBS_EXPORT int ibemu__ibv_destroy_cq(struct ibv_cq *cq);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_cq, ibv_destroy_cq, "IBVERBS_1.1");
int ibemu__ibv_destroy_cq(struct ibv_cq *cq)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq;
	struct ibv_context *context = cq->context;

	channel_unqueue(q);
	/* ibv_destroy_cq(3): every event read must have been acked. */
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != q->events_read)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	pthread_mutex_lock(&context->mutex);
	ibemu__verbs_ctx(context)->ncqs--;
	if (cq->channel)
		cq->channel->refcnt--;
	pthread_mutex_unlock(&context->mutex);
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(q);
	return 0;
}

VERBS_EXPORT int ibemu__ibv_resize_cq(struct ibv_cq *cq, int cqe);
VERBS_SYMVER_DEFAULT(ibemu__ibv_resize_cq, ibv_resize_cq, "IBVERBS_1.1");
int ibemu__ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (cqe < 1 || (unsigned)cqe > IBEMU_VERBS_MAX_CQE)
		return EINVAL;
	/* Nothing is queued yet that a smaller CQ could not hold. */
	cq->cqe = cq_size(cqe);
	return 0;
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
	struct ibemu_verbs_cq *q;
	uint64_t one;
	ssize_t n;

	for (;;) {
		n = read(channel->fd, &one, sizeof(one));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(one))
			return -1;
		pthread_mutex_lock(&c->lock);
		q = c->head;
		if (q) {
			c->head = q->next_event;
			if (!c->head)
				c->tail = NULL;
			q->queued = 0;
		} else if (c->stale) {
			c->stale--;
		}
		pthread_mutex_unlock(&c->lock);
		if (q)
			break;
	}
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

/* No completion is produced before the transport exists. */
int ibemu__verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return num_entries < 0 ? -1 : 0;
}

/*
 * Arms the CQ for its next completion (any, or solicited only): the
 * transport calls ibemu__verbs_cq_event() when one arrives. With an empty
 * CQ nothing fires.
 */
int ibemu__verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq;

	pthread_mutex_lock(&cq->mutex);
	q->armed = solicited_only ? 2 : 1;
	pthread_mutex_unlock(&cq->mutex);
	return 0;
}

void ibemu__verbs_cq_event(struct ibv_cq *cq, int solicited)
{
	struct ibemu_verbs_cq *q = (struct ibemu_verbs_cq *)cq;
	struct ibemu_verbs_channel *c;
	uint64_t one = 1;
	ssize_t n;
	int fire;

	pthread_mutex_lock(&cq->mutex);
	fire = q->armed == 1 || (q->armed == 2 && solicited);
	if (fire)
		q->armed = 0;
	pthread_mutex_unlock(&cq->mutex);
	if (!fire || !cq->channel)
		return;
	c = (struct ibemu_verbs_channel *)cq->channel;
	pthread_mutex_lock(&c->lock);
	if (!q->queued) {
		q->queued = 1;
		q->next_event = NULL;
		if (c->tail)
			c->tail->next_event = q;
		else
			c->head = q;
		c->tail = q;
		/* An eventfd write fails only at a count of 2^64 - 1. */
		n = write(cq->channel->fd, &one, sizeof(one));
		(void)n;
	}
	pthread_mutex_unlock(&c->lock);
}
