// SPDX-License-Identifier: MIT
/*
 * Directed-route SMPs through libibumad, many in flight: requests queue,
 * and at most 'window' are outstanding at once, each matched to its
 * answer by TID. Timeouts and retries are the kernel's (umad_send's
 * timeout_ms and retries): an SMP that never came back returns with
 * status ETIMEDOUT, and its callback says so.
 */
#include <endian.h>
#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "sa.h"
#include "sm.h"

#define SMP_CLASS_DR  0x81	  /* IBA 14.2.1: directed-route SMPs */
#define SMP_CLASS_LID 0x01	  /* LID-routed SMPs */
#define QP1_QKEY      0x80010000u /* IBA 15.2.1.1: the GSI's Q_Key */
/* Trap 144's ChangeFlags: SM priority changed (IBA 14.2.5.1). */
#define TRAP144_SM_PRIORITY 0x0008

struct sm_req {
	struct sm_req *next;
	uint64_t tid;
	uint16_t dlid; /* LID-routed if not 0, else directed route */
	uint8_t path[SM_MAX_HOPS + 1];
	uint8_t hops;
	uint8_t method;
	uint16_t attr;
	uint32_t mod;
	uint8_t data[IBEMU_SMP_DATA_LEN];
	sm_smp_cb cb;
	void *arg;
	uint64_t arg2;
	/* A GMP (sm_gmp()): its whole MAD, owned, and its agent. */
	uint8_t *gmp;
	int gmp_agent;
	sm_gmp_cb gmp_cb;
};

static void req_free(struct sm_req *r)
{
	free(r->gmp);
	free(r);
}

/* Tells the owner of 'r' that it failed with 'st' (-errno). */
static void req_fail(struct sm *sm, struct sm_req *r, int st)
{
	if (r->gmp)
		r->gmp_cb(sm, st, NULL, r->arg, r->arg2);
	else
		r->cb(sm, st, NULL, r->arg, r->arg2);
}

/* Sets 'method' in a umad_register() method mask. */
static void method_bit(long *mask, unsigned method)
{
	mask[method / (8 * sizeof(long))] |= 1L
					     << (method % (8 * sizeof(long)));
}

int sm_smp_open(struct sm *sm)
{
	if (umad_init() < 0)
		return -EIO;
	/*
	 * ibemu's libibumad may queue our SENDs and write them together
	 * (umad/umad.c, "Deferred SENDs"): this loop always receives after
	 * it sends. Asked for this port only, not for our children.
	 */
	setenv("IBEMU_UMAD_DEFER_SENDS", "1", 1);
	sm->fd = umad_open_port(sm->ca, sm->port_num);
	unsetenv("IBEMU_UMAD_DEFER_SENDS");
	if (sm->fd < 0)
		return sm->fd;
	/* Answers to our requests come back by TID; and a directed-route
	 * Get(SMInfo) (IBA 14.4.1: a standby SM, OpenSM's too, polls the
	 * master so) comes to the Get method, a Set(SMInfo) (a master
	 * handing over, a standby acknowledging) to the Set method. */
	{
		long mask[16 / sizeof(long)] = {0};

		method_bit(mask, IBEMU_MAD_METHOD_GET);
		method_bit(mask, IBEMU_MAD_METHOD_SET);
		sm->agent = umad_register(sm->fd, SMP_CLASS_DR, 1, 0, mask);
	}
	if (sm->agent < 0) {
		umad_close_port(sm->fd);
		return sm->agent;
	}
	/* IBA 14.2.5.1: the SMAs send Traps, LID-routed, to the SM's LID. */
	{
		long mask[16 / sizeof(long)] = {0};

		method_bit(mask, IBEMU_MAD_METHOD_TRAP);
		/* And Get and Set(SMInfo) (IBA 14.2.5.13): the SM's. */
		method_bit(mask, IBEMU_MAD_METHOD_GET);
		method_bit(mask, IBEMU_MAD_METHOD_SET);
		sm->trap_agent =
			umad_register(sm->fd, SMP_CLASS_LID, 1, 0, mask);
		if (sm->trap_agent < 0)
			fprintf(stderr,
				"ibemu-sm: no Traps (umad_register: %s); "
				"light sweeps only\n",
				strerror(-sm->trap_agent));
	}
	/* IBA 15: Subnet Administration, on the same port. */
	if (sm_sa_open(sm) < 0)
		fprintf(stderr, "ibemu-sm: no SA (umad_register: %s)\n",
			strerror(-sm->sa_agent));
	/* Annex A10: a CC manager's requests, if there is a policy. */
	if (sm_cc_open(sm) < 0)
		fprintf(stderr,
			"ibemu-sm: no congestion control (umad_register: "
			"%s)\n",
			strerror(-sm->cc_agent));
	sm->inflight = calloc(sm->window, sizeof(*sm->inflight));
	if (!sm->inflight) {
		umad_close_port(sm->fd);
		return -ENOMEM;
	}
	sm->next_tid = 1;
	return 0;
}

void sm_smp_close(struct sm *sm)
{
	struct sm_req *r;

	/* What never left or was never answered (the port went during a
	 * sweep) fails: its owner frees what it gave (a probe...). Nothing
	 * is queued meanwhile. */
	sm->port_gone = 1;
	while ((r = sm->queue_head)) {
		sm->queue_head = r->next;
		req_fail(sm, r, -ENODEV);
		req_free(r);
	}
	if (sm->inflight) {
		while (sm->ninflight) {
			r = sm->inflight[--sm->ninflight];
			req_fail(sm, r, -ENODEV);
			req_free(r);
		}
		free(sm->inflight);
	}
	sm_cc_close(sm);
	sm_sa_close(sm);
	if (sm->trap_agent >= 0)
		umad_unregister(sm->fd, sm->trap_agent);
	umad_unregister(sm->fd, sm->agent);
	umad_close_port(sm->fd);
}

/* Queues 'r' behind the requests waiting for a send window. */
static void enqueue(struct sm *sm, struct sm_req *r)
{
	if (sm->queue_tail)
		sm->queue_tail->next = r;
	else
		sm->queue_head = r;
	sm->queue_tail = r;
}

int sm_smp(struct sm *sm, const uint8_t *path, unsigned hops, uint8_t method,
	   uint16_t attr, uint32_t mod, const uint8_t *data, sm_smp_cb cb,
	   void *arg, uint64_t arg2)
{
	struct sm_req *r;

	if (sm->port_gone)
		return -ENODEV; /* nothing leaves any more */
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(r->path, path, hops + 1);
	r->hops = (uint8_t)hops;
	r->method = method;
	r->attr = attr;
	r->mod = mod;
	if (data)
		memcpy(r->data, data, sizeof(r->data));
	r->cb = cb;
	r->arg = arg;
	r->arg2 = arg2;
	enqueue(sm, r);
	return 0;
}

int sm_smp_lid(struct sm *sm, uint16_t dlid, uint8_t method, uint16_t attr,
	       uint32_t mod, sm_smp_cb cb, void *arg, uint64_t arg2)
{
	uint8_t path[1] = {0};
	int ret;

	if (sm->trap_agent < 0)
		return -EOPNOTSUPP;
	ret = sm_smp(sm, path, 0, method, attr, mod, NULL, cb, arg, arg2);
	if (!ret)
		sm->queue_tail->dlid = dlid;
	return ret;
}

int sm_gmp(struct sm *sm, int agent, uint16_t dlid, const uint8_t *mad,
	   sm_gmp_cb cb, void *arg, uint64_t arg2)
{
	struct sm_req *r;

	if (sm->port_gone)
		return -ENODEV;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->gmp = malloc(IBEMU_MAD_LEN);
	if (!r->gmp) {
		free(r);
		return -ENOMEM;
	}
	memcpy(r->gmp, mad, IBEMU_MAD_LEN);
	r->gmp_agent = agent;
	r->gmp_cb = cb;
	r->dlid = dlid;
	r->arg = arg;
	r->arg2 = arg2;
	enqueue(sm, r);
	return 0;
}

/* Sends GMP 'r' to QP1 of r->dlid (IBA 13.5.1: Q_Key 0x80010000). */
static int send_gmp(struct sm *sm, struct sm_req *r)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *um = (struct ib_user_mad *)(void *)buf;
	uint8_t *mad = umad_get_mad(um);

	memset(buf, 0, sizeof(buf));
	memcpy(mad, r->gmp, IBEMU_MAD_LEN);
	ibemu_mad_set_tid(mad, r->tid);
	umad_set_addr(um, r->dlid, 1, 0, QP1_QKEY);
	if (umad_send(sm->fd, r->gmp_agent, um, IBEMU_MAD_LEN,
		      (int)sm->timeout_ms, (int)sm->retries) < 0) {
		sm->port_gone = 1;
		return -EIO;
	}
	return 0;
}

/*
 * Sends request 'r': directed route (IBA 14.2.2: DrSLID and DrDLID
 * permissive), or LID-routed to r->dlid through the class 0x01 agent.
 */
static int send_one(struct sm *sm, struct sm_req *r)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *um = (struct ib_user_mad *)(void *)buf;
	struct ibemu_mad_smp smp;

	if (r->gmp)
		return send_gmp(sm, r);
	memset(buf, 0, sizeof(buf));
	memset(&smp, 0, sizeof(smp));
	smp.hdr.base_version = 1;
	smp.hdr.mgmt_class = r->dlid ? SMP_CLASS_LID : SMP_CLASS_DR;
	smp.hdr.class_version = IBEMU_MAD_SMP_CLASS_VERSION;
	smp.hdr.method = r->method;
	smp.hdr.tid = r->tid;
	smp.hdr.attr_id = r->attr;
	smp.hdr.attr_mod = r->mod;
	memcpy(smp.data, r->data, sizeof(smp.data));
	if (!r->dlid) {
		smp.hop_cnt = r->hops;
		smp.dr_slid = 0xffff;
		smp.dr_dlid = 0xffff;
		memcpy(smp.initial_path, r->path, (size_t)r->hops + 1);
	}
	if (ibemu_mad_smp_encode(&smp, umad_get_mad(um), IBEMU_MAD_LEN) < 0)
		return -EINVAL;
	umad_set_addr(um, r->dlid ? r->dlid : 0xffff, 0, 0, 0);
	if (umad_send(sm->fd, r->dlid ? sm->trap_agent : sm->agent, um,
		      IBEMU_MAD_LEN, (int)sm->timeout_ms,
		      (int)sm->retries) < 0) {
		sm->port_gone = 1;
		return -EIO;
	}
	sm->sent++;
	return 0;
}

/* Fills the window from the queue. */
static int send_queued(struct sm *sm)
{
	struct sm_req *r;
	int ret;

	while (sm->ninflight < sm->window && (r = sm->queue_head)) {
		sm->queue_head = r->next;
		if (!sm->queue_head)
			sm->queue_tail = NULL;
		r->next = NULL;
		r->tid = sm->next_tid++;
		ret = send_one(sm, r);
		if (ret) {
			req_fail(sm, r, ret);
			req_free(r);
			continue;
		}
		sm->inflight[sm->ninflight++] = r;
	}
	return 0;
}

/* The request in flight with TID 'tid' (taken off the window), or NULL. */
static struct sm_req *take(struct sm *sm, uint64_t tid)
{
	struct sm_req *r;
	unsigned i;

	for (i = 0; i < sm->ninflight; i++) {
		if (sm->inflight[i]->tid != tid)
			continue;
		r = sm->inflight[i];
		sm->inflight[i] = sm->inflight[--sm->ninflight];
		return r;
	}
	return NULL;
}

/*
 * IBA 14.2.5.1: the SM answers a Trap with a TrapRepress of the same TID
 * and Notice, back to where it came from, so the SMA stops repeating it.
 */
static void trap_repress(struct sm *sm, struct ib_user_mad *um,
			 struct ibemu_mad_smp *smp)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *out = (struct ib_user_mad *)(void *)buf;
	struct ibemu_mad_notice n;

	sm->traps++;
	/* Trap 144 (IBA 14.2.5.1, a port's CapabilityMask or local
	 * changes): OpenSM sends it to the master when it enters standby,
	 * and again at its polls while the master ranks below it. */
	if (smp->hdr.attr_id == IBEMU_SMP_ATTR_NOTICE &&
	    ibemu_mad_notice_decode(smp->data, sizeof(smp->data), &n) >= 0 &&
	    n.is_generic && n.trap_number == 144)
		sm->trap144 = 1;
	memset(buf, 0, sizeof(buf));
	smp->hdr.method = IBEMU_MAD_METHOD_TRAP_REPRESS;
	if (ibemu_mad_smp_encode(smp, umad_get_mad(out), IBEMU_MAD_LEN) < 0)
		return;
	umad_set_addr(out, be16toh(um->addr.lid), 0, um->addr.sl, 0);
	umad_send(sm->fd, sm->trap_agent, out, IBEMU_MAD_LEN, 0, 0);
}

/*
 * Answers a Get or Set(SMInfo) with MAD status 'status', LID-routed or
 * directed: the SM's port GUID, SM_Key, its activity count (one a
 * sweep), priority and state (IBA 14.4.1). A directed answer goes back the way the request came (D set,
 * the return path the switches wrote: IBA 14.2.2.4).
 */
static void sm_info_answer(struct sm *sm, struct ib_user_mad *um,
			   struct ibemu_mad_smp *smp, int dr, uint16_t status)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *out = (struct ib_user_mad *)(void *)buf;
	struct ibemu_mad_sm_info info = {
		.guid = sm->nnodes ? sm->nodes[0].ni.port_guid : 0,
		.act_count = (uint32_t)(sm->heavy_sweeps + sm->light_sweeps),
		.priority = (uint8_t)sm->priority,
		/* IBA 14.4.1: discovering until its first sweep decides. */
		.sm_state = sm->standby	      ? SM_STATE_STANDBY
			    : sm->discovering ? SM_STATE_DISCOVERING
					      : SM_STATE_MASTER,
		/* OpenSM ignores an SM whose SMInfo carries another SM_Key
		 * than its own (ERR 2F18): both keep the default one. M_Key
		 * and SM_Key protection are not modelled. */
		.sm_key = SM_KEY,
	};

	memset(buf, 0, sizeof(buf));
	smp->hdr.method = IBEMU_MAD_METHOD_GET_RESP;
	smp->hdr.status = status;
	memset(smp->data, 0, sizeof(smp->data));
	if (smp->hdr.attr_id != IBEMU_SMP_ATTR_SM_INFO ||
	    ibemu_mad_sm_info_encode(&info, smp->data, sizeof(smp->data)) < 0)
		smp->hdr.status = IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP;
	smp->d = (uint8_t)dr;
	if (ibemu_mad_smp_encode(smp, umad_get_mad(out), IBEMU_MAD_LEN) < 0)
		return;
	if (dr) {
		umad_set_addr(out, 0xffff, 0, 0, 0); /* permissive */
		umad_send(sm->fd, sm->agent, out, IBEMU_MAD_LEN, 0, 0);
		return;
	}
	umad_set_addr(out, be16toh(um->addr.lid), 0, um->addr.sl, 0);
	umad_send(sm->fd, sm->trap_agent, out, IBEMU_MAD_LEN, 0, 0);
}

/* Big-endian 'v' of 'bytes' bytes at 'p'. */
static void put_be(uint8_t *p, uint32_t v, unsigned bytes)
{
	while (bytes--) {
		p[bytes] = (uint8_t)v;
		v >>= 8;
	}
}

int sm_trap144(struct sm *sm, uint16_t dlid, uint16_t lid, uint32_t cap_mask)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *um = (struct ib_user_mad *)(void *)buf;
	struct ibemu_mad_notice n = {
		.is_generic = 1,
		.type = IBEMU_MAD_NOTICE_INFO,
		.producer_type = 1, /* a CA */
		.trap_number = 144,
		.issuer_lid = lid,
	};
	struct ibemu_mad_smp smp;

	if (sm->trap_agent < 0)
		return -EOPNOTSUPP;
	/* DataDetails of trap 144 (IBA 14.2.5.1): the LID, no other local
	 * changes, the CapabilityMask, and "SM priority changed". */
	put_be(n.data_details + 2, lid, 2);
	put_be(n.data_details + 6, cap_mask, 4);
	put_be(n.data_details + 10, TRAP144_SM_PRIORITY, 2);
	memset(buf, 0, sizeof(buf));
	memset(&smp, 0, sizeof(smp));
	smp.hdr.base_version = 1;
	smp.hdr.mgmt_class = SMP_CLASS_LID;
	smp.hdr.class_version = IBEMU_MAD_SMP_CLASS_VERSION;
	smp.hdr.method = IBEMU_MAD_METHOD_TRAP;
	smp.hdr.tid = sm->next_tid++;
	smp.hdr.attr_id = IBEMU_SMP_ATTR_NOTICE;
	if (ibemu_mad_notice_encode(&n, smp.data, sizeof(smp.data)) < 0 ||
	    ibemu_mad_smp_encode(&smp, umad_get_mad(um), IBEMU_MAD_LEN) < 0)
		return -EINVAL;
	umad_set_addr(um, dlid, 0, 0, 0);
	/* Sent once, no TrapRepress awaited: the standby sends it again at
	 * its next poll while the master still ranks below it. */
	if (umad_send(sm->fd, sm->trap_agent, um, IBEMU_MAD_LEN, 0, 0) < 0)
		return -EIO;
	return 0;
}

/*
 * A Set(SMInfo) (IBA 14.4.1): HANDOVER from a master (its SMInfo says
 * master) to this standby, which answers and takes over; ACKNOWLEDGE from
 * a standby (its SMInfo says standby), answered. Anything else, or a
 * HANDOVER to a master, is refused with status 7 (invalid field), as
 * OpenSM refuses what its state machine does not allow.
 */
static void sm_info_set(struct sm *sm, struct ib_user_mad *um,
			struct ibemu_mad_smp *smp, int dr)
{
	struct ibemu_mad_sm_info from;
	int ok = 0;

	if (smp->hdr.attr_id == IBEMU_SMP_ATTR_SM_INFO &&
	    ibemu_mad_sm_info_decode(smp->data, sizeof(smp->data), &from) >=
		    0) {
		if (smp->hdr.attr_mod == SM_MOD_HANDOVER)
			ok = sm->standby && from.sm_state == SM_STATE_MASTER;
		else if (smp->hdr.attr_mod == SM_MOD_ACKNOWLEDGE)
			ok = from.sm_state == SM_STATE_STANDBY;
	}
	sm_info_answer(sm, um, smp, dr,
		       ok ? 0 : IBEMU_MAD_STATUS_INVALID_FIELD);
	/* As OpenSM: master from now on (its SMInfo says so to whoever
	 * polls it), and a heavy sweep as master next (main.c). */
	if (ok && smp->hdr.attr_mod == SM_MOD_HANDOVER) {
		sm->standby = 0;
		sm->handover_in = 1;
	}
}

/*
 * An SA request longer than a MAD (RMPP, reassembled by the stack): read
 * whole into a buffer of its length, and answered.
 */
static void recv_long(struct sm *sm, int len)
{
	struct ib_user_mad *um = malloc(sizeof(*um) + (size_t)len);
	int agent;

	if (!um)
		return;
	agent = umad_recv(sm->fd, um, &len, 0);
	if (agent == sm->sa_agent && agent >= 0 && !umad_status(um))
		sm_sa_recv(sm, um, umad_get_mad(um), (size_t)len);
	else if (agent < 0)
		sm->sa_dropped++;
	free(um);
}

/* The answer to one of our GMPs, or its timeout. */
static void recv_gmp(struct sm *sm, struct ib_user_mad *um)
{
	const uint8_t *mad = umad_get_mad(um);
	struct sm_req *r;
	int st;

	/* The kernel keeps the upper 32 TID bits for the agent. */
	r = take(sm, ibemu_mad_get_tid(mad) & 0xffffffffu);
	if (!r || !r->gmp)
		return; /* late, after its timeout */
	/* Counted by their owner: the SMP counts stay SMPs'. */
	st = umad_status(um);
	if (st)
		r->gmp_cb(sm, st == ETIMEDOUT ? -ETIMEDOUT : -EIO, NULL, r->arg,
			  r->arg2);
	else
		r->gmp_cb(sm, 0, mad, r->arg, r->arg2);
	req_free(r);
}

/* Receives one MAD ('timeout_ms' -1: block); 1 if it was a Trap. */
static int recv_one(struct sm *sm, int timeout_ms)
{
	uint8_t buf[sizeof(struct ib_user_mad) + IBEMU_MAD_LEN];
	struct ib_user_mad *um = (struct ib_user_mad *)(void *)buf;
	struct ibemu_mad_smp smp;
	int len = IBEMU_MAD_LEN, st, agent;
	struct sm_req *r;

	agent = umad_recv(sm->fd, um, &len, timeout_ms);
	if (agent == -ENOSPC) {
		recv_long(sm, len);
		return 0;
	}
	if (agent < 0) {
		/* Anything but a timeout or a signal (-EIO with EINTR, as
		 * rdma-core's poll() says it): the port (the fabric) is
		 * gone. */
		if (agent != -ETIMEDOUT && agent != -EINTR && errno != EINTR)
			sm->port_gone = 1;
		return 0;
	}
	if (agent == sm->sa_agent) {
		/* A request to the SA; its own answers return nothing. */
		if (!umad_status(um))
			sm_sa_recv(sm, um, umad_get_mad(um), (size_t)len);
		return 0;
	}
	if (agent == sm->cc_agent) {
		recv_gmp(sm, um);
		return 0;
	}
	if (ibemu_mad_smp_decode(umad_get_mad(um), IBEMU_MAD_LEN, &smp) < 0)
		return 0;
	/* A Trap or a Get for the SM; not an answer to, or a timed-out
	 * return of, one of its own requests (those come with a status). */
	if (agent == sm->trap_agent && !(smp.hdr.method & 0x80) &&
	    !umad_status(um)) {
		if (smp.hdr.method == IBEMU_MAD_METHOD_TRAP) {
			trap_repress(sm, um, &smp);
			return 1;
		}
		if (smp.hdr.method == IBEMU_MAD_METHOD_GET)
			sm_info_answer(sm, um, &smp, 0, 0);
		else if (smp.hdr.method == IBEMU_MAD_METHOD_SET)
			sm_info_set(sm, um, &smp, 0);
		return 0;
	}
	if (agent == sm->agent && !umad_status(um) && !smp.d &&
	    (smp.hdr.method == IBEMU_MAD_METHOD_GET ||
	     smp.hdr.method == IBEMU_MAD_METHOD_SET)) {
		if (smp.hdr.method == IBEMU_MAD_METHOD_GET)
			sm_info_answer(sm, um, &smp, 1, 0);
		else if (smp.hdr.method == IBEMU_MAD_METHOD_SET)
			sm_info_set(sm, um, &smp, 1);
		return 0;
	}
	/* The kernel keeps the upper 32 TID bits for the agent. */
	r = take(sm, smp.hdr.tid & 0xffffffffu);
	if (!r)
		return 0; /* late, after its timeout */
	st = umad_status(um);
	if (st) {
		sm->timeouts++;
		if (sm->verbose)
			printf("SMP %s attr 0x%04x mod %u, %u hops (last "
			       "port %u): %s\n",
			       r->method == IBEMU_MAD_METHOD_SET ? "Set"
								 : "Get",
			       r->attr, r->mod, r->hops, r->path[r->hops],
			       st == ETIMEDOUT ? "timed out" : "failed");
		r->cb(sm, st == ETIMEDOUT ? -ETIMEDOUT : -EIO, NULL, r->arg,
		      r->arg2);
	} else {
		sm->answered++;
		r->cb(sm, 0, &smp, r->arg, r->arg2);
	}
	req_free(r);
	return 0;
}

int sm_smp_run(struct sm *sm)
{
	for (;;) {
		if (sm->port_gone)
			return -ENODEV;
		send_queued(sm);
		if (!sm->ninflight)
			return 0;
		/* A Trap meanwhile: the sweep under way sees its change. */
		recv_one(sm, -1);
	}
}

/* ibemu's libibumad has them (IBEMU_1.0); NULL with any other. */
uint64_t ibemu_umad_now_ps(void) __attribute__((weak));
void ibemu_umad_compute_ps(uint64_t ps) __attribute__((weak));
int ibemu_umad_idle(int fd) __attribute__((weak));

void sm_idle(struct sm *sm)
{
	if (ibemu_umad_idle)
		ibemu_umad_idle(sm->fd);
}

void sm_compute_ps(uint64_t ps)
{
	if (ibemu_umad_compute_ps)
		ibemu_umad_compute_ps(ps);
}

uint64_t sm_clock_ps(void)
{
	return ibemu_umad_now_ps ? ibemu_umad_now_ps() : UINT64_MAX;
}

uint64_t sm_clock_ms(void)
{
	struct timespec t;

	if (ibemu_umad_now_ps)
		return ibemu_umad_now_ps() / 1000000000ull;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int sm_trap_wait(struct sm *sm, unsigned ms)
{
	int ret = recv_one(sm, (int)ms);

	/* SMPs an SA request called for (MFT blocks of a join). */
	if (sm->queue_head && !sm->port_gone)
		sm_smp_run(sm);
	return ret;
}
