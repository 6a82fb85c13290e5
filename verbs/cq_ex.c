// SPDX-License-Identifier: MIT
/*
 * Extended CQs: ibv_create_cq_ex() and its polling API (start_poll,
 * next_poll, end_poll and the read_* accessors of struct ibv_cq_ex). The
 * CQ is the same ring as ibv_create_cq()'s, so ibv_poll_cq() works on it
 * too (ibv_cq_ex_to_cq), as it does on real providers.
 *
 * Completion timestamps are virtual time: the HCA's core clock ticks once
 * a nanosecond of the fabric's clock (hca_core_clock, in kHz, in
 * ibv_query_device_ex), and the "wallclock" of
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK is the same virtual time
 * in nanoseconds: the emulated host lives in it.
 */
#include <endian.h>
#include <string.h>

#include "verbs_int.h"

/* The completion fields a CQ of ibemu can return (ibv_create_cq_ex(3)). */
#define CQ_EX_WC_FLAGS                         \
	((uint64_t)IBV_WC_STANDARD_FLAGS |     \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static struct ibemu_verbs_cq *cq_of(struct ibv_cq_ex *cq)
{
	return (struct ibemu_verbs_cq *)cq;
}

static uint64_t ticks(uint64_t time_ps)
{
	return time_ps / (1000000000ull / IBEMU_VERBS_CORE_CLOCK_KHZ);
}

/*
 * Makes the ring's next entry the current one, if there is one: its
 * status and wr_id go into the public struct, and the process's clock
 * moves to its time at once (a program may post before end_poll, as
 * ibv_rc_pingpong -t does).
 */
static int take_next(struct ibemu_verbs_cq *q)
{
	struct ibemu_verbs_ring *r = &q->ring;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(q->cq.context);
	uint32_t prod = __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE);

	if (r->idx == prod)
		return ENOENT;
	/* Running before it takes the entry (waiting.c). */
	if (ctx->page->rule)
		ibemu__verbs_running(ctx);
	q->cur = (const void *)(r->ents +
				(size_t)(r->idx & (r->size - 1)) * r->esz);
	r->idx++;
	q->cq_ex.status = (enum ibv_wc_status)q->cur->status;
	q->cq_ex.wr_id = q->cur->wr_id;
	if (ctx->page->rule) {
		ibemu__verbs_took(ctx);
		ibemu__verbs_clock_at_least(ctx, q->cur->time_ps);
		ibemu__verbs_charge(ctx, IBEMU_VCOST_POLL_HIT, 0);
		ibemu__verbs_took_kick(ctx);
	}
	return 0;
}

/*
 * ENOENT for an empty CQ (under the time rule the process then waits, as
 * an empty ibv_poll_cq says), EIO for a CQ the daemon put into error. On
 * success the CQ stays locked until end_poll.
 */
static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct ibemu_verbs_cq *q = cq_of(cq);
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(cq->context);
	uint64_t seen = 0;
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	if (ctx->page->rule)
		seen = ibemu__verbs_handed(ctx);
	pthread_mutex_lock(&q->poll_lock);
	__atomic_store_n(&q->polled, 1, __ATOMIC_RELAXED);
	ret = take_next(q);
	if (!ret)
		return 0;
	pthread_mutex_unlock(&q->poll_lock);
	if (ctx->page->rule)
		ibemu__verbs_waiting(ctx, seen, IBEMU_VERBS_WAIT_CQ, q);
	ibemu__verbs_empty_poll(ctx);
	ibemu__verbs_poll_idle(ctx);
	if (__atomic_load_n(&q->ring.hdr->error, __ATOMIC_ACQUIRE))
		return EIO;
	return ret;
}

static int next_poll(struct ibv_cq_ex *cq)
{
	return take_next(cq_of(cq));
}

/* What was taken is consumed: the daemon may reuse the entries. */
static void end_poll(struct ibv_cq_ex *cq)
{
	struct ibemu_verbs_cq *q = cq_of(cq);

	__atomic_store_n(&q->ring.hdr->cons, q->ring.idx, __ATOMIC_RELEASE);
	q->cur = NULL;
	pthread_mutex_unlock(&q->poll_lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq)
{
	return (enum ibv_wc_opcode)cq_of(cq)->cur->opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *cq)
{
	return htobe32(cq_of(cq)->cur->imm_data);
}

static uint32_t read_qp_num(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->wc_flags;
}

static uint32_t read_slid(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->dlid_path_bits;
}

static uint64_t read_completion_ts(struct ibv_cq_ex *cq)
{
	return ticks(cq_of(cq)->cur->time_ps);
}

static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return cq_of(cq)->cur->time_ps / 1000;
}

/* Sets the accessors the program asked for; the others stay NULL, as a
 * provider leaves them. */
static void set_readers(struct ibv_cq_ex *cq, uint64_t wc_flags)
{
	cq->start_poll = start_poll;
	cq->next_poll = next_poll;
	cq->end_poll = end_poll;
	cq->read_opcode = read_opcode;
	cq->read_vendor_err = read_vendor_err;
	cq->read_wc_flags = read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq->read_byte_len = read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cq->read_imm_data = read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq->read_qp_num = read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cq->read_src_qp = read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cq->read_slid = read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cq->read_sl = read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cq->read_dlid_path_bits = read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq->read_completion_ts = read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq->read_completion_wallclock_ns = read_completion_wallclock_ns;
}

/*
 * The create_cq_ex op. Fields ibemu does not produce (VLAN, flow tag, tag
 * matching) and CQs that ignore overrun are EOPNOTSUPP; a parent domain
 * is EINVAL, since ibemu makes none (ibv_alloc_parent_domain fails).
 */
struct ibv_cq_ex *ibemu__verbs_create_cq_ex(struct ibv_context *context,
					    struct ibv_cq_init_attr_ex *attr)
{
	struct ibemu_verbs_cq *q;

	if (attr->comp_mask &
	    ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
		return ibemu__verbs_null(EINVAL);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		return ibemu__verbs_null(EINVAL);
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return ibemu__verbs_null(EOPNOTSUPP);
	if (attr->wc_flags & ~CQ_EX_WC_FLAGS)
		return ibemu__verbs_null(EOPNOTSUPP);
	if (attr->cqe > ibemu__verbs_ctx(context)->dev->lim->max_cqe ||
	    attr->comp_vector > (uint32_t)INT32_MAX)
		return ibemu__verbs_null(EINVAL);
	q = ibemu__verbs_cq_create(context, (int)attr->cqe, attr->cq_context,
				   attr->channel, (int)attr->comp_vector);
	if (!q)
		return NULL;
	set_readers(&q->cq_ex, attr->wc_flags);
	return &q->cq_ex;
}

/* The HCA's clock now, as mlx5 gives it: ticks in raw_clock.tv_nsec. */
int ibemu__verbs_query_rt_values(struct ibv_context *context,
				 struct ibv_values_ex *values)
{
	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)ticks(ibemu__verbs_clock());
	}
	return 0;
}
