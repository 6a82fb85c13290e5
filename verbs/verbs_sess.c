// SPDX-License-Identifier: MIT
/*
 * The verbs library's side of the session protocol (proto/sess_proto.h):
 * calls to the daemon of the fabric this process is attached to, over the
 * sess.sock that 'ibemu exec' names in $IBEMU_SESSION_SOCKET. Each call
 * connects, sends one request, reads one reply and closes, so a query sees
 * the port as the SM left it at that moment, as sysfs would.
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

#include "verbs_int.h"

/* A daemon answers calls at once; this only bounds a hung one. */
#define CALL_TIMEOUT_S 30

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
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = CALL_TIMEOUT_S};
	int fd, ret;

	if (!path || !*path)
		return -ENODEV;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		say_once("%s is too long for a socket path",
			 IBEMU_SESS_ENV_SOCKET);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		say_once("cannot reach the fabric daemon at %s: %s (is the "
			 "fabric up?)",
			 path, strerror(errno));
		close(fd);
		return ret;
	}
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

int ibemu__verbs_port_query(const char *host, unsigned port,
			    struct ibemu_sess_port_attr *out)
{
	struct ibemu_sess_bind b;
	char why[256];
	size_t got = 0;
	int ret;

	ret = bind_fill(&b, host, port);
	if (ret)
		return ret;
	ret = sess_call(IBEMU_SESS_PORT_QUERY, &b, sizeof(b), out, sizeof(*out),
			&got, why, sizeof(why));
	if (!ret && (got != sizeof(*out) || out->port_num != port ||
		     out->npkeys > IBEMU_SESS_PORT_PKEYS))
		ret = -EPROTO;
	/* A port that does not exist is the caller's mistake (EINVAL, as
	 * the kernel answers); the rest is the fabric's. */
	if (ret && ret != -EINVAL && ret != -ENODEV)
		say_once("port %u of %s: %s", port, host,
			 *why ? why : strerror(-ret));
	return ret;
}
