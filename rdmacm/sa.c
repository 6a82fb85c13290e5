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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/*
 * The ports the process queried through, each opened once with its SA
 * agent and kept (opening a umad port per query cost about 47 ms of wall
 * time each on a loaded host: bench/rdmacm.py). Between queries a port
 * is idle under the time rule (ibemu_umad_idle: it waits for no MAD), so
 * an open port never holds virtual time back. One query at a time: an
 * answer is then always for the query under way.
 */
#define SA_PORTS_MAX 8

struct sa_port {
	char dev[IBV_SYSFS_NAME_MAX];
	uint8_t port;
	int fd, agent;
};

static struct {
	pthread_mutex_t lock;
	pid_t pid; /* a child's ports are its own: it opens anew */
	unsigned n;
	struct sa_port ports[SA_PORTS_MAX];
} sa = {.lock = PTHREAD_MUTEX_INITIALIZER};

int ibemu_umad_idle(int fd) __attribute__((weak));

/* Opens 'p' (dev and port set): 0, or -EIO. */
static int sa_port_open(struct sa_port *p)
{
	if (umad_init() < 0)
		return -EIO;
	p->fd = umad_open_port(p->dev, p->port);
	if (p->fd < 0)
		return -EIO;
	p->agent = umad_register(p->fd, IBEMU_MAD_CLASS_SA, SA_CLASS_VERSION, 0,
				 NULL);
	if (p->agent < 0) {
		umad_close_port(p->fd);
		return -EIO;
	}
	return 0;
}

static void sa_port_close(struct sa_port *p)
{
	umad_unregister(p->fd, p->agent);
	umad_close_port(p->fd);
}

/* The kept port for device 'dev' port 'port', opened if new (sa.lock
 * held): its slot, or NULL (then 'tmp' is open, to close after use). */
static struct sa_port *sa_port_get(const char *dev, uint8_t port,
				   struct sa_port *tmp, int *err)
{
	struct sa_port *p;
	unsigned i;

	if (sa.pid != getpid()) {
		sa.pid = getpid();
		sa.n = 0;
	}
	for (i = 0; i < sa.n; i++)
		if (sa.ports[i].port == port && !strcmp(sa.ports[i].dev, dev))
			return &sa.ports[i];
	p = sa.n < SA_PORTS_MAX ? &sa.ports[sa.n] : tmp;
	memset(p, 0, sizeof(*p));
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	p->port = port;
	*err = sa_port_open(p);
	if (*err)
		return NULL;
	if (p == tmp)
		return NULL;
	sa.n++;
	return p;
}

/* Forgets kept port 'p' (sa.lock held), closing it. */
static void sa_port_drop(struct sa_port *p)
{
	sa_port_close(p);
	*p = sa.ports[--sa.n];
}

int rdmacm__sa_call(const struct rdma_cm_id *id, uint8_t *mad, int timeout_ms,
		    int retries)
{
	struct ibv_port_attr pa;
	struct sa_port tmp, *p;
	int ret = 0;

	if (ibv_query_port(id->verbs, id->port_num, &pa))
		return -EIO;
	if (pa.state != IBV_PORT_ACTIVE || !pa.sm_lid)
		return -ENETUNREACH;
	pthread_mutex_lock(&sa.lock);
	p = sa_port_get(ibv_get_device_name(id->verbs->device), id->port_num,
			&tmp, &ret);
	if (!p && !ret) {
		/* More ports than kept: this one for this query only. */
		ret = exchange(tmp.fd, tmp.agent, &pa, mad, timeout_ms,
			       retries);
		sa_port_close(&tmp);
	} else if (p) {
		ret = exchange(p->fd, p->agent, &pa, mad, timeout_ms, retries);
		if (ret == -EIO)
			sa_port_drop(p); /* its stream failed */
		else if (ibemu_umad_idle)
			ibemu_umad_idle(p->fd);
	}
	pthread_mutex_unlock(&sa.lock);
	return ret;
}
