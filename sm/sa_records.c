// SPDX-License-Identifier: MIT
/*
 * The SA records of what a sweep found (IBA 15.2.5): NodeRecord (one per
 * switch, one per HCA port), PortInfoRecord (every port read), LinkRecord
 * (both directions of every cable), SwitchInfoRecord and SMInfoRecord (this
 * SM). Each is built in wire order and kept if its fields match the
 * request's where ComponentMask selects them.
 */
#include <string.h>

#include "sa.h"

#define NODE_TYPE_SWITCH 2
#define PIR_CAPMASK_BIT	 7 /* PortInfoRecord ComponentMask: CapabilityMask */
#define PIR_CAPMASK_OFF	 (4 + 20) /* its byte in the record */

static int is_switch(const struct sm_node *node)
{
	return node->ni.node_type == NODE_TYPE_SWITCH;
}

/* The LID of 'port' of 'node': the switch's for any port of a switch. */
static uint16_t lid_of(const struct sm *sm, const struct sm_node *node,
		       unsigned port)
{
	return ibemu_routes_lid(sm->routes, node->graph,
				is_switch(node) ? 0 : port);
}

/* IBA 15.2.5.2 NodeRecord: LID, reserved, NodeInfo, NodeDescription. */
static const uint16_t node_widths[] = {16, 16, 8,  8,  8, 8,  64, 64,
				       64, 16, 16, 32, 8, 24, 512};
static const struct sa_fields node_fields = {node_widths, 15};

void sa_node_records(struct sm *sm, struct sa_req *req)
{
	uint8_t rec[SA_NODE_RECORD_LEN];
	uint32_t n;
	unsigned port;

	req->rec_size = SA_NODE_RECORD_LEN;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];
		unsigned first = is_switch(node) ? 0 : 1;
		unsigned last = is_switch(node) ? 0 : node->ni.num_ports;

		for (port = first; port <= last; port++) {
			struct ibemu_mad_node_info ni = node->ni;
			uint16_t lid = lid_of(sm, node, port);

			if (!lid)
				continue; /* a port the sweep did not reach */
			if (!is_switch(node)) {
				ni.local_port_num = (uint8_t)port;
				if (port != node->in_port)
					ni.port_guid = node->ports[port].guid;
			}
			memset(rec, 0, sizeof(rec));
			ibemu__mad_set_be(rec, 2, lid);
			ibemu_mad_node_info_encode(&ni, rec + 4,
						   IBEMU_MAD_NODE_INFO_LEN);
			ibemu_mad_node_desc_encode(&node->nd, rec + 44,
						   IBEMU_MAD_NODE_DESC_LEN);
			if (sa_add_if(req, &node_fields, rec))
				return;
		}
	}
}

/*
 * IBA 15.2.5.3 PortInfoRecord: EndportLID, PortNum, Options, then the
 * fields of PortInfo up to MTUCap (the ones a mask may select here).
 */
static const uint16_t pir_widths[] = {
	16, 8, 8, 64, 64, 16, 16, 32, 16, 16, 8, 8, 8, 8, 4, 4,
	4,  4, 2, 3,  3,  4,  4,  4,  4,  4,  4, 8, 8, 8, 4, 4,
};
static const struct sa_fields pir_fields = {pir_widths, 32};

void sa_port_info_records(struct sm *sm, struct sa_req *req)
{
	uint64_t mask = req->comp_mask & ~(1ull << PIR_CAPMASK_BIT);
	const struct sa_fields f = pir_fields;
	uint8_t rec[SA_PORT_INFO_RECORD_LEN];
	uint32_t want, have;
	uint32_t n;
	unsigned port;

	/*
	 * IBA 15.2.5.3 (1.2 errata): with bit 31 of the modifier set, the
	 * CapabilityMask selects the ports that have every bit it has.
	 */
	want = (uint32_t)ibemu__mad_get_be(req->rec + PIR_CAPMASK_OFF, 4);
	req->rec_size = SA_PORT_INFO_RECORD_LEN;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		for (port = 0; port <= node->ni.num_ports; port++) {
			struct ibemu_mad_port_info pi = node->ports[port].pi;
			uint16_t lid = lid_of(sm, node, port);

			if (!node->ports[port].have_pi || !lid)
				continue;
			pi.m_key = 0; /* IBA 15.2.5.3: untrusted requests */
			memset(rec, 0, sizeof(rec));
			ibemu__mad_set_be(rec, 2, lid);
			rec[2] = (uint8_t)port;
			ibemu_mad_port_info_encode(&pi, rec + 4,
						   IBEMU_MAD_PORT_INFO_LEN);
			if (!sa_match(&f, mask, rec, req->rec))
				continue;
			have = pi.capability_mask;
			if ((req->comp_mask >> PIR_CAPMASK_BIT & 1) &&
			    ((req->attr_mod >> 31) ? (have & want) != want
						   : have != want))
				continue;
			if (sa_add(req, rec))
				return;
		}
	}
}

/* IBA 15.2.5.4 SwitchInfoRecord: LID, reserved, SwitchInfo. */
static const uint16_t swir_widths[] = {16, 16};
static const struct sa_fields swir_fields = {swir_widths, 2};

void sa_switch_info_records(struct sm *sm, struct sa_req *req)
{
	uint8_t rec[SA_SWITCH_INFO_RECORD_LEN];
	uint32_t n;

	req->rec_size = SA_SWITCH_INFO_RECORD_LEN;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];
		struct ibemu_mad_switch_info si = node->si;

		if (!is_switch(node))
			continue;
		/* As program.c wrote it. */
		si.linear_fdb_top = sm->routes->max_lid;
		si.port_state_change = 0;
		memset(rec, 0, sizeof(rec));
		ibemu__mad_set_be(rec, 2, lid_of(sm, node, 0));
		ibemu_mad_switch_info_encode(&si, rec + 4,
					     IBEMU_MAD_SWITCH_INFO_LEN);
		if (sa_add_if(req, &swir_fields, rec))
			return;
	}
}

/* IBA 15.2.5.9 LinkRecord: FromLID, FromPort, ToPort, ToLID. */
static const uint16_t link_widths[] = {16, 8, 8, 16};
static const struct sa_fields link_fields = {link_widths, 4};

void sa_link_records(struct sm *sm, struct sa_req *req)
{
	uint8_t rec[SA_LINK_RECORD_LEN];
	uint32_t n;
	unsigned port;

	req->rec_size = SA_LINK_RECORD_LEN;
	for (n = 0; n < sm->nnodes; n++) {
		const struct sm_node *node = &sm->nodes[n];

		for (port = 1; port <= node->ni.num_ports; port++) {
			const struct sm_port *p = &node->ports[port];

			if (p->peer >= sm->nnodes)
				continue;
			memset(rec, 0, sizeof(rec));
			ibemu__mad_set_be(rec, 2, lid_of(sm, node, port));
			rec[2] = (uint8_t)port;
			rec[3] = p->peer_port;
			ibemu__mad_set_be(
				rec + 4, 2,
				lid_of(sm, &sm->nodes[p->peer], p->peer_port));
			if (sa_add_if(req, &link_fields, rec))
				return;
		}
	}
}

/* IBA 15.2.5.7 SMInfoRecord: LID, reserved, SMInfo. */
static const uint16_t smir_widths[] = {16, 16, 64, 64, 32, 4, 4};
static const struct sa_fields smir_fields = {smir_widths, 7};

void sa_sm_info_records(struct sm *sm, struct sa_req *req)
{
	uint8_t rec[SA_SM_INFO_RECORD_LEN] = {0};
	struct ibemu_mad_sm_info info = {
		.guid = sm->nnodes ? sm->nodes[0].ni.port_guid : 0,
		.act_count = (uint32_t)(sm->heavy_sweeps + sm->light_sweeps),
		.priority = (uint8_t)sm->priority,
		.sm_state = SM_STATE_MASTER,
	};

	/* This SM only: it keeps no table of the standbys it outranks. */
	req->rec_size = SA_SM_INFO_RECORD_LEN;
	ibemu__mad_set_be(rec, 2, sm->sm_lid);
	ibemu_mad_sm_info_encode(&info, rec + 4, IBEMU_MAD_SM_INFO_LEN);
	sa_add_if(req, &smir_fields, rec);
}
