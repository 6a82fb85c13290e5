// SPDX-License-Identifier: MIT
/*
 * The entry points of librdmacm that need the CM protocol on the wire
 * (connect, listen, accept, multicast: issue 23's next part) and the
 * rsockets API: exported so that every program loads, each failing with
 * ENOSYS, the errno rdma-core's librdmacm passes on when the kernel's
 * rdma_ucm lacks a command (ucma_write() answers -ENOSYS, and rsocket.c
 * tests for it), and never touching its arguments.
 */
#include <errno.h>
#include <rdma/rsocket.h>

#include "rdmacm_int.h"

#define NOT_YET() rdmacm_err(ENOSYS)

RDMACM_EXPORT int rdma_connect(struct rdma_cm_id *id,
			       struct rdma_conn_param *conn_param)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
				   struct rdma_cm_id **id)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_accept(struct rdma_cm_id *id,
			      struct rdma_conn_param *conn_param)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id,
				  const void *private_data,
				  uint8_t private_data_len)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id,
				      struct sockaddr *addr, void *context)
{
	return NOT_YET();
}

RDMACM_EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *id,
		       struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id,
				       struct sockaddr *addr)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return NOT_YET();
}

RDMACM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id,
				      struct ibv_ece *ece)
{
	return NOT_YET();
}
