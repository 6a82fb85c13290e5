// SPDX-License-Identifier: MIT
/*
 * The process's SA client, as the kernel's ib_sa serves rdma_cm (route.c's
 * PathRecord query, mcast.c's MCMemberRecord joins and leaves): one
 * SubnAdm request from the id's port to the SM LID and SL its PortInfo
 * names, sent as a GMP on QP1 through libibumad (ibemu's, under 'ibemu
 * exec'), so it crosses the fabric in virtual time and shows in the
 * counters as any SA client's, and its answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/umad.h>

#include "mad_hdr.h"
#include "rdmacm_int.h"

#define SA_CLASS_VERSION 2
#define SA_QKEY		 0x80010000

/*
 * The clocks of docs/design.md §3, ibemu's own API (weak: absent from
 * rdma-core's libraries): the port's umad clock stamps the request and
 * moves to its answer's arrival; the process's verbs clock is then moved
 * on by that round trip, the time the program spent waiting for the SA.
 */
uint64_t ibemu_umad_now_ps(void) __attribute__((weak));
void ibemu_compute_ps(uint64_t ps) __attribute__((weak));

static uint64_t umad_now(void)
{
	return ibemu_umad_now_ps ? ibemu_umad_now_ps() : 0;
}

static uint32_t next_tid = 1;

/* Sends 'mad' on the open port and waits for the answer with its TID. */
static int exchange(int fd, int agent, const struct ibv_port_attr *pa,
		    uint8_t *mad, int timeout_ms, int retries)
{
	size_t size = umad_size() + IBEMU_MAD_LEN;
	uint8_t *umad = calloc(1, size), *m;
	/* Low 32 bits ours; the daemon puts the agent in the high ones. */
	uint32_t tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
	uint64_t t0;
	int len, ret;

	if (!umad)
		return -ENOMEM;
	m = umad_get_mad(umad);
	ibemu_mad_set_tid(mad, tid);
	memcpy(m, mad, IBEMU_MAD_LEN);
	umad_set_addr(umad, pa->sm_lid, 1, pa->sm_sl, SA_QKEY);
	t0 = umad_now();
	ret = umad_send(fd, agent, umad, IBEMU_MAD_LEN, timeout_ms, retries);
	while (ret >= 0) {
		len = IBEMU_MAD_LEN;
		ret = umad_recv(fd, umad, &len, -1);
		if (ret < 0)
			break;
		if (umad_status(umad)) {
			ret = -ETIMEDOUT;
			break;
		}
		if ((uint32_t)ibemu_mad_get_tid(m) == tid) {
			memcpy(mad, m, IBEMU_MAD_LEN);
			ret = 0;
			break;
		}
	}
	/* An answer, or the timeout, came that much later. */
	if (ibemu_compute_ps && t0 && umad_now() > t0)
		ibemu_compute_ps(umad_now() - t0);
	free(umad);
	return ret < 0 && ret != -ETIMEDOUT ? -EIO : ret;
}

int rdmacm__sa_call(const struct rdma_cm_id *id, uint8_t *mad, int timeout_ms,
		    int retries)
{
	struct ibv_port_attr pa;
	int fd, agent, ret;

	if (ibv_query_port(id->verbs, id->port_num, &pa))
		return -EIO;
	if (pa.state != IBV_PORT_ACTIVE || !pa.sm_lid)
		return -ENETUNREACH;
	if (umad_init() < 0)
		return -EIO;
	fd = umad_open_port(ibv_get_device_name(id->verbs->device),
			    id->port_num);
	if (fd < 0)
		return -EIO;
	agent = umad_register(fd, IBEMU_MAD_CLASS_SA, SA_CLASS_VERSION, 0,
			      NULL);
	ret = agent < 0 ? -EIO
			: exchange(fd, agent, &pa, mad, timeout_ms, retries);
	if (agent >= 0)
		umad_unregister(fd, agent);
	umad_close_port(fd);
	return ret;
}
