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
 * another, which posted a SEND just before, sleeps a few milliseconds of
 * wall time, declares 10 us of compute and posts a second SEND. The
 * process runs all along (one of its threads does), so the server's SEND
 * cannot be handed to it before the second SEND is posted: the waiting
 * thread wakes with the clock at exactly 10 us and the second SEND leaves
 * at 10 us (verbs/README.md, "Virtual time").
 *
 * usage: verbs-det server|client|tserver|tclient OUT IN
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

static const uint32_t sizes[] = {8, 64, 256, 1000, 1024, 4096, 5000, 16384};
static const uint32_t rdma_sizes[] = {8, 4096, 10000, 65536, 262144};

static struct ibv_cq *cq;  /* every completion but tclient's receives */
static struct ibv_cq *rcq; /* receives (tclient: on the channel 'ch') */
static struct ibv_comp_channel *ch;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint64_t t0;

static void die(const char *what)
{
	fprintf(stderr, "verbs-det: %s\n", what);
	exit(1);
}

/*
 * Waits for one completion on 'q' (busy polling) and writes what it was
 * and the virtual time then into 'out'.
 */
static void take_on(struct ibv_cq *q, const char *what, unsigned i, char *out,
		    size_t len)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(q, 1, &wc)) == 0)
		;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "verbs-det: %s %u: %s\n", what, i,
			n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		exit(1);
	}
	snprintf(out, len, "%s %u wr %" PRIu64 " op %d len %u t %" PRIu64 "\n",
		 what, i, (uint64_t)wc.wr_id, (int)wc.opcode, wc.byte_len,
		 ibemu_now_ps() - t0);
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

static void post_send(uint64_t id, enum ibv_wr_opcode op, uint32_t len,
		      uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)buf + BUF / 2, len, mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {raddr, rkey}};
	struct ibv_send_wr *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
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
 * into its lines; main prints them in a fixed order.
 */
#define T_COMPUTE_PS 10000000ull /* the sender's declared compute: 10 us */
#define T_SLEEP_US   5000	 /* wall time, well under the grace period */

static int sender_posted;
static char waiter_line[256], sender_lines[2][256];

static void *waiter(void *arg)
{
	struct ibv_cq *evq;
	void *evctx;

	post_recv(0);
	if (ibv_req_notify_cq(rcq, 0))
		die("ibv_req_notify_cq");
	/* The sender takes part (it posted) before this thread waits. */
	while (!__atomic_load_n(&sender_posted, __ATOMIC_ACQUIRE))
		usleep(100);
	if (ibv_get_cq_event(ch, &evq, &evctx) || evq != rcq)
		die("ibv_get_cq_event");
	ibv_ack_cq_events(evq, 1);
	take_on(rcq, "waiter recv", 0, waiter_line, sizeof(waiter_line));
	return arg;
}

static void *sender(void *arg)
{
	post_send(0, IBV_WR_SEND, 64, 0, 0);
	__atomic_store_n(&sender_posted, 1, __ATOMIC_RELEASE);
	/* Silent, running: the process may not be seen waiting now. */
	usleep(T_SLEEP_US);
	ibemu_compute_ps(T_COMPUTE_PS);
	post_send(1, IBV_WR_SEND, 64, 0, 0);
	take_on(cq, "sender send", 0, sender_lines[0], sizeof(sender_lines[0]));
	take_on(cq, "sender send", 1, sender_lines[1], sizeof(sender_lines[1]));
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
	fputs(sender_lines[0], stdout);
	fputs(sender_lines[1], stdout);
}

/* Its server: takes both SENDs and sends one to the waiter. */
static void tserver(void)
{
	post_recv(0);
	post_recv(1);
	post_send(0, IBV_WR_SEND, 64, 0, 0);
	take("server", 0);
	take("server", 1);
	take("server", 2);
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
	int server, threaded;
	FILE *f;

	if (argc != 4 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client") &&
	     strcmp(argv[1], "tserver") && strcmp(argv[1], "tclient")))
		die("usage: verbs-det server|client|tserver|tclient OUT IN");
	if (!ibemu_now_ps)
		die("ibemu_now_ps() is missing: run under 'ibemu exec'");
	threaded = argv[1][0] == 't';
	server = !strcmp(argv[1] + threaded, "server");
	list = ibv_get_device_list(NULL);
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		die("no device");
	t0 = ibemu_now_ps();
	buf = calloc(1, BUF);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = cq;
	if (!strcmp(argv[1], "tclient")) {
		ch = ibv_create_comp_channel(ctx);
		rcq = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	}
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF,
				    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ)
		       : NULL;
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
	if (threaded) {
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
		for (i = 0; i < PINGS; i++) {
			ibemu_compute_ps(1000000);
			post_recv(i);
			post_send(i, IBV_WR_SEND, sizes[(i * 3) % 8], 0, 0);
			take("ping", i);
			take("ping", i);
		}
		for (i = 0; i < 5; i++) {
			post_send(1000 + i, IBV_WR_RDMA_WRITE, rdma_sizes[i],
				  raddr, rkey);
			take("write", i);
		}
		for (i = 0; i < 5; i++) {
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
	if (ch)
		ibv_destroy_comp_channel(ch);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
