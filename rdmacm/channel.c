// SPDX-License-Identifier: MIT
/*
 * Event channels and their events. A channel is an eventfd in semaphore
 * mode that counts the queued events: it polls readable exactly while an
 * event waits, blocks rdma_get_cm_event() while none does, and answers
 * EAGAIN when the program made it O_NONBLOCK, as the kernel's rdma_cm fd.
 * An id created without a channel is synchronous (rdma-core's "sync" ids):
 * its calls take their own event and return its status.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdmacm_int.h"

/*
 * The clocks of docs/design.md §3 (weak: ibemu's own API). An event comes
 * at the umad clock's time of the MAD that raised it; the program that
 * takes it has waited until then, so its verbs clock moves there.
 */
uint64_t ibemu_umad_now_ps(void) __attribute__((weak));
uint64_t ibemu_now_ps(void) __attribute__((weak));
void ibemu_compute_ps(uint64_t ps) __attribute__((weak));
/*
 * An event queued and not yet taken keeps the process running under the
 * time rule (its verbs calls cannot show it: the fabric would leap past a
 * program that spins on an empty CQ with a connection request waiting),
 * and a thread blocked for an event counts as waiting, as one blocked in
 * ibv_get_cq_event does.
 */
void ibemu_outside_work(int delta) __attribute__((weak));
void ibemu_outside_wait(int begin) __attribute__((weak));

static void outside_work(int delta)
{
	if (ibemu_outside_work)
		ibemu_outside_work(delta);
}

static void outside_wait(int begin)
{
	if (ibemu_outside_wait)
		ibemu_outside_wait(begin);
}

static void clock_to(uint64_t at_ps)
{
	uint64_t now;

	if (!at_ps || !ibemu_now_ps || !ibemu_compute_ps)
		return;
	now = ibemu_now_ps();
	if (at_ps > now)
		ibemu_compute_ps(at_ps - now);
}

struct rdmacm_channel *rdmacm__channel_create(int internal)
{
	struct rdmacm_channel *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->internal = internal;
	return c;
}

RDMACM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdmacm_channel *c;
	int ret = rdmacm__init();

	if (ret) {
		errno = -ret;
		return NULL;
	}
	c = rdmacm__channel_create(0);
	return c ? &c->ch : NULL;
}

RDMACM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct rdmacm_channel *c = rdmacm_channel_of(ch);
	struct rdmacm_event *e, *next;

	/* rdma-core leaves events not taken to the kernel; ours are freed. */
	for (e = c->head; e; e = next) {
		next = e->next;
		free(e);
		if (!c->internal)
			outside_work(-1);
	}
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int rdmacm__event_queue(struct rdmacm_id *id, enum rdma_cm_event_type type,
			int status)
{
	struct rdma_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event = type;
	ev.status = status;
	return rdmacm__event_queue_ex(id, NULL, &ev, NULL, 0);
}

int rdmacm__event_queue_ex(struct rdmacm_id *id,
			   struct rdma_event_channel *channel,
			   const struct rdma_cm_event *tmpl, const void *pd,
			   size_t pd_len)
{
	struct rdmacm_channel *c =
		rdmacm_channel_of(channel ? channel : id->id.channel);
	struct rdmacm_event *e = calloc(1, sizeof(*e));
	uint64_t one = 1;

	if (!e)
		return -ENOMEM;
	e->ev = *tmpl;
	e->ev.id = &id->id;
	e->at_ps = ibemu_umad_now_ps ? ibemu_umad_now_ps() : 0;
	if (pd_len > sizeof(e->private_data))
		pd_len = sizeof(e->private_data);
	/* conn and ud share the private data's place in the union; without
	 * bytes to copy, the template's pointer stays (a multicast join's
	 * context, as rdma-core hands it back in ud.private_data). */
	if (pd_len) {
		memcpy(e->private_data, pd, pd_len);
		e->ev.param.conn.private_data = e->private_data;
	}
	e->ev.param.conn.private_data_len = (uint8_t)pd_len;
	/* Before anyone can take it. A synchronous id's events are the
	 * library's, taken by the call that waits for them. */
	if (!c->internal)
		outside_work(1);
	pthread_mutex_lock(&id->lock);
	id->unacked++;
	pthread_mutex_unlock(&id->lock);
	pthread_mutex_lock(&c->lock);
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	pthread_mutex_unlock(&c->lock);
	/* After the event is in the queue: a reader woken finds it. */
	if (write(c->ch.fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

static struct rdmacm_event *event_take(struct rdmacm_channel *c)
{
	struct rdmacm_event *e;

	pthread_mutex_lock(&c->lock);
	e = c->head;
	if (e) {
		c->head = e->next;
		if (!c->head)
			c->tail = NULL;
		e->next = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (e && !c->internal)
		outside_work(-1);
	return e;
}

/*
 * Reads the channel's count, as the time rule sees it: a thread that
 * blocks for an event waits until it has one; one that finds none on an
 * O_NONBLOCK channel has waited, as an empty poll has, until its next
 * call.
 */
static ssize_t read_event_count(struct rdmacm_channel *c, uint64_t *v)
{
	int nonblock = fcntl(c->ch.fd, F_GETFL) & O_NONBLOCK, err;
	ssize_t n;

	pthread_mutex_lock(&c->lock);
	if (c->head)
		nonblock = 1; /* the read will not block */
	pthread_mutex_unlock(&c->lock);
	if (!nonblock)
		outside_wait(1);
	do
		n = read(c->ch.fd, v, sizeof(*v));
	while (n < 0 && errno == EINTR);
	err = errno;
	if (!nonblock)
		outside_wait(0);
	else if (n < 0 && errno == EAGAIN)
		outside_wait(1);
	errno = err;
	return n;
}

RDMACM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *ch,
				    struct rdma_cm_event **event)
{
	struct rdmacm_channel *c;
	struct rdmacm_event *e;
	uint64_t v;
	ssize_t n;

	if (!ch || !event)
		return rdmacm_err(EINVAL);
	c = rdmacm_channel_of(ch);
	n = read_event_count(c, &v);
	if (n != sizeof(v))
		return -1; /* errno: EAGAIN on an O_NONBLOCK channel */
	e = event_take(c);
	if (!e)
		return rdmacm_err(EIO); /* a count without an event: a bug */
	clock_to(e->at_ps);
	*event = &e->ev;
	return 0;
}

/* Frees an id whose destroy came before the ack of its last event. */
static void id_release(struct rdmacm_id *id)
{
	int last;

	pthread_mutex_lock(&id->lock);
	id->unacked--;
	last = id->destroyed && !id->unacked;
	pthread_mutex_unlock(&id->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&id->lock);
	free(id->id.route.path_rec);
	free(id);
}

RDMACM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rdmacm_event *e = (struct rdmacm_event *)event;

	if (!event)
		return rdmacm_err(EINVAL);
	id_release(rdmacm_id_of(e->ev.id));
	free(e);
	return 0;
}

int rdmacm__sync_complete(struct rdmacm_id *id)
{
	enum rdma_cm_event_type ev_type;
	struct rdma_cm_event *ev;
	int status;

	if (rdma_get_cm_event(id->id.channel, &ev))
		return -1;
	status = ev->status;
	ev_type = ev->event;
	if (id->id.event)
		rdma_ack_cm_event(id->id.event);
	/* Kept until the next call, as rdma-core's: its private data is
	 * the program's to read (rdma_accept's on a synchronous id). */
	id->id.event = ev;
	/* rdma-core's ucma_complete(): a reject is ECONNREFUSED. */
	if (status && ev_type == RDMA_CM_EVENT_REJECTED)
		return rdmacm_err(ECONNREFUSED);
	if (status)
		return rdmacm_err(status < 0 ? -status : status);
	return 0;
}

RDMACM_EXPORT int rdma_migrate_id(struct rdma_cm_id *cm_id,
				  struct rdma_event_channel *channel)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdmacm_channel *old = rdmacm_channel_of(cm_id->channel), *nc;
	struct rdmacm_event *e, **pp;
	uint64_t v, one = 1;

	nc = channel ? rdmacm_channel_of(channel) : rdmacm__channel_create(1);
	if (!nc)
		return -1;
	/* The id's events still queued move with it, in their order. */
	pthread_mutex_lock(&old->lock);
	for (pp = &old->head; (e = *pp);) {
		if (e->ev.id != cm_id) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		if (old->tail == e)
			old->tail = NULL;
		e->next = NULL;
		if (read(old->ch.fd, &v, sizeof(v)) != sizeof(v))
			v = 0;
		pthread_mutex_lock(&nc->lock);
		if (nc->tail)
			nc->tail->next = e;
		else
			nc->head = e;
		nc->tail = e;
		pthread_mutex_unlock(&nc->lock);
		if (write(nc->ch.fd, &one, sizeof(one)) != sizeof(one))
			v = 0;
		/* Counted as the program's only on a channel it reads. */
		if (old->internal != nc->internal)
			outside_work(old->internal ? 1 : -1);
	}
	for (old->tail = old->head; old->tail && old->tail->next;)
		old->tail = old->tail->next;
	pthread_mutex_unlock(&old->lock);
	if (old->internal)
		rdma_destroy_event_channel(&old->ch);
	cm_id->channel = &nc->ch;
	id->sync = !channel;
	return 0;
}

static const char *const event_names[] = {
	[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
	[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
	[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
	[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
	[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
	[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
	[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
	[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
	[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
	[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
	[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
	[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
	[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
	[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
	[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

RDMACM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned)event < sizeof(event_names) / sizeof(event_names[0]) &&
	    event_names[event])
		return event_names[event];
	return "UNKNOWN EVENT";
}
