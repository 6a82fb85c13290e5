// SPDX-License-Identifier: MIT
/*
 * The session client that libibumad.so.3 and libibverbs.so.1 share: finding
 * sess.sock, connecting, sending a message with its fds, reading a reply and
 * checking its header, a call (connect, one request, one reply, close) and
 * CA_QUERY. What a library does with a stream (umad's ports, verbs' contexts)
 * stays in the library; this file knows only proto/sess_proto.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "sessc.h"

void ibemu_sessc_say_once(struct ibemu_sessc *c, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&c->said, 1, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "%s (ibemu): ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *ibemu_sessc_socket_path(void)
{
	const char *path = getenv(IBEMU_SESS_ENV_SOCKET);

	return path && *path ? path : NULL;
}

int ibemu_sessc_attached(struct ibemu_sessc *c)
{
	if (ibemu_sessc_socket_path())
		return 1;
	if (c->outside)
		ibemu_sessc_say_once(c, "%s", c->outside);
	return 0;
}

/* Connects to the socket at 'path'; the fd or -errno. */
static int connect_path(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = IBEMU_SESSC_CALL_TIMEOUT_S};
	size_t len = strlen(path);
	int fd, ret;

	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int ibemu_sessc_connect(struct ibemu_sessc *c)
{
	const char *path;
	int fd;

	if (!ibemu_sessc_attached(c))
		return -ENODEV;
	path = ibemu_sessc_socket_path();
	fd = connect_path(path);
	if (fd == -ENAMETOOLONG)
		ibemu_sessc_say_once(c, "%s is too long for a socket path",
				     IBEMU_SESS_ENV_SOCKET);
	else if (fd < 0)
		ibemu_sessc_say_once(c,
				     "cannot reach the fabric daemon at %s: %s "
				     "(is the fabric up?)",
				     path, strerror(-fd));
	return fd;
}

int ibemu_sessc_bind_fill(struct ibemu_sessc *c, struct ibemu_sess_bind *b,
			  const char *host, unsigned port)
{
	memset(b, 0, sizeof(*b));
	if (host && strlen(host) >= sizeof(b->host)) {
		ibemu_sessc_say_once(c,
				     "%s names no node: it is longer than %zu "
				     "characters",
				     IBEMU_SESS_ENV_HOST, sizeof(b->host) - 1);
		return -EINVAL;
	}
	if (host)
		memcpy(b->host, host, strlen(host) + 1);
	b->port = port;
	return 0;
}

int ibemu_sessc_send(int fd, uint16_t type, const void *msg, size_t len,
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
		char buf[CMSG_SPACE(IBEMU_SESSC_MAX_FDS * sizeof(int))];
	} ctl;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds < 0 || nfds > IBEMU_SESSC_MAX_FDS)
		return -EINVAL;
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
	return n < 0 ? -errno : 0;
}

int ibemu_sessc_recv(int fd, uint16_t type, void *reply, size_t cap,
		     size_t *got, struct ibemu_sessc_refusal *r)
{
	uint8_t buf[IBEMU_SESS_MAX_MSG] __attribute__((aligned(8)));
	struct ibemu_sess_hdr h;
	unsigned resets = 0;
	ssize_t n;

	ibemu_sessc_refusal_clear(r);
	*got = 0;
	do
		n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
	while (n < 0 && (errno == EINTR || (errno == ECONNRESET && !resets++)));
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	if ((size_t)n < sizeof(h) || (size_t)n > sizeof(buf))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != IBEMU_SESS_MAGIC || h.version != IBEMU_SESS_VERSION ||
	    h.len != (size_t)n - sizeof(h))
		return -EPROTO;
	if (h.type == IBEMU_SESS_ERROR) {
		snprintf(r->why, sizeof(r->why), "%.*s", (int)h.len,
			 buf + sizeof(h));
		r->status = h.status < 0 ? h.status : -EIO;
		return r->status;
	}
	if (h.type != type || h.len > cap)
		return -EPROTO;
	if (h.len)
		memcpy(reply, buf + sizeof(h), h.len);
	*got = h.len;
	return 0;
}

int ibemu_sessc_exchange(int fd, uint16_t type, const void *req, size_t len,
			 const int *fds, int nfds, void *reply, size_t cap,
			 size_t *got, struct ibemu_sessc_refusal *r)
{
	int ret = ibemu_sessc_send(fd, type, req, len, fds, nfds, 0);

	/* If the daemon closed with our request unread, its ERROR (if it
	 * sent one) is still there to be read. */
	if (ret && ret != -EPIPE && ret != -ECONNRESET) {
		ibemu_sessc_refusal_clear(r);
		return ret;
	}
	return ibemu_sessc_recv(fd, type, reply, cap, got, r);
}

int ibemu_sessc_call(struct ibemu_sessc *c, uint16_t type, const void *req,
		     size_t len, void *reply, size_t cap, size_t *got,
		     struct ibemu_sessc_refusal *r)
{
	int fd = ibemu_sessc_connect(c);
	int ret;

	ibemu_sessc_refusal_clear(r);
	if (fd < 0)
		return fd;
	ret = ibemu_sessc_exchange(fd, type, req, len, NULL, 0, reply, cap, got,
				   r);
	close(fd);
	return ret;
}

void ibemu_sessc_explain(struct ibemu_sessc *c, int ret,
			 const struct ibemu_sessc_refusal *r)
{
	if (r->why[0])
		ibemu_sessc_say_once(c, "%s", r->why);
	else if (ret != -ENODEV)
		ibemu_sessc_say_once(c, "the fabric daemon did not answer: %s",
				     strerror(-ret));
}

/* Whether a CA_QUERY reply of 'got' bytes is whole and consistent. */
static int ca_valid(const struct ibemu_sess_ca *ca, size_t got)
{
	return got >= sizeof(*ca) && ca->nports <= IBEMU_SESS_MAX_PORTS &&
	       got == sizeof(*ca) + ca->nports * sizeof(ca->ports[0]) &&
	       memchr(ca->host, '\0', sizeof(ca->host));
}

int ibemu_sessc_ca_query(struct ibemu_sessc *c, struct ibemu_sess_ca **out)
{
	size_t cap = IBEMU_SESS_MAX_MSG - sizeof(struct ibemu_sess_hdr);
	struct ibemu_sessc_refusal r;
	struct ibemu_sess_bind b;
	struct ibemu_sess_ca *ca;
	size_t got = 0;
	int ret;

	ret = ibemu_sessc_bind_fill(c, &b, getenv(IBEMU_SESS_ENV_HOST), 0);
	if (ret)
		return ret;
	ca = malloc(cap);
	if (!ca)
		return -ENOMEM;
	ret = ibemu_sessc_call(c, IBEMU_SESS_CA_QUERY, &b, sizeof(b), ca, cap,
			       &got, &r);
	if (!ret && !ca_valid(ca, got))
		ret = -EPROTO;
	if (ret) {
		ibemu_sessc_explain(c, ret, &r);
		free(ca);
		return ret;
	}
	*out = ca;
	return 0;
}
