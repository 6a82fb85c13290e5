// SPDX-License-Identifier: MIT
/*
 * rdmacm-client DST [TIMEOUT_MS]: librdmacm's address and route resolution
 * as a program uses them, on an event channel made O_NONBLOCK and polled:
 * resolves DST (an address, a host name, or ib:GID for AF_IB), its route, creates a QP
 * and moves it to RTR with rdma_init_qp_attr's attributes, and tries to
 * connect. Prints key=value results for integration.rdmacm, and FAIL:
 * lines for what it checked and found wrong.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

uint64_t ibemu_now_ps(void) __attribute__((weak));

static int failures;

#define CHECK(cond, ...)                              \
	do {                                          \
		if (!(cond)) {                        \
			printf("FAIL: " __VA_ARGS__); \
			printf("\n");                 \
			failures++;                   \
		}                                     \
	} while (0)

static int readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Takes the next event, which must be waiting already (the channel is
 * non-blocking); prints it; returns its type and status. */
static int next_event(struct rdma_event_channel *ch, const char *what,
		      int *status)
{
	struct rdma_cm_event *ev;
	int type;

	CHECK(readable(ch->fd), "%s: channel fd not readable", what);
	if (rdma_get_cm_event(ch, &ev)) {
		printf("FAIL: %s: rdma_get_cm_event: %s\n", what,
		       strerror(errno));
		failures++;
		return -1;
	}
	type = ev->event;
	*status = ev->status;
	printf("%s=%s status=%d\n", what, rdma_event_str(ev->event),
	       ev->status);
	rdma_ack_cm_event(ev);
	CHECK(!readable(ch->fd), "%s: fd readable with no event left", what);
	return type;
}

static void print_addr(const char *key, struct sockaddr *sa)
{
	char buf[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, buf,
			  sizeof(buf));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr,
			  buf, sizeof(buf));
	printf("%s=%s\n", key, buf);
}

/* "ib:GID": an AF_IB address (the port's GID), as rdma_cm takes it. */
static struct sockaddr_ib ib_dst;

static struct sockaddr *dst_of(const char *dst, struct rdma_addrinfo **ai)
{
	struct rdma_addrinfo hints;
	int ret;

	if (!strncmp(dst, "ib:", 3)) {
		ib_dst.sib_family = AF_IB;
		ib_dst.sib_pkey = htons(0xffff);
		ib_dst.sib_sid = htobe64((uint64_t)RDMA_PS_TCP << 16 | 7471);
		ib_dst.sib_sid_mask = htobe64(~0ull);
		if (inet_pton(AF_INET6, dst + 3, &ib_dst.sib_addr) != 1)
			return NULL;
		return (struct sockaddr *)&ib_dst;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	ret = rdma_getaddrinfo(dst, "7471", &hints, ai);
	if (ret) {
		printf("getaddrinfo=%d\n", ret);
		return NULL;
	}
	print_addr("getaddrinfo", (*ai)->ai_dst_addr);
	return (*ai)->ai_dst_addr;
}

/* The QP an id makes is in INIT; RTR with rdma_init_qp_attr takes the
 * path record's SL and MTU. */
static void check_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr init, got_init;
	struct ibv_qp_attr attr, got;
	int mask;

	memset(&init, 0, sizeof(init));
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, NULL, &init)) {
		printf("FAIL: rdma_create_qp: %s\n", strerror(errno));
		failures++;
		return;
	}
	CHECK(!ibv_query_qp(id->qp, &got, IBV_QP_STATE, &got_init) &&
		      got.qp_state == IBV_QPS_INIT,
	      "new QP not in INIT");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	CHECK(!rdma_init_qp_attr(id, &attr, &mask), "rdma_init_qp_attr");
	attr.dest_qp_num = id->qp->qp_num;
	mask |= IBV_QP_DEST_QPN;
	CHECK(!ibv_modify_qp(id->qp, &attr, mask), "modify to RTR: %s",
	      strerror(errno));
	memset(&got, 0, sizeof(got));
	CHECK(!ibv_query_qp(id->qp, &got, IBV_QP_STATE | IBV_QP_AV, &got_init),
	      "query QP");
	printf("qp_state=%d qp_sl=%u qp_dlid=%u qp_mtu=%d\n", got.qp_state,
	       got.ah_attr.sl, got.ah_attr.dlid, got.path_mtu);
	rdma_destroy_qp(id);
}

static void print_path(struct rdma_cm_id *id)
{
	struct ibv_sa_path_rec *p = id->route.path_rec;

	printf("num_paths=%d\n", id->route.num_paths);
	if (!p)
		return;
	printf("dlid=%u slid=%u sl=%u mtu=%u rate=%u plt=%u pkey=0x%04x "
	       "reversible=%d numb_path=%u\n",
	       ntohs(p->dlid), ntohs(p->slid), p->sl, p->mtu, p->rate,
	       p->packet_life_time, ntohs(p->pkey), p->reversible,
	       p->numb_path);
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch, *ch2;
	struct rdma_addrinfo *ai = NULL;
	struct ibv_context **devs;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr *dst;
	uint64_t t0 = 0;
	int n = 0, status = 0, type, tmo = argc > 2 ? atoi(argv[2]) : 2000;

	if (argc < 2) {
		fprintf(stderr, "usage: rdmacm-client DST [TIMEOUT_MS]\n");
		return 2;
	}
	devs = rdma_get_devices(&n);
	printf("devices=%d name=%s\n", n,
	       devs && n ? ibv_get_device_name(devs[0]->device) : "-");
	rdma_free_devices(devs);
	ch = rdma_create_event_channel();
	if (!ch) {
		printf("FAIL: rdma_create_event_channel: %s\n",
		       strerror(errno));
		return 1;
	}
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	CHECK(!readable(ch->fd), "fresh channel readable");
	CHECK(rdma_get_cm_event(ch, &ev) && errno == EAGAIN,
	      "empty non-blocking channel: not EAGAIN");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		printf("FAIL: rdma_create_id: %s\n", strerror(errno));
		return 1;
	}
	dst = dst_of(argv[1], &ai);
	if (!dst)
		goto out;
	if (rdma_resolve_addr(id, NULL, dst, tmo)) {
		printf("FAIL: rdma_resolve_addr: %s\n", strerror(errno));
		failures++;
		goto out;
	}
	type = next_event(ch, "addr_event", &status);
	if (type != RDMA_CM_EVENT_ADDR_RESOLVED)
		goto out;
	print_addr("src", rdma_get_local_addr(id));
	print_addr("dst", rdma_get_peer_addr(id));
	printf("src_port=%u dst_port=%u port_num=%u\n",
	       ntohs(rdma_get_src_port(id)), ntohs(rdma_get_dst_port(id)),
	       id->port_num);
	/* The route's events arrive on the channel the id migrated to. */
	ch2 = rdma_create_event_channel();
	fcntl(ch2->fd, F_SETFL, fcntl(ch2->fd, F_GETFL) | O_NONBLOCK);
	CHECK(!rdma_migrate_id(id, ch2), "rdma_migrate_id");
	if (ibemu_now_ps)
		t0 = ibemu_now_ps();
	if (rdma_resolve_route(id, tmo)) {
		printf("FAIL: rdma_resolve_route: %s\n", strerror(errno));
		failures++;
		goto out2;
	}
	if (ibemu_now_ps)
		printf("route_vt_ps=%" PRIu64 "\n", ibemu_now_ps() - t0);
	CHECK(!readable(ch->fd), "old channel got the migrated id's event");
	type = next_event(ch2, "route_event", &status);
	if (type == RDMA_CM_EVENT_ROUTE_RESOLVED) {
		print_path(id);
		check_qp(id);
	}
	if (rdma_connect(id, NULL))
		printf("connect_errno=%d\n", errno);
out2:
	rdma_destroy_id(id);
	id = NULL;
	rdma_destroy_event_channel(ch2);
out:
	if (id)
		rdma_destroy_id(id);
	rdma_freeaddrinfo(ai);
	rdma_destroy_event_channel(ch);
	printf("failures=%d\n", failures);
	return failures != 0;
}
