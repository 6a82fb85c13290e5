// SPDX-License-Identifier: MIT
/*
 * A calendar queue of events. Most events of a fabric are due a few hundred
 * nanoseconds after the current one, so a ring of time buckets covers that
 * near future: a push appends to a short sorted list, a pop takes the head
 * of the earliest non-empty bucket (found in a bitmap). Events beyond the
 * ring wait in a binary heap and move into the ring as time advances.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evq.h"

/* First geometry: 1024 buckets of 256 ps, about 262 ns ahead. */
#define INIT_LOG_SLOTS 10
#define INIT_SHIFT     8
#define MIN_LOG_SLOTS  8
#define MAX_LOG_SLOTS  22
/* Pushes between two looks at the geometry, at least. */
#define MIN_EPOCH 4096u
/* Bitmap words skipped by pops, beyond four a pop, that call for a look. */
#define SCAN_SLACK 4096u

static inline int node_before(const struct ibemu_evq *q, uint32_t a, uint32_t b)
{
	return ibemu__evq_before(&q->ev[a], &q->ev[b]);
}

static inline uint64_t bucket(const struct ibemu_evq *q, uint32_t n)
{
	return q->ev[n].time >> q->shift;
}

void ibemu_evq_init(struct ibemu_evq *q)
{
	memset(q, 0, sizeof(*q));
	q->free = IBEMU_EVQ_NIL;
	q->min = IBEMU_EVQ_NIL;
}

void ibemu_evq_fini(struct ibemu_evq *q)
{
	free(q->ev);
	free(q->next);
	free(q->far);
	free(q->slot);
	free(q->bits);
	ibemu_evq_init(q);
}

static void far_push(struct ibemu_evq *q, uint32_t n)
{
	uint32_t i = q->nfar++, up;

	while (i > 0) {
		up = (i - 1) / 2;
		if (!node_before(q, n, q->far[up]))
			break;
		q->far[i] = q->far[up];
		i = up;
	}
	q->far[i] = n;
}

static void far_sift_down(struct ibemu_evq *q, uint32_t i)
{
	uint32_t n = q->far[i], c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= q->nfar)
			break;
		if (c + 1 < q->nfar && node_before(q, q->far[c + 1], q->far[c]))
			c++;
		if (!node_before(q, q->far[c], n))
			break;
		q->far[i] = q->far[c];
		i = c;
	}
	q->far[i] = n;
}

static uint32_t far_pop(struct ibemu_evq *q)
{
	uint32_t n = q->far[0];

	q->far[0] = q->far[--q->nfar];
	if (q->nfar)
		far_sift_down(q, 0);
	return n;
}

/*
 * Links node 'n' into its bucket, which must be in the ring. Events come
 * mostly in order within a bucket, so the tail is tried first, then the
 * place of the last insertion.
 */
static void ring_insert(struct ibemu_evq *q, uint32_t n)
{
	uint32_t s = (uint32_t)bucket(q, n) & (q->nslots - 1), p, steps = 0;
	struct ibemu_evq_slot *sl = &q->slot[s];

	if (sl->head == IBEMU_EVQ_NIL) {
		q->next[n] = IBEMU_EVQ_NIL;
		sl->head = sl->tail = n;
		sl->mid = IBEMU_EVQ_NIL;
		q->bits[s / 64] |= 1ull << (s % 64);
		return;
	}
	if (!node_before(q, n, sl->tail)) {
		q->next[n] = IBEMU_EVQ_NIL;
		q->next[sl->tail] = n;
		sl->tail = n;
		return;
	}
	if (node_before(q, n, sl->head)) {
		q->next[n] = sl->head;
		sl->head = n;
	} else {
		p = sl->mid != IBEMU_EVQ_NIL && node_before(q, sl->mid, n)
			    ? sl->mid
			    : sl->head;
		while (node_before(q, q->next[p], n)) {
			p = q->next[p];
			steps++;
		}
		q->next[n] = q->next[p];
		q->next[p] = n;
		q->walks += steps;
	}
	sl->mid = n;
}

/* Moves the far events whose bucket has come within the ring into it. */
static void migrate(struct ibemu_evq *q)
{
	while (q->nfar && bucket(q, q->far[0]) - q->cur < q->nslots)
		ring_insert(q, far_pop(q));
}

/* Moves every event of slot 's' to the far heap. */
static void slot_evict(struct ibemu_evq *q, uint32_t s)
{
	uint32_t n = q->slot[s].head, nx;

	while (n != IBEMU_EVQ_NIL) {
		nx = q->next[n];
		far_push(q, n);
		n = nx;
	}
	q->slot[s].head = IBEMU_EVQ_NIL;
	q->slot[s].mid = IBEMU_EVQ_NIL;
	q->bits[s / 64] &= ~(1ull << (s % 64));
}

/*
 * Lowers the ring's first bucket to 'b', for an event earlier than the
 * ring: the buckets that no longer fit at its end go to the far heap.
 * They are those whose slots now belong to buckets b .. cur - 1.
 */
static void rebase(struct ibemu_evq *q, uint64_t b)
{
	uint64_t count = q->cur - b < q->nslots ? q->cur - b : q->nslots;
	uint32_t s = (uint32_t)b & (q->nslots - 1), take, off, w;
	uint64_t word;

	while (count) {
		w = s / 64;
		off = s % 64;
		take = count < 64 - off ? (uint32_t)count : 64 - off;
		word = q->bits[w] >> off;
		if (take < 64)
			word &= (1ull << take) - 1;
		while (word) {
			slot_evict(q, s + (uint32_t)__builtin_ctzll(word));
			word &= word - 1;
		}
		s = (s + take) & (q->nslots - 1);
		count -= take;
		q->scans++;
	}
	q->cur = b;
}

/* The first non-empty slot after slot 's' in ring order, or NIL. */
static uint32_t next_slot(struct ibemu_evq *q, uint32_t s)
{
	uint32_t nw = q->nslots / 64, w, i;
	uint64_t word;

	s = (s + 1) & (q->nslots - 1);
	w = s / 64;
	word = q->bits[w] & (~0ull << (s % 64));
	for (i = 0; i <= nw; i++) {
		if (word) {
			q->scans += i;
			return w * 64 + (uint32_t)__builtin_ctzll(word);
		}
		w = w + 1 == nw ? 0 : w + 1;
		word = q->bits[w];
	}
	q->scans += i;
	return IBEMU_EVQ_NIL;
}

/* Allocates the ring for 2^log_slots buckets of 2^shift ps, empty. */
static int ring_alloc(struct ibemu_evq *q, unsigned log_slots, unsigned shift)
{
	uint32_t n = 1u << log_slots, nw = (n + 63) / 64, i;
	struct ibemu_evq_slot *slot = malloc(n * sizeof(*slot));
	uint64_t *bits = calloc(nw, sizeof(*bits));

	if (!slot || !bits) {
		free(slot);
		free(bits);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		slot[i].head = slot[i].mid = IBEMU_EVQ_NIL;
	free(q->slot);
	free(q->bits);
	q->slot = slot;
	q->bits = bits;
	q->nslots = n;
	q->shift = shift;
	q->grow_at = log_slots < MAX_LOG_SLOTS ? (size_t)n + 1 : SIZE_MAX;
	return 0;
}

static int grow(struct ibemu_evq *q)
{
	uint32_t cap = q->cap ? q->cap * 2 : 1024;
	struct ibemu_event *ev;
	uint32_t *next, *far;

	if (q->cap > UINT32_MAX / 4)
		return -ENOMEM;
	ev = realloc(q->ev, cap * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	q->ev = ev;
	next = realloc(q->next, cap * sizeof(*next));
	if (!next)
		return -ENOMEM;
	q->next = next;
	far = realloc(q->far, cap * sizeof(*far));
	if (!far)
		return -ENOMEM;
	q->far = far;
	q->cap = cap;
	return 0;
}

/*
 * Re-files every event into a ring of 2^log_slots buckets of 2^shift ps.
 * Returns 0, or -ENOMEM with the old ring kept.
 */
static int rebuild(struct ibemu_evq *q, unsigned log_slots, unsigned shift)
{
	uint64_t floor = q->cur << q->shift;
	uint32_t len = (uint32_t)q->len, i, k, n, s;

	/* After the heap's nodes, the ring's in time order. */
	k = q->nfar;
	s = (uint32_t)(q->cur - 1) & (q->nslots - 1);
	while (k < len) {
		s = next_slot(q, s);
		for (n = q->slot[s].head; n != IBEMU_EVQ_NIL; n = q->next[n])
			q->far[k++] = n;
	}
	if (ring_alloc(q, log_slots, shift))
		return -ENOMEM;
	/* The first bucket stays at or before the last popped event. */
	q->cur = floor >> shift;
	for (i = k = 0; i < len; i++) {
		n = q->far[i];
		if (bucket(q, n) - q->cur < q->nslots)
			ring_insert(q, n);
		else
			q->far[k++] = n;
	}
	q->nfar = k;
	for (i = k / 2; i-- > 0;)
		far_sift_down(q, i);
	if (q->nfar && next_slot(q, q->nslots - 1) == IBEMU_EVQ_NIL) {
		q->cur = bucket(q, q->far[0]);
		migrate(q);
	}
	return 0;
}

static unsigned log2_ceil(uint64_t x)
{
	return x <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(x - 1);
}

/*
 * Sizes the ring from the work of the last pushes and pops: about two
 * buckets per pending event, and a bucket width that keeps insertions
 * short (few events out of order in a bucket), pops short (few empty
 * buckets to skip) and most pushes within the ring.
 */
static void retune(struct ibemu_evq *q)
{
	unsigned log_slots = log2_ceil(q->nslots), shift = q->shift, want;
	uint64_t pushes = q->pushes ? q->pushes : 1;

	want = log2_ceil(q->len) + 1;
	if (want < MIN_LOG_SLOTS)
		want = MIN_LOG_SLOTS;
	if (want > MAX_LOG_SLOTS)
		want = MAX_LOG_SLOTS;
	/* Slot counts within a factor of two are as good as each other. */
	if (log_slots + 1 < want || log_slots > want + 1)
		log_slots = want;
	if (q->walks > 2 * pushes) {
		/* Each halving of the width about halves the walks. */
		unsigned d = 63 - (unsigned)__builtin_clzll(q->walks / pushes);

		shift = shift > d ? shift - d : 0;
	} else if (q->scans > 4 * q->pops + 64 &&
		   log_slots == log2_ceil(q->nslots)) {
		/* Many empty buckets, and not from a ring now made smaller. */
		shift++;
	} else if (q->fars > pushes / 16 && q->walks < pushes / 2) {
		if (log_slots <= want && log_slots < MAX_LOG_SLOTS)
			log_slots++;
		else
			shift++;
	}
	if (shift > 63)
		shift = 63;
	q->pushes = q->pops = q->fars = 0;
	q->walks = q->scans = 0;
	q->epoch = q->len > MIN_EPOCH ? (uint32_t)q->len : MIN_EPOCH;
	/* Short of memory, the old ring serves until the next epoch. */
	if ((log_slots != log2_ceil(q->nslots) || shift != q->shift) &&
	    rebuild(q, log_slots, shift))
		q->grow_at = SIZE_MAX;
	/* The rebuild's own work says nothing about the next epoch. */
	q->walks = q->scans = 0;
}

int ibemu__evq_push_slow(struct ibemu_evq *q, const struct ibemu_event *ev)
{
	/* A copy first: 'ev' may point into the pool that grow() moves. */
	struct ibemu_event e = *ev;
	uint64_t b;
	uint32_t n;

	if (!q->slot) {
		if (ring_alloc(q, INIT_LOG_SLOTS, INIT_SHIFT))
			return -ENOMEM;
		q->epoch = MIN_EPOCH;
	}
	if (q->free != IBEMU_EVQ_NIL) {
		n = q->free;
		q->free = q->next[n];
	} else {
		if (q->used == q->cap && grow(q))
			return -ENOMEM;
		n = q->used++;
	}
	q->ev[n] = e;
	b = e.time >> q->shift;
	if (q->len == 0) {
		q->cur = b;
		ring_insert(q, n);
		q->min = n;
	} else if (b < q->cur) {
		rebase(q, b);
		ring_insert(q, n);
		q->min = n;
	} else if (b - q->cur >= q->nslots) {
		/* The ring is not empty: its first event stays the earliest. */
		far_push(q, n);
		q->fars++;
	} else {
		ring_insert(q, n);
		if (node_before(q, n, q->min))
			q->min = n;
	}
	q->len++;
	q->pushes++;
	if (q->pushes >= q->epoch || q->len >= q->grow_at)
		retune(q);
	return 0;
}

void ibemu__evq_pop_slow(struct ibemu_evq *q, struct ibemu_event *out)
{
	uint32_t n = q->min, s;
	struct ibemu_evq_slot *sl;
	uint64_t b;

	*out = q->ev[n];
	b = out->time >> q->shift;
	s = (uint32_t)b & (q->nslots - 1);
	sl = &q->slot[s];
	/* The earliest event heads its bucket. */
	sl->head = q->next[n];
	if (sl->mid == n)
		sl->mid = IBEMU_EVQ_NIL;
	if (sl->head == IBEMU_EVQ_NIL)
		q->bits[s / 64] &= ~(1ull << (s % 64));
	q->next[n] = q->free;
	q->free = n;
	q->pops++;
	if (--q->len == 0)
		return;
	q->cur = b;
	if (q->nfar)
		migrate(q);
	if (sl->head == IBEMU_EVQ_NIL) {
		s = next_slot(q, s);
		if (s == IBEMU_EVQ_NIL) {
			/* Only far events are left: jump to the first. */
			q->cur = bucket(q, q->far[0]);
			migrate(q);
			s = (uint32_t)q->cur & (q->nslots - 1);
		}
		sl = &q->slot[s];
	}
	q->min = sl->head;
	/* A ring far too large for what is left (after a burst) makes every
	 * pop skip empty buckets: time to size it down. */
	if (q->scans > 4 * q->pops + SCAN_SLACK)
		retune(q);
}
