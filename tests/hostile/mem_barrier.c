// SPDX-License-Identifier: MIT
/*
 * A careless or hostile target of RDMA (issue 18, items 3 and 4), through
 * the real API and linked against the system libibverbs (ibemu exec loads
 * ibemu's). Two RC QPs of one process are connected to each other through
 * the leaf switch: A is the requester, B the responder whose region T the
 * process then abuses while A's work is under way:
 *
 *   read      READ 1 MiB then 7 MiB of T; at the first completion T is
 *             deregistered and filled with a marker: the second READ
 *             fails with IBV_WC_REM_ACCESS_ERR (or succeeds with T's old
 *             bytes), and no marker byte ever reaches the local buffer.
 *   write     WRITE 1 MiB then 7 MiB into T; at the first completion T is
 *             deregistered and copied: T does not change after, and the
 *             second WRITE fails with IBV_WC_REM_ACCESS_ERR.
 *   local     WRITE 1 MiB then 7 MiB from A's own buffer S; at the first
 *             completion S is deregistered: the second WRITE fails with
 *             IBV_WC_LOC_PROT_ERR and lands no byte in T after.
 *   exit      a second process, the target, exits with a WRITE into its
 *             region (memory it shares with this one) under way: the
 *             WRITE fails and the region does not change after.
 *   remap     one file mapped shared, registered, then a second file mapped
 *             over the same address: a WRITE to the region reaches the
 *             first file (the registered pages) or fails, never the second.
 *   private   the same with the first file mapped privately (no file holds
 *             the registered pages): the WRITE fails with
 *             IBV_WC_REM_ACCESS_ERR.
 *   protnone  registering 8 GiB of PROT_NONE fails with EFAULT, as does a
 *             read-only mapping registered for writing.
 *
 * Virtual time makes the dereg definite: the process does it at the
 * completion of the first transfer, the engine stopped a doorbell delay
 * after; NAME_ended_after_ps is the virtual time from the dereg to the
 * second transfer's completion. Prints key=value lines for
 * tests/integration/test_hostile_mem.py.
 * usage: mem_barrier read|write|local|exit|remap|private|protnone
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../clients/verbs-check.h"

/* verbs/ibemu.h's clock, weak: NULL outside ibemu. */
uint64_t ibemu_now_ps(void) __attribute__((weak));

/* The virtual time now, 0 where there is none. */
static uint64_t now_ps(void)
{
	return ibemu_now_ps ? ibemu_now_ps() : 0;
}

#define MiB    (1ull << 20)
#define TOTAL  (8 * MiB)
#define FIRST  (1 * MiB)
#define MARKER 0xee
#define ACCESS                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	uint16_t lid;
};

static struct ibv_qp *qp_new(struct env *e)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};

	return ibv_create_qp(e->pd, &qa);
}

static int setup(struct env *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	e->ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	ibv_free_device_list(list);
	if (!e->ctx || ibv_query_port(e->ctx, 1, &pa))
		return -1;
	e->lid = pa.lid;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 64, NULL, NULL, 0) : NULL;
	e->a = e->cq ? qp_new(e) : NULL;
	e->b = e->a ? qp_new(e) : NULL;
	if (!e->b)
		return -1;
	if (qp_connect(e->a, e->lid, e->b->qp_num, IBV_MTU_4096, 4) ||
	    qp_connect(e->b, e->lid, e->a->qp_num, IBV_MTU_4096, 4))
		return -1;
	return 0;
}

/* The next completion (busy polling, which lets virtual time run). */
static struct ibv_wc next_wc(struct env *e)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR, .wr_id = ~0ull};
	long i;

	for (i = 0; i < 200000000; i++) {
		if (ibv_poll_cq(e->cq, 1, &wc))
			return wc;
		if (i > 1000)
			usleep(1);
	}
	printf("FAIL: no completion\n");
	failures++;
	return wc;
}

static void *region(size_t len, int byte)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("FAIL: mmap: %s\nfailures=1\n", strerror(errno));
		exit(1);
	}
	memset(p, byte, len);
	return p;
}

/* Posts on A an RDMA 'op' of 'len' bytes between 'local' and 'remote'. */
static int post(struct env *e, enum ibv_wr_opcode op, uint64_t id, void *local,
		uint32_t lkey, void *remote, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)local, len, lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {(uintptr_t)remote, rkey}},
			   *bad;

	return ibv_post_send(e->a, &wr, &bad);
}

/*
 * A call to the daemon at every MiB of the loops below: a process that
 * uses CPU without a call for 20 ms would be presumed to wait for memory
 * (the grace period, clock/rule.h) and virtual time would run on meanwhile.
 */
static void nudge(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
}

/* memcpy, or with 'src' NULL memset with 'byte'. */
static void busy_copy(struct ibv_qp *qp, uint8_t *dst, const uint8_t *src,
		      int byte, size_t len)
{
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = len - off < MiB ? len - off : MiB;
		if (src)
			memcpy(dst + off, src + off, n);
		else
			memset(dst + off, byte, n);
		nudge(qp);
	}
}

/* How many bytes of 'p' are 'byte', or with 'other' differ from it. */
static size_t count_byte(struct ibv_qp *qp, const uint8_t *p,
			 const uint8_t *other, size_t len, int byte)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		n += other ? p[i] != other[i] : p[i] == byte;
		if (!((i + 1) % MiB))
			nudge(qp);
	}
	return n;
}

static void print_wc(const char *name, struct ibv_wc wc)
{
	printf("%s_status=%s\n", name, ibv_wc_status_str(wc.status));
}

/* Item 3: a READ of T under way when T is deregistered. */
static void case_read(struct env *e)
{
	uint8_t *t = region(TOTAL, 0x5a), *l = region(TOTAL, 0);
	struct ibv_mr *tm = ibv_reg_mr(e->pd, t, TOTAL, ACCESS);
	struct ibv_mr *lm = ibv_reg_mr(e->pd, l, TOTAL, ACCESS);
	struct ibv_wc wc;
	uint64_t t0;
	size_t marks;

	CHECK(tm && lm, "reg: %s", strerror(errno));
	if (!tm || !lm)
		return;
	CHECK_RET(post(e, IBV_WR_RDMA_READ, 1, l, lm->lkey, t, tm->rkey, FIRST),
		  0);
	CHECK_RET(post(e, IBV_WR_RDMA_READ, 2, l + FIRST, lm->lkey, t + FIRST,
		       tm->rkey, TOTAL - FIRST),
		  0);
	wc = next_wc(e);
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS,
	      "first READ: wr %" PRIu64 " %s", wc.wr_id,
	      ibv_wc_status_str(wc.status));
	t0 = now_ps();
	CHECK_RET(ibv_dereg_mr(tm), 0);
	busy_copy(e->a, t, NULL, MARKER, TOTAL);
	wc = next_wc(e);
	print_wc("read", wc);
	printf("read_ended_after_ps=%" PRIu64 "\n", now_ps() - t0);
	CHECK(wc.wr_id == 2 && (wc.status == IBV_WC_REM_ACCESS_ERR ||
				wc.status == IBV_WC_SUCCESS),
	      "second READ: wr %" PRIu64 " %s", wc.wr_id,
	      ibv_wc_status_str(wc.status));
	marks = count_byte(e->a, l, NULL, TOTAL, MARKER);
	printf("read_marker_bytes=%zu\n", marks);
	CHECK(!marks, "%zu bytes written after ibv_dereg_mr were read", marks);
	if (wc.status == IBV_WC_SUCCESS)
		CHECK(count_byte(e->a, l, NULL, TOTAL, 0x5a) == TOTAL,
		      "READ's bytes");
	CHECK_RET(ibv_dereg_mr(lm), 0);
}

/* Item 3: a WRITE into T under way when T (or, 'local', the WRITE's own
 * source S) is deregistered. */
static void case_write(struct env *e, int local)
{
	uint8_t *t = region(TOTAL, 0), *s = region(TOTAL, 0x3c);
	uint8_t *seen = region(TOTAL, 0);
	struct ibv_mr *tm = ibv_reg_mr(e->pd, t, TOTAL, ACCESS);
	struct ibv_mr *sm = ibv_reg_mr(e->pd, s, TOTAL, ACCESS);
	const char *name = local ? "local" : "write";
	struct ibv_wc wc;
	size_t changed;
	uint64_t t0;

	CHECK(tm && sm, "reg: %s", strerror(errno));
	if (!tm || !sm)
		return;
	CHECK_RET(
		post(e, IBV_WR_RDMA_WRITE, 1, s, sm->lkey, t, tm->rkey, FIRST),
		0);
	CHECK_RET(post(e, IBV_WR_RDMA_WRITE, 2, s + FIRST, sm->lkey, t + FIRST,
		       tm->rkey, TOTAL - FIRST),
		  0);
	wc = next_wc(e);
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS,
	      "first WRITE: wr %" PRIu64 " %s", wc.wr_id,
	      ibv_wc_status_str(wc.status));
	t0 = now_ps();
	CHECK_RET(ibv_dereg_mr(local ? sm : tm), 0);
	busy_copy(e->a, seen, t, 0, TOTAL);
	if (local)
		busy_copy(e->a, s, NULL, MARKER, TOTAL);
	wc = next_wc(e);
	print_wc(name, wc);
	printf("%s_ended_after_ps=%" PRIu64 "\n", name, now_ps() - t0);
	CHECK(wc.wr_id == 2 && (wc.status == (local ? IBV_WC_LOC_PROT_ERR
						    : IBV_WC_REM_ACCESS_ERR) ||
				wc.status == IBV_WC_SUCCESS),
	      "second WRITE: wr %" PRIu64 " %s", wc.wr_id,
	      ibv_wc_status_str(wc.status));
	changed = count_byte(e->a, t, seen, TOTAL, 0);
	printf("%s_changed_after=%zu\n", name, changed);
	if (!local)
		CHECK(!changed, "%zu bytes of T changed after ibv_dereg_mr",
		      changed);
	else
		CHECK(!count_byte(e->a, t, NULL, TOTAL, MARKER),
		      "bytes written into S after ibv_dereg_mr were sent");
	CHECK_RET(ibv_dereg_mr(local ? tm : sm), 0);
}

/* A file of 'len' zero bytes, unlinked; its fd. */
static int tmpfile_of(size_t len)
{
	char path[] = "/tmp/ibemu-mem-barrier-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, (off_t)len)) {
		printf("FAIL: tmpfile: %s\nfailures=1\n", strerror(errno));
		exit(1);
	}
	unlink(path);
	return fd;
}

/* Item 4: a second file mapped over a registered one (mapped shared,
 * or, 'private', privately: then no file holds the registered pages). */
static void case_remap(struct env *e, int private)
{
	const char *name = private ? "private" : "remap";
	size_t len = 65536;
	int f1 = tmpfile_of(len), f2 = tmpfile_of(len);
	uint8_t *s = region(len, 0x77), *back = region(len, 0);
	uint8_t *x = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  private ? MAP_PRIVATE : MAP_SHARED, f1, 0);
	struct ibv_mr *xm, *sm = ibv_reg_mr(e->pd, s, len, ACCESS);
	struct ibv_wc wc;
	size_t in1, in2;

	CHECK(x != MAP_FAILED && sm, "map: %s", strerror(errno));
	if (x == MAP_FAILED || !sm)
		return;
	xm = ibv_reg_mr(e->pd, x, len, ACCESS);
	CHECK(xm, "reg of a file mapping: %s", strerror(errno));
	if (!xm)
		return;
	CHECK(mmap(x, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f2,
		   0) == x,
	      "mmap over: %s", strerror(errno));
	CHECK_RET(post(e, IBV_WR_RDMA_WRITE, 3, s, sm->lkey, x, xm->rkey,
		       (uint32_t)len),
		  0);
	wc = next_wc(e);
	print_wc(name, wc);
	CHECK(wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_REM_ACCESS_ERR,
	      "WRITE: %s", ibv_wc_status_str(wc.status));
	CHECK(pread(f1, back, len, 0) == (ssize_t)len, "pread: %s",
	      strerror(errno));
	in1 = count_byte(e->a, back, NULL, len, 0x77);
	CHECK(pread(f2, back, len, 0) == (ssize_t)len, "pread: %s",
	      strerror(errno));
	in2 = count_byte(e->a, back, NULL, len, 0x77);
	printf("%s_first_file=%zu\n%s_second_file=%zu\n", name, in1, name, in2);
	CHECK(!in2, "%zu bytes landed in the file mapped after registration",
	      in2);
	if (wc.status == IBV_WC_SUCCESS && !private)
		CHECK(in1 == len, "%zu of %zu bytes in the registered file",
		      in1, len);
	CHECK_RET(ibv_dereg_mr(xm), 0);
	CHECK_RET(ibv_dereg_mr(sm), 0);
	munmap(x, len);
	close(f1);
	close(f2);
}

/* What the exit case's processes tell each other through pipes. */
struct hello {
	uint32_t qpn, rkey;
	uint16_t lid;
};

static void xfer(int fd, void *p, size_t len, int out)
{
	if ((out ? write(fd, p, len) : read(fd, p, len)) != (ssize_t)len) {
		printf("FAIL: pipe: %s\nfailures=1\n", strerror(errno));
		exit(1);
	}
}

/* The exit case's target: registers 't', answers, then waits in verbs
 * (an empty CQ) until told to exit, and exits there. */
static void exit_target(uint8_t *t, int in, int out)
{
	struct env e = {0};
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct hello me, peer;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char go = 0;

	e.ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!e.ctx || ibv_query_port(e.ctx, 1, &pa))
		_exit(3);
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = e.pd ? ibv_create_cq(e.ctx, 64, NULL, NULL, 0) : NULL;
	e.b = e.cq ? qp_new(&e) : NULL;
	mr = e.b ? ibv_reg_mr(e.pd, t, TOTAL, ACCESS) : NULL;
	if (!mr)
		_exit(4);
	me = (struct hello){e.b->qp_num, mr->rkey, pa.lid};
	xfer(out, &me, sizeof(me), 1);
	xfer(in, &peer, sizeof(peer), 0);
	if (qp_connect(e.b, peer.lid, peer.qpn, IBV_MTU_4096, 4))
		_exit(5);
	xfer(out, &go, 1, 1);
	fcntl(in, F_SETFL, O_NONBLOCK);
	while (read(in, &go, 1) != 1)
		ibv_poll_cq(e.cq, 1, &wc);
	_exit(0); /* with the region registered and the WRITE under way */
}

/* Item 3, exit: the target exits with a WRITE into its region under way;
 * the region is shared with this process, which sees it after. */
static void case_exit(void)
{
	uint8_t *t = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *s = region(TOTAL, 0x3c), *seen = region(TOTAL, 0);
	int down[2], up[2], status = -1;
	struct env e = {0};
	struct ibv_device **list;
	struct ibv_port_attr pa;
	struct hello me, peer;
	struct ibv_mr *sm;
	struct ibv_wc wc;
	size_t changed;
	pid_t pid;
	char go;

	if (t == MAP_FAILED || pipe(down) || pipe(up)) {
		printf("FAIL: %s\nfailures=1\n", strerror(errno));
		exit(1);
	}
	memset(t, 0, TOTAL);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit_target(t, down[0], up[1]);
	list = ibv_get_device_list(NULL);
	e.ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!e.ctx || ibv_query_port(e.ctx, 1, &pa))
		goto err;
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = e.pd ? ibv_create_cq(e.ctx, 64, NULL, NULL, 0) : NULL;
	e.a = e.cq ? qp_new(&e) : NULL;
	sm = e.a ? ibv_reg_mr(e.pd, s, TOTAL, ACCESS) : NULL;
	if (!sm)
		goto err;
	xfer(up[0], &peer, sizeof(peer), 0);
	me = (struct hello){e.a->qp_num, 0, pa.lid};
	xfer(down[1], &me, sizeof(me), 1);
	if (qp_connect(e.a, peer.lid, peer.qpn, IBV_MTU_4096, 4))
		goto err;
	xfer(up[0], &go, 1, 0);
	CHECK_RET(post(&e, IBV_WR_RDMA_WRITE, 1, s, sm->lkey, t, peer.rkey,
		       FIRST),
		  0);
	CHECK_RET(post(&e, IBV_WR_RDMA_WRITE, 2, s + FIRST, sm->lkey, t + FIRST,
		       peer.rkey, TOTAL - FIRST),
		  0);
	wc = next_wc(&e);
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS,
	      "first WRITE: wr %" PRIu64 " %s", wc.wr_id,
	      ibv_wc_status_str(wc.status));
	xfer(down[1], &go, 1, 1);
	CHECK(waitpid(pid, &status, 0) == pid && status == 0,
	      "target status %d", status);
	busy_copy(e.a, seen, t, 0, TOTAL);
	wc = next_wc(&e);
	print_wc("exit", wc);
	CHECK(wc.wr_id == 2 && wc.status != IBV_WC_SUCCESS,
	      "second WRITE: wr %" PRIu64 " %s", wc.wr_id,
	      ibv_wc_status_str(wc.status));
	changed = count_byte(e.a, t, seen, TOTAL, 0);
	printf("exit_changed_after=%zu\n", changed);
	CHECK(!changed,
	      "%zu bytes of the region changed after its process "
	      "exited",
	      changed);
	ibv_destroy_qp(e.a);
	ibv_dereg_mr(sm);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return;
err:
	printf("FAIL: exit case setup: %s\n", strerror(errno));
	failures++;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Item 4: memory that is mapped but not accessible is not registered. */
static void case_protnone(struct env *e)
{
	size_t big = 8ull << 30;
	void *p = mmap(NULL, big, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *ro = mmap(NULL, 65536, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			0);
	struct ibv_mr *mr;

	CHECK(p != MAP_FAILED && ro != MAP_FAILED, "mmap: %s", strerror(errno));
	if (p == MAP_FAILED || ro == MAP_FAILED)
		return;
	errno = 0;
	mr = ibv_reg_mr(e->pd, p, big, ACCESS);
	printf("protnone_errno=%d\n", mr ? 0 : errno);
	CHECK(!mr && errno == EFAULT, "8 GiB of PROT_NONE: %p errno %d", mr,
	      errno);
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(e->pd, ro, 65536, IBV_ACCESS_LOCAL_WRITE);
	printf("readonly_write_errno=%d\n", mr ? 0 : errno);
	CHECK(!mr && errno == EFAULT, "read-only for writing: %p errno %d", mr,
	      errno);
	if (mr)
		ibv_dereg_mr(mr);
	/* Read-only memory registered for reading is fine. */
	mr = ibv_reg_mr(e->pd, ro, 65536, 0);
	CHECK(mr, "read-only for reading: %s", strerror(errno));
	if (mr)
		CHECK_RET(ibv_dereg_mr(mr), 0);
	munmap(p, big);
	munmap(ro, 65536);
}

int main(int argc, char **argv)
{
	struct env e = {0};
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "exit")) {
		/* Two processes, each with its own context. */
		case_exit();
		printf("failures=%d\n", failures);
		return failures > 100 ? 100 : failures;
	}
	if (setup(&e)) {
		printf("FAIL: setup: %s\nfailures=1\n", strerror(errno));
		return 1;
	}
	if (!strcmp(what, "read"))
		case_read(&e);
	else if (!strcmp(what, "write"))
		case_write(&e, 0);
	else if (!strcmp(what, "local"))
		case_write(&e, 1);
	else if (!strcmp(what, "remap"))
		case_remap(&e, 0);
	else if (!strcmp(what, "private"))
		case_remap(&e, 1);
	else if (!strcmp(what, "protnone"))
		case_protnone(&e);
	else {
		printf("FAIL: usage: mem_barrier "
		       "read|write|local|exit|remap|private|protnone\n"
		       "failures=1\n");
		return 2;
	}
	ibv_destroy_qp(e.a);
	ibv_destroy_qp(e.b);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}
