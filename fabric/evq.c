// SPDX-License-Identifier: MIT
/*
 * Binary min-heap of events. Sifting moves a hole rather than swapping,
 * which halves the copies of 32-byte events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evq.h"

static inline int before(const struct ibemu_event *a,
			 const struct ibemu_event *b)
{
	return a->time < b->time || (a->time == b->time && a->order < b->order);
}

void ibemu_evq_init(struct ibemu_evq *q)
{
	memset(q, 0, sizeof(*q));
}

void ibemu_evq_fini(struct ibemu_evq *q)
{
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

int ibemu_evq_push(struct ibemu_evq *q, const struct ibemu_event *ev)
{
	size_t i, parent;

	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct ibemu_event *h = realloc(q->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		q->heap = h;
		q->cap = cap;
	}
	i = q->len++;
	while (i > 0) {
		parent = (i - 1) / 2;
		if (!before(ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = *ev;
	return 0;
}

void ibemu_evq_pop(struct ibemu_evq *q, struct ibemu_event *out)
{
	struct ibemu_event last;
	size_t i = 0, child;

	*out = q->heap[0];
	last = q->heap[--q->len];
	if (q->len == 0)
		return;
	for (;;) {
		child = 2 * i + 1;
		if (child >= q->len)
			break;
		if (child + 1 < q->len &&
		    before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!before(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	q->heap[i] = last;
}
