// SPDX-License-Identifier: MIT
/*
 * Protection domains and memory regions, with the rules of rdma-core and
 * the kernel's ib_uverbs: a PD cannot be freed while an MR, AH or QP uses
 * it (EBUSY); an MR's access flags are checked as ib_check_mr_access()
 * does; its memory must be mapped in this process (any mapping: malloc,
 * stack, mmap), as pinning it would require. lkey and rkey are one key
 * (as on ConnectX), given by the HCA's transport in the daemon, which
 * reads and writes registered memory in place (docs/design.md §6).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_int.h"

VERBS_EXPORT struct ibv_pd *ibemu__ibv_alloc_pd(struct ibv_context *context);
VERBS_SYMVER_DEFAULT(ibemu__ibv_alloc_pd, ibv_alloc_pd, "IBVERBS_1.1");
struct ibv_pd *ibemu__ibv_alloc_pd(struct ibv_context *context)
{
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_obj o = {0};
	struct ibemu_verbs_pd *pd;
	int ret = ENOMEM;

	pthread_mutex_lock(&context->mutex);
	if (ctx->npds >= IBEMU_VERBS_MAX_PD) {
		pthread_mutex_unlock(&context->mutex);
		return ibemu__verbs_null(ENOMEM);
	}
	ctx->npds++;
	pthread_mutex_unlock(&context->mutex);

	pd = calloc(1, sizeof(*pd));
	if (pd)
		ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_PD_ALLOC, &o,
					sizeof(o), NULL, 0);
	if (ret) {
		free(pd);
		pthread_mutex_lock(&context->mutex);
		ctx->npds--;
		pthread_mutex_unlock(&context->mutex);
		return ibemu__verbs_null(ret);
	}
	pd->pd.context = context;
	pd->pd.handle = o.id;
	return &pd->pd;
}

VERBS_EXPORT int ibemu__ibv_dealloc_pd(struct ibv_pd *pd);
VERBS_SYMVER_DEFAULT(ibemu__ibv_dealloc_pd, ibv_dealloc_pd, "IBVERBS_1.1");
int ibemu__ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct ibemu_verbs_pd *p = (struct ibemu_verbs_pd *)pd;
	struct ibv_context *context = pd->context;
	struct ibemu_verbs_obj o = {.id = pd->handle};
	int ret;

	pthread_mutex_lock(&context->mutex);
	if (p->users) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	pthread_mutex_unlock(&context->mutex);
	ret = ibemu__verbs_call(ibemu__verbs_ctx(context),
				IBEMU_SESS_VERBS_PD_FREE, &o, sizeof(o), NULL,
				0);
	if (ret)
		return ret;
	pthread_mutex_lock(&context->mutex);
	ibemu__verbs_ctx(context)->npds--;
	pthread_mutex_unlock(&context->mutex);
	free(p);
	return 0;
}

void ibemu__verbs_pd_use(struct ibv_pd *pd, int delta)
{
	struct ibemu_verbs_pd *p = (struct ibemu_verbs_pd *)pd;

	pthread_mutex_lock(&pd->context->mutex);
	p->users += (unsigned)delta;
	pthread_mutex_unlock(&pd->context->mutex);
}

/* The access flags a region may carry (ib_uverbs' IB_ACCESS_SUPPORTED). */
#define ACCESS_KNOWN                                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                 \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND | \
	 IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING)

/* 0, or the errno the kernel gives flags 'access'. */
static int access_check(unsigned access)
{
	if (access & ~ACCESS_KNOWN)
		return EINVAL;
	/* IBA 10.6.3.2 (ib_check_mr_access): remote write and atomic
	 * access need local write access. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	/* No on-demand paging, no memory windows, no zero-based MRs. */
	if (access &
	    (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED))
		return EOPNOTSUPP;
	return 0;
}

/*
 * 0 when [addr, addr + len) is mapped in this process, else EFAULT, as the
 * kernel's get_user_pages() fails on a hole. mincore() answers ENOMEM
 * for a range with unmapped pages and changes nothing.
 */
static int memory_check(const void *addr, size_t len)
{
	unsigned char vec[256];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = (uintptr_t)addr + len;
	size_t chunk;

	if (end < (uintptr_t)addr)
		return EFAULT;
	while (start < end) {
		chunk = end - start;
		if (chunk > sizeof(vec) * page)
			chunk = sizeof(vec) * page;
		if (mincore((void *)start, chunk, vec))
			return errno == ENOMEM ? EFAULT : errno;
		start += (chunk + page - 1) & ~(page - 1);
	}
	return 0;
}

/* Whether a process may wait for writes into a region of 'access'. */
static int remote_target(unsigned access)
{
	return !!(access &
		  (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC));
}

/* The daemon presumes memory polling only in a process with such regions
 * (docs/design.md §3), and the library kicks it for them alone. */
static void remote_mrs_add(struct ibemu_verbs_context *ctx,
			   struct ibv_context *context, int n)
{
	pthread_mutex_lock(&context->mutex);
	__atomic_store_n(&ctx->remote_mrs, ctx->remote_mrs + (unsigned)n,
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&context->mutex);
}

VERBS_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					     size_t length, uint64_t iova,
					     unsigned int access)
{
	struct ibv_context *context = pd->context;
	struct ibemu_verbs_context *ctx = ibemu__verbs_ctx(context);
	struct ibemu_verbs_mr *mr;
	int ret;

	/* Optional flags are hints a device may ignore (verbs.h). */
	access &= ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE |
		  IBV_ACCESS_RELAXED_ORDERING;
	ret = access_check(access);
	if (ret)
		return ibemu__verbs_null(ret);
	if (!length || length > IBEMU_VERBS_MAX_MR_SIZE)
		return ibemu__verbs_null(EINVAL);
	ret = memory_check(addr, length);
	if (ret)
		return ibemu__verbs_null(ret);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ibemu__verbs_null(ENOMEM);
	pthread_mutex_lock(&context->mutex);
	if (ctx->nmrs >= IBEMU_VERBS_MAX_MR) {
		pthread_mutex_unlock(&context->mutex);
		free(mr);
		return ibemu__verbs_null(ENOMEM);
	}
	ctx->nmrs++;
	((struct ibemu_verbs_pd *)pd)->users++;
	pthread_mutex_unlock(&context->mutex);
	{
		struct ibemu_verbs_mr_req m = {
			.addr = (uintptr_t)addr,
			.len = length,
			.pd = pd->handle,
			.access = access,
		};
		uint64_t first = (uintptr_t)addr / 4096;
		int fd;

		/* Per 4 KiB page the region touches (pinned one by one). The
		 * process runs from here: moving the pages takes wall time. */
		ibemu__verbs_charge(ctx, IBEMU_VCOST_MR_REG,
				    ((uintptr_t)addr + length + 4095) / 4096 -
					    first);
		ibemu__verbs_calling(ctx);
		fd = ibemu__verbs_mr_share(ctx, (uintptr_t)addr, length, &m);
		ret = ibemu__verbs_call(ctx, IBEMU_SESS_VERBS_MR_REG, &m,
					sizeof(m), &fd, fd >= 0 ? 1 : 0);
		if (ret) {
			pthread_mutex_lock(&context->mutex);
			ctx->nmrs--;
			((struct ibemu_verbs_pd *)pd)->users--;
			pthread_mutex_unlock(&context->mutex);
			free(mr);
			return ibemu__verbs_null(ret);
		}
		mr->mr.lkey = m.lkey;
		mr->mr.rkey = m.rkey;
		mr->mr.handle = m.lkey;
	}
	mr->mr.context = context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->access = access;
	if (remote_target(access))
		remote_mrs_add(ctx, context, 1);
	(void)iova; /* the address the peer names: kept by the transport */
	return &mr->mr;
}

VERBS_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					    size_t length, uint64_t iova,
					    int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

VERBS_EXPORT struct ibv_mr *ibemu__ibv_reg_mr(struct ibv_pd *pd, void *addr,
					      size_t length, int access);
VERBS_SYMVER_DEFAULT(ibemu__ibv_reg_mr, ibv_reg_mr, "IBVERBS_1.1");
struct ibv_mr *ibemu__ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				 int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr,
				(unsigned)access);
}

VERBS_EXPORT int ibemu__ibv_dereg_mr(struct ibv_mr *mr);
VERBS_SYMVER_DEFAULT(ibemu__ibv_dereg_mr, ibv_dereg_mr, "IBVERBS_1.1");
int ibemu__ibv_dereg_mr(struct ibv_mr *mr)
{
	struct ibv_context *context = mr->context;
	struct ibemu_verbs_obj o = {.id = mr->lkey};
	int ret;

	ret = ibemu__verbs_call(ibemu__verbs_ctx(context),
				IBEMU_SESS_VERBS_MR_DEREG, &o, sizeof(o), NULL,
				0);
	if (ret)
		return ret;
	if (remote_target(((struct ibemu_verbs_mr *)mr)->access))
		remote_mrs_add(ibemu__verbs_ctx(context), context, -1);
	pthread_mutex_lock(&context->mutex);
	ibemu__verbs_ctx(context)->nmrs--;
	((struct ibemu_verbs_pd *)mr->pd)->users--;
	pthread_mutex_unlock(&context->mutex);
	free(mr);
	return 0;
}

/* Re-registration changes what the transport holds; it comes with it.
 * The region stays as it was (IBV_REREG_MR_ERR_INPUT). */
VERBS_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			      void *addr, size_t length, int access)
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

/* dma-buf regions are device memory; an emulated HCA has none. */
VERBS_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd,
					      uint64_t offset, size_t length,
					      uint64_t iova, int fd, int access)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

/* Importing objects needs a context shared through the uverbs file. */
VERBS_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					  uint32_t pd_handle)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
}

VERBS_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	return ibemu__verbs_null(EOPNOTSUPP);
}

VERBS_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
}
