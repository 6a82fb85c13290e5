// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the daemon's CM (attach/sess_cm.c) on a real
 * session server and engine (fuzz-daemon.h): the parser on any bytes of
 * any length (it must refuse what is not a whole CM message of class
 * version 2, never read past the input, and give the IDs the fields
 * hold), then the same bytes as a sequence of records driven through two
 * port streams of h3 port 1, each with a CM agent: CM MADs arriving at
 * the port (routed by service ID and Comm ID, answered for nobody),
 * SENDs from either agent (checked and learnt), CM_LISTEN calls, and a
 * stream closed with its connections (the daemon tells the peers). Every
 * reply must be well-formed and the loop must turn after each record.
 *
 * A record: op (low 2 bits: 0 arrive, 1 send, 2 listen, 3 close and
 * reopen; bit 2: which stream), then 256 bytes of MAD (made class 0x07
 * version 2 Send unless bit 3 of op), or 16 of CM_LISTEN; short records
 * are padded with zeros.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "fuzz-daemon.h"
#include "mad_cm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC_MAX 64

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-cm: %s\n", what);
	abort();
}

struct stream {
	struct ibemu_sess_conn *c;
	int peer;
	uint64_t session;
	uint32_t agent;
};

struct rig {
	struct ibemu_daemon *d;
	uint32_t port; /* h3 port 1, engine index */
	struct stream s[2];
};

/* Message 'type' with 'len' bytes of 'body' on 'c'; the last reply's
 * payload into 'out'. Returns its status. */
static int feed(struct ibemu_sess_conn *c, int peer, uint16_t type,
		const void *body, size_t len, void *out, size_t cap)
{
	static uint8_t msg[sizeof(struct ibemu_sess_hdr) + 512];
	struct ibemu_sess_hdr h = {
		.magic = IBEMU_SESS_MAGIC,
		.version = IBEMU_SESS_VERSION,
		.type = type,
		.len = (uint32_t)len,
	};

	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), body, len);
	ibemu_fuzz_conn_feed(c, msg, sizeof(h) + len, NULL, 0);
	return ibemu_fuzz_replies(peer, out, cap);
}

/* A call on a connection of its own. */
static int call(struct rig *r, uint16_t type, void *io, size_t len)
{
	int peer, ret;
	struct ibemu_sess_conn *c = ibemu_fuzz_conn_open(r->d, &peer);

	ret = feed(c, peer, type, io, len, io, len);
	close(peer);
	uv_run(&r->d->loop, UV_RUN_NOWAIT);
	return ret;
}

static void stream_open(struct rig *r, struct stream *st)
{
	struct ibemu_sess_bind b = {.host = "h3", .port = 1};
	struct ibemu_sess_opened o;
	struct ibemu_sess_register reg = {0};

	st->c = ibemu_fuzz_conn_open(r->d, &st->peer);
	if (feed(st->c, st->peer, IBEMU_SESS_OPEN, &b, sizeof(b), &o,
		 sizeof(o)))
		fail("OPEN");
	st->session = o.session;
	reg.session = st->session;
	reg.method_mask[0] = 1u << IBEMU_MAD_METHOD_SEND;
	reg.mgmt_class = IBEMU_MAD_CLASS_CM;
	reg.class_version = IBEMU_CM_CLASS_VERSION;
	if (call(r, IBEMU_SESS_REGISTER, &reg, sizeof(reg)))
		fail("REGISTER of a second CM agent on the port");
	st->agent = reg.agent_id;
}

static void stream_close(struct rig *r, struct stream *st)
{
	close(st->peer);
	uv_run(&r->d->loop, UV_RUN_NOWAIT);
}

static void make_cm(uint8_t *mad)
{
	mad[0] = IBEMU_MAD_BASE_VERSION;
	mad[1] = IBEMU_MAD_CLASS_CM;
	mad[2] = IBEMU_CM_CLASS_VERSION;
	mad[3] = IBEMU_MAD_METHOD_SEND;
	mad[16] = 0;
	mad[17] = (uint8_t)(IBEMU_CM_ATTR_REQ + mad[17] % 9);
}

static void arrive(struct rig *r, const uint8_t *mad, uint16_t slid)
{
	struct ibemu_mad_msg m;

	memset(&m, 0, sizeof(m));
	memcpy(m.mad, mad, IBEMU_MAD_LEN);
	m.slid = slid;
	m.src_qp = 1;
	m.dst_qp = 1;
	m.qkey = 0x80010000u;
	m.pkey = 0xffff;
	ibemu__sess_mad_recv(r->d, r->port, &m);
}

static void send_mad(struct stream *st, const uint8_t *mad, uint16_t dlid)
{
	static uint8_t buf[sizeof(struct ibemu_sess_mad) + IBEMU_MAD_LEN];
	struct ibemu_sess_mad *m = (struct ibemu_sess_mad *)buf;

	memset(m, 0, sizeof(*m));
	m->agent_id = st->agent;
	m->timeout_ms = mad[4] & 1 ? 50 : 0;
	m->retries = mad[5] & 3;
	m->addr.qpn = 1;
	m->addr.qkey = 0x80010000u;
	m->addr.lid = dlid;
	m->len = IBEMU_MAD_LEN;
	memcpy(m->mad, mad, IBEMU_MAD_LEN);
	feed(st->c, st->peer, IBEMU_SESS_SEND, buf, sizeof(buf), NULL, 0);
}

static void record(struct rig *r, uint8_t op, const uint8_t *body)
{
	struct stream *st = &r->s[(op >> 2) & 1];
	uint8_t mad[IBEMU_MAD_LEN];
	struct ibemu_sess_cm_listen l;
	uint16_t lid = (uint16_t)(body[0] % 16 + 1);

	memcpy(mad, body, sizeof(mad));
	if (!(op & 8))
		make_cm(mad);
	switch (op & 3) {
	case 0:
		arrive(r, mad, lid);
		break;
	case 1:
		send_mad(st, mad, lid);
		break;
	case 2:
		memcpy(&l, body, sizeof(l));
		l.port = body[8] & 1 ? 1 : l.port;
		call(r, IBEMU_SESS_CM_LISTEN, &l, sizeof(l));
		break;
	default:
		stream_close(r, st);
		stream_open(r, st);
	}
	uv_run(&r->d->loop, UV_RUN_NOWAIT);
	ibemu_fuzz_replies(r->s[0].peer, NULL, 0);
	ibemu_fuzz_replies(r->s[1].peer, NULL, 0);
}

static void parse_check(const uint8_t *data, size_t size)
{
	struct ibemu_sess_cm_key k;
	size_t off, len;
	uint8_t *mad;
	int ret;

	/* An exact-size copy: ASan sees a read past the input. */
	mad = malloc(size ? size : 1);
	if (!mad)
		abort();
	memcpy(mad, data, size);
	ret = ibemu__sess_cm_parse(mad, size, &k);
	if (ret && ret != -EINVAL && ret != -EPROTONOSUPPORT)
		fail("parse: an unexpected error");
	if (!ret) {
		if (size < IBEMU_MAD_LEN || k.attr < IBEMU_CM_ATTR_REQ ||
		    k.attr > IBEMU_CM_ATTR_SIDR_REP)
			fail("parse: took what is not a CM message");
		if (k.attr == IBEMU_CM_ATTR_REQ &&
		    k.service_id != ibemu_cm_get(mad, IBEMU_CM_REQ_SERVICE_ID))
			fail("parse: a REQ's service ID");
		off = ibemu_cm_private(k.attr, &len);
		if (!off || off + len > IBEMU_MAD_LEN)
			fail("parse: private data out of the MAD");
	}
	free(mad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t body[1 + IBEMU_MAD_LEN];
	size_t off = 0, n, recs = 0;
	struct rig r;
	uint32_t node;

	parse_check(data, size);
	memset(&r, 0, sizeof(r));
	r.d = ibemu_fuzz_daemon_create();
	node = ibemu_topo_find(r.d->topo, "h3");
	r.port = ibemu_engine_port_index(r.d->engine, node, 1);
	stream_open(&r, &r.s[0]);
	stream_open(&r, &r.s[1]);
	while (off < size && recs++ < REC_MAX) {
		n = size - off < sizeof(body) ? size - off : sizeof(body);
		memset(body, 0, sizeof(body));
		memcpy(body, data + off, n);
		off += n;
		record(&r, body[0], body + 1);
	}
	close(r.s[0].peer);
	close(r.s[1].peer);
	ibemu_fuzz_daemon_destroy(r.d);
	return 0;
}
