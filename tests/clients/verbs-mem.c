// SPDX-License-Identifier: MIT
/*
 * Registered memory of every kind through the real API, linked against
 * the system libibverbs: a malloc'd buffer, a large anonymous mmap, a
 * buffer on the stack, a file mapping, the same pages registered twice
 * and after deregistration. For each, the bytes it held before
 * registration are still there, and RDMA WRITE, READ and an atomic on a
 * loopback RC QP (through the leaf switch) move the right bytes; whether
 * the library moved its pages onto shared memory (the fast path of
 * docs/design.md §6) is printed as shared_KIND=0|1 from
 * /proc/self/maps. Then fork(): the child's writes to a registered buffer
 * do not reach the parent. Prints key=value lines for
 * tests/integration/test_verbs.py; returns the number of broken rules.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs-check.h"

#define ACCESS                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *src;
	struct ibv_mr *src_mr;
};

/* Whether the page of 'p' is on the library's shared memory. */
static int shared(const void *p)
{
	char line[512], path[256];
	uintptr_t lo, hi, a = (uintptr_t)p;
	FILE *f = fopen("/proc/self/maps", "r");
	int yes = 0;

	while (f && fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line,
			   "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %255s",
			   &lo, &hi, path) >= 2 &&
		    lo <= a && a < hi)
			yes = !!strstr(path, "ibemu-mr");
	}
	if (f)
		fclose(f);
	return yes;
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 5000000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n == 1 && wc->status != IBV_WC_SUCCESS)
			printf("wr %" PRIu64 ": %s\n", wc->wr_id,
			       ibv_wc_status_str(wc->status));
		if (n)
			return n == 1 && wc->status == IBV_WC_SUCCESS;
		if (i > 1000)
			usleep(1);
	}
	return 0;
}

/* One signaled work request; 1 if it completed successfully. */
static int run(struct env *e, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	return !ibv_post_send(e->qp, wr, &bad) && poll_one(e->cq, &wc);
}

/*
 * Registers 'len' bytes at 'buf' (which hold i * 13 + 5 at i), checks they
 * are unchanged, WRITEs 4 KiB into it, READs 2 KiB back out, adds to its
 * last 8-byte word; prints shared_NAME.
 */
static void check_region(struct env *e, const char *name, uint8_t *buf,
			 size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, buf, len, ACCESS);
	uint64_t *word = (uint64_t *)(void *)(buf + len - 8), before;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	size_t i, bad = 0;

	CHECK(mr, "%s: ibv_reg_mr: %s", name, strerror(errno));
	if (!mr)
		return;
	for (i = 0; i < len - 8; i++)
		bad += buf[i] != (uint8_t)(i * 13 + 5);
	CHECK(!bad, "%s: %zu bytes changed by the registration", name, bad);
	for (i = 0; i < 4096; i++)
		e->src[i] = (uint8_t)(i ^ len);
	sge = (struct ibv_sge){(uintptr_t)e->src, 4096, e->src_mr->lkey};
	wr = (struct ibv_send_wr){.sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = {(uintptr_t)buf + 100, mr->rkey}};
	CHECK(run(e, &wr), "%s: RDMA WRITE failed", name);
	CHECK(!memcmp(buf + 100, e->src, 4096), "%s: WRITE's bytes", name);
	sge = (struct ibv_sge){(uintptr_t)e->src + 8192, 2048, e->src_mr->lkey};
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 1000;
	CHECK(run(e, &wr), "%s: RDMA READ failed", name);
	CHECK(!memcmp(e->src + 8192, buf + 1000, 2048), "%s: READ's bytes",
	      name);
	before = *word;
	sge = (struct ibv_sge){(uintptr_t)e->src + 16384, 8, e->src_mr->lkey};
	wr = (struct ibv_send_wr){.sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .wr.atomic = {.remote_addr = (uintptr_t)word,
						.compare_add = 3,
						.rkey = mr->rkey}};
	CHECK(run(e, &wr), "%s: fetch-and-add failed", name);
	CHECK(*word == before + 3 &&
		      *(uint64_t *)(void *)(e->src + 16384) == before,
	      "%s: fetch-and-add: %" PRIu64 " -> %" PRIu64, name, before,
	      *word);
	printf("shared_%s=%d\n", name, shared(buf + len / 2));
	CHECK_RET(ibv_dereg_mr(mr), 0);
}

static void fill(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 13 + 5);
}

static void check_stack(struct env *e)
{
	uint8_t buf[24576];

	fill(buf, sizeof(buf));
	check_region(e, "stack", buf, sizeof(buf));
}

static void check_file(struct env *e)
{
	char path[] = "/tmp/ibemu-verbs-mem-XXXXXX";
	int fd = mkstemp(path);
	size_t len = 1 << 16;
	uint8_t *map;

	CHECK(fd >= 0 && !ftruncate(fd, (off_t)len), "file: %s",
	      strerror(errno));
	map = fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			     0)
		      : MAP_FAILED;
	unlink(path);
	if (map == MAP_FAILED)
		return;
	fill(map, len);
	check_region(e, "file", map, len);
	munmap(map, len);
	close(fd);
}

/* The child writes the registered buffer; the parent's copy is intact. */
static void check_fork(struct env *e, uint8_t *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, buf, len, ACCESS);
	int status = -1;
	pid_t pid;

	CHECK(mr, "fork: ibv_reg_mr: %s", strerror(errno));
	fill(buf, len);
	pid = fork();
	if (pid == 0) {
		memset(buf, 0x77, len);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "fork: child status %d", status);
	CHECK(buf[0] == 5 && buf[len - 1] == (uint8_t)((len - 1) * 13 + 5),
	      "fork: the child's writes reached the parent (%02x)", buf[0]);
	printf("fork_private=%d\n", buf[0] == 5);
	if (mr)
		CHECK_RET(ibv_dereg_mr(mr), 0);
}

static int setup(struct env *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};

	e->ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	ibv_free_device_list(list);
	if (!e->ctx || ibv_query_port(e->ctx, 1, &pa))
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	e->src = aligned_alloc(4096, 32768);
	if (!e->pd || !e->cq || !e->src)
		return -1;
	e->src_mr = ibv_reg_mr(e->pd, e->src, 32768, ACCESS);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->src_mr || !e->qp)
		return -1;
	return loopback_connect(e->qp, pa.lid, IBV_MTU_4096, 1);
}

int main(void)
{
	struct env e = {0};
	size_t big = 4u << 20;
	uint8_t *heap, *map;

	if (setup(&e)) {
		printf("FAIL: setup: %s\nfailures=1\n", strerror(errno));
		return 1;
	}
	heap = malloc(40000);
	fill(heap, 40000);
	check_region(&e, "malloc", heap, 40000);
	/* The same pages again: the moved range is reused. */
	fill(heap, 40000);
	check_region(&e, "malloc_again", heap, 40000);
	map = mmap(NULL, big, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED, "mmap: %s", strerror(errno));
	if (map != MAP_FAILED) {
		fill(map, big);
		check_region(&e, "mmap", map, big);
		check_fork(&e, map, 65536);
		munmap(map, big);
	}
	/* Fresh memory where the moved range was: registered anew. */
	map = mmap(NULL, big, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map != MAP_FAILED) {
		fill(map, big);
		check_region(&e, "mmap_again", map, big);
		munmap(map, big);
	}
	check_stack(&e);
	check_file(&e);
	free(heap);
	CHECK_RET(ibv_destroy_qp(e.qp), 0);
	CHECK_RET(ibv_dereg_mr(e.src_mr), 0);
	CHECK_RET(ibv_destroy_cq(e.cq), 0);
	CHECK_RET(ibv_dealloc_pd(e.pd), 0);
	CHECK_RET(ibv_close_device(e.ctx), 0);
	printf("failures=%d\n", failures);
	return failures > 100 ? 100 : failures;
}
