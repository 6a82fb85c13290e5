// SPDX-License-Identifier: MIT
/*
 * libibumad's port and MAD API over ibemu's session protocol: a port is a
 * port stream whose fd polls readable when a MAD waits, agents register
 * through the daemon as they would through ib_umad's ioctls, and MADs go
 * out and come in as SEND and RECV messages, converted to and from
 * struct ib_user_mad. Return values and errno follow rdma-core's umad.c;
 * the conditions that make them follow the kernel's ib_umad.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "umad_int.h"

static void recv_forget(int fd);
static void send_flush(void);

/* A RECV or SEND of one MAD, header included: a slot of the batches of
 * reads and writes below. */
#define SLOT                                                             \
	(sizeof(struct ibemu_sess_hdr) + sizeof(struct ibemu_sess_mad) + \
	 IBEMU_MAD_LEN)
#define BATCH 32
/* SENDs queued at most (a PACK holds them all): an SM's whole window. */
#define SEND_BATCH 256

/* What a stream's next message is, as recv_next() says. */
#define NEXT_RECV 0 /* a RECV waits (or a stashed MAD) */
/* A TICK, taken (its wait id in *tick): no agent id, no -errno. */
#define NEXT_TICK (-1000000)

/* OpenFabrics' OUI, which rdma-core's umad_register() passes along. */
#define IB_OPENIB_OUI 0x001405

static int debug_level;

int ibemu__umad_debug_level(void)
{
	return __atomic_load_n(&debug_level, __ATOMIC_RELAXED);
}

UMAD_EXPORT int umad_debug(int level)
{
	if (level >= 0)
		__atomic_store_n(&debug_level, level, __ATOMIC_RELAXED);
	return ibemu__umad_debug_level();
}

UMAD_EXPORT int umad_init(void)
{
	/* rdma-core 44 checks nothing here either; say once if unattached. */
	ibemu__umad_attached();
	return 0;
}

UMAD_EXPORT int umad_done(void)
{
	return 0;
}

/* --- ports ---------------------------------------------------------- */

UMAD_EXPORT int umad_open_port(const char *ca_name, int portnum)
{
	struct ibemu_sess_opened opened;
	struct ibemu_sess_ca *ca;
	const char *defer = getenv(IBEMU_UMAD_DEFER_ENV);
	int fd, ret, peek_off = 0;
	unsigned flags = 0;
	unsigned i;

	/* rdma-core: a named CA with a port has no umad device (-EINVAL);
	 * a CA that cannot be resolved is -ENODEV. */
	ret = ibemu__umad_ca_named(ca_name, &ca);
	if (ret == -ENOENT)
		return portnum ? -EINVAL : -ENODEV;
	if (ret && portnum)
		ca = NULL; /* OPEN says why it fails */
	else if (ret)
		return -ENODEV;
	if (portnum < 0) {
		free(ca);
		return -EINVAL;
	}
	if (!portnum) {
		/* Resolve port 0 as rdma-core does: Active, up, enabled. */
		for (i = 0; i < ca->nports && !portnum; i++)
			if (ca->ports[i].state == 4)
				portnum = (int)i + 1;
		for (i = 0; i < ca->nports && !portnum; i++)
			if (ca->ports[i].phys_state == 5)
				portnum = (int)i + 1;
		for (i = 0; i < ca->nports && !portnum; i++)
			if (ca->ports[i].phys_state != 3)
				portnum = (int)i + 1;
		if (!portnum) {
			free(ca);
			return -ENODEV;
		}
	}
	free(ca);
	fd = ibemu__umad_open((unsigned)portnum, &opened);
	if (fd < 0)
		return fd == -EINVAL ? -EINVAL : -ENODEV;
	ibemu__umad_clock_at_least(opened.now_ps);
	/* Batched reads (recv_peek) walk the socket's queue by a peek
	 * offset; a kernel without one gets one read per MAD. A port that
	 * defers its SENDs sends them in PACKs, and reads the PACKs of RECVs
	 * the daemon answers with (recv_packed) instead. */
	if (defer && !strcmp(defer, "1"))
		flags |= IBEMU_UMAD_PORT_DEFERS;
	else if (!setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &peek_off,
			     sizeof(peek_off)))
		flags |= IBEMU_UMAD_PORT_PEEKS;
	ret = ibemu__umad_port_add(fd, opened.session, flags);
	if (ret) {
		close(fd);
		return ret;
	}
	UMAD_DEBUG("opened %s port %d fd %d", opened.host, portnum, fd);
	return fd;
}

UMAD_EXPORT int umad_close_port(int fd)
{
	send_flush();
	recv_forget(fd);
	ibemu__umad_port_del(fd);
	close(fd);
	return 0;
}

UMAD_EXPORT int umad_get_fd(int fd)
{
	return fd;
}

/* --- agents --------------------------------------------------------- */

static int do_register(int fd, struct ibemu_sess_register *r)
{
	int ret = ibemu__umad_port_session(fd, &r->session);
	/* ib_mad_kernel_rmpp_agent(): RMPP done for it, not by it. */
	int rmpp = r->rmpp_version && !(r->flags & UMAD_USER_RMPP);

	if (!ret)
		ret = ibemu__umad_register(r);
	if (!ret)
		ibemu__umad_port_set_agent(fd, r->agent_id, 1, rmpp);
	return ret;
}

static void mask_from_longs(uint64_t mask[2], const long *method_mask)
{
	if (method_mask)
		memcpy(mask, method_mask, 2 * sizeof(uint64_t));
	else
		mask[0] = mask[1] = 0;
}

UMAD_EXPORT int umad_register(int fd, int mgmt_class, int mgmt_version,
			      uint8_t rmpp_version,
			      long method_mask[16 / sizeof(long)])
{
	struct ibemu_sess_register r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.mgmt_class = (uint8_t)mgmt_class;
	r.class_version = (uint8_t)mgmt_version;
	r.rmpp_version = rmpp_version;
	r.oui = IB_OPENIB_OUI;
	mask_from_longs(r.method_mask, method_mask);
	ret = do_register(fd, &r);
	if (ret) {
		/* rdma-core: errno from the ioctl, -EPERM returned. */
		errno = -ret;
		return -EPERM;
	}
	return (int)r.agent_id;
}

UMAD_EXPORT int umad_register_oui(int fd, int mgmt_class, uint8_t rmpp_version,
				  uint8_t oui[3],
				  long method_mask[16 / sizeof(long)])
{
	struct ibemu_sess_register r;
	int ret;

	if (mgmt_class < IBEMU_MAD_CLASS_VENDOR2_FIRST ||
	    mgmt_class > IBEMU_MAD_CLASS_VENDOR2_LAST)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.mgmt_class = (uint8_t)mgmt_class;
	r.class_version = 1;
	r.rmpp_version = rmpp_version;
	r.oui = (uint32_t)oui[0] << 16 | (uint32_t)oui[1] << 8 | oui[2];
	mask_from_longs(r.method_mask, method_mask);
	ret = do_register(fd, &r);
	if (ret) {
		errno = -ret;
		return -EPERM;
	}
	return (int)r.agent_id;
}

/* Unlike the others, umad_register2() returns a positive errno. */
UMAD_EXPORT int umad_register2(int port_fd, struct umad_reg_attr *attr,
			       uint32_t *agent_id)
{
	struct ibemu_sess_register r;
	int ret;

	if (!attr || !agent_id)
		return EINVAL;
	if (ibemu_mad_class_is_vendor2(attr->mgmt_class) &&
	    (!(attr->oui & 0x00ffffff) || (attr->oui & 0xff000000)))
		return EINVAL;
	memset(&r, 0, sizeof(r));
	r.mgmt_class = attr->mgmt_class;
	r.class_version = attr->mgmt_class_version;
	r.flags = attr->flags;
	r.method_mask[0] = attr->method_mask[0];
	r.method_mask[1] = attr->method_mask[1];
	r.oui = attr->oui;
	r.rmpp_version = attr->rmpp_version;
	ret = do_register(port_fd, &r);
	if (!ret) {
		*agent_id = r.agent_id;
		return 0;
	}
	/* rdma-core clears the flags when the kernel calls them invalid. */
	if (ret == -EINVAL)
		attr->flags = 0;
	errno = -ret;
	return -ret;
}

UMAD_EXPORT int umad_unregister(int fd, int agentid)
{
	uint64_t session;
	int ret;

	/* Queued SENDs of the agent go first, as they would have. */
	send_flush();
	ret = ibemu__umad_port_session(fd, &session);
	if (!ret && (agentid < 0 || agentid >= UMAD_CA_MAX_AGENTS))
		ret = -EINVAL;
	if (!ret)
		ret = ibemu__umad_unregister(session, (uint32_t)agentid);
	if (ret) {
		/* The ioctl convention: -1 and errno. */
		errno = -ret;
		return -1;
	}
	ibemu__umad_port_set_agent(fd, (uint32_t)agentid, 0, 0);
	return 0;
}

/* --- MADs ----------------------------------------------------------- */

UMAD_EXPORT size_t umad_size(void)
{
	return sizeof(struct ib_user_mad);
}

UMAD_EXPORT void *umad_get_mad(void *umad)
{
	return ((struct ib_user_mad *)umad)->data;
}

UMAD_EXPORT int umad_status(void *umad)
{
	return (int)((struct ib_user_mad *)umad)->status;
}

UMAD_EXPORT ib_mad_addr_t *umad_get_mad_addr(void *umad)
{
	return &((struct ib_user_mad *)umad)->addr;
}

UMAD_EXPORT int umad_set_grh(void *umad, void *mad_addr)
{
	struct ib_user_mad *mad = umad;
	struct ib_mad_addr *addr = mad_addr;

	if (!addr) {
		mad->addr.grh_present = 0;
		return 0;
	}
	mad->addr.grh_present = 1;
	memcpy(mad->addr.gid, addr->gid, sizeof(mad->addr.gid));
	/* umad_set_grh() takes the flow label in host order. */
	mad->addr.flow_label = htobe32((uint32_t)addr->flow_label);
	mad->addr.hop_limit = addr->hop_limit;
	mad->addr.traffic_class = addr->traffic_class;
	return 0;
}

UMAD_EXPORT int umad_set_pkey(void *umad, int pkey_index)
{
	((struct ib_user_mad *)umad)->addr.pkey_index = (uint16_t)pkey_index;
	return 0;
}

UMAD_EXPORT int umad_get_pkey(void *umad)
{
	return ((struct ib_user_mad *)umad)->addr.pkey_index;
}

UMAD_EXPORT int umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey)
{
	struct ib_user_mad *mad = umad;

	mad->addr.qpn = htobe32((uint32_t)dqp);
	mad->addr.lid = htobe16((uint16_t)dlid);
	mad->addr.qkey = htobe32((uint32_t)qkey);
	mad->addr.sl = (uint8_t)sl;
	return 0;
}

UMAD_EXPORT int umad_set_addr_net(void *umad, __be16 dlid, __be32 dqp, int sl,
				  __be32 qkey)
{
	struct ib_user_mad *mad = umad;

	mad->addr.qpn = dqp;
	mad->addr.lid = dlid;
	mad->addr.qkey = qkey;
	mad->addr.sl = (uint8_t)sl;
	return 0;
}

/* The checks ib_umad_write() makes before a MAD leaves: -errno or 0. */
static int send_check(int fd, int agentid, const uint8_t *mad, int length)
{
	uint64_t session;

	if (length < UMAD_MIN_MAD_LEN || length > (int)IBEMU_SESS_MAD_MAX)
		return -EINVAL;
	if (agentid < 0 || agentid >= UMAD_CA_MAX_AGENTS)
		return -EINVAL;
	if (ibemu__umad_port_session(fd, &session))
		return -EBADF;
	if (!ibemu__umad_port_has_agent(fd, (uint32_t)agentid))
		return -EIO;
	/*
	 * ib_create_send_mad(): only an RMPP-active MAD (an agent the kernel
	 * does RMPP for, a class with RMPP, the Active flag of the RMPP
	 * header, IBA 13.6.2.1) may be longer than one MAD.
	 */
	if (length > IBEMU_MAD_LEN &&
	    !(ibemu__umad_port_agent_rmpp(fd, (uint32_t)agentid) &&
	      ibemu_rmpp_is_active(mad)))
		return -EINVAL;
	return 0;
}

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = events};
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	return n == 0 ? -ETIMEDOUT : -EIO;
}

/*
 * Blocks until the stream has something to read. A signal ends the wait
 * as it ends rdma-core's poll(): -EIO with errno EINTR (a program's
 * handler may want to stop; umad_recv() is not restarted).
 */
static int wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, -1);

	if (n == 1)
		return 0;
	return -EIO;
}

/* Sends one message whole; 0, or -1 and errno. */
static int send_all(int fd, const void *msg, size_t len)
{
	ssize_t n;

	/* The kernel always takes a MAD; a full socket only waits. */
	for (;;) {
		n = send(fd, msg, len, MSG_NOSIGNAL);
		if (n >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
		if (errno == EAGAIN && wait_fd(fd, POLLOUT, -1))
			break;
	}
	return n == (ssize_t)len ? 0 : -1;
}

/*
 * Deferred SENDs, for a process that asks for them by setting
 * IBEMU_UMAD_DEFER_ENV to 1 when it opens a port (ibemu-sm does): umad_send
 * queues a SEND of one MAD and returns, and the queue goes out in one
 * sendmmsg when it is full, when umad_recv is about to read the socket or
 * to wait, at umad_poll, before umad_unregister and umad_close_port, and at
 * exit; at once while a thread waits in umad_recv. Such a process must
 * receive or poll after it sends, as an SM's loop does; in return one
 * system call carries many MADs (a call costs about as much as the
 * daemon's handling of a MAD). One queue, of one port, at a time.
 */
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t send_once = PTHREAD_ONCE_INIT;
static int recv_waiting; /* threads waiting in umad_recv */

static struct {
	int fd;	   /* the port queued for, or -1 */
	pid_t pid; /* the process that queued (a forked child sends none) */
	unsigned n;
	uint32_t len[SEND_BATCH];
	uint8_t slot[SEND_BATCH][SLOT] __attribute__((aligned(8)));
} sendq = {.fd = -1};

/* Whether the queue may go as one PACK (sess_proto.h). */
static int send_packable(void)
{
	size_t bytes = 0;
	unsigned i;

	if (sendq.n < 2)
		return 0;
	for (i = 0; i < sendq.n; i++) {
		if (sendq.len[i] % IBEMU_SESS_PACK_ALIGN)
			return 0;
		bytes += sendq.len[i];
	}
	return bytes <= IBEMU_SESS_PACK_MAX;
}

/* Sends the queue as one PACK; 0, or -1 and errno. */
static int send_pack_locked(void)
{
	struct ibemu_sess_hdr h = {
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = IBEMU_SESS_PACK,
	};
	struct iovec iov[SEND_BATCH + 1];
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = sendq.n + 1};
	unsigned i;
	ssize_t n;

	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof(h);
	for (i = 0; i < sendq.n; i++) {
		iov[i + 1].iov_base = sendq.slot[i];
		iov[i + 1].iov_len = sendq.len[i];
		h.len += sendq.len[i];
	}
	/* The kernel always takes a MAD; a full socket only waits. */
	for (;;) {
		n = sendmsg(sendq.fd, &mh, MSG_NOSIGNAL);
		if (n >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
		if (errno == EAGAIN && wait_fd(sendq.fd, POLLOUT, -1))
			break;
	}
	return n == (ssize_t)(sizeof(h) + h.len) ? 0 : -1;
}

/* Sends the queue one message each; 0, or -1 and errno. */
static int send_each_locked(void)
{
	struct mmsghdr mm[SEND_BATCH];
	struct iovec iov[SEND_BATCH];
	unsigned i, done = 0;
	int n;

	memset(mm, 0, sizeof(mm));
	for (i = 0; i < sendq.n; i++) {
		iov[i].iov_base = sendq.slot[i];
		iov[i].iov_len = sendq.len[i];
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	/* The kernel always takes a MAD; a full socket only waits. */
	while (done < sendq.n) {
		n = sendmmsg(sendq.fd, mm + done, sendq.n - done, MSG_NOSIGNAL);
		if (n > 0) {
			done += (unsigned)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && !wait_fd(sendq.fd, POLLOUT, -1))
			continue;
		if (!n)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* Sends the queue; 0, or -1 and errno (the port is gone; MADs lost). */
static int send_flush_locked(void)
{
	int ret = send_packable() ? send_pack_locked() : send_each_locked();

	sendq.fd = -1;
	sendq.n = 0;
	return ret;
}

static void send_flush(void)
{
	pthread_mutex_lock(&send_lock);
	if (sendq.fd >= 0)
		send_flush_locked();
	pthread_mutex_unlock(&send_lock);
}

static void send_flush_exit(void)
{
	pthread_mutex_lock(&send_lock);
	if (sendq.fd >= 0 && sendq.pid == getpid())
		send_flush_locked();
	pthread_mutex_unlock(&send_lock);
}

static void send_flush_at_exit(void)
{
	atexit(send_flush_exit);
}

/* Queues SEND 'head' and 'data' ('len' bytes) on 'fd': 0, or -1 and errno. */
static int send_defer(int fd, const void *head, size_t hlen, const void *data,
		      size_t len)
{
	int ret = 0;

	pthread_once(&send_once, send_flush_at_exit);
	pthread_mutex_lock(&send_lock);
	/* Another port's MADs go first; their failure is that port's. */
	if (sendq.fd >= 0 && sendq.fd != fd)
		send_flush_locked();
	if (sendq.fd < 0)
		sendq.pid = getpid();
	sendq.fd = fd;
	memcpy(sendq.slot[sendq.n], head, hlen);
	if (len)
		memcpy(sendq.slot[sendq.n] + hlen, data, len);
	sendq.len[sendq.n++] = (uint32_t)(hlen + len);
	if (sendq.n == SEND_BATCH ||
	    __atomic_load_n(&recv_waiting, __ATOMIC_SEQ_CST))
		ret = send_flush_locked();
	pthread_mutex_unlock(&send_lock);
	return ret;
}

UMAD_EXPORT int umad_send(int fd, int agentid, void *umad, int length,
			  int timeout_ms, int retries)
{
	struct ib_user_mad *mad = umad;
	struct {
		struct ibemu_sess_hdr h;
		struct ibemu_sess_mad m;
	} head;
	uint8_t small[sizeof(head) + IBEMU_MAD_LEN] __attribute__((aligned(8)));
	uint8_t *msg = small;
	size_t total;
	int ret;

	errno = 0;
	mad->timeout_ms = (uint32_t)timeout_ms;
	mad->retries = (uint32_t)retries;
	mad->agent_id = (uint32_t)agentid;
	if (ibemu__umad_debug_level() > 1)
		umad_dump(mad);
	ret = send_check(fd, agentid, mad->data, length);
	if (ret) {
		/* rdma-core: the write's errno, and -EIO. */
		errno = -ret;
		return -EIO;
	}
	memset(&head, 0, sizeof(head));
	head.h.magic = IBEMU_SESS_MAGIC;
	head.h.version = IBEMU_SESS_VERSION;
	head.h.type = IBEMU_SESS_SEND;
	head.h.len = (uint32_t)(sizeof(head.m) + (size_t)length);
	head.m.agent_id = mad->agent_id;
	head.m.timeout_ms = mad->timeout_ms;
	head.m.retries = mad->retries;
	head.m.addr.qpn = be32toh(mad->addr.qpn);
	head.m.addr.qkey = be32toh(mad->addr.qkey);
	head.m.addr.lid = be16toh(mad->addr.lid);
	head.m.addr.pkey_index = mad->addr.pkey_index;
	head.m.addr.sl = mad->addr.sl;
	head.m.addr.path_bits = mad->addr.path_bits;
	head.m.addr.grh_present = mad->addr.grh_present;
	head.m.addr.gid_index = mad->addr.gid_index;
	head.m.addr.hop_limit = mad->addr.hop_limit;
	head.m.addr.traffic_class = mad->addr.traffic_class;
	head.m.addr.flow_label = be32toh(mad->addr.flow_label);
	memcpy(head.m.addr.gid, mad->addr.gid, sizeof(head.m.addr.gid));
	head.m.len = (uint32_t)length;
	head.m.vt_ps = ibemu__umad_stamp();
	/*
	 * One copy first: callers such as OpenSM free the MAD as soon as its
	 * answer comes back, which may be before this call returns; nothing
	 * here may read their buffer once it is on its way (ASan's sendmsg
	 * checks the buffer after the call). RMPP transfers, up to 256 KiB,
	 * are copied to the heap.
	 */
	total = sizeof(head) + (size_t)length;
	if (ibemu__umad_port_flags(fd) & IBEMU_UMAD_PORT_DEFERS) {
		if (total <= SLOT) {
			ret = send_defer(fd, &head, sizeof(head), mad->data,
					 (size_t)length);
			goto out;
		}
		/* A longer one (RMPP) goes after those queued before it. */
		send_flush();
	}
	if (total > sizeof(small)) {
		msg = malloc(total);
		if (!msg) {
			errno = ENOMEM;
			return -EIO;
		}
	}
	memcpy(msg, &head, sizeof(head));
	memcpy(msg + sizeof(head), mad->data, (size_t)length);
	ret = send_all(fd, msg, total);
	if (msg != small) {
		/* free() must not clobber the send's errno. */
		int err = errno;

		free(msg);
		errno = err;
	}
out:
	if (!ret)
		return 0;
	UMAD_DEBUG("send on fd %d failed: %m", fd);
	if (!errno)
		errno = EIO;
	return -EIO;
}

/*
 * Says WAIT on 'fd' before the calling thread blocks there (sess_proto.h):
 * the process waits under the time rule until a RECV or a TICK reaches
 * it, and with a timeout ('timeout_ms' >= 0) the daemon sends TICK
 * *wait_id once that much virtual time has passed. 0, or -errno.
 */
static int say_wait(int fd, int timeout_ms, uint64_t *wait_id)
{
	struct {
		struct ibemu_sess_hdr h;
		struct ibemu_sess_wait w;
	} msg;
	int ret;

	memset(&msg, 0, sizeof(msg));
	msg.h.magic = IBEMU_SESS_MAGIC;
	msg.h.version = IBEMU_SESS_VERSION;
	msg.h.type = IBEMU_SESS_WAIT;
	msg.h.len = sizeof(msg.w);
	if (ibemu__umad_port_wait(fd, &msg.w.seen, &msg.w.wait_id))
		return -EBADF;
	msg.w.timeout_ms =
		timeout_ms < 0 ? IBEMU_SESS_WAIT_FOREVER : (uint32_t)timeout_ms;
	*wait_id = msg.w.wait_id;
	/* After the SENDs queued before it, in the same system call. */
	if (ibemu__umad_port_flags(fd) & IBEMU_UMAD_PORT_DEFERS)
		ret = send_defer(fd, &msg, sizeof(msg), NULL, 0);
	else
		ret = send_all(fd, &msg, sizeof(msg));
	send_flush();
	return ret ? -EIO : 0;
}

static void addr_to_umad(ib_mad_addr_t *a, const struct ibemu_sess_addr *s)
{
	memset(a, 0, sizeof(*a));
	a->qpn = htobe32(s->qpn);
	a->qkey = htobe32(s->qkey);
	a->lid = htobe16(s->lid);
	a->sl = s->sl;
	a->path_bits = s->path_bits;
	a->grh_present = s->grh_present;
	a->gid_index = s->gid_index;
	a->hop_limit = s->hop_limit;
	a->traffic_class = s->traffic_class;
	memcpy(a->gid, s->gid, sizeof(a->gid));
	a->flow_label = htobe32(s->flow_label);
	a->pkey_index = s->pkey_index;
}

/* Whether a RECV of 'n' bytes starting with 'h' and 'm' is well formed. */
static int recv_valid(const struct ibemu_sess_hdr *h,
		      const struct ibemu_sess_mad *m, size_t n)
{
	return n >= sizeof(*h) + sizeof(*m) && n <= IBEMU_SESS_STREAM_MAX_MSG &&
	       h->magic == IBEMU_SESS_MAGIC &&
	       h->version == IBEMU_SESS_VERSION && h->type == IBEMU_SESS_RECV &&
	       h->len == n - sizeof(*h) && m->len == h->len - sizeof(*m);
}

/*
 * Reads of one port must not interleave between threads (a stashed MAD
 * is the next one); the lock also guards 'spill'.
 */
static pthread_mutex_t recv_lock = PTHREAD_MUTEX_INITIALIZER;
/* The part of a RECV past the caller's buffer (an RMPP transfer). */
static uint8_t spill[IBEMU_SESS_STREAM_MAX_MSG];

struct recv_head {
	struct ibemu_sess_hdr h;
	struct ibemu_sess_mad m;
};

/* Fills 'mad' from a RECV's header; the MAD's length. */
static size_t recv_fill(struct ib_user_mad *mad, const struct recv_head *head)
{
	mad->agent_id = head->m.agent_id;
	mad->status = head->m.status;
	mad->timeout_ms = head->m.timeout_ms;
	mad->retries = head->m.retries;
	mad->length = (uint32_t)(umad_size() + head->m.len);
	addr_to_umad(&mad->addr, &head->m.addr);
	return head->m.len;
}

/*
 * A RECV that did not fit the caller's buffer, read whole before ('msg',
 * 'n' bytes): given to 'mad' if it fits now, else kept again.
 */
static int recv_stashed(int fd, struct ib_user_mad *mad, int *length,
			uint8_t *msg, size_t n)
{
	size_t room = *length > 0 ? (size_t)*length : 0, len;
	struct recv_head head;

	memcpy(&head, msg, sizeof(head));
	len = recv_fill(mad, &head);
	memcpy(mad->data, msg + sizeof(head), len < room ? len : room);
	*length = (int)len;
	if (len > room) {
		if (ibemu__umad_port_stash(fd, msg, n))
			free(msg);
		return -ENOSPC;
	}
	free(msg);
	return (int)head.m.agent_id;
}

/*
 * RECV 'msg' of 'n' bytes, read whole, into 'mad' as recv_one does; 'msg'
 * stays the caller's.
 */
static int recv_copy(int fd, struct ib_user_mad *mad, int *length,
		     const uint8_t *msg, size_t n)
{
	size_t room = *length > 0 ? (size_t)*length : 0, len;
	struct recv_head head;
	uint8_t *copy;

	if (n < sizeof(head))
		return -EIO;
	memcpy(&head, msg, sizeof(head));
	if (!recv_valid(&head.h, &head.m, n))
		return -EIO; /* not from a daemon of ours: dropped */
	ibemu__umad_port_took(fd);
	ibemu__umad_clock_at_least(head.m.vt_ps);
	if (head.m.len > room) {
		copy = malloc(n);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, msg, n);
		return recv_stashed(fd, mad, length, copy, n);
	}
	len = recv_fill(mad, &head);
	memcpy(mad->data, msg + sizeof(head), len);
	*length = (int)len;
	return (int)head.m.agent_id;
}

/*
 * Batched reads. A process that keeps many requests in flight (an SM
 * sweeping a subnet) finds many RECVs waiting, and a system call costs
 * about as much as the daemon's handling of a MAD. One recvmmsg with
 * MSG_PEEK copies up to BATCH of them, walking the socket's queue by its
 * peek offset (SO_PEEK_OFF), and leaves them queued, so that the fd polls
 * readable while any of them waits, as libibumad's callers expect: they
 * leave the socket, by one recvmmsg of empty buffers, when the last of
 * them is handed out. A RECV longer than a slot (an RMPP transfer) ends a
 * batch and is read alone. A peek that finds a single RECV costs a call
 * more than reading it, so after one the next reads go one by one, twice
 * as many each time it happens again (at most SKIP_MAX). One batch, of one
 * port, at a time; under recv_lock.
 */
#define SKIP_MAX 64

static struct {
	int fd;		       /* the port peeked, or -1 */
	unsigned n, next;      /* RECVs peeked, and handed out */
	unsigned skip, streak; /* reads left one by one; the last run */
	uint32_t len[BATCH];
	uint8_t slot[BATCH][SLOT] __attribute__((aligned(8)));
} batch = {.fd = -1};

/*
 * PACKs of RECVs (sess_proto.h), on a port that defers its SENDs: the
 * daemon answers its PACKs with PACKs. One is peeked whole and its RECVs
 * handed out one by one; it leaves the socket when the last one is, so
 * the fd polls readable while any of them waits, as with the batches
 * above. One PACK, of one port, at a time; under recv_lock.
 */
static struct {
	int fd;		 /* the port peeked, or -1 */
	size_t len, off; /* the PACK's bytes; the next message's offset */
	uint8_t buf[sizeof(struct ibemu_sess_hdr) + IBEMU_SESS_PACK_MAX]
		__attribute__((aligned(8)));
} pack = {.fd = -1};

/* Takes the batch's RECVs off the socket: they have been handed out. */
static void batch_consume(void)
{
	struct mmsghdr mm[BATCH];
	unsigned left = batch.n;
	int n, off = 0;

	memset(mm, 0, sizeof(mm));
	while (left) {
		n = recvmmsg(batch.fd, mm, left, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		left -= (unsigned)n;
	}
	/* Another reader of the socket took some: start afresh. */
	if (left)
		setsockopt(batch.fd, SOL_SOCKET, SO_PEEK_OFF, &off,
			   sizeof(off));
	batch.fd = -1;
	batch.n = batch.next = 0;
}

static void recv_forget(int fd)
{
	pthread_mutex_lock(&recv_lock);
	if (batch.fd == fd) {
		batch.fd = -1;
		batch.n = batch.next = 0;
	}
	if (pack.fd == fd)
		pack.fd = -1;
	pthread_mutex_unlock(&recv_lock);
}

/* Whether the message of 'n' bytes at 'msg' says RECV (not TICK). */
static int is_recv(const uint8_t *msg, size_t n)
{
	struct ibemu_sess_hdr h;

	if (n < sizeof(h))
		return 0;
	memcpy(&h, msg, sizeof(h));
	return h.type == IBEMU_SESS_RECV;
}

/* A TICK of 'n' bytes at 'msg': taken, its wait id in *tick; or -EIO. */
static int tick_take(int fd, const uint8_t *msg, size_t n, uint64_t *tick)
{
	struct ibemu_sess_hdr h;
	struct ibemu_sess_tick t;

	if (n != sizeof(h) + sizeof(t))
		return -EIO;
	memcpy(&h, msg, sizeof(h));
	memcpy(&t, msg + sizeof(h), sizeof(t));
	if (h.magic != IBEMU_SESS_MAGIC || h.version != IBEMU_SESS_VERSION ||
	    h.type != IBEMU_SESS_TICK || h.len != sizeof(t))
		return -EIO;
	ibemu__umad_port_took(fd);
	ibemu__umad_clock_at_least(t.vt_ps);
	*tick = t.wait_id;
	return NEXT_TICK;
}

/*
 * Peeks at the RECVs waiting on 'fd' into the batch. Returns how many
 * (0: read the next one alone), or -errno (-EAGAIN: none waits).
 */
static int recv_peek(int fd)
{
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	unsigned i, k;
	int n, off = 0;

	memset(mm, 0, sizeof(mm));
	for (i = 0; i < BATCH; i++) {
		iov[i].iov_base = batch.slot[i];
		iov[i].iov_len = SLOT;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	do
		n = recvmmsg(fd, mm, BATCH, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT,
			     NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (k = 0; k < (unsigned)n; k++) {
		/* MSG_TRUNC: the whole length of a RECV, even of a longer
		 * one; 0 is the daemon gone. */
		if (!mm[k].msg_len || mm[k].msg_len > SLOT ||
		    (mm[k].msg_hdr.msg_flags & MSG_TRUNC) ||
		    !is_recv(batch.slot[k], mm[k].msg_len))
			break;
		batch.len[k] = mm[k].msg_len;
		off += (int)mm[k].msg_len;
	}
	/* The offset went past what the batch holds: back to its end. */
	if (k < (unsigned)n)
		setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off));
	if (k) {
		batch.fd = fd;
		batch.n = k;
		batch.next = 0;
	}
	return (int)k;
}

/* The next RECV of 'fd' from the batch, peeking more if it is empty;
 * -ENOENT: read it alone. */
static int recv_batched(int fd, struct ib_user_mad *mad, int *length)
{
	unsigned i;
	int ret;

	if (batch.fd != fd) {
		/* Another port's batch waits for its reader. */
		if (batch.fd >= 0 ||
		    !(ibemu__umad_port_flags(fd) & IBEMU_UMAD_PORT_PEEKS))
			return -ENOENT;
		if (batch.skip) {
			batch.skip--;
			return -ENOENT;
		}
		ret = recv_peek(fd);
		if (ret <= 0)
			return ret ? ret : -ENOENT;
		if (ret == 1) {
			batch.streak = batch.streak ? 2 * batch.streak : 1;
			if (batch.streak > SKIP_MAX)
				batch.streak = SKIP_MAX;
			batch.skip = batch.streak;
		} else {
			batch.streak = 0;
		}
	}
	i = batch.next++;
	ret = recv_copy(fd, mad, length, batch.slot[i], batch.len[i]);
	if (batch.next == batch.n)
		batch_consume();
	return ret;
}

/* Takes the PACK off the socket: its RECVs have been handed out. */
static void pack_consume(void)
{
	uint8_t none;
	ssize_t n;

	do
		n = recv(pack.fd, &none, sizeof(none), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	pack.fd = -1;
}

/* Whether the PACK of 'len' bytes at 'msg' holds only RECVs, each a
 * multiple of the alignment long and at least two. */
static int pack_valid(const uint8_t *msg, size_t len)
{
	struct ibemu_sess_hdr h;
	size_t at = sizeof(h), n;
	unsigned count = 0;

	memcpy(&h, msg, sizeof(h));
	if (h.magic != IBEMU_SESS_MAGIC || h.version != IBEMU_SESS_VERSION ||
	    h.len != len - sizeof(h))
		return 0;
	for (; at < len; at += n, count++) {
		if (len - at < sizeof(h))
			return 0;
		memcpy(&h, msg + at, sizeof(h));
		n = sizeof(h) + (size_t)h.len;
		if (h.len > len - at - sizeof(h) || n % IBEMU_SESS_PACK_ALIGN ||
		    h.type != IBEMU_SESS_RECV)
			return 0;
	}
	return count >= 2;
}

/*
 * Peeks at the next message of 'fd': 1 if it is a PACK (now in 'pack'),
 * 0 if not (read it alone), or -errno (-EAGAIN: none waits).
 */
static int pack_peek(int fd)
{
	struct ibemu_sess_hdr h;
	ssize_t n;

	do
		n = recv(fd, pack.buf, sizeof(pack.buf),
			 MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(h) || (size_t)n > sizeof(pack.buf))
		return 0;
	memcpy(&h, pack.buf, sizeof(h));
	if (h.type != IBEMU_SESS_PACK)
		return 0;
	pack.fd = fd;
	if (!pack_valid(pack.buf, (size_t)n)) {
		pack_consume(); /* not from a daemon of ours: dropped */
		return -EIO;
	}
	pack.len = (size_t)n;
	pack.off = sizeof(h);
	return 1;
}

/* The next RECV of 'fd' from its PACK, peeking one if there is none;
 * -ENOENT: read the next message alone. */
static int recv_packed(int fd, struct ib_user_mad *mad, int *length)
{
	struct ibemu_sess_hdr h;
	size_t at;
	int ret;

	if (pack.fd != fd) {
		if (pack.fd >= 0 ||
		    !(ibemu__umad_port_flags(fd) & IBEMU_UMAD_PORT_DEFERS))
			return -ENOENT;
		ret = pack_peek(fd);
		if (ret <= 0)
			return ret ? ret : -ENOENT;
	}
	at = pack.off;
	memcpy(&h, pack.buf + at, sizeof(h));
	pack.off += sizeof(h) + h.len;
	ret = recv_copy(fd, mad, length, pack.buf + at, sizeof(h) + h.len);
	if (pack.off == pack.len)
		pack_consume();
	return ret;
}

/*
 * Reads one RECV into 'mad'; -errno (-EAGAIN: none waits), the agent
 * id, or NEXT_TICK (a TICK taken, its wait id in *tick). From a batch if it can (recv_batched), else one recvmsg: whatever does not fit the caller's buffer lands in
 * 'spill', and the whole MAD is kept for the next call, as ib_umad keeps
 * a MAD too long for the buffer queued (ENOSPC, the length it needs in
 * *length, and the first part of it copied).
 */
static int recv_one(int fd, struct ib_user_mad *mad, int *length,
		    uint64_t *tick)
{
	size_t room = *length > 0 ? (size_t)*length : 0, len;
	struct recv_head head;
	struct iovec iov[3] = {
		{.iov_base = &head, .iov_len = sizeof(head)},
		{.iov_base = mad->data, .iov_len = room},
		{.iov_base = spill, .iov_len = sizeof(spill)},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 3};
	uint8_t *msg;
	ssize_t n;

	msg = ibemu__umad_port_unstash(fd, &len);
	if (msg)
		return recv_stashed(fd, mad, length, msg, len);
	/*
	 * The socket is read: what waits to be sent goes first, but for a
	 * port that packs its SENDs only once nothing waits to be read
	 * (umad_recv), so that the SENDs its answers call for go together.
	 */
	if (batch.fd != fd &&
	    !(ibemu__umad_port_flags(fd) & IBEMU_UMAD_PORT_DEFERS))
		send_flush();
	n = recv_packed(fd, mad, length);
	if (n != -ENOENT)
		return (int)n;
	n = recv_batched(fd, mad, length);
	if (n != -ENOENT)
		return (int)n;
	memset(&head, 0, sizeof(head));
	do
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EIO; /* the daemon has gone: the port is dead */
	if (head.h.type == IBEMU_SESS_TICK)
		return tick_take(fd, (const uint8_t *)&head, (size_t)n, tick);
	if (!recv_valid(&head.h, &head.m, (size_t)n))
		return -EIO; /* not from a daemon of ours: dropped */
	ibemu__umad_port_took(fd);
	ibemu__umad_clock_at_least(head.m.vt_ps);
	len = recv_fill(mad, &head);
	if (len > room) {
		msg = malloc((size_t)n);
		if (!msg)
			return -ENOMEM;
		memcpy(msg, &head, sizeof(head));
		memcpy(msg + sizeof(head), mad->data, room);
		memcpy(msg + sizeof(head) + room, spill, len - room);
		*length = (int)len;
		if (ibemu__umad_port_stash(fd, msg, (size_t)n))
			free(msg);
		return -ENOSPC;
	}
	*length = (int)len;
	return (int)head.m.agent_id;
}

UMAD_EXPORT int umad_recv(int fd, void *umad, int *length, int timeout_ms)
{
	uint64_t tick = 0, wait_id = 0;
	int ret, err = 0;

	errno = 0;
	if (!umad || !length) {
		errno = EINVAL;
		return -EINVAL;
	}
	for (;;) {
		/* A MAD that waits is read at once. */
		pthread_mutex_lock(&recv_lock);
		ret = recv_one(fd, umad, length, &tick);
		pthread_mutex_unlock(&recv_lock);
		if (ret == NEXT_TICK) {
			if (wait_id && tick == wait_id) {
				ret = -ETIMEDOUT;
				break;
			}
			continue; /* another wait's, ended otherwise */
		}
		/* Nothing to read: the SENDs queued go (with the WAIT). */
		if (ret == -EAGAIN && !timeout_ms)
			send_flush();
		if (ret != -EAGAIN || !timeout_ms)
			break;
		/*
		 * The time rule: this thread waits, until a MAD or the
		 * TICK of its timeout (virtual time) comes. A SEND queued by
		 * another thread from now on goes at once; one queued before
		 * goes with the WAIT.
		 */
		__atomic_add_fetch(&recv_waiting, 1, __ATOMIC_SEQ_CST);
		ret = say_wait(fd, timeout_ms, &wait_id);
		if (!ret)
			ret = wait_readable(fd);
		/* A signal ends it as it ends rdma-core's poll: -EIO, and
		 * errno EINTR. */
		err = ret ? errno : 0;
		__atomic_sub_fetch(&recv_waiting, 1, __ATOMIC_SEQ_CST);
		if (ret)
			break;
	}
	if (ret < 0) {
		errno = ret == -EIO && err ? err : -ret;
		return ret;
	}
	UMAD_DEBUG("mad received by agent %d length %d", ret, *length);
	return ret;
}

/*
 * Without taking a RECV: whether one waits (NEXT_RECV), a TICK was taken
 * (NEXT_TICK), or -EAGAIN (nothing) or -errno. Under recv_lock.
 */
static int recv_next(int fd, uint64_t *tick)
{
	struct ibemu_sess_hdr h;
	uint8_t msg[sizeof(h) + sizeof(struct ibemu_sess_tick)];
	ssize_t n;
	int off = 0;

	if (ibemu__umad_port_stashed(fd) || batch.fd == fd || pack.fd == fd)
		return NEXT_RECV;
	do
		n = recv(fd, msg, sizeof(msg),
			 MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	/* The peek moved the offset batches read by: back to the start. */
	if (ibemu__umad_port_flags(fd) & IBEMU_UMAD_PORT_PEEKS)
		setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off));
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EIO;
	if (!is_recv(msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg)) &&
	    (size_t)n == sizeof(msg)) {
		/* Take it off the socket. */
		do
			n = recv(fd, msg, sizeof(msg), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		return tick_take(fd, msg, (size_t)n, tick);
	}
	return NEXT_RECV;
}

UMAD_EXPORT int umad_poll(int fd, int timeout_ms)
{
	uint64_t tick = 0, wait_id = 0;
	int ret;

	send_flush();
	for (;;) {
		pthread_mutex_lock(&recv_lock);
		ret = recv_next(fd, &tick);
		pthread_mutex_unlock(&recv_lock);
		if (ret == NEXT_RECV)
			return 0;
		if (ret == NEXT_TICK) {
			if (wait_id && tick == wait_id)
				return -ETIMEDOUT;
			continue; /* another wait's, ended otherwise */
		}
		if (ret != -EAGAIN)
			return -EIO;
		if (!timeout_ms)
			return -ETIMEDOUT;
		ret = say_wait(fd, timeout_ms, &wait_id);
		if (!ret)
			ret = wait_readable(fd);
		if (ret)
			return ret;
	}
}

UMAD_EXPORT int ibemu_umad_idle(int fd)
{
	uint64_t wait_id;

	send_flush();
	return say_wait(fd, -1, &wait_id);
}

/* --- dumps ---------------------------------------------------------- */

UMAD_EXPORT void umad_addr_dump(ib_mad_addr_t *addr)
{
	static const char hex[] = "0123456789abcdef";
	char gid[2 * sizeof(addr->gid) + 1];
	size_t i;

	for (i = 0; i < sizeof(addr->gid); i++) {
		gid[2 * i] = hex[addr->gid[i] >> 4];
		gid[2 * i + 1] = hex[addr->gid[i] & 0xf];
	}
	gid[2 * i] = '\0';
	ibemu__umad_warn(__func__,
			 "qpn %u qkey 0x%x lid %u sl %u\n"
			 "grh_present %u gid_index %u hop_limit %u "
			 "traffic_class %u flow_label 0x%x pkey_index 0x%x\n"
			 "Gid 0x%s",
			 be32toh(addr->qpn), be32toh(addr->qkey),
			 be16toh(addr->lid), addr->sl, addr->grh_present,
			 addr->gid_index, addr->hop_limit, addr->traffic_class,
			 be32toh(addr->flow_label), addr->pkey_index, gid);
}

UMAD_EXPORT void umad_dump(void *umad)
{
	struct ib_user_mad *mad = umad;

	ibemu__umad_warn(__func__, "agent id %u status %x timeout %u",
			 mad->agent_id, mad->status, mad->timeout_ms);
	umad_addr_dump(&mad->addr);
}
