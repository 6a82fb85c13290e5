// SPDX-License-Identifier: MIT
/*
 * The client side of the session protocol (proto/sess_proto.h): calls
 * (CA_QUERY, REGISTER, UNREGISTER: connect, one request, one reply) and
 * port streams (OPEN), over the sess.sock that 'ibemu exec' names in
 * $IBEMU_SESSION_SOCKET. Also the table of open ports, which umad's API
 * names by fd alone, hence process-wide state behind a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sess_connect.h"
#include "umad_int.h"

/* A daemon answers calls at once; this only bounds a hung one. */

void ibemu__umad_warn(const char *func, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ibwarn: [%d] %s: %s\n", (int)getpid(), func, msg);
}

/* Says what keeps this process off the fabric, once: tools call the
 * library many times and one line is enough. */
static void say_once(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void say_once(const char *fmt, ...)
{
	static int said;
	va_list ap;

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	fputs("libibumad (ibemu): ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ibemu__umad_attached(void)
{
	const char *path = getenv(IBEMU_SESS_ENV_SOCKET);

	if (path && *path)
		return 1;
	say_once("this process is not attached to an emulated "
		 "fabric: run it under 'ibemu exec'");
	return 0;
}

int ibemu__umad_runtime_dir(char *dir, size_t len)
{
	const char *path = getenv(IBEMU_SESS_ENV_SOCKET);
	const char *slash;
	int n;

	if (!path || !*path)
		return -ENODEV;
	slash = strrchr(path, '/');
	if (!slash)
		n = snprintf(dir, len, ".");
	else
		n = snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int sess_connect(void)
{
	const char *path = getenv(IBEMU_SESS_ENV_SOCKET);
	int fd;

	if (!ibemu__umad_attached())
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
 * Sends one request on 'fd' and reads its reply into 'reply' (at most
 * 'cap' bytes, *got set). Returns 0, the daemon's -errno (its message in
 * 'why'), or -errno of the exchange.
 */
static int sess_exchange(int fd, uint16_t type, const void *req, size_t len,
			 void *reply, size_t cap, size_t *got, char *why,
			 size_t whylen)
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
	unsigned resets = 0;
	ssize_t n;

	*why = '\0';
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* A daemon out of file descriptors answers the connection with an
	 * ERROR and closes it before our request: its reason is still there
	 * to be read. */
	if (n < 0 && errno != EPIPE && errno != ECONNRESET)
		return -errno;
	/* If it closed with our request unread, the first receive reports
	 * the reset; the ERROR comes next. */
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
		snprintf(why, whylen, "%.*s", (int)h.len, buf + sizeof(h));
		return h.status < 0 ? h.status : -EIO;
	}
	if (h.type != type || h.len > cap)
		return -EPROTO;
	if (h.len)
		memcpy(reply, buf + sizeof(h), h.len);
	*got = h.len;
	return 0;
}

/* One call: connect, ask, read the answer, close. */
static int sess_call(uint16_t type, const void *req, size_t len, void *reply,
		     size_t cap, size_t *got, char *why, size_t whylen)
{
	int fd = sess_connect();
	int ret;

	*why = '\0';
	if (fd < 0)
		return fd;
	ret = sess_exchange(fd, type, req, len, reply, cap, got, why, whylen);
	close(fd);
	return ret;
}

static int bind_fill(struct ibemu_sess_bind *b, unsigned port)
{
	const char *host = getenv(IBEMU_SESS_ENV_HOST);

	memset(b, 0, sizeof(*b));
	if (host && strlen(host) >= sizeof(b->host)) {
		say_once("%s names no node: it is longer than "
			 "%zu characters",
			 IBEMU_SESS_ENV_HOST, sizeof(b->host) - 1);
		return -EINVAL;
	}
	if (host)
		memcpy(b->host, host, strlen(host) + 1);
	b->port = port;
	return 0;
}

static void explain(int ret, const char *why)
{
	if (*why)
		say_once("%s", why);
	else if (ret != -ENODEV)
		say_once("the fabric daemon did not answer: %s",
			 strerror(-ret));
}

int ibemu__umad_query(struct ibemu_sess_ca **out)
{
	size_t cap = IBEMU_SESS_MAX_MSG - sizeof(struct ibemu_sess_hdr);
	struct ibemu_sess_bind b;
	struct ibemu_sess_ca *ca;
	char why[256];
	size_t got;
	int ret;

	ret = bind_fill(&b, 0);
	if (ret)
		return ret;
	ca = malloc(cap);
	if (!ca)
		return -ENOMEM;
	ret = sess_call(IBEMU_SESS_CA_QUERY, &b, sizeof(b), ca, cap, &got, why,
			sizeof(why));
	if (!ret && (got < sizeof(*ca) || ca->nports > IBEMU_SESS_MAX_PORTS ||
		     got != sizeof(*ca) + ca->nports * sizeof(ca->ports[0])))
		ret = -EPROTO;
	if (ret) {
		explain(ret, why);
		free(ca);
		return ret;
	}
	*out = ca;
	return 0;
}

int ibemu__umad_open(unsigned port, struct ibemu_sess_opened *out)
{
	struct ibemu_sess_bind b;
	char why[256];
	size_t got;
	int fd, ret, sndbuf;

	ret = bind_fill(&b, port);
	if (ret)
		return ret;
	fd = sess_connect();
	if (fd < 0)
		return fd;
	ret = sess_exchange(fd, IBEMU_SESS_OPEN, &b, sizeof(b), out,
			    sizeof(*out), &got, why, sizeof(why));
	if (!ret && got != sizeof(*out))
		ret = -EPROTO;
	if (ret) {
		/* A port that does not exist is the caller's business
		 * (rdma-core returns -EINVAL quietly); the rest is not. */
		if (ret == -EINVAL)
			UMAD_DEBUG("open: %s", why);
		else
			explain(ret, why);
		close(fd);
		return ret;
	}
	/* rdma-core opens the umad device O_NONBLOCK; the stream behaves
	 * alike, and a receive waits in poll() only. A SEND of the largest
	 * MAD must fit the socket's send buffer (see sess_proto.h). */
	sndbuf = IBEMU_SESS_STREAM_MAX_MSG;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int ibemu__umad_register(struct ibemu_sess_register *r)
{
	struct ibemu_sess_register reply;
	char why[256];
	size_t got;
	int ret;

	ret = sess_call(IBEMU_SESS_REGISTER, r, sizeof(*r), &reply,
			sizeof(reply), &got, why, sizeof(why));
	if (!ret &&
	    (got != sizeof(reply) || reply.agent_id >= UMAD_CA_MAX_AGENTS))
		ret = -EPROTO;
	if (ret) {
		UMAD_DEBUG("register failed: %s", *why ? why : strerror(-ret));
		return ret;
	}
	r->agent_id = reply.agent_id;
	return 0;
}

int ibemu__umad_unregister(uint64_t session, uint32_t agent_id)
{
	struct ibemu_sess_unregister u = {
		.session = session,
		.agent_id = agent_id,
	};
	char why[256];
	size_t got;
	int ret;

	ret = sess_call(IBEMU_SESS_UNREGISTER, &u, sizeof(u), NULL, 0, &got,
			why, sizeof(why));
	if (ret)
		UMAD_DEBUG("unregister failed: %s",
			   *why ? why : strerror(-ret));
	return ret;
}

/* --- open ports ----------------------------------------------------- */

struct port_slot {
	uint64_t session;
	uint32_t agents; /* bit i: agent id i is registered */
	uint32_t rmpp;	 /* bit i: ... and the kernel does RMPP for it */
	int open;
	unsigned flags; /* IBEMU_UMAD_PORT_* */
	void *stash;	/* a RECV too long for the last umad_recv's buffer */
	size_t stash_len;
};

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static struct port_slot *ports; /* indexed by fd */
static size_t nports;

int ibemu__umad_port_add(int fd, uint64_t session, unsigned flags)
{
	struct port_slot *p;
	size_t n;

	pthread_mutex_lock(&ports_lock);
	if ((size_t)fd >= nports) {
		n = (size_t)fd + 16;
		p = realloc(ports, n * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&ports_lock);
			return -ENOMEM;
		}
		memset(p + nports, 0, (n - nports) * sizeof(*p));
		ports = p;
		nports = n;
	}
	ports[fd].session = session;
	ports[fd].agents = 0;
	ports[fd].rmpp = 0;
	ports[fd].open = 1;
	ports[fd].flags = flags;
	free(ports[fd].stash);
	ports[fd].stash = NULL;
	pthread_mutex_unlock(&ports_lock);
	return 0;
}

void ibemu__umad_port_del(int fd)
{
	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports) {
		free(ports[fd].stash);
		memset(&ports[fd], 0, sizeof(ports[fd]));
	}
	pthread_mutex_unlock(&ports_lock);
}

int ibemu__umad_port_session(int fd, uint64_t *session)
{
	int ret = -EBADF;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open) {
		*session = ports[fd].session;
		ret = 0;
	}
	pthread_mutex_unlock(&ports_lock);
	return ret;
}

void ibemu__umad_port_set_agent(int fd, uint32_t agent_id, int registered,
				int rmpp)
{
	uint32_t bit;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open &&
	    agent_id < UMAD_CA_MAX_AGENTS) {
		bit = 1u << agent_id;
		ports[fd].agents = registered ? ports[fd].agents | bit
					      : ports[fd].agents & ~bit;
		ports[fd].rmpp = registered && rmpp ? ports[fd].rmpp | bit
						    : ports[fd].rmpp & ~bit;
	}
	pthread_mutex_unlock(&ports_lock);
}

/* Bit 'agent_id' of the agents (or, with 'rmpp', RMPP) word of port 'fd'. */
static int port_agent_bit(int fd, uint32_t agent_id, int rmpp)
{
	uint32_t word = 0;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open)
		word = rmpp ? ports[fd].rmpp : ports[fd].agents;
	pthread_mutex_unlock(&ports_lock);
	return agent_id < UMAD_CA_MAX_AGENTS && (word >> agent_id) & 1;
}

int ibemu__umad_port_has_agent(int fd, uint32_t agent_id)
{
	return port_agent_bit(fd, agent_id, 0);
}

int ibemu__umad_port_agent_rmpp(int fd, uint32_t agent_id)
{
	return port_agent_bit(fd, agent_id, 1);
}

unsigned ibemu__umad_port_flags(int fd)
{
	unsigned ret = 0;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open)
		ret = ports[fd].flags;
	pthread_mutex_unlock(&ports_lock);
	return ret;
}

int ibemu__umad_port_stash(int fd, void *msg, size_t len)
{
	int ret = -EBADF;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open &&
	    !ports[fd].stash) {
		ports[fd].stash = msg;
		ports[fd].stash_len = len;
		ret = 0;
	}
	pthread_mutex_unlock(&ports_lock);
	return ret;
}

void *ibemu__umad_port_unstash(int fd, size_t *len)
{
	void *msg = NULL;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].stash) {
		msg = ports[fd].stash;
		*len = ports[fd].stash_len;
		ports[fd].stash = NULL;
	}
	pthread_mutex_unlock(&ports_lock);
	return msg;
}

int ibemu__umad_port_stashed(int fd)
{
	int ret;

	pthread_mutex_lock(&ports_lock);
	ret = fd >= 0 && (size_t)fd < nports && ports[fd].stash;
	pthread_mutex_unlock(&ports_lock);
	return ret;
}
