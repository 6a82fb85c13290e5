// SPDX-License-Identifier: MIT
/*
 * A small libibumad program for tests/integration/test_umad.py. It links
 * against the system's libibumad like any real tool, so that under
 * 'ibemu exec' it runs on ibemu's. Each command prints key=value lines
 * that the test reads; the exit status is 0 unless a call failed in a way
 * the command did not expect.
 *
 *   umad-client ca                 CA, ports, device list, port GUIDs, issm
 *   umad-client smp [P1,P2,...]    DR SMP Get(NodeInfo) along a path
 *   umad-client hold SECONDS [P..] open, register, (send a request), wait
 *   umad-client short              a receive into a too short buffer
 *   umad-client rmpp               an RMPP transfer to its own port
 *   umad-client errors             return conventions of failing calls
 *   umad-client strings            umad_str.h names and a device list sort
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/umad_str.h>

#define MAD_LEN	       256
#define CLASS_SMP_DR   0x81
#define ATTR_NODE_INFO 0x0011
#define TIMEOUT_MS     1000

/* SA (IBA 15.2.1.1): MAD, RMPP and SA headers, then the records. */
#define CLASS_SA     0x03
#define SA_VERSION   2
#define SA_HDR_LEN   56
#define SA_GET_TABLE 0x12
#define RMPP_LEN     5096 /* 45 NodeRecords */
#define QP1_QKEY     0x80010000

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int cmd_ca(void)
{
	struct umad_device_node *list, *node;
	char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	__be64 guids[UMAD_CA_MAX_PORTS];
	char issm[256];
	umad_port_t port;
	umad_ca_t ca;
	int i, n, fd;

	if (umad_init() < 0)
		return 1;
	n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
	printf("cas=%d\n", n);
	for (i = 0; i < n; i++)
		printf("ca_name=%s\n", names[i]);
	list = umad_get_ca_device_list();
	for (node = list; node; node = node->next)
		printf("device=%s\n", node->ca_name);
	if (umad_sort_ca_device_list(&list, 0))
		printf("sort=failed\n");
	umad_free_ca_device_list(list);
	if (n <= 0)
		return 0;
	if (umad_get_ca(NULL, &ca) < 0)
		return 1;
	printf("node_type=%u\nnumports=%d\nnode_guid=0x%016" PRIx64 "\n",
	       ca.node_type, ca.numports, be64toh(ca.node_guid));
	printf("system_guid=0x%016" PRIx64 "\nca_type=%s\n",
	       be64toh(ca.system_guid), ca.ca_type);
	printf("port0=%s\n", ca.ports[0] ? "present" : "absent");
	for (i = 1; i <= ca.numports; i++) {
		umad_port_t *p = ca.ports[i];

		printf("port=%d lid=%u state=%u phys_state=%u rate=%u "
		       "sm_lid=%u lmc=%u "
		       "guid=0x%016" PRIx64 " prefix=0x%016" PRIx64
		       " pkeys=%u pkey0=0x%04x "
		       "link_layer=%s\n",
		       p->portnum, p->base_lid, p->state, p->phys_state,
		       p->rate, p->sm_lid, p->lmc, be64toh(p->port_guid),
		       be64toh(p->gid_prefix), p->pkeys_size,
		       p->pkeys_size ? p->pkeys[0] : 0, p->link_layer);
	}
	umad_release_ca(&ca);
	n = umad_get_ca_portguids(NULL, guids, UMAD_CA_MAX_PORTS);
	printf("portguids=%d\n", n);
	for (i = 0; i < n; i++)
		printf("portguid%d=0x%016" PRIx64 "\n", i, be64toh(guids[i]));
	printf("portguids_small=%d\n", umad_get_ca_portguids(NULL, guids, 1));
	printf("ca_ca_name=%s\n", ca.ca_name);
	if (umad_get_port(names[0], 0, &port) == 0) {
		printf("best_port=%d\nport_ca_name=%s\n", port.portnum,
		       port.ca_name);
		umad_release_port(&port);
	}
	printf("get_port_missing=%d\n", umad_get_port(names[0], 9, &port));
	/* NULL, "" and the name CAs had before stand for the one CA. */
	n = umad_get_ca("", &ca);
	printf("get_ca_empty=%d\n", n);
	if (!n)
		umad_release_ca(&ca);
	if (!umad_get_ca("ibemu0", &ca)) {
		printf("get_ca_old=%s\n", ca.ca_name);
		umad_release_ca(&ca);
	}
	printf("get_ca_wrong=%d\n", umad_get_ca("mlx5_0", &ca));
	if (umad_get_issm_path(NULL, 0, issm, sizeof(issm)) == 0) {
		fd = open(issm, O_RDWR);
		printf("issm_open=%s\n", fd >= 0 ? "ok" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	umad_done();
	return 0;
}

/* Parses "1,3" into a DR path; returns the hop count. */
static int parse_path(const char *s, uint8_t *path)
{
	int hops = 0;
	char *end;

	if (!s || !*s || !strcmp(s, "0"))
		return 0;
	while (*s && hops < 63) {
		path[++hops] = (uint8_t)strtoul(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
	return hops;
}

/* A directed-route Get(NodeInfo) (IBA 14.2.1.2), DrSLID = DrDLID = 0xffff. */
static void smp_build(void *umad, const char *path_arg, uint64_t tid)
{
	uint8_t *mad = umad_get_mad(umad);
	int hops;

	memset(mad, 0, MAD_LEN);
	mad[0] = 1; /* BaseVersion */
	mad[1] = CLASS_SMP_DR;
	mad[2] = 1; /* ClassVersion */
	mad[3] = 1; /* Get */
	hops = parse_path(path_arg, mad + 128);
	mad[6] = 0;		/* HopPointer */
	mad[7] = (uint8_t)hops; /* HopCount */
	for (int i = 0; i < 8; i++)
		mad[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
	mad[16] = ATTR_NODE_INFO >> 8;
	mad[17] = ATTR_NODE_INFO & 0xff;
	mad[32] = mad[33] = mad[34] = mad[35] = 0xff;
	umad_set_addr(umad, 0xffff, 0, 0, 0);
}

static int open_and_register(int *fd, int *agent)
{
	if (umad_init() < 0)
		return -1;
	*fd = umad_open_port(NULL, 0);
	if (*fd < 0) {
		printf("open=%d\n", *fd);
		return -1;
	}
	*agent = umad_register(*fd, CLASS_SMP_DR, 1, 0, NULL);
	printf("agent=%d\n", *agent);
	return *agent < 0 ? -1 : 0;
}

static int cmd_smp(const char *path)
{
	void *umad = calloc(1, umad_size() + MAD_LEN);
	uint64_t tid = 0x1234;
	struct pollfd p;
	int fd, agent, len, ret;
	uint8_t *mad;

	if (!umad || open_and_register(&fd, &agent))
		return 1;
	smp_build(umad, path, tid);
	ret = umad_send(fd, agent, umad, MAD_LEN, TIMEOUT_MS, 0);
	printf("send=%d\n", ret);
	/* The fd polls readable when the answer (or the timeout) is there. */
	p.fd = umad_get_fd(fd);
	p.events = POLLIN;
	ret = poll(&p, 1, 10 * TIMEOUT_MS);
	printf("poll=%d\n", ret);
	len = MAD_LEN;
	ret = umad_recv(fd, umad, &len, 0);
	printf("recv=%d len=%d status=%d\n", ret, len, umad_status(umad));
	mad = umad_get_mad(umad);
	printf("method=0x%02x tid_low=0x%08" PRIx64 " mad_status=0x%04x\n",
	       mad[3], get_be64(mad + 8) & 0xffffffff,
	       (mad[4] << 8 | mad[5]) & 0x7fff);
	if (!umad_status(umad) && len >= 128) {
		const uint8_t *ni = mad + 64;

		printf("node_type=%u num_ports=%u node_guid=0x%016" PRIx64
		       " port_guid=0x%016" PRIx64 " local_port=%u\n",
		       ni[2], ni[3], get_be64(ni + 12), get_be64(ni + 20),
		       ni[36]);
	}
	umad_unregister(fd, agent);
	umad_close_port(fd);
	free(umad);
	return 0;
}

/*
 * 'n' SMPs sent at once, their answers read once all are there: the fd
 * polls readable while any answer waits (the library reads in batches),
 * and not once all are read; each answer comes once. With
 * IBEMU_UMAD_DEFER_SENDS=1 the library queues the SENDs until umad_recv.
 */
static int cmd_burst(int n)
{
	void *umad = calloc(1, umad_size() + MAD_LEN);
	int fd, agent, len, ret, i, ok = 0, readable = 0, seen[256] = {0};
	struct pollfd p;
	uint64_t tid;

	if (!umad || n < 1 || n > 256 || open_and_register(&fd, &agent))
		return 1;
	for (i = 0; i < n; i++) {
		smp_build(umad, "0", 0x5000 + (uint64_t)i);
		if (umad_send(fd, agent, umad, MAD_LEN, TIMEOUT_MS, 0))
			return 1;
	}
	p.fd = umad_get_fd(fd);
	p.events = POLLIN;
	for (i = 0; i < n; i++) {
		len = MAD_LEN;
		ret = umad_recv(fd, umad, &len, 10 * TIMEOUT_MS);
		tid = get_be64((uint8_t *)umad_get_mad(umad) + 8) & 0xffffffff;
		if (ret == agent && !umad_status(umad) && tid >= 0x5000 &&
		    tid < 0x5000 + (uint64_t)n && !seen[tid - 0x5000]++)
			ok++;
		/* The rest have had time to come: one waits, or none is
		 * left. */
		if (!i)
			usleep(200000);
		if (poll(&p, 1, 0) == (i < n - 1))
			readable++;
	}
	printf("answers=%d readable_while_waiting=%d poll_after=%d\n", ok,
	       readable, umad_poll(fd, 0));
	umad_unregister(fd, agent);
	umad_close_port(fd);
	free(umad);
	return 0;
}

static int cmd_hold(int seconds, const char *path)
{
	void *umad = calloc(1, umad_size() + MAD_LEN);
	umad_ca_t ca;
	int fd, agent;

	if (!umad || open_and_register(&fd, &agent))
		return 1;
	if (umad_get_ca(NULL, &ca) == 0) {
		printf("node_guid=0x%016" PRIx64 "\n", be64toh(ca.node_guid));
		umad_release_ca(&ca);
	}
	if (path) {
		/* A request that will still be outstanding when we die. */
		smp_build(umad, path, 0x77);
		printf("send=%d\n",
		       umad_send(fd, agent, umad, MAD_LEN, 60000, 5));
	}
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)seconds);
	umad_close_port(fd);
	free(umad);
	return 0;
}

static int cmd_short(void)
{
	void *umad = calloc(1, umad_size() + MAD_LEN);
	int fd, agent, len, ret;

	if (!umad || open_and_register(&fd, &agent))
		return 1;
	smp_build(umad, "0", 0x55);
	umad_send(fd, agent, umad, MAD_LEN, TIMEOUT_MS, 0);
	umad_poll(fd, 10 * TIMEOUT_MS);
	len = 10;
	ret = umad_recv(fd, umad, &len, 0);
	printf("short_recv=%d errno=%d len=%d\n", ret, errno, len);
	len = MAD_LEN;
	ret = umad_recv(fd, umad, &len, 0);
	printf("full_recv=%d len=%d status=%d\n", ret, len, umad_status(umad));
	umad_close_port(fd);
	free(umad);
	return 0;
}

/* An RMPP-active GetTable of RMPP_LEN bytes (IBA 13.6.2.1 header). */
static void sa_build(void *umad, uint16_t lid)
{
	uint8_t *mad = umad_get_mad(umad);
	int i;

	memset(mad, 0, RMPP_LEN);
	mad[0] = 1; /* BaseVersion */
	mad[1] = CLASS_SA;
	mad[2] = SA_VERSION;
	mad[3] = SA_GET_TABLE;
	mad[15] = 0x42; /* TID */
	mad[17] = 0x11; /* NodeRecord */
	mad[24] = 1;	/* RMPPVersion */
	mad[25] = 1;	/* RMPPType: DATA */
	mad[26] = 1;	/* RMPPFlags: Active */
	for (i = SA_HDR_LEN; i < RMPP_LEN; i++)
		mad[i] = (uint8_t)(i * 7);
	umad_set_addr(umad, lid, 1, 0, QP1_QKEY);
}

static int cmd_rmpp(void)
{
	size_t size = umad_size() + RMPP_LEN;
	void *out = calloc(1, size), *in = calloc(1, size);
	long mask[16 / sizeof(long)] = {0};
	int fd, taker, sender, plain, len, ret;
	const uint8_t *a;
	uint8_t *b;
	umad_port_t port;

	if (!out || !in || umad_init() < 0)
		return 1;
	fd = umad_open_port(NULL, 0);
	if (fd < 0 || umad_get_port(NULL, 0, &port))
		return 1;
	mask[0] = 1L << SA_GET_TABLE;
	taker = umad_register(fd, CLASS_SA, SA_VERSION, 1, mask);
	sender = umad_register(fd, CLASS_SA, SA_VERSION, 1, NULL);
	plain = umad_register(fd, CLASS_SA, SA_VERSION, 0, NULL);
	printf("taker=%d sender=%d plain=%d\n", taker, sender, plain);
	/* To its own LID: the transfer comes back to the taker. */
	sa_build(out, (uint16_t)port.base_lid);
	printf("send=%d\n", umad_send(fd, sender, out, RMPP_LEN, 0, 0));
	umad_poll(fd, 10 * TIMEOUT_MS);
	len = MAD_LEN;
	errno = 0;
	ret = umad_recv(fd, in, &len, 0);
	printf("short_recv=%d short_errno=%d need=%d\n", ret, errno, len);
	ret = umad_recv(fd, in, &len, 0);
	a = umad_get_mad(in);
	b = umad_get_mad(out);
	printf("full_recv=%d len=%d status=%d same=%d\n", ret, len,
	       umad_status(in),
	       len == RMPP_LEN && !memcmp(a + 36, b + 36, RMPP_LEN - 36));
	printf("rmpp_flags=0x%02x segment=%u paylen=%u\n", a[26],
	       get_be32(a + 28), get_be32(a + 32));
	/* Longer than a MAD and not RMPP-active, or by an agent without
	 * RMPP: the kernel's ib_create_send_mad() refuses both. */
	errno = 0;
	b[26] = 0;
	ret = umad_send(fd, sender, out, 300, 0, 0);
	printf("send_not_active=%d not_active_errno=%d\n", ret, errno);
	errno = 0;
	b[26] = 1;
	ret = umad_send(fd, plain, out, 300, 0, 0);
	printf("send_no_rmpp=%d no_rmpp_errno=%d\n", ret, errno);
	printf("poll_after=%d\n", umad_poll(fd, 200));
	umad_release_port(&port);
	umad_close_port(fd);
	free(in);
	free(out);
	return 0;
}

/* Everything umad_str.h names, and a sort: compared with rdma-core's. */
static int cmd_strings(void)
{
	static const uint8_t classes[] = {0x01, 0x81, 0x03, 0x04,
					  0x07, 0x21, 0x30};
	static const char *const names[] = {"mlx5_1", "ibemu0", "mlx4_0",
					    "hfi1_0"};
	struct umad_device_node nodes[4], *head = NULL, *n;
	unsigned c, i, v;

	for (c = 0; c < 256; c++)
		printf("class %02x %s\n", c, umad_class_str((uint8_t)c));
	for (i = 0; i < sizeof(classes); i++) {
		for (v = 0; v < 256; v++)
			printf("method %02x %02x %s\n", classes[i], v,
			       umad_method_str(classes[i], (uint8_t)v));
		for (v = 0; v < 0x100; v++)
			printf("attr %02x %04x %s\n", classes[i], v,
			       umad_attribute_str(classes[i],
						  htobe16((uint16_t)v)));
		printf("attr %02x ff90 %s\n", classes[i],
		       umad_attribute_str(classes[i], htobe16(0xff90)));
	}
	for (v = 0; v < 0x10000; v += (v < 0x40 ? 1 : 0x80))
		printf("status %04x %s / %s\n", v,
		       umad_common_mad_status_str(htobe16((uint16_t)v)),
		       umad_sa_mad_status_str(htobe16((uint16_t)v)));
	for (i = 0; i < 4; i++) {
		nodes[i].ca_name = names[i];
		nodes[i].next = head;
		head = &nodes[i];
	}
	printf("sort=%d\n", umad_sort_ca_device_list(&head, 0));
	for (n = head; n; n = n->next)
		printf("sorted %s\n", n->ca_name);
	return 0;
}

static int cmd_errors(void)
{
	void *umad = calloc(1, umad_size() + MAD_LEN);
	long mask[16 / sizeof(long)] = {0};
	struct umad_reg_attr attr;
	uint32_t id;
	int fd, agent, len, ret, i, n;

	if (!umad)
		return 1;
	umad_init();
	printf("open_wrong_ca=%d\n", umad_open_port("mlx5_0", 1));
	printf("open_wrong_ca0=%d\n", umad_open_port("mlx5_0", 0));
	printf("open_missing_port=%d\n", umad_open_port(NULL, 5));
	if (open_and_register(&fd, &agent))
		return 1;
	errno = 0;
	ret = umad_register(fd, 0x99, 1, 0, NULL);
	printf("register_bad_class=%d errno=%d\n", ret, errno);
	/* Two agents for the same request method of one class: the second
	 * is refused, as ib_mad's method_in_use(). */
	mask[0] = 1 << 1; /* Get */
	ret = umad_register(fd, 0x04, 1, 0, mask);
	printf("register_get=%d\n", ret);
	errno = 0;
	ret = umad_register(fd, 0x04, 1, 0, mask);
	printf("register_conflict=%d errno=%d\n", ret, errno);
	memset(&attr, 0, sizeof(attr));
	attr.mgmt_class = 0x04;
	attr.mgmt_class_version = 1;
	attr.flags = 0x80;
	printf("register2_bad_flags=%d\n", umad_register2(fd, &attr, &id));
	attr.flags = 0;
	attr.method_mask[0] = 1 << 2; /* Set */
	ret = umad_register2(fd, &attr, &id);
	printf("register2=%d id=%u\n", ret, id);
	errno = 0;
	ret = umad_unregister(fd, 31);
	printf("unregister_unused=%d errno=%d\n", ret, errno);
	/* Fill the 32 slots: the next registration fails with ENOMEM. */
	for (i = 0, n = 0; i < 40; i++) {
		errno = 0;
		ret = umad_register(fd, CLASS_SMP_DR, 1, 0, NULL);
		if (ret < 0)
			break;
		n++;
	}
	printf("registered_more=%d then=%d errno=%d\n", n, ret, errno);
	smp_build(umad, "0", 1);
	errno = 0;
	ret = umad_send(fd, 40, umad, MAD_LEN, 0, 0);
	printf("send_bad_agent=%d errno=%d\n", ret, errno);
	umad_unregister(fd, agent);
	errno = 0;
	ret = umad_send(fd, agent, umad, MAD_LEN, 0, 0);
	printf("send_unregistered=%d errno=%d\n", ret, errno);
	errno = 0;
	ret = umad_send(fd, agent + 1, umad, 20, 0, 0);
	printf("send_short=%d errno=%d\n", ret, errno);
	len = MAD_LEN;
	errno = 0;
	ret = umad_recv(fd, umad, &len, 0);
	printf("recv_empty=%d errno=%d\n", ret, errno);
	printf("poll_empty=%d\n", umad_poll(fd, 50));
	printf("recv_null=%d\n", umad_recv(fd, NULL, &len, 0));
	umad_close_port(fd);
	free(umad);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "ca"))
		ret = cmd_ca();
	else if (argc >= 2 && !strcmp(argv[1], "smp"))
		ret = cmd_smp(argc > 2 ? argv[2] : "0");
	else if (argc >= 3 && !strcmp(argv[1], "burst"))
		return cmd_burst(atoi(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "hold"))
		ret = cmd_hold(atoi(argv[2]), argc > 3 ? argv[3] : NULL);
	else if (argc >= 2 && !strcmp(argv[1], "short"))
		ret = cmd_short();
	else if (argc >= 2 && !strcmp(argv[1], "rmpp"))
		ret = cmd_rmpp();
	else if (argc >= 2 && !strcmp(argv[1], "errors"))
		ret = cmd_errors();
	else if (argc >= 2 && !strcmp(argv[1], "strings"))
		ret = cmd_strings();
	else
		fprintf(stderr, "usage: umad-client ca|smp [PATH]|hold SECONDS "
				"[PATH]|short|rmpp|errors|strings\n");
	return ret;
}
