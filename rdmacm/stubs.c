// SPDX-License-Identifier: MIT
/*
 * The entry points of librdmacm not implemented: ECE and rdma_notify,
 * exported so that every program loads, each failing with ENOSYS, the
 * errno rdma-core's librdmacm passes on when the kernel's rdma_ucm lacks a
 * command (ucma_write() answers -ENOSYS), and never touching its
 * arguments.
 */
#include <errno.h>

#include "rdmacm_int.h"

#define NOT_YET() rdmacm_err(ENOSYS)

RDMACM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
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
