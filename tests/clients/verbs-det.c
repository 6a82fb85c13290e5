// SPDX-License-Identifier: MIT
/*
 * The determinism test's program (tests/integration/test_time.py): two
 * processes connect an RC QP through files, as verbs-client's peers do,
 * then run a fixed exchange: 100 SEND ping-pongs of varying sizes (the
 * client declares 1 us of compute time before each), then 5 RDMA WRITEs
 * and 5 RDMA READs of growing sizes from the client, and a last SEND that
 * ends the server. Each side prints the virtual time (ibemu_now_ps(), from
 * ibemu.h) at every completion it takes, relative to its clock when it
 * opened the device, so that runs on fresh daemons and on one daemon
 * twice can be compared byte for byte. Linked against the system
 * libibverbs, as real programs are; it needs ibemu's (ibemu exec).
 *
 * 'tserver' and 'tclient' run the threads scenario instead: in the client
 * one thread blocks in ibv_get_cq_event for the server's SEND while
 * another, which posted a SEND just before, sleeps 5 ms of
 * wall time, declares 10 us of compute and posts a second SEND. The
 * process runs all along (one of its threads does), so the server's SEND
 * cannot be handed to it before the second SEND is posted: the waiting
 * thread wakes with the clock at exactly 10 us and the second SEND leaves
 * at 10 us (verbs/README.md, "Virtual time").
 *
 * 'sserver' and 'sclient' run a stream instead, for a fault mid-stream
 * (test_time.py's spine test): the client prints its clock ("t0", virtual
 * picoseconds since the fabric started), waits for the file IN.go, then
 * makes STREAM_PINGS ping-pongs of 1 KiB, declaring STREAM_COMPUTE_PS of
 * compute before each; both sides print every completion at its virtual
 * time since t0. With timeout 14 and retry_cnt 7 (connect_qp()), a
 * message lost to a link that went down is sent again 67 ms later, over
 * the routes the SM made meanwhile.
 *
 * 'mserver' and 'mclient' run a WRITE ping-pong by memory polling, as
 * perftest's ib_write_lat does: after one SEND that starts it, each side
 * spins on a word of its registered memory, making no verbs call, until
 * the peer's RDMA WRITE puts the round's number there, then writes the
 * next number into the peer's memory and takes the WRITE's completion.
 * Under the memory-polling rule (docs/design.md §3) each landing is
 * handed to the spinning side as a completion, so the virtual times are
 * the same every run.
 *
 * 'lserver' and 'lclient' run the exchange's ping-pongs with a long pause
 * first (no RDMA, so that the server's memory is not open to remote
 * writes and it is never taken for a memory poller): the client declares
 * LONG_COMPUTE_PS (2.5 s) of compute before its first SEND, while the
 * server spins on its CQ without reading its clock. The
 * daemon hands the spinning server a second of virtual time at a time,
 * each earned by its polls, and waits at each tick until it is
 * (docs/design.md §3, "Time passes for a spinning wait"); the SEND then
 * finds it at the same virtual time in every run.
 *
 * usage: verbs-det server|client|tserver|tclient|sserver|sclient|mserver|
 *                  mclient|lserver|lclient OUT IN
 */
#include <pthread.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ibemu.h"

#define PINGS 100
#define BUF   (1u << 20)

#define LONG_COMPUTE_PS 2500000000000ull /* 2.5 s */

#define STREAM_PINGS	  1000
#define STREAM_COMPUTE_PS 100000000ull /* 100 us */

static const uint32_t sizes[] = {8, 64, 256, 1000, 1024, 4096, 5000, 16384};
static const uint32_t rdma_sizes[] = {8, 4096, 10000, 65536, 262144};

static struct ibv_cq *cq;  /* every completion but tclient's receives */
static struct ibv_cq *rcq; /* receives (tclient: on the channel 'ch') */
static struct ibv_comp_channel *ch, *sch; /* tclient: rcq's and cq's */
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint64_t t0;

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "verbs-det: %s\n", what);
	exit(1);
}

/*
 * Takes one completion from 'q' if there is one, writing what it was and
 * the virtual time then into 'out'; returns whether it took one.
 */
static int take_once(struct ibv_cq *q, const char *what, unsigned i, char *out,
		     size_t len)
{
	struct ibv_wc wc;
	int n;

	n = ibv_poll_cq(q, 1, &wc);
	if (!n)
		return 0;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "verbs-det: %s %u: %s\n", what, i,
			n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		exit(1);
	}
	snprintf(out, len, "%s %u wr %" PRIu64 " op %d len %u t %" PRIu64 "\n",
		 what, i, (uint64_t)wc.wr_id, (int)wc.opcode, wc.byte_len,
		 ibemu_now_ps() - t0);
	return 1;
}

/* Waits for one completion on 'q' (busy polling) and describes it. */
static void take_on(struct ibv_cq *q, const char *what, unsigned i, char *out,
		    size_t len)
{
	while (!take_once(q, what, i, out, len))
		;
}

/* The same, blocking in ibv_get_cq_event on 'c' while 'q' is empty. */
static void take_blocking(struct ibv_cq *q, struct ibv_comp_channel *c,
			  const char *what, unsigned i, char *out, size_t len)
{
	struct ibv_cq *evq;
	void *evctx;

	while (!take_once(q, what, i, out, len)) {
		if (ibv_req_notify_cq(q, 0))
			die("ibv_req_notify_cq");
		if (take_once(q, what, i, out, len))
			return;
		if (ibv_get_cq_event(c, &evq, &evctx) || evq != q)
			die("ibv_get_cq_event");
		ibv_ack_cq_events(evq, 1);
	}
}

/* Waits for one completion and prints it. */
static void take(const char *what, unsigned i)
{
	char line[256];

	take_on(cq, what, i, line, sizeof(line));
	fputs(line, stdout);
}

static void post_recv(uint64_t id)
{
	struct ibv_sge sge = {(uintptr_t)buf, BUF / 2, mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

/* Posts a send request, signaled unless 'quiet'. */
static void post_send_as(uint64_t id, enum ibv_wr_opcode op, uint32_t len,
			 uint64_t raddr, uint32_t rkey, int quiet)
{
	struct ibv_sge sge = {(uintptr_t)buf + BUF / 2, len, mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = quiet ? 0 : IBV_SEND_SIGNALED,
				 .wr.rdma = {raddr, rkey}};
	struct ibv_send_wr *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
}

static void post_send(uint64_t id, enum ibv_wr_opcode op, uint32_t len,
		      uint64_t raddr, uint32_t rkey)
{
	post_send_as(id, op, len, raddr, rkey, 0);
}

static void connect_qp(uint16_t lid, uint32_t qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/*
 * The threads scenario's client: 'waiter' blocks for the server's SEND,
 * 'sender' keeps the process running meanwhile. Each writes what it saw
 * into its lines; main prints them in a fixed order. They hand over with
 * a condition variable, and wait for completions blocked in the kernel,
 * so that no thread spins: one that is runnable but not scheduled on a
 * loaded host is then not taken for one that spins (the grace period).
 */
#define T_COMPUTE_PS 10000000ull /* the sender's declared compute: 10 us */
#define T_SLEEP_US   5000	 /* wall time, well under the grace period */

static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t t_cond = PTHREAD_COND_INITIALIZER;
static int t_stage; /* 1: the waiter's RECV is posted; 2: the first SEND */
static char waiter_line[256], sender_line[256];

static void stage_set(int stage)
{
	pthread_mutex_lock(&t_lock);
	t_stage = stage;
	pthread_cond_broadcast(&t_cond);
	pthread_mutex_unlock(&t_lock);
}

static void stage_wait(int stage)
{
	pthread_mutex_lock(&t_lock);
	while (t_stage < stage)
		pthread_cond_wait(&t_cond, &t_lock);
	pthread_mutex_unlock(&t_lock);
}

static void *waiter(void *arg)
{
	struct ibv_cq *evq;
	void *evctx;

	post_recv(0);
	if (ibv_req_notify_cq(rcq, 0))
		die("ibv_req_notify_cq");
	/* The server answers the sender's first SEND: the RECV is there. */
	stage_set(1);
	/* The sender takes part (it posted) before this thread waits. */
	stage_wait(2);
	if (ibv_get_cq_event(ch, &evq, &evctx) || evq != rcq)
		die("ibv_get_cq_event");
	ibv_ack_cq_events(evq, 1);
	take_on(rcq, "waiter recv", 0, waiter_line, sizeof(waiter_line));
	return arg;
}

static void *sender(void *arg)
{
	stage_wait(1);
	/* Unsignaled: no completion of it resumes the process before the
	 * server's SEND reaches the waiter. */
	post_send_as(0, IBV_WR_SEND, 64, 0, 0, 1);
	stage_set(2);
	/* Silent, running: the process may not be seen waiting now. */
	usleep(T_SLEEP_US);
	ibemu_compute_ps(T_COMPUTE_PS);
	post_send(1, IBV_WR_SEND, 64, 0, 0);
	take_blocking(cq, sch, "sender send", 1, sender_line,
		      sizeof(sender_line));
	return arg;
}

static void tclient(void)
{
	pthread_t w, s;

	if (pthread_create(&w, NULL, waiter, NULL) ||
	    pthread_create(&s, NULL, sender, NULL))
		die("pthread_create");
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	fputs(waiter_line, stdout);
	fputs(sender_line, stdout);
}

/*
 * Its server: takes both SENDs and, after the first, sends one to the
 * waiter. No packet moves before the client's threads are under way, so
 * no wall-clock wait of either side (files, thread start) holds back work
 * of the engine, which the grace period would let through.
 */
static void tserver(void)
{
	post_recv(0);
	post_recv(1);
	take("server", 0);
	post_send(0, IBV_WR_SEND, 64, 0, 0);
	take("server", 1);
	take("server", 2);
}

static FILE *wait_file(const char *path);

/* The stream's server: echoes every ping. */
static void sserver(void)
{
	unsigned i;

	for (i = 0; i < STREAM_PINGS; i++) {
		take("recv", i);
		post_recv(i + 1);
		post_send(i, IBV_WR_SEND, 1024, 0, 0);
		take("send", i);
	}
}

/* The stream's client; 'go' is the file it waits for before it starts. */
static void sclient(const char *go)
{
	unsigned i;

	printf("t0 %" PRIu64 "\n", t0);
	fflush(stdout);
	fclose(wait_file(go));
	for (i = 0; i < STREAM_PINGS; i++) {
		ibemu_compute_ps(STREAM_COMPUTE_PS);
		post_recv(i);
		post_send(i, IBV_WR_SEND, 1024, 0, 0);
		take("ping", i);
		take("ping", i);
	}
}

#define MPINGS 200

/* Spins on the first word of 'buf' until the peer wrote 'n' there. */
static void spin_for(uint64_t n)
{
	while (__atomic_load_n((volatile uint64_t *)buf, __ATOMIC_ACQUIRE) != n)
		;
}

/*
 * Writes 'n' into the first word of the peer's memory; takes the WRITE's
 * completion, and does next to nothing before the next call or spin (a
 * process that computes there, without a call, may be taken for one that
 * polls memory).
 */
static void write_word(uint64_t n, uint64_t raddr, uint32_t rkey)
{
	struct ibv_wc wc;
	int got;

	*(volatile uint64_t *)(buf + BUF / 2) = n;
	post_send(n, IBV_WR_RDMA_WRITE, sizeof(n), raddr, rkey);
	while (!(got = ibv_poll_cq(cq, 1, &wc)))
		;
	if (got < 0 || wc.status != IBV_WC_SUCCESS)
		die("the WRITE failed");
}

/*
 * Its server: a SEND starts the rounds; it answers each landing. A SEND
 * ends them, after which no work of either side is in flight when the
 * other tears down (a destroy acts at whatever time the engine reached).
 */
static void mserver(uint64_t raddr, uint32_t rkey)
{
	uint64_t n;

	take("start", 0);
	for (n = 1; n <= MPINGS; n++) {
		spin_for(2 * n - 1);
		write_word(2 * n, raddr, rkey);
	}
	take("done", 0);
	printf("mserver %u t %" PRIu64 "\n", MPINGS, ibemu_now_ps() - t0);
}

static void mclient(uint64_t raddr, uint32_t rkey)
{
	uint64_t n;

	post_send(0, IBV_WR_SEND, 4, 0, 0);
	take("start", 0);
	for (n = 1; n <= MPINGS; n++) {
		write_word(2 * n - 1, raddr, rkey);
		spin_for(2 * n);
	}
	post_send(1, IBV_WR_SEND, 4, 0, 0);
	take("done", 0);
	printf("mclient %u t %" PRIu64 "\n", MPINGS, ibemu_now_ps() - t0);
}

/* Writes 'line' to 'path' at once (through a rename). */
static void put(const char *path, const char *line)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(line, f) < 0 || fclose(f) || rename(tmp, path))
		die("cannot write the exchange file");
}

static FILE *wait_file(const char *path)
{
	FILE *f;

	while (!(f = fopen(path, "r")))
		usleep(2000);
	return f;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	unsigned lid, qpn, rkey, i;
	unsigned long long raddr;
	char line[256], ready[4096];
	struct ibv_pd *pd;
	int server, threaded, stream, memory, pause, access;
	FILE *f;

	if (argc != 4 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client") &&
	     strcmp(argv[1], "tserver") && strcmp(argv[1], "tclient") &&
	     strcmp(argv[1], "sserver") && strcmp(argv[1], "sclient") &&
	     strcmp(argv[1], "mserver") && strcmp(argv[1], "mclient") &&
	     strcmp(argv[1], "lserver") && strcmp(argv[1], "lclient")))
		die("usage: verbs-det server|client|tserver|tclient|sserver|"
		    "sclient|mserver|mclient|lserver|lclient OUT IN");
	if (!ibemu_now_ps)
		die("ibemu_now_ps() is missing: run under 'ibemu exec'");
	/* Output in one write at the end (the first line, t0, is flushed
	 * by hand): no write() between a completion and the next call, which
	 * on a loaded host can take long enough (hundreds of microseconds of
	 * CPU time) to look like a spin on memory. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	threaded = argv[1][0] == 't';
	stream = !strcmp(argv[1], "sserver") || !strcmp(argv[1], "sclient");
	memory = argv[1][0] == 'm';
	pause = argv[1][0] == 'l';
	server = !strcmp(argv[1] + (threaded || stream || memory || pause),
			 "server");
	list = ibv_get_device_list(NULL);
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		die("no device");
	t0 = ibemu_now_ps();
	buf = calloc(1, BUF);
	pd = ibv_alloc_pd(ctx);
	if (!strcmp(argv[1], "tclient")) {
		ch = ibv_create_comp_channel(ctx);
		sch = ibv_create_comp_channel(ctx);
		if (!ch || !sch)
			die("ibv_create_comp_channel");
	}
	cq = ibv_create_cq(ctx, 64, NULL, sch, 0);
	rcq = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : cq;
	/*
	 * Memory open to remote writes only where a peer writes it (the
	 * exchange's server, the memory ping-pong): a process holding such
	 * memory that writes its output after a completion may be taken for
	 * a memory poller (docs/design.md §3), which the other modes are not
	 * there to test.
	 */
	access = IBV_ACCESS_LOCAL_WRITE;
	if (memory || !strcmp(argv[1], "server"))
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF, access) : NULL;
	qa.send_cq = cq;
	qa.recv_cq = rcq;
	qp = mr && cq && rcq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp)
		die("cannot create the QP");
	snprintf(line, sizeof(line), "%u %u %llu %u\n", pa.lid, qp->qp_num,
		 (unsigned long long)(uintptr_t)buf, mr->rkey);
	put(argv[2], line);
	f = wait_file(argv[3]);
	if (fscanf(f, "%u %u %llu %u", &lid, &qpn, &raddr, &rkey) != 4)
		die("bad exchange file");
	fclose(f);
	connect_qp((uint16_t)lid, qpn);
	snprintf(ready, sizeof(ready), "%s.ready", argv[2]);
	if (stream && server) {
		post_recv(0);
		put(ready, "ready\n");
		sserver();
	} else if (stream) {
		snprintf(ready, sizeof(ready), "%s.ready", argv[3]);
		fclose(wait_file(ready));
		snprintf(ready, sizeof(ready), "%s.go", argv[3]);
		sclient(ready);
	} else if (memory) {
		if (server) {
			/* The SEND that starts, and the one that ends: no
			 * call between a landing and the answer to it. */
			post_recv(0);
			post_recv(1);
			put(ready, "ready\n");
			mserver(raddr, rkey);
		} else {
			snprintf(ready, sizeof(ready), "%s.ready", argv[3]);
			fclose(wait_file(ready));
			mclient(raddr, rkey);
		}
	} else if (threaded) {
		/* Control calls only in this thread: it takes no part. */
		if (server)
			tserver();
		else
			tclient();
	} else if (server) {
		/* The client starts once this receive is there. */
		post_recv(0);
		put(ready, "ready\n");
		for (i = 0; i <= PINGS; i++) {
			take("recv", i);
			if (i == PINGS)
				break;
			post_recv(i + 1);
			post_send(i, IBV_WR_SEND, sizes[i % 8], 0, 0);
			take("send", i);
		}
	} else {
		snprintf(ready, sizeof(ready), "%s.ready", argv[3]);
		fclose(wait_file(ready));
		if (pause)
			ibemu_compute_ps(LONG_COMPUTE_PS);
		for (i = 0; i < PINGS; i++) {
			ibemu_compute_ps(1000000);
			post_recv(i);
			post_send(i, IBV_WR_SEND, sizes[(i * 3) % 8], 0, 0);
			take("ping", i);
			take("ping", i);
		}
		for (i = 0; i < 5 && !pause; i++) {
			post_send(1000 + i, IBV_WR_RDMA_WRITE, rdma_sizes[i],
				  raddr, rkey);
			take("write", i);
		}
		for (i = 0; i < 5 && !pause; i++) {
			post_send(2000 + i, IBV_WR_RDMA_READ, rdma_sizes[i],
				  raddr + BUF / 2, rkey);
			take("read", i);
		}
		post_send(3000, IBV_WR_SEND, 4, 0, 0);
		take("done", 0);
	}
	printf("end t %" PRIu64 "\n", ibemu_now_ps() - t0);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	if (rcq != cq)
		ibv_destroy_cq(rcq);
	ibv_destroy_cq(cq);
	if (ch)
		ibv_destroy_comp_channel(ch);
	if (sch)
		ibv_destroy_comp_channel(sch);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
