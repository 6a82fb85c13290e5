// SPDX-License-Identifier: MIT
/*
 * The verbs library's side of the session protocol (proto/sess_proto.h):
 * calls to the daemon of the fabric this process is attached to, over the
 * sess.sock that 'ibemu exec' names in $IBEMU_SESSION_SOCKET. CA_QUERY
 * connects, sends one request, reads one reply and closes. An open context
 * keeps a verbs stream instead (proto/verbs_proto.h): its calls and port
 * queries (which see the port as the SM left it at that moment, as sysfs
 * would), the rings it shares with the daemon, and the kick that wakes a
 * sleeping daemon after a post. A context is bound to the daemon it
 * opened: when that one goes, the stream hangs up, and the context fails
 * every verb from then on (never a word with a daemon started since).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sess_connect.h"
#include "verbs_int.h"

/* A daemon answers calls at once; this only bounds a hung one. */

/* Says once why this process cannot see its HCA: tools call often. */
static void say_once(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void say_once(const char *fmt, ...)
{
	static int said;
	va_list ap;

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	fputs("libibverbs (ibemu): ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Outside 'ibemu exec' there is no socket and no HCA, quietly: a program
 * sees what it sees on a host without InfiniBand.
 */
static int sess_connect(void)
{
	const char *path = getenv(IBEMU_SESS_ENV_SOCKET);
	int fd;

	if (!path || !*path)
		return -ENODEV;
	fd = ibemu_sess_connect(path);
	if (fd == -ENAMETOOLONG)
		say_once("%s is too long for a socket path",
			 IBEMU_SESS_ENV_SOCKET);
	else if (fd < 0)
		say_once("cannot reach the fabric daemon at %s: %s (is the "
			 "fabric up?)",
			 path, strerror(-fd));
	return fd;
}

/*
 * One call: request 'type' with payload 'req', its reply into 'reply' (at
 * most 'cap' bytes, *got set). Returns 0, the daemon's -errno (its message
 * in 'why'), or -errno of the exchange.
 */
static int sess_call(uint16_t type, const void *req, size_t len, void *reply,
		     size_t cap, size_t *got, char *why, size_t whylen)
{
	uint8_t buf[IBEMU_SESS_MAX_MSG] __attribute__((aligned(8)));
	struct ibemu_sess_hdr h = {
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = type,
		.len = (uint32_t)len,
	};
	struct iovec iov[2] = {
		{.iov_base = &h, .iov_len = sizeof(h)},
		{.iov_base = (void *)req, .iov_len = len},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	int fd, ret = 0;
	ssize_t n;

	*why = '\0';
	fd = sess_connect();
	if (fd < 0)
		return fd;
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	do
		n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
		goto out;
	}
	if ((size_t)n < sizeof(h) || (size_t)n > sizeof(buf)) {
		ret = -EPROTO;
		goto out;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != IBEMU_SESS_MAGIC || h.version != IBEMU_SESS_VERSION ||
	    h.len != (size_t)n - sizeof(h)) {
		ret = -EPROTO;
	} else if (h.type == IBEMU_SESS_ERROR) {
		snprintf(why, whylen, "%.*s", (int)h.len, buf + sizeof(h));
		ret = h.status < 0 ? h.status : -EIO;
	} else if (h.type != type || h.len > cap) {
		ret = -EPROTO;
	} else {
		memcpy(reply, buf + sizeof(h), h.len);
		*got = h.len;
	}
out:
	close(fd);
	return ret;
}

static int bind_fill(struct ibemu_sess_bind *b, const char *host, unsigned port)
{
	memset(b, 0, sizeof(*b));
	if (host && strlen(host) >= sizeof(b->host)) {
		say_once("%s names no node: it is longer than %zu characters",
			 IBEMU_SESS_ENV_HOST, sizeof(b->host) - 1);
		return -EINVAL;
	}
	if (host)
		memcpy(b->host, host, strlen(host) + 1);
	b->port = port;
	return 0;
}

int ibemu__verbs_ca_query(struct ibemu_sess_ca **out)
{
	size_t cap = IBEMU_SESS_MAX_MSG - sizeof(struct ibemu_sess_hdr);
	struct ibemu_sess_bind b;
	struct ibemu_sess_ca *ca;
	char why[256];
	size_t got = 0;
	int ret;

	ret = bind_fill(&b, getenv(IBEMU_SESS_ENV_HOST), 0);
	if (ret)
		return ret;
	ca = malloc(cap);
	if (!ca)
		return -ENOMEM;
	ret = sess_call(IBEMU_SESS_CA_QUERY, &b, sizeof(b), ca, cap, &got, why,
			sizeof(why));
	if (!ret && (got < sizeof(*ca) || ca->nports > IBEMU_SESS_MAX_PORTS ||
		     got != sizeof(*ca) + ca->nports * sizeof(ca->ports[0]) ||
		     !memchr(ca->host, '\0', sizeof(ca->host))))
		ret = -EPROTO;
	if (ret) {
		if (*why)
			say_once("%s", why);
		else if (ret != -ENODEV)
			say_once("the fabric daemon did not answer: %s",
				 strerror(-ret));
		free(ca);
		return ret;
	}
	*out = ca;
	return 0;
}

/* Sends 'type' with 'len' bytes of 'msg' and 'nfds' fds on 'fd'. */
static int send_with_fds(int fd, uint16_t type, const void *msg, size_t len,
			 const int *fds, int nfds, int flags)
{
	struct ibemu_sess_hdr h = {
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = type,
		.len = (uint32_t)len,
	};
	struct iovec iov[2] = {
		{.iov_base = &h, .iov_len = sizeof(h)},
		{.iov_base = (void *)msg, .iov_len = len},
	};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | flags);
	while (n < 0 && errno == EINTR);
	return n < 0 ? errno : 0;
}

/* Reads the reply to 'type' into 'msg' ('len' bytes); 0 or errno. */
static int recv_reply(int fd, uint16_t type, void *msg, size_t len, char *why,
		      size_t whylen)
{
	uint8_t buf[IBEMU_SESS_MAX_MSG] __attribute__((aligned(8)));
	struct ibemu_sess_hdr h;
	ssize_t n;

	*why = '\0';
	do
		n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < (ssize_t)sizeof(h) || (size_t)n > sizeof(buf))
		return EIO;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != IBEMU_SESS_MAGIC || h.version != IBEMU_SESS_VERSION ||
	    h.len != (size_t)n - sizeof(h))
		return EIO;
	if (h.type == IBEMU_SESS_ERROR) {
		snprintf(why, whylen, "%.*s", (int)h.len, buf + sizeof(h));
		return h.status < 0 ? -h.status : EIO;
	}
	if (h.type != type || h.len != len)
		return EIO;
	memcpy(msg, buf + sizeof(h), len);
	return 0;
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
	if (!(__atomic_add_fetch(&ctx->empty_polls, 1, __ATOMIC_RELAXED) %
	      EMPTY_POLLS_PER_LOOK))
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
		return 0;
	default:
		return EIO;
	}
}

int ibemu__verbs_call(struct ibemu_verbs_context *ctx, uint16_t type, void *msg,
		      size_t len, const int *fds, int nfds)
{
	char why[256];
	int ret;

	if (ibemu__verbs_gone(ctx))
		return gone_call(type);
	ibemu__verbs_calling(ctx);
	pthread_mutex_lock(&ctx->sess_lock);
	ret = send_with_fds(ctx->sess_fd, type, msg, len, fds, nfds, 0);
	if (!ret)
		ret = recv_reply(ctx->sess_fd, type, msg, len, why,
				 sizeof(why));
	pthread_mutex_unlock(&ctx->sess_lock);
	if (ret && ibemu__verbs_stream_gone(ctx))
		return gone_call(type);
	return ret;
}

int ibemu__verbs_port_query(struct ibemu_verbs_context *ctx, unsigned port,
			    struct ibemu_sess_port_attr *out)
{
	struct ibemu_sess_bind b = {.port = port};
	char why[256];
	int ret;

	if (ibemu__verbs_gone(ctx))
		return -EIO;
	pthread_mutex_lock(&ctx->sess_lock);
	ret = send_with_fds(ctx->sess_fd, IBEMU_SESS_PORT_QUERY, &b, sizeof(b),
			    NULL, 0, 0);
	if (!ret)
		ret = recv_reply(ctx->sess_fd, IBEMU_SESS_PORT_QUERY, out,
				 sizeof(*out), why, sizeof(why));
	pthread_mutex_unlock(&ctx->sess_lock);
	if (ret && ibemu__verbs_stream_gone(ctx))
		return -EIO;
	if (!ret &&
	    (out->port_num != port || out->npkeys > IBEMU_SESS_PORT_PKEYS))
		ret = EPROTO;
	/* A port that does not exist is the caller's mistake (EINVAL, as
	 * the kernel answers); the rest is the fabric's. */
	if (ret && ret != EINVAL)
		say_once("port %u of %s: %s", port, ctx->dev->dev.name,
			 *why ? why : strerror(ret));
	return -ret;
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
	ret = send_with_fds(ctx->sess_fd, IBEMU_SESS_VERBS_KICK, NULL, 0, NULL,
			    0, MSG_DONTWAIT);
	/* A full socket holds kicks enough; a closed one: the daemon went. */
	if (ret && ret != EAGAIN)
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
	struct ibemu_verbs_open o;
	struct ibemu_verbs_ring page;
	int fds[2], fd, ret;
	char why[512];

	/*
	 * The daemon moves payload with process_vm_readv/writev; under the
	 * Yama LSM (ptrace_scope 1) that needs this process's consent.
	 */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	memset(&o, 0, sizeof(o));
	ret = bind_fill(&o.bind, host, 0);
	if (ret)
		return -ret;
	fd = sess_connect();
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
	ret = send_with_fds(fd, IBEMU_SESS_VERBS_OPEN, &o, sizeof(o), fds, 2,
			    0);
	close(fds[0]);
	if (!ret)
		ret = recv_reply(fd, IBEMU_SESS_VERBS_OPEN, &o, sizeof(o), why,
				 sizeof(why));
	if (ret) {
		fprintf(stderr, "libibverbs (ibemu): cannot open %s: %s\n",
			host, *why ? why : strerror(ret));
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
