// SPDX-License-Identifier: MIT
/*
 * The CM protocol's parts (cm.c: the agent, its MADs, the receiving
 * thread; cm_active.c: REQ and SIDR_REQ, REP; cm_passive.c: listening,
 * REQ, accept and reject; cm_close.c: DREQ, DREP, REJ, RTU, timeouts),
 * and what they share: the agent's state, under cm.lock.
 */
#ifndef IBEMU_RDMACM_CM_INT_H
#define IBEMU_RDMACM_CM_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rdmacm_int.h"

#define GSI_QKEY	     0x80010000u
#define CMA_RESPONSE_TIMEOUT 20 /* cma.c's CMA_CM_RESPONSE_TIMEOUT */
#define CMA_MAX_CM_RETRIES   15
#define CMA_MRA_TIMEOUT	     24 /* CMA_CM_MRA_SETTING's */
#define CMA_HDR_LEN	     36
#define CMA_VERSION	     0x00
#define BACKLOG_MAX	     1024

/* The process's CM agent: one umad port, the ids it knows. */
struct cm_agent {
	pthread_mutex_t lock;
	int fd, agent;
	uint8_t port;
	uint16_t lid;
	uint64_t ca_guid; /* network order */
	struct rdmacm_id *ids;
	uint32_t next_id;
	uint32_t next_tid;
	pthread_t thread;
};
extern struct cm_agent cm;

/* cm.c: the agent and its MADs, tracking, the header rdma_cm puts
 * before the private data, the QP moves, the events. */
int cm__ms(int t);
int cm__send(const uint8_t *mad, uint16_t dlid, uint8_t sl, int timeout_ms,
	     int retries);
int cm__start(struct rdmacm_id *id);
void cm__track(struct rdmacm_id *id);
void cm__untrack(struct rdmacm_id *id);
void cm__cma_hdr_fill(uint8_t *p, struct rdma_cm_id *c);
size_t cm__cma_hdr_len(const struct rdma_cm_id *c);
uint64_t cm__dst_service_id(struct rdma_cm_id *c);
void cm__event_conn(struct rdmacm_id *id, enum rdma_cm_event_type type,
		    int status, const uint8_t *mad, size_t skip);
void cm__event_plain(struct rdmacm_id *id, enum rdma_cm_event_type type,
		     int status);
struct rdmacm_id *cm__listener_by_sid(uint64_t sid);
uint32_t cm__new_comm_id(void);
uint64_t cm__new_tid(void);
int cm__pd_fits(const struct rdma_cm_id *c, uint16_t attr, size_t len);
void cm__pd_put(uint8_t *mad, uint16_t attr, size_t skip, const void *pd,
		size_t len);
void cm__qp_error(struct rdma_cm_id *c);
int cm__qp_rtr_rts(struct rdma_cm_id *c);
uint64_t cm__service_id(const struct rdma_cm_id *c);
/* A REJ of message 'msg' (IBEMU_CM_MSG_*) for 'reason' on the connection
 * of 'id', with a TID of its own. */
void cm__rej_build(uint8_t *mad, const struct rdmacm_id *id, uint16_t msg,
		   uint16_t reason);

/* cm_active.c: the active side. */
int cm__conn_param_resolve(struct rdma_cm_id *cm_id,
			   const struct rdma_conn_param *in,
			   struct rdma_conn_param *out);
void cm__on_rep(struct rdmacm_id *id, const uint8_t *mad);
void cm__on_sidr_rep(struct rdmacm_id *id, const uint8_t *mad);

/* cm_passive.c: the passive side and listening. */
int cm__listen_call(struct rdmacm_id *id, int on);
void cm__listener_release(struct rdmacm_id *id);
void cm__on_req(const uint8_t *mad, uint16_t slid, uint8_t sl, int sidr);
void cm__reject_req(uint32_t remote_id, uint16_t dlid, uint8_t sl,
		    uint16_t reason);

/* cm_close.c: disconnecting, rejects, RTU, timeouts. */
void cm__on_drep(struct rdmacm_id *id);
void cm__on_dreq(struct rdmacm_id *id);
void cm__on_rej(struct rdmacm_id *id, const uint8_t *mad);
void cm__on_rtu(struct rdmacm_id *id, const uint8_t *mad);
void cm__on_timeout(struct rdmacm_id *id);
int cm__send_dreq(struct rdmacm_id *id, int timeout_ms, int retries);

#endif
