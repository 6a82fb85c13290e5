// SPDX-License-Identifier: MIT
/*
 * Devices and contexts. A process attached by 'ibemu exec' has one HCA, the
 * node it is bound to in the fabric: ibv_get_device_list() asks the daemon
 * (CA_QUERY) and returns it under its topology name. Outside 'ibemu exec'
 * the list is empty, as on a host without InfiniBand. ibv_open_device()
 * makes a struct verbs_context whose ops tables (ops.c) carry the inline
 * verbs of <infiniband/verbs.h>.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "verbs_int.h"

static struct ibemu_verbs_device *device_new(const struct ibemu_sess_ca *ca)
{
	struct ibemu_verbs_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->refs = 1;
	d->dev.node_type = IBV_NODE_CA;
	d->dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s", ca->host);
	/* Under SYSFS_PATH, as rdma-core names them: 'ibemu exec --host'
	 * points it at the HCA's tree the daemon keeps (attach/sess_sysfs.c);
	 * elsewhere reading them fails as for a file that is absent. */
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs-%.50s",
		 ca->host);
	snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
		 "%.100s/class/infiniband_verbs/%s", ibv_get_sysfs_path(),
		 d->dev.dev_name);
	snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
		 "%.100s/class/infiniband/%s", ibv_get_sysfs_path(),
		 d->dev.name);
	d->node_guid = ca->node_guid;
	d->sys_guid = ca->system_guid;
	d->vendor_id = ca->vendor_id;
	d->device_id = ca->device_id;
	d->partition_cap = ca->partition_cap;
	d->lim = ibemu_verbs_limits_of(ca->hca_gen);
	d->nports = ca->nports;
	return d;
}

static void device_get(struct ibemu_verbs_device *d)
{
	__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
}

void ibemu__verbs_device_put(struct ibemu_verbs_device *d)
{
	if (__atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(d);
}

static struct ibemu_verbs_device *to_dev(struct ibv_device *device)
{
	return (struct ibemu_verbs_device *)device;
}

VERBS_EXPORT struct ibv_device **ibemu__ibv_get_device_list(int *num_devices);
VERBS_SYMVER_DEFAULT(ibemu__ibv_get_device_list, ibv_get_device_list,
		     "IBVERBS_1.1");
struct ibv_device **ibemu__ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = calloc(2, sizeof(*list));
	struct ibemu_verbs_device *d;
	struct ibemu_sess_ca *ca;
	int ret, n = 0;

	if (!list)
		return ibemu__verbs_null(ENOMEM);
	/*
	 * Any failure to reach the HCA (not attached, daemon gone, unknown
	 * host: said on stderr) leaves the list empty, as rdma-core's does
	 * when a device cannot be read: a program then reports that it
	 * found no device.
	 */
	ret = ibemu__verbs_ca_query(&ca);
	if (ret == -ENOMEM) {
		free(list);
		return ibemu__verbs_null(ENOMEM);
	}
	if (!ret) {
		d = device_new(ca);
		free(ca);
		if (!d) {
			free(list);
			return ibemu__verbs_null(ENOMEM);
		}
		list[n++] = &d->dev;
	}
	if (num_devices)
		*num_devices = n;
	return list;
}

VERBS_EXPORT void ibemu__ibv_free_device_list(struct ibv_device **list);
VERBS_SYMVER_DEFAULT(ibemu__ibv_free_device_list, ibv_free_device_list,
		     "IBVERBS_1.1");
void ibemu__ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **p;

	if (!list)
		return;
	for (p = list; *p; p++)
		ibemu__verbs_device_put(to_dev(*p));
	free(list);
}

VERBS_EXPORT const char *ibemu__ibv_get_device_name(struct ibv_device *device);
VERBS_SYMVER_DEFAULT(ibemu__ibv_get_device_name, ibv_get_device_name,
		     "IBVERBS_1.1");
const char *ibemu__ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

VERBS_EXPORT __be64 ibemu__ibv_get_device_guid(struct ibv_device *device);
VERBS_SYMVER_DEFAULT(ibemu__ibv_get_device_guid, ibv_get_device_guid,
		     "IBVERBS_1.1");
__be64 ibemu__ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(to_dev(device)->node_guid);
}

/* The kernel's index of the device: the process has only this one. */
VERBS_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return 0;
}

/*
 * The async fd: the daemon counts async events (port changes, QP errors)
 * in an eventfd, one per entry of the context page's ring; the program
 * polls an epoll set of it and of the stream's hang-up, so the fd is
 * readable while an event waits or once the daemon is gone (for
 * IBV_EVENT_DEVICE_FATAL). 0 or an errno.
 */
static int async_fds_open(struct ibemu_verbs_context *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ret;

	ctx->async_efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE | EFD_NONBLOCK);
	if (ctx->async_efd < 0)
		return errno;
	ctx->vctx.context.async_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->vctx.context.async_fd < 0)
		goto err;
	if (epoll_ctl(ctx->vctx.context.async_fd, EPOLL_CTL_ADD, ctx->async_efd,
		      &ev))
		goto err_epoll;
	return 0;
err_epoll:
	ret = errno;
	close(ctx->vctx.context.async_fd);
	errno = ret;
err:
	ret = errno;
	close(ctx->async_efd);
	return ret;
}

/* Adds the stream's hang-up to the async fd's set; 0 or -1 with errno. */
static int async_watch_stream(struct ibemu_verbs_context *ctx)
{
	struct epoll_event ev = {.events = EPOLLRDHUP};

	return epoll_ctl(ctx->vctx.context.async_fd, EPOLL_CTL_ADD,
			 ctx->sess_fd, &ev);
}

/* The open contexts, for the bootstrap (ibemu__verbs_each_context). */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibemu_verbs_context *open_list;

static void open_link(struct ibemu_verbs_context *ctx, int on)
{
	struct ibemu_verbs_context **pp;

	pthread_mutex_lock(&open_lock);
	if (on) {
		ctx->next_open = open_list;
		open_list = ctx;
	}
	for (pp = &open_list; !on && *pp; pp = &(*pp)->next_open)
		if (*pp == ctx) {
			*pp = ctx->next_open;
			break;
		}
	pthread_mutex_unlock(&open_lock);
}

void ibemu__verbs_each_context(void (*fn)(struct ibemu_verbs_context *ctx,
					  void *arg),
			       void *arg)
{
	struct ibemu_verbs_context *ctx;

	pthread_mutex_lock(&open_lock);
	for (ctx = open_list; ctx; ctx = ctx->next_open)
		if (!ctx->gone)
			fn(ctx, arg);
	pthread_mutex_unlock(&open_lock);
}

VERBS_EXPORT struct ibv_context *
ibemu__ibv_open_device(struct ibv_device *device);
VERBS_SYMVER_DEFAULT(ibemu__ibv_open_device, ibv_open_device, "IBVERBS_1.1");
struct ibv_context *ibemu__ibv_open_device(struct ibv_device *device)
{
	struct ibemu_verbs_context *ctx = calloc(1, sizeof(*ctx));
	struct ibv_context *c;
	int ret;

	if (!ctx)
		return ibemu__verbs_null(ENOMEM);
	c = &ctx->vctx.context;
	ret = async_fds_open(ctx);
	if (ret) {
		free(ctx);
		return ibemu__verbs_null(ret);
	}
	ctx->dev = to_dev(device);
	device_get(ctx->dev);
	c->device = device;
	c->cmd_fd = -1; /* no uverbs device behind it */
	c->num_comp_vectors = IBEMU_VERBS_COMP_VECTORS;
	pthread_mutex_init(&c->mutex, NULL);
	pthread_mutex_init(&ctx->sess_lock, NULL);
	pthread_mutex_init(&ctx->async_lock, NULL);
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->vctx.sz = sizeof(ctx->vctx);
	ibemu__verbs_ops_init(ctx);
	ret = ibemu__verbs_stream_open(ctx, device->name);
	if (!ret)
		ibemu__verbs_charge(ctx, IBEMU_VCOST_OPEN_DEVICE, 0);
	if (!ret && async_watch_stream(ctx)) {
		ret = errno;
		close(ctx->sess_fd);
		munmap(ctx->page, IBEMU_VERBS_PAGE);
	}
	if (ret) {
		close(c->async_fd);
		close(ctx->async_efd);
		pthread_mutex_destroy(&c->mutex);
		pthread_mutex_destroy(&ctx->sess_lock);
		pthread_mutex_destroy(&ctx->async_lock);
		ibemu__verbs_device_put(ctx->dev);
		free(ctx);
		return ibemu__verbs_null(ret);
	}
	open_link(ctx, 1);
	return c;
}

/* Like the kernel, closing reclaims what the process left open; objects
 * are the program's to destroy first. */
/*
 * Closing is a barrier, as the kernel's release of a uverbs file is: the
 * daemon reclaims what the stream still holds (QPs, regions) when it reads
 * the stream's end, and closes its own end after, so the library shuts
 * its end for writing and waits for the daemon's (10 s at most) before it
 * returns: no region of the context is reached after.
 */
static void stream_end(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char buf[256];
	ssize_t n;
	int r;

	if (shutdown(fd, SHUT_WR))
		return;
	for (;;) {
		r = poll(&p, 1, 10000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		n = read(fd, buf, sizeof(buf));
		if (!n || (n < 0 && errno != EINTR && errno != EAGAIN))
			return;
	}
}

VERBS_EXPORT int ibemu__ibv_close_device(struct ibv_context *context);
VERBS_SYMVER_DEFAULT(ibemu__ibv_close_device, ibv_close_device, "IBVERBS_1.1");
int ibemu__ibv_close_device(struct ibv_context *context)
{
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);

	open_link(ctx, 0);
	ibemu__verbs_charge(ctx, IBEMU_VCOST_CLOSE_DEVICE, 0);
	ibemu__verbs_users_detach(ctx);
	stream_end(ctx->sess_fd);
	close(ctx->sess_fd);
	munmap(ctx->page, IBEMU_VERBS_PAGE);
	close(context->async_fd);
	close(ctx->async_efd);
	pthread_mutex_destroy(&ctx->sess_lock);
	pthread_mutex_destroy(&ctx->async_lock);
	pthread_mutex_destroy(&context->mutex);
	ibemu__verbs_device_put(ctx->dev);
	free(ctx);
	return 0;
}

/*
 * Takes one count of async_efd, waiting on async_fd unless the program
 * made it non-blocking. Returns 0, 1 when none is left and the daemon is
 * gone, or -1 with errno (EAGAIN: non-blocking and nothing yet).
 */
static int async_take(struct ibemu_verbs_context *ctx)
{
	int afd = ctx->vctx.context.async_fd, fl;
	struct epoll_event ev;
	uint64_t n;

	for (;;) {
		if (read(ctx->async_efd, &n, sizeof(n)) == sizeof(n))
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -1;
		if (ibemu__verbs_stream_gone(ctx))
			return 1;
		fl = fcntl(afd, F_GETFL);
		if (fl < 0)
			return -1;
		if (fl & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		if (epoll_wait(afd, &ev, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

/*
 * After the events the daemon raised before it went: one
 * IBV_EVENT_DEVICE_FATAL, then EIO, as the kernel's uverbs gives after a
 * device removal.
 */
static int async_fatal(struct ibemu_verbs_context *ctx,
		       struct ibv_async_event *event)
{
	if (__atomic_exchange_n(&ctx->fatal_taken, 1, __ATOMIC_RELAXED)) {
		errno = EIO;
		return -1;
	}
	memset(event, 0, sizeof(*event));
	event->event_type = IBV_EVENT_DEVICE_FATAL;
	return 0;
}

/*
 * The next event of the context page's ring, which the daemon fills and
 * counts in async_efd: a blocking call waits, one on a non-blocking
 * async_fd fails with EAGAIN, as with the kernel. The element is found by
 * its number among the context's objects; one destroyed meanwhile is
 * skipped.
 */
VERBS_EXPORT int ibemu__ibv_get_async_event(struct ibv_context *context,
					    struct ibv_async_event *event);
VERBS_SYMVER_DEFAULT(ibemu__ibv_get_async_event, ibv_get_async_event,
		     "IBVERBS_1.1");
int ibemu__ibv_get_async_event(struct ibv_context *context,
			       struct ibv_async_event *event)
{
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_ring_hdr *h = &ctx->page->async_hdr;
	struct ibemu_verbs_async a;
	struct ibemu_verbs_qp *qp;
	struct ibemu_verbs_srq *srq;
	struct ibemu_verbs_cq *cq;
	uint32_t cons;
	uint64_t n;
	int found, r;

	for (;;) {
		/* About to block with no event in the ring: it waits. */
		do
			n = ibemu__verbs_handed(ctx);
		while (__atomic_load_n(&h->prod, __ATOMIC_ACQUIRE) ==
			       __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) &&
		       !ibemu__verbs_waiting(ctx, n, IBEMU_VERBS_WAIT_ASYNC,
					     NULL));
		r = async_take(ctx);
		if (r > 0)
			return async_fatal(ctx, event);
		if (r < 0)
			return -1;
		/* Running before it takes the event (waiting.c). */
		ibemu__verbs_running(ctx);
		pthread_mutex_lock(&ctx->async_lock);
		cons = h->cons;
		if (cons == __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE)) {
			pthread_mutex_unlock(&ctx->async_lock);
			continue;
		}
		a = ctx->page->async[cons % IBEMU_VERBS_ASYNC_ENTRIES];
		__atomic_store_n(&h->cons, cons + 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&ctx->async_lock);
		ibemu__verbs_clock_at_least(ctx, a.time_ps);
		ibemu__verbs_charge(ctx, IBEMU_VCOST_GET_EVENT, 0);
		memset(event, 0, sizeof(*event));
		event->event_type = (enum ibv_event_type)a.event;
		found = 1;
		pthread_mutex_lock(&context->mutex);
		switch (a.event) {
		case IBV_EVENT_PORT_ACTIVE:
		case IBV_EVENT_PORT_ERR:
			event->element.port_num = (int)a.id;
			break;
		case IBV_EVENT_SRQ_LIMIT_REACHED:
		case IBV_EVENT_SRQ_ERR:
			for (srq = ctx->srqs; srq && srq->srq.handle != a.id;
			     srq = srq->next)
				;
			event->element.srq = srq ? &srq->srq : NULL;
			found = !!srq;
			break;
		case IBV_EVENT_CQ_ERR:
			for (cq = ctx->cqs; cq && cq->cq.handle != a.id;
			     cq = cq->next)
				;
			event->element.cq = cq ? &cq->cq : NULL;
			found = !!cq;
			break;
		default:
			for (qp = ctx->qps; qp && qp->qp.qp_num != a.id;
			     qp = qp->next)
				;
			event->element.qp = qp ? &qp->qp : NULL;
			found = !!qp;
		}
		pthread_mutex_unlock(&context->mutex);
		if (found)
			return 0;
	}
}

VERBS_EXPORT void ibemu__ibv_ack_async_event(struct ibv_async_event *event);
VERBS_SYMVER_DEFAULT(ibemu__ibv_ack_async_event, ibv_ack_async_event,
		     "IBVERBS_1.1");
void ibemu__ibv_ack_async_event(struct ibv_async_event *event)
{
}

/* Device import shares a context between processes through the uverbs
 * file; there is none. */
VERBS_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}
