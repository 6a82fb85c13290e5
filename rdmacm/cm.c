// SPDX-License-Identifier: MIT
/*
 * The CM protocol (IBA vol 1 ch. 12) as the kernel's ib_cm and rdma_cm
 * run it for a process: REQ/MRA/REJ/REP/RTU/DREQ/DREP and SIDR_REQ/
 * SIDR_REP as class 0x07 MADs on QP1 (mad/mad_cm.h), through a MAD agent
 * on the id's port (libibumad: ibemu's under 'ibemu exec', so they cross
 * the fabric in virtual time and show in the PMA counters), a thread that
 * receives them, and the events rdma_cm gives for them.
 *
 * The daemon is this process's share of ib_cm (attach/sess_cm.c): it
 * routes REQs by the service IDs this process listens on (CM_LISTEN), the
 * rest by Comm ID; it keeps the requests' timers in virtual time (a REQ
 * is sent with rdma_cm's timeout and retries, its answer ends them, an
 * MRA stretches them) and answers for this process once it is gone.
 *
 * rdma_cm's rules (drivers/infiniband/core/cma.c): the service ID is the
 * port space << 16 | port; in RDMA_PS_TCP and RDMA_PS_UDP a 36-byte header
 * (version, IP version, source port, both addresses) goes before the
 * program's private data in REQ and SIDR_REQ, which leaves 56 and 180
 * bytes; the CM response timeout is 20 (4.096 us * 2^20) and the CM
 * retries 15; a REQ not answered is MRAed with service timeout 24 when it
 * comes again; QPs go to RTR and RTS with the peer's QPN and PSN.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <infiniband/ib.h>
#include <infiniband/umad.h>

#include "mad_cm.h"
#include "cm_int.h"

/* ib_cm's cm_convert_to_ms(): 4.096 us * 2^t, roughly, in ms. */
int cm__ms(int t)
{
	return 1 << (t > 8 ? t - 8 : 0);
}

struct cm_agent cm = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* --- the agent and its MADs ------------------------------------------ */

uint32_t cm__new_comm_id(void)
{
	uint32_t v;

	do
		v = cm.next_id++;
	while (!v);
	return v;
}

/*
 * Sends CM MAD 'mad' to the peer port (LID 'dlid', QP1), as a request
 * with 'timeout_ms' and 'retries' (0: none, an answer ends nothing).
 * Under cm.lock. 0 or -errno.
 */
int cm__send(const uint8_t *mad, uint16_t dlid, uint8_t sl, int timeout_ms,
	     int retries)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *umad = (struct ib_user_mad *)buf;

	memset(buf, 0, sizeof(buf));
	memcpy(umad_get_mad(umad), mad, IBEMU_MAD_LEN);
	umad_set_addr(umad, dlid, 1, sl, GSI_QKEY);
	if (umad_send(cm.fd, cm.agent, umad, IBEMU_MAD_LEN, timeout_ms,
		      retries) < 0)
		return -EIO;
	return 0;
}

uint64_t cm__new_tid(void)
{
	return ++cm.next_tid;
}

static void *cm_thread(void *arg);

/* Opens the CM agent on the id's port once; under cm.lock. */
int cm__start(struct rdmacm_id *id)
{
	long mask[16 / sizeof(long)] = {0};
	struct ibv_port_attr pa;
	uint32_t seed;

	if (cm.fd >= 0)
		return id->id.port_num == cm.port ? 0 : -ENOSYS;
	if (ibv_query_port(id->id.verbs, id->id.port_num, &pa))
		return -EIO;
	if (umad_init() < 0)
		return -EIO;
	cm.fd = umad_open_port(ibv_get_device_name(id->id.verbs->device),
			       id->id.port_num);
	if (cm.fd < 0)
		return -EIO;
	((uint8_t *)mask)[0] = 1 << IBEMU_MAD_METHOD_SEND;
	cm.agent = umad_register(cm.fd, IBEMU_MAD_CLASS_CM,
				 IBEMU_CM_CLASS_VERSION, 0, mask);
	if (cm.agent < 0) {
		umad_close_port(cm.fd);
		cm.fd = -1;
		return -EIO;
	}
	cm.port = id->id.port_num;
	cm.lid = pa.lid;
	cm.ca_guid = id->id.verbs->device
			     ? ibv_get_device_guid(id->id.verbs->device)
			     : 0;
	/* Comm IDs start at random, as ib_cm's, so that processes sharing
	 * a port do not take each other's (the daemon refuses that). */
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint32_t)getpid() << 12;
	cm.next_id = seed;
	if (pthread_create(&cm.thread, NULL, cm_thread, NULL)) {
		umad_unregister(cm.fd, cm.agent);
		umad_close_port(cm.fd);
		cm.fd = -1;
		return -EAGAIN;
	}
	pthread_detach(cm.thread);
	return 0;
}

void cm__track(struct rdmacm_id *id)
{
	if (id->cm_known)
		return;
	id->cm_next = cm.ids;
	cm.ids = id;
	id->cm_known = 1;
}

void cm__untrack(struct rdmacm_id *id)
{
	struct rdmacm_id **pp;

	for (pp = &cm.ids; *pp; pp = &(*pp)->cm_next) {
		if (*pp == id) {
			*pp = id->cm_next;
			break;
		}
	}
	id->cm_known = 0;
}

static struct rdmacm_id *id_by_local(uint32_t local_id)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		if (id->conn.state != RDMACM_CM_LISTEN &&
		    id->conn.local_id == local_id)
			return id;
	return NULL;
}

static struct rdmacm_id *id_by_tid(uint32_t tid)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		if (id->conn.tid && (uint32_t)id->conn.tid == tid)
			return id;
	return NULL;
}

uint64_t cm__service_id(const struct rdma_cm_id *c)
{
	if (c->route.addr.src_addr.sa_family == AF_IB)
		return be64toh(
			((const struct sockaddr_ib *)&c->route.addr.src_storage)
				->sib_sid);
	return (uint64_t)c->ps << 16 |
	       ntohs(rdma_get_src_port((struct rdma_cm_id *)c));
}

uint64_t cm__dst_service_id(struct rdma_cm_id *c)
{
	if (c->route.addr.dst_addr.sa_family == AF_IB)
		return be64toh(
			((struct sockaddr_ib *)&c->route.addr.dst_storage)
				->sib_sid);
	return (uint64_t)c->ps << 16 | ntohs(rdma_get_dst_port(c));
}

struct rdmacm_id *cm__listener_by_sid(uint64_t sid)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		if (id->conn.state == RDMACM_CM_LISTEN &&
		    cm__service_id(&id->id) == sid)
			return id;
	return NULL;
}

/* The bytes of the CMA header before the program's private data. */
size_t cm__cma_hdr_len(const struct rdma_cm_id *c)
{
	return c->ps == RDMA_PS_TCP || c->ps == RDMA_PS_UDP ? CMA_HDR_LEN : 0;
}

static void cma_ip(uint8_t *out, const struct sockaddr *sa)
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET)
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr,
		       4);
	else if (sa->sa_family == AF_INET6)
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

/* cma.c's cma_format_hdr(): version, IP version, source port, addresses. */
void cm__cma_hdr_fill(uint8_t *p, struct rdma_cm_id *c)
{
	const struct sockaddr *src = &c->route.addr.src_addr;
	uint16_t port = rdma_get_src_port(c);

	p[0] = CMA_VERSION;
	p[1] = (src->sa_family == AF_INET6 ? 6 : 4) << 4;
	memcpy(p + 2, &port, 2);
	cma_ip(p + 4, src);
	cma_ip(p + 20, &c->route.addr.dst_addr);
}

/* A private data of 'len' bytes fits message 'attr' after the header. */
int cm__pd_fits(const struct rdma_cm_id *c, uint16_t attr, size_t len)
{
	size_t room;

	ibemu_cm_private(attr, &room);
	if (attr == IBEMU_CM_ATTR_REQ || attr == IBEMU_CM_ATTR_SIDR_REQ)
		room -= cm__cma_hdr_len(c);
	return len <= room;
}

void cm__pd_put(uint8_t *mad, uint16_t attr, size_t skip, const void *pd,
		size_t len)
{
	size_t room, off = ibemu_cm_private(attr, &room);

	if (pd && len && skip + len <= room)
		memcpy(mad + off + skip, pd, len);
}

void cm__rej_build(uint8_t *mad, const struct rdmacm_id *id, uint16_t msg,
		   uint16_t reason)
{
	ibemu_cm_init(mad, IBEMU_CM_ATTR_REJ, cm__new_tid());
	ibemu_cm_set(mad, IBEMU_CM_REJ_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_REJ_REMOTE_COMM_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_REJ_MESSAGE_REJECTED, msg);
	ibemu_cm_set(mad, IBEMU_CM_REJ_REASON, reason);
}

/* --- QP transitions ------------------------------------------------ */

static int qp_move(struct rdma_cm_id *c, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr;
	int mask;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	if (rdma_init_qp_attr(c, &attr, &mask))
		return -errno;
	return ibv_modify_qp(c->qp, &attr, mask) ? -EIO : 0;
}

int cm__qp_rtr_rts(struct rdma_cm_id *c)
{
	int ret;

	if (!c->qp || c->qp->qp_type == IBV_QPT_UD)
		return 0;
	/* cma_modify_qp_rtr(): INIT again first, with the access flags the
	 * connection's responder resources give (rdma_init_qp_attr). */
	ret = qp_move(c, IBV_QPS_INIT);
	if (ret)
		return ret;
	ret = qp_move(c, IBV_QPS_RTR);
	return ret ? ret : qp_move(c, IBV_QPS_RTS);
}

void cm__qp_error(struct rdma_cm_id *c)
{
	struct ibv_qp_attr attr;

	if (!c->qp)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_ERR;
	ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
}

/* --- events -------------------------------------------------------- */

void cm__event_conn(struct rdmacm_id *id, enum rdma_cm_event_type type,
		    int status, const uint8_t *mad, size_t skip)
{
	struct rdma_cm_event ev;
	size_t room = 0, off = 0;

	memset(&ev, 0, sizeof(ev));
	ev.event = type;
	ev.status = status;
	ev.param.conn.responder_resources = id->conn.init_depth;
	ev.param.conn.initiator_depth = id->conn.resp_res;
	ev.param.conn.retry_count = id->conn.retry;
	ev.param.conn.rnr_retry_count = id->conn.rnr_retry;
	ev.param.conn.srq = id->conn.srq;
	ev.param.conn.qp_num = id->conn.remote_qpn;
	if (mad) {
		off = ibemu_cm_private(ibemu_mad_get_attr_id(mad), &room);
		off += skip;
		room -= skip;
	}
	rdmacm__event_queue_ex(id, NULL, &ev, mad ? mad + off : NULL, room);
}

void cm__event_plain(struct rdmacm_id *id, enum rdma_cm_event_type type,
		     int status)
{
	rdmacm__event_queue(id, type, status);
}

/* --- the receiving thread ------------------------------------------ */

static void dispatch(const uint8_t *mad, uint16_t slid, uint8_t sl)
{
	uint16_t attr = ibemu_mad_get_attr_id(mad);
	uint32_t key;
	struct rdmacm_id *id;

	if (attr == IBEMU_CM_ATTR_REQ || attr == IBEMU_CM_ATTR_SIDR_REQ) {
		cm__on_req(mad, slid, sl, attr == IBEMU_CM_ATTR_SIDR_REQ);
		return;
	}
	key = (uint32_t)ibemu_cm_get(mad,
				     attr == IBEMU_CM_ATTR_SIDR_REP
					     ? IBEMU_CM_SIDR_REP_REQUEST_ID
					     : IBEMU_CM_REP_REMOTE_COMM_ID);
	id = id_by_local(key);
	if (!id)
		return;
	switch (attr) {
	case IBEMU_CM_ATTR_REP:
		cm__on_rep(id, mad);
		break;
	case IBEMU_CM_ATTR_RTU:
		cm__on_rtu(id, mad);
		break;
	case IBEMU_CM_ATTR_REJ:
		cm__on_rej(id, mad);
		break;
	case IBEMU_CM_ATTR_DREQ:
		cm__on_dreq(id);
		break;
	case IBEMU_CM_ATTR_DREP:
		cm__on_drep(id);
		break;
	case IBEMU_CM_ATTR_SIDR_REP:
		cm__on_sidr_rep(id, mad);
		break;
	default:
		break; /* MRA: the daemon stretched our timer */
	}
}

/* The whole fabric is gone: every id hears DEVICE_REMOVAL, once. */
static void device_gone(void)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		cm__event_plain(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
}

static void *cm_thread(void *arg)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *umad = (struct ib_user_mad *)buf;
	const uint8_t *mad = umad_get_mad(umad);
	struct rdmacm_id *id;
	int len, ret;

	(void)arg;
	for (;;) {
		len = IBEMU_MAD_LEN;
		ret = umad_recv(cm.fd, umad, &len, -1);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			pthread_mutex_lock(&cm.lock);
			device_gone();
			pthread_mutex_unlock(&cm.lock);
			return NULL;
		}
		pthread_mutex_lock(&cm.lock);
		if (umad_status(umad)) {
			id = id_by_tid((uint32_t)ibemu_mad_get_tid(mad));
			if (id)
				cm__on_timeout(id);
		} else if (len >= IBEMU_MAD_LEN &&
			   !ibemu_cm_check(mad, IBEMU_MAD_LEN)) {
			dispatch(mad, ntohs(umad->addr.lid), umad->addr.sl);
		}
		pthread_mutex_unlock(&cm.lock);
	}
	return NULL;
}

/* --- an id destroyed ----------------------------------------------- */

void rdmacm__cm_forget(struct rdmacm_id *id)
{
	pthread_mutex_lock(&cm.lock);
	if (!id->cm_known) {
		pthread_mutex_unlock(&cm.lock);
		return;
	}
	switch (id->conn.state) {
	case RDMACM_CM_LISTEN:
		cm__listen_call(id, 0);
		break;
	case RDMACM_CM_ESTABLISHED:
	case RDMACM_CM_REP_SENT:
		/* cm_destroy_id(): the peer hears DREQ, once. */
		cm__send_dreq(id, 0, 0);
		break;
	case RDMACM_CM_REQ_RCVD:
	case RDMACM_CM_MRA_SENT:
		if (id->id.qp_type != IBV_QPT_UD)
			cm__reject_req(id->conn.remote_id, id->conn.peer_lid,
				       id->conn.sl,
				       IBEMU_CM_REJ_CONSUMER_DEFINED);
		break;
	default:
		break;
	}
	cm__listener_release(id);
	/* Passive ids whose listener goes keep working, unlinked. */
	{
		struct rdmacm_id *o;

		for (o = cm.ids; o; o = o->cm_next)
			if (o->listener == id)
				o->listener = NULL;
	}
	cm__untrack(id);
	pthread_mutex_unlock(&cm.lock);
}
