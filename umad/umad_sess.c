// SPDX-License-Identifier: MIT
/*
 * umad's calls of the session protocol (proto/sess_proto.h), made through
 * the session client it shares with verbs (sessc/): CA_QUERY, REGISTER and
 * UNREGISTER (connect, one request, one reply) and port streams (OPEN).
 * Also the table of open ports, which umad's API names by fd alone, hence
 * process-wide state behind a lock.
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

#include "sessc.h"
#include "umad_int.h"

/* What the library says on stderr is signed "libibumad (ibemu)". */
static struct ibemu_sessc sessc = IBEMU_SESSC_INIT(
	"libibumad", "this process is not attached to an emulated fabric: "
		     "run it under 'ibemu exec'");

void ibemu__umad_warn(const char *func, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ibwarn: [%d] %s: %s\n", (int)getpid(), func, msg);
}

int ibemu__umad_attached(void)
{
	return ibemu_sessc_attached(&sessc);
}

int ibemu__umad_runtime_dir(char *dir, size_t len)
{
	const char *path = ibemu_sessc_socket_path();
	const char *slash;
	int n;

	if (!path)
		return -ENODEV;
	slash = strrchr(path, '/');
	if (!slash)
		n = snprintf(dir, len, ".");
	else
		n = snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ibemu__umad_query(struct ibemu_sess_ca **out)
{
	return ibemu_sessc_ca_query(&sessc, out);
}

int ibemu__umad_open(unsigned port, struct ibemu_sess_opened *out)
{
	struct ibemu_sessc_refusal r;
	struct ibemu_sess_bind b;
	size_t got;
	int fd, ret, sndbuf;

	ret = ibemu_sessc_bind_fill(&sessc, &b, getenv(IBEMU_SESS_ENV_HOST),
				    port);
	if (ret)
		return ret;
	fd = ibemu_sessc_connect(&sessc);
	if (fd < 0)
		return fd;
	ret = ibemu_sessc_exchange(fd, IBEMU_SESS_OPEN, &b, sizeof(b), NULL, 0,
				   out, sizeof(*out), &got, &r);
	if (!ret && got != sizeof(*out))
		ret = -EPROTO;
	if (ret) {
		/* A port that does not exist is the caller's business
		 * (rdma-core returns -EINVAL quietly); the rest is not. */
		if (ret == -EINVAL)
			UMAD_DEBUG("open: %s", r.why);
		else
			ibemu_sessc_explain(&sessc, ret, &r);
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
	struct ibemu_sessc_refusal no;
	size_t got;
	int ret;

	ret = ibemu_sessc_call(&sessc, IBEMU_SESS_REGISTER, r, sizeof(*r),
			       &reply, sizeof(reply), &got, &no);
	if (!ret &&
	    (got != sizeof(reply) || reply.agent_id >= UMAD_CA_MAX_AGENTS))
		ret = -EPROTO;
	if (ret) {
		UMAD_DEBUG("register failed: %s",
			   no.why[0] ? no.why : strerror(-ret));
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
	struct ibemu_sessc_refusal no;
	size_t got;
	int ret;

	ret = ibemu_sessc_call(&sessc, IBEMU_SESS_UNREGISTER, &u, sizeof(u),
			       NULL, 0, &got, &no);
	if (ret)
		UMAD_DEBUG("unregister failed: %s",
			   no.why[0] ? no.why : strerror(-ret));
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
	uint64_t seen;	  /* RECVs and TICKs taken off the stream */
	uint64_t wait_id; /* of the last WAIT */
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
	ports[fd].seen = 0;
	ports[fd].wait_id = 0;
	pthread_mutex_unlock(&ports_lock);
	return 0;
}

void ibemu__umad_port_took(int fd)
{
	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open)
		ports[fd].seen++;
	pthread_mutex_unlock(&ports_lock);
}

int ibemu__umad_port_wait(int fd, uint64_t *seen, uint64_t *wait_id)
{
	int ret = -EBADF;

	pthread_mutex_lock(&ports_lock);
	if (fd >= 0 && (size_t)fd < nports && ports[fd].open) {
		*seen = ports[fd].seen;
		*wait_id = ++ports[fd].wait_id;
		ret = 0;
	}
	pthread_mutex_unlock(&ports_lock);
	return ret;
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
