/* SPDX-License-Identifier: MIT */
/*
 * ibemu-sm: a subnet manager that speaks only MADs through the libibumad
 * API (docs/design.md §5). It discovers the subnet with directed-route
 * SMPs, many in flight (smp.c), builds the routing graph of what it found
 * (discover.c), has a routing engine of routing/ assign LIDs and LFTs, and
 * programs ports and switches up to ACTIVE (program.c).
 */
#ifndef IBEMU_SM_H
#define IBEMU_SM_H

#include <stdint.h>
#include <stdio.h>

#include "cc_policy.h"
#include "graph.h"
#include "mad.h"
#include "mad_sma.h"
#include "routes.h"

/* IBA 14.2.1.2: a directed route has at most 63 hops. */
#define SM_MAX_HOPS 63

struct sm_port {
	struct ibemu_mad_port_info pi; /* as last read */
	int have_pi;
	uint32_t peer; /* node index, or UINT32_MAX: none found */
	uint8_t peer_port;
	/* An HCA's port answers SMPs that arrive by it: its own route. */
	uint8_t path[SM_MAX_HOPS + 1];
	uint8_t hops;
	uint64_t guid; /* its port GUID, from NodeInfo (HCA ports) */
};

struct sm_node {
	struct ibemu_mad_node_info ni;
	struct ibemu_mad_switch_info si; /* switches */
	struct ibemu_mad_node_desc nd;	 /* for the SA's NodeRecords */
	uint8_t path[SM_MAX_HOPS + 1];	 /* directed route: path[1..hops] */
	uint8_t hops;
	uint8_t in_port; /* the port the route enters it by (NodeInfo's) */
	uint32_t graph;	 /* its index in the routing graph */
	struct sm_port *ports; /* [num_ports + 1] */
};

/* Another SM's port, found IsSM by a heavy sweep, and its SMInfo. */
struct sm_other {
	uint64_t port_guid;
	uint16_t lid;
	uint8_t path[SM_MAX_HOPS + 1];
	uint8_t hops;
	int answered;
	struct ibemu_mad_sm_info info;
};

struct sm;
/* A request's answer: status 0 and the SMP, or -ETIMEDOUT / -EIO. */
typedef void (*sm_smp_cb)(struct sm *sm, int status,
			  const struct ibemu_mad_smp *smp, void *arg,
			  uint64_t arg2);

struct sm_req;
/* A GMP's answer: status 0 and the whole MAD, or -ETIMEDOUT / -EIO. */
typedef void (*sm_gmp_cb)(struct sm *sm, int status, const uint8_t *mad,
			  void *arg, uint64_t arg2);

/*
 * A switch (by its port 0) or a CA port the CC manager configures
 * (cc.c): what it holds of the policy, as its answers echoed it.
 */
struct sm_cc_port {
	uint64_t guid; /* port GUID */
	uint16_t lid;
	uint8_t is_switch;
	uint8_t sw_set, ca_set;
	uint8_t cct_set;    /* bit b: CCT block b */
	uint8_t configured; /* counted once it held everything */
};

struct sm_cc_stats {
	unsigned long configured; /* ports brought to the policy */
	unsigned long sets, gets, failed;
	unsigned long switch_events, ca_events; /* CongestionLog counters */
};

/* An LFT as the SM last wrote it into the switch of NodeGUID 'guid'. */
struct sm_lft {
	uint64_t guid;
	uint32_t len; /* entries of 'port' (max LID + 1) */
	uint8_t *port;
};

/* The last sweep, for the status file (status.c). */
struct sm_sweep_stats {
	int heavy;
	char why[64]; /* what called it */
	long long at; /* when it began, seconds since the epoch */
	double wall_s;
	unsigned long smps, lft_blocks;
	unsigned errors;
	/* Wall seconds of a heavy sweep's steps (sm_sweep_mark()). */
	double step_s[4];
	/* Virtual time (sm_clock_ps()) at its beginning and its length;
	 * UINT64_MAX on a fabric without one. */
	uint64_t vt_at_ps, vt_ps;
	/* At its beginning. */
	double t0, mark;
	unsigned long sent0, blocks0;
};

/*
 * What a heavy sweep found that the previous one did not, or no longer
 * found (changes.c): nodes by NodeGUID, links by the GUIDs and port
 * numbers of both ends. The first SM_CHANGES_LISTED of them are named.
 */
#define SM_CHANGES_LISTED 16
struct sm_seen_node {
	uint64_t guid;
	char desc[IBEMU_MAD_NODE_DESC_LEN]; /* NUL-terminated, printable */
};
struct sm_seen_link {
	uint64_t guid[2]; /* the lower (GUID, port) end first */
	uint8_t port[2];
};
struct sm_changes {
	char why[64]; /* what called that heavy sweep */
	long long at;
	unsigned long sweep; /* its number, from 1 */
	unsigned nodes_added, nodes_removed, links_added, links_removed;
	unsigned nlisted;
	char listed[SM_CHANGES_LISTED][2 * IBEMU_MAD_NODE_DESC_LEN + 64];
	/* What the last heavy sweep found, sorted. */
	struct sm_seen_node *nodes;
	uint32_t nnodes;
	struct sm_seen_link *links;
	uint32_t nlinks;
};

struct sm {
	/* Options. */
	const char *ca;
	unsigned port_num;
	const char *routing;
	unsigned window;     /* SMPs in flight at most */
	unsigned timeout_ms; /* per SMP, and this many retries: */
	unsigned retries;
	int verbose;
	int quality;		 /* print how the routes spread traffic */
	unsigned sweep_ms;	 /* light sweep period; 0: one heavy sweep */
	unsigned priority;	 /* SMInfo's, 0..15 */
	unsigned lmc;		 /* --lmc: 2^lmc LIDs per HCA port */
	const char *status_path; /* --status: rewritten after every sweep */
	int ready_fd; /* --ready-fd: told once when the subnet is up, or -1 */
	/* IBA 14.4: another SM that outranks this one is master. */
	int standby;
	uint16_t master_lid;
	uint64_t master_guid;
	uint8_t master_priority;
	uint8_t master_path[SM_MAX_HOPS + 1]; /* its port's directed route */
	uint8_t master_hops;
	/* The other SMs the last heavy sweep found (election.c). */
	struct sm_other *others;
	uint32_t nothers;
	int sm_outranked; /* a light sweep found one that outranks this SM */
	int trap144;	  /* a Trap 144 came: an SM appeared or changed */
	int handover_in;  /* the master handed over: a heavy sweep next */
	unsigned master_misses; /* standby: polls in a row the master missed */
	/* IBA 14.4: at its start, and when its master is gone, an SM
	 * discovers: any master it finds makes it standby (and one that
	 * ranks below it is asked, by Trap 144, to hand over). */
	int discovering;
	unsigned long handovers; /* times this SM handed mastership over */
	/* umad. */
	int fd, agent;
	int port_gone;	/* umad failed for good: stop rather than spin */
	int trap_agent; /* LID-routed SMPs: Traps from the SMAs */
	unsigned long traps;
	uint64_t next_tid;
	/* Requests: queued, and in flight (by TID). */
	struct sm_req *queue_head, *queue_tail;
	struct sm_req **inflight;
	unsigned ninflight;
	unsigned long sent, answered, timeouts;
	/* The subnet found. */
	struct sm_node *nodes;
	uint32_t nnodes, nodes_cap;
	/* NodeGUID -> node index, open addressing (discover.c): node index
	 * + 1, 0 for a free slot; 'hash_cap' slots, a power of two. */
	uint32_t *hash;
	uint32_t hash_cap;
	uint32_t *by_graph; /* graph index -> node index */
	/* guid2lid: LIDs kept from an earlier run (OpenSM's file format). */
	const char *guid2lid_path;
	const char *sl_dump_path; /* --sl-dump: per-path SLs at SUBNET UP */
	const char *report_path;  /* --report: routes quality at SUBNET UP */
	const char *dump_dir;	  /* --dump-dir: OpenSM's dump files */
	struct sm_guid_lid *guid2lid;
	uint32_t nguid2lid;
	uint16_t sm_lid;
	struct ibemu_routes *routes;
	struct ibemu_graph *graph;
	unsigned errors;
	/* Sweeps (sweep.c). */
	int changed;
	unsigned long heavy_sweeps, light_sweeps, lft_blocks;
	struct sm_lft *lfts;
	uint32_t nlfts;
	struct sm_sweep_stats last;
	struct sm_changes changes; /* of the last heavy sweep */
	/* Subnet Administration (sa*.c). */
	int sa_agent; /* GS agent of class SA, or -1 */
	int sweeping; /* a heavy sweep is under way: SA says busy */
	unsigned long sa_requests, sa_dropped;
	struct sm_mcgroup *mcgroups;
	uint32_t nmcgroups;
	struct sm_service *services;
	uint32_t nservices;
	/* Congestion control manager (cc.c). */
	const char *cc_config;	     /* --cc-config: OpenSM's cc_* lines */
	struct ibemu_cc_policy *cc;  /* NULL: none given, nothing sent */
	int cc_agent;		     /* GS agent of class CC, or -1 */
	struct sm_cc_port *cc_ports; /* sorted by GUID */
	uint32_t ncc_ports;
	struct sm_cc_stats cc_stats;
};

/* smp.c */
int sm_smp_open(struct sm *sm);
void sm_smp_close(struct sm *sm);
/*
 * Queues a directed-route SMP along 'path[1..hops]': method Get or Set of
 * 'attr' (modifier 'mod'), 'data' (64 bytes, Set) or NULL; 'cb' gets the
 * answer. Returns 0 or -ENOMEM.
 */
int sm_smp(struct sm *sm, const uint8_t *path, unsigned hops, uint8_t method,
	   uint16_t attr, uint32_t mod, const uint8_t *data, sm_smp_cb cb,
	   void *arg, uint64_t arg2);
/* Queues a LID-routed SMP Get/Set to 'dlid' (class 0x01); 0 or -errno. */
int sm_smp_lid(struct sm *sm, uint16_t dlid, uint8_t method, uint16_t attr,
	       uint32_t mod, sm_smp_cb cb, void *arg, uint64_t arg2);
/*
 * Queues a LID-routed GMP to QP1 of 'dlid' through umad agent 'agent':
 * 'mad' is the whole MAD (copied; its TID is set when it goes out).
 * Returns 0 or -ENOMEM.
 */
int sm_gmp(struct sm *sm, int agent, uint16_t dlid, const uint8_t *mad,
	   sm_gmp_cb cb, void *arg, uint64_t arg2);
/* Sends and receives until nothing is queued or in flight; 0 or -errno. */
int sm_smp_run(struct sm *sm);
/*
 * Sends a Trap 144 (IBA 14.2.5.1, "SM priority changed") from this port,
 * of LID 'lid' and CapabilityMask 'cap_mask', to the SM at 'dlid': how a
 * standby tells a master that ranks below it to hand over. 0 or -errno.
 */
int sm_trap144(struct sm *sm, uint16_t dlid, uint16_t lid, uint32_t cap_mask);
/*
 * Waits up to 'ms' for a Trap (answered with TrapRepress); 1 if one came,
 * 0 if none did.
 */
int sm_trap_wait(struct sm *sm, unsigned ms);
/*
 * The SM's clock: under ibemu, the virtual time its libibumad keeps
 * (ibemu_umad_now_ps(), IBEMU_1.0), which its waits and its MADs'
 * timeouts count; elsewhere (real hardware, ibsim) UINT64_MAX, and the
 * SM keeps the wall clock.
 */
uint64_t sm_clock_ps(void);
/* Milliseconds of the SM's clock, virtual or wall, for its periods. */
uint64_t sm_clock_ms(void);
/* Declares 'ps' of the SM's own work to its clock (nothing elsewhere). */
void sm_compute_ps(uint64_t ps);
/*
 * Says that what follows until the next MAD call is the SM's own (its
 * reports), which virtual time need not wait for (ibemu_umad_idle()).
 */
void sm_idle(struct sm *sm);

/* discover.c */
/* Sweeps the subnet from the SM's port; 0, or -errno. */
int sm_discover(struct sm *sm);
/* The routing graph of what was found, SM's node first; 0 or -errno. */
int sm_build_graph(struct sm *sm);

/* guid2lid.c */
struct sm_guid_lid {
	uint64_t guid;
	uint16_t lid;
};
/* A port with a LID in this sweep: a switch's port 0 or a CA port. */
struct sm_lid_port {
	uint64_t guid;
	uint16_t lid;
	uint8_t is_switch;
};
/*
 * Fills 'out' (room for routes->max_lid + 1) with this sweep's ports that
 * have LIDs, in node order; returns how many (sweep.c).
 */
uint32_t sm_lid_ports(const struct sm *sm, struct sm_lid_port *out);
/* Reads sm->guid2lid_path if it exists; 0, or -errno for a bad file. */
int sm_guid2lid_load(struct sm *sm);
/* The LID the file gives port GUID 'guid', or 0. */
uint16_t sm_guid2lid_find(const struct sm *sm, uint64_t guid);
/* Writes every port's LID to 'path'; 0 or -errno. */
int sm_guid2lid_save(const struct sm *sm, const char *path);

/* sweep.c */
/* Discovers, routes and programs the subnet anew; 0 or -errno. */
int sm_heavy_sweep(struct sm *sm);
/*
 * 1 if a switch reports a port change or does not answer, or another SM
 * now outranks this one (sm->sm_outranked); 0, -errno.
 */
int sm_light_sweep(struct sm *sm);
/* The LFT last written to switch 'guid' (made if 'create'), or NULL. */
struct sm_lft *sm_lft_of(struct sm *sm, uint64_t guid, int create);
void sm_sweep_free(struct sm *sm);

/* election.c */
/* SMInfo SMState (IBA 14.2.5.13) and Set(SMInfo)'s modifiers (14.4.1). */
#define SM_STATE_NOTACTIVE   0
#define SM_STATE_DISCOVERING 1
#define SM_STATE_STANDBY     2
#define SM_STATE_MASTER	     3
#define SM_MOD_HANDOVER	     1
#define SM_MOD_ACKNOWLEDGE   2
/* The SM_Key of the subnet's SMs: OpenSM's default (sm_key 0x1). */
#define SM_KEY 1
/*
 * IBA 14.4.1.1: whether the SM of priority 'pa' and port GUID 'ga'
 * outranks the one of 'pb' and 'gb': the higher priority, at equal
 * priorities the lower GUID.
 */
static inline int sm_outranks(unsigned pa, uint64_t ga, unsigned pb,
			      uint64_t gb)
{
	return pa != pb ? pa > pb : ga < gb;
}
/*
 * After a discovery: asks SMInfo of every other port that says IsSM (kept
 * in sm->others) and elects (IBA 14.4): a master that outranks this SM
 * makes it standby; an SM in standby or discovering that outranks it is
 * handed mastership (Set(SMInfo) HANDOVER), and this SM goes standby once
 * it answers. Sets sm->standby and the master's LID, GUID and route.
 * 0 or -errno.
 */
int sm_find_master(struct sm *sm);
/*
 * In a light sweep: asks the SMInfo of the SMs the last heavy sweep found;
 * sets sm->sm_outranked if one (not NOT-ACTIVE) outranks this master now.
 */
int sm_poll_others(struct sm *sm);
/* Whether the master still answers its SMInfo as master. */
int sm_master_alive(struct sm *sm);
/* Whether this standby's master outranks it. */
int sm_master_outranks(const struct sm *sm);
/* A standby whose master ranks below it asks for the mastership (Trap
 * 144 to the master); nothing if the master outranks it. */
void sm_ask_handover(struct sm *sm);
void sm_others_free(struct sm *sm);

/* status.c */
/* Writes the status file (--status), if any; 0 or -errno. */
/*
 * Flushes and closes 'f', a file being written: 0, or -errno of the write
 * that failed (ENOSPC on a full disk, not a bare EIO), so the message can
 * name the cause. The file is closed either way.
 */
int sm_file_close(FILE *f);
/*
 * Writes 'path' through 'emit' aside ('path'.new) and renames it into
 * place, with SIGTERM, SIGINT and SIGHUP held meanwhile; 0 or -errno.
 */
int sm_file_write(const char *path, void (*emit)(FILE *f, const void *arg),
		  const void *arg);
int sm_status_write(const struct sm *sm);
/* Tells --ready-fd, once, that the subnet is up (1) or this SM standby. */
void sm_status_ready(struct sm *sm, int up);
/* Around a sweep: what called it, and what it cost. */
void sm_sweep_begin(struct sm *sm, int heavy, const char *why);
void sm_sweep_end(struct sm *sm);
/* The steps of a heavy sweep whose wall time the summary shows. */
enum sm_step {
	SM_STEP_DISCOVER,
	SM_STEP_ROUTE,
	SM_STEP_PROGRAM,
	SM_STEP_ACTIVATE
};
/* Ends step 'step' of the sweep under way, at the current time. */
void sm_sweep_mark(struct sm *sm, enum sm_step step);

/* changes.c */
/*
 * After a heavy sweep's discovery: counts (and names the first of) the
 * nodes and links added and removed since the previous heavy sweep, in
 * sm->changes. 0 or -ENOMEM.
 */
int sm_changes_update(struct sm *sm);
void sm_changes_free(struct sm *sm);

/* report.c */
/*
 * Writes how the routes programmed spread traffic (routing/quality.c) to
 * sm->report_path as JSON ('ibemu sm report' reads it); 0 or -errno.
 */
int sm_report_write(const struct sm *sm);

/* dump.c */
/*
 * Writes OpenSM's dump files into sm->dump_dir: opensm-lfts.dump (every
 * switch's LFT), opensm-subnet.lst (every link) and guid2lid, in OpenSM's
 * formats, so that the two SMs' outputs compare file against file.
 * 0 or -errno.
 */
int sm_dump_write(const struct sm *sm);

/* cc.c */
/* Reads --cc-config, if given, into sm->cc; 0 or -EINVAL (said). */
int sm_cc_load(struct sm *sm);
/* Registers the CC agent if the policy enables CC; 0 or -errno. */
int sm_cc_open(struct sm *sm);
void sm_cc_close(struct sm *sm);
/*
 * After a heavy sweep: SwitchCongestionSetting to every switch,
 * CACongestionSetting and the CCT blocks to every CA port, where they do
 * not hold them yet. 0 or -errno; failures are counted and said.
 */
int sm_cc_configure(struct sm *sm);
/* Every sweep: reads the CongestionLog of every switch and CA port. */
int sm_cc_poll(struct sm *sm);

/* program.c */
/*
 * LIDs, SM LID, LFTs (and, for routes on virtual layers, SL2VL and VL
 * arbitration), then every linked port ARMED and ACTIVE.
 */
int sm_program(struct sm *sm);
/*
 * The SL of the path from 'slid' to 'dlid' on the routes programmed last
 * (its virtual layer; 0 for engines without layers, or before any
 * routes): what a PathRecord from 'slid' to 'dlid' should carry.
 */
uint8_t sm_path_sl(const struct sm *sm, uint16_t slid, uint16_t dlid);

/* sl_dump.c */
/*
 * Writes the SL of every path from an HCA port that is not SL 0 to
 * sm->sl_dump_path, as lines 'SLID DLID SL' ('ibemu traffic --sl-map'
 * reads them); 0 or -errno.
 */
int sm_sl_dump(const struct sm *sm);

#endif
