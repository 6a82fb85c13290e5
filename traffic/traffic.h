/* SPDX-License-Identifier: MIT */
/*
 * Traffic studies: synthetic message traffic between the hosts of a fabric,
 * generated inside the engine without any attached process, measured in
 * virtual time. A study owns the engine's upper-layer callbacks while it
 * runs: it creates messages at each source from the offered load, cuts
 * them into MTU packets, feeds them to the HCA ports and checks what the
 * fabric delivers. Results are per flow (source host to destination host),
 * overall, and per port transmitter (link utilization).
 *
 * Hosts are the cabled HCA ports, in node order then port order; host
 * indices below count them from 0.
 *
 * Messages: each stream (one per source for the patterns, one per pair for
 * IBEMU_TRAFFIC_PAIRS, one per victim) divides time into slots of one
 * message's wire time on its source link (every packet's LRH..VCRC at the
 * link's data rate), starting at a random phase within the first slot.
 * In each slot it creates one message with probability 'load' (a Bernoulli
 * process, the discrete form of Poisson arrivals; at load 1 exactly one per
 * slot, so the source link is exactly saturated). Only slots that start
 * before the duration create messages. Each stream has its own
 * xoshiro256** generator seeded from (seed, stream), so no result depends
 * on libc or on the host. Messages are RC SEND style: LRH + BTH headers
 * (20 bytes), payload up to the MTU, ICRC and VCRC; the last packet of a
 * message is marked.
 *
 * A source HCA port serves its flows with data in round robin, one packet
 * per turn; it does not skip the flow whose turn it is when that packet
 * lacks credit (it waits, which counts as PortXmitWait).
 *
 * Functions are not thread-safe; call them from the engine's thread.
 */
#ifndef IBEMU_TRAFFIC_H
#define IBEMU_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diag.h"
#include "engine.h"

/*
 * Bounds of one study, so that no options can make it take unbounded
 * memory: messages created (each costs a latency sample and, while it
 * waits, a pool entry: 32 bytes) and flows (about 100 bytes each). A study
 * expected to create more is refused at create; one that reaches either
 * bound while running fails with -E2BIG.
 */
#define IBEMU_TRAFFIC_MAX_MSGS	(1u << 22) /* 4,194,304 */
#define IBEMU_TRAFFIC_MAX_FLOWS (1u << 21) /* 2,097,152 */
/* IBA 9.7.1.1: a message carries at most 2^31 bytes. */
#define IBEMU_TRAFFIC_MAX_MSG_BYTES (1ull << 31)
/*
 * The shortest message slot the daemon lets a source use (min_slot_ps):
 * 20 ns, at most 50 million messages a second per source port. Real HCAs
 * have such a ceiling (a ConnectX-6 issues around 200 million messages a
 * second over all its queues and both ports); without one, tiny messages
 * multiply the engine's events per virtual second by a hundred.
 */
#define IBEMU_TRAFFIC_MIN_SLOT_PS 20000ull

enum ibemu_traffic_pattern {
	/* Each message to a host drawn uniformly among the others. */
	IBEMU_TRAFFIC_UNIFORM,
	/* Host i sends to host (i + shift) mod hosts. */
	IBEMU_TRAFFIC_SHIFT,
	/* A random cyclic permutation (Sattolo): no host sends to itself,
	 * every host receives from exactly one. */
	IBEMU_TRAFFIC_PERMUTATION,
	/* Host i sends its messages to i+1, i+2, ..., i-1 in turn. */
	IBEMU_TRAFFIC_ALLTOALL,
	/* Hosts [0, n/2) pair with a random matching of [n/2, 2*(n/2)),
	 * both directions; with an odd count the last host is idle. */
	IBEMU_TRAFFIC_BISECTION,
	/* 'incast_sources' hosts send to host 'incast_dst' (hotspot). */
	IBEMU_TRAFFIC_INCAST,
	/* The explicit (source, destination) list in 'pairs'. */
	IBEMU_TRAFFIC_PAIRS,
	/*
	 * A congestion tree on a fabric of leaf switches (switches with
	 * hosts): 'incast_sources' contributors on leaves other than the
	 * hotspot's send to host 'incast_dst' (default host 0). They are
	 * dealt over the other leaves in switch node order, one host per
	 * leaf per round, each leaf's hosts in host order; 0 (default) takes
	 * every host of those leaves. Then on each leaf with a contributor
	 * the last one also sends a victim flow, chosen as an INCAST victim's
	 * is: the tree is deeper (every branch crosses the spines into the
	 * hotspot's leaf), the victims share a branch's first links and
	 * buffers, never the hotspot's port. A fabric whose hotspot is the
	 * only leaf with hosts is refused.
	 */
	IBEMU_TRAFFIC_CTREE,
};

/* What a flow is in the study's experiment. */
enum ibemu_traffic_role {
	IBEMU_TRAFFIC_OTHER,	   /* patterns without a hotspot */
	IBEMU_TRAFFIC_CONTRIBUTOR, /* sends to the hotspot */
	IBEMU_TRAFFIC_VICTIM,	   /* an INCAST or CTREE victim */
};
/* "other", "contributor", "victim". */
const char *ibemu_traffic_role_name(enum ibemu_traffic_role r);

/*
 * The SL of the packets from LID 'slid' to LID 'dlid', where it is not
 * the study's 'sl': routes on virtual layers (ibemu-sm --routing dfsssp or
 * dor) give each path its own SL, which an SM dumps ('ibemu-sm --sl-dump')
 * and the study reads back ('ibemu traffic --sl-map').
 */
struct ibemu_traffic_sl {
	uint16_t slid, dlid;
	uint8_t sl;
};

/* One stream of IBEMU_TRAFFIC_PAIRS, as host indices. */
struct ibemu_traffic_pair {
	uint32_t src;
	uint32_t dst;
};

/*
 * Congestion control (IBA Annex A10) in a study. With it, a destination
 * host answers each packet that arrives marked FECN with a CNP to its
 * source (a study has no ACKs: A10.3.3's answer for unacknowledged
 * transports), and a source throttles each flow by the CCTI its CNPs
 * raise, as the source port's CACongestionSetting and Congestion Control
 * Table say (hca/cc.c; a flow stands for a QP). Without it the hosts act
 * as CAs that ignore congestion control: switches still mark FECN as
 * configured, nobody answers or slows down. Either way it is the subnet
 * manager's CC settings that decide what switches mark and how sources
 * throttle; a study changes none of them.
 */
enum ibemu_traffic_cc {
	IBEMU_TRAFFIC_CC_ON, /* default */
	IBEMU_TRAFFIC_CC_OFF,
};

struct ibemu_traffic_opts {
	enum ibemu_traffic_pattern pattern; /* default UNIFORM */
	enum ibemu_traffic_cc cc;	    /* default ON */
	uint32_t shift;			    /* SHIFT: default 1 */
	/* INCAST: the hotspot (default host 0) and how many hosts send to
	 * it: those after it in host order, wrapping (0: all others). */
	uint32_t incast_dst;
	uint32_t incast_sources;
	/*
	 * INCAST: for every switch cabled to a source, one victim flow from
	 * the last source on that switch (it sends to the hotspot too, one
	 * packet each in turn) to the first host after it that is not the
	 * hotspot, on neither its switch nor the hotspot's, and that its
	 * switch routes out of another port than the hotspot (failing that,
	 * the first not on its switch, else any but the hotspot). The victim
	 * shares the source's link and input buffer with a flow of the
	 * congestion tree, not the hotspot: it shows how congestion spreads
	 * to traffic that never goes near the hotspot (tree saturation).
	 */
	int victims;
	const struct ibemu_traffic_pair *pairs; /* PAIRS; read by create */
	size_t npairs;
	uint64_t msg_bytes; /* default 65536; 0 sends one empty packet */
	double load; /* of the source link's rate, wire bytes: 0.001..1 (1) */
	uint64_t duration_ps; /* messages created in [0, duration); 100 us */
	uint64_t seed;	      /* default 1 */
	uint8_t sl;	      /* default 0 */
	/* Per-path SLs that override 'sl' (read by create; any order, a
	 * pair named twice takes its last SL); NULL: none. */
	const struct ibemu_traffic_sl *path_sls;
	size_t npath_sls;
	uint16_t mtu; /* 256..4096; 0 (default): the topology's */
	/* A message slot lasts at least this long (the source's message
	 * rate); 0 (default): a message's wire time, however short. */
	uint64_t min_slot_ps;
	/* Record throughput and CCTI time series for a plot (traffic_plot.c);
	 * off by default, so a study without a plot pays nothing for it. */
	int series;
	/*
	 * At most this many messages of a flow wait at its source: a slot
	 * that finds them creates none, as a program with that many work
	 * requests outstanding waits for one to leave. Offered load is then
	 * what the fabric accepts, and a study ends soon after its duration.
	 * 0 (default): no bound.
	 */
	uint32_t backlog;
};

/* Sets the defaults documented above. */
void ibemu_traffic_opts_init(struct ibemu_traffic_opts *o);
/* "uniform", "shift", "permutation", "alltoall", "bisection", "incast",
 * "pairs", "congestion-tree". Returns 0 or -EINVAL. */
int ibemu_traffic_pattern_parse(const char *s, enum ibemu_traffic_pattern *out);
const char *ibemu_traffic_pattern_name(enum ibemu_traffic_pattern p);

struct ibemu_traffic;

/*
 * Prepares a study on engine 'e' built from topology 't' (both borrowed;
 * they must outlive the study; every host must have a LID and the switches
 * their LFTs, see ibemu_engine_apply_routes()). The study attaches the
 * HCA ports of its hosts (every cabled HCA port no other owner holds or
 * whose owner lends it: see ibemu_engine_port_borrow()) and schedules the first messages from the
 * engine's current time; it runs the engine (ibemu_traffic_step()), so
 * other owners' ports keep working meanwhile. Bad options are reported in
 * 'd' and give -EINVAL (a study expected to create more than
 * IBEMU_TRAFFIC_MAX_MSGS messages among them); -ENOMEM.
 */
int ibemu_traffic_create(struct ibemu_engine *e, const struct ibemu_topo *t,
			 const struct ibemu_traffic_opts *o,
			 struct ibemu_traffic **out, struct ibemu_diag *d);
/* Detaches its ports (packets still in the fabric stay the engine's). */
void ibemu_traffic_destroy(struct ibemu_traffic *tr);

/*
 * Processes at most 'max_events' engine events. Sets *done once every
 * message was generated and delivered and the fabric is idle; results are
 * then final. Returns 0; -EIO if packets were lost (the fabric went idle
 * with messages undelivered: a missing route); -EDEADLK if packets stay
 * stuck in buffers with nothing left to happen (a credit loop); -E2BIG
 * when it reached IBEMU_TRAFFIC_MAX_MSGS or IBEMU_TRAFFIC_MAX_FLOWS;
 * -ENOMEM.
 */
int ibemu_traffic_step(struct ibemu_traffic *tr, size_t max_events, int *done);
/* Steps until done; as ibemu_traffic_step(). */
int ibemu_traffic_run(struct ibemu_traffic *tr);

struct ibemu_traffic_progress {
	uint64_t now_ps;      /* virtual time since the study began */
	uint64_t duration_ps; /* generation window */
	uint32_t permille;    /* of the window elapsed, 0..1000 */
	uint64_t msgs_created;
	uint64_t msgs_delivered;
	uint64_t pkts_in_fabric;
	int done;
};

void ibemu_traffic_progress(const struct ibemu_traffic *tr,
			    struct ibemu_traffic_progress *out);
/* Appends one line (no newline) such as "traffic: 42.0% of 100 us ...". */
void ibemu_traffic_progress_line(const struct ibemu_traffic *tr,
				 struct ibemu_buf *out);

/* Number of hosts, and where host 'h' is. */
/*
 * Host number of HCA port (node, port) of the fabric of 'e' before a study
 * is created (to fill ibemu_traffic_opts): hosts are the cabled HCA ports
 * that no other owner holds (an attached process with queue pairs, say)
 * or that their owner lends (ibemu_engine_port_usable()), in node order.
 * IBEMU_NONE if it is not such a port.
 */
uint32_t ibemu_traffic_host_number(const struct ibemu_engine *e, uint32_t node,
				   unsigned port);

uint32_t ibemu_traffic_nhosts(const struct ibemu_traffic *tr);
void ibemu_traffic_host(const struct ibemu_traffic *tr, uint32_t h,
			uint32_t *node, unsigned *port);
/* Host index of (node, port), or IBEMU_NONE. */
uint32_t ibemu_traffic_host_index(const struct ibemu_traffic *tr, uint32_t node,
				  unsigned port);

/* Results of one flow (everything one source sent to one destination). */
struct ibemu_traffic_flow_result {
	uint32_t src, dst; /* host indices */
	int victim;	   /* an INCAST or CTREE victim flow */
	enum ibemu_traffic_role role;
	/* Its max-min fair share of its path's links (traffic_fair.c). */
	double fair_gbps;
	uint64_t msgs; /* messages created = delivered */
	uint64_t pkts_sent, pkts_delivered;
	uint64_t misordered; /* packets not in sequence at delivery: 0 */
	uint64_t bytes;	     /* payload delivered */
	/* Throughput window: the duration, or until its last delivery. */
	uint64_t window_ps;
	double gbps;	     /* bytes * 8 / window */
	uint64_t lat_p50_ps; /* message latency: creation to the tail */
	uint64_t lat_p99_ps; /* of its last packet at the destination; */
	uint64_t lat_max_ps; /* percentiles by nearest rank */
	/* Congestion control: packets that arrived marked FECN, BECNs (CNPs)
	 * its source received, its highest CCTI. */
	uint64_t fecns, becns;
	unsigned ccti_max;
};

struct ibemu_traffic_summary {
	uint32_t hosts, streams, flows;
	uint64_t msgs, pkts, bytes; /* delivered */
	uint64_t misordered;
	uint64_t duration_ps;
	uint64_t end_ps; /* last delivery, from the study's start */
	double gbps;	 /* all bytes * 8 / max(duration, end) */
	uint64_t lat_p50_ps, lat_p99_ps, lat_p999_ps, lat_max_ps;
	uint64_t events; /* engine events the study took */
	/* INCAST and CTREE only (else hotspot is IBEMU_NONE). */
	uint32_t hotspot;		/* host index */
	double hotspot_util;		/* busy fraction of the port into it */
	double jain_contributors;	/* over the contributors' gbps */
	uint32_t victims;		/* victim flows */
	double victim_min, victim_mean; /* of gbps / fair_gbps */
};

/* Valid once done; flows are sorted by (src, dst). */
size_t ibemu_traffic_nflows(const struct ibemu_traffic *tr);
void ibemu_traffic_flow(const struct ibemu_traffic *tr, size_t i,
			struct ibemu_traffic_flow_result *out);
void ibemu_traffic_summary(const struct ibemu_traffic *tr,
			   struct ibemu_traffic_summary *out);

/*
 * Congestion control of flow 'i' (0..nflows, creation order) as a source
 * (IBA Annex A10.3.1), for 'ibemu cc': while the study runs and once it is
 * done. Its CCTI is the one in effect (the port's SL's when control is per
 * SL); ipd_ps is the delay the source waits after a full packet now.
 */
struct ibemu_traffic_flow_cc {
	uint32_t src, dst; /* host indices */
	uint8_t sl;
	uint16_t ccti;
	uint64_t becns;
	uint32_t mtu; /* the study's packets' payload */
	uint64_t ipd_ps;
};

size_t ibemu_traffic_flow_cc_count(const struct ibemu_traffic *tr);
void ibemu_traffic_flow_cc(const struct ibemu_traffic *tr, size_t i,
			   struct ibemu_traffic_flow_cc *out);

/*
 * Appends the results as text tables or as one JSON object
 * {"fabric", "summary": {...}, "flows": [...], "links": [...]}: the summary,
 * the flows slowest first, and the port transmitters busiest first
 * (utilization = busy time / max(duration, end), counters since the study
 * began). 'top_n' limits both lists (0: all). Same study, same bytes.
 */
void ibemu_traffic_render(const struct ibemu_traffic *tr, int json,
			  size_t top_n, struct ibemu_buf *out);

/*
 * Appends an SVG image of the study's time series (it must have been
 * created with opts 'series' and be done): the throughput of each plotted
 * flow and the CCTI of each plotted contributor against virtual time.
 * Plotted are every contributor and victim of INCAST and CTREE (64 flows
 * at most: contributors keep up to 32 places, victims take the rest
 * first, contributors what victims leave), for other patterns the 16
 * busiest of the first 1,024 flows created. 'subtitle' (may be NULL) joins the title,
 * after the pattern and the fabric. -EINVAL without series.
 */
int ibemu_traffic_plot_svg(const struct ibemu_traffic *tr, const char *subtitle,
			   struct ibemu_buf *out);

/*
 * Max-min fair shares by progressive filling (water-filling): flow i
 * demands demand[i] and crosses links path[path_off[i] .. path_off[i+1])
 * (indices into cap[0..nlinks)); every flow's rate rises together until it
 * meets its demand or one of its links is full. Writes the rates to
 * share[0..nflows). 0 or -ENOMEM. Pure: any thread.
 */
int ibemu_traffic_waterfill(size_t nflows, const double *demand,
			    const uint32_t *path_off, const uint32_t *path,
			    size_t nlinks, const double *cap, double *share);
/* Jain's fairness index (sum x)^2 / (n sum x^2); 1 for n = 0 or all 0. */
double ibemu_traffic_jain(const double *x, size_t n);

/*
 * traffic_plot_file.c: checks a --plot FILE before a study starts (an absolute
 * path ending in .svg or .png in a directory the daemon may write, and
 * for .png a converter installed): 0, or 2 (usage) or 1 with the reason
 * in 'err'. Then writes the plot of a finished study
 * to it, atomically (a temporary file renamed over it): 0, or 1 with the
 * reason in 'err'. It runs as the
 * daemon's user (the user who started it), so the file is theirs.
 */
int ibemu_traffic_plot_check(const char *path, struct ibemu_buf *err);
int ibemu_traffic_plot_file(const struct ibemu_traffic *tr, const char *path,
			    struct ibemu_buf *err);

#endif
