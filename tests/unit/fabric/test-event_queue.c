// SPDX-License-Identifier: MIT
/*
 * The event queue against a reference: every pop must give exactly the
 * event a plain sort (or a textbook binary heap, when pushes and pops
 * interleave) gives, ties on time broken by order, whatever the spread of
 * times (same instant, a bucket apart, seconds away) and the queue's size.
 */
#include <stdlib.h>

#include "evq.h"
#include "unit.h"
#include "util.h"

/* xorshift64*: seeded, so every run checks the same sequences. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct ibemu_event *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return 0;
}

static struct ibemu_event make(uint64_t time, uint64_t order)
{
	return (struct ibemu_event){
		.time = time,
		.order = order,
		.kind = (uint32_t)(order % 4),
		.target = (uint32_t)(order * 7 + time),
		.ptr = (void *)(uintptr_t)(order ^ time),
	};
}

/* Whether 'a' is exactly 'b', payload included. */
static int same(const struct ibemu_event *a, const struct ibemu_event *b)
{
	return a->time == b->time && a->order == b->order &&
	       a->kind == b->kind && a->target == b->target && a->ptr == b->ptr;
}

/* The reference for interleaved pushes and pops: a textbook heap. */
struct ref {
	struct ibemu_event *a;
	size_t n, cap;
};

static void ref_push(struct ref *r, const struct ibemu_event *ev)
{
	size_t i;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->a = realloc(r->a, r->cap * sizeof(*r->a));
		CU_ASSERT_FATAL(r->a != NULL);
	}
	i = r->n++;
	r->a[i] = *ev;
	while (i > 0 && cmp_event(&r->a[i], &r->a[(i - 1) / 2]) < 0) {
		struct ibemu_event t = r->a[i];

		r->a[i] = r->a[(i - 1) / 2];
		r->a[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct ibemu_event ref_pop(struct ref *r)
{
	struct ibemu_event top = r->a[0], t;
	size_t i = 0, c;

	r->a[0] = r->a[--r->n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= r->n)
			break;
		if (c + 1 < r->n && cmp_event(&r->a[c + 1], &r->a[c]) < 0)
			c++;
		if (cmp_event(&r->a[c], &r->a[i]) >= 0)
			break;
		t = r->a[i];
		r->a[i] = r->a[c];
		r->a[c] = t;
		i = c;
	}
	return top;
}

/*
 * Pushes 'n' events whose times come from 'time_of' (orders are a random
 * permutation), pops them all and compares with qsort.
 */
static void push_all_pop_all(size_t n, uint64_t (*time_of)(uint64_t *),
			     uint64_t seed)
{
	struct ibemu_event *all = malloc(n * sizeof(*all)), ev;
	uint64_t *order = malloc(n * sizeof(*order)), s = seed;
	struct ibemu_evq q;
	size_t i, j, bad = 0;

	CU_ASSERT_FATAL(all && order);
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n; i > 1; i--) {
		uint64_t t;

		j = rnd(&s) % i;
		t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	ibemu_evq_init(&q);
	for (i = 0; i < n; i++) {
		all[i] = make(time_of(&s), order[i]);
		T_EQ_INT(ibemu_evq_push(&q, &all[i]), 0);
	}
	T_EQ_U64(q.len, n);
	qsort(all, n, sizeof(*all), cmp_event);
	for (i = 0; i < n; i++) {
		T_TRUE(!ibemu_evq_empty(&q));
		if (!same(ibemu_evq_top(&q), &all[i]))
			bad++;
		ibemu_evq_pop(&q, &ev);
		if (!same(&ev, &all[i]))
			bad++;
	}
	T_EQ_U64(bad, 0);
	T_TRUE(ibemu_evq_empty(&q));
	T_EQ_U64(q.len, 0);
	ibemu_evq_fini(&q);
	free(order);
	free(all);
}

static uint64_t time_wide(uint64_t *s)
{
	return rnd(s) >> 24; /* up to 2^40 ps: about a second */
}

static uint64_t time_near(uint64_t *s)
{
	return rnd(s) % 400000; /* 400 ns */
}

static uint64_t time_few(uint64_t *s)
{
	return (rnd(s) % 8) * 1000; /* eight instants: many ties */
}

static uint64_t time_any(uint64_t *s)
{
	uint64_t x = rnd(s);

	/* Every scale from the same picosecond to the end of time. */
	switch (x % 4) {
	case 0:
		return x >> 62;
	case 1:
		return (x >> 20) % 100000;
	case 2:
		return x >> (x % 64);
	default:
		return UINT64_MAX - (x % 3);
	}
}

static void test_sorted_random(void)
{
	push_all_pop_all(1, time_near, 1);
	push_all_pop_all(100, time_near, 2);
	push_all_pop_all(50000, time_near, 3);
	push_all_pop_all(50000, time_wide, 4);
	push_all_pop_all(50000, time_any, 5);
}

static void test_ties(void)
{
	push_all_pop_all(20000, time_few, 6);
}

static void test_million(void)
{
	push_all_pop_all(1000000, time_near, 7);
}

/* One pop compared with the reference; counts mismatches in *bad. */
static void pop_check(struct ibemu_evq *q, struct ref *r, size_t *bad,
		      uint64_t *last)
{
	struct ibemu_event ev, want = ref_pop(r);

	if (!same(ibemu_evq_top(q), &want))
		(*bad)++;
	ibemu_evq_pop(q, &ev);
	if (!same(&ev, &want))
		(*bad)++;
	*last = ev.time;
}

static void push_both(struct ibemu_evq *q, struct ref *r, uint64_t time,
		      uint64_t order, size_t *bad)
{
	struct ibemu_event ev = make(time, order);

	if (ibemu_evq_push(q, &ev))
		(*bad)++;
	ref_push(r, &ev);
	if (q->len != r->n)
		(*bad)++;
}

/*
 * Pushes and pops as the engine does: a push is never earlier than the last
 * pop, a same-instant push may come in an earlier phase, lookaheads are
 * mostly hundreds of nanoseconds with some timers far ahead, and the load
 * swings so that the queue re-sizes its ring on the way.
 */
static void test_engine_like(void)
{
	struct ibemu_evq q;
	struct ref r = {0};
	uint64_t s = 8, seq = 0, now = 0, x, t, phase;
	size_t i, k, bad = 0, target;

	ibemu_evq_init(&q);
	for (i = 0; i < 3000000; i++) {
		/* The pending count wanders between 0 and several thousand. */
		target = (i / 200000) % 2 ? 6000 : 40 + (i / 400000) * 300;
		x = rnd(&s);
		if (r.n && (r.n > target || x % 16 < 7)) {
			pop_check(&q, &r, &bad, &now);
			continue;
		}
		switch ((x >> 8) % 16) {
		case 0:
			t = now;
			break;
		case 1:
			t = now + (x >> 20) % 1000000000000ull; /* seconds */
			break;
		case 2:
			t = now + (x >> 20) % 30000000; /* microseconds */
			break;
		default:
			t = now + 10000 + (x >> 20) % 320000;
			break;
		}
		phase = (x >> 12) % 2;
		push_both(&q, &r, t, phase << 56 | seq++, &bad);
		/* A burst at one instant, as arbitrations after a tail. */
		if ((x >> 40) % 64 == 0)
			for (k = (x >> 46) % 8; k > 0; k--)
				push_both(&q, &r, now, (k % 2) << 56 | seq++,
					  &bad);
	}
	while (r.n)
		pop_check(&q, &r, &bad, &now);
	T_EQ_U64(bad, 0);
	T_TRUE(ibemu_evq_empty(&q));
	ibemu_evq_fini(&q);
	free(r.a);
}

/*
 * Pushes at any time, earlier than the last pop too, so that the ring
 * moves back; some pushes land exactly on the current earliest event,
 * before or after it.
 */
static void test_random_interleaved(void)
{
	struct ibemu_evq q;
	struct ref r = {0};
	uint64_t s = 9, seq = 1u << 20, low = 1u << 20, now = 0, x, t;
	size_t i, bad = 0;

	ibemu_evq_init(&q);
	for (i = 0; i < 1000000; i++) {
		x = rnd(&s);
		if (r.n && x % 8 < 3) {
			pop_check(&q, &r, &bad, &now);
			continue;
		}
		switch ((x >> 8) % 8) {
		case 0:
			t = r.n ? ibemu_evq_top(&q)->time : now;
			/* Before or after the earliest, on the same time. */
			push_both(&q, &r, t, (x >> 32) % 2 ? seq++ : --low,
				  &bad);
			continue;
		case 1:
			t = now > 100000 ? now - (x >> 20) % 100000 : 0;
			break;
		case 2:
			t = (x >> 24); /* anywhere within a second */
			break;
		case 3:
			t = now + ((x >> 20) % (1ull << (x % 48)));
			break;
		default:
			t = now + (x >> 20) % 2000000;
			break;
		}
		push_both(&q, &r, t, seq++, &bad);
	}
	while (r.n)
		pop_check(&q, &r, &bad, &now);
	T_EQ_U64(bad, 0);
	T_TRUE(ibemu_evq_empty(&q));
	ibemu_evq_fini(&q);
	free(r.a);
}

/*
 * Events seconds apart, with near ones pushed between them: the ring holds
 * the near future only, the rest waits and comes in as time gets there.
 */
static void test_far_future(void)
{
	struct ibemu_evq q;
	struct ref r = {0};
	uint64_t s = 10, seq = 0, now = 0, x;
	size_t i, j, bad = 0;

	ibemu_evq_init(&q);
	for (i = 0; i < 1000; i++)
		push_both(&q, &r, (i + 1) * 1000000000000ull, seq++, &bad);
	while (r.n) {
		pop_check(&q, &r, &bad, &now);
		x = rnd(&s);
		if (seq > 200000)
			continue;
		/* Now and then a cluster of near events at the popped time. */
		if (x % 4 == 0)
			for (j = 0; j < (x >> 8) % 8; j++)
				push_both(&q, &r, now + (rnd(&s) % 5000000),
					  seq++, &bad);
		/* A few events even further ahead than the rest. */
		if (x % 64 == 1)
			push_both(&q, &r, now + 5000000000000ull, seq++, &bad);
	}
	T_EQ_U64(bad, 0);
	T_TRUE(ibemu_evq_empty(&q));
	ibemu_evq_fini(&q);
	free(r.a);
}

/* Full, empty and full again, at times far before and after each other. */
static void test_empty_transitions(void)
{
	static const uint64_t times[] = {
		0, 5, 5, 1000000000000ull, 3, 64, 1ull << 62, 0, UINT64_MAX, 7,
	};
	struct ibemu_evq q;
	struct ibemu_event ev, a, b;
	uint64_t seq = 0;
	size_t i;

	ibemu_evq_init(&q);
	T_TRUE(ibemu_evq_empty(&q));
	T_EQ_U64(q.len, 0);
	/* Popping everything and starting again elsewhere, one by one. */
	for (i = 0; i < IBEMU_ARRAY_SIZE(times); i++) {
		a = make(times[i], seq++);
		T_EQ_INT(ibemu_evq_push(&q, &a), 0);
		T_TRUE(!ibemu_evq_empty(&q));
		T_EQ_U64(q.len, 1);
		T_TRUE(same(ibemu_evq_top(&q), &a));
		ibemu_evq_pop(&q, &ev);
		T_TRUE(same(&ev, &a));
		T_TRUE(ibemu_evq_empty(&q));
		T_EQ_U64(q.len, 0);
	}
	/* Two at a time, the second earlier or later than the first. */
	for (i = 0; i + 1 < IBEMU_ARRAY_SIZE(times); i++) {
		a = make(times[i], seq++);
		b = make(times[i + 1], seq++);
		T_EQ_INT(ibemu_evq_push(&q, &a), 0);
		T_EQ_INT(ibemu_evq_push(&q, &b), 0);
		T_EQ_U64(q.len, 2);
		ibemu_evq_pop(&q, &ev);
		T_TRUE(same(&ev, cmp_event(&a, &b) < 0 ? &a : &b));
		T_EQ_U64(q.len, 1);
		ibemu_evq_pop(&q, &ev);
		T_TRUE(same(&ev, cmp_event(&a, &b) < 0 ? &b : &a));
		T_TRUE(ibemu_evq_empty(&q));
	}
	ibemu_evq_fini(&q);
	/* fini leaves a queue that can be used again. */
	a = make(42, 0);
	T_EQ_INT(ibemu_evq_push(&q, &a), 0);
	ibemu_evq_pop(&q, &ev);
	T_TRUE(same(&ev, &a));
	ibemu_evq_fini(&q);
}

/* Pushes on the earliest event's time, with orders before and after it. */
static void test_push_at_min(void)
{
	struct ibemu_evq q;
	struct ref r = {0};
	uint64_t s = 11, hi = 1u << 30, lo = 1u << 30, now = 0, t;
	size_t i, bad = 0;

	ibemu_evq_init(&q);
	for (i = 0; i < 1000; i++)
		push_both(&q, &r, 1000 + rnd(&s) % 100000, hi++, &bad);
	for (i = 0; i < 200000; i++) {
		t = ibemu_evq_top(&q)->time;
		push_both(&q, &r, t, rnd(&s) % 2 ? hi++ : --lo, &bad);
		if (i % 2 == 0)
			push_both(&q, &r, t + 1 + rnd(&s) % 100000, hi++, &bad);
		/* The earliest event itself, as a pointer into the queue: an
		 * identical twin, whatever the queue moves while it grows. */
		if (i % 1000 == 0) {
			struct ibemu_event twin = *ibemu_evq_top(&q);

			T_EQ_INT(ibemu_evq_push(&q, ibemu_evq_top(&q)), 0);
			ref_push(&r, &twin);
		}
		pop_check(&q, &r, &bad, &now);
		if (i % 2 == 1)
			pop_check(&q, &r, &bad, &now);
	}
	while (r.n)
		pop_check(&q, &r, &bad, &now);
	T_EQ_U64(bad, 0);
	ibemu_evq_fini(&q);
	free(r.a);
}

/*
 * Pushes of the earliest event itself, by its pointer into the queue, at
 * the moments the queue grows (an odd count before each normal push, so
 * that the twin is the push that finds the pool full).
 */
static void test_push_top_growing(void)
{
	struct ibemu_evq q;
	struct ref r = {0};
	struct ibemu_event twin;
	uint64_t s = 13, now = 0, i;
	size_t bad = 0;

	ibemu_evq_init(&q);
	push_both(&q, &r, 5, 0, &bad);
	for (i = 1; i < 10000; i++) {
		push_both(&q, &r, rnd(&s) % 1000000, i, &bad);
		twin = *ibemu_evq_top(&q);
		T_EQ_INT(ibemu_evq_push(&q, ibemu_evq_top(&q)), 0);
		ref_push(&r, &twin);
	}
	T_EQ_U64(q.len, r.n);
	while (r.n)
		pop_check(&q, &r, &bad, &now);
	T_EQ_U64(bad, 0);
	ibemu_evq_fini(&q);
	free(r.a);
}

/*
 * A burst of events, drained to a few, then a steady trickle: the queue
 * grows its ring for the burst and must not keep skipping its emptiness.
 */
static void test_burst_drain(void)
{
	struct ibemu_evq q;
	struct ref r = {0};
	uint64_t s = 14, seq = 0, now = 0, i;
	size_t bad = 0;

	ibemu_evq_init(&q);
	for (i = 0; i < 300000; i++)
		push_both(&q, &r, rnd(&s) % 1000000000, seq++, &bad);
	while (r.n > 10)
		pop_check(&q, &r, &bad, &now);
	for (i = 0; i < 300000; i++) {
		pop_check(&q, &r, &bad, &now);
		push_both(&q, &r, now + rnd(&s) % 100000000, seq++, &bad);
	}
	while (r.n)
		pop_check(&q, &r, &bad, &now);
	T_EQ_U64(bad, 0);
	ibemu_evq_fini(&q);
	free(r.a);
}

/*
 * The benchmark's hold loop: pop the earliest, push it again up to 1 us
 * later; the queue stays at 'pending' events throughout.
 */
static void hold(size_t pending, uint64_t events, uint64_t mask)
{
	struct ibemu_evq q;
	struct ref r = {0};
	uint64_t s = 12, seq = 0, now = 0, i;
	size_t bad = 0;

	ibemu_evq_init(&q);
	for (i = 0; i < pending; i++)
		push_both(&q, &r, rnd(&s) & mask, seq++, &bad);
	for (i = 0; i < events; i++) {
		pop_check(&q, &r, &bad, &now);
		push_both(&q, &r, now + 1 + (rnd(&s) & mask), seq++, &bad);
	}
	T_EQ_U64(q.len, pending);
	T_EQ_U64(bad, 0);
	ibemu_evq_fini(&q);
	free(r.a);
}

static void test_hold(void)
{
	hold(5000, 500000, (1u << 20) - 1);
	hold(3, 100000, 255);
	hold(100000, 500000, (1u << 30) - 1);
}

void ibemu_test_register_fabric_event_queue(void)
{
	static const struct ibemu_test tests[] = {
		{"sorted_random", test_sorted_random},
		{"ties", test_ties},
		{"million", test_million},
		{"engine_like", test_engine_like},
		{"random_interleaved", test_random_interleaved},
		{"far_future", test_far_future},
		{"empty_transitions", test_empty_transitions},
		{"push_at_min", test_push_at_min},
		{"push_top_growing", test_push_top_growing},
		{"burst_drain", test_burst_drain},
		{"hold", test_hold},
		{NULL, NULL},
	};

	ibemu_test_add_suite("fabric.event_queue", tests);
}
