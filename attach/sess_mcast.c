// SPDX-License-Identifier: MIT
/*
 * Multicast calls of a verbs stream (ibv_attach_mcast, ibv_detach_mcast):
 * a QP of the stream joins or leaves a group in its HCA's transport
 * (hca/transport_mcast.c), which checks them as the kernel does and
 * enforces the limits ibv_query_device reports. A QP leaves its groups
 * when it is destroyed, so a process that dies leaves them too.
 */
#include <errno.h>

#include "sess_verbs_int.h"

_Static_assert(IBEMU_VERBS_MAX_MCAST_GRP == IBEMU_TP_MAX_MCAST_GRP &&
		       IBEMU_VERBS_MAX_MCAST_QP_ATTACH ==
			       IBEMU_TP_MAX_MCAST_QP_ATTACH &&
		       IBEMU_VERBS_MAX_TOTAL_MCAST_QP_ATTACH ==
			       IBEMU_TP_MAX_TOTAL_MCAST_QP_ATTACH,
	       "the multicast limits the library reports are the daemon's");

int ibemu__vs_mcast_attach(struct ibemu_sess_verbs *v,
			   const struct ibemu_verbs_mcast *r)
{
	/* Another process's QP is no QP of this stream. */
	if (!ibemu__vs_qp_find(v, r->qpn, NULL))
		return -EINVAL;
	return ibemu_tp_mcast_attach(v->hca->tp, r->qpn, r->gid, r->lid);
}

int ibemu__vs_mcast_detach(struct ibemu_sess_verbs *v,
			   const struct ibemu_verbs_mcast *r)
{
	if (!ibemu__vs_qp_find(v, r->qpn, NULL))
		return -EINVAL;
	return ibemu_tp_mcast_detach(v->hca->tp, r->qpn, r->gid, r->lid);
}
