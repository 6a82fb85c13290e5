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
#include "rdmacm_int.h"
#include "sessc.h"

#define GSI_QKEY	     0x80010000u
#define CMA_RESPONSE_TIMEOUT 20 /* cma.c's CMA_CM_RESPONSE_TIMEOUT */
#define CMA_MAX_CM_RETRIES   15
#define CMA_MRA_TIMEOUT	     24 /* CMA_CM_MRA_SETTING's */
#define CMA_HDR_LEN	     36
#define CMA_VERSION	     0x00
#define BACKLOG_MAX	     1024

/* ib_cm's cm_convert_to_ms(): 4.096 us * 2^t, roughly, in ms. */
static int cm_ms(int t)
{
	return 1 << (t > 8 ? t - 8 : 0);
}

static struct {
	pthread_mutex_t lock;
	int fd, agent;
	uint8_t port;
	uint16_t lid;
	uint64_t ca_guid; /* network order */
	struct rdmacm_id *ids;
	uint32_t next_id;
	uint32_t next_tid;
	pthread_t thread;
} cm = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static struct ibemu_sessc sessc = IBEMU_SESSC_INIT("librdmacm", NULL);

/* --- the agent and its MADs ------------------------------------------ */

static uint32_t new_comm_id(void)
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
static int cm_send(const uint8_t *mad, uint16_t dlid, uint8_t sl,
		   int timeout_ms, int retries)
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

static uint64_t new_tid(void)
{
	return ++cm.next_tid;
}

static void *cm_thread(void *arg);

/* Opens the CM agent on the id's port once; under cm.lock. */
static int cm_start(struct rdmacm_id *id)
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

static void cm_track(struct rdmacm_id *id)
{
	if (id->cm_known)
		return;
	id->cm_next = cm.ids;
	cm.ids = id;
	id->cm_known = 1;
}

static void cm_untrack(struct rdmacm_id *id)
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

static uint64_t service_id(const struct rdma_cm_id *c)
{
	if (c->route.addr.src_addr.sa_family == AF_IB)
		return be64toh(
			((const struct sockaddr_ib *)&c->route.addr.src_storage)
				->sib_sid);
	return (uint64_t)c->ps << 16 |
	       ntohs(rdma_get_src_port((struct rdma_cm_id *)c));
}

static uint64_t dst_service_id(struct rdma_cm_id *c)
{
	if (c->route.addr.dst_addr.sa_family == AF_IB)
		return be64toh(
			((struct sockaddr_ib *)&c->route.addr.dst_storage)
				->sib_sid);
	return (uint64_t)c->ps << 16 | ntohs(rdma_get_dst_port(c));
}

static struct rdmacm_id *listener_by_sid(uint64_t sid)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		if (id->conn.state == RDMACM_CM_LISTEN &&
		    service_id(&id->id) == sid)
			return id;
	return NULL;
}

/* The bytes of the CMA header before the program's private data. */
static size_t cma_hdr_len(const struct rdma_cm_id *c)
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
static void cma_hdr_fill(uint8_t *p, struct rdma_cm_id *c)
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
static int pd_fits(const struct rdma_cm_id *c, uint16_t attr, size_t len)
{
	size_t room;

	ibemu_cm_private(attr, &room);
	if (attr == IBEMU_CM_ATTR_REQ || attr == IBEMU_CM_ATTR_SIDR_REQ)
		room -= cma_hdr_len(c);
	return len <= room;
}

static void pd_put(uint8_t *mad, uint16_t attr, size_t skip, const void *pd,
		   size_t len)
{
	size_t room, off = ibemu_cm_private(attr, &room);

	if (pd && len && skip + len <= room)
		memcpy(mad + off + skip, pd, len);
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

static int qp_rtr_rts(struct rdma_cm_id *c)
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

static void qp_error(struct rdma_cm_id *c)
{
	struct ibv_qp_attr attr;

	if (!c->qp)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_ERR;
	ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
}

/* --- events -------------------------------------------------------- */

static void event_conn(struct rdmacm_id *id, enum rdma_cm_event_type type,
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

static void event_plain(struct rdmacm_id *id, enum rdma_cm_event_type type,
			int status)
{
	rdmacm__event_queue(id, type, status);
}

/* --- the active side ----------------------------------------------- */

static void req_build(uint8_t *mad, struct rdmacm_id *id,
		      const struct rdma_conn_param *p)
{
	struct rdma_cm_id *c = &id->id;
	const struct ibv_sa_path_rec *path = c->route.path_rec;
	uint32_t qpn = c->qp ? c->qp->qp_num : p->qp_num;

	ibemu_cm_init(mad, IBEMU_CM_ATTR_REQ, id->conn.tid);
	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_REQ_SERVICE_ID, dst_service_id(c));
	memcpy(mad + IBEMU_CM_REQ_LOCAL_CA_GUID.byte, &cm.ca_guid, 8);
	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_QPN, qpn);
	ibemu_cm_set(mad, IBEMU_CM_REQ_RESPONDER_RESOURCES,
		     p->responder_resources);
	ibemu_cm_set(mad, IBEMU_CM_REQ_INITIATOR_DEPTH, p->initiator_depth);
	ibemu_cm_set(mad, IBEMU_CM_REQ_REMOTE_CM_RESP_TIMEOUT,
		     CMA_RESPONSE_TIMEOUT);
	ibemu_cm_set(mad, IBEMU_CM_REQ_TRANSPORT_SERVICE_TYPE,
		     c->qp && c->qp->qp_type == IBV_QPT_UC ? 1 : 0);
	ibemu_cm_set(mad, IBEMU_CM_REQ_END_TO_END_FLOW_CONTROL,
		     p->flow_control);
	ibemu_cm_set(mad, IBEMU_CM_REQ_STARTING_PSN, id->conn.local_psn);
	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_CM_RESP_TIMEOUT,
		     CMA_RESPONSE_TIMEOUT);
	ibemu_cm_set(mad, IBEMU_CM_REQ_RETRY_COUNT, p->retry_count);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PKEY, ntohs(path->pkey));
	ibemu_cm_set(mad, IBEMU_CM_REQ_PATH_MTU, path->mtu);
	ibemu_cm_set(mad, IBEMU_CM_REQ_RNR_RETRY_COUNT, p->rnr_retry_count);
	ibemu_cm_set(mad, IBEMU_CM_REQ_MAX_CM_RETRIES, CMA_MAX_CM_RETRIES);
	ibemu_cm_set(mad, IBEMU_CM_REQ_SRQ, p->srq || (c->qp && c->qp->srq));
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_LOCAL_LID, ntohs(path->slid));
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_REMOTE_LID, ntohs(path->dlid));
	memcpy(mad + IBEMU_CM_REQ_PRIMARY_LOCAL_GID_OFF, path->sgid.raw, 16);
	memcpy(mad + IBEMU_CM_REQ_PRIMARY_REMOTE_GID_OFF, path->dgid.raw, 16);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_FLOW_LABEL,
		     ntohl(path->flow_label));
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_PACKET_RATE, path->rate);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_TRAFFIC_CLASS,
		     path->traffic_class);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_HOP_LIMIT, path->hop_limit);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_SL, path->sl);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_SUBNET_LOCAL, 1);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT,
		     path->packet_life_time + 1);
	if (cma_hdr_len(c))
		cma_hdr_fill(mad + IBEMU_CM_REQ_PRIVATE_OFF, c);
	pd_put(mad, IBEMU_CM_ATTR_REQ, cma_hdr_len(c), p->private_data,
	       p->private_data_len);
}

static void sidr_req_build(uint8_t *mad, struct rdmacm_id *id,
			   const struct rdma_conn_param *p)
{
	struct rdma_cm_id *c = &id->id;

	ibemu_cm_init(mad, IBEMU_CM_ATTR_SIDR_REQ, id->conn.tid);
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REQ_REQUEST_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REQ_PKEY,
		     ntohs(c->route.path_rec->pkey));
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REQ_SERVICE_ID, dst_service_id(c));
	if (cma_hdr_len(c))
		cma_hdr_fill(mad + IBEMU_CM_SIDR_REQ_PRIVATE_OFF, c);
	if (p)
		pd_put(mad, IBEMU_CM_ATTR_SIDR_REQ, cma_hdr_len(c),
		       p->private_data, p->private_data_len);
}

/*
 * The conn_param as the CM uses it: RDMA_MAX_RESP_RES and
 * RDMA_MAX_INIT_DEPTH stand for the device's maxima (libfabric's verbs
 * provider passes them), and more than the device allows is EINVAL, as
 * rdma-core's ucma_valid_param() and its connect and accept have it.
 * 0 or -errno.
 */
static int conn_param_resolve(struct rdma_cm_id *cm_id,
			      const struct rdma_conn_param *in,
			      struct rdma_conn_param *out)
{
	struct ibv_device_attr da;

	*out = *in;
	if (ibv_query_device(cm_id->verbs, &da))
		return -EIO;
	if (out->responder_resources == RDMA_MAX_RESP_RES)
		out->responder_resources = (uint8_t)da.max_qp_rd_atom;
	else if (out->responder_resources > da.max_qp_rd_atom)
		return -EINVAL;
	if (out->initiator_depth == RDMA_MAX_INIT_DEPTH)
		out->initiator_depth = (uint8_t)da.max_qp_init_rd_atom;
	else if (out->initiator_depth > da.max_qp_init_rd_atom)
		return -EINVAL;
	return 0;
}

RDMACM_EXPORT int rdma_connect(struct rdma_cm_id *cm_id,
			       struct rdma_conn_param *p)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	const struct ibv_sa_path_rec *path = cm_id->route.path_rec;
	struct rdma_conn_param none, resolved;
	uint8_t mad[IBEMU_MAD_LEN];
	int ud = cm_id->qp_type == IBV_QPT_UD, ret, timeout;
	uint16_t attr = ud ? IBEMU_CM_ATTR_SIDR_REQ : IBEMU_CM_ATTR_REQ;

	if (!path || !cm_id->verbs)
		return rdmacm_err(EINVAL);
	if (!p) {
		memset(&none, 0, sizeof(none));
		p = &none;
	}
	if (!pd_fits(cm_id, attr, p->private_data_len) ||
	    (p->private_data_len && !p->private_data))
		return rdmacm_err(EINVAL);
	ret = conn_param_resolve(cm_id, p, &resolved);
	if (ret)
		return rdmacm_err(-ret);
	p = &resolved;
	pthread_mutex_lock(&cm.lock);
	if (id->conn.state != RDMACM_CM_IDLE) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(EINVAL);
	}
	ret = cm_start(id);
	if (ret) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(-ret);
	}
	id->conn.local_id = new_comm_id();
	id->conn.tid = new_tid();
	/* A PSN from the Comm ID: the same in every run, as virtual time. */
	id->conn.local_psn = id->conn.local_id & 0xffffff;
	id->conn.resp_res = p->responder_resources;
	id->conn.init_depth = p->initiator_depth;
	id->conn.retry = p->retry_count > 7 ? 7 : p->retry_count;
	id->conn.rnr_retry = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	id->conn.peer_lid = ntohs(path->dlid);
	id->conn.sl = path->sl;
	if (ud) {
		sidr_req_build(mad, id, p);
		timeout = cm_ms(CMA_RESPONSE_TIMEOUT);
		id->conn.state = RDMACM_CM_SIDR_REQ_SENT;
	} else {
		req_build(mad, id, p);
		timeout = cm_ms(path->packet_life_time) * 2 +
			  cm_ms(CMA_RESPONSE_TIMEOUT);
		id->conn.state = RDMACM_CM_REQ_SENT;
	}
	cm_track(id);
	ret = cm_send(mad, id->conn.peer_lid, id->conn.sl, timeout,
		      CMA_MAX_CM_RETRIES);
	if (ret) {
		cm_untrack(id);
		id->conn.state = RDMACM_CM_IDLE;
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(-ret);
	}
	pthread_mutex_unlock(&cm.lock);
	return id->sync ? rdmacm__sync_complete(id) : 0;
}

/* REP: the QP to RTR and RTS with the peer's QPN and PSN, then RTU. */
static void on_rep(struct rdmacm_id *id, const uint8_t *mad)
{
	struct rdma_cm_id *c = &id->id;
	uint8_t rtu[IBEMU_MAD_LEN];

	if (id->conn.state != RDMACM_CM_REQ_SENT)
		return; /* a REP again: our RTU went; ib_cm resends it */
	id->conn.tid = 0;
	id->conn.remote_id =
		(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REP_LOCAL_COMM_ID);
	id->conn.remote_qpn =
		(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REP_LOCAL_QPN);
	id->conn.remote_psn =
		(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REP_STARTING_PSN);
	/* The passive side says how often we retry on RNR NAKs. */
	id->conn.rnr_retry =
		(uint8_t)ibemu_cm_get(mad, IBEMU_CM_REP_RNR_RETRY_COUNT);
	id->conn.srq = (uint8_t)ibemu_cm_get(mad, IBEMU_CM_REP_SRQ);
	if (!c->qp) {
		/* rdma_establish() sends the RTU. */
		id->conn.state = RDMACM_CM_REP_RCVD;
		event_conn(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, mad, 0);
		return;
	}
	if (qp_rtr_rts(c)) {
		ibemu_cm_init(rtu, IBEMU_CM_ATTR_REJ, new_tid());
		ibemu_cm_set(rtu, IBEMU_CM_REJ_LOCAL_COMM_ID,
			     id->conn.local_id);
		ibemu_cm_set(rtu, IBEMU_CM_REJ_REMOTE_COMM_ID,
			     id->conn.remote_id);
		ibemu_cm_set(rtu, IBEMU_CM_REJ_MESSAGE_REJECTED,
			     IBEMU_CM_MSG_REP);
		ibemu_cm_set(rtu, IBEMU_CM_REJ_REASON,
			     IBEMU_CM_REJ_CONSUMER_DEFINED);
		cm_send(rtu, id->conn.peer_lid, id->conn.sl, 0, 0);
		id->conn.state = RDMACM_CM_IDLE;
		event_plain(id, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL);
		return;
	}
	ibemu_cm_init(rtu, IBEMU_CM_ATTR_RTU, new_tid());
	ibemu_cm_set(rtu, IBEMU_CM_RTU_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(rtu, IBEMU_CM_RTU_REMOTE_COMM_ID, id->conn.remote_id);
	cm_send(rtu, id->conn.peer_lid, id->conn.sl, 0, 0);
	id->conn.state = RDMACM_CM_ESTABLISHED;
	event_conn(id, RDMA_CM_EVENT_ESTABLISHED, 0, mad, 0);
}

RDMACM_EXPORT int rdma_establish(struct rdma_cm_id *cm_id)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	uint8_t rtu[IBEMU_MAD_LEN];
	int ret;

	pthread_mutex_lock(&cm.lock);
	if (id->conn.state != RDMACM_CM_REP_RCVD) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(EINVAL);
	}
	ibemu_cm_init(rtu, IBEMU_CM_ATTR_RTU, new_tid());
	ibemu_cm_set(rtu, IBEMU_CM_RTU_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(rtu, IBEMU_CM_RTU_REMOTE_COMM_ID, id->conn.remote_id);
	ret = cm_send(rtu, id->conn.peer_lid, id->conn.sl, 0, 0);
	if (!ret)
		id->conn.state = RDMACM_CM_ESTABLISHED;
	pthread_mutex_unlock(&cm.lock);
	return ret ? rdmacm_err(-ret) : 0;
}

static void on_sidr_rep(struct rdmacm_id *id, const uint8_t *mad)
{
	const struct ibv_sa_path_rec *path = id->id.route.path_rec;
	uint8_t status = (uint8_t)ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_STATUS);
	struct rdma_cm_event ev;
	size_t room, off;

	if (id->conn.state != RDMACM_CM_SIDR_REQ_SENT)
		return;
	id->conn.tid = 0;
	id->conn.state = RDMACM_CM_IDLE;
	if (status != IBEMU_CM_SIDR_SUCCESS) {
		/* cma_sidr_rep_handler(): UNREACHABLE with the status. */
		event_plain(id, RDMA_CM_EVENT_UNREACHABLE, status);
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.event = RDMA_CM_EVENT_ESTABLISHED;
	ev.param.ud.qp_num = (uint32_t)ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_QPN);
	ev.param.ud.qkey = (uint32_t)ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_QKEY);
	ev.param.ud.ah_attr.dlid = ntohs(path->dlid);
	ev.param.ud.ah_attr.sl = path->sl;
	ev.param.ud.ah_attr.static_rate = path->rate;
	ev.param.ud.ah_attr.port_num = id->id.port_num;
	off = ibemu_cm_private(IBEMU_CM_ATTR_SIDR_REP, &room);
	rdmacm__event_queue_ex(id, NULL, &ev, mad + off, room);
}

/* --- the passive side ---------------------------------------------- */

/* The path of a REQ as the passive side takes it (cm_format_paths_from_req). */
static int path_from_req(struct rdma_cm_id *c, const uint8_t *mad,
			 uint16_t slid)
{
	struct ibv_sa_path_rec *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	memcpy(p->dgid.raw, mad + IBEMU_CM_REQ_PRIMARY_LOCAL_GID_OFF, 16);
	memcpy(p->sgid.raw, mad + IBEMU_CM_REQ_PRIMARY_REMOTE_GID_OFF, 16);
	p->dlid = htons(slid);
	p->slid = htons(
		(uint16_t)ibemu_cm_get(mad, IBEMU_CM_REQ_PRIMARY_REMOTE_LID));
	p->pkey = htons((uint16_t)ibemu_cm_get(mad, IBEMU_CM_REQ_PKEY));
	p->sl = (uint8_t)ibemu_cm_get(mad, IBEMU_CM_REQ_PRIMARY_SL);
	p->mtu = (uint8_t)ibemu_cm_get(mad, IBEMU_CM_REQ_PATH_MTU);
	p->rate = (uint8_t)ibemu_cm_get(mad, IBEMU_CM_REQ_PRIMARY_PACKET_RATE);
	p->packet_life_time = (uint8_t)ibemu_cm_get(
		mad, IBEMU_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT);
	if (p->packet_life_time)
		p->packet_life_time--;
	p->hop_limit =
		(uint8_t)ibemu_cm_get(mad, IBEMU_CM_REQ_PRIMARY_HOP_LIMIT);
	p->reversible = 1;
	p->numb_path = 1;
	free(c->route.path_rec);
	c->route.path_rec = p;
	c->route.num_paths = 1;
	return 0;
}

/* The addresses of a passive id: ours from the listener, the peer's from
 * the CMA header (or its GID for RDMA_PS_IB). */
static void child_addrs(struct rdmacm_id *child, struct rdmacm_id *l,
			const uint8_t *hdr)
{
	struct rdma_cm_id *c = &child->id;
	struct sockaddr_in *src = &c->route.addr.src_sin,
			   *dst = &c->route.addr.dst_sin;

	c->route.addr.src_storage = l->id.route.addr.src_storage;
	c->route.addr.addr.ibaddr = l->id.route.addr.addr.ibaddr;
	if (!hdr || (hdr[1] >> 4) != 4 ||
	    l->id.route.addr.src_addr.sa_family != AF_INET)
		return;
	/* The listener may be bound to the wildcard: the REQ names us. */
	memcpy(&src->sin_addr, hdr + 20 + 12, 4);
	dst->sin_family = AF_INET;
	memcpy(&dst->sin_port, hdr + 2, 2);
	memcpy(&dst->sin_addr, hdr + 4 + 12, 4);
}

static struct rdmacm_id *child_create(struct rdmacm_id *l)
{
	struct rdma_cm_id *c;
	struct rdmacm_id *child;

	/* A synchronous listener's requests are synchronous ids too, as
	 * rdma-core's ucma_process_conn_req() migrates them. */
	if (rdma_create_id(l->sync ? NULL : l->id.channel, &c, l->id.context,
			   l->id.ps))
		return NULL;
	child = rdmacm_id_of(c);
	c->verbs = l->id.verbs;
	c->port_num = l->id.port_num;
	c->qp_type = l->id.qp_type;
	child->dev = l->dev;
	child->listener = l;
	return child;
}

static void send_mra(struct rdmacm_id *id)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_MRA, new_tid());
	ibemu_cm_set(mad, IBEMU_CM_MRA_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_MRA_REMOTE_COMM_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_MRA_MESSAGE_MRAED, IBEMU_CM_MSG_REQ);
	ibemu_cm_set(mad, IBEMU_CM_MRA_SERVICE_TIMEOUT, CMA_MRA_TIMEOUT);
	cm_send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
}

/* A REQ that came again: its id, if we have it (cm_dup_req_handler). */
static struct rdmacm_id *dup_req(uint32_t remote_id, uint16_t slid)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		if (id->listener && id->conn.remote_id == remote_id &&
		    id->conn.peer_lid == slid)
			return id;
	return NULL;
}

static void reject_req(uint32_t remote_id, uint16_t dlid, uint8_t sl,
		       uint16_t reason)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_REJ, new_tid());
	ibemu_cm_set(mad, IBEMU_CM_REJ_REMOTE_COMM_ID, remote_id);
	ibemu_cm_set(mad, IBEMU_CM_REJ_MESSAGE_REJECTED, IBEMU_CM_MSG_REQ);
	ibemu_cm_set(mad, IBEMU_CM_REJ_REASON, reason);
	cm_send(mad, dlid, sl, 0, 0);
}

static void on_req(const uint8_t *mad, uint16_t slid, uint8_t sl, int sidr)
{
	uint64_t sid = ibemu_cm_get(mad, sidr ? IBEMU_CM_SIDR_REQ_SERVICE_ID
					      : IBEMU_CM_REQ_SERVICE_ID);
	uint32_t remote_id =
		(uint32_t)ibemu_cm_get(mad, sidr ? IBEMU_CM_SIDR_REQ_REQUEST_ID
						 : IBEMU_CM_REQ_LOCAL_COMM_ID);
	struct rdmacm_id *l = listener_by_sid(sid), *id;
	struct rdma_cm_event ev;
	size_t skip, room, off;

	id = dup_req(remote_id, slid);
	if (id) {
		if (id->conn.state == RDMACM_CM_REQ_RCVD ||
		    id->conn.state == RDMACM_CM_MRA_SENT) {
			id->conn.state = RDMACM_CM_MRA_SENT;
			if (!sidr)
				send_mra(id);
		}
		return;
	}
	if (!l || l->conn.pending >= l->conn.backlog) {
		/* ucma's full backlog: the REQ is refused as the kernel's
		 * destroyed conn_id refuses it. */
		if (!sidr)
			reject_req(remote_id, slid, sl,
				   l ? IBEMU_CM_REJ_CONSUMER_DEFINED
				     : IBEMU_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	id = child_create(l);
	if (!id)
		return;
	skip = cma_hdr_len(&l->id);
	id->conn.state = RDMACM_CM_REQ_RCVD;
	id->conn.local_id = new_comm_id();
	id->conn.remote_id = remote_id;
	id->conn.peer_lid = slid;
	id->conn.sl = sl;
	memcpy(id->conn.req_mad, mad, IBEMU_MAD_LEN);
	if (!sidr) {
		id->conn.remote_qpn =
			(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REQ_LOCAL_QPN);
		id->conn.remote_psn =
			(uint32_t)ibemu_cm_get(mad, IBEMU_CM_REQ_STARTING_PSN);
		id->conn.init_depth = (uint8_t)ibemu_cm_get(
			mad, IBEMU_CM_REQ_INITIATOR_DEPTH);
		id->conn.resp_res = (uint8_t)ibemu_cm_get(
			mad, IBEMU_CM_REQ_RESPONDER_RESOURCES);
		id->conn.retry =
			(uint8_t)ibemu_cm_get(mad, IBEMU_CM_REQ_RETRY_COUNT);
		id->conn.rnr_retry = (uint8_t)ibemu_cm_get(
			mad, IBEMU_CM_REQ_RNR_RETRY_COUNT);
		id->conn.srq = (uint8_t)ibemu_cm_get(mad, IBEMU_CM_REQ_SRQ);
		path_from_req(&id->id, mad, slid);
	} else {
		struct ibv_sa_path_rec *p = calloc(1, sizeof(*p));

		if (p) {
			p->dlid = htons(slid);
			p->sl = sl;
			p->pkey = htons((uint16_t)ibemu_cm_get(
				mad, IBEMU_CM_SIDR_REQ_PKEY));
			id->id.route.path_rec = p;
			id->id.route.num_paths = 1;
		}
	}
	off = ibemu_cm_private(ibemu_mad_get_attr_id(mad), &room);
	child_addrs(id, l, skip ? mad + off : NULL);
	cm_track(id);
	l->conn.pending++;
	memset(&ev, 0, sizeof(ev));
	ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
	ev.listen_id = &l->id;
	/* The events' view of the REQ: what the peer may use of ours. */
	ev.param.conn.responder_resources = id->conn.resp_res;
	ev.param.conn.initiator_depth = id->conn.init_depth;
	ev.param.conn.flow_control = (uint8_t)ibemu_cm_get(
		mad, IBEMU_CM_REQ_END_TO_END_FLOW_CONTROL);
	ev.param.conn.retry_count = id->conn.retry;
	ev.param.conn.rnr_retry_count = id->conn.rnr_retry;
	ev.param.conn.srq = id->conn.srq;
	ev.param.conn.qp_num = id->conn.remote_qpn;
	if (sidr)
		memset(&ev.param, 0, sizeof(ev.param));
	rdmacm__event_queue_ex(id, l->id.channel, &ev, mad + off + skip,
			       room - skip);
}

static void rep_build(uint8_t *mad, struct rdmacm_id *id,
		      const struct rdma_conn_param *p)
{
	struct rdma_cm_id *c = &id->id;

	ibemu_cm_init(mad, IBEMU_CM_ATTR_REP, id->conn.tid);
	ibemu_cm_set(mad, IBEMU_CM_REP_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_REP_REMOTE_COMM_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_REP_LOCAL_QPN,
		     c->qp ? c->qp->qp_num : p->qp_num);
	ibemu_cm_set(mad, IBEMU_CM_REP_STARTING_PSN, id->conn.local_psn);
	ibemu_cm_set(mad, IBEMU_CM_REP_RESPONDER_RESOURCES,
		     p->responder_resources);
	ibemu_cm_set(mad, IBEMU_CM_REP_INITIATOR_DEPTH, p->initiator_depth);
	ibemu_cm_set(mad, IBEMU_CM_REP_TARGET_ACK_DELAY, 0);
	ibemu_cm_set(mad, IBEMU_CM_REP_END_TO_END_FLOW, p->flow_control);
	ibemu_cm_set(mad, IBEMU_CM_REP_RNR_RETRY_COUNT,
		     p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count);
	ibemu_cm_set(mad, IBEMU_CM_REP_SRQ, p->srq || (c->qp && c->qp->srq));
	memcpy(mad + IBEMU_CM_REP_LOCAL_CA_GUID.byte, &cm.ca_guid, 8);
	pd_put(mad, IBEMU_CM_ATTR_REP, 0, p->private_data, p->private_data_len);
}

static int accept_ud(struct rdmacm_id *id, const struct rdma_conn_param *p)
{
	struct rdma_cm_id *c = &id->id;
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_SIDR_REP, new_tid());
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_REQUEST_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_STATUS, IBEMU_CM_SIDR_SUCCESS);
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_QPN,
		     c->qp ? c->qp->qp_num : p->qp_num);
	ibemu_cm_set(
		mad, IBEMU_CM_SIDR_REP_SERVICE_ID,
		ibemu_cm_get(id->conn.req_mad, IBEMU_CM_SIDR_REQ_SERVICE_ID));
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_QKEY, RDMA_UDP_QKEY);
	pd_put(mad, IBEMU_CM_ATTR_SIDR_REP, 0, p->private_data,
	       p->private_data_len);
	id->conn.state = RDMACM_CM_IDLE;
	return cm_send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
}

static void listener_release(struct rdmacm_id *id)
{
	if (id->listener && id->listener->conn.pending > 0)
		id->listener->conn.pending--;
	id->listener = NULL;
}

RDMACM_EXPORT int rdma_accept(struct rdma_cm_id *cm_id,
			      struct rdma_conn_param *p)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdma_conn_param none, resolved;
	uint8_t mad[IBEMU_MAD_LEN];
	int ret;

	if (!p) {
		memset(&none, 0, sizeof(none));
		none.responder_resources = id->conn.resp_res;
		none.initiator_depth = id->conn.init_depth;
		none.rnr_retry_count = 7;
		p = &none;
	}
	if (p->private_data_len && !p->private_data)
		return rdmacm_err(EINVAL);
	ret = conn_param_resolve(cm_id, p, &resolved);
	if (ret)
		return rdmacm_err(-ret);
	p = &resolved;
	pthread_mutex_lock(&cm.lock);
	if (id->conn.state != RDMACM_CM_REQ_RCVD &&
	    id->conn.state != RDMACM_CM_MRA_SENT) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(EINVAL);
	}
	listener_release(id);
	if (cm_id->qp_type == IBV_QPT_UD) {
		ret = accept_ud(id, p);
		pthread_mutex_unlock(&cm.lock);
		return ret ? rdmacm_err(-ret) : 0;
	}
	/* What we take of the peer's reads and give it (cma_accept_ib). */
	id->conn.resp_res = p->responder_resources < id->conn.init_depth
				    ? p->responder_resources
				    : id->conn.init_depth;
	id->conn.init_depth = p->initiator_depth;
	id->conn.local_psn = id->conn.local_id & 0xffffff;
	ret = qp_rtr_rts(cm_id);
	if (ret) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(-ret);
	}
	id->conn.tid = new_tid();
	rep_build(mad, id, p);
	id->conn.state = RDMACM_CM_REP_SENT;
	ret = cm_send(
		mad, id->conn.peer_lid, id->conn.sl,
		cm_ms(CMA_RESPONSE_TIMEOUT) +
			2 * cm_ms(cm_id->route.path_rec->packet_life_time),
		CMA_MAX_CM_RETRIES);
	pthread_mutex_unlock(&cm.lock);
	if (ret)
		return rdmacm_err(-ret);
	return id->sync ? rdmacm__sync_complete(id) : 0;
}

static int reject(struct rdma_cm_id *cm_id, const void *pd, uint8_t len)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	uint8_t mad[IBEMU_MAD_LEN];
	int sidr = cm_id->qp_type == IBV_QPT_UD, ret;
	uint16_t attr = sidr ? IBEMU_CM_ATTR_SIDR_REP : IBEMU_CM_ATTR_REJ;

	if ((len && !pd) || !pd_fits(cm_id, attr, len))
		return rdmacm_err(EINVAL);
	pthread_mutex_lock(&cm.lock);
	if (id->conn.state != RDMACM_CM_REQ_RCVD &&
	    id->conn.state != RDMACM_CM_MRA_SENT) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(EINVAL);
	}
	listener_release(id);
	ibemu_cm_init(mad, attr, new_tid());
	if (sidr) {
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_REQUEST_ID,
			     id->conn.remote_id);
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_STATUS,
			     IBEMU_CM_SIDR_REJECT);
	} else {
		ibemu_cm_set(mad, IBEMU_CM_REJ_LOCAL_COMM_ID,
			     id->conn.local_id);
		ibemu_cm_set(mad, IBEMU_CM_REJ_REMOTE_COMM_ID,
			     id->conn.remote_id);
		ibemu_cm_set(mad, IBEMU_CM_REJ_MESSAGE_REJECTED,
			     IBEMU_CM_MSG_REQ);
		ibemu_cm_set(mad, IBEMU_CM_REJ_REASON,
			     IBEMU_CM_REJ_CONSUMER_DEFINED);
	}
	pd_put(mad, attr, 0, pd, len);
	id->conn.state = RDMACM_CM_IDLE;
	ret = cm_send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
	pthread_mutex_unlock(&cm.lock);
	return ret ? rdmacm_err(-ret) : 0;
}

RDMACM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len);
}

RDMACM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id,
				  const void *private_data,
				  uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len);
}

/* --- disconnecting ------------------------------------------------- */

static void send_drep(struct rdmacm_id *id)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_DREP, new_tid());
	ibemu_cm_set(mad, IBEMU_CM_DREP_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_DREP_REMOTE_COMM_ID, id->conn.remote_id);
	cm_send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
}

/* Sends DREQ for an established connection; under cm.lock. */
static int send_dreq(struct rdmacm_id *id, int timeout_ms, int retries)
{
	uint8_t mad[IBEMU_MAD_LEN];

	id->conn.tid = new_tid();
	ibemu_cm_init(mad, IBEMU_CM_ATTR_DREQ, id->conn.tid);
	ibemu_cm_set(mad, IBEMU_CM_DREQ_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_DREQ_REMOTE_COMM_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_DREQ_REMOTE_QPN, id->conn.remote_qpn);
	return cm_send(mad, id->conn.peer_lid, id->conn.sl, timeout_ms,
		       retries);
}

RDMACM_EXPORT int rdma_disconnect(struct rdma_cm_id *cm_id)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	int ret = 0;

	pthread_mutex_lock(&cm.lock);
	switch (id->conn.state) {
	case RDMACM_CM_ESTABLISHED:
	case RDMACM_CM_REP_SENT:
		qp_error(cm_id);
		id->conn.state = RDMACM_CM_DREQ_SENT;
		ret = send_dreq(id,
				cm_ms(CMA_RESPONSE_TIMEOUT) +
					2 * cm_ms(cm_id->route.path_rec
							  ->packet_life_time),
				CMA_MAX_CM_RETRIES);
		break;
	case RDMACM_CM_DISCONNECTED:
	case RDMACM_CM_DREQ_SENT:
		/* The peer's DREQ came first (answered): the QP stops. */
		qp_error(cm_id);
		break;
	default:
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? rdmacm_err(-ret) : 0;
}

static void on_dreq(struct rdmacm_id *id)
{
	send_drep(id);
	if (id->conn.state == RDMACM_CM_ESTABLISHED ||
	    id->conn.state == RDMACM_CM_REP_SENT) {
		id->conn.state = RDMACM_CM_DISCONNECTED;
		id->conn.tid = 0;
		event_plain(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	}
}

static void on_drep(struct rdmacm_id *id)
{
	if (id->conn.state != RDMACM_CM_DREQ_SENT)
		return;
	id->conn.tid = 0;
	id->conn.state = RDMACM_CM_DISCONNECTED;
	event_plain(id, RDMA_CM_EVENT_DISCONNECTED, 0);
}

static void on_rej(struct rdmacm_id *id, const uint8_t *mad)
{
	uint16_t reason = (uint16_t)ibemu_cm_get(mad, IBEMU_CM_REJ_REASON);

	switch (id->conn.state) {
	case RDMACM_CM_REQ_SENT:
	case RDMACM_CM_REP_SENT:
	case RDMACM_CM_REP_RCVD:
		id->conn.tid = 0;
		id->conn.state = RDMACM_CM_IDLE;
		listener_release(id);
		/* cma_ib_handler(): REJECTED with the reason as status. */
		event_conn(id, RDMA_CM_EVENT_REJECTED, reason, mad, 0);
		return;
	case RDMACM_CM_ESTABLISHED:
		id->conn.state = RDMACM_CM_DISCONNECTED;
		event_plain(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	default:
		return;
	}
}

static void on_rtu(struct rdmacm_id *id, const uint8_t *mad)
{
	if (id->conn.state != RDMACM_CM_REP_SENT)
		return;
	id->conn.tid = 0;
	id->conn.state = RDMACM_CM_ESTABLISHED;
	event_conn(id, RDMA_CM_EVENT_ESTABLISHED, 0, mad, 0);
}

/* A request of ours that the daemon gave back: no answer in time. */
static void on_timeout(struct rdmacm_id *id)
{
	enum rdmacm_cm_state st = id->conn.state;

	id->conn.tid = 0;
	switch (st) {
	case RDMACM_CM_REQ_SENT:
	case RDMACM_CM_SIDR_REQ_SENT:
		id->conn.state = RDMACM_CM_IDLE;
		event_plain(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return;
	case RDMACM_CM_REP_SENT:
		/* IB_CM_REP_ERROR: the RTU never came. */
		id->conn.state = RDMACM_CM_IDLE;
		event_plain(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return;
	case RDMACM_CM_DREQ_SENT:
		id->conn.state = RDMACM_CM_DISCONNECTED;
		event_plain(id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
		return;
	default:
		return;
	}
}

/* --- the receiving thread ------------------------------------------ */

static void dispatch(const uint8_t *mad, uint16_t slid, uint8_t sl)
{
	uint16_t attr = ibemu_mad_get_attr_id(mad);
	uint32_t key;
	struct rdmacm_id *id;

	if (attr == IBEMU_CM_ATTR_REQ || attr == IBEMU_CM_ATTR_SIDR_REQ) {
		on_req(mad, slid, sl, attr == IBEMU_CM_ATTR_SIDR_REQ);
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
		on_rep(id, mad);
		break;
	case IBEMU_CM_ATTR_RTU:
		on_rtu(id, mad);
		break;
	case IBEMU_CM_ATTR_REJ:
		on_rej(id, mad);
		break;
	case IBEMU_CM_ATTR_DREQ:
		on_dreq(id);
		break;
	case IBEMU_CM_ATTR_DREP:
		on_drep(id);
		break;
	case IBEMU_CM_ATTR_SIDR_REP:
		on_sidr_rep(id, mad);
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
		event_plain(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
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
				on_timeout(id);
		} else if (len >= IBEMU_MAD_LEN &&
			   !ibemu_cm_check(mad, IBEMU_MAD_LEN)) {
			dispatch(mad, ntohs(umad->addr.lid), umad->addr.sl);
		}
		pthread_mutex_unlock(&cm.lock);
	}
	return NULL;
}

/* --- listening ----------------------------------------------------- */

static int listen_call(struct rdmacm_id *id, int on)
{
	struct ibemu_sess_cm_listen q;
	struct ibemu_sessc_refusal r;
	size_t got;
	int ret;

	memset(&q, 0, sizeof(q));
	q.service_id = service_id(&id->id);
	q.port = id->id.port_num;
	q.listen = (uint32_t)on;
	ibemu_sessc_refusal_clear(&r);
	ret = ibemu_sessc_call(&sessc, IBEMU_SESS_CM_LISTEN, &q, sizeof(q), &q,
			       sizeof(q), &got, &r);
	return ret;
}

/* The process's HCA port 1 for a listener bound to the wildcard. */
static int listen_bind(struct rdmacm_id *id)
{
	struct rdma_cm_id *c = &id->id;
	struct rdmacm_device *dev = rdmacm__device();
	struct rdmacm_where w;
	int ret;

	if (!dev)
		return -ENODEV;
	ret = rdmacm__host_lookup(ibv_get_device_name(dev->verbs->device), &w);
	if (ret)
		return ret;
	id->dev = dev;
	c->verbs = dev->verbs;
	c->port_num = (uint8_t)w.port;
	c->route.addr.addr.ibaddr.sgid = w.gid;
	c->route.addr.addr.ibaddr.pkey = htons(0xffff);
	/* The wildcard stays the id's address, as the kernel's. */
	return 0;
}

RDMACM_EXPORT int rdma_listen(struct rdma_cm_id *cm_id, int backlog)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	int ret;

	if (!cm_id->route.addr.src_addr.sa_family)
		return rdmacm_err(EINVAL); /* not bound */
	if (!cm_id->verbs) {
		ret = listen_bind(id);
		if (ret)
			return rdmacm_err(-ret);
	}
	pthread_mutex_lock(&cm.lock);
	if (id->conn.state == RDMACM_CM_LISTEN) {
		id->conn.backlog = backlog > 0 && backlog < BACKLOG_MAX
					   ? backlog
					   : BACKLOG_MAX;
		pthread_mutex_unlock(&cm.lock);
		return 0;
	}
	if (id->conn.state != RDMACM_CM_IDLE) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(EINVAL);
	}
	ret = cm_start(id);
	if (!ret)
		ret = listen_call(id, 1);
	if (!ret) {
		id->conn.state = RDMACM_CM_LISTEN;
		id->conn.backlog = backlog > 0 && backlog < BACKLOG_MAX
					   ? backlog
					   : BACKLOG_MAX;
		cm_track(id);
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? rdmacm_err(-ret) : 0;
}

RDMACM_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
				   struct rdma_cm_id **out)
{
	struct rdmacm_id *l = rdmacm_id_of(listen);
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr attr;
	int ret;

	if (!l->sync)
		return rdmacm_err(EINVAL);
	do {
		ret = rdma_get_cm_event(listen->channel, &ev);
		if (ret)
			return ret;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	} while (1);
	if (ev->status) {
		ret = rdmacm_err(ev->status < 0 ? -ev->status : ev->status);
		rdma_ack_cm_event(ev);
		return ret;
	}
	if (l->ep_qp_attr) {
		attr = *l->ep_qp_attr;
		ret = rdma_create_qp(ev->id, l->ep_pd, &attr);
		if (ret) {
			int e = errno;

			rdma_ack_cm_event(ev);
			errno = e;
			return ret;
		}
	}
	*out = ev->id;
	(*out)->event = ev;
	return 0;
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
		listen_call(id, 0);
		break;
	case RDMACM_CM_ESTABLISHED:
	case RDMACM_CM_REP_SENT:
		/* cm_destroy_id(): the peer hears DREQ, once. */
		send_dreq(id, 0, 0);
		break;
	case RDMACM_CM_REQ_RCVD:
	case RDMACM_CM_MRA_SENT:
		if (id->id.qp_type != IBV_QPT_UD)
			reject_req(id->conn.remote_id, id->conn.peer_lid,
				   id->conn.sl, IBEMU_CM_REJ_CONSUMER_DEFINED);
		break;
	default:
		break;
	}
	listener_release(id);
	/* Passive ids whose listener goes keep working, unlinked. */
	{
		struct rdmacm_id *o;

		for (o = cm.ids; o; o = o->cm_next)
			if (o->listener == id)
				o->listener = NULL;
	}
	cm_untrack(id);
	pthread_mutex_unlock(&cm.lock);
}
