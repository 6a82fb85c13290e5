// SPDX-License-Identifier: MIT
/*
 * The passive side of the CM protocol: rdma_listen (the daemon routes
 * REQs by service ID: CM_LISTEN), a REQ makes a child id and its
 * CONNECT_REQUEST event, rdma_accept answers REP (or SIDR_REP),
 * rdma_reject REJ; a REQ again before the answer is MRAed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/umad.h>

#include "cm_int.h"
#include "mad_cm.h"
#include "sessc.h"

static struct ibemu_sessc sessc = IBEMU_SESSC_INIT("librdmacm", NULL);

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

	ibemu_cm_init(mad, IBEMU_CM_ATTR_MRA, cm__new_tid());
	ibemu_cm_set(mad, IBEMU_CM_MRA_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_MRA_REMOTE_COMM_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_MRA_MESSAGE_MRAED, IBEMU_CM_MSG_REQ);
	ibemu_cm_set(mad, IBEMU_CM_MRA_SERVICE_TIMEOUT, CMA_MRA_TIMEOUT);
	cm__send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
}

/* A REQ that came again: its id, if we have it (cm_dup_req_handler). */
/*
 * The id a REQ from Comm ID 'remote_id' at 'slid' already made, if it
 * came before: accepted or not (rdma_accept gives the listener's backlog
 * slot back, so the link to the listener does not say).
 */
static struct rdmacm_id *dup_req(uint32_t remote_id, uint16_t slid)
{
	struct rdmacm_id *id;

	for (id = cm.ids; id; id = id->cm_next)
		if (id->conn.state != RDMACM_CM_IDLE &&
		    id->conn.state != RDMACM_CM_LISTEN &&
		    id->conn.remote_id == remote_id &&
		    id->conn.peer_lid == slid)
			return id;
	return NULL;
}

void cm__reject_req(uint32_t remote_id, uint16_t dlid, uint8_t sl,
		    uint16_t reason)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_REJ, cm__new_tid());
	ibemu_cm_set(mad, IBEMU_CM_REJ_REMOTE_COMM_ID, remote_id);
	ibemu_cm_set(mad, IBEMU_CM_REJ_MESSAGE_REJECTED, IBEMU_CM_MSG_REQ);
	ibemu_cm_set(mad, IBEMU_CM_REJ_REASON, reason);
	cm__send(mad, dlid, sl, 0, 0);
}

void cm__on_req(const uint8_t *mad, uint16_t slid, uint8_t sl, int sidr)
{
	uint64_t sid = ibemu_cm_get(mad, sidr ? IBEMU_CM_SIDR_REQ_SERVICE_ID
					      : IBEMU_CM_REQ_SERVICE_ID);
	uint32_t remote_id =
		(uint32_t)ibemu_cm_get(mad, sidr ? IBEMU_CM_SIDR_REQ_REQUEST_ID
						 : IBEMU_CM_REQ_LOCAL_COMM_ID);
	struct rdmacm_id *l = cm__listener_by_sid(sid), *id;
	struct rdma_cm_event ev;
	size_t skip, room, off;

	/* ib_cm's cm_dup_req_handler(): a REQ not answered yet is MRAed;
	 * once answered, the answer's own retries carry it, and the REQ
	 * again is dropped (a REQ the server's REP crossed, or one resent
	 * before the REP arrived, makes no second connection). */
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
			cm__reject_req(remote_id, slid, sl,
				       l ? IBEMU_CM_REJ_CONSUMER_DEFINED
					 : IBEMU_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	id = child_create(l);
	if (!id)
		return;
	skip = cm__cma_hdr_len(&l->id);
	id->conn.state = RDMACM_CM_REQ_RCVD;
	id->conn.local_id = cm__new_comm_id();
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
	cm__track(id);
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
	cm__pd_put(mad, IBEMU_CM_ATTR_REP, 0, p->private_data,
		   p->private_data_len);
}

static int accept_ud(struct rdmacm_id *id, const struct rdma_conn_param *p)
{
	struct rdma_cm_id *c = &id->id;
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_SIDR_REP, cm__new_tid());
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_REQUEST_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_STATUS, IBEMU_CM_SIDR_SUCCESS);
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_QPN,
		     c->qp ? c->qp->qp_num : p->qp_num);
	ibemu_cm_set(
		mad, IBEMU_CM_SIDR_REP_SERVICE_ID,
		ibemu_cm_get(id->conn.req_mad, IBEMU_CM_SIDR_REQ_SERVICE_ID));
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_QKEY, RDMA_UDP_QKEY);
	cm__pd_put(mad, IBEMU_CM_ATTR_SIDR_REP, 0, p->private_data,
		   p->private_data_len);
	id->conn.state = RDMACM_CM_IDLE;
	return cm__send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
}

void cm__listener_release(struct rdmacm_id *id)
{
	if (id->listener && id->listener->conn.pending > 0)
		id->listener->conn.pending--;
	id->listener = NULL;
}

/*
 * The program answers the request of passive id 'id': 0 with cm.lock
 * held and the listener's backlog slot given back, or -EINVAL (not
 * locked) if nothing waits for an answer.
 */
static int request_take(struct rdmacm_id *id)
{
	pthread_mutex_lock(&cm.lock);
	if (id->conn.state != RDMACM_CM_REQ_RCVD &&
	    id->conn.state != RDMACM_CM_MRA_SENT) {
		pthread_mutex_unlock(&cm.lock);
		return -EINVAL;
	}
	cm__listener_release(id);
	return 0;
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
	ret = cm__conn_param_resolve(cm_id, p, &resolved);
	if (ret)
		return rdmacm_err(-ret);
	p = &resolved;
	if (request_take(id))
		return rdmacm_err(EINVAL);
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
	ret = cm__qp_rtr_rts(cm_id);
	if (ret) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(-ret);
	}
	id->conn.tid = cm__new_tid();
	rep_build(mad, id, p);
	id->conn.state = RDMACM_CM_REP_SENT;
	ret = cm__send(
		mad, id->conn.peer_lid, id->conn.sl,
		cm__ms(CMA_RESPONSE_TIMEOUT) +
			2 * cm__ms(cm_id->route.path_rec->packet_life_time),
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

	if ((len && !pd) || !cm__pd_fits(cm_id, attr, len))
		return rdmacm_err(EINVAL);
	if (request_take(id))
		return rdmacm_err(EINVAL);
	if (sidr) {
		ibemu_cm_init(mad, attr, cm__new_tid());
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_REQUEST_ID,
			     id->conn.remote_id);
		ibemu_cm_set(mad, IBEMU_CM_SIDR_REP_STATUS,
			     IBEMU_CM_SIDR_REJECT);
	} else {
		cm__rej_build(mad, id, IBEMU_CM_MSG_REQ,
			      IBEMU_CM_REJ_CONSUMER_DEFINED);
	}
	cm__pd_put(mad, attr, 0, pd, len);
	id->conn.state = RDMACM_CM_IDLE;
	ret = cm__send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
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

/* --- listening ----------------------------------------------------- */

int cm__listen_call(struct rdmacm_id *id, int on)
{
	struct ibemu_sess_cm_listen q;
	struct ibemu_sessc_refusal r;
	size_t got;
	int ret;

	memset(&q, 0, sizeof(q));
	q.service_id = cm__service_id(&id->id);
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
	ret = cm__start(id);
	if (!ret)
		ret = cm__listen_call(id, 1);
	if (!ret) {
		id->conn.state = RDMACM_CM_LISTEN;
		id->conn.backlog = backlog > 0 && backlog < BACKLOG_MAX
					   ? backlog
					   : BACKLOG_MAX;
		cm__track(id);
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
