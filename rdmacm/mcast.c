// SPDX-License-Identifier: MIT
/*
 * Multicast as the kernel's rdma_cm does it for InfiniBand
 * (cma_join_ib_multicast): the group's address maps to an MGID
 * (cma_set_mgid: an IPv4 address as IPoIB maps it, ip_ib_mc_map, with the
 * rdma_cm signature for RDMA_PS_UDP; AF_IB and SA-assigned IPv6 MGIDs as
 * they are), a SubnAdm Set(MCMemberRecord) joins the id's port to it at
 * the SM (which creates the group and programs the switches' MFTs), the
 * id's UD QP is attached (as librdmacm's ucma_process_join), and
 * RDMA_CM_EVENT_MULTICAST_JOIN carries the address vector of the group
 * (its MLID, a GRH to the MGID), QPN 0xFFFFFF and the group's Q_Key.
 * rdma_leave_multicast detaches the QP and sends the SA Delete.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/ib.h>

#include "mad_hdr.h"
#include "rdmacm_int.h"

#define SA_CLASS_VERSION 2
#define SA_ATTR_MCMEMBER 0x0038
#define SA_METHOD_DELETE 0x15
#define RDMA_UDP_QKEY	 0x01234567 /* the kernel's, for RDMA_PS_UDP */
#define MC_QPN		 0xffffff

/* MCMemberRecord ComponentMask bits and offsets (IBA 15.2.5.17). */
#define MC_COMP_MGID	   (1ull << 0)
#define MC_COMP_PORT_GID   (1ull << 1)
#define MC_COMP_QKEY	   (1ull << 2)
#define MC_COMP_TCLASS	   (1ull << 6)
#define MC_COMP_PKEY	   (1ull << 7)
#define MC_COMP_SL	   (1ull << 12)
#define MC_COMP_FLOW	   (1ull << 13)
#define MC_COMP_JOIN_STATE (1ull << 16)
#define MC_OFF_PORT_GID	   16
#define MC_OFF_QKEY	   32
#define MC_OFF_MLID	   36
#define MC_OFF_TCLASS	   39
#define MC_OFF_PKEY	   40
#define MC_OFF_RATE	   42
#define MC_OFF_SFH	   44 /* SL 4, FlowLabel 20, HopLimit 8 */
#define MC_OFF_STATE	   48

/* A group the id joined (rdma_leave_multicast finds it by address). */
struct rdmacm_mc {
	struct rdmacm_mc *next;
	struct sockaddr_storage addr;
	union ibv_gid mgid;
	uint16_t mlid;
	uint8_t join_state;
};

int rdmacm__mcast_mgid(const struct rdma_cm_id *id, const struct sockaddr *sa,
		       union ibv_gid *mgid)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	uint32_t ip;

	memset(mgid, 0, sizeof(*mgid));
	switch (sa->sa_family) {
	case AF_INET:
		ip = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		if ((ip >> 28) != 0xe)
			return 0;
		/* ip_ib_mc_map() with IPoIB's broadcast address (link-local
		 * scope, P_Key 0xFFFF); byte 3 the rdma_cm signature. */
		mgid->raw[0] = 0xff;
		mgid->raw[1] = 0x12;
		mgid->raw[2] = 0x40;
		mgid->raw[3] = id->ps == RDMA_PS_UDP ? 0x01 : 0x1b;
		mgid->raw[4] = 0xff;
		mgid->raw[5] = 0xff;
		mgid->raw[12] = (uint8_t)(ip >> 24 & 0x0f);
		mgid->raw[13] = (uint8_t)(ip >> 16);
		mgid->raw[14] = (uint8_t)(ip >> 8);
		mgid->raw[15] = (uint8_t)ip;
		return 1;
	case AF_INET6:
		if (s6->sin6_addr.s6_addr[0] != 0xff)
			return 0;
		/* An SA-assigned MGID as it is; others as ipv6_ib_mc_map(). */
		if ((be32toh(s6->sin6_addr.s6_addr32[0]) & 0xfff0ffff) ==
		    0xff10a01b) {
			memcpy(mgid->raw, &s6->sin6_addr, 16);
			return 1;
		}
		mgid->raw[0] = 0xff;
		mgid->raw[1] = 0x12;
		mgid->raw[2] = 0x60;
		mgid->raw[3] = id->ps == RDMA_PS_UDP ? 0x01 : 0x1b;
		mgid->raw[4] = 0xff;
		mgid->raw[5] = 0xff;
		memcpy(mgid->raw + 6, s6->sin6_addr.s6_addr + 6, 10);
		return 1;
	case AF_IB:
		memcpy(mgid->raw, &((const struct sockaddr_ib *)sa)->sib_addr,
		       16);
		return mgid->raw[0] == 0xff;
	default:
		return 0;
	}
}

static void build_member(uint8_t *mad, const struct rdma_cm_id *id,
			 const union ibv_gid *mgid, uint8_t method,
			 uint8_t join_state)
{
	const struct rdma_ib_addr *ib = &id->route.addr.addr.ibaddr;
	uint8_t *rec = mad + IBEMU_SA_DATA_OFF;
	uint32_t qkey = id->ps == RDMA_PS_UDP ? RDMA_UDP_QKEY : 0;

	memset(mad, 0, IBEMU_MAD_LEN);
	ibemu_mad_set_base_version(mad, IBEMU_MAD_BASE_VERSION);
	ibemu_mad_set_mgmt_class(mad, IBEMU_MAD_CLASS_SA);
	ibemu_mad_set_class_version(mad, SA_CLASS_VERSION);
	ibemu_mad_set_method(mad, method);
	ibemu_mad_set_attr_id(mad, SA_ATTR_MCMEMBER);
	/* cma_join_ib_multicast()'s ComponentMask. */
	ibemu_sa_set_comp_mask(mad, MC_COMP_MGID | MC_COMP_PORT_GID |
					    MC_COMP_PKEY | MC_COMP_JOIN_STATE |
					    MC_COMP_QKEY | MC_COMP_SL |
					    MC_COMP_FLOW | MC_COMP_TCLASS);
	memcpy(rec, mgid->raw, 16);
	memcpy(rec + MC_OFF_PORT_GID, ib->sgid.raw, 16);
	rec[MC_OFF_QKEY] = (uint8_t)(qkey >> 24);
	rec[MC_OFF_QKEY + 1] = (uint8_t)(qkey >> 16);
	rec[MC_OFF_QKEY + 2] = (uint8_t)(qkey >> 8);
	rec[MC_OFF_QKEY + 3] = (uint8_t)qkey;
	memcpy(rec + MC_OFF_PKEY, &ib->pkey, 2);
	rec[MC_OFF_STATE] = join_state & 0xf;
}

/* The address vector of the group the SA answered with
 * (ib_init_ah_from_mcmember). */
static void ah_from_record(const struct rdma_cm_id *id, const uint8_t *rec,
			   struct ibv_ah_attr *ah)
{
	uint32_t sfh = (uint32_t)rec[MC_OFF_SFH] << 24 |
		       (uint32_t)rec[MC_OFF_SFH + 1] << 16 |
		       (uint32_t)rec[MC_OFF_SFH + 2] << 8 | rec[MC_OFF_SFH + 3];

	memset(ah, 0, sizeof(*ah));
	ah->dlid = (uint16_t)(rec[MC_OFF_MLID] << 8 | rec[MC_OFF_MLID + 1]);
	ah->sl = (uint8_t)(sfh >> 28);
	ah->static_rate = rec[MC_OFF_RATE] & 0x3f;
	ah->port_num = id->port_num;
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, rec, 16);
	ah->grh.flow_label = sfh >> 8 & 0xfffff;
	ah->grh.hop_limit = (uint8_t)sfh;
	ah->grh.traffic_class = rec[MC_OFF_TCLASS];
}

/*
 * Sends the SA request and waits for its answer (sa.c); 0 with the
 * answer's record in 'rec', -ETIMEDOUT, -EINVAL for an SA error status,
 * -ENETUNREACH, -EIO.
 */
static int sa_member(const struct rdma_cm_id *id, const union ibv_gid *mgid,
		     uint8_t method, uint8_t join_state, uint8_t *rec)
{
	uint8_t mad[IBEMU_MAD_LEN];
	int ret;

	build_member(mad, id, mgid, method, join_state);
	ret = rdmacm__sa_call(id, mad, 2000, 3);
	if (ret)
		return ret;
	if (ibemu_mad_get_status(mad))
		return -EINVAL;
	memcpy(rec, mad + IBEMU_SA_DATA_OFF, 64);
	return 0;
}

static int join(struct rdma_cm_id *cm_id, const struct sockaddr *addr,
		uint8_t join_state, void *context)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdma_cm_event ev;
	struct rdmacm_mc *mc;
	uint8_t rec[64];
	int ret;

	if (!id->addr_resolved || !cm_id->verbs || !rdmacm__addr_len(addr))
		return rdmacm_err(EINVAL);
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return rdmacm_err(ENOMEM);
	memcpy(&mc->addr, addr, rdmacm__addr_len(addr));
	if (!rdmacm__mcast_mgid(cm_id, addr, &mc->mgid)) {
		free(mc);
		return rdmacm_err(EINVAL);
	}
	mc->join_state = join_state;
	memset(&ev, 0, sizeof(ev));
	ev.id = cm_id;
	ev.param.ud.private_data = context;
	ret = sa_member(cm_id, &mc->mgid, IBEMU_MAD_METHOD_SET, join_state,
			rec);
	if (!ret) {
		ah_from_record(cm_id, rec, &ev.param.ud.ah_attr);
		mc->mgid = ev.param.ud.ah_attr.grh.dgid;
		mc->mlid = ev.param.ud.ah_attr.dlid;
		ev.param.ud.qp_num = MC_QPN;
		ev.param.ud.qkey = (uint32_t)rec[MC_OFF_QKEY] << 24 |
				   (uint32_t)rec[MC_OFF_QKEY + 1] << 16 |
				   (uint32_t)rec[MC_OFF_QKEY + 2] << 8 |
				   rec[MC_OFF_QKEY + 3];
		/* ucma_process_join(): the id's QP joins at once. */
		if (cm_id->qp)
			ret = -ibv_attach_mcast(cm_id->qp, &mc->mgid, mc->mlid);
	}
	if (ret) {
		free(mc);
		ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		ev.status = ret;
	} else {
		pthread_mutex_lock(&id->lock);
		mc->next = id->mcs;
		id->mcs = mc;
		pthread_mutex_unlock(&id->lock);
		ev.event = RDMA_CM_EVENT_MULTICAST_JOIN;
	}
	ret = rdmacm__event_queue_ex(id, NULL, &ev, NULL, 0);
	if (ret)
		return rdmacm_err(-ret);
	return id->sync ? rdmacm__sync_complete(id) : 0;
}

RDMACM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id,
				      struct sockaddr *addr, void *context)
{
	return join(id, addr, 1 /* FullMember */, context);
}

RDMACM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
					 struct rdma_cm_join_mc_attr_ex *attr,
					 void *context)
{
	uint8_t state;

	if (!attr || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS))
		return rdmacm_err(EINVAL);
	switch (attr->join_flags) {
	case RDMA_MC_JOIN_FLAG_FULLMEMBER:
		state = 1;
		break;
	case RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER:
		state = 8; /* IBA 15.2.5.17: SendOnlyFullMember */
		break;
	default:
		return rdmacm_err(EINVAL);
	}
	return join(id, attr->addr, state, context);
}

RDMACM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *cm_id,
				       struct sockaddr *addr)
{
	struct rdmacm_id *id = rdmacm_id_of(cm_id);
	struct rdmacm_mc **pp, *mc = NULL;
	uint8_t rec[64];
	size_t len;

	if (!addr || !(len = rdmacm__addr_len(addr)))
		return rdmacm_err(EINVAL);
	pthread_mutex_lock(&id->lock);
	for (pp = &id->mcs; *pp; pp = &(*pp)->next) {
		if (!memcmp(&(*pp)->addr, addr, len)) {
			mc = *pp;
			*pp = mc->next;
			break;
		}
	}
	pthread_mutex_unlock(&id->lock);
	if (!mc)
		return rdmacm_err(EADDRNOTAVAIL);
	if (cm_id->qp)
		ibv_detach_mcast(cm_id->qp, &mc->mgid, mc->mlid);
	/* The SA's answer changes nothing here: the group is left. */
	sa_member(cm_id, &mc->mgid, SA_METHOD_DELETE, mc->join_state, rec);
	free(mc);
	return 0;
}

/* rdma_destroy_id (cma_leave_mc_groups): every group the id is in. */
void rdmacm__mcast_leave_all(struct rdmacm_id *id)
{
	struct rdma_cm_id *cm_id = &id->id;
	struct rdmacm_mc *mc;
	uint8_t rec[64];

	while ((mc = id->mcs)) {
		id->mcs = mc->next;
		if (cm_id->qp)
			ibv_detach_mcast(cm_id->qp, &mc->mgid, mc->mlid);
		sa_member(cm_id, &mc->mgid, SA_METHOD_DELETE, mc->join_state,
			  rec);
		free(mc);
	}
}
