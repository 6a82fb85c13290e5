// SPDX-License-Identifier: MIT
/*
 * RMPP (IBA 13.6) for the agents of attached processes, as the kernel's
 * ib_mad does it for agents registered with an RMPP version
 * (drivers/infiniband/core/mad_rmpp.c): a write() of a long MAD leaves as
 * DATA segments of 256 bytes, each carrying the class headers and the next
 * part of the data; segments that reach such an agent are reassembled and
 * read() returns the whole message. Both ends are the daemon's, so no ACK
 * crosses the wire: segments leave back to back (see attach/README.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad.h"
#include "sess.h"

/* ib_mad's IB_MGMT_RMPP_DATA: what PayloadLength counts of each segment
 * (the class header included). */
#define RMPP_DATA (IBEMU_MAD_LEN - IBEMU_RMPP_HDR_END)

/* ib_user_mad.h IB_USER_MAD_USER_RMPP: the process does RMPP itself. */
#define REG_FLAG_USER_RMPP 0x1

/* ib_get_mad_data_offset(): where the data of DevMgt, DevAdm, BIS starts. */
#define DEVICE_HDR_LEN 64

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

int ibemu__sess_rmpp_agent(const struct ibemu_sess_agent *a)
{
	return a->rmpp_version && !(a->flags & REG_FLAG_USER_RMPP);
}

/* ib_get_mad_data_offset(): where each class's data starts. */
static uint32_t hdr_len(uint8_t mgmt_class)
{
	if (mgmt_class == IBEMU_MAD_CLASS_SA)
		return IBEMU_SA_DATA_OFF;
	if (mgmt_class == IBEMU_MAD_CLASS_DEV_MGT ||
	    mgmt_class == IBEMU_MAD_CLASS_DEV_ADM ||
	    mgmt_class == IBEMU_MAD_CLASS_BIS)
		return DEVICE_HDR_LEN;
	if (ibemu_mad_class_is_vendor2(mgmt_class))
		return IBEMU_VENDOR2_DATA_OFF;
	return IBEMU_MAD_HDR_LEN;
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
	uint8_t flags = IBEMU_RMPP_FLAG_ACTIVE;
	uint32_t paylen = 0;

	if (seg == 1) {
		flags |= IBEMU_RMPP_FLAG_FIRST;
		paylen = nsegs * RMPP_DATA - pad;
	}
	if (seg == nsegs) {
		flags |= IBEMU_RMPP_FLAG_LAST;
		paylen = RMPP_DATA - pad;
	}
	ibemu_rmpp_set_version(mad, IBEMU_RMPP_VERSION);
	ibemu_rmpp_set_type(mad, IBEMU_RMPP_TYPE_DATA);
	ibemu_rmpp_set_resp_time(mad, 0);
	ibemu_rmpp_set_flags(mad, flags);
	ibemu_rmpp_set_status(mad, 0);
	ibemu_rmpp_set_seg_num(mad, seg);
	ibemu_rmpp_set_paylen(mad, paylen);
}

int ibemu__sess_rmpp_send(struct ibemu_engine *e, uint32_t port,
			  const struct ibemu_mad_msg *tmpl, const uint8_t *mad,
			  uint32_t len)
{
	uint32_t hdr = hdr_len(ibemu_mad_get_mgmt_class(tmpl->mad));
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
	ibemu_daemon_log(
		d,
		"RMPP: dropped segment %u (class 0x%02x method 0x%02x "
		"TID 0x%016llx) for agent %u of process %ld at %s "
		"port %u: %s; %llu dropped so far",
		ibemu_rmpp_get_seg_num(mad), ibemu_mad_get_mgmt_class(mad),
		ibemu_mad_get_method(mad),
		(unsigned long long)ibemu_mad_get_tid(mad), a->id,
		(long)a->stream->pid, d->topo->nodes[a->stream->node].name,
		a->stream->port, why, (unsigned long long)s->rmpp_dropped);
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
	uint64_t tid = ibemu_mad_get_tid(m->mad);

	for (r = a->rmpps; r; r = r->next)
		if (r->tid == tid && r->src_qp == m->src_qp &&
		    r->slid == m->slid &&
		    r->mgmt_class == ibemu_mad_get_mgmt_class(m->mad) &&
		    r->class_version == ibemu_mad_get_class_version(m->mad) &&
		    r->method == ibemu_mad_get_method(m->mad))
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
	uint32_t hdr = hdr_len(ibemu_mad_get_mgmt_class(last));
	uint32_t paylen = ibemu_rmpp_get_paylen(last);
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
	if (ibemu_rmpp_get_flags(mad) & IBEMU_RMPP_FLAG_LAST) {
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
	if (ibemu_rmpp_get_paylen(mad) >
	    max_segs(ibemu_mad_get_mgmt_class(mad)) * RMPP_DATA) {
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
	r->tid = ibemu_mad_get_tid(mad);
	r->src_qp = m->src_qp;
	r->slid = m->slid;
	r->mgmt_class = ibemu_mad_get_mgmt_class(mad);
	r->class_version = ibemu_mad_get_class_version(mad);
	r->method = ibemu_mad_get_method(mad);
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
	uint32_t seg = ibemu_rmpp_get_seg_num(mad);

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
	if (!(ibemu_rmpp_get_flags(mad) & IBEMU_RMPP_FLAG_LAST))
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
	int first = ibemu_rmpp_get_flags(mad) & IBEMU_RMPP_FLAG_FIRST;
	uint32_t seg = ibemu_rmpp_get_seg_num(mad);

	if (ibemu_rmpp_get_status(mad)) {
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
	if (ibemu_rmpp_get_version(mad) != IBEMU_RMPP_VERSION) {
		dropped(a, mad, "an RMPP version other than 1");
		return 0;
	}
	switch (ibemu_rmpp_get_type(mad)) {
	case IBEMU_RMPP_TYPE_DATA:
		return rmpp_data(a, m, out, len);
	case IBEMU_RMPP_TYPE_ACK:
	case IBEMU_RMPP_TYPE_STOP:
	case IBEMU_RMPP_TYPE_ABORT:
		dropped(a, mad,
			"an ACK, STOP or ABORT, which only the kernel reads");
		return 0;
	default:
		dropped(a, mad, "an unknown RMPPType");
		return 0;
	}
}
