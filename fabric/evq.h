/* SPDX-License-Identifier: MIT */
/*
 * The engine's event queue, ordered by (time, order), where 'order' packs a
 * phase and a sequence number so that events of one instant run in a
 * deterministic order that never depends on wall time. A calendar queue:
 * a ring of time buckets for the near future, a heap for the far future
 * (fabric/evq.c). Push and pop are inline for their common cases.
 */
#ifndef IBEMU_EVQ_H
#define IBEMU_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct ibemu_event {
	uint64_t time;	/* ps */
	uint64_t order; /* phase << 56 | sequence */
	uint32_t kind;
	uint32_t target;
	void *ptr;
};

/*
 * One bucket of the ring: a list of events sorted by (time, order). 'mid'
 * is where the last insertion before the tail went: the engine pushes the
 * phases of one instant interleaved, each phase in sequence order, so the
 * next insertion usually goes right after it.
 */
struct ibemu_evq_slot {
	uint32_t head, tail, mid; /* nodes, or IBEMU_EVQ_NIL */
};

#define IBEMU_EVQ_NIL UINT32_MAX

struct ibemu_evq {
	size_t len; /* pending events */
	/* Node pool: events and their list links, 'cap' of each. */
	struct ibemu_event *ev;
	uint32_t *next;
	uint32_t cap, used; /* nodes allocated, nodes ever handed out */
	uint32_t free;	    /* free nodes, linked through next[] */
	uint32_t min;	    /* the node of the earliest event when len > 0 */
	/* The ring: bucket b = time >> shift lives in slot b & (nslots - 1). */
	struct ibemu_evq_slot *slot;
	uint64_t *bits; /* a bit per non-empty slot */
	uint32_t nslots;
	unsigned shift;
	uint64_t cur; /* the ring holds buckets cur .. cur + nslots - 1 */
	/* Later buckets: a binary heap of nodes, as large as the pool. */
	uint32_t *far;
	uint32_t nfar;
	/* Work since the ring was last sized, to size it again. */
	uint32_t pushes, fars;
	uint64_t pops, walks, scans;
	uint32_t epoch; /* pushes before the next look */
	size_t grow_at; /* or as soon as this many are pending */
};

void ibemu_evq_init(struct ibemu_evq *q);
void ibemu_evq_fini(struct ibemu_evq *q);

/* Internal: the cases the inline functions below leave to fabric/evq.c. */
int ibemu__evq_push_slow(struct ibemu_evq *q, const struct ibemu_event *ev);
void ibemu__evq_pop_slow(struct ibemu_evq *q, struct ibemu_event *out);

static inline int ibemu__evq_before(const struct ibemu_event *a,
				    const struct ibemu_event *b)
{
	return a->time < b->time || (a->time == b->time && a->order < b->order);
}

/*
 * Queues a copy of 'ev'. Returns 0 or -ENOMEM; never fails while fewer
 * events are pending than there once were (a pop makes room for a push).
 */
static inline int ibemu_evq_push(struct ibemu_evq *q,
				 const struct ibemu_event *ev)
{
	uint64_t b = ev->time >> q->shift;
	uint32_t n = q->free, s;
	struct ibemu_evq_slot *sl;

	/* Inline: a free node, an event for the end of a ring bucket. */
	if (n == IBEMU_EVQ_NIL || b - q->cur >= q->nslots ||
	    q->pushes + 1 >= q->epoch || q->len + 1 >= q->grow_at)
		return ibemu__evq_push_slow(q, ev);
	s = (uint32_t)b & (q->nslots - 1);
	sl = &q->slot[s];
	if (sl->head != IBEMU_EVQ_NIL &&
	    ibemu__evq_before(ev, &q->ev[sl->tail]))
		return ibemu__evq_push_slow(q, ev);
	/*
	 * Field by field, which lets the compiler take the values from where
	 * the caller made them: a block copy reads them back from memory,
	 * and a wide load of fields just stored one by one stalls.
	 */
	q->ev[n].time = ev->time;
	q->ev[n].order = ev->order;
	q->ev[n].kind = ev->kind;
	q->ev[n].target = ev->target;
	q->ev[n].ptr = ev->ptr;
	q->free = q->next[n];
	q->next[n] = IBEMU_EVQ_NIL;
	if (sl->head == IBEMU_EVQ_NIL) {
		sl->head = sl->tail = n;
		sl->mid = IBEMU_EVQ_NIL;
		q->bits[s / 64] |= 1ull << (s % 64);
		if (!q->len || ibemu__evq_before(ev, &q->ev[q->min]))
			q->min = n;
	} else {
		/* Not the earliest: its bucket holds earlier events. */
		q->next[sl->tail] = n;
		sl->tail = n;
	}
	q->len++;
	q->pushes++;
	return 0;
}

static inline int ibemu_evq_empty(const struct ibemu_evq *q)
{
	return q->len == 0;
}

/*
 * The earliest event; the queue must not be empty. Valid until the next
 * push or pop.
 */
static inline const struct ibemu_event *ibemu_evq_top(const struct ibemu_evq *q)
{
	return &q->ev[q->min];
}

/* Removes the earliest event into 'out'; the queue must not be empty. */
static inline void ibemu_evq_pop(struct ibemu_evq *q, struct ibemu_event *out)
{
	uint32_t n = q->min, nx = q->next[n];
	uint64_t b = q->ev[n].time >> q->shift;
	struct ibemu_evq_slot *sl;

	/* Inline: the next event is in the same bucket, the ring stays. */
	if (nx == IBEMU_EVQ_NIL || (b != q->cur && q->nfar)) {
		ibemu__evq_pop_slow(q, out);
		return;
	}
	/* The next event is read soon, by top(): ask for it now. */
	__builtin_prefetch(&q->ev[nx]);
	*out = q->ev[n];
	sl = &q->slot[(uint32_t)b & (q->nslots - 1)];
	sl->head = nx;
	if (sl->mid == n)
		sl->mid = IBEMU_EVQ_NIL;
	q->next[n] = q->free;
	q->free = n;
	q->min = nx;
	q->cur = b;
	q->len--;
	q->pops++;
}

#endif
