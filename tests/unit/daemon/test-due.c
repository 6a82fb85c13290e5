// SPDX-License-Identifier: MIT
/*
 * Work scheduled in virtual time (daemon/due.c): items fire in time order,
 * equal times in the order they were armed, a cancelled or re-armed item
 * fires once where it was last put, and the engine stands at an item's
 * time when it fires. The daemon is a bare struct over a real engine: its
 * pump is off ('stopping'), so the test fires items itself.
 */
#include <string.h>

#include "daemon.h"
#include "unit.h"

struct probe {
	struct ibemu_due due; /* first: the item is the probe */
	int id;
};

static int fired[16], nfired;
static uint64_t fired_at[16], base;

static void probe_fire(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct probe *p = (struct probe *)due;

	fired_at[nfired] = ibemu_engine_now(d->engine) - base;
	fired[nfired++] = p->id;
}

static struct ibemu_routes *routes;

static void daemon_up(struct ibemu_daemon *d, struct ibemu_topo **t)
{
	memset(d, 0, sizeof(*d));
	ibemu_test_engine_up("two-switch", 0, NULL, NULL, t, &d->engine,
			     &routes);
	/* The links train first: the items are the only work left. */
	ibemu_engine_run(d->engine, UINT64_MAX, 1000000);
	base = ibemu_engine_now(d->engine);
	d->stopping = 1; /* ibemu_due_arm()'s pump does nothing */
	nfired = 0;
}

/* Fires every armed item, as the pump does when time reaches them. */
static void fire_all(struct ibemu_daemon *d)
{
	while (d->due_head)
		ibemu__due_fire_first(d);
}

static void test_time_order_then_arming_order(void)
{
	struct probe p[5] = {
		{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}, {.id = 4}};
	static const uint64_t at[5] = {300, 100, 300, 200, 100};
	static const int want[5] = {1, 4, 3, 0, 2};
	struct ibemu_daemon d;
	struct ibemu_topo *t;
	int i;

	daemon_up(&d, &t);
	for (i = 0; i < 5; i++) {
		p[i].due.fire = probe_fire;
		ibemu_due_arm(&d, &p[i].due, base + at[i]);
	}
	T_EQ_U64(ibemu__due_next(&d), base + 100);
	fire_all(&d);
	T_EQ_INT(nfired, 5);
	for (i = 0; i < 5; i++) {
		T_EQ_INT(fired[i], want[i]);
		T_EQ_U64(fired_at[i], at[want[i]]);
	}
	T_EQ_U64(ibemu__due_next(&d), UINT64_MAX);
	ibemu_test_engine_down(t, d.engine, routes);
}

static void test_cancel_and_rearm(void)
{
	struct probe a = {.id = 1}, b = {.id = 2}, c = {.id = 3};
	struct ibemu_daemon d;
	struct ibemu_topo *t;

	daemon_up(&d, &t);
	a.due.fire = b.due.fire = c.due.fire = probe_fire;
	ibemu_due_arm(&d, &a.due, base + 50);
	ibemu_due_arm(&d, &b.due, base + 60);
	ibemu_due_arm(&d, &c.due, base + 70);
	ibemu_due_cancel(&d, &b.due);
	ibemu_due_cancel(&d, &b.due);	      /* twice: nothing */
	ibemu_due_arm(&d, &a.due, base + 80); /* moved: behind c */
	T_TRUE(a.due.armed && !b.due.armed && c.due.armed);
	fire_all(&d);
	T_EQ_INT(nfired, 2);
	T_EQ_INT(fired[0], 3);
	T_EQ_INT(fired[1], 1);
	T_EQ_U64(fired_at[1], 80);
	T_TRUE(!a.due.armed && !c.due.armed);
	ibemu_test_engine_down(t, d.engine, routes);
}

/* An item armed for a time that has passed fires at the engine's time. */
static void test_past_fires_now(void)
{
	struct probe a = {.id = 7};
	struct ibemu_daemon d;
	struct ibemu_topo *t;

	daemon_up(&d, &t);
	ibemu_engine_advance(d.engine, base + 1000);
	a.due.fire = probe_fire;
	ibemu_due_arm(&d, &a.due, base + 10);
	T_EQ_U64(ibemu__due_next(&d), base + 1000);
	fire_all(&d);
	T_EQ_INT(nfired, 1);
	T_EQ_U64(fired_at[0], 1000);
	ibemu_test_engine_down(t, d.engine, routes);
}

void ibemu_test_register_daemon_due(void)
{
	static const struct ibemu_test tests[] = {
		{"time_order_then_arming_order",
		 test_time_order_then_arming_order},
		{"cancel_and_rearm", test_cancel_and_rearm},
		{"past_fires_now", test_past_fires_now},
		{NULL, NULL},
	};

	ibemu_test_add_suite("daemon.due", tests);
}
