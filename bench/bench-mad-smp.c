// SPDX-License-Identifier: MIT
/*
 * bench-mad-smp: how many directed-route SMPs a fabric answers per wall
 * second through libibumad. It is a plain libibumad program on purpose: the
 * same binary runs on ibsim (LD_PRELOAD=libumad2sim.so), on ibemu (`ibemu
 * exec`, which puts ibemu's libibumad.so.3 first) and on real hardware, so
 * the figures of the three can be set side by side. bench/mad.py drives it.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>

#include "mad.h"
#include "mad_sma.h"

/* IBA 13.4.2: the TransactionID is bytes 8-15 of the common header. */
#define TID_OFF 8

/* The permissive LID (IBA 14.2.2): a DR SMP with no LID-routed part. */
#define PERMISSIVE_LID 0xffff

/*
 * The low 32 bits of a TID are ours: the kernel (and umad2sim) overwrite
 * the high 32 with the agent's number, so only the low half comes back
 * intact. We put the window slot in its low bits and a per-slot generation
 * above them, so a late answer to a request that already timed out cannot
 * be mistaken for the answer to the slot's next request.
 */
#define SLOT_BITS  12
#define MAX_WINDOW (1u << SLOT_BITS)

#define DEFAULT_PATH	"0,1"
#define DEFAULT_COUNT	10000
#define DEFAULT_WINDOW	16
#define DEFAULT_TIMEOUT 1000

struct opts {
	const char *ca; /* NULL: the first CA, as libibumad picks it */
	int port;	/* 0: the first usable port of that CA */
	uint8_t path[IBEMU_SMP_PATH_LEN];
	unsigned hops;
	const char *path_str;
	unsigned count;
	unsigned window;
	unsigned timeout_ms;
};

struct slot {
	int busy;
	uint32_t tid; /* low 32 bits of the TID in flight */
	uint32_t gen;
	double deadline; /* monotonic seconds */
};

struct stats {
	unsigned sent;
	unsigned responses; /* good GetResp(NodeInfo) */
	unsigned timeouts;  /* our deadline passed, or the library said so */
	unsigned errors;    /* a bad or failed answer */
	unsigned strays;    /* answers to no request in flight */
};

struct bench {
	const struct opts *o;
	int fd;
	int agent;
	void *sbuf; /* umad of the request, TID patched per send */
	void *rbuf;
	struct slot *slots;
	unsigned outstanding;
	struct stats st;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench-mad-smp [-C CA] [-P PORT] [-p PATH] [-n COUNT] "
		"[-w WINDOW] [-t MS]\n"
		"Sends directed-route SMP Get(NodeInfo) to the node at PATH "
		"and "
		"counts answers\nper wall second.\n"
		"  -C, --ca CA        CA name (default: the first CA)\n"
		"  -P, --port PORT    port number (default: the first usable "
		"port)\n"
		"  -p, --path PATH    output ports from here, as smpquery -D: "
		"\"0\" is the\n"
		"                     local node, \"0,1\" the node behind "
		"local "
		"port 1,\n"
		"                     \"0,1,7\" the one behind its port 7 "
		"(default %s)\n"
		"  -n, --count N      SMPs to send (default %u)\n"
		"  -w, --window N     requests kept in flight, 1..%u (default "
		"%u;\n"
		"                     1 measures round trips)\n"
		"  -t, --timeout MS   when a request counts as lost (default "
		"%u)\n"
		"Prints a 'result:' line of key=value pairs. Exits 0 if any "
		"answer came,\n1 if none or on a setup error.\n",
		DEFAULT_PATH, DEFAULT_COUNT, MAX_WINDOW, DEFAULT_WINDOW,
		DEFAULT_TIMEOUT);
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "0,1,7": element 0 is the requester itself, as libibmad's -D paths. */
static int parse_path(const char *s, struct opts *o)
{
	unsigned n = 0, v;
	char buf[256], *tok, *save;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		/* IBA 14.2.1.2: at most 63 hops, ports 1..254. */
		if (n >= IBEMU_SMP_PATH_LEN ||
		    parse_uint(tok, n ? 1 : 0, n ? 254 : 0, &v))
			return -EINVAL;
		o->path[n++] = v;
	}
	if (!n)
		return -EINVAL;
	o->hops = n - 1;
	o->path_str = s;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"ca", required_argument, NULL, 'C'},
		{"port", required_argument, NULL, 'P'},
		{"path", required_argument, NULL, 'p'},
		{"count", required_argument, NULL, 'n'},
		{"window", required_argument, NULL, 'w'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned v;
	int c;

	memset(o, 0, sizeof(*o));
	o->count = DEFAULT_COUNT;
	o->window = DEFAULT_WINDOW;
	o->timeout_ms = DEFAULT_TIMEOUT;
	if (parse_path(DEFAULT_PATH, o))
		return -EINVAL;
	while ((c = getopt_long(argc, argv, "C:P:p:n:w:t:h", longs, NULL)) !=
	       -1) {
		switch (c) {
		case 'C':
			o->ca = optarg;
			break;
		case 'P':
			if (parse_uint(optarg, 1, 254, &v))
				goto err_value;
			o->port = v;
			break;
		case 'p':
			if (parse_path(optarg, o)) {
				fprintf(stderr,
					"bench-mad-smp: bad path '%s': "
					"want 0,PORT,PORT... (at most 63 "
					"hops, ports 1..254)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'n':
			if (parse_uint(optarg, 1, 1u << 30, &o->count))
				goto err_value;
			break;
		case 'w':
			if (parse_uint(optarg, 1, MAX_WINDOW, &o->window))
				goto err_value;
			break;
		case 't':
			if (parse_uint(optarg, 1, 3600 * 1000, &o->timeout_ms))
				goto err_value;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;

err_value:
	fprintf(stderr, "bench-mad-smp: bad value '%s' for -%c\n", optarg, c);
	return -EINVAL;
}

/* The request, built once; only its TID changes between sends. */
static int build_request(const struct opts *o, void *umad)
{
	struct ibemu_mad_smp smp;

	memset(&smp, 0, sizeof(smp));
	smp.hdr.base_version = IBEMU_MAD_BASE_VERSION;
	smp.hdr.mgmt_class = IBEMU_MAD_CLASS_SUBN_DR;
	smp.hdr.class_version = IBEMU_MAD_SMP_CLASS_VERSION;
	smp.hdr.method = IBEMU_MAD_METHOD_GET;
	smp.hdr.attr_id = IBEMU_SMP_ATTR_NODE_INFO;
	/*
	 * IBA 14.2.2: the requester sends D = 0, HopPointer 0, HopCount and
	 * InitialPath[1..HopCount]; both DR LIDs permissive because the
	 * whole route is directed.
	 */
	smp.hop_cnt = o->hops;
	smp.dr_slid = PERMISSIVE_LID;
	smp.dr_dlid = PERMISSIVE_LID;
	memcpy(smp.initial_path, o->path, o->hops + 1);
	/* As libibmad for DR: permissive DLID, QP0, SL 0, no Q_Key. */
	umad_set_addr(umad, PERMISSIVE_LID, 0, 0, 0);
	return ibemu_mad_smp_encode(&smp, umad_get_mad(umad), IBEMU_MAD_LEN);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

static uint32_t get_tid_low(const uint8_t *mad)
{
	const uint8_t *p = mad + TID_OFF + 4;

	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static int send_one(struct bench *b, unsigned idx)
{
	struct slot *s = &b->slots[idx];
	int ret;

	s->gen++;
	s->tid = (s->gen << SLOT_BITS | idx) & 0xffffffffu;
	/* Zero is the "no TID" key of OpenSM's match table: avoid it. */
	if (!s->tid) {
		s->gen++;
		s->tid = (s->gen << SLOT_BITS | idx) & 0xffffffffu;
	}
	put_be64((uint8_t *)umad_get_mad(b->sbuf) + TID_OFF, s->tid);
	/*
	 * The timeout lets a kernel-like library report the loss itself
	 * (status ETIMEDOUT); umad2sim never does, so we keep our own
	 * deadline as well. No retries: a retry would count twice.
	 */
	ret = umad_send(b->fd, b->agent, b->sbuf, IBEMU_MAD_LEN,
			b->o->timeout_ms, 0);
	if (ret < 0)
		return ret;
	s->busy = 1;
	s->deadline = now_s() + b->o->timeout_ms / 1000.0;
	b->outstanding++;
	b->st.sent++;
	return 0;
}

static void retire(struct bench *b, struct slot *s)
{
	s->busy = 0;
	b->outstanding--;
}

/* Lost requests: their deadline passed with no answer. */
static void expire(struct bench *b, double t)
{
	for (unsigned i = 0; i < b->o->window; i++) {
		struct slot *s = &b->slots[i];

		if (s->busy && s->deadline <= t) {
			retire(b, s);
			b->st.timeouts++;
		}
	}
}

/* Milliseconds until the first deadline, at least 1: umad_recv's 0 blocks. */
static int wait_ms(const struct bench *b, double t)
{
	double first = -1;

	for (unsigned i = 0; i < b->o->window; i++) {
		const struct slot *s = &b->slots[i];

		if (s->busy && (first < 0 || s->deadline < first))
			first = s->deadline;
	}
	if (first < 0)
		return b->o->timeout_ms;
	if (first <= t)
		return 1;
	return (int)((first - t) * 1000) + 1;
}

/*
 * Checks one answer; 'ni' gets its NodeInfo when not NULL. Returns 0 for a
 * good GetResp(NodeInfo), -ETIMEDOUT when the library reports the request
 * lost, -EPROTO for anything else.
 */
static int check_answer(void *umad, struct ibemu_mad_node_info *ni)
{
	struct ibemu_mad_smp smp;

	if (umad_status(umad))
		return -ETIMEDOUT;
	if (ibemu_mad_smp_decode(umad_get_mad(umad), IBEMU_MAD_LEN, &smp))
		return -EPROTO;
	/* IBA 14.2.2: the answer comes back with D set and status 0. */
	if (smp.hdr.mgmt_class != IBEMU_MAD_CLASS_SUBN_DR ||
	    smp.hdr.method != IBEMU_MAD_METHOD_GET_RESP ||
	    smp.hdr.attr_id != IBEMU_SMP_ATTR_NODE_INFO || smp.hdr.status ||
	    !smp.d)
		return -EPROTO;
	if (ni && ibemu_mad_node_info_decode(smp.data, IBEMU_SMP_DATA_LEN, ni))
		return -EPROTO;
	return 0;
}

/* Handles one received umad: match by TID, count, free the slot. */
static void on_answer(struct bench *b)
{
	uint32_t tid = get_tid_low(umad_get_mad(b->rbuf));
	unsigned idx = tid & (MAX_WINDOW - 1);
	struct slot *s;
	int ret;

	if (idx >= b->o->window || !b->slots[idx].busy ||
	    b->slots[idx].tid != tid) {
		b->st.strays++;
		return;
	}
	s = &b->slots[idx];
	ret = check_answer(b->rbuf, NULL);
	retire(b, s);
	if (!ret)
		b->st.responses++;
	else if (ret == -ETIMEDOUT)
		b->st.timeouts++;
	else
		b->st.errors++;
}

/* Waits up to 'ms' for one umad; 0, -ETIMEDOUT or another -errno. */
static int recv_one(struct bench *b, int ms)
{
	int len = IBEMU_MAD_LEN;
	int ret;

	ret = umad_recv(b->fd, b->rbuf, &len, ms);
	if (ret >= 0)
		return 0;
	/* rdma-core returns -ETIMEDOUT; some versions set errno instead. */
	if (ret == -ETIMEDOUT || errno == ETIMEDOUT)
		return -ETIMEDOUT;
	return ret;
}

/*
 * One request, synchronously, before the timed run: proves the path
 * answers and names the node at its end.
 */
static int probe(struct bench *b)
{
	struct ibemu_mad_node_info ni;
	double deadline;
	int ret;

	ret = send_one(b, 0);
	if (ret < 0) {
		fprintf(stderr, "bench-mad-smp: umad_send: %s\n",
			strerror(-ret));
		return ret;
	}
	deadline = b->slots[0].deadline;
	for (;;) {
		double t = now_s();

		if (t >= deadline) {
			fprintf(stderr,
				"bench-mad-smp: no answer from path %s in "
				"%u ms\n",
				b->o->path_str, b->o->timeout_ms);
			return -ETIMEDOUT;
		}
		ret = recv_one(b, (int)((deadline - t) * 1000) + 1);
		if (ret == -ETIMEDOUT)
			continue;
		if (ret < 0) {
			fprintf(stderr, "bench-mad-smp: umad_recv: %s\n",
				strerror(-ret));
			return ret;
		}
		if (get_tid_low(umad_get_mad(b->rbuf)) == b->slots[0].tid)
			break;
	}
	retire(b, &b->slots[0]);
	b->st.sent = 0;
	ret = check_answer(b->rbuf, &ni);
	if (ret) {
		fprintf(stderr, "bench-mad-smp: path %s: %s\n", b->o->path_str,
			ret == -ETIMEDOUT ? "the library reports a timeout"
					  : "bad answer to Get(NodeInfo)");
		return ret;
	}
	printf("target: path %s (%u hops), %s, NodeGUID 0x%016" PRIx64
	       ", %u ports\n",
	       b->o->path_str, b->o->hops,
	       ni.node_type == 1   ? "CA"
	       : ni.node_type == 2 ? "switch"
	       : ni.node_type == 3 ? "router"
				   : "unknown node type",
	       ni.node_guid, ni.num_ports);
	return 0;
}

/* The timed run: keep 'window' requests in flight until 'count' are sent. */
static int run(struct bench *b)
{
	for (;;) {
		double t;
		int ret;

		for (unsigned i = 0;
		     i < b->o->window && b->st.sent < b->o->count; i++) {
			if (b->slots[i].busy)
				continue;
			ret = send_one(b, i);
			if (ret < 0) {
				fprintf(stderr,
					"bench-mad-smp: umad_send: %s\n",
					strerror(-ret));
				return ret;
			}
		}
		if (!b->outstanding)
			return 0;
		t = now_s();
		ret = recv_one(b, wait_ms(b, t));
		if (!ret)
			on_answer(b);
		else if (ret != -ETIMEDOUT) {
			fprintf(stderr, "bench-mad-smp: umad_recv: %s\n",
				strerror(-ret));
			return ret;
		}
		expire(b, now_s());
	}
}

static int open_port(struct bench *b, umad_port_t *port)
{
	int ret;

	ret = umad_init();
	if (ret < 0) {
		fprintf(stderr, "bench-mad-smp: umad_init failed (%d)\n", ret);
		return ret;
	}
	ret = umad_get_port(b->o->ca, b->o->port, port);
	if (ret < 0) {
		fprintf(stderr, "bench-mad-smp: no port %s:%d (%s)\n",
			b->o->ca ? b->o->ca : "(first CA)", b->o->port,
			strerror(-ret));
		goto err_done;
	}
	b->fd = umad_open_port(port->ca_name, port->portnum);
	if (b->fd < 0) {
		ret = b->fd;
		fprintf(stderr, "bench-mad-smp: umad_open_port %s:%d: %s\n",
			port->ca_name, port->portnum, strerror(-ret));
		goto err_release;
	}
	/* A requester only: answers reach us by TID, whatever the mask. */
	b->agent = umad_register(b->fd, IBEMU_MAD_CLASS_SUBN_DR,
				 IBEMU_MAD_SMP_CLASS_VERSION, 0, NULL);
	if (b->agent < 0) {
		ret = b->agent;
		fprintf(stderr, "bench-mad-smp: umad_register SubnDR: %s\n",
			strerror(-ret));
		goto err_close;
	}
	return 0;

err_close:
	umad_close_port(b->fd);
err_release:
	umad_release_port(port);
err_done:
	umad_done();
	return ret < 0 ? ret : -EIO;
}

static void close_port(struct bench *b, umad_port_t *port)
{
	umad_unregister(b->fd, b->agent);
	umad_close_port(b->fd);
	umad_release_port(port);
	umad_done();
}

int main(int argc, char **argv)
{
	struct opts o;
	struct bench b;
	umad_port_t port;
	double t0, wall;
	int ret;

	if (parse_opts(argc, argv, &o))
		return 1;
	memset(&b, 0, sizeof(b));
	b.o = &o;
	ret = open_port(&b, &port);
	if (ret)
		return 1;
	/*
	 * Only now: libibumad's umad_size() and umad_get_mad() grow by the
	 * 8 bytes of pkey_index once umad_open_port() has enabled P_Key
	 * support (56 bytes of header before, 64 after).
	 */
	b.slots = calloc(o.window, sizeof(*b.slots));
	b.sbuf = umad_alloc(1, umad_size() + IBEMU_MAD_LEN);
	b.rbuf = umad_alloc(1, umad_size() + IBEMU_MAD_LEN);
	if (!b.slots || !b.sbuf || !b.rbuf) {
		fprintf(stderr, "bench-mad-smp: out of memory\n");
		goto err_close;
	}
	ret = build_request(&o, b.sbuf);
	if (ret) {
		fprintf(stderr, "bench-mad-smp: cannot encode the SMP: %s\n",
			strerror(-ret));
		goto err_close;
	}
	printf("port: %s:%d, port GUID 0x%016" PRIx64 ", LID %u\n",
	       port.ca_name, port.portnum, (uint64_t)be64toh(port.port_guid),
	       port.base_lid);
	ret = probe(&b);
	if (ret)
		goto err_close;

	t0 = now_s();
	ret = run(&b);
	wall = now_s() - t0;
	if (ret)
		goto err_close;

	printf("sent %u, responses %u, timeouts %u, errors %u, strays %u\n",
	       b.st.sent, b.st.responses, b.st.timeouts, b.st.errors,
	       b.st.strays);
	printf("%.0f SMPs/s answered (%u hops, window %u, %.3f s wall)\n",
	       b.st.responses / wall, o.hops, o.window, wall);
	printf("result: sent=%u responses=%u timeouts=%u errors=%u "
	       "strays=%u wall_s=%.6f smps_per_s=%.1f hops=%u window=%u\n",
	       b.st.sent, b.st.responses, b.st.timeouts, b.st.errors,
	       b.st.strays, wall, b.st.responses / wall, o.hops, o.window);
	close_port(&b, &port);
	free(b.slots);
	umad_free(b.sbuf);
	umad_free(b.rbuf);
	return b.st.responses ? 0 : 1;

err_close:
	close_port(&b, &port);
	free(b.slots);
	umad_free(b.sbuf);
	umad_free(b.rbuf);
	return 1;
}
