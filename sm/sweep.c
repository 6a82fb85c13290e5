// SPDX-License-Identifier: MIT
/*
 * Sweeps (as OpenSM's state manager): a heavy sweep discovers the subnet
 * anew, routes it and programs it; a light sweep only asks every switch
 * its SwitchInfo, whose PortStateChange says a port of it changed state
 * since the last heavy sweep (IBA 14.2.5.4), and calls for a heavy sweep
 * then, or when a switch no longer answers. Across heavy sweeps a port
 * keeps its LID (the LIDs of the last sweep are the wished ones of the
 * next), and only the LFT blocks that changed are written again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa.h"
#include "sm.h"

#define NODE_TYPE_SWITCH 2

/* Forgets what the last heavy sweep found; keeps its LIDs and LFTs. */
static void forget(struct sm *sm)
{
	uint32_t n;

	for (n = 0; n < sm->nnodes; n++)
		free(sm->nodes[n].ports);
	sm->nnodes = 0;
	if (sm->hash)
		memset(sm->hash, 0, sm->hash_cap * sizeof(*sm->hash));
	free(sm->by_graph);
	sm->by_graph = NULL;
	if (sm->routes)
		ibemu_routes_destroy(sm->routes);
	sm->routes = NULL;
	if (sm->graph)
		ibemu_graph_destroy(sm->graph);
	sm->graph = NULL;
	sm->errors = 0;
}

uint32_t sm_lid_ports(const struct sm *sm, struct sm_lid_port *out)
{
	uint32_t n, k = 0;
	unsigned p;

	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		if (node->ni.node_type == NODE_TYPE_SWITCH) {
			out[k++] = (struct sm_lid_port){
				.guid = node->ni.port_guid,
				.lid = ibemu_routes_lid(sm->routes, node->graph,
							0),
				.is_switch = 1};
			continue;
		}
		for (p = 1; p <= node->ni.num_ports && k <= sm->routes->max_lid;
		     p++)
			if (node->ports[p].guid)
				out[k++] = (struct sm_lid_port){
					.guid = node->ports[p].guid,
					.lid = ibemu_routes_lid(
						sm->routes, node->graph, p)};
	}
	return k;
}

/* The LIDs just given become the ones the next sweep keeps. */
static int remember_lids(struct sm *sm)
{
	size_t room = (size_t)sm->routes->max_lid + 1;
	struct sm_lid_port *ports = calloc(room, sizeof(*ports));
	struct sm_guid_lid *all = calloc(room, sizeof(*all));
	uint32_t i, k;

	if (!ports || !all) {
		free(ports);
		free(all);
		return -ENOMEM;
	}
	k = sm_lid_ports(sm, ports);
	for (i = 0; i < k; i++)
		all[i] = (struct sm_guid_lid){ports[i].guid, ports[i].lid};
	free(ports);
	free(sm->guid2lid);
	sm->guid2lid = all;
	sm->nguid2lid = k;
	return 0;
}

int sm_heavy_sweep(struct sm *sm)
{
	int ret;

	forget(sm);
	sm->heavy_sweeps++;
	sm->sweeping = 1; /* the SA answers busy meanwhile */
	ret = sm_discover(sm);
	if (!ret)
		ret = sm_changes_update(sm);
	if (!ret)
		ret = sm_find_master(sm);
	sm_sweep_mark(sm, SM_STEP_DISCOVER);
	if (ret || sm->standby) {
		sm->sweeping = 0;
		return ret; /* a standby programs nothing */
	}
	ret = sm_build_graph(sm);
	if (!ret)
		ret = sm_program(sm);
	if (!ret)
		ret = remember_lids(sm);
	if (!ret && sm->nmcgroups) {
		/* The groups' trees, over the links there are now. */
		sm_mcast_program(sm);
		ret = sm_smp_run(sm);
	}
	/* As OpenSM: congestion control once the ports are Active. */
	if (!ret)
		ret = sm_cc_configure(sm);
	if (!ret)
		ret = sm_cc_poll(sm);
	sm->sweeping = 0;
	return ret;
}

static void on_light(struct sm *sm, int status, const struct ibemu_mad_smp *smp,
		     void *arg, uint64_t arg2)
{
	struct ibemu_mad_switch_info si;

	(void)arg;
	(void)arg2;
	if (status || smp->hdr.status ||
	    ibemu_mad_switch_info_decode(smp->data, sizeof(smp->data), &si) <
		    0 ||
	    si.port_state_change)
		sm->changed = 1;
}

int sm_light_sweep(struct sm *sm)
{
	uint32_t n;
	int ret;

	sm->changed = 0;
	sm->light_sweeps++;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		if (node->ni.node_type != NODE_TYPE_SWITCH)
			continue;
		if (sm_smp(sm, node->path, node->hops, IBEMU_MAD_METHOD_GET,
			   IBEMU_SMP_ATTR_SWITCH_INFO, 0, NULL, on_light, NULL,
			   0))
			sm->changed = 1;
	}
	ret = sm_smp_run(sm);
	/* As OpenSM's light sweep: the SMs found, asked again. */
	if (!ret)
		ret = sm_poll_others(sm);
	if (!ret && !sm->changed && !sm->sm_outranked)
		ret = sm_cc_poll(sm);
	return ret ? ret : sm->changed || sm->sm_outranked;
}

/* The LFT the last sweeps wrote into the switch of NodeGUID 'guid'. */
struct sm_lft *sm_lft_of(struct sm *sm, uint64_t guid, int create)
{
	struct sm_lft *grown;
	uint32_t i;

	for (i = 0; i < sm->nlfts; i++)
		if (sm->lfts[i].guid == guid)
			return &sm->lfts[i];
	if (!create)
		return NULL;
	grown = realloc(sm->lfts, (sm->nlfts + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	sm->lfts = grown;
	memset(&sm->lfts[sm->nlfts], 0, sizeof(*sm->lfts));
	sm->lfts[sm->nlfts].guid = guid;
	return &sm->lfts[sm->nlfts++];
}

void sm_sweep_free(struct sm *sm)
{
	uint32_t i;

	forget(sm);
	for (i = 0; i < sm->nlfts; i++)
		free(sm->lfts[i].port);
	free(sm->lfts);
	free(sm->nodes);
	free(sm->hash);
	free(sm->guid2lid);
	sm_changes_free(sm);
	sm_others_free(sm);
}
