// SPDX-License-Identifier: MIT
/*
 * The program's own clocks under `ibemu exec` (vtime/, integration.vtime):
 * reads clock_gettime (MONOTONIC, MONOTONIC_RAW, BOOTTIME, REALTIME),
 * gettimeofday, time, rdtsc and rdtscp, each followed at once by
 * ibemu_now_ps(), before and after 20 SEND ping-pongs on an RC QP
 * connected to itself, and checks that each clock moved exactly as the
 * virtual clock did, in its own unit (rdtsc: ticks of /proc/cpuinfo's
 * "cpu MHz"); MONOTONIC must also equal the virtual time itself, and
 * CLOCK_TAI, which stays real, the kernel's. It
 * prints "CLOCK DELTA UNIT" per clock (the same every run), "FAIL: ..."
 * lines, and exits with the number of failures.
 *
 * usage: vtime-client measure   the above
 *        vtime-client thread    the above in a thread created now
 *        vtime-client fork      the above in a child made by fork()
 *        vtime-client exec      execv()s 'vtime-client measure'
 *        vtime-client segv      its own SIGSEGV handler (sigaction) gets
 *                               a NULL dereference; rdtsc stays virtual
 *        vtime-client segv-dfl  rdtsc, then a NULL dereference with no
 *                               handler: killed by SIGSEGV
 *        vtime-client latency   the model's latencies for perftest's
 *                               defaults, by ibemu_now_ps() alone: a
 *                               2-byte SEND from post to the receive's
 *                               completion (ib_send_lat's one-way), a
 *                               2-byte RDMA READ from post to completion
 *                               (ib_read_lat's), in ps
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ibemu.h"
#include "vtime-clients.h"
#include "verbs-check.h"

#define PINGS	20
#define NCLOCKS 8

static const char *const names[NCLOCKS] = {
	"monotonic",	"monotonic_raw", "boottime", "realtime",
	"gettimeofday", "time",		 "rdtsc",    "rdtscp"};
static const char *const units[NCLOCKS] = {"ns", "ns", "ns",	"ns",
					   "us", "s",  "ticks", "ticks"};
static uint64_t khz;

static uint64_t rdtscp(void)
{
	uint32_t lo, hi, aux;

	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Clock 'i' in its unit. */
static uint64_t read_clock(int i)
{
	struct timeval tv;

	switch (i) {
	case 0:
		return ns_of(CLOCK_MONOTONIC);
	case 1:
		return ns_of(CLOCK_MONOTONIC_RAW);
	case 2:
		return ns_of(CLOCK_BOOTTIME);
	case 3:
		return ns_of(CLOCK_REALTIME);
	case 4:
		gettimeofday(&tv, NULL);
		return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	case 5:
		return (uint64_t)time(NULL);
	case 6:
		return tsc_read();
	default:
		return rdtscp();
	}
}

/* Virtual time 'ps' in clock 'i''s unit (up to a constant offset). */
static uint64_t virtual_in(int i, uint64_t ps)
{
	switch (i) {
	case 4:
		return ps / 1000000;
	case 5:
		return ps / 1000000000000u;
	case 6:
	case 7:
		return (uint64_t)((unsigned __int128)ps * khz / 1000000000u);
	default:
		return ps / 1000;
	}
}

struct loop {
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

static int loop_open(struct loop *l)
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
	struct ibv_pd *pd;

	l->ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!l->ctx || ibv_query_port(l->ctx, 1, &pa))
		return -1;
	pd = ibv_alloc_pd(l->ctx);
	l->buf = calloc(1, 8192);
	l->mr = pd ? ibv_reg_mr(pd, l->buf, 8192,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)
		   : NULL;
	l->cq = ibv_create_cq(l->ctx, 16, NULL, NULL, 0);
	qa.send_cq = qa.recv_cq = l->cq;
	l->qp = l->mr && l->cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!l->qp || loopback_connect(l->qp, pa.lid, IBV_MTU_1024, 1))
		return -1;
	return 0;
}

/* One SEND of 256 bytes to itself: both completions taken. */
static int ping(struct loop *l)
{
	struct ibv_sge rs = {(uintptr_t)l->buf + 4096, 4096, l->mr->lkey};
	struct ibv_sge ss = {(uintptr_t)l->buf, 256, l->mr->lkey};
	struct ibv_recv_wr rwr = {.sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_send_wr swr = {.sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	struct ibv_wc wc;
	int got = 0, n;

	if (ibv_post_recv(l->qp, &rwr, &rbad) ||
	    ibv_post_send(l->qp, &swr, &sbad))
		return -1;
	while (got < 2) {
		n = ibv_poll_cq(l->cq, 1, &wc);
		if (n < 0 || (n && wc.status != IBV_WC_SUCCESS))
			return -1;
		got += n;
	}
	return 0;
}

/* Virtual ps from posting 'wr' (2 bytes) to its last completion. */
static uint64_t timed(struct loop *l, enum ibv_wr_opcode op)
{
	struct ibv_sge rs = {(uintptr_t)l->buf + 4096, 4096, l->mr->lkey};
	struct ibv_sge ss = {(uintptr_t)l->buf, 2, l->mr->lkey};
	struct ibv_recv_wr rwr = {.sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_send_wr swr = {.sg_list = &ss,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = {(uintptr_t)l->buf + 4096,
					      l->mr->rkey}},
			   *sbad;
	int want = op == IBV_WR_SEND ? 2 : 1, got = 0, n;
	uint64_t t0, t = 0;
	struct ibv_wc wc;

	if (op == IBV_WR_SEND && ibv_post_recv(l->qp, &rwr, &rbad))
		return 0;
	t0 = ibemu_now_ps();
	if (ibv_post_send(l->qp, &swr, &sbad))
		return 0;
	while (got < want) {
		n = ibv_poll_cq(l->cq, 1, &wc);
		if (n < 0 || (n && wc.status != IBV_WC_SUCCESS))
			return 0;
		/* The SEND's own completion (its ACK) may come last. */
		if (n && wc.opcode != IBV_WC_SEND)
			t = ibemu_now_ps();
		got += n;
	}
	return t - t0;
}

static int latency(void)
{
	struct loop l;

	if (!ibemu_now_ps || loop_open(&l)) {
		printf("FAIL: no loopback QP under ibemu's libibverbs\n");
		return 1;
	}
	printf("send_oneway_ps %llu\n",
	       (unsigned long long)timed(&l, IBV_WR_SEND));
	printf("read_ps %llu\n",
	       (unsigned long long)timed(&l, IBV_WR_RDMA_READ));
	return 0;
}

static int measure(void)
{
	uint64_t c0[NCLOCKS], v0[NCLOCKS], c1, v1, now;
	struct loop l;
	int i;

	if (!ibemu_now_ps) {
		printf("FAIL: not under ibemu's libibverbs\n");
		return 1;
	}
	khz = tsc_cpuinfo_khz();
	/* Before any device is open the clocks are already virtual. */
	c1 = read_clock(0);
	now = ibemu_now_ps();
	CHECK(c1 == now / 1000, "monotonic before open: %llu, want %llu",
	      (unsigned long long)c1, (unsigned long long)(now / 1000));
	/* A clock that stays real (the vDSO reads the TSC for it: the real
	 * one) agrees with the kernel's. */
	{
		struct timespec a, k;

		clock_gettime(CLOCK_TAI, &a);
		syscall(SYS_clock_gettime, CLOCK_TAI, &k);
		CHECK(k.tv_sec - a.tv_sec <= 1 && a.tv_sec <= k.tv_sec,
		      "CLOCK_TAI %lld s, the kernel's %lld s",
		      (long long)a.tv_sec, (long long)k.tv_sec);
	}
	if (loop_open(&l)) {
		printf("FAIL: cannot make a loopback QP\n");
		return 1;
	}
	for (i = 0; i < NCLOCKS; i++) {
		c0[i] = read_clock(i);
		v0[i] = ibemu_now_ps();
	}
	now = v0[0];
	CHECK(c0[0] == now / 1000, "monotonic: %llu, want %llu",
	      (unsigned long long)c0[0], (unsigned long long)(now / 1000));
	for (i = 0; i < PINGS; i++)
		if (ping(&l)) {
			printf("FAIL: ping %d\n", i);
			return 1;
		}
	for (i = 0; i < NCLOCKS; i++) {
		c1 = read_clock(i);
		v1 = ibemu_now_ps();
		CHECK(c1 - c0[i] == virtual_in(i, v1) - virtual_in(i, v0[i]),
		      "%s moved %llu %s, the virtual clock %llu", names[i],
		      (unsigned long long)(c1 - c0[i]), units[i],
		      (unsigned long long)(virtual_in(i, v1) -
					   virtual_in(i, v0[i])));
		printf("%s %llu %s\n", names[i],
		       (unsigned long long)(c1 - c0[i]), units[i]);
	}
	fflush(stdout);
	return failures;
}

static void *measure_thread(void *arg)
{
	*(int *)arg = measure();
	return NULL;
}

static int in_thread(void)
{
	pthread_t t;
	int ret = 1;

	if (pthread_create(&t, NULL, measure_thread, &ret) ||
	    pthread_join(t, NULL))
		return 1;
	return ret;
}

static sigjmp_buf back;
static void *fault_addr;
static int fault_code;

static void segv_cb(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = si->si_addr;
	fault_code = si->si_code;
	siglongjmp(back, 1);
}

/* rdtsc and rdtscp read as the virtual clock does: 'tag' names when. */
static void check_tsc(const char *tag)
{
	uint64_t t = tsc_read(), v = ibemu_now_ps();
	uint64_t p = rdtscp(), w = ibemu_now_ps();

	CHECK(t == virtual_in(6, v) && p == virtual_in(7, w),
	      "%s: rdtsc %llu rdtscp %llu, want %llu %llu", tag,
	      (unsigned long long)t, (unsigned long long)p,
	      (unsigned long long)virtual_in(6, v),
	      (unsigned long long)virtual_in(7, w));
}

static int own_handler(void)
{
	struct sigaction sa = {.sa_sigaction = segv_cb, .sa_flags = SA_SIGINFO},
			 old;
	khz = tsc_cpuinfo_khz();
	sigemptyset(&sa.sa_mask);
	CHECK_RET(sigaction(SIGSEGV, &sa, NULL), 0);
	CHECK_RET(sigaction(SIGSEGV, NULL, &old), 0);
	CHECK(old.sa_sigaction == segv_cb, "sigaction gives back %p, want %p",
	      (void *)old.sa_sigaction, (void *)segv_cb);
	check_tsc("with a handler");
	if (!sigsetjmp(back, 1))
		store_to_null();
	CHECK(fault_addr == NULL && fault_code == SEGV_MAPERR,
	      "handler got address %p code %d, want (nil) %d", fault_addr,
	      fault_code, SEGV_MAPERR);
	check_tsc("after the fault");
	printf("handler got the fault at %p\n", fault_addr);
	return failures;
}

static int default_action(void)
{
	khz = tsc_cpuinfo_khz();
	check_tsc("no handler");
	printf("tsc checked\n");
	fflush(stdout);
	store_to_null();
	printf("FAIL: survived a NULL dereference\n");
	return 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";
	char *args[] = {argv[0], (char *)"measure", NULL};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "measure"))
		return measure();
	if (!strcmp(mode, "thread"))
		return in_thread();
	if (!strcmp(mode, "fork"))
		return in_child(measure);
	if (!strcmp(mode, "exec")) {
		execv(argv[0], args);
		return 127;
	}
	if (!strcmp(mode, "segv"))
		return own_handler();
	if (!strcmp(mode, "segv-dfl"))
		return default_action();
	if (!strcmp(mode, "latency"))
		return latency();
	fprintf(stderr, "usage: vtime-client measure|thread|fork|exec|segv|"
			"segv-dfl|latency\n");
	return 2;
}
