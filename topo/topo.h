/* SPDX-License-Identifier: MIT */
/*
 * The topology model: the fabric as declared (nodes, ports, cables), before
 * any of it runs. The YAML loader, the generators and the ibnetdiscover
 * importer fill it; the exporters, the daemon and later the engine read it.
 * Indices (uint32_t) name nodes and links; IBEMU_NONE means "none".
 */
#ifndef IBEMU_TOPO_H
#define IBEMU_TOPO_H

#include <stdint.h>

#include "cc_policy.h"
#include "diag.h"
#include "hca_kind.h"
#include "rate.h"
#include "strmap.h"

/* IBA 14.2.5.3 NodeInfo NodeType. */
enum ibemu_node_type {
	IBEMU_NODE_HCA = 1,
	IBEMU_NODE_SWITCH = 2,
};

#define IBEMU_MAX_PORTS 254 /* NumPorts: physical ports 1..254 */
/*
 * rdma-core's libibumad keeps a CA's ports in an array of
 * UMAD_CA_MAX_PORTS (10) entries indexed by port number: ibstat, OpenSM and
 * every umad tool see ports 1..9 of an HCA at most.
 */
#define IBEMU_HCA_MAX_PORTS 9
/* Unicast LIDs (IBA 4.1.3): one per switch, one per HCA port (LMC 0). */
#define IBEMU_MAX_LIDS	    0xbfffu
#define IBEMU_NODEDESC_MAX  64	      /* IBA 14.2.5.2 NodeDescription bytes */
#define IBEMU_OUI	    0x02ebe0u /* locally administered */
#define IBEMU_DEVICE_HCA    0xeb01u
#define IBEMU_DEVICE_SWITCH 0xeb02u

/* Fabric-wide defaults; every node and link inherits what it does not set. */
struct ibemu_topo_defaults {
	uint16_t mtu;  /* bytes: 256, 512, 1024, 2048, 4096 */
	uint8_t vls;   /* data VLs: 1, 2, 4, 8 or 15 */
	uint8_t width; /* lanes */
	enum ibemu_speed speed;
	uint32_t cable_length_mm;
	uint32_t buffer_per_vl;	       /* bytes, multiple of 64 (one credit) */
	uint64_t routing_latency_ps;   /* 0: the default for 'speed' */
	enum ibemu_hca_kind hca_model; /* the HCAs' host interface */
};

struct ibemu_topo_port {
	uint32_t peer_node; /* IBEMU_NONE when not cabled */
	uint8_t peer_port;
	uint32_t link; /* index in topo->links, or IBEMU_NONE */
	uint64_t guid; /* 0 until ibemu_topo_finalize() derives it */
};

struct ibemu_topo_node {
	enum ibemu_node_type type;
	char *name;		/* owned; unique; [A-Za-z0-9_.+-] */
	char *desc;		/* owned; NodeDescription, at most 64 bytes */
	uint64_t guid;		/* 0 until set or derived */
	uint64_t sysimage_guid; /* 0: same as guid */
	uint32_t vendor_id;	/* 24 bits */
	uint16_t device_id;
	uint8_t nports;
	uint8_t vls;
	uint32_t buffer_per_vl;
	uint64_t routing_latency_ps;   /* switches only */
	enum ibemu_hca_kind hca_model; /* HCAs only */
	/* ports[0] is a switch's management port 0; unused on an HCA. */
	struct ibemu_topo_port *ports;
	struct ibemu_loc loc;	   /* where it was declared */
	struct ibemu_loc guid_loc; /* where its GUID was given, if it was */
	/* An HCA's IPv4 address of port 1, host order; port N has ip + N - 1
	 * (ibemu_topo_port_ip). 0 until given (ip:) or derived by the plan
	 * at finalize; ip_loc.line != 0 when given. */
	uint32_t ip;
	struct ibemu_loc ip_loc;
};

/*
 * The address plan (topologies/README.md): port P of the HCA that is the
 * I-th (from 0) in the fabric has 127.10.0.0 + 16 * I + P, unless its ip:
 * says. Every address is in 127.0.0.0/8, so none can route off the host.
 */
#define IBEMU_TOPO_IP_PLAN_BASE 0x7f0a0000u /* 127.10.0.0 */
#define IBEMU_TOPO_IP_PLAN_STEP 16u

/* 1 if 'ip' (host order) is in 127.0.0.0/8. */
static inline int ibemu_topo_ip_loopback(uint32_t ip)
{
	return (ip >> 24) == 127;
}

/* The IPv4 address (host order) of port 'port' (1..nports) of HCA 'n'. */
static inline uint32_t ibemu_topo_port_ip(const struct ibemu_topo_node *n,
					  unsigned port)
{
	return n->ip + port - 1;
}

struct ibemu_topo_link {
	uint32_t node[2];
	uint8_t port[2];
	uint8_t width;
	enum ibemu_speed speed;
	uint32_t length_mm;
	uint64_t latency_ps; /* propagation delay one way */
	struct ibemu_loc loc;
};

struct ibemu_topo {
	char *name;   /* fabric name, owned */
	char *source; /* file it came from, owned; may be NULL */
	struct ibemu_topo_defaults defaults;
	struct ibemu_topo_node *nodes;
	uint32_t nnodes, nodes_cap;
	struct ibemu_topo_link *links;
	uint32_t nlinks, links_cap;
	struct ibemu_strmap by_name;
	/* congestion_control: what 'ibemu up' hands the SM (cc.conf). */
	struct ibemu_cc_policy cc;
	struct ibemu_hca_tuning hca_tuning; /* every HCA's preset */
};

/* Propagation in cables: about 5 ns per metre (light at ~0.67c). */
#define IBEMU_CABLE_PS_PER_M 5000u

/* The host interface HCA 'node' has: its hca_model, 'auto' resolved by
 * the speed of its port 1's link (the default speed if uncabled). */
enum ibemu_hca_kind ibemu_topo_hca_kind(const struct ibemu_topo *t,
					uint32_t node);

/* Creates an empty topology with the documented defaults. */
int ibemu_topo_create(struct ibemu_topo **out);
void ibemu_topo_destroy(struct ibemu_topo *t);
int ibemu_topo_set_name(struct ibemu_topo *t, const char *name);

/* Returns 1 if 'name' may name a node or a fabric. */
int ibemu_name_valid(const char *name);

/*
 * Adds a node with 'nports' physical ports and the fabric defaults.
 * Returns 0 and the index in *idx, -EEXIST for a duplicate name, -EINVAL for
 * a bad name or port count, -ENOMEM. The returned index stays valid; a
 * node pointer does not survive the next add.
 */
int ibemu_topo_add_node(struct ibemu_topo *t, enum ibemu_node_type type,
			const char *name, unsigned nports, uint32_t *idx);
/* Returns the index of the node named 'name', or IBEMU_NONE. */
uint32_t ibemu_topo_find(const struct ibemu_topo *t, const char *name);
int ibemu_topo_set_desc(struct ibemu_topo *t, uint32_t node, const char *desc);

/*
 * Cables a:ap to b:bp with the fabric's default width, speed and length.
 * Returns 0 and the link index in *link (may be NULL), -ERANGE for a port
 * outside 1..nports, -EBUSY if either port is cabled already, -EINVAL for
 * a port cabled to itself.
 */
int ibemu_topo_connect(struct ibemu_topo *t, uint32_t a, unsigned ap,
		       uint32_t b, unsigned bp, uint32_t *link);

/* Sets a link's length and derives its propagation latency from it. */
void ibemu_topo_link_set_length(struct ibemu_topo_link *l, uint32_t mm);

/*
 * Completes a topology once everything is declared: derives the GUIDs not
 * given (from the node name, so they do not depend on declaration order),
 * fills the per-port GUIDs, checks GUIDs are unique and warns when the fabric
 * is not connected. Errors and warnings go to 'd'. Returns 0 or -EINVAL.
 */
int ibemu_topo_finalize(struct ibemu_topo *t, struct ibemu_diag *d);

/* GUID that ibemu derives for a node named 'name'. */
uint64_t ibemu_topo_derive_guid(const char *name);

/* Default routing latency of a switch generation, in picoseconds. */
uint64_t ibemu_routing_latency_default_ps(enum ibemu_speed speed);

/* Counts for summaries: switches, HCAs, links. */
void ibemu_topo_count(const struct ibemu_topo *t, uint32_t *switches,
		      uint32_t *hcas);

#endif
