/* SPDX-License-Identifier: MIT */
/*
 * Routing engines behind one ops table, in the manner of OpenSM's
 * (struct osm_routing_engine): an engine prepares a context for a graph,
 * fills the LFTs of routes whose LIDs are already assigned (routes.h, the
 * same rule for every engine), and is destroyed. A registry finds engines
 * by name; routing/README.md tells how to add one.
 */
#ifndef IBEMU_ROUTING_H
#define IBEMU_ROUTING_H

#include "graph.h"
#include "routes.h"

struct ibemu_topo;

/*
 * One routing engine. Every engine provides every op. An engine reads the
 * graph and writes the routes it is given and nothing else, so engines on
 * different contexts may run in different threads.
 */
struct ibemu_routing_engine_ops {
	const char *name; /* what ibemu_routing_find() and --routing take */
	const char *help; /* one line for help text */
	/*
	 * Prepares the engine for 'g' (borrowed: it must stay unchanged
	 * until destroy): what depends on the graph alone, such as up/down's
	 * ranking of the switches. Returns 0 and the context in *ctx, or
	 * -errno (then nothing is left to destroy).
	 */
	int (*create)(const struct ibemu_graph *g, void **ctx);
	/*
	 * Fills the LFTs of 'r', as ibemu_routes_create() left them for the
	 * same graph (LIDs assigned, no route anywhere). The result depends
	 * only on the graph: a context may build any number of times.
	 * Returns 0, -EINVAL if 'r' is not of this graph, or -errno.
	 */
	int (*build)(void *ctx, struct ibemu_routes *r);
	void (*destroy)(void *ctx);
};

/* The engine called 'name' ("minhop", "updown"), or NULL if none is. */
const struct ibemu_routing_engine_ops *ibemu_routing_find(const char *name);

/*
 * The engines in the registry's order, for help text and listings: the
 * i-th, or NULL past the last. The first is the default engine.
 */
const struct ibemu_routing_engine_ops *ibemu_routing_at(unsigned i);

/*
 * Assigns the LIDs of 'g' and has 'ops' fill the LFTs: create, build,
 * destroy. Returns 0 and the routes in *out (the caller's, freed with
 * ibemu_routes_destroy()), or what ibemu_routes_create() or the engine
 * returned (-ERANGE: more LIDs than IBA allows; -ENOMEM); *out is
 * untouched then.
 */
int ibemu_routing_run(const struct ibemu_routing_engine_ops *ops,
		      const struct ibemu_graph *g, struct ibemu_routes **out);
/* The same, with the LIDs 'want' asks for (ibemu_routes_create_lids()). */
int ibemu_routing_run_lids(const struct ibemu_routing_engine_ops *ops,
			   const struct ibemu_graph *g, ibemu_lid_want_fn want,
			   void *want_ctx, struct ibemu_routes **out);

/*
 * As ibemu_routing_run() on the graph of 't' (ibemu_graph_from_topo()), so
 * node indices in the routes are the topology's. Defined in graph_topo.c.
 */
int ibemu_routing_run_topo(const struct ibemu_routing_engine_ops *ops,
			   const struct ibemu_topo *t,
			   struct ibemu_routes **out);

/*
 * Whether routes 'r' of graph 'g' are free of credit deadlock when SL s
 * runs on VL sl2vl[s] (0..15) on every port: the channel dependency graph
 * of each VL (its switch-to-switch cables, the dependencies the paths
 * from every switch with HCAs make, each on the VL of its SL,
 * ibemu_routes_sl()) has no cycle. 1 if free, 0 if one VL has a cycle,
 * -EINVAL (routes of another graph, a VL past 15) or -ENOMEM. Defined in
 * cdg.c.
 */
int ibemu_routes_deadlock_free_vl(const struct ibemu_graph *g,
				  const struct ibemu_routes *r,
				  const uint8_t sl2vl[16]);
/*
 * The same with SL i on VL i, as ibemu-sm programs SL2VL: engines without
 * layers have every path on VL 0, so their whole CDG must be acyclic.
 */
int ibemu_routes_deadlock_free(const struct ibemu_graph *g,
			       const struct ibemu_routes *r);

/* Path lengths counted, in switch-to-switch hops; the last holds more. */
#define IBEMU_QUALITY_HOPS 16

/*
 * How routes spread traffic (quality.c), over the HCA ports cabled to a
 * switch, in LID order: the most routes one directed switch-to-switch
 * cable carries in a shift permutation (the worst k) and in all-to-all,
 * next to the all-to-all ideal (its hops spread evenly on every cable);
 * the mean routes of the cables that carry any (over every cable the
 * all-to-all mean would be the ideal itself: a mean above the ideal says
 * that routes leave cables idle, a max above the mean that they pile up
 * on some); the histogram of path lengths; pairs with no route.
 */
struct ibemu_route_quality {
	uint32_t hosts, links; /* HCA ports; directed switch-to-switch cables */
	uint32_t shift_max;
	/* Routes per (k, cable) pair with at least one route, over every k. */
	double shift_mean;
	uint32_t a2a_max;
	double a2a_mean;   /* routes per cable that all-to-all uses */
	uint32_t a2a_used; /* cables that carry an all-to-all route */
	double a2a_ideal;
	uint64_t hops_hist[IBEMU_QUALITY_HOPS];
	uint64_t unrouted;
};

/* Fills 'q' for routes 'r' of 'g'; 0, -EINVAL (another graph), -ENOMEM. */
int ibemu_routes_quality(const struct ibemu_graph *g,
			 const struct ibemu_routes *r,
			 struct ibemu_route_quality *q);

#endif
