// SPDX-License-Identifier: MIT
/*
 * Ending connections: rdma_disconnect sends DREQ, a DREQ is answered
 * DREP, and REJ, RTU and the requests' timeouts end what was under way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/umad.h>

#include "cm_int.h"
#include "mad_cm.h"

/* --- disconnecting ------------------------------------------------- */

static void send_drep(struct rdmacm_id *id)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_DREP, cm__new_tid());
	ibemu_cm_set(mad, IBEMU_CM_DREP_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_DREP_REMOTE_COMM_ID, id->conn.remote_id);
	cm__send(mad, id->conn.peer_lid, id->conn.sl, 0, 0);
}

/* Sends DREQ for an established connection; under cm.lock. */
int cm__send_dreq(struct rdmacm_id *id, int timeout_ms, int retries)
{
	uint8_t mad[IBEMU_MAD_LEN];

	id->conn.tid = cm__new_tid();
	ibemu_cm_init(mad, IBEMU_CM_ATTR_DREQ, id->conn.tid);
	ibemu_cm_set(mad, IBEMU_CM_DREQ_LOCAL_COMM_ID, id->conn.local_id);
	ibemu_cm_set(mad, IBEMU_CM_DREQ_REMOTE_COMM_ID, id->conn.remote_id);
	ibemu_cm_set(mad, IBEMU_CM_DREQ_REMOTE_QPN, id->conn.remote_qpn);
	return cm__send(mad, id->conn.peer_lid, id->conn.sl, timeout_ms,
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
		cm__qp_error(cm_id);
		id->conn.state = RDMACM_CM_DREQ_SENT;
		ret = cm__send_dreq(
			id,
			cm__ms(CMA_RESPONSE_TIMEOUT) +
				2 * cm__ms(cm_id->route.path_rec
						   ->packet_life_time),
			CMA_MAX_CM_RETRIES);
		break;
	case RDMACM_CM_DISCONNECTED:
	case RDMACM_CM_DREQ_SENT:
		/* The peer's DREQ came first (answered): the QP stops. */
		cm__qp_error(cm_id);
		break;
	default:
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm.lock);
	return ret ? rdmacm_err(-ret) : 0;
}

void cm__on_dreq(struct rdmacm_id *id)
{
	send_drep(id);
	if (id->conn.state == RDMACM_CM_ESTABLISHED ||
	    id->conn.state == RDMACM_CM_REP_SENT) {
		id->conn.state = RDMACM_CM_DISCONNECTED;
		id->conn.tid = 0;
		cm__event_plain(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	}
}

void cm__on_drep(struct rdmacm_id *id)
{
	if (id->conn.state != RDMACM_CM_DREQ_SENT)
		return;
	id->conn.tid = 0;
	id->conn.state = RDMACM_CM_DISCONNECTED;
	cm__event_plain(id, RDMA_CM_EVENT_DISCONNECTED, 0);
}

void cm__on_rej(struct rdmacm_id *id, const uint8_t *mad)
{
	uint16_t reason = (uint16_t)ibemu_cm_get(mad, IBEMU_CM_REJ_REASON);

	switch (id->conn.state) {
	case RDMACM_CM_REQ_SENT:
	case RDMACM_CM_REP_SENT:
	case RDMACM_CM_REP_RCVD:
		id->conn.tid = 0;
		id->conn.state = RDMACM_CM_IDLE;
		cm__listener_release(id);
		/* cma_ib_handler(): REJECTED with the reason as status. */
		cm__event_conn(id, RDMA_CM_EVENT_REJECTED, reason, mad, 0);
		return;
	case RDMACM_CM_ESTABLISHED:
		id->conn.state = RDMACM_CM_DISCONNECTED;
		cm__event_plain(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	default:
		return;
	}
}

void cm__on_rtu(struct rdmacm_id *id, const uint8_t *mad)
{
	if (id->conn.state != RDMACM_CM_REP_SENT)
		return;
	id->conn.tid = 0;
	id->conn.state = RDMACM_CM_ESTABLISHED;
	cm__event_conn(id, RDMA_CM_EVENT_ESTABLISHED, 0, mad, 0);
}

/* A request of ours that the daemon gave back: no answer in time. */
void cm__on_timeout(struct rdmacm_id *id)
{
	enum rdmacm_cm_state st = id->conn.state;

	id->conn.tid = 0;
	switch (st) {
	case RDMACM_CM_REQ_SENT:
	case RDMACM_CM_SIDR_REQ_SENT:
		id->conn.state = RDMACM_CM_IDLE;
		cm__event_plain(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return;
	case RDMACM_CM_REP_SENT:
		/* IB_CM_REP_ERROR: the RTU never came. */
		id->conn.state = RDMACM_CM_IDLE;
		cm__event_plain(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return;
	case RDMACM_CM_DREQ_SENT:
		id->conn.state = RDMACM_CM_DISCONNECTED;
		cm__event_plain(id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
		return;
	default:
		return;
	}
}
