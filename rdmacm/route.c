// SPDX-License-Identifier: MIT
/*
 * Route resolution as the kernel's rdma_cm does it (cma_query_ib_route):
 * a SubnAdm Get(PathRecord) from the id's port to the SM of the subnet,
 * with DGID, SGID, P_Key, NumbPath and Reversible in the ComponentMask,
 * sent as a GMP on QP1 through the process's port (libibumad: ibemu's,
 * under 'ibemu exec'), so it crosses the fabric in virtual time and shows
 * in the counters as any SA client's query. The answer fills
 * id->route.path_rec; rdma_init_qp_attr() hands its SL, MTU, rate and
 * packet lifetime to the QP's transitions.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad_hdr.h"
#include "rdmacm_int.h"

#define SA_CLASS_VERSION    2
#define SA_ATTR_PATH_RECORD 0x0035

/* PathRecord ComponentMask bits and byte offsets (IBA 15.2.5.16). */
#define PR_COMP_DGID	   (1ull << 2)
#define PR_COMP_SGID	   (1ull << 3)
#define PR_COMP_REVERSIBLE (1ull << 11)
#define PR_COMP_NUMB_PATH  (1ull << 12)
#define PR_COMP_PKEY	   (1ull << 13)
#define PR_OFF_DGID	   8
#define PR_OFF_SGID	   24
#define PR_OFF_DLID	   40
#define PR_OFF_SLID	   42
#define PR_OFF_FLOW	   44 /* RawTraffic, FlowLabel, HopLimit */
#define PR_OFF_TCLASS	   48
#define PR_OFF_NUMB_PATH   49 /* Reversible, NumbPath */
#define PR_OFF_PKEY	   50
#define PR_OFF_SL	   52 /* QoSClass, SL */
#define PR_OFF_MTU	   54
#define PR_OFF_RATE	   55
#define PR_OFF_PLT	   56
#define PR_OFF_PREF	   57

static void build_query(uint8_t *mad, const struct rdma_cm_id *id)
{
	uint8_t *pr = mad + IBEMU_SA_DATA_OFF;
	const struct rdma_ib_addr *ib = &id->route.addr.addr.ibaddr;

	memset(mad, 0, IBEMU_MAD_LEN);
	ibemu_mad_set_base_version(mad, IBEMU_MAD_BASE_VERSION);
	ibemu_mad_set_mgmt_class(mad, IBEMU_MAD_CLASS_SA);
	ibemu_mad_set_class_version(mad, SA_CLASS_VERSION);
	ibemu_mad_set_method(mad, IBEMU_MAD_METHOD_GET);
	ibemu_mad_set_attr_id(mad, SA_ATTR_PATH_RECORD);
	ibemu_sa_set_comp_mask(mad, PR_COMP_DGID | PR_COMP_SGID |
					    PR_COMP_REVERSIBLE |
					    PR_COMP_NUMB_PATH | PR_COMP_PKEY);
	memcpy(pr + PR_OFF_DGID, ib->dgid.raw, 16);
	memcpy(pr + PR_OFF_SGID, ib->sgid.raw, 16);
	pr[PR_OFF_NUMB_PATH] = 0x80 | 1; /* reversible, one path */
	memcpy(pr + PR_OFF_PKEY, &ib->pkey, 2);
}

static void parse_record(const uint8_t *pr, struct ibv_sa_path_rec *p)
{
	uint32_t flow;

	memset(p, 0, sizeof(*p));
	memcpy(p->dgid.raw, pr + PR_OFF_DGID, 16);
	memcpy(p->sgid.raw, pr + PR_OFF_SGID, 16);
	memcpy(&p->dlid, pr + PR_OFF_DLID, 2);
	memcpy(&p->slid, pr + PR_OFF_SLID, 2);
	flow = (uint32_t)ibemu__mad_get_be(pr + PR_OFF_FLOW, 4);
	p->raw_traffic = flow >> 31;
	p->flow_label = htonl((flow >> 8) & 0xfffff);
	p->hop_limit = flow & 0xff;
	p->traffic_class = pr[PR_OFF_TCLASS];
	p->reversible = pr[PR_OFF_NUMB_PATH] >> 7;
	p->numb_path = pr[PR_OFF_NUMB_PATH] & 0x7f;
	memcpy(&p->pkey, pr + PR_OFF_PKEY, 2);
	p->sl = pr[PR_OFF_SL + 1] & 0xf;
	p->mtu_selector = pr[PR_OFF_MTU] >> 6;
	p->mtu = pr[PR_OFF_MTU] & 0x3f;
	p->rate_selector = pr[PR_OFF_RATE] >> 6;
	p->rate = pr[PR_OFF_RATE] & 0x3f;
	p->packet_life_time_selector = pr[PR_OFF_PLT] >> 6;
	p->packet_life_time = pr[PR_OFF_PLT] & 0x3f;
	p->preference = pr[PR_OFF_PREF];
}

int rdmacm__path_query(struct rdmacm_id *id, int timeout_ms,
		       struct ibv_sa_path_rec *out)
{
	uint8_t mad[IBEMU_MAD_LEN];
	int ret;

	build_query(mad, &id->id);
	ret = rdmacm__sa_call(&id->id, mad, timeout_ms, 0);
	if (ret)
		return ret;
	/* Errors as ib_sa reports them: an SA error status is -EINVAL. */
	if (ibemu_mad_get_method(mad) != IBEMU_MAD_METHOD_GET_RESP ||
	    ibemu_mad_get_status(mad))
		return -EINVAL;
	parse_record(mad + IBEMU_SA_DATA_OFF, out);
	return 0;
}

/* rdma-core's rdma_init_qp_attr() asks the kernel; ours derives the same
 * attributes from the id: its port and P_Key index, and from RTR on the
 * path record (DLID, SL, rate, MTU) and the packet lifetime. */
RDMACM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id,
				    struct ibv_qp_attr *qp_attr,
				    int *qp_attr_mask)
{
	const struct ibv_sa_path_rec *p = id->route.path_rec;
	const struct rdmacm_conn *c = &rdmacm_id_of(id)->conn;

	if (!id->verbs || !qp_attr || !qp_attr_mask)
		return rdmacm_err(EINVAL);
	switch (qp_attr->qp_state) {
	case IBV_QPS_INIT:
		qp_attr->port_num = id->port_num;
		qp_attr->pkey_index = 0;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			qp_attr->qkey = RDMA_UDP_QKEY;
			*qp_attr_mask |= IBV_QP_QKEY;
			return 0;
		}
		/* ib_cm's cm_init_qp_init_attr(): once connecting, the peer
		 * may write, and read if we give it responder resources. */
		qp_attr->qp_access_flags = 0;
		if (c->local_id) {
			qp_attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			if (c->resp_res)
				qp_attr->qp_access_flags |=
					IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_ATOMIC;
		}
		*qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTR:
		*qp_attr_mask = IBV_QP_STATE;
		if (id->qp_type == IBV_QPT_UD)
			return 0;
		if (!p)
			return rdmacm_err(EINVAL);
		memset(&qp_attr->ah_attr, 0, sizeof(qp_attr->ah_attr));
		qp_attr->ah_attr.dlid = ntohs(p->dlid);
		qp_attr->ah_attr.sl = p->sl;
		qp_attr->ah_attr.static_rate = p->rate;
		qp_attr->ah_attr.port_num = id->port_num;
		qp_attr->path_mtu = p->mtu;
		/* The peer's QPN and PSN, from REQ or REP (cm.c). */
		qp_attr->dest_qp_num = c->remote_qpn;
		qp_attr->rq_psn = c->remote_psn;
		qp_attr->max_dest_rd_atomic = c->local_id ? c->resp_res : 1;
		qp_attr->min_rnr_timer = 12;
		*qp_attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_RQ_PSN |
				 IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER | IBV_QP_DEST_QPN;
		return 0;
	case IBV_QPS_RTS:
		qp_attr->sq_psn = c->local_psn;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (id->qp_type == IBV_QPT_UD)
			return 0;
		/* IBA 12.7.34: local ACK timeout from the packet lifetime. */
		qp_attr->timeout = p ? p->packet_life_time + 1 : 14;
		qp_attr->retry_cnt = c->local_id ? c->retry : 7;
		qp_attr->rnr_retry = c->local_id ? c->rnr_retry : 7;
		qp_attr->max_rd_atomic = c->local_id ? c->init_depth : 1;
		*qp_attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return rdmacm_err(EINVAL);
	}
}
