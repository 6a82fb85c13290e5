// SPDX-License-Identifier: MIT
/*
 * Device, port, GID and P_Key queries. The device's attributes are the
 * HCA's identity from the topology (GUIDs, vendor and device ids) and the
 * limits of its hca_model (ibemu_verbs_limits_of(), proto/verbs_proto.h). Port attributes
 * come from the daemon at each call (PORT_QUERY): PortInfo as the SM left
 * it, converted to the verbs encodings as the kernel's drivers convert
 * Get(PortInfo). The GID table holds the port's GID at index 0 (subnet
 * prefix and port GUID, IBA 4.1.1); the rest of its GUIDCap entries are
 * unassigned (zero).
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "verbs_int.h"

/* What the emulated HCA can do, in ibv_device_attr's flags: counters of
 * P_Key and Q_Key violations (PMA), events, RNR NAKs, the system image
 * GUID, XRC (verbs/xrc.c). Listed here, where the device is described;
 * the transport makes them true. */
#define DEVICE_CAP_FLAGS                                            \
	(IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |      \
	 IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID | \
	 IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_XRC)

void ibemu__verbs_device_attr(struct ibemu_verbs_context *ctx,
			      struct ibv_device_attr *a)
{
	const struct ibemu_verbs_device *d = ctx->dev;
	const struct ibemu_verbs_limits *l = d->lim;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "ibemu %s", IBEMU_VERSION);
	a->node_guid = htobe64(d->node_guid);
	a->sys_image_guid = htobe64(d->sys_guid);
	a->max_mr_size = IBEMU_VERBS_MAX_MR_SIZE;
	a->page_size_cap = IBEMU_VERBS_PAGE_SIZE_CAP;
	a->vendor_id = d->vendor_id;
	a->vendor_part_id = d->device_id;
	a->max_qp = (int)l->max_qp;
	a->max_qp_wr = (int)l->max_qp_wr;
	a->device_cap_flags = DEVICE_CAP_FLAGS;
	a->max_sge = (int)l->max_sge;
	a->max_sge_rd = (int)l->max_sge_rd;
	a->max_cq = (int)l->max_cq;
	a->max_cqe = (int)l->max_cqe;
	a->max_mr = (int)l->max_mr;
	a->max_pd = (int)l->max_pd;
	a->max_qp_rd_atom = (int)l->max_qp_rd_atom;
	a->max_res_rd_atom = (int)l->max_res_rd_atom;
	a->max_qp_init_rd_atom = (int)l->max_qp_init_rd_atom;
	/* IBA 11.2.1.2: atomics are atomic among the HCA's own QPs. */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = (int)l->max_ah;
	a->max_mcast_grp = IBEMU_VERBS_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = IBEMU_VERBS_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = IBEMU_VERBS_MAX_TOTAL_MCAST_QP_ATTACH;
	a->max_srq = (int)l->max_srq;
	a->max_srq_wr = (int)l->max_srq_wr;
	a->max_srq_sge = (int)l->max_srq_sge;
	a->max_pkeys = d->partition_cap;
	a->local_ca_ack_delay = IBEMU_VERBS_LOCAL_CA_ACK_DELAY;
	a->phys_port_cnt = (uint8_t)d->nports;
}

VERBS_EXPORT int ibemu__ibv_query_device(struct ibv_context *context,
					 struct ibv_device_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_device, ibv_query_device, "IBVERBS_1.1");
int ibemu__ibv_query_device(struct ibv_context *context,
			    struct ibv_device_attr *attr)
{
	/* A removed device answers EIO, as the kernel does. */
	if (ibemu__verbs_stream_gone(ibemu__verbs_ctx(context)))
		return EIO;
	ibemu__verbs_charge_local(ibemu__verbs_ctx(context),
				  IBEMU_VCOST_QUERY_DEVICE);
	ibemu__verbs_device_attr(ibemu__verbs_ctx(context), attr);
	return 0;
}

/* An older program's struct is shorter; a newer one's fields past ours
 * stay zero, as rdma-core's vext_field_avail() lets providers do. */
int ibemu__verbs_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ibv_device_attr_ex ex;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	if (ibemu__verbs_stream_gone(ibemu__verbs_ctx(context)))
		return EIO;
	ibemu__verbs_charge_local(ibemu__verbs_ctx(context),
				  IBEMU_VCOST_QUERY_DEVICE);
	memset(&ex, 0, sizeof(ex));
	ibemu__verbs_device_attr(ibemu__verbs_ctx(context), &ex.orig_attr);
	ex.device_cap_flags_ex = ex.orig_attr.device_cap_flags;
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	/* Completion timestamps count nanoseconds of virtual time (cq_ex.c). */
	ex.completion_timestamp_mask = UINT64_MAX;
	ex.hca_core_clock = IBEMU_VERBS_CORE_CLOCK_KHZ;
	memset(attr, 0, attr_size);
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

/* IBA PortInfo LinkSpeed(Ext)Active to ibv_port_attr.active_speed, as the
 * kernel's mlx4 and mlx5 drivers report them (IB_SPEED_*). */
static uint8_t active_speed(const struct ibemu_sess_port_attr *p)
{
	switch (p->link_speed_ext_active) {
	case 1:
		return 16; /* FDR */
	case 2:
		return 32; /* EDR */
	case 4:
		return 64; /* HDR */
	case 8:
		return 128; /* NDR */
	}
	if (p->fdr10_active)
		return 8;
	return p->link_speed_active; /* SDR 1, DDR 2, QDR 4 */
}

/* Port 'port' of the device, or -errno: EINVAL for a port it lacks. */
/* A port query on behalf of call 'cost' (charged to the clock first). */
static int port_query(struct ibemu_verbs_context *ctx, unsigned port,
		      enum ibemu_verbs_cost cost,
		      struct ibemu_sess_port_attr *p)
{
	ibemu__verbs_charge(ctx, cost, 0);
	if (port < 1 || port > ctx->dev->nports)
		return -EINVAL;
	return ibemu__verbs_port_query(ctx, port, p);
}

/*
 * The query_port op. 'len' is the size of the program's struct: older
 * programs pass the shorter struct _compat_ibv_port_attr (through the
 * exported ibv_query_port), which gets the fields it has.
 */
int ibemu__verbs_query_port(struct ibv_context *context, uint8_t port_num,
			    struct ibv_port_attr *attr, size_t len)
{
	struct ibemu_sess_port_attr p;
	struct ibv_port_attr a;
	int ret;

	ret = port_query(ibemu__verbs_ctx(context), port_num,
			 IBEMU_VCOST_QUERY_PORT, &p);
	if (ret)
		return -ret;
	memset(&a, 0, sizeof(a));
	a.state = (enum ibv_port_state)p.state;
	a.max_mtu = (enum ibv_mtu)p.mtu_cap;
	a.active_mtu = (enum ibv_mtu)p.neighbor_mtu;
	a.gid_tbl_len = p.guid_cap;
	a.port_cap_flags = p.capability_mask;
	a.max_msg_sz = IBEMU_VERBS_MAX_MSG_SZ;
	a.bad_pkey_cntr = p.p_key_violations;
	a.qkey_viol_cntr = p.q_key_violations;
	a.pkey_tbl_len = p.npkeys;
	a.lid = p.lid;
	a.sm_lid = p.sm_lid;
	a.lmc = p.lmc;
	a.max_vl_num = p.vl_cap;
	a.sm_sl = p.sm_sl;
	a.subnet_timeout = p.subnet_timeout;
	a.init_type_reply = p.init_type_reply;
	a.active_width = p.link_width_active;
	a.active_speed = active_speed(&p);
	a.phys_state = p.phys_state;
	a.link_layer = IBV_LINK_LAYER_INFINIBAND;
	a.port_cap_flags2 = p.capability_mask2;
	memset(attr, 0, len);
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

VERBS_EXPORT int ibemu__ibv_query_port(struct ibv_context *context,
				       uint8_t port_num,
				       struct _compat_ibv_port_attr *attr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_port, ibv_query_port, "IBVERBS_1.1");
int ibemu__ibv_query_port(struct ibv_context *context, uint8_t port_num,
			  struct _compat_ibv_port_attr *attr)
{
	/* The struct without port_cap_flags2, rdma-core's compat layout. */
	return ibemu__verbs_query_port(
		context, port_num, (struct ibv_port_attr *)attr,
		offsetof(struct ibv_port_attr, port_cap_flags2));
}

/*
 * Entry 'index' of the GID table of 'port' into 'gid': 0, ENODATA for an
 * unassigned entry (zero), or a positive errno (EINVAL: no such port or
 * index).
 */
static int gid_entry(struct ibv_context *context, unsigned port, unsigned index,
		     union ibv_gid *gid)
{
	struct ibemu_sess_port_attr p;
	int ret;

	ret = port_query(ibemu__verbs_ctx(context), port, IBEMU_VCOST_QUERY_GID,
			 &p);
	if (ret)
		return -ret;
	if (index >= p.guid_cap)
		return EINVAL;
	memset(gid, 0, sizeof(*gid));
	if (index != 0)
		return ENODATA;
	gid->global.subnet_prefix = htobe64(p.gid_prefix);
	gid->global.interface_id = htobe64(p.port_guid);
	return 0;
}

VERBS_EXPORT int ibemu__ibv_query_gid(struct ibv_context *context,
				      uint8_t port_num, int index,
				      union ibv_gid *gid);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_gid, ibv_query_gid, "IBVERBS_1.1");
int ibemu__ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			 int index, union ibv_gid *gid)
{
	int ret;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = gid_entry(context, port_num, (unsigned)index, gid);
	if (ret == ENODATA)
		return 0; /* an empty entry reads as zeros */
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

VERBS_EXPORT int _ibv_query_gid_ex(struct ibv_context *context,
				   uint32_t port_num, uint32_t gid_index,
				   struct ibv_gid_entry *entry, uint32_t flags,
				   size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	if (flags)
		return EOPNOTSUPP;
	if (entry_size < sizeof(e))
		return EINVAL;
	memset(&e, 0, sizeof(e));
	if (port_num > UINT8_MAX)
		return EINVAL;
	ret = gid_entry(context, port_num, gid_index, &e.gid);
	if (ret)
		return ret;
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_IB;
	memset(entry, 0, entry_size);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

/* Returns how many entries it wrote, or -errno (EINVAL when they do not
 * fit in 'max_entries'). */
VERBS_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					  struct ibv_gid_entry *entries,
					  size_t max_entries, uint32_t flags,
					  size_t entry_size)
{
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibv_gid_entry e;
	char *out = (char *)entries;
	size_t n = 0;
	unsigned port;
	int ret;

	if (flags)
		return -EOPNOTSUPP;
	if (entry_size < sizeof(e))
		return -EINVAL;
	for (port = 1; port <= ctx->dev->nports; port++) {
		/* Only index 0 of each port is assigned. */
		ret = _ibv_query_gid_ex(context, port, 0, &e, 0, sizeof(e));
		if (ret == ENODATA)
			continue;
		if (ret)
			return -ret;
		if (n == max_entries)
			return -EINVAL;
		memset(out + n * entry_size, 0, entry_size);
		memcpy(out + n * entry_size, &e, sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

/* rdma-core's sysfs GID types: 0 "IB/RoCE v1", 1 "RoCE v2". */
#define GID_TYPE_SYSFS_IB_ROCE_V1 0

VERBS_EXPORT int ibv_query_gid_type(struct ibv_context *context,
				    uint8_t port_num, unsigned int index,
				    unsigned int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, unsigned int *type)
{
	union ibv_gid gid;
	int ret;

	ret = gid_entry(context, port_num, index, &gid);
	if (ret && ret != ENODATA) {
		errno = ret;
		return -1;
	}
	*type = GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/* Like rdma-core, which reads sysfs: -1 with errno for an index past the
 * table. */
VERBS_EXPORT int ibemu__ibv_query_pkey(struct ibv_context *context,
				       uint8_t port_num, int index,
				       __be16 *pkey);
VERBS_SYMVER_DEFAULT(ibemu__ibv_query_pkey, ibv_query_pkey, "IBVERBS_1.1");
int ibemu__ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			  int index, __be16 *pkey)
{
	struct ibemu_sess_port_attr p;
	int ret;

	ret = port_query(ibemu__verbs_ctx(context), port_num,
			 IBEMU_VCOST_QUERY_PKEY, &p);
	if (ret) {
		errno = -ret;
		return -1;
	}
	if (index < 0 || index >= p.npkeys) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(p.pkeys[index]);
	return 0;
}

/* The index of 'pkey' (network order, compared whole, membership bit
 * included, as rdma-core does), or -1. */
VERBS_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
				    uint8_t port_num, __be16 pkey)
{
	struct ibemu_sess_port_attr p;
	unsigned i;
	int ret;

	ret = port_query(ibemu__verbs_ctx(context), port_num,
			 IBEMU_VCOST_QUERY_PKEY, &p);
	if (ret) {
		errno = -ret;
		return -1;
	}
	for (i = 0; i < p.npkeys; i++)
		if (htobe16(p.pkeys[i]) == pkey)
			return (int)i;
	errno = ENOENT;
	return -1;
}
