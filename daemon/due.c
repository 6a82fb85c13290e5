// SPDX-License-Identifier: MIT
/*
 * Work scheduled in virtual time by the servers above the engine (daemon.h,
 * struct ibemu_due): a list kept in time order. Items of one kind mostly
 * come in time order (a process's stamps only grow, timeouts are alike),
 * so an item is placed by walking back from the tail, and items of equal
 * time fire in the order they were armed: the order a run sees does not
 * depend on anything but virtual times and arrivals.
 */
#include "daemon.h"

void ibemu_due_cancel(struct ibemu_daemon *d, struct ibemu_due *due)
{
	if (!due->armed)
		return;
	if (due->prev)
		due->prev->next = due->next;
	else
		d->due_head = due->next;
	if (due->next)
		due->next->prev = due->prev;
	else
		d->due_tail = due->prev;
	due->prev = due->next = NULL;
	due->armed = 0;
	/* A leap paced for it starts afresh; one paced for another item
	 * goes on (a spinning process's tick, cancelled and armed again at
	 * every call it makes, would otherwise hold off every leap). */
	if (d->leap_to == due->at_ps)
		d->leap_to = 0;
}

void ibemu_due_arm(struct ibemu_daemon *d, struct ibemu_due *due,
		   uint64_t at_ps)
{
	uint64_t now = ibemu_engine_now(d->engine);
	struct ibemu_due *after;

	ibemu_due_cancel(d, due);
	due->at_ps = at_ps < now ? now : at_ps;
	for (after = d->due_tail; after && after->at_ps > due->at_ps;
	     after = after->prev)
		;
	due->prev = after;
	due->next = after ? after->next : d->due_head;
	if (due->next)
		due->next->prev = due;
	else
		d->due_tail = due;
	if (after)
		after->next = due;
	else
		d->due_head = due;
	due->armed = 1;
	ibemu_daemon_pump(d);
}

uint64_t ibemu__due_next(const struct ibemu_daemon *d)
{
	return d->due_head ? d->due_head->at_ps : UINT64_MAX;
}

void ibemu__due_fire_first(struct ibemu_daemon *d)
{
	struct ibemu_due *due = d->due_head;

	ibemu_due_cancel(d, due);
	ibemu_engine_advance(d->engine, due->at_ps);
	due->fire(d, due);
}
