// SPDX-License-Identifier: MIT
/*
 * Queue pairs, shared receive queues and multicast attachment: they carry
 * traffic, and the transport that moves it (hca/, through the daemon) is
 * not there yet. Until it is, each entry point fails the way its man page
 * documents (NULL and errno EOPNOTSUPP for a constructor, EOPNOTSUPP
 * returned otherwise), so a program reports a clear error rather than
 * crash. No QP or SRQ can exist, so the calls that take one are reached
 * only with pointers a program forged.
 */
#include "verbs_int.h"

VERBS_EXPORT struct ibv_qp *ibemu__ibv_create_qp(struct ibv_pd *pd,
						 struct ibv_qp_init_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_create_qp, ibv_create_qp, "IBVERBS_1.1");
struct ibv_qp *ibemu__ibv_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_query_qp(struct ibv_qp *qp,
				     struct ibv_qp_attr *attr, int attr_mask,
				     struct ibv_qp_init_attr *init_attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_qp, ibv_query_qp, "IBVERBS_1.1");
int ibemu__ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_modify_qp(struct ibv_qp *qp,
				      struct ibv_qp_attr *attr, int attr_mask);
VERBS_SYMVER_DEFAULT(ibemu__ibv_modify_qp, ibv_modify_qp, "IBVERBS_1.1");
int ibemu__ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_destroy_qp(struct ibv_qp *qp);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_qp, ibv_destroy_qp, "IBVERBS_1.1");
int ibemu__ibv_destroy_qp(struct ibv_qp *qp)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					    enum ibv_wr_opcode op,
					    uint32_t flags)
{
	return 0; /* no guarantee: the documented answer of a device
		     that gives none */
}

/* Enhanced Connection Establishment (RoCE vendor options): none. */
VERBS_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT struct ibv_srq *
ibemu__ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_create_srq, ibv_create_srq, "IBVERBS_1.1");
struct ibv_srq *ibemu__ibv_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT int ibemu__ibv_modify_srq(struct ibv_srq *srq,
				       struct ibv_srq_attr *attr,
				       int attr_mask);
VERBS_SYMVER_DEFAULT(ibemu__ibv_modify_srq, ibv_modify_srq, "IBVERBS_1.1");
int ibemu__ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_query_srq(struct ibv_srq *srq,
				      struct ibv_srq_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_srq, ibv_query_srq, "IBVERBS_1.1");
int ibemu__ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_destroy_srq(struct ibv_srq *srq);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_srq, ibv_destroy_srq, "IBVERBS_1.1");
int ibemu__ibv_destroy_srq(struct ibv_srq *srq)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_attach_mcast(struct ibv_qp *qp,
					 const union ibv_gid *gid,
					 uint16_t lid);
VERBS_SYMVER_DEFAULT(ibemu__ibv_attach_mcast, ibv_attach_mcast, "IBVERBS_1.1");
int ibemu__ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid)
{
	return EOPNOTSUPP;
}

VERBS_EXPORT int ibemu__ibv_detach_mcast(struct ibv_qp *qp,
					 const union ibv_gid *gid,
					 uint16_t lid);
VERBS_SYMVER_DEFAULT(ibemu__ibv_detach_mcast, ibv_detach_mcast, "IBVERBS_1.1");
int ibemu__ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid)
{
	return EOPNOTSUPP;
}

/* Device memory (ibv_alloc_dm) does not exist, so none can be imported. */
VERBS_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					  uint32_t dm_handle)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
}
