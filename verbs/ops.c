// SPDX-License-Identifier: MIT
/*
 * The ops tables of a context: struct ibv_context_ops (the fast-path verbs
 * that <infiniband/verbs.h> inlines: poll_cq, req_notify_cq, post_send,
 * post_recv, ...) and the extended ops of struct verbs_context
 * (query_device_ex, query_port, create_qp_ex, ...). Every slot is filled,
 * as rdma-core's dummy ops fill a provider's gaps: what ibemu does not do
 * yet answers with the failure the header documents for it (NULL and errno
 * EOPNOTSUPP, or EOPNOTSUPP returned), never a call through NULL.
 */
#include "verbs_int.h"

/* --- struct ibv_context_ops ---------------------------------------- */

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		   struct ibv_mw_bind *mw_bind)
{
	return EOPNOTSUPP;
}

static int dealloc_mw(struct ibv_mw *mw)
{
	return EOPNOTSUPP;
}

/*
 * The _compat slots were the pre-1.1 way to reach a provider; only
 * binaries of that age call them, through the IBVERBS_1.0 symbols, which
 * ibemu does not implement (compat.c). Two of them have full signatures
 * and work; the rest fail.
 */
static void *compat_stub(void)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int compat_query_device(struct ibv_context *context,
			       struct ibv_device_attr *attr)
{
	ibemu__verbs_device_attr(ibemu__verbs_ctx(context), attr);
	return 0;
}

static int compat_query_port(struct ibv_context *context, uint8_t port_num,
			     struct _compat_ibv_port_attr *attr)
{
	return ibemu__verbs_query_port(
		context, port_num, (struct ibv_port_attr *)attr,
		offsetof(struct ibv_port_attr, port_cap_flags2));
}

static const struct ibv_context_ops context_ops = {
	._compat_query_device = compat_query_device,
	._compat_query_port = compat_query_port,
	._compat_alloc_pd = compat_stub,
	._compat_dealloc_pd = compat_stub,
	._compat_reg_mr = compat_stub,
	._compat_rereg_mr = compat_stub,
	._compat_dereg_mr = compat_stub,
	.alloc_mw = alloc_mw,
	.bind_mw = bind_mw,
	.dealloc_mw = dealloc_mw,
	._compat_create_cq = compat_stub,
	.poll_cq = ibemu__verbs_poll_cq,
	.req_notify_cq = ibemu__verbs_req_notify_cq,
	._compat_cq_event = compat_stub,
	._compat_resize_cq = compat_stub,
	._compat_destroy_cq = compat_stub,
	._compat_create_srq = compat_stub,
	._compat_modify_srq = compat_stub,
	._compat_query_srq = compat_stub,
	._compat_destroy_srq = compat_stub,
	.post_srq_recv = ibemu__verbs_post_srq_recv,
	._compat_create_qp = compat_stub,
	._compat_query_qp = compat_stub,
	._compat_modify_qp = compat_stub,
	._compat_destroy_qp = compat_stub,
	.post_send = ibemu__verbs_post_send,
	.post_recv = ibemu__verbs_post_recv,
	._compat_create_ah = compat_stub,
	._compat_destroy_ah = compat_stub,
	._compat_attach_mcast = compat_stub,
	._compat_detach_mcast = compat_stub,
	._compat_async_event = compat_stub,
};

/* --- struct verbs_context ------------------------------------------ */

static int advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		     uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges)
{
	return EOPNOTSUPP;
}

static struct ibv_mr *alloc_null_mr(struct ibv_pd *pd)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int read_counters(struct ibv_counters *counters,
			 uint64_t *counters_value, uint32_t ncounters,
			 uint32_t flags)
{
	return EOPNOTSUPP;
}

static int attach_counters_point_flow(struct ibv_counters *counters,
				      struct ibv_counter_attach_attr *attr,
				      struct ibv_flow *flow)
{
	return EOPNOTSUPP;
}

static struct ibv_counters *
create_counters(struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int destroy_counters(struct ibv_counters *counters)
{
	return EOPNOTSUPP;
}

static struct ibv_mr *reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm,
				uint64_t dm_offset, size_t length,
				unsigned int access)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static struct ibv_dm *alloc_dm(struct ibv_context *context,
			       struct ibv_alloc_dm_attr *attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int free_dm(struct ibv_dm *dm)
{
	return EOPNOTSUPP;
}

static int modify_flow_action_esp(struct ibv_flow_action *action,
				  struct ibv_flow_action_esp_attr *attr)
{
	return EOPNOTSUPP;
}

static int destroy_flow_action(struct ibv_flow_action *action)
{
	return EOPNOTSUPP;
}

static struct ibv_flow_action *
create_flow_action_esp(struct ibv_context *context,
		       struct ibv_flow_action_esp_attr *attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int modify_qp_rate_limit(struct ibv_qp *qp,
				struct ibv_qp_rate_limit_attr *attr)
{
	return EOPNOTSUPP;
}

static struct ibv_pd *
alloc_parent_domain(struct ibv_context *context,
		    struct ibv_parent_domain_init_attr *attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int dealloc_td(struct ibv_td *td)
{
	return EOPNOTSUPP;
}

static struct ibv_td *alloc_td(struct ibv_context *context,
			       struct ibv_td_init_attr *init_attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)
{
	return EOPNOTSUPP;
}

static int post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op,
			struct ibv_ops_wr **bad_op)
{
	*bad_op = op;
	return EOPNOTSUPP;
}

static int destroy_rwq_ind_table(struct ibv_rwq_ind_table *table)
{
	return EOPNOTSUPP;
}

static struct ibv_rwq_ind_table *
create_rwq_ind_table(struct ibv_context *context,
		     struct ibv_rwq_ind_table_init_attr *init_attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int destroy_wq(struct ibv_wq *wq)
{
	return EOPNOTSUPP;
}

static int modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr)
{
	return EOPNOTSUPP;
}

static struct ibv_wq *create_wq(struct ibv_context *context,
				struct ibv_wq_init_attr *wq_init_attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static int destroy_flow(struct ibv_flow *flow)
{
	return EOPNOTSUPP;
}

static struct ibv_flow *create_flow(struct ibv_qp *qp,
				    struct ibv_flow_attr *flow_attr)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

static void abi_placeholder(void)
{
}

void ibemu__verbs_ops_init(struct ibemu_verbs_context *ctx)
{
	struct verbs_context *v = &ctx->vctx;

	v->context.ops = context_ops;
	v->query_port = ibemu__verbs_query_port;
	v->advise_mr = advise_mr;
	v->alloc_null_mr = alloc_null_mr;
	v->read_counters = read_counters;
	v->attach_counters_point_flow = attach_counters_point_flow;
	v->create_counters = create_counters;
	v->destroy_counters = destroy_counters;
	v->reg_dm_mr = reg_dm_mr;
	v->alloc_dm = alloc_dm;
	v->free_dm = free_dm;
	v->modify_flow_action_esp = modify_flow_action_esp;
	v->destroy_flow_action = destroy_flow_action;
	v->create_flow_action_esp = create_flow_action_esp;
	v->modify_qp_rate_limit = modify_qp_rate_limit;
	v->alloc_parent_domain = alloc_parent_domain;
	v->dealloc_td = dealloc_td;
	v->alloc_td = alloc_td;
	v->modify_cq = modify_cq;
	v->post_srq_ops = post_srq_ops;
	v->destroy_rwq_ind_table = destroy_rwq_ind_table;
	v->create_rwq_ind_table = create_rwq_ind_table;
	v->destroy_wq = destroy_wq;
	v->modify_wq = modify_wq;
	v->create_wq = create_wq;
	v->query_rt_values = ibemu__verbs_query_rt_values;
	v->create_cq_ex = ibemu__verbs_create_cq_ex;
	v->priv = NULL;
	v->query_device_ex = ibemu__verbs_query_device_ex;
	v->ibv_destroy_flow = destroy_flow;
	v->ABI_placeholder2 = abi_placeholder;
	v->ibv_create_flow = create_flow;
	v->ABI_placeholder1 = abi_placeholder;
	v->open_qp = ibemu__verbs_open_qp;
	v->create_qp_ex = ibemu__verbs_create_qp_ex;
	v->get_srq_num = ibemu__verbs_get_srq_num;
	v->create_srq_ex = ibemu__verbs_create_srq_ex;
	v->open_xrcd = ibemu__verbs_open_xrcd;
	v->close_xrcd = ibemu__verbs_close_xrcd;
}
