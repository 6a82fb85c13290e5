// SPDX-License-Identifier: MIT
/*
 * Address handles: where a UD work request goes (IBA 10.2.2). Creating one
 * checks the attributes as a provider does (the port exists, the SL is
 * one of 16, the static rate is known, the source GID index is in the
 * port's table) and keeps them for the transport; it counts as a user of
 * its PD. ibv_init_ah_from_wc() builds the attributes that answer a
 * received message (IBA 10.2.2.3: back to its source, by LID or GRH).
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_int.h"

/* 0, or the errno an HCA gives attributes 'a' on context 'ctx'. */
static int ah_check(struct ibemu_verbs_context *ctx,
		    const struct ibv_ah_attr *a)
{
	struct ibemu_sess_port_attr p;
	int ret;

	if (a->port_num < 1 || a->port_num > ctx->dev->nports)
		return EINVAL;
	if (a->sl > 15 || a->static_rate > IBV_RATE_1200_GBPS)
		return EINVAL;
	if (a->is_global) {
		ret = ibemu__verbs_port_query(ctx, a->port_num, &p);
		if (ret)
			return -ret;
		if (a->grh.sgid_index >= p.guid_cap)
			return EINVAL;
	}
	return 0;
}

VERBS_EXPORT struct ibv_ah *ibemu__ibv_create_ah(struct ibv_pd *pd,
						 struct ibv_ah_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_create_ah, ibv_create_ah, "IBVERBS_1.1");
struct ibv_ah *ibemu__ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibv_context *context = pd->context;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_ah *ah;
	int ret;

	ibemu__verbs_charge(ctx, IBEMU_VCOST_AH_CREATE, 0);
	ret = ah_check(ctx, attr);
	if (ret)
		return ibemu__verbs_null(ret);
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return ibemu__verbs_null(ENOMEM);
	pthread_mutex_lock(&context->mutex);
	if (ctx->nahs >= IBEMU_VERBS_MAX_AH) {
		pthread_mutex_unlock(&context->mutex);
		free(ah);
		return ibemu__verbs_null(ENOMEM);
	}
	ctx->nahs++;
	pthread_mutex_unlock(&context->mutex);
	ibemu__verbs_pd_use(pd, 1);
	ah->ah.context = context;
	ah->ah.pd = pd;
	ah->attr = *attr;
	return &ah->ah;
}

VERBS_EXPORT int ibemu__ibv_destroy_ah(struct ibv_ah *ah);
VERBS_SYMVER_DEFAULT(ibemu__ibv_destroy_ah, ibv_destroy_ah, "IBVERBS_1.1");
int ibemu__ibv_destroy_ah(struct ibv_ah *ah)
{
	struct ibv_context *context = ah->context;

	ibemu__verbs_charge_local(ibemu__verbs_ctx(context),
				  IBEMU_VCOST_AH_DESTROY);
	ibemu__verbs_pd_use(ah->pd, -1);
	pthread_mutex_lock(&context->mutex);
	ibemu__verbs_ctx(context)->nahs--;
	pthread_mutex_unlock(&context->mutex);
	free(ah);
	return 0;
}

/* The index of 'gid' in the GID table of 'port', or -1. */
static int gid_index(struct ibv_context *context, uint8_t port,
		     const union ibv_gid *gid)
{
	struct ibemu_sess_port_attr p;
	union ibv_gid own;

	if (ibemu__verbs_port_query(ibemu__verbs_ctx(context), port, &p))
		return -1;
	own.global.subnet_prefix = htobe64(p.gid_prefix);
	own.global.interface_id = htobe64(p.port_guid);
	return memcmp(&own, gid, sizeof(own)) ? -1 : 0;
}

VERBS_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				     uint8_t port_num, struct ibv_wc *wc,
				     struct ibv_grh *grh,
				     struct ibv_ah_attr *ah_attr)
{
	uint32_t flow;
	int index;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	/* The reply leaves from the GID the message was sent to. */
	index = gid_index(context, port_num, &grh->dgid);
	if (index < 0) {
		errno = ENOENT;
		return -1;
	}
	flow = be32toh(grh->version_tclass_flow);
	ah_attr->is_global = 1;
	ah_attr->grh.dgid = grh->sgid;
	ah_attr->grh.sgid_index = (uint8_t)index;
	ah_attr->grh.flow_label = flow & 0xfffff;
	ah_attr->grh.traffic_class = (uint8_t)(flow >> 20);
	ah_attr->grh.hop_limit = 0xff;
	return 0;
}

VERBS_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
						  struct ibv_wc *wc,
						  struct ibv_grh *grh,
						  uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibemu__ibv_create_ah(pd, &attr);
}

/* The Ethernet address behind a RoCE GID: an InfiniBand port has none. */
VERBS_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					     struct ibv_ah_attr *attr,
					     uint8_t eth_mac[6], uint16_t *vid)
{
	return -EINVAL;
}
