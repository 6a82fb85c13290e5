// SPDX-License-Identifier: MIT
/*
 * The active side of the CM protocol: rdma_connect sends REQ (or
 * SIDR_REQ for UD), a REP moves the QP to RTR and RTS and answers RTU (or
 * waits for rdma_establish), a SIDR_REP resolves the UD peer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/umad.h>

#include "cm_int.h"
#include "mad_cm.h"

/* --- the active side ----------------------------------------------- */

static void req_build(uint8_t *mad, struct rdmacm_id *id,
		      const struct rdma_conn_param *p)
{
	struct rdma_cm_id *c = &id->id;
	const struct ibv_sa_path_rec *path = c->route.path_rec;
	uint32_t qpn = c->qp ? c->qp->qp_num : p->qp_num;

	ibemu_cm_init(mad, IBEMU_CM_ATTR_REQ, id->conn.tid);
	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_REQ_SERVICE_ID, cm__dst_service_id(c));
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
	if (cm__cma_hdr_len(c))
		cm__cma_hdr_fill(mad + IBEMU_CM_REQ_PRIVATE_OFF, c);
	cm__pd_put(mad, IBEMU_CM_ATTR_REQ, cm__cma_hdr_len(c), p->private_data,
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
	ibemu_cm_set(mad, IBEMU_CM_SIDR_REQ_SERVICE_ID, cm__dst_service_id(c));
	if (cm__cma_hdr_len(c))
		cm__cma_hdr_fill(mad + IBEMU_CM_SIDR_REQ_PRIVATE_OFF, c);
	if (p)
		cm__pd_put(mad, IBEMU_CM_ATTR_SIDR_REQ, cm__cma_hdr_len(c),
			   p->private_data, p->private_data_len);
}

/*
 * The conn_param as the CM uses it: RDMA_MAX_RESP_RES and
 * RDMA_MAX_INIT_DEPTH stand for the device's maxima (libfabric's verbs
 * provider passes them), and more than the device allows is EINVAL, as
 * rdma-core's ucma_valid_param() and its connect and accept have it.
 * 0 or -errno.
 */
int cm__conn_param_resolve(struct rdma_cm_id *cm_id,
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
	if (!cm__pd_fits(cm_id, attr, p->private_data_len) ||
	    (p->private_data_len && !p->private_data))
		return rdmacm_err(EINVAL);
	ret = cm__conn_param_resolve(cm_id, p, &resolved);
	if (ret)
		return rdmacm_err(-ret);
	p = &resolved;
	pthread_mutex_lock(&cm.lock);
	if (id->conn.state != RDMACM_CM_IDLE) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(EINVAL);
	}
	ret = cm__start(id);
	if (ret) {
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(-ret);
	}
	id->conn.local_id = cm__new_comm_id();
	id->conn.tid = cm__new_tid();
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
		timeout = cm__ms(CMA_RESPONSE_TIMEOUT);
		id->conn.state = RDMACM_CM_SIDR_REQ_SENT;
	} else {
		req_build(mad, id, p);
		timeout = cm__ms(path->packet_life_time) * 2 +
			  cm__ms(CMA_RESPONSE_TIMEOUT);
		id->conn.state = RDMACM_CM_REQ_SENT;
	}
	cm__track(id);
	ret = cm__send(mad, id->conn.peer_lid, id->conn.sl, timeout,
		       CMA_MAX_CM_RETRIES);
	if (ret) {
		cm__untrack(id);
		id->conn.state = RDMACM_CM_IDLE;
		pthread_mutex_unlock(&cm.lock);
		return rdmacm_err(-ret);
	}
	pthread_mutex_unlock(&cm.lock);
	return id->sync ? rdmacm__sync_complete(id) : 0;
}

/* REP: the QP to RTR and RTS with the peer's QPN and PSN, then RTU. */
void cm__on_rep(struct rdmacm_id *id, const uint8_t *mad)
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
		cm__event_conn(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, mad, 0);
		return;
	}
	if (cm__qp_rtr_rts(c)) {
		cm__rej_build(rtu, id, IBEMU_CM_MSG_REP,
			      IBEMU_CM_REJ_CONSUMER_DEFINED);
		cm__send(rtu, id->conn.peer_lid, id->conn.sl, 0, 0);
		id->conn.state = RDMACM_CM_IDLE;
		cm__event_plain(id, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL);
		return;
	}
	ibemu_cm_init(rtu, IBEMU_CM_ATTR_RTU, cm__new_tid());
	ibemu_cm_set(rtu, IBEMU_CM_RTU_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(rtu, IBEMU_CM_RTU_REMOTE_COMM_ID, id->conn.remote_id);
	cm__send(rtu, id->conn.peer_lid, id->conn.sl, 0, 0);
	id->conn.state = RDMACM_CM_ESTABLISHED;
	cm__event_conn(id, RDMA_CM_EVENT_ESTABLISHED, 0, mad, 0);
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
	ibemu_cm_init(rtu, IBEMU_CM_ATTR_RTU, cm__new_tid());
	ibemu_cm_set(rtu, IBEMU_CM_RTU_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(rtu, IBEMU_CM_RTU_REMOTE_COMM_ID, id->conn.remote_id);
	ret = cm__send(rtu, id->conn.peer_lid, id->conn.sl, 0, 0);
	if (!ret)
		id->conn.state = RDMACM_CM_ESTABLISHED;
	pthread_mutex_unlock(&cm.lock);
	return ret ? rdmacm_err(-ret) : 0;
}

void cm__on_sidr_rep(struct rdmacm_id *id, const uint8_t *mad)
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
		cm__event_plain(id, RDMA_CM_EVENT_UNREACHABLE, status);
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
