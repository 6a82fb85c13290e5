/* SPDX-License-Identifier: MIT */
/*
 * Traffic study internals shared by traffic.c (generation and the packet
 * path), traffic_pattern.c (who sends to whom) and traffic_report.c
 * (results). Not for other users.
 */
#ifndef IBEMU_TRAFFIC_INT_H
#define IBEMU_TRAFFIC_INT_H

#include "hca.h"
#include "traffic.h"
#include "util.h"

/* LRH + BTH: an RC SEND packet without extended headers (IBA 9.2). */
#define IBEMU_TRAFFIC_HDR_BYTES (IBEMU_LRH_BYTES + IBEMU_BTH_BYTES)

/* xoshiro256** seeded through splitmix64: small, fast, host independent. */
struct ibemu_traffic_rng {
	uint64_t s[4];
};

static inline uint64_t ibemu__splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t ibemu__rotl64(uint64_t x, unsigned k)
{
	return (x << k) | (x >> (64 - k));
}

static inline void ibemu__rng_seed(struct ibemu_traffic_rng *r, uint64_t seed,
				   uint64_t stream)
{
	/* Distinct streams start far apart in splitmix64's sequence. */
	uint64_t x = seed ^ ibemu__rotl64(stream * 0xd1342543de82ef95ull, 17);
	unsigned i;

	for (i = 0; i < 4; i++)
		r->s[i] = ibemu__splitmix64(&x);
}

static inline uint64_t ibemu__rng_next(struct ibemu_traffic_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = ibemu__rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = ibemu__rotl64(s[3], 45);
	return out;
}

/* Uniform in [0, n), n > 0, without modulo bias (multiply and reject). */
static inline uint64_t ibemu__rng_below(struct ibemu_traffic_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)ibemu__rng_next(r) * n;
	uint64_t low = (uint64_t)m, floor;

	if (low < n) {
		floor = -n % n;
		while (low < floor) {
			m = (unsigned __int128)ibemu__rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

struct ibemu_traffic_host {
	uint32_t node;
	uint8_t port;
	uint16_t lid;
	uint32_t pi;	    /* engine port index */
	uint32_t sw;	    /* node of the switch it is cabled to, or NONE */
	uint8_t lanes;	    /* its link */
	uint8_t speed;	    /* enum ibemu_speed */
	uint32_t ring_tail; /* last of its flows with data, or NONE */
	uint32_t ring_len;  /* flows in that ring */
	/* Congestion control: the flows it owes CNPs to, as a destination
	 * (first and last, linked by cnp_next), and when a throttled source
	 * asked to be woken up (UINT64_MAX: no wake-up pending). */
	uint32_t cnp_head, cnp_tail;
	uint64_t wake_ps;
};

/* How a stream picks the destination of each message. */
enum ibemu_traffic_dst {
	IBEMU_TRAFFIC_DST_FIXED,
	IBEMU_TRAFFIC_DST_ROTATE,
	IBEMU_TRAFFIC_DST_UNIFORM,
};

struct ibemu_traffic_stream {
	uint32_t src, dst; /* dst: DST_FIXED only */
	uint8_t how;	   /* enum ibemu_traffic_dst */
	uint8_t victim;
	uint32_t rot;	  /* DST_ROTATE: messages so far mod (hosts - 1) */
	uint64_t slot_ps; /* one message's wire time on the source link */
	uint64_t next_ps; /* start of the slot of its next message */
	struct ibemu_traffic_rng rng;
};

struct ibemu_traffic_flow {
	uint32_t src, dst;
	uint32_t ring_next; /* in its source host's ring */
	uint32_t msg_head;  /* pending messages (pool), or NONE */
	uint32_t msg_tail;
	uint32_t head_pkts_left; /* packets of the head message to send */
	uint8_t victim;
	uint8_t sl; /* of its packets: the path's, or the study's */
	uint64_t pkts_sent, pkts_delivered;
	uint64_t next_seq; /* sequence expected at delivery */
	uint64_t misordered;
	uint64_t msgs_created, msgs_delivered;
	uint64_t msgs_skipped; /* slots that found 'backlog' waiting */
	uint32_t queued;       /* messages waiting to be sent */
	uint64_t bytes;
	uint64_t last_ps; /* last delivery, absolute */
	/* Its congestion control state as a source (hca.h), used when the
	 * source port controls per QP: a flow stands for a QP. */
	struct ibemu_cc_src cc;
	uint64_t fecns;	   /* its packets that arrived marked */
	uint32_t cnp_owed; /* CNPs its destination has yet to send */
	uint32_t cnp_next; /* in its destination's CNP list, or NONE */
	uint8_t cnp_sl;	   /* SL of the CNPs: the reverse path's */
	uint16_t ccti_max;
	uint32_t series; /* its column in tr->series, or NONE */
};

/* A message created but not yet cut into packets. */
struct ibemu_traffic_msg {
	uint64_t t_created;
	uint32_t next;
};

/* One delivered message: which flow, how long it took. */
struct ibemu_traffic_lat {
	uint32_t flow;
	uint64_t ps;
};

struct ibemu_traffic_flow_stats {
	uint64_t p50, p99, max;
};

struct ibemu_traffic {
	struct ibemu_engine *e; /* borrowed */
	/* Stamped on its packets (the upper half of pkt->flow): one that a
	 * study stopped early left in the fabric is no later study's. */
	uint32_t id;
	const struct ibemu_topo *topo;
	struct ibemu_traffic_opts o;
	int cc;		  /* congestion control: opts cc is ON */
	uint64_t t0;	  /* engine time when the study began */
	uint64_t events0; /* engine events before it */
	uint16_t mtu;
	uint32_t msg_pkts;     /* packets per message, at least 1 */
	uint32_t last_payload; /* payload of a message's last packet */
	uint16_t full_blocks, last_blocks;
	uint64_t load_threshold; /* message in a slot if rng < this */
	/* Per-path SLs (opts path_sls), sorted by (slid, dlid), unique. */
	struct ibemu_traffic_sl *path_sls;
	size_t npath_sls;

	struct ibemu_traffic_host *hosts;
	uint32_t nhosts;
	uint32_t *host_of_port; /* [engine ports]: host index or NONE */

	struct ibemu_traffic_stream *streams;
	uint32_t nstreams, streams_live;

	struct ibemu_traffic_flow *flows;
	uint32_t nflows, cap_flows;
	uint32_t *flow_hash; /* open addressing: flow index or NONE */
	uint32_t hash_mask;

	struct ibemu_traffic_msg *msgs;
	uint32_t cap_msgs, free_msg;

	struct ibemu_traffic_lat *lat;
	size_t nlat, cap_lat;

	uint64_t msgs_created, msgs_delivered;
	uint64_t pkts_sent, pkts_delivered;
	uint64_t misdelivered; /* at a port that is not the destination */
	uint64_t last_ps;      /* last delivery, absolute */
	int err;
	int done;
	uint32_t attached; /* hosts[0..attached) hold their ports */

	/* Time series for a plot (opts 'series'), else NULL. */
	struct ibemu_traffic_series *series;

	/* Results, once done. */
	struct ibemu_port_counters *cnt0; /* counters when the study began */
	uint32_t *order;		  /* flows sorted by (src, dst) */
	struct ibemu_traffic_flow_stats *fstats; /* per flow index */
	struct ibemu_traffic_summary sum;
	double *fair_gbps; /* per flow index */
};

/*
 * Throughput of the plotted flows per time bin (bin-major: bin b, column
 * c at [b * cap_cols + c]) and the CCTI of their sources, sampled once per
 * bin as deliveries cross into it. Bins are 'bin_ps' wide from the
 * study's start; those past the duration are added as deliveries reach
 * them.
 */
struct ibemu_traffic_series {
	uint64_t bin_ps;
	uint32_t nbins, cap_bins;
	uint32_t sampled; /* bins [0, sampled) have their CCTI */
	uint32_t ncols, cap_cols;
	/* Columns each role may take, and has taken (by role). */
	uint32_t quota[3], used[3];
	uint32_t *col_flow; /* flow index of each column */
	uint64_t *bytes;    /* payload delivered */
	uint16_t *ccti;
};

/* traffic_series.c: see the definitions. */
int ibemu__traffic_series_create(struct ibemu_traffic *tr);
void ibemu__traffic_series_destroy(struct ibemu_traffic *tr);
uint32_t ibemu__traffic_series_flow(struct ibemu_traffic *tr, uint32_t fi);
void ibemu__traffic_series_add(struct ibemu_traffic *tr, uint32_t fi,
			       uint64_t now, uint32_t bytes);
void ibemu__traffic_series_finish(struct ibemu_traffic *tr);

/* The role of flow 'fi' in the study's pattern. */
enum ibemu_traffic_role ibemu__traffic_role(const struct ibemu_traffic *tr,
					    uint32_t fi);
/* Whether the pattern has a hotspot, contributors and victims. */
static inline int ibemu__traffic_has_roles(const struct ibemu_traffic *tr)
{
	return tr->o.pattern == IBEMU_TRAFFIC_INCAST ||
	       tr->o.pattern == IBEMU_TRAFFIC_CTREE;
}

/* traffic_fair.c: fills tr->fair_gbps and the summary's hotspot figures
 * (after the rest of the summary); 0 or -ENOMEM. */
int ibemu__traffic_fair(struct ibemu_traffic *tr);
/*
 * The transmitting ports (engine indices) of the path from host 'src' to
 * host 'dst' through the LFTs, the source HCA port first: at most 'max'
 * written; returns how many the path has, or 0 if it does not reach 'dst'.
 */
uint32_t ibemu__traffic_path(const struct ibemu_traffic *tr, uint32_t src,
			     uint32_t dst, uint32_t *ports, uint32_t max);
/* The payload rate in Gb/s a study reaches on a link of 'lanes' x 'speed'
 * (its messages' wire overhead counted as in the slots). */
double ibemu__traffic_link_gbps(const struct ibemu_traffic *tr, unsigned lanes,
				unsigned speed);

/* traffic_ctree.c: the streams of IBEMU_TRAFFIC_CTREE; 0 or -errno. */
/* traffic_pattern.c: where the victim sent by host 'v' goes when host
 * 'hot' is the hotspot (see INCAST victims in traffic.h); 'taken' marks
 * the hosts other victims go to. IBEMU_NONE if none. */
uint32_t ibemu__traffic_victim_dst(const struct ibemu_traffic *tr, uint32_t v,
				   uint32_t hot, const uint8_t *taken);
int ibemu__traffic_ctree_streams(struct ibemu_traffic *tr,
				 struct ibemu_diag *d);
/* traffic_pattern.c: appends a stream (tr->streams has room). */
struct ibemu_traffic_stream *ibemu__traffic_add_stream(struct ibemu_traffic *tr,
						       uint32_t src,
						       uint32_t dst, int how);

/* traffic_pattern.c: fills tr->streams from tr->o; 0 or -errno. */
int ibemu__traffic_streams(struct ibemu_traffic *tr, struct ibemu_diag *d);

/* traffic_report.c: computes the results once drained; 0 or -ENOMEM. */
int ibemu__traffic_finish(struct ibemu_traffic *tr);
void ibemu__traffic_flow_result(const struct ibemu_traffic *tr, uint32_t fi,
				struct ibemu_traffic_flow_result *out);

#endif
