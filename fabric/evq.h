/* SPDX-License-Identifier: MIT */
/*
 * The engine's event queue: a binary min-heap ordered by (time, order),
 * where 'order' packs a phase and a sequence number so that events of one
 * instant run in a deterministic order that never depends on wall time.
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

struct ibemu_evq {
	struct ibemu_event *heap;
	size_t len, cap;
};

void ibemu_evq_init(struct ibemu_evq *q);
void ibemu_evq_fini(struct ibemu_evq *q);
/* Returns 0 or -ENOMEM. */
int ibemu_evq_push(struct ibemu_evq *q, const struct ibemu_event *ev);

static inline int ibemu_evq_empty(const struct ibemu_evq *q)
{
	return q->len == 0;
}

/* The earliest event; the queue must not be empty. */
static inline const struct ibemu_event *ibemu_evq_top(const struct ibemu_evq *q)
{
	return &q->heap[0];
}

void ibemu_evq_pop(struct ibemu_evq *q, struct ibemu_event *out);

#endif
