// SPDX-License-Identifier: MIT
/*
 * RMPP (IBA 13.6) for the agents of attached processes, as the kernel's
 * ib_mad does it for agents registered with an RMPP version
 * (drivers/infiniband/core/mad_rmpp.c): a write() of a long MAD leaves as
 * DATA segments of 256 bytes, each carrying the class headers and the next
 * part of the data; segments that reach such an agent are reassembled and
 * read() returns the whole message. Both ends are the daemon's, so no ACK
 * crosses the wire: segments leave back to back (see daemon/README.md).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad.h"
#include "sess.h"

/* IBA 13.6.2.1: the RMPP header follows the MAD header. */
#define RMPP_VERSION_OFF 24
#define RMPP_TYPE_OFF	 25
#define RMPP_FLAGS_OFF	 26 /* RRespTime (5 bits) and RMPPFlags (3) */
#define RMPP_STATUS_OFF	 27
#define RMPP_SEG_OFF	 28 /* Data1: SegmentNumber */
#define RMPP_PAYLEN_OFF	 32 /* Data2: PayloadLength, NewWindowLast */
/* ib_mad's IB_MGMT_RMPP_HDR, and IB_MGMT_RMPP_DATA: what PayloadLength
 * counts of each segment (the class header included). */
#define RMPP_HDR_END 36
#define RMPP_DATA    (IBEMU_MAD_LEN - RMPP_HDR_END)

#define RMPP_VERSION	 1
#define RMPP_TYPE_DATA	 1
#define RMPP_TYPE_ACK	 2
#define RMPP_TYPE_STOP	 3
#define RMPP_TYPE_ABORT	 4
#define RMPP_FLAG_ACTIVE 0x1
#define RMPP_FLAG_FIRST	 0x2
#define RMPP_FLAG_LAST	 0x4

/* ib_user_mad.h IB_USER_MAD_USER_RMPP: the process does RMPP itself. */
#define REG_FLAG_USER_RMPP 0x1

/* ib_get_mad_data_offset(): where each class's data starts. */
#define SA_HDR_LEN     56 /* MAD, RMPP and SA headers (IBA 15.2.1.1) */
#define DEVICE_HDR_LEN 64
#define VENDOR_HDR_LEN 40 /* MAD, RMPP headers, a pad and the OUI */

#define CLASS_SA      0x03
#define CLASS_DEV_MGT 0x06
#define CLASS_DEV_ADM 0x10
#define CLASS_BIS     0x12
#define VENDOR2_FIRST 0x30
#define VENDOR2_LAST  0x4f

/* start_rmpp() gives a transfer 40 s of wall clock to complete. */
#define RMPP_TIMEOUT_MS 40000
/* Reassemblies one agent keeps (the kernel sets no bound): a new transfer
 * beyond them pushes the oldest out. */
#define RMPP_PENDING_MAX 32u

/* A transfer being reassembled, per agent as ib_mad's mad_rmpp_recv. */
struct ibemu_sess_rmpp {
	uv_timer_t timer; /* wall clock: a stale transfer is freed */
	struct ibemu_sess_agent *agent;
	struct ibemu_sess_rmpp *next;
	/* find_rmpp_recv(): what names a transfer. */
	uint64_t tid;
	uint32_t src_qp;
	uint16_t slid;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint32_t segs; /* segments in 'buf', in order: the next is segs + 1 */
	uint32_t len;  /* bytes in 'buf' */
	uint32_t cap;  /* bytes allocated at 'buf' */
	uint8_t *buf;  /* the first segment whole, then each one's data */
};

int ibemu__sess_rmpp_class(uint8_t mgmt_class)
{
	return mgmt_class == CLASS_SA || mgmt_class == CLASS_DEV_MGT ||
	       mgmt_class == CLASS_DEV_ADM || mgmt_class == CLASS_BIS ||
	       (mgmt_class >= VENDOR2_FIRST && mgmt_class <= VENDOR2_LAST);
}

int ibemu__sess_rmpp_agent(const struct ibemu_sess_agent *a)
{
	return a->rmpp_version && !(a->flags & REG_FLAG_USER_RMPP);
}

int ibemu__sess_rmpp_active(const uint8_t *mad)
{
	return ibemu__sess_rmpp_class(mad[1]) &&
	       (mad[RMPP_FLAGS_OFF] & RMPP_FLAG_ACTIVE);
}

static uint32_t hdr_len(uint8_t mgmt_class)
{
	if (mgmt_class == CLASS_SA)
		return SA_HDR_LEN;
	if (mgmt_class == CLASS_DEV_MGT || mgmt_class == CLASS_DEV_ADM ||
	    mgmt_class == CLASS_BIS)
		return DEVICE_HDR_LEN;
	if (mgmt_class >= VENDOR2_FIRST && mgmt_class <= VENDOR2_LAST)
		return VENDOR_HDR_LEN;
	return IBEMU_MAD_HDR_LEN;
}

static uint32_t get_be32(const uint8_t *p)
{
	uint32_t be;

	memcpy(&be, p, sizeof(be));
	return be32toh(be);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	uint32_t be = htobe32(v);

	memcpy(p, &be, sizeof(be));
}

static uint64_t mad_tid(const uint8_t *mad)
{
	uint64_t be;

	memcpy(&be, mad + 8, sizeof(be));
	return be64toh(be);
}

/* --- sending -------------------------------------------------------- */

/*
 * One DATA segment, as alloc_send_rmpp_list() and send_next_seg() set
 * its RMPP header: the agent's version, Active (RRespTime 0, the kernel
 * does not copy the process's RMPP header), First on segment 1 with the
 * PayloadLength of the whole transfer, Last on the last one with its own.
 */
static void segment_header(uint8_t *mad, uint32_t seg, uint32_t nsegs,
			   uint32_t pad)
{
	uint32_t paylen = 0;

	mad[RMPP_VERSION_OFF] = RMPP_VERSION;
	mad[RMPP_TYPE_OFF] = RMPP_TYPE_DATA;
	mad[RMPP_FLAGS_OFF] = RMPP_FLAG_ACTIVE;
	mad[RMPP_STATUS_OFF] = 0;
	if (seg == 1) {
		mad[RMPP_FLAGS_OFF] |= RMPP_FLAG_FIRST;
		paylen = nsegs * RMPP_DATA - pad;
	}
	if (seg == nsegs) {
		mad[RMPP_FLAGS_OFF] |= RMPP_FLAG_LAST;
		paylen = RMPP_DATA - pad;
	}
	put_be32(mad + RMPP_SEG_OFF, seg);
	put_be32(mad + RMPP_PAYLEN_OFF, paylen);
}

int ibemu__sess_rmpp_send(struct ibemu_engine *e, uint32_t port,
			  const struct ibemu_mad_msg *tmpl, const uint8_t *mad,
			  uint32_t len)
{
	uint32_t hdr = hdr_len(tmpl->mad[1]);
	uint32_t size = IBEMU_MAD_LEN - hdr; /* data bytes per segment */
	uint32_t data, pad, nsegs, seg, off, n;
	struct ibemu_mad_msg msg = *tmpl;
	int ret;

	/*
	 * ib_umad_write: the data is what follows the class headers; a MAD
	 * shorter than them (which the kernel reads past) has none here.
	 * get_pad_size(): the last segment is padded with zeros, and a
	 * transfer without data is one segment of padding.
	 */
	data = len > hdr ? len - hdr : 0;
	pad = data % size ? size - data % size : data ? 0 : size;
	nsegs = (data + pad) / size;
	for (seg = 1; seg <= nsegs; seg++) {
		off = (seg - 1) * size;
		n = data - off < size ? data - off : size;
		memset(msg.mad + hdr, 0, size);
		if (n)
			memcpy(msg.mad + hdr, mad + hdr + off, n);
		segment_header(msg.mad, seg, nsegs, pad);
		ret = ibemu_engine_mad_send(e, port, &msg);
		if (ret)
			return ret;
	}
	return 0;
}

/* --- reassembly ----------------------------------------------------- */

static struct ibemu_daemon *agent_daemon(const struct ibemu_sess_agent *a)
{
	return a->stream->s->d;
}

/* Once a second at most: a segment or a transfer that was dropped. */
static void dropped(struct ibemu_sess_agent *a, const uint8_t *mad,
		    const char *why)
{
	struct ibemu_sess_server *s = a->stream->s;
	struct ibemu_daemon *d = s->d;
	uint64_t now = uv_now(&d->loop);

	s->rmpp_dropped++;
	if (s->rmpp_dropped_logged_ms && now - s->rmpp_dropped_logged_ms < 1000)
		return;
	s->rmpp_dropped_logged_ms = now;
	ibemu_daemon_log(d,
			 "RMPP: dropped segment %u (class 0x%02x method 0x%02x "
			 "TID 0x%016llx) for agent %u of process %ld at %s "
			 "port %u: %s; %llu dropped so far",
			 get_be32(mad + RMPP_SEG_OFF), mad[1], mad[3],
			 (unsigned long long)mad_tid(mad), a->id,
			 (long)a->stream->pid,
			 d->topo->nodes[a->stream->node].name, a->stream->port,
			 why, (unsigned long long)s->rmpp_dropped);
}

static void rmpp_free_cb(uv_handle_t *h)
{
	struct ibemu_sess_rmpp *r = h->data;

	free(r->buf);
	free(r);
}

/* Unlinks 'r' from its agent and frees it once its timer is closed. */
static void rmpp_free(struct ibemu_sess_rmpp *r)
{
	struct ibemu_sess_agent *a = r->agent;
	struct ibemu_sess_rmpp **pp;

	for (pp = &a->rmpps; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			a->nrmpps--;
			break;
		}
	}
	uv_timer_stop(&r->timer);
	uv_close((uv_handle_t *)&r->timer, rmpp_free_cb);
}

void ibemu__sess_rmpp_cancel(struct ibemu_sess_agent *a)
{
	while (a->rmpps)
		rmpp_free(a->rmpps);
}

/* recv_timeout_handler(): a transfer whose segments stopped coming. */
static void rmpp_timeout_cb(uv_timer_t *t)
{
	struct ibemu_sess_rmpp *r = t->data;

	dropped(r->agent, r->buf,
		"the transfer did not complete within 40 s; its segments are "
		"freed");
	rmpp_free(r);
}

static struct ibemu_sess_rmpp *rmpp_find(struct ibemu_sess_agent *a,
					 const struct ibemu_mad_msg *m)
{
	struct ibemu_sess_rmpp *r;
	uint64_t tid = mad_tid(m->mad);

	for (r = a->rmpps; r; r = r->next)
		if (r->tid == tid && r->src_qp == m->src_qp &&
		    r->slid == m->slid && r->mgmt_class == m->mad[1] &&
		    r->class_version == m->mad[2] && r->method == m->mad[3])
			return r;
	return NULL;
}

/* The most segments a transfer may have: its MAD fits IBEMU_SESS_MAD_MAX. */
static uint32_t max_segs(uint8_t mgmt_class)
{
	uint32_t hdr = hdr_len(mgmt_class);

	return (IBEMU_SESS_MAD_MAX - hdr) / (IBEMU_MAD_LEN - hdr);
}

/*
 * get_mad_len(): the class headers, the data of every segment, less the
 * padding the last segment's PayloadLength tells (none when it makes no
 * sense), so that the length is the sender's.
 */
static uint32_t whole_len(const uint8_t *last, uint32_t segs)
{
	uint32_t hdr = hdr_len(last[1]);
	uint32_t paylen = get_be32(last + RMPP_PAYLEN_OFF);
	uint32_t pad = paylen <= RMPP_DATA ? RMPP_DATA - paylen : 0;

	return hdr + segs * (IBEMU_MAD_LEN - hdr) - pad;
}

/* Makes room for one more pending transfer: the oldest one goes. */
static void rmpp_make_room(struct ibemu_sess_agent *a)
{
	struct ibemu_sess_rmpp *r;

	if (a->nrmpps < RMPP_PENDING_MAX)
		return;
	for (r = a->rmpps; r->next; r = r->next)
		;
	dropped(a, r->buf,
		"the agent has 32 RMPP transfers in progress; the oldest "
		"is freed");
	rmpp_free(r);
}

/* start_rmpp(): a first segment opens a transfer. */
static int rmpp_start(struct ibemu_sess_agent *a, const struct ibemu_mad_msg *m,
		      uint8_t **out, uint32_t *len)
{
	const uint8_t *mad = m->mad;
	struct ibemu_sess_rmpp *r;

	if (rmpp_find(a, m)) {
		/* continue_rmpp() drops a repeated first segment. */
		dropped(a, mad, "a repeated first segment");
		return 0;
	}
	if (mad[RMPP_FLAGS_OFF] & RMPP_FLAG_LAST) {
		*out = malloc(IBEMU_MAD_LEN);
		if (!*out) {
			dropped(a, mad, "out of memory");
			return 0;
		}
		memcpy(*out, mad, IBEMU_MAD_LEN);
		*len = whole_len(mad, 1);
		return 1;
	}
	/* The first segment's PayloadLength is only announced: bound it. */
	if (get_be32(mad + RMPP_PAYLEN_OFF) > max_segs(mad[1]) * RMPP_DATA) {
		dropped(a, mad,
			"its PayloadLength announces more than a MAD of "
			"256 KiB");
		return 0;
	}
	rmpp_make_room(a);
	r = calloc(1, sizeof(*r));
	if (r)
		r->buf = malloc(IBEMU_MAD_LEN);
	if (!r || !r->buf) {
		free(r);
		dropped(a, mad, "out of memory");
		return 0;
	}
	memcpy(r->buf, mad, IBEMU_MAD_LEN);
	r->len = r->cap = IBEMU_MAD_LEN;
	r->segs = 1;
	r->agent = a;
	r->tid = mad_tid(mad);
	r->src_qp = m->src_qp;
	r->slid = m->slid;
	r->mgmt_class = mad[1];
	r->class_version = mad[2];
	r->method = mad[3];
	uv_timer_init(&agent_daemon(a)->loop, &r->timer);
	r->timer.data = r;
	uv_timer_start(&r->timer, rmpp_timeout_cb, RMPP_TIMEOUT_MS, 0);
	r->next = a->rmpps;
	a->rmpps = r;
	a->nrmpps++;
	return 0;
}

/* Appends the data of segment 'mad' to 'r'; 0 or -ENOMEM. */
static int rmpp_append(struct ibemu_sess_rmpp *r, const uint8_t *mad)
{
	uint32_t hdr = hdr_len(r->mgmt_class);
	uint32_t size = IBEMU_MAD_LEN - hdr;
	uint32_t cap = r->cap;
	uint8_t *buf;

	if (r->len + size > cap) {
		/* Doubling: a long transfer is not copied once a segment. */
		cap = 2 * cap > r->len + size ? 2 * cap : r->len + size;
		buf = realloc(r->buf, cap);
		if (!buf)
			return -ENOMEM;
		r->buf = buf;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, mad + hdr, size);
	r->len += size;
	r->segs++;
	return 0;
}

/*
 * continue_rmpp(): the next segment of a transfer. Segments cross the
 * fabric in order and ibemu's senders never resend one (no ACK asks
 * them to), so the rule is simpler than the kernel's window: a segment
 * already received is dropped; one past the next expected ends the
 * transfer, which could never complete (the kernel would keep it until
 * its 40 s timeout).
 */
static int rmpp_continue(struct ibemu_sess_agent *a,
			 const struct ibemu_mad_msg *m, uint8_t **out,
			 uint32_t *len)
{
	const uint8_t *mad = m->mad;
	struct ibemu_sess_rmpp *r = rmpp_find(a, m);
	uint32_t seg = get_be32(mad + RMPP_SEG_OFF);

	if (!r) {
		dropped(a, mad, "a segment of no transfer in progress");
		return 0;
	}
	if (seg <= r->segs) {
		dropped(a, mad, "a segment received already");
		return 0;
	}
	if (seg != r->segs + 1) {
		dropped(a, mad,
			"a segment out of order; the transfer is dropped");
		rmpp_free(r);
		return 0;
	}
	if (seg > max_segs(r->mgmt_class)) {
		dropped(a, mad,
			"the transfer exceeds a MAD of 256 KiB; it is "
			"dropped");
		rmpp_free(r);
		return 0;
	}
	if (rmpp_append(r, mad)) {
		dropped(a, mad, "out of memory; the transfer is dropped");
		rmpp_free(r);
		return 0;
	}
	if (!(mad[RMPP_FLAGS_OFF] & RMPP_FLAG_LAST))
		return 0;
	/* complete_rmpp(): the transfer is handed over whole. */
	*len = whole_len(mad, r->segs);
	*out = r->buf;
	r->buf = NULL;
	rmpp_free(r);
	return 1;
}

/* process_rmpp_data(): a DATA segment with a sound header. */
static int rmpp_data(struct ibemu_sess_agent *a, const struct ibemu_mad_msg *m,
		     uint8_t **out, uint32_t *len)
{
	const uint8_t *mad = m->mad;
	int first = mad[RMPP_FLAGS_OFF] & RMPP_FLAG_FIRST;
	uint32_t seg = get_be32(mad + RMPP_SEG_OFF);

	if (mad[RMPP_STATUS_OFF]) {
		dropped(a, mad, "a DATA segment with an RMPPStatus");
		return 0;
	}
	/* IB_MGMT_RMPP_STATUS_BAD_SEG: First on segment 1, and only. */
	if ((seg == 1) != !!first) {
		dropped(a, mad,
			seg == 1 ? "segment 1 without the First flag"
				 : "the First flag on a later segment");
		return 0;
	}
	if (seg == 1)
		return rmpp_start(a, m, out, len);
	return rmpp_continue(a, m, out, len);
}

int ibemu__sess_rmpp_recv(struct ibemu_sess_agent *a,
			  const struct ibemu_mad_msg *m, uint8_t **out,
			  uint32_t *len)
{
	const uint8_t *mad = m->mad;

	/*
	 * ib_process_rmpp_recv_wc(): the kernel answers a bad version or
	 * type with an ABORT, and consumes ACK, STOP and ABORT itself.
	 * ibemu's senders wait for no ACK and heed none, so these go no
	 * further.
	 */
	if (mad[RMPP_VERSION_OFF] != RMPP_VERSION) {
		dropped(a, mad, "an RMPP version other than 1");
		return 0;
	}
	switch (mad[RMPP_TYPE_OFF]) {
	case RMPP_TYPE_DATA:
		return rmpp_data(a, m, out, len);
	case RMPP_TYPE_ACK:
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		dropped(a, mad,
			"an ACK, STOP or ABORT, which only the kernel reads");
		return 0;
	default:
		dropped(a, mad, "an unknown RMPPType");
		return 0;
	}
}
