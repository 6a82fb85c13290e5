// SPDX-License-Identifier: MIT
/*
 * rdmacm-cm: the CM protocol as a program sees it, for integration.rdmacm_cm.
 *
 *   rdmacm-cm server IP PORT accept|reject|never|hold
 *   rdmacm-cm client IP PORT [wait]
 *
 * The server listens on IP:PORT (RDMA_PS_TCP) and prints "listening";
 * for each CONNECT_REQUEST it prints the client's private data, then
 * accepts (with private data "srv-hello"), rejects ("go away"), never
 * answers, or accepts and holds the connection until it is killed. The
 * client resolves IP, its route, makes a QP, connects with private data
 * "cli-hello" and prints its event, status, private data and the virtual
 * time from rdma_connect to the event (ibemu_now_ps); once established it
 * disconnects, or ("wait") waits for the peer's end. The server ends on
 * DEVICE_REMOVAL (the fabric went down). Output: key=value lines,
 * flushed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

uint64_t ibemu_now_ps(void) __attribute__((weak));

static uint64_t now_ps(void)
{
	return ibemu_now_ps ? ibemu_now_ps() : 0;
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct rdma_cm_event *next(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	return ev;
}

static void print_event(const char *who, const struct rdma_cm_event *ev)
{
	char pd[64] = "";
	size_t n = ev->param.conn.private_data_len;

	if (ev->param.conn.private_data && n) {
		memcpy(pd, ev->param.conn.private_data,
		       n < sizeof(pd) - 1 ? n : sizeof(pd) - 1);
		pd[sizeof(pd) - 1] = '\0';
	}
	printf("%s_event=%s status=%d pd=%s pd_len=%zu\n", who,
	       rdma_event_str(ev->event), ev->status, pd[0] ? pd : "-", n);
	fflush(stdout);
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, NULL, &a))
		die("rdma_create_qp");
}

static void fill_param(struct rdma_conn_param *p, const char *pd)
{
	memset(p, 0, sizeof(*p));
	p->private_data = pd;
	p->private_data_len = (uint8_t)(strlen(pd) + 1);
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static struct sockaddr_in addr_of(const char *ip, const char *port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		printf("FAIL: bad address %s\n", ip);
		exit(2);
	}
	return sin;
}

static int server(struct rdma_event_channel *ch, struct sockaddr_in *sin,
		  const char *mode)
{
	struct rdma_conn_param p;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *l, *id;

	if (rdma_create_id(ch, &l, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(l, (struct sockaddr *)sin))
		die("rdma_bind_addr");
	if (rdma_listen(l, 4))
		die("rdma_listen");
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		ev = next(ch);
		print_event("server", ev);
		id = ev->id;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			if (!strcmp(mode, "reject")) {
				if (rdma_reject(id, "go away", 8))
					die("rdma_reject");
				break;
			}
			if (!strcmp(mode, "never"))
				break;
			make_qp(id);
			fill_param(&p, "srv-hello");
			if (rdma_accept(id, &p))
				die("rdma_accept");
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_disconnect(id);
			rdma_ack_cm_event(ev);
			return 0;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			/* The fabric went down: nothing more will come. */
			rdma_ack_cm_event(ev);
			return 0;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
		if (!strcmp(mode, "reject") && id != l)
			return 0;
	}
}

static enum rdma_cm_event_type expect(struct rdma_event_channel *ch,
				      enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next(ch);
	enum rdma_cm_event_type got = ev->event;

	if (got != want) {
		print_event("client", ev);
		exit(3);
	}
	rdma_ack_cm_event(ev);
	return got;
}

static int client(struct rdma_event_channel *ch, struct sockaddr_in *sin,
		  int wait)
{
	struct rdma_conn_param p;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	enum rdma_cm_event_type type;
	uint64_t t0;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)sin, 2000))
		die("rdma_resolve_addr");
	expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	make_qp(id);
	fill_param(&p, "cli-hello");
	t0 = now_ps();
	if (rdma_connect(id, &p))
		die("rdma_connect");
	ev = next(ch);
	printf("connect_vt_ps=%" PRIu64 "\n", now_ps() - t0);
	print_event("client", ev);
	type = ev->event;
	rdma_ack_cm_event(ev);
	if (type != RDMA_CM_EVENT_ESTABLISHED)
		return 0;
	if (!wait) {
		t0 = now_ps();
		if (rdma_disconnect(id))
			die("rdma_disconnect");
	}
	ev = next(ch);
	if (!wait)
		printf("disconnect_vt_ps=%" PRIu64 "\n", now_ps() - t0);
	print_event("client", ev);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in sin;
	int ret;

	if (argc < 4 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client")) ||
	    (!strcmp(argv[1], "server") && argc < 5)) {
		fprintf(stderr, "usage: rdmacm-cm server IP PORT MODE | "
				"client IP PORT [wait]\n");
		return 2;
	}
	sin = addr_of(argv[2], argv[3]);
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	if (!strcmp(argv[1], "server"))
		ret = server(ch, &sin, argv[4]);
	else
		ret = client(ch, &sin, argc > 4 && !strcmp(argv[4], "wait"));
	rdma_destroy_event_channel(ch);
	printf("done\n");
	return ret;
}
