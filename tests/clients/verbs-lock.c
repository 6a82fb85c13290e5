// SPDX-License-Identifier: MIT
/*
 * Two threads of one process share a mutex around their sends, as Open
 * MPI's openib BTL does in its connection manager (udcm_post_send): the
 * sender holds the mutex while it spins on its send's completion, and the
 * other thread, which took a completion last (it runs, as far as the time
 * rule knows), sleeps on the mutex meanwhile. Only virtual time can
 * bring the completion, so the library must take the sleeper for a thread
 * that waits (verbs/waiting.c); before it did, each round held virtual
 * time until the daemon's grace period. ROUNDS rounds over an RC QP
 * connected to itself, each message checked; prints "rounds N" and
 * exits 0. Linked against the system libibverbs; it needs ibemu's
 * (ibemu exec).
 *
 * usage: verbs-lock ROUNDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

#define MSG 64

static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_cq *send_cq, *recv_cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static char *buf; /* [0, MSG): send; [MSG, 2 MSG): receive */
static int rounds;
/* The round the sender may start, or r + rounds + 1 once it holds the
 * mutex for round r (atomic); none before the first. */
static int turn = -1;

static int post_recv(void)
{
	struct ibv_sge sge = {(uintptr_t)buf + MSG, MSG, mr->lkey};
	struct ibv_recv_wr wr = {.sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Round 'r': posts a send under the mutex and spins on its completion. */
static int send_round(int r)
{
	struct ibv_sge sge = {(uintptr_t)buf, MSG, mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;
	int n;

	memset(buf, 'a' + r % 26, MSG);
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(send_cq, 1, &wc)) == 0)
		;
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* The sender: each round, the mutex held across its send. */
static void *sender(void *arg)
{
	struct timespec ms = {0, 1000 * 1000};
	intptr_t bad = 0;
	int r;

	(void)arg;
	for (r = 0; r < rounds && !bad; r++) {
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != r)
			;
		pthread_mutex_lock(&send_lock);
		/* Let the receiver reach the mutex and sleep on it. */
		__atomic_store_n(&turn, r + rounds + 1, __ATOMIC_RELEASE);
		nanosleep(&ms, NULL);
		bad = send_round(r) != 0;
		pthread_mutex_unlock(&send_lock);
	}
	return (void *)bad;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	pthread_t th;
	void *ret;
	int r, n;

	if (argc != 2 || (rounds = atoi(argv[1])) <= 0)
		return 2 + failures; /* verbs-check.h's count, unused here */
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 1;
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 2 * MSG);
	mr = pd && buf ? ibv_reg_mr(pd, buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE)
		       : NULL;
	send_cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	recv_cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	qa.send_cq = send_cq;
	qa.recv_cq = recv_cq;
	qp = mr && send_cq && recv_cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp || loopback_connect(qp, pa.lid, IBV_MTU_1024, 1) ||
	    post_recv() || pthread_create(&th, NULL, sender, NULL))
		return 1;
	/* The receiver: takes each message, then needs the mutex (it runs
	 * from the take on) while the sender holds it. */
	for (r = 0; r < rounds; r++) {
		if (r) {
			while ((n = ibv_poll_cq(recv_cq, 1, &wc)) == 0)
				;
			if (n != 1 || wc.status != IBV_WC_SUCCESS ||
			    wc.byte_len != MSG ||
			    buf[MSG] != 'a' + (r - 1) % 26)
				return 1;
			if (post_recv())
				return 1;
		}
		__atomic_store_n(&turn, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) == r)
			;
		pthread_mutex_lock(&send_lock);
		pthread_mutex_unlock(&send_lock);
	}
	while ((n = ibv_poll_cq(recv_cq, 1, &wc)) == 0)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS ||
	    buf[MSG] != 'a' + (rounds - 1) % 26)
		return 1;
	if (pthread_join(th, &ret) || ret)
		return 1;
	printf("rounds %d\n", rounds);
	return 0;
}
