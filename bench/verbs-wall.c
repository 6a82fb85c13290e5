// SPDX-License-Identifier: MIT
/*
 * bench-verbs-wall, the wall-clock half of bench/verbs: what a verbs
 * program pays, in real time, to talk through the daemon, next to what
 * the machine does with no emulator in between, measured in the same run.
 * One binary plays every part: the driver ('run') measures the references
 * itself and starts the two verbs ends ('peer') under 'ibemu exec'; the
 * ends are an ordinary libibverbs program (system headers, -libverbs), as
 * tests/clients/verbs-client.c is. bench/verbs.sh starts and stops the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MIB	     (1u << 20)
#define RECV_DEPTH   64u
#define SEND_DEPTH   256u
#define CQ_DEPTH     1024u
#define MAX_WINDOW   128u
#define BW_WINDOW    4u /* 1 MiB WRITEs in flight */
#define CACHE_LINE   64u
#define TARGET_LAT_X 4.0  /* the issue's: at most 4x the raw ping-pong */
#define TARGET_BW    0.70 /* at least 70% of bare process_vm_writev */

struct opts {
	unsigned iters;	  /* ping-pong round trips */
	unsigned msgs;	  /* 8-byte WRITEs for the message rate */
	unsigned window;  /* of those, in flight */
	unsigned bw_msgs; /* 1 MiB WRITEs */
	unsigned spin_us; /* the reference's spin before it sleeps */
};

static struct opts opt = {
	.iters = 20000,
	.msgs = 200000,
	.window = 64,
	.bw_msgs = 500,
	.spin_us = 50,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median and mean of 'n' samples (sorts them). */
static void stats(double *v, unsigned n, double *median, double *mean)
{
	double sum = 0;
	unsigned i;

	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*mean = sum / n;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench-verbs-wall: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* --- the reference: a raw shared-memory ping-pong --------------------- */

/*
 * One direction of the raw ping-pong: the sender's sequence number and
 * 8-byte payload, and the receiver's 'sleeps'. It is the daemon's doorbell
 * protocol (attach/README.md) with both roles in plain processes: a waiter
 * spins on 'seq' for up to spin_us, then publishes 'sleeps', looks once
 * more and blocks in FUTEX_WAIT; a sender stores the payload and 'seq',
 * and calls FUTEX_WAKE only if it then reads 'sleeps' set (the seq_cst
 * fences make the two sides a Dekker pair, as the library's kick and the
 * daemon's prepare hook are).
 */
struct mailbox {
	uint32_t seq;
	uint32_t pad0;
	uint64_t payload;
	uint8_t pad1[CACHE_LINE - 16];
	uint32_t sleeps;
	uint8_t pad2[CACHE_LINE - 4];
	uint64_t wakes; /* counted by the sender: futex calls made */
	uint8_t pad3[CACHE_LINE - 8];
};

static long futex(uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static void mb_send(struct mailbox *m, uint32_t seq, uint64_t payload)
{
	m->payload = payload;
	__atomic_store_n(&m->seq, seq, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&m->sleeps, __ATOMIC_SEQ_CST)) {
		m->wakes++;
		futex(&m->seq, FUTEX_WAKE, 1);
	}
}

/* Waits until 'seq' reaches 'want'; returns the payload. */
static uint64_t mb_wait(struct mailbox *m, uint32_t want, double spin_s)
{
	double until = 0;

	for (;;) {
		uint32_t cur = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);

		if (cur == want)
			return m->payload;
		if (until == 0)
			until = spin_s > 0 ? now_s() + spin_s : -1;
		if (until > 0 && now_s() < until) {
			__builtin_ia32_pause();
			continue;
		}
		__atomic_store_n(&m->sleeps, 1, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&m->seq, __ATOMIC_SEQ_CST) == cur)
			futex(&m->seq, FUTEX_WAIT, cur);
		__atomic_store_n(&m->sleeps, 0, __ATOMIC_SEQ_CST);
		until = 0;
	}
}

struct shm_result {
	double median_us, mean_us;
	double wakes_per_rt;
};

/* N round trips between this process and a forked child. */
static struct shm_result shm_pingpong(unsigned iters, double spin_s)
{
	struct mailbox *mb = mmap(NULL, 2 * sizeof(*mb), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned warm = iters / 10 + 10, i;
	double *rt = calloc(iters, sizeof(*rt));
	struct shm_result r;
	pid_t pid;

	if (mb == MAP_FAILED || !rt)
		die("shared mapping");
	memset(mb, 0, 2 * sizeof(*mb));
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (i = 1; i <= warm + iters; i++)
			mb_send(&mb[1], i, mb_wait(&mb[0], i, spin_s) + 1);
		_exit(0);
	}
	for (i = 1; i <= warm + iters; i++) {
		double t0 = now_s();

		mb_send(&mb[0], i, i);
		if (mb_wait(&mb[1], i, spin_s) != (uint64_t)i + 1) {
			fprintf(stderr, "bench-verbs-wall: bad payload\n");
			exit(1);
		}
		if (i > warm)
			rt[i - warm - 1] = (now_s() - t0) * 1e6 / 2;
	}
	waitpid(pid, NULL, 0);
	stats(rt, iters, &r.median_us, &r.mean_us);
	r.wakes_per_rt = (double)(mb[0].wakes + mb[1].wakes) / (warm + iters);
	free(rt);
	munmap(mb, 2 * sizeof(*mb));
	return r;
}

/* --- the reference: bare copies of 1 MiB ------------------------------ */

struct copy_result {
	double memcpy_gbs, pvw_gbs, pair_gbs;
};

/*
 * memcpy of 1 MiB (warm, one buffer to another), process_vm_writev of 1
 * MiB into a forked child (one call per MiB, as the daemon does), and the
 * daemon's present path: process_vm_readv of 1 MiB from one process into
 * a 1 MiB buffer, then process_vm_writev of it into another.
 */
static struct copy_result copies(unsigned n)
{
	char *src = aligned_alloc(4096, MIB), *dst = aligned_alloc(4096, MIB);
	char *mid = aligned_alloc(4096, MIB);
	struct iovec l = {mid, MIB}, rs = {src, MIB}, rd = {dst, MIB};
	int go[2], done[2];
	pid_t a, b;
	struct copy_result r;
	double t0;
	unsigned i;
	char c = 0;

	if (!src || !dst || !mid || pipe(go) || pipe(done))
		die("copy buffers");
	memset(src, 1, MIB);
	memset(dst, 2, MIB);
	memset(mid, 3, MIB);
	for (i = 0; i < 10; i++)
		memcpy(dst, src, MIB);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		src[i & 4095] = (char)i;
		memcpy(dst, src, MIB);
	}
	r.memcpy_gbs = (double)n * MIB / (now_s() - t0) / 1e9;

	/* Two children that hold 'src' and 'dst' (copies of ours, written
	 * once so that no copy-on-write fault is timed) and wait. */
	for (i = 0; i < 2; i++) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (p == 0) {
			close(go[1]); /* so that the parent's close ends us */
			memset(i ? dst : src, 4, MIB);
			if (write(done[1], &c, 1) != 1 ||
			    read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (i)
			b = p;
		else
			a = p;
	}
	if (read(done[0], &c, 1) != 1 || read(done[0], &c, 1) != 1)
		die("children");
	for (i = 0; i < 10; i++)
		if (process_vm_writev(b, &l, 1, &rd, 1, 0) != MIB)
			die("process_vm_writev");
	t0 = now_s();
	for (i = 0; i < n; i++)
		if (process_vm_writev(b, &l, 1, &rd, 1, 0) != MIB)
			die("process_vm_writev");
	r.pvw_gbs = (double)n * MIB / (now_s() - t0) / 1e9;
	t0 = now_s();
	for (i = 0; i < n; i++)
		if (process_vm_readv(a, &l, 1, &rs, 1, 0) != MIB ||
		    process_vm_writev(b, &l, 1, &rd, 1, 0) != MIB)
			die("process_vm_readv/writev");
	r.pair_gbs = (double)n * MIB / (now_s() - t0) / 1e9;
	close(go[1]);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	close(go[0]);
	close(done[0]);
	close(done[1]);
	free(src);
	free(dst);
	free(mid);
	return r;
}

/* --- the verbs ends ---------------------------------------------------- */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf; /* [0, MIB): WRITE target/source; then receive slots */
	uint64_t raddr;
	uint32_t rkey;
	unsigned sends_out; /* signaled sends not completed */
	int block;	    /* wait in ibv_get_cq_event, not by polling */
};

#define SLOT_BYTES 64u
#define BUF_BYTES  (MIB + RECV_DEPTH * SLOT_BYTES)

static int post_recv(struct end *e, unsigned slot)
{
	struct ibv_sge sge = {(uintptr_t)e->buf + MIB + slot * SLOT_BYTES,
			      SLOT_BYTES, e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_send(struct end *e, enum ibv_wr_opcode op, uint64_t off,
		     uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {(uintptr_t)e->buf + off, len, e->mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags =
			IBV_SEND_SIGNALED | (len <= 8 ? IBV_SEND_INLINE : 0),
		.wr.rdma = {e->raddr + off, e->rkey},
	};
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(e->qp, &wr, &bad);

	if (!ret)
		e->sends_out++;
	return ret;
}

/*
 * Polls the CQ until receives (want_recv 1) or sends (want_recv 0) have
 * completed; returns how many, and the wr_id of the last in *id. Every
 * receive's slot is posted again; an error completion ends the program.
 */
static unsigned poll_for(struct end *e, int want_recv, uint64_t *id)
{
	struct ibv_wc wc[16];
	unsigned got = 0;

	while (!got) {
		int n = ibv_poll_cq(e->cq, 16, wc), i;

		if (n < 0) {
			fprintf(stderr, "peer: ibv_poll_cq: %d\n", n);
			exit(1);
		}
		if (n == 0 && e->block) {
			struct ibv_cq *cq;
			void *cq_ctx;

			/* Arm, then look once more: a completion that came
			 * before the arm raises no event. */
			if (ibv_req_notify_cq(e->cq, 0))
				die("ibv_req_notify_cq");
			n = ibv_poll_cq(e->cq, 16, wc);
			if (n == 0) {
				if (ibv_get_cq_event(e->ch, &cq, &cq_ctx))
					die("ibv_get_cq_event");
				ibv_ack_cq_events(cq, 1);
				continue;
			}
		}
		for (i = 0; i < n; i++) {
			int recv = !!(wc[i].opcode & IBV_WC_RECV);

			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "peer: completion: %s\n",
					ibv_wc_status_str(wc[i].status));
				exit(1);
			}
			if (recv && post_recv(e, (unsigned)wc[i].wr_id))
				die("ibv_post_recv");
			if (!recv)
				e->sends_out--;
			if (recv == want_recv) {
				got++;
				if (id)
					*id = wc[i].wr_id;
			}
		}
	}
	return got;
}

/* The rendezvous: each end writes "lid qpn addr rkey" to DIR/<role> and
 * reads the other's. */
static void exchange(struct end *e, const char *dir, int server)
{
	char path[4096], tmp[4100];
	struct ibv_port_attr pa;
	unsigned lid, qpn, rkey;
	unsigned long long addr;
	FILE *f;

	if (ibv_query_port(e->ctx, 1, &pa))
		die("ibv_query_port");
	snprintf(path, sizeof(path), "%s/%s", dir, server ? "srv" : "cli");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	fprintf(f, "%u %u %llu %u %d\n", pa.lid, e->qp->qp_num,
		(unsigned long long)(uintptr_t)e->buf, e->mr->rkey,
		(int)pa.active_mtu);
	fclose(f);
	if (rename(tmp, path))
		die(path);
	snprintf(path, sizeof(path), "%s/%s", dir, server ? "cli" : "srv");
	while (!(f = fopen(path, "r")))
		usleep(2000);
	if (fscanf(f, "%u %u %llu %u", &lid, &qpn, &addr, &rkey) != 4) {
		fprintf(stderr, "peer: bad rendezvous file %s\n", path);
		exit(1);
	}
	fclose(f);
	e->raddr = addr;
	e->rkey = rkey;

	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	/* Receives may be posted from INIT on (IBA 10.8.2). */
	for (unsigned i = 0; i < RECV_DEPTH; i++)
		if (post_recv(e, i))
			die("ibv_post_recv");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = (uint16_t)lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

static void end_open(struct end *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = SEND_DEPTH,
			.max_recv_wr = RECV_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 8},
	};

	if (!list || !list[0]) {
		fprintf(stderr, "peer: no device (run under 'ibemu exec')\n");
		exit(1);
	}
	e->ctx = ibv_open_device(list[0]);
	if (!e->ctx)
		die("ibv_open_device");
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	e->cq = e->ch ? ibv_create_cq(e->ctx, CQ_DEPTH, NULL, e->ch, 0) : NULL;
	e->buf = aligned_alloc(4096, BUF_BYTES);
	if (!e->pd || !e->cq || !e->buf)
		die("PD, CQ or buffer");
	memset(e->buf, 0, BUF_BYTES);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_BYTES,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = e->mr ? ibv_create_qp(e->pd, &qa) : NULL;
	if (!e->qp)
		die("MR or QP");
	ibv_free_device_list(list);
}

static void end_close(struct end *e)
{
	ibv_destroy_qp(e->qp);
	ibv_dereg_mr(e->mr);
	ibv_destroy_cq(e->cq);
	ibv_destroy_comp_channel(e->ch);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
	free(e->buf);
}

/* A SEND of 8 bytes and the wait for the answer's receive. */
static void ping(struct end *e, uint64_t v)
{
	memcpy(e->buf, &v, 8);
	if (post_send(e, IBV_WR_SEND, 0, 8, 0))
		die("ibv_post_send");
	poll_for(e, 1, NULL);
}

/*
 * The server answers every SEND with a SEND, until the client's phases
 * are over; the client measures. Phase changes are themselves SENDs, so
 * the server needs to know nothing of the client's options: 0 is a ping,
 * 2 tells the server that one-sided WRITEs follow, during which it waits
 * in ibv_get_cq_event() as a passive target would (a third busy process
 * on two cores would take the daemon's CPU), 1 ends it.
 */
static int peer(const char *role, const char *dir)
{
	int server = !strcmp(role, "server");
	unsigned warm = opt.iters / 10 + 10, i, posted, done;
	struct end e = {0};
	double *rt, t0, med, mean, rate_s, bw_s;

	end_open(&e);
	exchange(&e, dir, server);
	if (server) {
		/* Answer until the client's final SEND carries 1. */
		for (;;) {
			uint64_t slot = 0, v;

			/* The client has one message in flight at a time. */
			poll_for(&e, 1, &slot);

			memcpy(&v, e.buf + MIB + slot * SLOT_BYTES, 8);
			if (v == 1)
				break;
			if (v == 2)
				e.block = 1;
			/* Completed sends are taken in poll_for(); the
			 * ring is far larger than what is in flight. */
			if (post_send(&e, IBV_WR_SEND, 0, 8, 0))
				die("ibv_post_send");
		}
		while (e.sends_out)
			poll_for(&e, 0, NULL);
		end_close(&e);
		return 0;
	}

	rt = calloc(opt.iters, sizeof(*rt));
	if (!rt)
		die("calloc");
	for (i = 0; i < warm + opt.iters; i++) {
		t0 = now_s();
		ping(&e, 0);
		if (i >= warm)
			rt[i - warm] = (now_s() - t0) * 1e6 / 2;
	}
	while (e.sends_out)
		poll_for(&e, 0, NULL);
	stats(rt, opt.iters, &med, &mean);
	free(rt);
	ping(&e, 2);

	/* Message rate: 8-byte inline WRITEs, 'window' in flight. */
	t0 = now_s();
	for (posted = done = 0; done < opt.msgs;) {
		while (posted < opt.msgs && posted - done < opt.window) {
			if (post_send(&e, IBV_WR_RDMA_WRITE, 0, 8, posted))
				die("ibv_post_send");
			posted++;
		}
		done += poll_for(&e, 0, NULL);
	}
	rate_s = now_s() - t0;
	ping(&e, 0); /* the server is still there */

	/* 1 MiB WRITEs, BW_WINDOW in flight. */
	memset(e.buf, 5, MIB);
	t0 = now_s();
	for (posted = done = 0; done < opt.bw_msgs;) {
		while (posted < opt.bw_msgs && posted - done < BW_WINDOW) {
			if (post_send(&e, IBV_WR_RDMA_WRITE, 0, MIB, posted))
				die("ibv_post_send");
			posted++;
		}
		done += poll_for(&e, 0, NULL);
	}
	bw_s = now_s() - t0;

	memcpy(e.buf, &(uint64_t){1}, 8);
	if (post_send(&e, IBV_WR_SEND, 0, 8, 0))
		die("ibv_post_send");
	while (e.sends_out)
		poll_for(&e, 0, NULL);
	printf("lat_median_us=%.3f\nlat_mean_us=%.3f\n", med, mean);
	printf("rate_mps=%.4f\n", opt.msgs / rate_s / 1e6);
	printf("bw_gbs=%.3f\n", (double)opt.bw_msgs * MIB / bw_s / 1e9);
	end_close(&e);
	return 0;
}

/* --- the driver -------------------------------------------------------- */

struct peer_result {
	double lat_median_us, lat_mean_us, rate_mps, bw_gbs;
};

static void opt_args(const char **argv, int *n)
{
	char buf[5][32];
	int i = *n;

	snprintf(buf[0], 32, "--iters=%u", opt.iters);
	snprintf(buf[1], 32, "--msgs=%u", opt.msgs);
	snprintf(buf[2], 32, "--window=%u", opt.window);
	snprintf(buf[3], 32, "--bw-msgs=%u", opt.bw_msgs);
	snprintf(buf[4], 32, "--spin-us=%u", opt.spin_us);
	for (int k = 0; k < 5; k++)
		argv[i++] = strdup(buf[k]);
	*n = i;
}

/* 'ibemu --fabric F exec --host H -- self [opts] peer ROLE DIR'. */
static pid_t spawn_peer(const char *ibemu, const char *fabric, const char *host,
			const char *self, const char *role, const char *dir,
			int out_fd)
{
	const char *argv[24];
	int n = 0;
	pid_t p;

	argv[n++] = ibemu;
	argv[n++] = "--fabric";
	argv[n++] = fabric;
	argv[n++] = "exec";
	argv[n++] = "--host";
	argv[n++] = host;
	argv[n++] = "--";
	argv[n++] = self;
	opt_args(argv, &n);
	argv[n++] = "peer";
	argv[n++] = role;
	argv[n++] = dir;
	argv[n] = NULL;
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		if (out_fd >= 0)
			dup2(out_fd, 1);
		execvp(ibemu, (char **)argv);
		_exit(127);
	}
	return p;
}

static int run_peers(const char *ibemu, const char *fabric, const char *self,
		     struct peer_result *r)
{
	char dir[] = "/tmp/bench-verbs-wall.XXXXXX", path[64], line[256];
	int fd[2], status, ok = 1, got = 0;
	pid_t srv, cli;
	FILE *f;

	if (!mkdtemp(dir) || pipe(fd))
		die("rendezvous");
	srv = spawn_peer(ibemu, fabric, "hca1", self, "server", dir, -1);
	cli = spawn_peer(ibemu, fabric, "hca2", self, "client", dir, fd[1]);
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		got += sscanf(line, "lat_median_us=%lf", &r->lat_median_us);
		got += sscanf(line, "lat_mean_us=%lf", &r->lat_mean_us);
		got += sscanf(line, "rate_mps=%lf", &r->rate_mps);
		got += sscanf(line, "bw_gbs=%lf", &r->bw_gbs);
	}
	if (f)
		fclose(f);
	waitpid(cli, &status, 0);
	ok &= WIFEXITED(status) && !WEXITSTATUS(status);
	waitpid(srv, &status, 0);
	ok &= WIFEXITED(status) && !WEXITSTATUS(status);
	snprintf(path, sizeof(path), "%s/srv", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cli", dir);
	unlink(path);
	rmdir(dir);
	return ok && got == 4 ? 0 : -1;
}

static const char *verdict(int pass)
{
	return pass ? "PASS" : "MISS";
}

static int run(const char *ibemu, const char *fabric, const char *self)
{
	struct shm_result spin, nospin;
	struct copy_result cp;
	struct peer_result v = {0};
	double lat_x, bw_frac;

	printf("bench-verbs-wall: %u round trips, %u x 8 B WRITEs (window %u), "
	       "%u x 1 MiB WRITEs (window %u)\n",
	       opt.iters, opt.msgs, opt.window, opt.bw_msgs, BW_WINDOW);
	fflush(stdout);
	spin = shm_pingpong(opt.iters, opt.spin_us * 1e-6);
	nospin = shm_pingpong(opt.iters / 4 + 1, 0);
	cp = copies(opt.bw_msgs);
	if (run_peers(ibemu, fabric, self, &v)) {
		fprintf(stderr, "bench-verbs-wall: a verbs end failed\n");
		return 1;
	}
	lat_x = v.lat_median_us / spin.median_us;
	bw_frac = v.bw_gbs / cp.pvw_gbs;

	printf("\n8-byte ping-pong, half round trip     median     mean\n");
	printf("  ibemu: RC SEND/RECV, ibv_poll_cq  %7.2f us %7.2f us\n",
	       v.lat_median_us, v.lat_mean_us);
	printf("  raw shm, spin %u us then futex    %7.3f us %7.3f us "
	       "(%.3f futex wakes per round trip)\n",
	       opt.spin_us, spin.median_us, spin.mean_us, spin.wakes_per_rt);
	printf("  raw shm, futex at once            %7.2f us %7.2f us "
	       "(%.2f futex wakes per round trip)\n",
	       nospin.median_us, nospin.mean_us, nospin.wakes_per_rt);
	printf("  ibemu / raw (spin, then futex)    %7.1fx   target <= %.0fx: "
	       "%s\n",
	       lat_x, TARGET_LAT_X, verdict(lat_x <= TARGET_LAT_X));
	printf("  ibemu / raw (futex at once)       %7.2fx   (no target)\n",
	       v.lat_median_us / nospin.median_us);
	printf("\n8-byte RDMA WRITE message rate, window %u\n", opt.window);
	printf("  ibemu                             %7.3f M msg/s "
	       "(%.2f us per message)\n",
	       v.rate_mps, 1 / v.rate_mps);
	printf("\n1 MiB copies                         GB/s\n");
	printf("  ibemu: RC RDMA WRITE, window %u   %7.2f\n", BW_WINDOW,
	       v.bw_gbs);
	printf("  process_vm_writev, 1 call per MiB %7.2f\n", cp.pvw_gbs);
	printf("  process_vm_readv + writev (2/MiB) %7.2f\n", cp.pair_gbs);
	printf("  memcpy                            %7.2f\n", cp.memcpy_gbs);
	printf("  ibemu / process_vm_writev         %7.2f    target >= %.2f: "
	       "%s\n",
	       bw_frac, TARGET_BW, verdict(bw_frac >= TARGET_BW));
	printf("  ibemu / (readv + writev)          %7.2f    (no target)\n",
	       v.bw_gbs / cp.pair_gbs);
	printf("  ibemu / memcpy                    %7.2f    (no target)\n",
	       v.bw_gbs / cp.memcpy_gbs);
	printf("result: lat_x=%.2f bw_frac=%.3f lat=%s bw=%s\n", lat_x, bw_frac,
	       verdict(lat_x <= TARGET_LAT_X), verdict(bw_frac >= TARGET_BW));
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench-verbs-wall [options] run IBEMU FABRIC\n"
		"       bench-verbs-wall [options] peer server|client DIR\n"
		"'run' measures the references, then starts both peers on\n"
		"hca1 and hca2 of the running fabric FABRIC with IBEMU exec\n"
		"(bench/verbs.sh starts the fabric). Options:\n"
		"  --iters N    ping-pong round trips (20000)\n"
		"  --msgs N     8-byte WRITEs for the message rate (200000)\n"
		"  --window N   of those in flight, 1..%u (64)\n"
		"  --bw-msgs N  1 MiB WRITEs (500)\n"
		"  --spin-us N  the reference's spin before it sleeps (50)\n"
		"  --quick      2000 / 20000 / 50 (a smoke run)\n",
		MAX_WINDOW);
}

static unsigned num(const char *s, unsigned lo, unsigned hi)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "bench-verbs-wall: bad number '%s' (%u..%u)\n",
			s, lo, hi);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"iters", required_argument, NULL, 'i'},
		{"msgs", required_argument, NULL, 'm'},
		{"window", required_argument, NULL, 'w'},
		{"bw-msgs", required_argument, NULL, 'b'},
		{"spin-us", required_argument, NULL, 's'},
		{"quick", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			opt.iters = num(optarg, 1, 100000000);
			break;
		case 'm':
			opt.msgs = num(optarg, 1, 1000000000);
			break;
		case 'w':
			opt.window = num(optarg, 1, MAX_WINDOW);
			break;
		case 'b':
			opt.bw_msgs = num(optarg, 1, 1000000);
			break;
		case 's':
			opt.spin_us = num(optarg, 0, 1000000);
			break;
		case 'q':
			opt.iters = 2000;
			opt.msgs = 20000;
			opt.bw_msgs = 50;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 3 && !strcmp(argv[0], "peer") &&
	    (!strcmp(argv[1], "server") || !strcmp(argv[1], "client")))
		return peer(argv[1], argv[2]);
	if (argc == 3 && !strcmp(argv[0], "run")) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n < 0)
			die("/proc/self/exe");
		self[n] = '\0';
		signal(SIGPIPE, SIG_IGN);
		return run(argv[1], argv[2], self);
	}
	usage(stderr);
	return 2;
}
