// SPDX-License-Identifier: MIT
/*
 * Traffic studies over the engine: the study attaches the HCA ports of its
 * hosts (those no one else holds) like any other port owner; streams create
 * messages at slot times, each message waits in its flow's queue, and each
 * source HCA port pulls packets from its flows in round robin. Deliveries are checked (sequence
 * per flow) and timed. Every step of the packet path is O(1): flows are
 * found by hash, sources keep a ring of the flows that have data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rate.h"
#include "traffic_int.h"

static const char *const pattern_names[] = {
	[IBEMU_TRAFFIC_UNIFORM] = "uniform",
	[IBEMU_TRAFFIC_SHIFT] = "shift",
	[IBEMU_TRAFFIC_PERMUTATION] = "permutation",
	[IBEMU_TRAFFIC_ALLTOALL] = "alltoall",
	[IBEMU_TRAFFIC_BISECTION] = "bisection",
	[IBEMU_TRAFFIC_INCAST] = "incast",
	[IBEMU_TRAFFIC_PAIRS] = "pairs",
	[IBEMU_TRAFFIC_CTREE] = "congestion-tree",
};

void ibemu_traffic_opts_init(struct ibemu_traffic_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pattern = IBEMU_TRAFFIC_UNIFORM;
	o->shift = 1;
	o->msg_bytes = 65536;
	o->load = 1.0;
	o->duration_ps = 100000000ull; /* 100 us */
	o->seed = 1;
}

int ibemu_traffic_pattern_parse(const char *s, enum ibemu_traffic_pattern *out)
{
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(pattern_names); i++) {
		if (!strcmp(s, pattern_names[i])) {
			*out = (enum ibemu_traffic_pattern)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ibemu_traffic_pattern_name(enum ibemu_traffic_pattern p)
{
	if ((unsigned)p >= IBEMU_ARRAY_SIZE(pattern_names))
		return "?";
	return pattern_names[p];
}

/* Flow table. */

static uint32_t flow_hash(uint32_t src, uint32_t dst)
{
	uint64_t x = (uint64_t)src << 32 | dst;

	return (uint32_t)(ibemu__splitmix64(&x) >> 32);
}

static int hash_grow(struct ibemu_traffic *tr)
{
	uint32_t size = tr->hash_mask ? (tr->hash_mask + 1) * 2 : 1024, i, h;
	uint32_t *tab = malloc(size * sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	memset(tab, 0xff, size * sizeof(*tab));
	for (i = 0; i < tr->nflows; i++) {
		h = flow_hash(tr->flows[i].src, tr->flows[i].dst) & (size - 1);
		while (tab[h] != IBEMU_NONE)
			h = (h + 1) & (size - 1);
		tab[h] = i;
	}
	free(tr->flow_hash);
	tr->flow_hash = tab;
	tr->hash_mask = size - 1;
	return 0;
}

static int sl_cmp(const void *a, const void *b)
{
	const struct ibemu_traffic_sl *x = a, *y = b;

	if (x->slid != y->slid)
		return x->slid < y->slid ? -1 : 1;
	return x->dlid < y->dlid ? -1 : x->dlid > y->dlid;
}

/* The SL of the packets from host 'src' to host 'dst'. */
static uint8_t flow_sl(const struct ibemu_traffic *tr, uint32_t src,
		       uint32_t dst)
{
	struct ibemu_traffic_sl key = {.slid = tr->hosts[src].lid,
				       .dlid = tr->hosts[dst].lid};
	const struct ibemu_traffic_sl *hit;

	if (!tr->npath_sls)
		return tr->o.sl;
	hit = bsearch(&key, tr->path_sls, tr->npath_sls, sizeof(key), sl_cmp);
	return hit ? hit->sl : tr->o.sl;
}

/*
 * Copies the per-path SLs, sorted. 0, -EINVAL (an SL past 15, a pair
 * named twice with two SLs; in 'd') or -ENOMEM.
 */
static int copy_path_sls(struct ibemu_traffic *tr,
			 const struct ibemu_traffic_opts *o,
			 struct ibemu_diag *d)
{
	struct ibemu_traffic_sl *v;
	size_t i, k;

	if (!o->npath_sls)
		return 0;
	v = malloc(o->npath_sls * sizeof(*v));
	if (!v)
		return -ENOMEM;
	tr->path_sls = v;
	for (i = 0; i < o->npath_sls; i++) {
		if (o->path_sls[i].sl > 15)
			return ibemu_diag_error(d, NULL,
						"SL %u from LID %u to LID %u: "
						"expected 0..15",
						o->path_sls[i].sl,
						o->path_sls[i].slid,
						o->path_sls[i].dlid);
		v[i] = o->path_sls[i];
	}
	qsort(v, o->npath_sls, sizeof(*v), sl_cmp);
	for (i = 0, k = 0; i < o->npath_sls; i++) {
		if (k && !sl_cmp(&v[k - 1], &v[i])) {
			if (v[k - 1].sl != v[i].sl)
				return ibemu_diag_error(
					d, NULL,
					"LID %u to LID %u has two SLs, %u "
					"and %u",
					v[i].slid, v[i].dlid, v[k - 1].sl,
					v[i].sl);
			continue;
		}
		v[k++] = v[i];
	}
	tr->npath_sls = k;
	return 0;
}

/* The flow from 'src' to 'dst', created on first use; NONE on ENOMEM. */
static uint32_t flow_get(struct ibemu_traffic *tr, uint32_t src, uint32_t dst,
			 int victim)
{
	struct ibemu_traffic_flow *f;
	uint32_t h, fi;

	/* Keep the table at most half full so probes stay short. */
	if ((uint64_t)(tr->nflows + 1) * 2 > (uint64_t)tr->hash_mask + 1 &&
	    hash_grow(tr))
		return IBEMU_NONE;
	h = flow_hash(src, dst) & tr->hash_mask;
	while ((fi = tr->flow_hash[h]) != IBEMU_NONE) {
		if (tr->flows[fi].src == src && tr->flows[fi].dst == dst)
			return fi;
		h = (h + 1) & tr->hash_mask;
	}
	if (tr->nflows == IBEMU_TRAFFIC_MAX_FLOWS) {
		tr->err = -E2BIG;
		return IBEMU_NONE;
	}
	if (tr->nflows == tr->cap_flows) {
		uint32_t cap = tr->cap_flows ? tr->cap_flows * 2 : 64;

		f = realloc(tr->flows, cap * sizeof(*f));
		if (!f)
			return IBEMU_NONE;
		tr->flows = f;
		tr->cap_flows = cap;
	}
	fi = tr->nflows++;
	f = &tr->flows[fi];
	memset(f, 0, sizeof(*f));
	f->src = src;
	f->dst = dst;
	f->ring_next = IBEMU_NONE;
	f->msg_head = f->msg_tail = IBEMU_NONE;
	f->victim = (uint8_t)victim;
	f->sl = flow_sl(tr, src, dst);
	f->cnp_next = IBEMU_NONE;
	f->cnp_sl = flow_sl(tr, dst, src);
	f->series =
		tr->series ? ibemu__traffic_series_flow(tr, fi) : IBEMU_NONE;
	tr->flow_hash[h] = fi;
	return fi;
}

/* Message pool. */

static uint32_t msg_alloc(struct ibemu_traffic *tr)
{
	uint32_t i, m;

	if (tr->free_msg == IBEMU_NONE) {
		uint32_t cap = tr->cap_msgs ? tr->cap_msgs * 2 : 1024;
		struct ibemu_traffic_msg *msgs;

		if (cap <= tr->cap_msgs)
			return IBEMU_NONE;
		msgs = realloc(tr->msgs, cap * sizeof(*msgs));
		if (!msgs)
			return IBEMU_NONE;
		for (i = tr->cap_msgs; i < cap; i++)
			msgs[i].next = i + 1 < cap ? i + 1 : IBEMU_NONE;
		tr->msgs = msgs;
		tr->free_msg = tr->cap_msgs;
		tr->cap_msgs = cap;
	}
	m = tr->free_msg;
	tr->free_msg = tr->msgs[m].next;
	tr->msgs[m].next = IBEMU_NONE;
	return m;
}

static void msg_free(struct ibemu_traffic *tr, uint32_t m)
{
	tr->msgs[m].next = tr->free_msg;
	tr->free_msg = m;
}

/* Source rings: the flows of a host that have a packet to send. */

static void ring_add(struct ibemu_traffic *tr, struct ibemu_traffic_host *h,
		     uint32_t fi)
{
	struct ibemu_traffic_flow *f = &tr->flows[fi];

	if (h->ring_tail == IBEMU_NONE) {
		f->ring_next = fi;
	} else {
		f->ring_next = tr->flows[h->ring_tail].ring_next;
		tr->flows[h->ring_tail].ring_next = fi;
	}
	h->ring_tail = fi;
	h->ring_len++;
}

/* Message generation. */

static uint32_t pick_dst(struct ibemu_traffic *tr,
			 struct ibemu_traffic_stream *s)
{
	uint32_t n = tr->nhosts, d;

	switch (s->how) {
	case IBEMU_TRAFFIC_DST_ROTATE:
		d = (s->src + 1 + s->rot) % n;
		s->rot = (s->rot + 1) % (n - 1);
		return d;
	case IBEMU_TRAFFIC_DST_UNIFORM:
		d = (uint32_t)ibemu__rng_below(&s->rng, n - 1);
		return d >= s->src ? d + 1 : d;
	default:
		return s->dst;
	}
}

/*
 * Moves stream 's' to the next slot that creates a message (the current
 * one included when 'first') and sets its timer; a stream whose next slot
 * starts at or after the end of the window is finished.
 */
static void stream_schedule(struct ibemu_traffic *tr, uint32_t si, int first)
{
	struct ibemu_traffic_stream *s = &tr->streams[si];
	uint64_t end = tr->t0 + tr->o.duration_ps;

	for (;;) {
		if (!first)
			s->next_ps += s->slot_ps;
		first = 0;
		if (s->next_ps >= end) {
			tr->streams_live--;
			return;
		}
		if (tr->load_threshold == UINT64_MAX ||
		    ibemu__rng_next(&s->rng) < tr->load_threshold)
			break;
	}
	ibemu_engine_timer(tr->e, tr->hosts[s->src].pi, s->next_ps, si);
}

static void create_message(struct ibemu_traffic *tr, uint32_t si)
{
	struct ibemu_traffic_stream *s = &tr->streams[si];
	struct ibemu_traffic_host *h = &tr->hosts[s->src];
	struct ibemu_traffic_flow *f;
	uint32_t fi, m;

	if (tr->msgs_created == IBEMU_TRAFFIC_MAX_MSGS) {
		tr->err = -E2BIG;
		return;
	}
	fi = flow_get(tr, s->src, pick_dst(tr, s), s->victim);
	m = fi == IBEMU_NONE ? IBEMU_NONE : msg_alloc(tr);
	if (m == IBEMU_NONE) {
		if (!tr->err)
			tr->err = -ENOMEM;
		return;
	}
	f = &tr->flows[fi];
	if (tr->o.backlog && f->queued == tr->o.backlog) {
		/* The sender has its fill of messages waiting: it makes none
		 * this slot, as a program with that many work requests
		 * outstanding waits for one to complete. */
		msg_free(tr, m);
		f->msgs_skipped++;
		return;
	}
	f->queued++;
	tr->msgs[m].t_created = ibemu_engine_now(tr->e);
	f->msgs_created++;
	tr->msgs_created++;
	if (f->msg_head == IBEMU_NONE) {
		int idle =
			h->ring_tail == IBEMU_NONE && h->cnp_head == IBEMU_NONE;

		f->msg_head = f->msg_tail = m;
		f->head_pkts_left = tr->msg_pkts;
		ring_add(tr, h, fi);
		/* A port with nothing to send pulls again only when kicked;
		 * a busy or credit-blocked one pulls by itself. */
		if (idle)
			ibemu_engine_kick(tr->e, h->pi);
	} else {
		tr->msgs[f->msg_tail].next = m;
		f->msg_tail = m;
	}
}

/* A timer that wakes a source whose flows were all throttled. */
#define WAKE_COOKIE (1ull << 63)

static void timer_cb(void *ctx, uint32_t port, uint64_t cookie)
{
	struct ibemu_traffic *tr = ctx;
	uint32_t si = (uint32_t)cookie;

	if (cookie & WAKE_COOKIE) {
		tr->hosts[(uint32_t)cookie].wake_ps = UINT64_MAX;
		ibemu_engine_kick(tr->e, port);
		return;
	}
	IBEMU_BUG_ON(cookie >= tr->nstreams);
	if (tr->err) {
		tr->streams_live--;
		return;
	}
	create_message(tr, si);
	stream_schedule(tr, si, 0);
}

/* The packet path. */

/*
 * A CNP from destination host 'h' for the first flow it owes one (A10.3.3:
 * LRH and BTH with the CNP opcode, BECN set, on the reverse path's SL),
 * or NULL if it owes none or lacks the credit.
 */
static struct ibemu_pkt *cnp_pull(struct ibemu_traffic *tr,
				  struct ibemu_traffic_host *h,
				  const uint16_t *credits, int *blocked)
{
	uint32_t fi = h->cnp_head;
	struct ibemu_traffic_flow *f = &tr->flows[fi];
	struct ibemu_pkt *p;

	if (credits[f->cnp_sl] < 1) {
		*blocked = 1;
		return NULL;
	}
	p = ibemu_engine_pkt_alloc(tr->e);
	if (!p) {
		tr->err = -ENOMEM;
		return NULL;
	}
	ibemu_pkt_set_size(p, IBEMU_CNP_HDR_BYTES, 0);
	p->dlid = tr->hosts[f->src].lid;
	p->sl = f->cnp_sl;
	p->flow = (uint64_t)tr->id << 32 | fi;
	p->opcode = IBEMU_OPCODE_CNP;
	p->becn = 1;
	p->t_created = ibemu_engine_now(tr->e);
	if (--f->cnp_owed == 0) {
		h->cnp_head = f->cnp_next;
		if (h->cnp_head == IBEMU_NONE)
			h->cnp_tail = IBEMU_NONE;
		f->cnp_next = IBEMU_NONE;
	}
	return p;
}

/*
 * Turns the ring of host 'h' past the flows its congestion control holds
 * back, to the first that may send now; IBEMU_NONE if all must wait, with
 * a wake-up set for the first of them.
 */
static uint32_t next_unthrottled(struct ibemu_traffic *tr,
				 struct ibemu_traffic_host *h)
{
	uint64_t first = UINT64_MAX, when;
	uint32_t k, fi;

	for (k = 0; k < h->ring_len; k++) {
		fi = tr->flows[h->ring_tail].ring_next;
		when = ibemu_hca_cc_wait(tr->e, h->pi, tr->flows[fi].sl,
					 &tr->flows[fi].cc);
		if (!when)
			return fi;
		if (when < first)
			first = when;
		h->ring_tail = fi; /* its turn passes */
	}
	if (first < h->wake_ps) {
		h->wake_ps = first;
		ibemu_engine_timer(tr->e, h->pi, first,
				   WAKE_COOKIE | (uint64_t)(h - tr->hosts));
	}
	return IBEMU_NONE;
}

static struct ibemu_pkt *pull_cb(void *ctx, uint32_t port,
				 const uint16_t *credits, int *blocked)
{
	struct ibemu_traffic *tr = ctx;
	uint32_t hi = tr->host_of_port[port], fi;
	struct ibemu_traffic_host *h;
	struct ibemu_traffic_flow *f;
	struct ibemu_pkt *p;
	int last;

	if (hi == IBEMU_NONE)
		return NULL;
	h = &tr->hosts[hi];
	/* Congestion notifications go before data, as ACKs would. */
	if (h->cnp_head != IBEMU_NONE) {
		p = cnp_pull(tr, h, credits, blocked);
		if (p || tr->err)
			return p;
	}
	if (h->ring_tail == IBEMU_NONE)
		return NULL;
	fi = tr->cc ? next_unthrottled(tr, h)
		    : tr->flows[h->ring_tail].ring_next;
	if (fi == IBEMU_NONE)
		return NULL;
	f = &tr->flows[fi];
	last = f->head_pkts_left == 1;
	if (credits[f->sl] < (last ? tr->last_blocks : tr->full_blocks)) {
		*blocked = 1;
		return NULL;
	}
	p = ibemu_engine_pkt_alloc(tr->e);
	if (!p) {
		tr->err = -ENOMEM;
		return NULL;
	}
	ibemu_pkt_set_size(p, IBEMU_TRAFFIC_HDR_BYTES,
			   last ? tr->last_payload : tr->mtu);
	p->dlid = tr->hosts[f->dst].lid;
	p->sl = f->sl;
	p->flow = (uint64_t)tr->id << 32 | fi;
	p->cookie = f->pkts_sent++; /* the flow's packet sequence number */
	p->t_created = tr->msgs[f->msg_head].t_created;
	p->last = (uint8_t)last;
	tr->pkts_sent++;
	if (tr->cc)
		ibemu_hca_cc_sent(tr->e, port, f->sl, &f->cc, p->wire_bytes);

	if (--f->head_pkts_left == 0) {
		uint32_t m = f->msg_head;

		f->msg_head = tr->msgs[m].next;
		msg_free(tr, m);
		f->queued--;
		if (f->msg_head == IBEMU_NONE)
			f->msg_tail = IBEMU_NONE;
		else
			f->head_pkts_left = tr->msg_pkts;
	}
	if (f->msg_head == IBEMU_NONE) {
		/* Out of the ring: nothing left to send. */
		if (h->ring_tail == fi)
			h->ring_tail = IBEMU_NONE;
		else
			tr->flows[h->ring_tail].ring_next = f->ring_next;
		f->ring_next = IBEMU_NONE;
		h->ring_len--;
	} else {
		/* Round robin: the next flow's turn. */
		h->ring_tail = fi;
	}
	return p;
}

static int lat_push(struct ibemu_traffic *tr, uint32_t fi, uint64_t ps)
{
	if (tr->nlat == tr->cap_lat) {
		size_t cap = tr->cap_lat ? tr->cap_lat * 2 : 4096;
		struct ibemu_traffic_lat *l;

		l = realloc(tr->lat, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		tr->lat = l;
		tr->cap_lat = cap;
	}
	tr->lat[tr->nlat].flow = fi;
	tr->lat[tr->nlat].ps = ps;
	tr->nlat++;
	return 0;
}

/* Destination port 'port' got a packet of flow 'fi' marked FECN: it owes
 * the source a CNP (A10.3.3), which its port sends first thing. */
static void cnp_owe(struct ibemu_traffic *tr, uint32_t port, uint32_t fi)
{
	struct ibemu_traffic_flow *f = &tr->flows[fi];
	struct ibemu_traffic_host *h = &tr->hosts[f->dst];

	ibemu_hca_cc_fecn(tr->e, port, 1);
	if (f->cnp_owed++)
		return; /* already in the list */
	if (h->cnp_tail == IBEMU_NONE) {
		h->cnp_head = fi;
		if (h->ring_tail == IBEMU_NONE)
			ibemu_engine_kick(tr->e, h->pi); /* idle: wake it */
	} else {
		tr->flows[h->cnp_tail].cnp_next = fi;
	}
	h->cnp_tail = fi;
}

/* The source of flow 'fi' got a CNP: a BECN for the flow (A10.3.1). */
static void cnp_received(struct ibemu_traffic *tr, uint32_t port, uint32_t fi)
{
	struct ibemu_traffic_flow *f = &tr->flows[fi];
	/* A study's flows have no QPs: the log names a flow by its index. */
	struct ibemu_cc_event ev = {
		.local_qp = fi & 0xffffff,
		.remote_qp = fi & 0xffffff,
		.remote_lid = tr->hosts[f->dst].lid,
		.service_type = 0, /* RC, the transport a study mimics */
	};
	unsigned ccti;

	if (!tr->cc)
		return;
	ibemu_hca_cc_becn(tr->e, port, f->sl, &f->cc, &ev);
	ccti = ibemu_hca_cc_ccti(tr->e, port, f->sl, &f->cc);
	if (ccti > f->ccti_max)
		f->ccti_max = (uint16_t)ccti;
}

static void deliver_cb(void *ctx, uint32_t port, struct ibemu_pkt *p)
{
	struct ibemu_traffic *tr = ctx;
	uint64_t now = ibemu_engine_now(tr->e);
	struct ibemu_traffic_flow *f;
	uint32_t fi = (uint32_t)p->flow;

	if (p->flow >> 32 != tr->id) {
		/* Left by a study stopped before the fabric drained. */
		ibemu_engine_pkt_free(tr->e, p);
		return;
	}
	IBEMU_BUG_ON(fi >= tr->nflows);
	f = &tr->flows[fi];
	if (p->opcode == IBEMU_OPCODE_CNP) {
		cnp_received(tr, port, fi);
		ibemu_engine_pkt_free(tr->e, p);
		return;
	}
	if (p->fecn) {
		f->fecns++;
		if (tr->cc)
			cnp_owe(tr, port, fi);
	}
	if (tr->hosts[f->dst].pi != port)
		tr->misdelivered++;
	/* Exactly once and in order: sequence numbers come one by one. */
	if (p->cookie != f->next_seq)
		f->misordered++;
	if (p->cookie >= f->next_seq)
		f->next_seq = p->cookie + 1;
	f->pkts_delivered++;
	tr->pkts_delivered++;
	f->bytes += p->last ? tr->last_payload : tr->mtu;
	if (f->series != IBEMU_NONE)
		ibemu__traffic_series_add(tr, fi, now,
					  p->last ? tr->last_payload : tr->mtu);
	if (p->last) {
		f->msgs_delivered++;
		tr->msgs_delivered++;
		f->last_ps = now;
		tr->last_ps = now;
		if (lat_push(tr, fi, now - p->t_created))
			tr->err = -ENOMEM;
	}
	ibemu_engine_pkt_free(tr->e, p);
}

/* A study has no management agent: MADs to its ports find no taker. */
static const struct ibemu_port_ops traffic_ops = {
	.pull = pull_cb,
	.deliver = deliver_cb,
	.timer = timer_cb,
};

/* Setting up. */

static int check_opts(const struct ibemu_traffic_opts *o, uint16_t mtu,
		      struct ibemu_diag *d)
{
	if (!(o->load > 0.0 && o->load <= 1.0))
		return ibemu_diag_error(d, NULL,
					"load %g: expected a fraction of the "
					"link rate in (0, 1]",
					o->load);
	/* Slots without a message cost a draw each: keep them bounded. */
	if (o->load < 0.001)
		return ibemu_diag_error(d, NULL,
					"load %g: at least 0.001 is supported",
					o->load);
	if (!ibemu_mtu_valid(mtu))
		return ibemu_diag_error(
			d, NULL, "MTU %u: expected " IBEMU_MTU_NAMES, mtu);
	/* Virtual time is 64-bit picoseconds: keep the end far from wrap. */
	if (!o->duration_ps || o->duration_ps > UINT64_MAX / 4)
		return ibemu_diag_error(d, NULL,
					"duration must be more than 0 and at "
					"most 2^62 ps");
	if (o->sl > 15)
		return ibemu_diag_error(d, NULL, "SL %u: expected 0..15",
					o->sl);
	if (o->msg_bytes > IBEMU_TRAFFIC_MAX_MSG_BYTES)
		return ibemu_diag_error(d, NULL,
					"message size %llu bytes: IBA messages "
					"carry at most 2^31 bytes",
					(unsigned long long)o->msg_bytes);
	/* Packets per message are counted in 32 bits. */
	if (o->msg_bytes > (uint64_t)mtu * 0x7fffffffull)
		return ibemu_diag_error(d, NULL,
					"message size %llu bytes is too large",
					(unsigned long long)o->msg_bytes);
	return 0;
}

/* Whether (node, port) is a host a study may use: a cabled HCA port that
 * nobody else holds, or whose holder moves no data there and lends it (a
 * subnet manager's HCA: ibemu_engine_port_usable()). */
static int host_usable(const struct ibemu_engine *e, uint32_t node,
		       unsigned port)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);

	return t->nodes[node].type == IBEMU_NODE_HCA &&
	       t->nodes[node].ports[port].link != IBEMU_NONE &&
	       ibemu_engine_port_usable(e,
					ibemu_engine_port_index(e, node, port));
}

static int find_hosts(struct ibemu_traffic *tr, struct ibemu_diag *d)
{
	const struct ibemu_topo *t = tr->topo;
	uint32_t nports = ibemu_engine_nports(tr->e), i, n = 0, total = 0;
	unsigned p;

	for (i = 0; i < t->nnodes; i++)
		total += t->nodes[i].nports + 1u;
	if (total != nports)
		return ibemu_diag_error(d, NULL,
					"the engine was not built from this "
					"topology");
	tr->host_of_port = malloc(nports * sizeof(*tr->host_of_port));
	if (!tr->host_of_port)
		return -ENOMEM;
	memset(tr->host_of_port, 0xff, nports * sizeof(*tr->host_of_port));
	for (i = 0; i < t->nnodes; i++)
		for (p = 1; p <= t->nodes[i].nports; p++)
			n += host_usable(tr->e, i, p);
	tr->hosts = calloc(n ? n : 1, sizeof(*tr->hosts));
	if (!tr->hosts)
		return -ENOMEM;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *tn = &t->nodes[i];

		if (tn->type != IBEMU_NODE_HCA)
			continue;
		for (p = 1; p <= tn->nports; p++) {
			const struct ibemu_topo_port *tp = &tn->ports[p];
			const struct ibemu_topo_link *l;
			struct ibemu_traffic_host *h;

			/* A port someone else holds is not the study's. */
			if (!host_usable(tr->e, i, p))
				continue;
			l = &t->links[tp->link];
			h = &tr->hosts[tr->nhosts];
			h->node = i;
			h->port = (uint8_t)p;
			h->pi = ibemu_engine_port_index(tr->e, i, p);
			h->lid = ibemu_engine_get_lid(tr->e, i, p);
			h->sw = t->nodes[tp->peer_node].type ==
						IBEMU_NODE_SWITCH
					? tp->peer_node
					: IBEMU_NONE;
			h->lanes = l->width;
			h->speed = (uint8_t)l->speed;
			h->ring_tail = IBEMU_NONE;
			h->cnp_head = h->cnp_tail = IBEMU_NONE;
			h->wake_ps = UINT64_MAX;
			if (!h->lid)
				return ibemu_diag_error(d, NULL,
							"%s:%u has no LID: "
							"apply routes first",
							tn->name, p);
			tr->host_of_port[h->pi] = tr->nhosts++;
		}
	}
	return 0;
}

/*
 * Sets every stream's slot and checks that the messages it is expected to
 * create fit IBEMU_TRAFFIC_MAX_MSGS (0 or -EINVAL in 'd').
 */
static int stream_slots(struct ibemu_traffic *tr, struct ibemu_diag *d)
{
	uint64_t full_ps, last_ps;
	double expect = 0;
	uint32_t i;

	for (i = 0; i < tr->nstreams; i++) {
		struct ibemu_traffic_stream *s = &tr->streams[i];
		const struct ibemu_traffic_host *h = &tr->hosts[s->src];
		enum ibemu_speed sp = (enum ibemu_speed)h->speed;

		/* A slot is the time the engine takes to send one message's
		 * packets back to back, so load 1 saturates the link. */
		full_ps = ibemu_link_serialize_ps(
			h->lanes, sp,
			IBEMU_TRAFFIC_HDR_BYTES + tr->mtu + IBEMU_ICRC_BYTES +
				IBEMU_VCRC_BYTES);
		last_ps = ibemu_link_serialize_ps(
			h->lanes, sp,
			IBEMU_TRAFFIC_HDR_BYTES +
				((tr->last_payload + 3u) & ~3u) +
				IBEMU_ICRC_BYTES + IBEMU_VCRC_BYTES);
		s->slot_ps = (tr->msg_pkts - 1) * full_ps + last_ps;
		/* The source's message rate: no shorter slot than that. */
		if (s->slot_ps < tr->o.min_slot_ps)
			s->slot_ps = tr->o.min_slot_ps;
		expect += ((double)(tr->o.duration_ps / s->slot_ps) + 1) *
			  tr->o.load;
	}
	if (expect > IBEMU_TRAFFIC_MAX_MSGS)
		return ibemu_diag_error(
			d, NULL,
			"the study would create about %.0f messages, more than "
			"the %u a study may hold; shorten the duration, send "
			"larger messages or lower the load",
			expect, IBEMU_TRAFFIC_MAX_MSGS);
	return 0;
}

static void start_streams(struct ibemu_traffic *tr)
{
	uint32_t i;

	for (i = 0; i < tr->nstreams; i++) {
		struct ibemu_traffic_stream *s = &tr->streams[i];

		ibemu__rng_seed(&s->rng, tr->o.seed, i);
		/* Sources start at random phases so they do not march in
		 * lock step. */
		s->next_ps = tr->t0 + ibemu__rng_below(&s->rng, s->slot_ps);
		tr->streams_live++;
		stream_schedule(tr, i, 1);
	}
}

int ibemu_traffic_create(struct ibemu_engine *e, const struct ibemu_topo *t,
			 const struct ibemu_traffic_opts *o,
			 struct ibemu_traffic **out, struct ibemu_diag *d)
{
	struct ibemu_traffic *tr;
	struct ibemu_pkt tmp;
	uint32_t i, nports;
	uint64_t pkts;
	int ret;

	static uint32_t studies; /* numbers the studies of this process */

	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->id = ++studies;
	tr->e = e;
	tr->topo = t;
	tr->o = *o;
	tr->o.pairs = NULL; /* borrowed only during create */
	tr->o.path_sls = NULL;
	tr->cc = o->cc == IBEMU_TRAFFIC_CC_ON;
	tr->mtu = o->mtu ? o->mtu : tr->topo->defaults.mtu;
	tr->free_msg = IBEMU_NONE;
	ret = check_opts(o, tr->mtu, d);
	if (!ret)
		ret = copy_path_sls(tr, o, d);
	if (ret)
		goto err_free;

	pkts = o->msg_bytes ? (o->msg_bytes + tr->mtu - 1) / tr->mtu : 1;
	tr->msg_pkts = (uint32_t)pkts;
	tr->last_payload = (uint32_t)(o->msg_bytes - (pkts - 1) * tr->mtu);
	ibemu_pkt_set_size(&tmp, IBEMU_TRAFFIC_HDR_BYTES, tr->mtu);
	tr->full_blocks = tmp.blocks;
	ibemu_pkt_set_size(&tmp, IBEMU_TRAFFIC_HDR_BYTES, tr->last_payload);
	tr->last_blocks = tmp.blocks;
	/* A double in (0, 1) times 2^64 is exact and below 2^64. */
	tr->load_threshold =
		o->load >= 1.0 ? UINT64_MAX
			       : (uint64_t)(o->load * 18446744073709551616.0);
	/* A study starts on a fabric at rest, so that it reports the same
	 * whether it runs first or after another. */
	ibemu_engine_settle(e);
	tr->t0 = ibemu_engine_now(e);
	tr->events0 = ibemu_engine_events(e);

	ret = find_hosts(tr, d);
	if (ret)
		goto err_free;
	tr->o.pairs = o->pairs;
	ret = ibemu__traffic_streams(tr, d);
	tr->o.pairs = NULL;
	if (ret)
		goto err_free;
	ret = stream_slots(tr, d);
	if (!ret && o->series)
		ret = ibemu__traffic_series_create(tr);
	if (ret)
		goto err_free;
	ret = hash_grow(tr);
	if (ret)
		goto err_free;
	nports = ibemu_engine_nports(e);
	tr->cnt0 = calloc(nports, sizeof(*tr->cnt0));
	if (!tr->cnt0) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < nports; i++)
		ibemu_engine_counters(e, i, &tr->cnt0[i]);

	for (i = 0; i < tr->nhosts; i++) {
		/* find_hosts() took only ports free or lent: -ENOMEM. */
		ret = ibemu_engine_port_borrow(e, tr->hosts[i].pi, &traffic_ops,
					       tr);
		if (ret)
			goto err_free;
		tr->attached++;
	}
	start_streams(tr);
	*out = tr;
	return 0;

err_free:
	ibemu_traffic_destroy(tr);
	return ret;
}

void ibemu_traffic_destroy(struct ibemu_traffic *tr)
{
	if (!tr)
		return;
	/* Its ports go back to nobody, or to the owner that lent them:
	 * timers still queued reach no one. */
	while (tr->attached)
		ibemu_engine_port_unborrow(tr->e, tr->hosts[--tr->attached].pi,
					   tr);
	ibemu__traffic_series_destroy(tr);
	free(tr->fair_gbps);
	free(tr->path_sls);
	free(tr->fstats);
	free(tr->order);
	free(tr->cnt0);
	free(tr->lat);
	free(tr->msgs);
	free(tr->flow_hash);
	free(tr->flows);
	free(tr->streams);
	free(tr->host_of_port);
	free(tr->hosts);
	free(tr);
}

/* Running. */

int ibemu_traffic_step(struct ibemu_traffic *tr, size_t max_events, int *done)
{
	int ret;

	*done = tr->done;
	if (tr->done || tr->err)
		return tr->err;
	ibemu_engine_run(tr->e, UINT64_MAX, max_events);
	if (tr->err)
		return tr->err;
	if (ibemu_engine_pending(tr->e))
		return 0;
	/* Nothing left to happen: every stream has finished. */
	IBEMU_BUG_ON(tr->streams_live);
	if (ibemu_engine_in_flight(tr->e)) {
		tr->err = -EDEADLK;
		return tr->err;
	}
	if (tr->msgs_delivered != tr->msgs_created ||
	    tr->pkts_delivered != tr->pkts_sent) {
		/* Data VLs never drop: a packet vanished on a missing route. */
		tr->err = -EIO;
		return tr->err;
	}
	ret = ibemu__traffic_finish(tr);
	if (ret) {
		tr->err = ret;
		return ret;
	}
	tr->done = 1;
	*done = 1;
	return 0;
}

int ibemu_traffic_run(struct ibemu_traffic *tr)
{
	int done = 0, ret;

	do {
		ret = ibemu_traffic_step(tr, 1u << 20, &done);
	} while (!ret && !done);
	return ret;
}

void ibemu_traffic_progress(const struct ibemu_traffic *tr,
			    struct ibemu_traffic_progress *out)
{
	uint64_t now = ibemu_engine_now(tr->e) - tr->t0;

	memset(out, 0, sizeof(*out));
	out->now_ps = now;
	out->duration_ps = tr->o.duration_ps;
	out->permille = now >= tr->o.duration_ps
				? 1000
				: (uint32_t)((unsigned __int128)now * 1000 /
					     tr->o.duration_ps);
	out->msgs_created = tr->msgs_created;
	out->msgs_delivered = tr->msgs_delivered;
	out->pkts_in_fabric = ibemu_engine_in_flight(tr->e);
	out->done = tr->done;
}

/* Appends 'ps' as microseconds with up to 3 decimals, exactly. */
static void print_us(struct ibemu_buf *b, uint64_t ps)
{
	uint64_t ns = ps / 1000;

	if (ns % 1000)
		ibemu_buf_printf(b, "%llu.%03llu us",
				 (unsigned long long)(ns / 1000),
				 (unsigned long long)(ns % 1000));
	else
		ibemu_buf_printf(b, "%llu us", (unsigned long long)(ns / 1000));
}

void ibemu_traffic_progress_line(const struct ibemu_traffic *tr,
				 struct ibemu_buf *out)
{
	struct ibemu_traffic_progress p;

	ibemu_traffic_progress(tr, &p);
	ibemu_buf_printf(out, "traffic %s: %u.%u%% of ",
			 ibemu_traffic_pattern_name(tr->o.pattern),
			 p.permille / 10, p.permille % 10);
	print_us(out, p.duration_ps);
	ibemu_buf_puts(out, p.done ? ", done at " : ", virtual time ");
	print_us(out, p.now_ps);
	ibemu_buf_printf(
		out, ", %llu messages delivered, %llu in flight",
		(unsigned long long)p.msgs_delivered,
		(unsigned long long)(p.msgs_created - p.msgs_delivered));
}

uint32_t ibemu_traffic_host_number(const struct ibemu_engine *e, uint32_t node,
				   unsigned port)
{
	const struct ibemu_topo *t = ibemu_engine_topo(e);
	uint32_t i, n = 0;
	unsigned p;

	if (node >= t->nnodes || port < 1 || port > t->nodes[node].nports ||
	    !host_usable(e, node, port))
		return IBEMU_NONE;
	for (i = 0; i <= node; i++) {
		for (p = 1; p <= t->nodes[i].nports; p++) {
			if (i == node && p == port)
				return n;
			n += host_usable(e, i, p);
		}
	}
	return IBEMU_NONE;
}

uint32_t ibemu_traffic_nhosts(const struct ibemu_traffic *tr)
{
	return tr->nhosts;
}

void ibemu_traffic_host(const struct ibemu_traffic *tr, uint32_t h,
			uint32_t *node, unsigned *port)
{
	*node = tr->hosts[h].node;
	*port = tr->hosts[h].port;
}

uint32_t ibemu_traffic_host_index(const struct ibemu_traffic *tr, uint32_t node,
				  unsigned port)
{
	if (node >= tr->topo->nnodes || port > tr->topo->nodes[node].nports)
		return IBEMU_NONE;
	return tr->host_of_port[ibemu_engine_port_index(tr->e, node, port)];
}
