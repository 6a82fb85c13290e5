// SPDX-License-Identifier: MIT
/*
 * A program that hooks mremap() as UCX 1.13's memory hooks do (libucm):
 * its mremap takes four arguments and calls libc's with those four, so a
 * MREMAP_FIXED move made through it goes where the fifth register points,
 * not to the address asked for. Registered memory must stay where the
 * program has it, with its bytes: a buffer written before and after
 * ibv_reg_mr is sent on an RC QP connected to itself and checked. Prints
 * hooked=ok (or what it found) and the number of failures.
 *
 * usage: verbs-hooked
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

#define LEN (64 * 1024)

/*
 * Exported (-rdynamic, default visibility), so that the libraries' calls come here. libc's
 * mremap is then called with what the hook's own code left in the fifth
 * argument's register: 0 here, as found under UCX (root may map page 0,
 * so the move succeeds, to the wrong place).
 */
__attribute__((visibility("default"))) void *
mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	static void *(*orig)(void *, size_t, size_t, int, void *);

	if (!orig)
		*(void **)&orig = dlsym(RTLD_NEXT, "mremap");
	return orig(old, old_size, new_size, flags, NULL);
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long i;
	int n;

	for (i = 0; i < 50000000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n == 1 && wc->status == IBV_WC_SUCCESS;
	}
	return 0;
}

static const char *send_back(struct ibv_pd *pd, struct ibv_cq *cq, uint8_t *src,
			     uint8_t *dst, uint16_t lid)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	struct ibv_mr *smr = ibv_reg_mr(pd, src, LEN, 0);
	struct ibv_mr *rmr = ibv_reg_mr(pd, dst, LEN, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge ss = {(uintptr_t)src, LEN, smr ? smr->lkey : 0};
	struct ibv_sge rs = {(uintptr_t)dst, LEN, rmr ? rmr->lkey : 0};
	struct ibv_send_wr swr = {.sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *bs;
	struct ibv_recv_wr rwr = {.sg_list = &rs, .num_sge = 1}, *br;
	const char *res = "ok";
	struct ibv_wc wc;
	unsigned i;

	CHECK(qp && smr && rmr, "setup: errno %d", errno);
	if (!qp || !smr || !rmr)
		return "setup";
	for (i = 0; i < LEN; i++)
		if (src[i] != (uint8_t)(i * 13))
			res = "registration changed the bytes";
	/* Written after registration: the HCA must see these. */
	for (i = LEN / 2; i < LEN; i++)
		src[i] = (uint8_t)(i * 5);
	CHECK_RET(loopback_connect(qp, lid, IBV_MTU_2048, 1), 0);
	CHECK_RET(ibv_post_recv(qp, &rwr, &br), 0);
	CHECK_RET(ibv_post_send(qp, &swr, &bs), 0);
	CHECK(poll_one(cq, &wc) && poll_one(cq, &wc), "completions");
	if (!strcmp(res, "ok") && memcmp(dst, src, LEN))
		res = "the bytes sent are not the buffer's";
	CHECK_RET(ibv_dereg_mr(smr), 0);
	CHECK_RET(ibv_dereg_mr(rmr), 0);
	CHECK_RET(ibv_destroy_qp(qp), 0);
	return res;
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx =
		list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	uint8_t *src = malloc(LEN), *dst = malloc(LEN);
	struct ibv_port_attr pa;
	const char *res = "setup";
	unsigned i;

	if (cq && src && dst && !ibv_query_port(ctx, 1, &pa)) {
		for (i = 0; i < LEN; i++)
			src[i] = (uint8_t)(i * 13);
		res = send_back(pd, cq, src, dst, pa.lid);
	}
	printf("hooked=%s\n", res);
	if (cq)
		CHECK_RET(ibv_destroy_cq(cq), 0);
	if (pd)
		CHECK_RET(ibv_dealloc_pd(pd), 0);
	if (ctx)
		CHECK_RET(ibv_close_device(ctx), 0);
	if (list)
		ibv_free_device_list(list);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}
