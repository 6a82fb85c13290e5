// SPDX-License-Identifier: MIT
/*
 * The time rule on port streams (docs/design.md §3, "umad processes"): a
 * umad process's clock is the time of its last MAD in or out; what it
 * sends is stamped by its library and enters the fabric at the stamp; a
 * thread about to block in umad_recv() or umad_poll() says so (WAIT), and
 * from its first WAIT the process takes part in the rule: it waits until
 * a RECV or a TICK is handed to it, and runs from then until its next
 * WAIT. The timeout of a wait is an item due (daemon.h): it ends the wait
 * with a TICK at the stream's clock plus the timeout (on an idle fabric,
 * the pump paces the leap to it on the wall clock). Under --clock free stamps are
 * not kept (a MAD enters at once) and nothing is counted, but timeouts
 * are still virtual.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sess.h"

#define PS_PER_MS 1000000000ull

static struct ibemu_daemon *su_daemon(const struct ibemu_sess_conn *c)
{
	return c->s->d;
}

static int su_rule_on(const struct ibemu_sess_conn *c)
{
	return ibemu_rule_on(&su_daemon(c)->rule);
}

/*
 * How much later than the rule's lookahead a umad process can act: each
 * MAD it sends is stamped a host's MAD cost (IBEMU_SESS_MAD_SEND_PS) after
 * its clock, and that cost is longer than the doorbell delay that bounds a
 * verbs process. So the engine may run that far past the process's clock,
 * and past the hand-off of a MAD to it, without changing anything the
 * process can do: a run delivers in one go the answers a sweep's window
 * brings within that time, instead of one at a time, and the virtual times
 * are the same.
 */
static uint64_t su_ahead(const struct ibemu_daemon *d)
{
	return IBEMU_SESS_MAD_SEND_PS > d->rule.lookahead_ps
		       ? IBEMU_SESS_MAD_SEND_PS - d->rule.lookahead_ps
		       : 0;
}

/* A MAD of the process entered the fabric at 't': its clock is there at
 * least, and its timeouts count from there. */
static void su_clock_at_least(struct ibemu_sess_conn *c, uint64_t t)
{
	if (t > c->time.clock_ps)
		c->time.clock_ps = t;
	if (t > c->time.last_ps)
		c->time.last_ps = t;
}

int ibemu__su_waiting(const struct ibemu_sess_conn *c)
{
	return c->time.in_rule &&
	       ibemu_rule_waiting(&c->time.rule, c->time.wait_seq);
}

/*
 * A RECV or a TICK of time 't' is handed to the stream: every one counts
 * (the library counts what it takes, and waits only if it saw them all);
 * under the rule the process runs from 't' on, and the run stops a
 * lookahead later.
 */
static void handoff(struct ibemu_sess_conn *c, uint64_t t)
{
	struct ibemu_daemon *d = su_daemon(c);

	ibemu_due_cancel(d, &c->time.timeout);
	/*
	 * Not its clock: a process that runs has not read this yet, and what
	 * it sends meanwhile is stamped by its own clock (a waiting one
	 * resumes at 't', which the rule keeps as its hand-off time). Raised
	 * here, the bound would let the engine run ahead of a running SM.
	 */
	if (t > c->time.last_ps)
		c->time.last_ps = t;
	if (su_rule_on(c) && c->time.in_rule)
		ibemu_rule_handoff(&d->rule, &c->time.rule,
				   ibemu__su_waiting(c), t + su_ahead(d));
	else
		c->time.rule.handed++;
}

/* The timeout of the stream's wait passed: TICK, and it runs again. */
static void timeout_fire(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct ibemu_sess_conn *c =
		(struct ibemu_sess_conn *)((char *)due -
					   offsetof(struct ibemu_sess_conn,
						    time.timeout));
	uint64_t now = ibemu_engine_now(d->engine);

	handoff(c, now);
	ibemu__sess_deliver_tick(c, c->time.wait_id, now);
}

/* The first SEND stamped for later is due: it enters now. */
static void later_fire(struct ibemu_daemon *d, struct ibemu_due *due)
{
	struct ibemu_sess_conn *c =
		(struct ibemu_sess_conn *)((char *)due -
					   offsetof(struct ibemu_sess_conn,
						    time.later));
	struct ibemu_sess_later *l = c->time.later_head;

	(void)d;
	c->time.later_head = l->next;
	if (!c->time.later_head)
		c->time.later_tail = NULL;
	else
		ibemu_due_arm(d, &c->time.later, c->time.later_head->at_ps);
	su_clock_at_least(c, ibemu_engine_now(d->engine));
	ibemu__sess_send(c, (const struct ibemu_sess_mad *)(void *)l->msg);
	free(l);
}

void ibemu__su_init(struct ibemu_sess_conn *c)
{
	memset(&c->time, 0, sizeof(c->time));
	c->time.timeout.fire = timeout_fire;
	c->time.later.fire = later_fire;
	c->time.rule.grace_ms = IBEMU_UMAD_GRACE_MS;
	c->time.clock_ps = ibemu_engine_now(su_daemon(c)->engine);
	c->time.last_ps = c->time.clock_ps;
}

void ibemu__su_close(struct ibemu_sess_conn *c)
{
	struct ibemu_daemon *d = su_daemon(c);
	struct ibemu_sess_later *l;

	ibemu_due_cancel(d, &c->time.timeout);
	ibemu_due_cancel(d, &c->time.later);
	while ((l = c->time.later_head)) {
		c->time.later_head = l->next;
		free(l);
	}
	c->time.later_tail = NULL;
}

void ibemu__su_wait(struct ibemu_sess_conn *c, const struct ibemu_sess_wait *w)
{
	struct ibemu_daemon *d = su_daemon(c);

	c->time.calls++;
	c->time.in_rule = 1;
	c->time.wait_seq = w->seen + 1;
	c->time.wait_id = w->wait_id;
	ibemu_due_cancel(d, &c->time.timeout);
	/* Something is on its way to it: that ends this wait. */
	if (w->seen != c->time.rule.handed)
		return;
	if (w->timeout_ms != IBEMU_SESS_WAIT_FOREVER)
		ibemu_due_arm(d, &c->time.timeout,
			      c->time.last_ps +
				      (uint64_t)w->timeout_ms * PS_PER_MS);
	ibemu_daemon_pump(d); /* the horizon may have moved */
}

void ibemu__su_send(struct ibemu_sess_conn *c, const struct ibemu_sess_mad *m)
{
	struct ibemu_daemon *d = su_daemon(c);
	uint64_t now = ibemu_engine_now(d->engine);
	size_t len = sizeof(*m) + m->len;
	struct ibemu_sess_later *l;

	c->time.calls++;
	/*
	 * The stamp is the process's clock, which only grows: nothing it
	 * sends later can act before it, so the engine may run that far
	 * while the process runs, even with this MAD still queued (and MADs
	 * handed to it meanwhile, older than its clock, change nothing).
	 */
	if (su_rule_on(c) && m->vt_ps > c->time.clock_ps)
		c->time.clock_ps = m->vt_ps;
	/* Later ones wait behind the first: the socket's order is kept. */
	if (!su_rule_on(c) || (m->vt_ps <= now && !c->time.later_head)) {
		su_clock_at_least(c, now);
		ibemu__sess_send(c, m);
		return;
	}
	l = malloc(sizeof(*l) + len);
	if (!l) {
		/* Out of memory: better late than lost. */
		su_clock_at_least(c, now);
		ibemu__sess_send(c, m);
		return;
	}
	l->next = NULL;
	l->at_ps = m->vt_ps;
	memcpy(l->msg, m, len);
	if (c->time.later_tail) {
		if (l->at_ps < c->time.later_tail->at_ps)
			l->at_ps = c->time.later_tail->at_ps;
		c->time.later_tail->next = l;
		c->time.later_tail = l;
		return;
	}
	c->time.later_head = c->time.later_tail = l;
	ibemu_due_arm(d, &c->time.later, l->at_ps);
}

uint64_t ibemu__su_handoff(struct ibemu_sess_conn *c)
{
	uint64_t t =
		ibemu_engine_now(su_daemon(c)->engine) + IBEMU_SESS_MAD_RECV_PS;

	handoff(c, t);
	return t;
}

int ibemu__su_words(const struct ibemu_sess_conn *c, struct ibemu_rule_words *w)
{
	if (!c->time.in_rule)
		return -ENOENT;
	*w = (struct ibemu_rule_words){
		.wait_seq = c->time.wait_seq,
		.calls = c->time.calls,
		.clock_ps = c->time.clock_ps + su_ahead(su_daemon(c)),
	};
	return 0;
}
