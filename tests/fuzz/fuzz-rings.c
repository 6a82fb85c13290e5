// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the rings of a verbs stream as the daemon drains
 * them: a process (this one, through the real session server of
 * fuzz-daemon.h) opens a context on h3, registers a buffer of its own,
 * creates a CQ, an SRQ, two RC QPs connected across sw2 (one on the SRQ)
 * and a UD QP, all through the stream's calls. Then the input writes what
 * it likes into the shared memory: WQEs with any opcode, SGE count,
 * length, key, inline data and address vector, producer and consumer
 * indices, the CQ's arm and the context page; the daemon's loop drains it
 * into the transport and the engine runs. Data moves with
 * process_vm_readv/writev on this process.
 *
 * Whatever it writes, the outcome must be a completion (success or an
 * error status), a queue in error, or nothing: never a crash, a read out
 * of bounds or undefined behaviour, and never a write outside the
 * registered buffer (guarded by canaries). The queues are created for
 * CAP work requests in rings of ENTRIES, so posts past a queue's capacity
 * are tried too. Each record is an operation:
 *   0 T OFF(2) N bytes  write N bytes into target T at OFF
 *   1 T N(2) bytes      post: an entry of N bytes at T's producer index,
 *                       which then advances (a well-behaved producer)
 *   2                   let the daemon's loop turn (drain the rings)
 *   3                   run the engine until idle (bounded)
 *   4                   consume the CQ and the async events, checking them
 *   5 Q                 take QP Q to Reset and connect it again
 *   6 A                 arm the CQ with A
 *   7 T N(2) bytes      post as 1, its SGE and remote addresses taken as
 *                       offsets into the registered buffer (seeds can
 *                       then be valid work requests)
 * Targets: 0 the context page, 1 the CQ (its consumer's part of the
 * header only: the entries are the daemon's to write), 2 the SRQ, 3-4 RC QP A's SQ and
 * RQ, 5 RC QP B's SQ, 6-7 the UD QP's SQ and RQ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENTRIES 8u
/* What the queues are created for: fewer than their rings hold, so a
 * producer that posts past it tests the daemon's capacity checks. */
#define CAP	  5u
#define MEM_BYTES 65536u
#define GUARD	  4096u
#define QKEY	  0x11111111u
#define NTARGETS  8u

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-rings: %s\n", what);
	abort();
}

/* The registered buffer between two guards only the fuzzer writes. */
static struct {
	uint8_t lo[GUARD];
	uint8_t mem[MEM_BYTES];
	uint8_t hi[GUARD];
} arena __attribute__((aligned(4096)));

static volatile uint64_t probe = 0x7269676e73;

struct target {
	uint8_t *map;
	size_t bytes;
	uint32_t esz; /* 0: the context page */
};

struct rig {
	struct ibemu_daemon *d;
	struct ibemu_sess_conn *c;
	int peer;
	uint32_t pd, cq, srq, qpa, qpb, qpu;
	uint16_t lid1, lid2;
	uint32_t cq_seen; /* the CQ's entries checked so far */
	struct target t[NTARGETS];
};

/* A call on the stream; the reply's payload into 'io'. Returns its status. */
static int call(struct rig *r, uint16_t type, void *io, size_t len, int *fds,
		int nfds)
{
	uint8_t msg[sizeof(struct ibemu_sess_hdr) + 128];
	struct ibemu_sess_hdr h = {
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = type,
		.len = (uint32_t)len,
	};

	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), io, len);
	ibemu_fuzz_conn_feed(r->c, msg, sizeof(h) + len, fds, nfds);
	if (r->c->closing)
		fail("the daemon closed the stream");
	return ibemu_fuzz_replies(r->peer, io, len);
}

/* A sealed memfd of 'bytes', mapped here and given (dup'd) in *fd. */
static uint8_t *shared(size_t bytes, int *fd)
{
	int mine = ibemu_fuzz_memfd(bytes, 0);
	void *map =
		mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);

	if (map == MAP_FAILED)
		fail("mmap");
	*fd = dup(mine);
	close(mine);
	return map;
}

static uint8_t *ring(struct rig *r, unsigned t, uint32_t esz, int *fd)
{
	size_t bytes = IBEMU_VERBS_RING_BYTES(ENTRIES, esz);

	r->t[t].bytes = bytes;
	r->t[t].esz = esz;
	r->t[t].map = shared(bytes, fd);
	return r->t[t].map;
}

static uint32_t qp_create(struct rig *r, uint32_t type, int srq, unsigned sq,
			  unsigned rq)
{
	struct ibemu_verbs_qp_req q = {
		.qp_type = type,
		.pd = r->pd,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.srq = srq ? r->srq : 0,
		.max_send_wr = CAP,
		.max_recv_wr = CAP,
		.max_send_sge = 4,
		.max_recv_sge = 4,
		.max_inline_data = 64,
		.sq_entries = ENTRIES,
		.rq_entries = ENTRIES,
	};
	int fds[2];

	ring(r, sq, sizeof(struct ibemu_verbs_swqe), &fds[0]);
	if (!srq)
		ring(r, rq, sizeof(struct ibemu_verbs_rwqe), &fds[1]);
	if (call(r, IBEMU_SESS_VERBS_QP_CREATE, &q, sizeof(q), fds, 2 - srq))
		fail("QP_CREATE");
	return q.qpn;
}

static int modify(struct rig *r, struct ibemu_verbs_qp_attr *a)
{
	return call(r, IBEMU_SESS_VERBS_QP_MODIFY, a, sizeof(*a), NULL, 0);
}

/* Reset, Init, RTR, RTS; RC QPs to 'dqpn' at 'dlid'. */
static void qp_up(struct rig *r, uint32_t qpn, int ud, unsigned port,
		  uint32_t dqpn, uint16_t dlid)
{
	struct ibemu_verbs_qp_attr a = {.qpn = qpn};

	a.qp_state = IBEMU_QPS_RESET;
	a.mask = IBEMU_QP_STATE;
	modify(r, &a);
	a.qp_state = IBEMU_QPS_INIT;
	a.port_num = (uint8_t)port;
	a.qkey = QKEY;
	a.qp_access_flags = IBEMU_ACCESS_REMOTE_WRITE |
			    IBEMU_ACCESS_REMOTE_READ |
			    IBEMU_ACCESS_REMOTE_ATOMIC;
	a.mask = IBEMU_QP_STATE | IBEMU_QP_PKEY_INDEX | IBEMU_QP_PORT |
		 (ud ? IBEMU_QP_QKEY : IBEMU_QP_ACCESS_FLAGS);
	if (modify(r, &a))
		fail("to Init");
	a.qp_state = IBEMU_QPS_RTR;
	a.mask = IBEMU_QP_STATE;
	if (!ud) {
		a.path_mtu = 3; /* 1024: messages of several packets */
		a.dest_qp_num = dqpn;
		a.rq_psn = 100;
		a.dlid = dlid;
		a.ah_port_num = (uint8_t)port;
		a.max_dest_rd_atomic = 2;
		a.min_rnr_timer = 1;
		a.mask |= IBEMU_QP_AV | IBEMU_QP_PATH_MTU | IBEMU_QP_DEST_QPN |
			  IBEMU_QP_RQ_PSN | IBEMU_QP_MAX_DEST_RD_ATOMIC |
			  IBEMU_QP_MIN_RNR_TIMER;
	}
	if (modify(r, &a))
		fail("to RTR");
	a.qp_state = IBEMU_QPS_RTS;
	a.sq_psn = 100;
	a.mask = IBEMU_QP_STATE | IBEMU_QP_SQ_PSN;
	if (!ud) {
		/* Short timeouts and few retries: errors come quickly. */
		a.timeout = 1;
		a.retry_cnt = 1;
		a.rnr_retry = 1;
		a.max_rd_atomic = 2;
		a.mask |= IBEMU_QP_TIMEOUT | IBEMU_QP_RETRY_CNT |
			  IBEMU_QP_RNR_RETRY | IBEMU_QP_MAX_QP_RD_ATOMIC;
	}
	if (modify(r, &a))
		fail("to RTS");
}

static void connect_qp(struct rig *r, unsigned which)
{
	switch (which % 3) {
	case 0:
		qp_up(r, r->qpa, 0, 1, r->qpb, r->lid2);
		break;
	case 1:
		qp_up(r, r->qpb, 0, 2, r->qpa, r->lid1);
		break;
	default:
		qp_up(r, r->qpu, 1, 1, 0, 0);
	}
}

static void rig_up(struct rig *r)
{
	struct ibemu_verbs_open o = {.bind = {.host = "h3"}};
	struct ibemu_verbs_mr_req mr = {0};
	struct ibemu_verbs_cq_req cq = {.entries = ENTRIES, .channel = 1};
	struct ibemu_verbs_srq_req srq = {0};
	struct ibemu_verbs_obj pd = {0};
	struct ibemu_engine *e;
	uint32_t node;
	int fds[2];

	memset(r, 0, sizeof(*r));
	r->d = ibemu_fuzz_daemon_create();
	e = r->d->engine;
	node = ibemu_topo_find(r->d->topo, "h3");
	r->lid1 = ibemu_engine_get_lid(e, node, 1);
	r->lid2 = ibemu_engine_get_lid(e, node, 2);
	r->c = ibemu_fuzz_conn_open(r->d, &r->peer);
	o.probe_addr = (uint64_t)(uintptr_t)&probe;
	o.probe = probe;
	r->t[0].bytes = IBEMU_VERBS_PAGE;
	r->t[0].map = shared(IBEMU_VERBS_PAGE, &fds[0]);
	fds[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (call(r, IBEMU_SESS_VERBS_OPEN, &o, sizeof(o), fds, 2))
		fail("VERBS_OPEN");
	if (call(r, IBEMU_SESS_VERBS_PD_ALLOC, &pd, sizeof(pd), NULL, 0))
		fail("PD_ALLOC");
	r->pd = pd.id;
	mr.addr = (uint64_t)(uintptr_t)arena.mem;
	mr.len = MEM_BYTES;
	mr.pd = r->pd;
	mr.access = 0xf;
	if (call(r, IBEMU_SESS_VERBS_MR_REG, &mr, sizeof(mr), NULL, 0))
		fail("MR_REG");
	ring(r, 1, sizeof(struct ibemu_verbs_cqe), &fds[0]);
	fds[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (call(r, IBEMU_SESS_VERBS_CQ_CREATE, &cq, sizeof(cq), fds, 2))
		fail("CQ_CREATE");
	r->cq = cq.id;
	srq.pd = r->pd;
	srq.max_wr = CAP;
	srq.max_sge = 4;
	srq.srq_limit = 2;
	srq.entries = ENTRIES;
	ring(r, 2, sizeof(struct ibemu_verbs_rwqe), &fds[0]);
	if (call(r, IBEMU_SESS_VERBS_SRQ_CREATE, &srq, sizeof(srq), fds, 1))
		fail("SRQ_CREATE");
	r->srq = srq.id;
	r->qpa = qp_create(r, IBEMU_QPT_RC, 0, 3, 4);
	r->qpb = qp_create(r, IBEMU_QPT_RC, 1, 5, 0);
	r->qpu = qp_create(r, IBEMU_QPT_UD, 0, 6, 7);
	connect_qp(r, 0);
	connect_qp(r, 1);
	connect_qp(r, 2);
}

static void rig_down(struct rig *r)
{
	unsigned i;

	close(r->peer);
	ibemu_fuzz_daemon_destroy(r->d);
	for (i = 0; i < NTARGETS; i++)
		if (r->t[i].map)
			munmap(r->t[i].map, r->t[i].bytes);
}

static void loop_turn(struct rig *r)
{
	/* prepare_cb drains the rings, the pump runs what they started. */
	uv_run(&r->d->loop, UV_RUN_NOWAIT);
	ibemu_fuzz_replies(r->peer, NULL, 0);
}

static void engine_run(struct rig *r)
{
	loop_turn(r);
	ibemu_engine_run(r->d->engine, UINT64_MAX, 200000);
	loop_turn(r);
}

/* What the daemon wrote into the CQ and the async ring must make sense. */
static void consume(struct rig *r)
{
	struct ibemu_verbs_ring_hdr *h = (void *)r->t[1].map;
	struct ibemu_verbs_page *pg = (void *)r->t[0].map;
	uint32_t prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
	uint32_t cons = r->cq_seen;

	/* Only the daemon writes the CQ's producer index and entries (the
	 * input writes the rest of its header); the last ENTRIES it wrote
	 * are in the ring whatever consumer index the input made up. */
	if (prod - cons > ENTRIES)
		cons = prod - ENTRIES;
	r->cq_seen = prod;
	{
		for (; cons != prod; cons++) {
			struct ibemu_verbs_cqe e;

			memcpy(&e,
			       r->t[1].map + sizeof(*h) +
				       (cons % ENTRIES) * sizeof(e),
			       sizeof(e));
			if (e.status > IBEMU_WC_GENERAL_ERR ||
			    (e.opcode > IBEMU_WC_FETCH_ADD &&
			     e.opcode != IBEMU_WC_RECV &&
			     e.opcode != IBEMU_WC_RECV_RDMA_WITH_IMM)) {
				fprintf(stderr,
					"fuzz-rings: completion of QP %u with "
					"status %u, opcode %u\n",
					e.qp_num, e.status, e.opcode);
				abort();
			}
			if (e.qp_num != r->qpa && e.qp_num != r->qpb &&
			    e.qp_num != r->qpu)
				fail("a completion of another QP");
		}
	}
	__atomic_store_n(&h->cons, prod, __ATOMIC_RELEASE);
	h = &pg->async_hdr;
	prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
	__atomic_store_n(&h->cons, prod, __ATOMIC_RELEASE);
}

/* Op 7: offsets into the registered buffer become its addresses. */
static void relocate(const struct target *t, uint8_t *ent)
{
	uint64_t base = (uint64_t)(uintptr_t)arena.mem, a;
	struct ibemu_verbs_sge *sge;
	unsigned i;

	if (t->esz == sizeof(struct ibemu_verbs_swqe)) {
		struct ibemu_verbs_swqe *w = (void *)ent;

		memcpy(&a, &w->remote_addr, sizeof(a));
		a += base;
		memcpy(&w->remote_addr, &a, sizeof(a));
		if (w->send_flags & IBEMU_SEND_INLINE)
			return; /* data, not SGEs */
		sge = w->sge;
	} else {
		sge = ((struct ibemu_verbs_rwqe *)(void *)ent)->sge;
	}
	for (i = 0; i < IBEMU_VERBS_WQE_SGES; i++)
		sge[i].addr += base;
}

static void guards_check(void)
{
	unsigned i;

	for (i = 0; i < GUARD; i++)
		if (arena.lo[i] != 0xa5 || arena.hi[i] != 0x5a)
			fail("a write outside the registered buffer");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rig r;
	size_t off = 0;

	memset(arena.lo, 0xa5, GUARD);
	memset(arena.hi, 0x5a, GUARD);
	rig_up(&r);
	while (off < size) {
		uint8_t op = data[off++] % 8;
		struct target *t;
		size_t n, at;

		switch (op) {
		case 0:
		case 1:
		case 7:
			if (size - off < 3)
				goto out;
			t = &r.t[data[off] % NTARGETS];
			at = data[off + 1] | (size_t)data[off + 2] << 8;
			off += 3;
			if (t == &r.t[1] && op == 0) {
				/* The CQ's consumer side: cons, arm and the
				 * rest of the header after it. */
				n = size - off < 1 ? 0 : data[off++];
				at = IBEMU_VERBS_CACHE_LINE +
				     at % (2 * IBEMU_VERBS_CACHE_LINE);
				if (n > 3 * IBEMU_VERBS_CACHE_LINE - at)
					n = 3 * IBEMU_VERBS_CACHE_LINE - at;
			} else if (t == &r.t[1]) {
				break; /* the process never produces CQEs */
			} else if (op == 0) {
				n = size - off < 1 ? 0 : data[off++];
				at %= t->bytes;
			} else {
				/* 'at' is the entry's length here. */
				n = t->esz ? at % (t->esz + 1) : 0;
				at = 0;
				if (t->esz) {
					struct ibemu_verbs_ring_hdr *h =
						(void *)t->map;

					at = sizeof(*h) +
					     (h->prod % ENTRIES) * t->esz;
					memset(t->map + at, 0, t->esz);
				}
			}
			if (n > size - off)
				n = size - off;
			if (n > t->bytes - at)
				n = t->bytes - at;
			memcpy(t->map + at, data + off, n);
			off += n;
			if (op == 7 && t->esz)
				relocate(t, t->map + at);
			if (op != 0 && t->esz) {
				__atomic_fetch_add(
					&((struct ibemu_verbs_ring_hdr *)t->map)
						 ->prod,
					1, __ATOMIC_RELEASE);
				/* As the library says it posted. */
				__atomic_fetch_add(
					&((struct ibemu_verbs_page *)r.t[0].map)
						 ->posts,
					1, __ATOMIC_RELEASE);
			}
			break;
		case 2:
			loop_turn(&r);
			break;
		case 3:
			engine_run(&r);
			break;
		case 4:
			consume(&r);
			break;
		case 5:
			if (off < size)
				connect_qp(&r, data[off++]);
			break;
		default:
			if (off < size)
				((struct ibemu_verbs_ring_hdr *)r.t[1].map)
					->arm = data[off++];
		}
	}
out:
	engine_run(&r);
	consume(&r);
	engine_run(&r);
	rig_down(&r);
	guards_check();
	return 0;
}
