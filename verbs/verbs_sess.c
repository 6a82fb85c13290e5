// SPDX-License-Identifier: MIT
/*
 * The verbs library's side of the session protocol (proto/sess_proto.h),
 * spoken through the session client it shares with umad (sessc/): calls to
 * the daemon of the fabric this process is attached to, over the sess.sock
 * that 'ibemu exec' names in $IBEMU_SESSION_SOCKET. CA_QUERY connects,
 * sends one request, reads one reply and closes. An open context
 * keeps a verbs stream instead (proto/verbs_proto.h): its calls and port
 * queries (which see the port as the SM left it at that moment, as sysfs
 * would), the rings it shares with the daemon, and the kick that wakes a
 * sleeping daemon after a post. A context is bound to the daemon it
 * opened: when that one goes, the stream hangs up, and the context fails
 * every verb from then on (never a word with a daemon started since).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sessc.h"
#include "verbs_int.h"

/* Quiet outside 'ibemu exec': a program sees what it sees on a host
 * without InfiniBand. What it says is signed "libibverbs (ibemu)". */
static struct ibemu_sessc sessc = IBEMU_SESSC_INIT("libibverbs", NULL);

int ibemu__verbs_ca_query(struct ibemu_sess_ca **out)
{
	return ibemu_sessc_ca_query(&sessc, out);
}

/*
 * A request on a verbs stream and its reply into 'reply' ('rlen' bytes,
 * no fewer). Returns 0 or a positive errno: the send's, the daemon's (its
 * message in 'r'), or EIO for a reply that is not one.
 */
static int stream_exchange(int fd, uint16_t type, const void *req, size_t len,
			   const int *fds, int nfds, void *reply, size_t rlen,
			   struct ibemu_sessc_refusal *r)
{
	size_t got;
	int ret;

	ibemu_sessc_refusal_clear(r);
	ret = ibemu_sessc_send(fd, type, req, len, fds, nfds, 0);
	if (ret)
		return -ret;
	ret = ibemu_sessc_recv(fd, type, reply, rlen, &got, r);
	if (ret)
		return r->status ? -r->status : EIO;
	return got == rlen ? 0 : EIO;
}

int ibemu__verbs_stream_gone(struct ibemu_verbs_context *ctx)
{
	struct pollfd p = {.fd = ctx->sess_fd, .events = POLLRDHUP};

	if (ibemu__verbs_gone(ctx))
		return 1;
	/* The daemon's end closes when it exits or is killed. */
	if (poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)))
		__atomic_store_n(&ctx->gone, 1, __ATOMIC_RELAXED);
	return ibemu__verbs_gone(ctx);
}

/* Empty polls between two looks at the stream: a few milliseconds. */
#define EMPTY_POLLS_PER_LOOK 65536u

void ibemu__verbs_empty_poll(struct ibemu_verbs_context *ctx)
{
	/* A daemon killed while awake leaves no kick to fail: a program
	 * that only polls and posts learns it here. */
	uint64_t n = __atomic_add_fetch(&ctx->empty_polls, 1, __ATOMIC_RELAXED);

	/* The daemon hands time only to a wait that goes on polling; one
	 * store in 64 polls, as the daemon reads this cache line often. A
	 * tick earned wakes it if it sleeps. */
	if (!(n % 64))
		__atomic_store_n(&ctx->page->spin_polls, n, __ATOMIC_RELAXED);
	if (!(n % IBEMU_VERBS_TICK_POLLS) && ctx->page->rule)
		ibemu__verbs_kick(ctx);
	/* A read of the clock since the last poll may earn the next tick. */
	ibemu__verbs_clock_observed(ctx, 0);
	if (!(n % EMPTY_POLLS_PER_LOOK))
		ibemu__verbs_stream_gone(ctx);
}

/*
 * What a call gets once the daemon is gone: EIO, but a destroy succeeds,
 * as rdma-core counts a destroy that the removed device answers with EIO
 * (verbs_is_destroy_err()): the daemon freed everything as it went.
 */
static int gone_call(uint16_t type)
{
	switch (type) {
	case IBEMU_SESS_VERBS_PD_FREE:
	case IBEMU_SESS_VERBS_MR_DEREG:
	case IBEMU_SESS_VERBS_CQ_DESTROY:
	case IBEMU_SESS_VERBS_QP_DESTROY:
	case IBEMU_SESS_VERBS_SRQ_DESTROY:
	case IBEMU_SESS_VERBS_XRCD_CLOSE:
		return 0;
	default:
		return EIO;
	}
}

/*
 * What a call on the stream costs (cost.h), by its type; QP_MODIFY and
 * MR_REG are charged by their callers (per transition, per page).
 */
static void charge_call(struct ibemu_verbs_context *ctx, uint16_t type)
{
	static const struct {
		uint16_t type;
		enum ibemu_verbs_cost cost;
	} map[] = {
		{IBEMU_SESS_VERBS_PD_ALLOC, IBEMU_VCOST_PD_ALLOC},
		{IBEMU_SESS_VERBS_PD_FREE, IBEMU_VCOST_PD_FREE},
		{IBEMU_SESS_VERBS_MR_DEREG, IBEMU_VCOST_MR_DEREG},
		{IBEMU_SESS_VERBS_CQ_CREATE, IBEMU_VCOST_CQ_CREATE},
		{IBEMU_SESS_VERBS_CQ_DESTROY, IBEMU_VCOST_CQ_DESTROY},
		{IBEMU_SESS_VERBS_QP_CREATE, IBEMU_VCOST_QP_CREATE},
		{IBEMU_SESS_VERBS_QP_QUERY, IBEMU_VCOST_QP_QUERY},
		{IBEMU_SESS_VERBS_QP_DESTROY, IBEMU_VCOST_QP_DESTROY},
		{IBEMU_SESS_VERBS_SRQ_CREATE, IBEMU_VCOST_SRQ_CREATE},
		{IBEMU_SESS_VERBS_SRQ_MODIFY, IBEMU_VCOST_SRQ_MODIFY},
		{IBEMU_SESS_VERBS_SRQ_QUERY, IBEMU_VCOST_SRQ_QUERY},
		{IBEMU_SESS_VERBS_SRQ_DESTROY, IBEMU_VCOST_SRQ_DESTROY},
		/* XRC: an XRC domain is allocated and freed by firmware as a
		 * PD is, an XRC SRQ made as an SRQ; opening a QP looks it up
		 * as a query does. */
		{IBEMU_SESS_VERBS_XRCD_OPEN, IBEMU_VCOST_PD_ALLOC},
		{IBEMU_SESS_VERBS_XRCD_CLOSE, IBEMU_VCOST_PD_FREE},
		{IBEMU_SESS_VERBS_XSRQ_CREATE, IBEMU_VCOST_SRQ_CREATE},
		{IBEMU_SESS_VERBS_QP_OPEN, IBEMU_VCOST_QP_QUERY},
		/* A multicast attach is one firmware command, as a query. */
		{IBEMU_SESS_VERBS_MCAST_ATTACH, IBEMU_VCOST_QP_QUERY},
		{IBEMU_SESS_VERBS_MCAST_DETACH, IBEMU_VCOST_QP_QUERY},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].type == type)
			ibemu__verbs_charge(ctx, map[i].cost, 0);
}

int ibemu__verbs_call(struct ibemu_verbs_context *ctx, uint16_t type, void *msg,
		      size_t len, const int *fds, int nfds)
{
	struct ibemu_sessc_refusal r;
	int ret;

	charge_call(ctx, type);
	if (ibemu__verbs_gone(ctx))
		return gone_call(type);
	ibemu__verbs_calling(ctx);
	ibemu__verbs_call_enter();
	pthread_mutex_lock(&ctx->sess_lock);
	ret = stream_exchange(ctx->sess_fd, type, msg, len, fds, nfds, msg, len,
			      &r);
	pthread_mutex_unlock(&ctx->sess_lock);
	ibemu__verbs_call_leave();
	if (ret && ibemu__verbs_stream_gone(ctx))
		return gone_call(type);
	return ret;
}

int ibemu__verbs_port_query(struct ibemu_verbs_context *ctx, unsigned port,
			    struct ibemu_sess_port_attr *out)
{
	struct ibemu_sess_bind b = {.port = port};
	struct ibemu_sessc_refusal r;
	int ret;

	if (ibemu__verbs_gone(ctx))
		return -EIO;
	ibemu__verbs_calling(ctx);
	ibemu__verbs_call_enter();
	pthread_mutex_lock(&ctx->sess_lock);
	ret = stream_exchange(ctx->sess_fd, IBEMU_SESS_PORT_QUERY, &b,
			      sizeof(b), NULL, 0, out, sizeof(*out), &r);
	pthread_mutex_unlock(&ctx->sess_lock);
	ibemu__verbs_call_leave();
	if (ret && ibemu__verbs_stream_gone(ctx))
		return -EIO;
	if (!ret &&
	    (out->port_num != port || out->npkeys > IBEMU_SESS_PORT_PKEYS))
		ret = EPROTO;
	/* A port that does not exist is the caller's mistake (EINVAL, as
	 * the kernel answers); the rest is the fabric's. */
	if (ret && ret != EINVAL)
		ibemu_sessc_say_once(&sessc, "port %u of %s: %s", port,
				     ctx->dev->dev.name,
				     r.why[0] ? r.why : strerror(ret));
	return -ret;
}

void ibemu__verbs_posted(struct ibemu_verbs_context *ctx)
{
	/* After the producer index's store (release): the daemon that reads
	 * the count (acquire) then finds the work in the ring. */
	__atomic_add_fetch(&ctx->page->posts, 1, __ATOMIC_RELEASE);
}

void ibemu__verbs_kick(struct ibemu_verbs_context *ctx)
{
	uint32_t *sleeps = &ctx->page->sleeps;
	int ret;

	/* Orders our producer index before the read of 'sleeps', against
	 * the daemon's store of 'sleeps' before its read of the index. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/*
	 * One kick per sleep: the thread that takes the flag wakes the
	 * daemon; one that finds it taken posted before the daemon's next
	 * look at the rings, which follows its next store of the flag.
	 */
	if (!__atomic_load_n(sleeps, __ATOMIC_SEQ_CST) ||
	    !__atomic_exchange_n(sleeps, 0, __ATOMIC_SEQ_CST))
		return;
	ret = ibemu_sessc_send(ctx->sess_fd, IBEMU_SESS_VERBS_KICK, NULL, 0,
			       NULL, 0, MSG_DONTWAIT);
	/* A full socket holds kicks enough; a closed one: the daemon went. */
	if (ret && ret != -EAGAIN)
		ibemu__verbs_stream_gone(ctx);
}

uint32_t ibemu__verbs_pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

int ibemu__verbs_ring_create(struct ibemu_verbs_ring *r, uint32_t n,
			     uint32_t esz)
{
	size_t bytes = IBEMU_VERBS_RING_BYTES(n, esz);
	int fd, ret;

	memset(r, 0, sizeof(*r));
	fd = memfd_create("ibemu-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)bytes) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto err;
	r->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED)
		goto err;
	r->bytes = bytes;
	r->hdr = r->map;
	r->hdr->size = n;
	r->ents = (uint8_t *)r->map + sizeof(*r->hdr);
	r->size = n;
	r->esz = esz;
	return fd;
err:
	ret = -errno;
	close(fd);
	r->map = NULL;
	return ret;
}

void ibemu__verbs_ring_destroy(struct ibemu_verbs_ring *r)
{
	if (r->map)
		munmap(r->map, r->bytes);
	r->map = NULL;
}

int ibemu__verbs_stream_open(struct ibemu_verbs_context *ctx, const char *host)
{
	struct ibemu_sessc_refusal r;
	struct ibemu_verbs_open o;
	struct ibemu_verbs_ring page;
	int fds[2], fd, ret;

	/*
	 * The daemon moves payload with process_vm_readv/writev; under the
	 * Yama LSM (ptrace_scope 1) that needs this process's consent.
	 */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	memset(&o, 0, sizeof(o));
	ret = ibemu_sessc_bind_fill(&sessc, &o.bind, host, 0);
	if (ret)
		return -ret;
	fd = ibemu_sessc_connect(&sessc);
	if (fd < 0)
		return -fd;
	/* A context page is a ring of nothing: only its header size. */
	fds[0] = ibemu__verbs_ring_create(&page, 1,
					  IBEMU_VERBS_PAGE - sizeof(*page.hdr));
	if (fds[0] < 0) {
		close(fd);
		return -fds[0];
	}
	ctx->page = page.map;
	ctx->page->async_hdr.size = IBEMU_VERBS_ASYNC_ENTRIES;
	ctx->probe = ((uint64_t)getpid() << 32) ^ (uintptr_t)ctx ^ 0x1be3u;
	o.probe = ctx->probe;
	o.probe_addr = (uintptr_t)&ctx->probe;
	fds[1] = ctx->async_efd;
	ret = stream_exchange(fd, IBEMU_SESS_VERBS_OPEN, &o, sizeof(o), fds, 2,
			      &o, sizeof(o), &r);
	close(fds[0]);
	if (ret) {
		fprintf(stderr, "libibverbs (ibemu): cannot open %s: %s\n",
			host, r.why[0] ? r.why : strerror(ret));
		munmap(ctx->page, IBEMU_VERBS_PAGE);
		ctx->page = NULL;
		close(fd);
		return ret;
	}
	/* Calls are answered at once; a hung daemon fails them. */
	ctx->sess_fd = fd;
	/* The daemon set the page's clock to the fabric's time. */
	ibemu__verbs_clock_at_least(ctx, ctx->page->clock_ps);
	return 0;
}
