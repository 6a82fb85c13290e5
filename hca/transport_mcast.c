// SPDX-License-Identifier: MIT
/*
 * Multicast at the HCA (IBA 10.5): UD QPs attached to multicast groups
 * (ibv_attach_mcast) and the delivery of a multicast packet that reaches
 * a port to every QP of the port attached to its group, a copy each. The
 * switches replicate between ports (switch/relay.c); the HCA replicates
 * among its QPs. A group is its MGID and MLID; packets are matched by
 * their MLID (DLID), as the transport carries no GRH contents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_int.h"

/* The MLID range (IBA 4.1): 0xC000..0xFFFE, 0xFFFF being permissive. */
static int mlid_valid(uint16_t lid)
{
	return ibemu_lid_is_multicast(lid);
}

/* IBA 4.1.1: a multicast GID starts with 0xFF. */
static int mgid_valid(const uint8_t *gid)
{
	return gid[0] == 0xff;
}

static unsigned group_qps(const struct ibemu_tp *tp, const uint8_t *gid)
{
	unsigned i, n = 0;

	for (i = 0; i < tp->nmc; i++)
		n += !memcmp(tp->mc[i].gid, gid, 16);
	return n;
}

static unsigned groups(const struct ibemu_tp *tp)
{
	unsigned i, j, n = 0;

	for (i = 0; i < tp->nmc; i++) {
		for (j = 0; j < i; j++)
			if (!memcmp(tp->mc[i].gid, tp->mc[j].gid, 16))
				break;
		n += j == i;
	}
	return n;
}

static int find(const struct ibemu_tp *tp, uint32_t qpn, const uint8_t *gid)
{
	unsigned i;

	for (i = 0; i < tp->nmc; i++)
		if (tp->mc[i].qpn == qpn && !memcmp(tp->mc[i].gid, gid, 16))
			return (int)i;
	return -1;
}

int ibemu_tp_mcast_attach(struct ibemu_tp *tp, uint32_t qpn, const uint8_t *gid,
			  uint16_t mlid)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);
	struct tp_mcast *mc;
	unsigned in_group;

	/* The kernel's ib_attach_mcast(): UD QPs, a multicast GID and
	 * LID, or EINVAL. */
	if (!qp || qp->type != IBEMU_QPT_UD || !mgid_valid(gid) ||
	    !mlid_valid(mlid))
		return -EINVAL;
	/* ib_uverbs_attach_mcast(): attaching again is no error. */
	if (find(tp, qpn, gid) >= 0)
		return 0;
	in_group = group_qps(tp, gid);
	if (tp->nmc >= IBEMU_TP_MAX_TOTAL_MCAST_QP_ATTACH ||
	    in_group >= IBEMU_TP_MAX_MCAST_QP_ATTACH ||
	    (!in_group && groups(tp) >= IBEMU_TP_MAX_MCAST_GRP))
		return -ENOMEM;
	if (tp->nmc == tp->mc_cap) {
		unsigned cap = tp->mc_cap ? tp->mc_cap * 2 : 8;

		mc = realloc(tp->mc, cap * sizeof(*mc));
		if (!mc)
			return -ENOMEM;
		tp->mc = mc;
		tp->mc_cap = cap;
	}
	mc = &tp->mc[tp->nmc++];
	memcpy(mc->gid, gid, 16);
	mc->mlid = mlid;
	mc->qpn = qpn;
	return 0;
}

/* Keeps the attachments in the order they were made: deliveries go in it. */
static void remove_at(struct ibemu_tp *tp, unsigned i)
{
	memmove(&tp->mc[i], &tp->mc[i + 1],
		(tp->nmc - i - 1) * sizeof(tp->mc[0]));
	tp->nmc--;
}

int ibemu_tp_mcast_detach(struct ibemu_tp *tp, uint32_t qpn, const uint8_t *gid,
			  uint16_t mlid)
{
	struct tp_qp *qp = ibemu__tp_qp(tp, qpn);
	int at;

	if (!qp || qp->type != IBEMU_QPT_UD || !mgid_valid(gid) ||
	    !mlid_valid(mlid))
		return -EINVAL;
	/* ib_uverbs_detach_mcast(): a group the QP is not in is EINVAL. */
	at = find(tp, qpn, gid);
	if (at < 0)
		return -EINVAL;
	remove_at(tp, (unsigned)at);
	return 0;
}

void ibemu__tp_mcast_qp_gone(struct ibemu_tp *tp, uint32_t qpn)
{
	unsigned i = 0;

	while (i < tp->nmc) {
		if (tp->mc[i].qpn == qpn)
			remove_at(tp, i);
		else
			i++;
	}
}

void ibemu__tp_mcast_deliver(struct ibemu_tp *tp, uint32_t port,
			     struct ibemu_pkt *pkt,
			     void (*to_qp)(struct ibemu_tp *tp, uint32_t port,
					   struct ibemu_pkt *pkt))
{
	uint16_t mlid = pkt->dlid;
	unsigned i;

	/* A QP attached twice under two MGIDs of one MLID gets one copy. */
	for (i = 0; i < tp->nmc; i++) {
		unsigned j;

		if (tp->mc[i].mlid != mlid)
			continue;
		for (j = 0; j < i; j++)
			if (tp->mc[j].mlid == mlid &&
			    tp->mc[j].qpn == tp->mc[i].qpn)
				break;
		if (j < i)
			continue;
		pkt->dqpn = tp->mc[i].qpn;
		to_qp(tp, port, pkt);
	}
}
