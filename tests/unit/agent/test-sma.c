// SPDX-License-Identifier: MIT
/*
 * The subnet management agents (agent/), asked directly as the engine's
 * SMI would ask them: NodeInfo, NodeDescription and PortInfo agree with the
 * topology; every Status code of IBA 13.4.7 and the silent drops; the
 * PortInfo state machine (Init -> Armed -> Active, links going down and
 * retraining in virtual time, Trap 128 and TrapRepress); LIDs; the tables
 * (LFT, MFT, SL2VL, VL arbitration, P_Keys, GUIDs) against the engine's;
 * the M_Key protection levels and lease.
 */
#include <string.h>

#include "agent.h"
#include "agent_int.h"
#include "engine.h"
#include "mad.h"
#include "mad_sma.h"
#include "routing.h"
#include "unit.h"

struct fx {
	struct ibemu_topo *t;
	struct ibemu_engine *e;
	struct ibemu_routes *r;
	/* MADs handed up to the processes on HCA ports (traps for the SM). */
	unsigned nmads;
	uint32_t mad_port;
	struct ibemu_mad_msg mad;
};

static void mad_recv(void *ctx, uint32_t port, const struct ibemu_mad_msg *m)
{
	struct fx *f = ctx;

	f->nmads++;
	f->mad_port = port;
	f->mad = *m;
}

static const struct ibemu_port_ops ops = {.mad_recv = mad_recv};

/* two-switch.yaml: sw1(1)-hca1, sw1(2)-hca2, sw2(1)-hca3, sw2(2)-hca4,
 * sw1(7)-sw2(7), sw1(8)-sw2(8); 4x HDR; LIDs sw1 1, sw2 2, hca1..4 3..6. */
static void setup(struct fx *f, int routes)
{
	memset(f, 0, sizeof(*f));
	ibemu_test_engine_up("two-switch", routes, &ops, f, &f->t, &f->e,
			     &f->r);
	T_TRUE(ibemu_engine_mgmt(f->e) != NULL);
}

static void teardown(struct fx *f)
{
	ibemu_test_engine_down(f->t, f->e, f->r);
}

static uint32_t node_of(struct fx *f, const char *name)
{
	return ibemu_test_node(f->t, name);
}

static uint32_t port_of(struct fx *f, const char *name, unsigned port)
{
	return ibemu_test_port(f->t, f->e, name, port);
}

/*
 * Runs 'ps' of virtual time. The engine's clock stops at the last event it
 * ran, so a do-nothing timer at the end makes it reach exactly now + ps,
 * where the agents' next actions then happen.
 */
static void run_for(struct fx *f, uint64_t ps)
{
	uint64_t until = ibemu_engine_now(f->e) + ps;

	ibemu_engine_timer(f->e, port_of(f, "hca1", 1), until, 0);
	ibemu_engine_run(f->e, until, SIZE_MAX);
	T_EQ_U64(ibemu_engine_now(f->e), until);
}

/* An SMP request, LID-routed or directed route (hop count 0 path). */
static void smp_req(struct ibemu_mad_smp *s, int dr, uint8_t method,
		    uint16_t attr, uint32_t mod)
{
	memset(s, 0, sizeof(*s));
	s->hdr.base_version = 1;
	s->hdr.mgmt_class =
		dr ? IBEMU_MAD_CLASS_SUBN_DR : IBEMU_MAD_CLASS_SUBN_LID;
	s->hdr.class_version = 1;
	s->hdr.method = method;
	s->hdr.tid = 0x5151;
	s->hdr.attr_id = attr;
	s->hdr.attr_mod = mod;
	s->dr_slid = s->dr_dlid = 0xffff;
}

/* Hands 's' to 'node''s agents, as if it came in through 'port'. Returns
 * what ibemu__agent_process() returns; decodes the response into 'out'. */
static int ask(struct fx *f, const char *node, unsigned port,
	       const struct ibemu_mad_smp *s, struct ibemu_mad_smp *out)
{
	uint8_t req[IBEMU_MAD_LEN], resp[IBEMU_MAD_LEN];
	int ret;

	T_EQ_INT(ibemu_mad_smp_encode(s, req, sizeof(req)), 0);
	ret = ibemu__agent_process(f->e, node_of(f, node), port, req, resp);
	if (ret && out)
		T_EQ_INT(ibemu_mad_smp_decode(resp, sizeof(resp), out), 0);
	return ret;
}

/* Get(attr) through 'port'; returns the Status, response data in 'data'. */
static int get(struct fx *f, const char *node, unsigned port, uint16_t attr,
	       uint32_t mod, uint8_t *data)
{
	struct ibemu_mad_smp s, r;

	smp_req(&s, 0, IBEMU_MAD_METHOD_GET, attr, mod);
	T_EQ_INT(ask(f, node, port, &s, &r), 1);
	T_EQ_INT(r.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_U64(r.hdr.tid, 0x5151);
	memcpy(data, r.data, IBEMU_SMP_DATA_LEN);
	return r.hdr.status;
}

static int set(struct fx *f, const char *node, unsigned port, uint16_t attr,
	       uint32_t mod, uint8_t *data)
{
	struct ibemu_mad_smp s, r;

	smp_req(&s, 0, IBEMU_MAD_METHOD_SET, attr, mod);
	memcpy(s.data, data, IBEMU_SMP_DATA_LEN);
	T_EQ_INT(ask(f, node, port, &s, &r), 1);
	T_EQ_INT(r.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	memcpy(data, r.data, IBEMU_SMP_DATA_LEN);
	return r.hdr.status;
}

static int get_pi(struct fx *f, const char *node, unsigned port, uint32_t mod,
		  struct ibemu_mad_port_info *pi)
{
	uint8_t d[IBEMU_SMP_DATA_LEN];
	int st = get(f, node, port, IBEMU_SMP_ATTR_PORT_INFO, mod, d);

	T_EQ_INT(ibemu_mad_port_info_decode(d, sizeof(d), pi), 0);
	return st;
}

/* Set(PortInfo) of what 'pi' holds (typically a Get's result, modified). */
static int set_pi(struct fx *f, const char *node, unsigned port, uint32_t mod,
		  struct ibemu_mad_port_info *pi)
{
	uint8_t d[IBEMU_SMP_DATA_LEN] = {0};
	int st;

	T_EQ_INT(ibemu_mad_port_info_encode(pi, d, sizeof(d)), 0);
	st = set(f, node, port, IBEMU_SMP_ATTR_PORT_INFO, mod, d);
	T_EQ_INT(ibemu_mad_port_info_decode(d, sizeof(d), pi), 0);
	return st;
}

/* Set(PortInfo) that only asks for a state change (a Get-modify-Set). */
static int set_state(struct fx *f, const char *node, unsigned port,
		     uint32_t mod, uint8_t state, uint8_t phys)
{
	struct ibemu_mad_port_info pi;

	T_EQ_INT(get_pi(f, node, port, mod, &pi), 0);
	pi.port_state = state;
	pi.port_phys_state = phys;
	return set_pi(f, node, port, mod, &pi);
}

static void test_node_info(void)
{
	static const char *const names[] = {"sw1", "sw2", "hca1", "hca4"};
	struct ibemu_mad_node_info ni;
	struct ibemu_mad_node_desc nd;
	uint8_t d[IBEMU_SMP_DATA_LEN];
	struct fx f;
	unsigned i;

	setup(&f, 0);
	for (i = 0; i < IBEMU_ARRAY_SIZE(names); i++) {
		const struct ibemu_topo_node *tn =
			&f.t->nodes[node_of(&f, names[i])];
		int sw = tn->type == IBEMU_NODE_SWITCH;
		unsigned in = sw ? 7 : 1;
		const char *want;

		T_EQ_INT(get(&f, names[i], in, IBEMU_SMP_ATTR_NODE_INFO, 0, d),
			 0);
		T_EQ_INT(ibemu_mad_node_info_decode(d, sizeof(d), &ni), 0);
		T_EQ_INT(ni.base_version, 1);
		T_EQ_INT(ni.class_version, 1);
		T_EQ_INT(ni.node_type,
			 sw ? IBEMU_MAD_NODE_SWITCH : IBEMU_MAD_NODE_CA);
		T_EQ_INT(ni.num_ports, tn->nports);
		T_EQ_U64(ni.node_guid, tn->guid);
		T_EQ_U64(ni.system_image_guid, tn->sysimage_guid);
		T_EQ_U64(ni.port_guid, tn->ports[sw ? 0 : 1].guid);
		T_EQ_INT(ni.local_port_num, in);
		T_EQ_INT(ni.vendor_id, tn->vendor_id);
		T_EQ_INT(ni.device_id, tn->device_id);
		T_EQ_INT(ni.partition_cap, sw ? 32 : 128);

		want = tn->desc ? tn->desc : tn->name;
		T_EQ_INT(get(&f, names[i], in, IBEMU_SMP_ATTR_NODE_DESC, 0, d),
			 0);
		T_EQ_INT(ibemu_mad_node_desc_decode(d, sizeof(d), &nd), 0);
		T_TRUE(!strncmp(nd.str, want, sizeof(nd.str)));
		T_EQ_INT(nd.str[strlen(want)], 0);
	}
	T_EQ_STR(f.t->nodes[node_of(&f, "hca1")].desc, "hca1 HCA-1");
	teardown(&f);
}

static void test_port_info_values(void)
{
	struct ibemu_mad_port_info pi, api;
	struct fx f;

	setup(&f, 0);
	/* Cabled ports come up Init/LinkUp; 4x HDR; 4096 MTU; 4 VLs. */
	T_EQ_INT(get_pi(&f, "hca1", 1, 0, &pi), 0);
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_INIT);
	T_EQ_INT(pi.port_phys_state, IBEMU_MAD_PHYS_LINKUP);
	T_EQ_INT(pi.local_port_num, 1);
	T_EQ_INT(pi.lid, 0);
	T_EQ_INT(pi.link_width_active, IBEMU_MAD_WIDTH_4X);
	T_TRUE(pi.link_width_supported & IBEMU_MAD_WIDTH_2X);
	T_EQ_INT(pi.link_width_enabled, pi.link_width_supported);
	T_EQ_INT(pi.link_speed_ext_active, IBEMU_MAD_SPEED_EXT_HDR);
	T_EQ_INT(pi.link_speed_ext_supported, 0x7);
	T_EQ_INT(pi.link_speed_supported, 0x7);
	T_EQ_INT(pi.mtu_cap, IBEMU_MAD_MTU_4096);
	T_EQ_INT(pi.neighbor_mtu, IBEMU_MAD_MTU_4096);
	T_EQ_INT(pi.vl_cap, IBEMU_MAD_VLS_4);
	T_EQ_INT(pi.operational_vls, IBEMU_MAD_VLS_4);
	T_EQ_U64(pi.gid_prefix, 0xfe80000000000000ull);
	T_EQ_INT(pi.guid_cap, 8);
	T_EQ_INT(pi.link_down_default_state, 2);
	T_TRUE(pi.capability_mask & IBEMU_MAD_CAP_EXTENDED_SPEEDS);
	T_TRUE(pi.capability_mask & IBEMU_MAD_CAP_CAPABILITY_MASK2);
	T_TRUE(pi.capability_mask2 & (1u << 5)); /* IsLinkSpeedHDRSupported */
	T_EQ_INT(pi.vl_arb_high_cap, 64);
	/* The read-only view for the daemon is the same thing. */
	T_EQ_INT(ibemu_agent_port_info(f.e, port_of(&f, "hca1", 1), &api), 0);
	T_TRUE(!memcmp(&pi, &api, sizeof(pi)));
	/* An uncabled switch port is Down/Polling. */
	T_EQ_INT(get_pi(&f, "sw1", 7, 5, &pi), 0);
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_DOWN);
	T_EQ_INT(pi.port_phys_state, IBEMU_MAD_PHYS_POLLING);
	T_EQ_INT(pi.local_port_num, 7);
	teardown(&f);

	setup(&f, 1);
	T_EQ_INT(get_pi(&f, "hca4", 1, 1, &pi), 0);
	T_EQ_INT(pi.lid, ibemu_routes_lid(f.r, node_of(&f, "hca4"), 1));
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_ACTIVE);
	/* A switch's port 0 carries its LID and is always up; its external
	 * ports report the switch's LID too. */
	T_EQ_INT(get_pi(&f, "sw2", 1, 0, &pi), 0);
	T_EQ_INT(pi.lid, 2);
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_ACTIVE);
	T_EQ_INT(pi.port_phys_state, IBEMU_MAD_PHYS_LINKUP);
	T_EQ_INT(pi.guid_cap, 1);
	T_TRUE(pi.capability_mask & IBEMU_MAD_CAP_TRAP);
	T_EQ_INT(get_pi(&f, "sw2", 1, 2, &pi), 0);
	T_EQ_INT(pi.lid, 2);
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_ACTIVE);
	T_EQ_INT(pi.local_port_num, 1);
	teardown(&f);
}

/* A request 'req' (already encoded) and the Status it must get. */
static void expect_status(struct fx *f, const char *node, unsigned port,
			  uint8_t *req, int want_method, int want_status)
{
	uint8_t resp[IBEMU_MAD_LEN];
	struct ibemu_mad_hdr h;

	T_EQ_INT(ibemu__agent_process(f->e, node_of(f, node), port, req, resp),
		 1);
	T_EQ_INT(ibemu_mad_hdr_decode(resp, sizeof(resp), &h), 0);
	T_EQ_INT(h.method, want_method);
	T_EQ_INT(h.status, want_status);
}

static void encode_req(uint8_t *req, int dr, uint8_t method, uint16_t attr,
		       uint32_t mod)
{
	struct ibemu_mad_smp s;

	smp_req(&s, dr, method, attr, mod);
	T_EQ_INT(ibemu_mad_smp_encode(&s, req, IBEMU_MAD_LEN), 0);
}

static void test_status_codes(void)
{
	uint8_t req[IBEMU_MAD_LEN], resp[IBEMU_MAD_LEN];
	struct fx f;

	setup(&f, 0);
	/* IBA 13.4.7: bad base version, bad class version. */
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_NODE_INFO, 0);
	req[0] = 2;
	expect_status(&f, "hca1", 1, req, 0x81, IBEMU_MAD_STATUS_BAD_VERSION);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_NODE_INFO, 0);
	req[2] = 2;
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_BAD_VERSION);
	/* An unknown method: its response method has R set. */
	encode_req(req, 0, 0x10, IBEMU_SMP_ATTR_NODE_INFO, 0);
	expect_status(&f, "sw1", 1, req, 0x90, IBEMU_MAD_STATUS_METHOD_UNSUPP);
	/* Unknown attribute; a Get-only attribute Set; a switch attribute
	 * asked of a CA; SMInfo, which only an SM answers. */
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, 0x00ff, 0);
	expect_status(&f, "hca1", 1, req, 0x81,
		      IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	encode_req(req, 0, IBEMU_MAD_METHOD_SET, IBEMU_SMP_ATTR_NODE_INFO, 0);
	expect_status(&f, "hca1", 1, req, 0x81,
		      IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_SWITCH_INFO, 0);
	expect_status(&f, "hca1", 1, req, 0x81,
		      IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_LFT, 0);
	expect_status(&f, "hca2", 1, req, 0x81,
		      IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_SM_INFO, 0);
	expect_status(&f, "sw1", 1, req, 0x81,
		      IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_NOTICE, 0);
	expect_status(&f, "sw1", 1, req, 0x81,
		      IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP);
	/* Bad attribute modifiers. */
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PORT_INFO, 9);
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PORT_INFO, 2);
	expect_status(&f, "hca1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PORT_INFO,
		   1u << 31 | 8);
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_OK);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_LFT, 768);
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PKEY_TABLE, 4);
	expect_status(&f, "hca1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PKEY_TABLE,
		   9u << 16);
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_VLARB_TABLE,
		   5u << 16 | 1);
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_GUID_INFO, 1);
	expect_status(&f, "hca1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_MFT, 1u << 28);
	expect_status(&f, "sw1", 1, req, 0x81, IBEMU_MAD_STATUS_INVALID_FIELD);
	/* A directed-route response keeps D (the SMI sets it) under a
	 * 15-bit Status. */
	encode_req(req, 1, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PORT_INFO, 9);
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "sw1"), 1, req, resp),
		 1);
	T_EQ_INT(resp[4] & 0x80, 0);
	T_EQ_INT((resp[4] << 8 | resp[5]) & 0x7fff,
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(resp[3], IBEMU_MAD_METHOD_GET_RESP);
	/* Answered in place: the request buffer may be the response's. */
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_NODE_INFO, 0);
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "sw1"), 1, req, req), 1);
	T_EQ_INT(req[3], IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_INT(req[IBEMU_SMP_DATA_OFF + 2], IBEMU_MAD_NODE_SWITCH);

	/* Dropped without a response: responses, traps, TrapRepress, Send,
	 * classes the node's agents do not serve, and bad versions of the
	 * methods that never get a response (IBA 13.4.5, 13.5.3). */
	encode_req(req, 0, IBEMU_MAD_METHOD_GET_RESP, IBEMU_SMP_ATTR_NODE_INFO,
		   0);
	T_EQ_INT(ibemu__agent_process(f.e, 0, 1, req, resp), 0);
	encode_req(req, 0, IBEMU_MAD_METHOD_TRAP, IBEMU_SMP_ATTR_NOTICE, 0);
	T_EQ_INT(ibemu__agent_process(f.e, 0, 1, req, resp), 0);
	encode_req(req, 0, IBEMU_MAD_METHOD_TRAP_REPRESS, IBEMU_SMP_ATTR_NOTICE,
		   0);
	T_EQ_INT(ibemu__agent_process(f.e, 0, 1, req, resp), 0);
	encode_req(req, 0, IBEMU_MAD_METHOD_SEND, IBEMU_SMP_ATTR_NODE_INFO, 0);
	T_EQ_INT(ibemu__agent_process(f.e, 0, 1, req, resp), 0);
	encode_req(req, 0, IBEMU_MAD_METHOD_TRAP_REPRESS, IBEMU_SMP_ATTR_NOTICE,
		   0);
	req[2] = 7;
	T_EQ_INT(ibemu__agent_process(f.e, 0, 1, req, resp), 0);
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_NODE_INFO, 0);
	req[1] = 0x03; /* SA */
	T_EQ_INT(ibemu__agent_process(f.e, 0, 1, req, resp), 0);
	/* A port the node does not have. */
	encode_req(req, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_NODE_INFO, 0);
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "hca1"), 2, req, resp),
		 0);
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "hca1"), 0, req, resp),
		 0);
	T_EQ_INT(ibemu__agent_process(f.e, node_of(&f, "sw1"), 0, req, resp),
		 1);
	teardown(&f);
}

static void test_takes(void)
{
	uint8_t mad[IBEMU_MAD_LEN];

	encode_req(mad, 0, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PORT_INFO, 0);
	T_EQ_INT(ibemu__agent_takes(mad), 1);
	encode_req(mad, 1, IBEMU_MAD_METHOD_SET, IBEMU_SMP_ATTR_PORT_INFO, 0);
	T_EQ_INT(ibemu__agent_takes(mad), 1);
	encode_req(mad, 1, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_SM_INFO, 0);
	T_EQ_INT(ibemu__agent_takes(mad), 0);
	encode_req(mad, 0, IBEMU_MAD_METHOD_TRAP, IBEMU_SMP_ATTR_NOTICE, 0);
	T_EQ_INT(ibemu__agent_takes(mad), 0);
	/* A TrapRepress() goes where its Trap came from, by the TID: an
	 * attached process's (an SM's Trap 144 to its master), or the SMA's. */
	encode_req(mad, 0, IBEMU_MAD_METHOD_TRAP_REPRESS, IBEMU_SMP_ATTR_NOTICE,
		   0);
	ibemu_mad_set_tid(mad, 0x000001a200000007ull);
	T_EQ_INT(ibemu__agent_takes(mad), 0);
	ibemu_mad_set_tid(mad, 0x1b3a000000000003ull);
	T_EQ_INT(ibemu__agent_takes(mad), 1);
	encode_req(mad, 0, IBEMU_MAD_METHOD_GET_RESP, IBEMU_SMP_ATTR_NODE_INFO,
		   0);
	T_EQ_INT(ibemu__agent_takes(mad), 0);
	mad[1] = IBEMU_MAD_CLASS_PERF;
	mad[3] = IBEMU_MAD_METHOD_GET;
	T_EQ_INT(ibemu__agent_takes(mad), 1);
	mad[1] = IBEMU_MAD_CLASS_CC;
	T_EQ_INT(ibemu__agent_takes(mad), 1);
	mad[3] = IBEMU_MAD_METHOD_GET_RESP;
	T_EQ_INT(ibemu__agent_takes(mad), 0);
	mad[1] = 0x03; /* SA: the SM's */
	mad[3] = IBEMU_MAD_METHOD_GET;
	T_EQ_INT(ibemu__agent_takes(mad), 0);
}

static uint8_t state_of(struct fx *f, const char *node, unsigned port)
{
	return ibemu_engine_port_state(f->e, port_of(f, node, port));
}

static uint8_t phys_of(struct fx *f, const char *node, unsigned port)
{
	return ibemu_engine_phys_state(f->e, port_of(f, node, port));
}

static void test_state_machine(void)
{
	struct ibemu_mad_port_info pi;
	struct fx f;

	setup(&f, 0);
	/* IBA 7.2: Active only from Armed; nothing changes on refusal. */
	T_EQ_INT(set_state(&f, "hca1", 1, 0, IBEMU_MAD_PORT_ACTIVE, 0),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_INIT);
	/* Init is not a state one sets; a physical state with Armed is
	 * refused; reserved values are refused. */
	T_EQ_INT(set_state(&f, "hca1", 1, 0, IBEMU_MAD_PORT_INIT, 0),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(set_state(&f, "hca1", 1, 0, IBEMU_MAD_PORT_ARMED,
			   IBEMU_MAD_PHYS_POLLING),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(set_state(&f, "hca1", 1, 0, 5, 0),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(set_state(&f, "hca1", 1, 0, 0, 4),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_INIT);
	/* Init -> Armed -> Active, from the switch side of the link. */
	T_EQ_INT(set_state(&f, "sw1", 7, 1, IBEMU_MAD_PORT_ARMED, 0), 0);
	T_EQ_INT(state_of(&f, "sw1", 1), IBEMU_PORT_ARMED);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_INIT);
	/* Asked again (a retried Set): no change, no error. */
	T_EQ_INT(set_state(&f, "sw1", 7, 1, IBEMU_MAD_PORT_ARMED, 0), 0);
	T_EQ_INT(set_state(&f, "sw1", 7, 1, IBEMU_MAD_PORT_ACTIVE, 0), 0);
	T_EQ_INT(state_of(&f, "sw1", 1), IBEMU_PORT_ACTIVE);
	/* Armed from Active is not a transition the SM may ask for. */
	T_EQ_INT(set_state(&f, "sw1", 7, 1, IBEMU_MAD_PORT_ARMED, 0),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(state_of(&f, "sw1", 1), IBEMU_PORT_ACTIVE);
	/* The response reports the new state. */
	T_EQ_INT(get_pi(&f, "hca1", 1, 1, &pi), 0);
	pi.port_state = IBEMU_MAD_PORT_ARMED;
	pi.port_phys_state = 0;
	T_EQ_INT(set_pi(&f, "hca1", 1, 1, &pi), 0);
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_ARMED);
	/* An uncabled port cannot leave Down. */
	T_EQ_INT(set_state(&f, "sw1", 7, 3, IBEMU_MAD_PORT_ARMED, 0),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	/* A switch's port 0 has no link to change. */
	T_EQ_INT(set_state(&f, "sw1", 7, 0, IBEMU_MAD_PORT_DOWN, 0), 0);
	T_EQ_INT(get_pi(&f, "sw1", 7, 0, &pi), 0);
	T_EQ_INT(pi.port_state, IBEMU_MAD_PORT_ACTIVE);
	teardown(&f);
}

static unsigned psc(struct fx *f, const char *sw)
{
	struct ibemu_mad_switch_info si;
	uint8_t d[IBEMU_SMP_DATA_LEN];

	T_EQ_INT(get(f, sw, 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
	return si.port_state_change;
}

static void test_link_down_retrains(void)
{
	struct fx f;

	setup(&f, 1);
	/* IBA 7.2: an SM takes a switch-to-switch link down: both ends go
	 * Down at once. Only the far switch's PortStateChange is set: a
	 * change made by SubnSet() does not set the bit (IBA 14.2.5.4). */
	T_EQ_INT(set_state(&f, "sw1", 1, 7, IBEMU_MAD_PORT_DOWN, 0), 0);
	T_EQ_INT(state_of(&f, "sw1", 7), IBEMU_PORT_DOWN);
	T_EQ_INT(phys_of(&f, "sw1", 7), IBEMU_PHYS_POLLING);
	T_EQ_INT(state_of(&f, "sw2", 7), IBEMU_PORT_DOWN);
	T_EQ_INT(phys_of(&f, "sw2", 7), IBEMU_PHYS_POLLING);
	T_EQ_INT(psc(&f, "sw1"), 0);
	T_EQ_INT(psc(&f, "sw2"), 1);
	/* The link trains in 1 ms of virtual time; both ends enter Init. */
	run_for(&f, 999999999ull);
	T_EQ_INT(state_of(&f, "sw1", 7), IBEMU_PORT_DOWN);
	run_for(&f, 1);
	T_EQ_INT(state_of(&f, "sw1", 7), IBEMU_PORT_INIT);
	T_EQ_INT(phys_of(&f, "sw1", 7), IBEMU_PHYS_LINKUP);
	T_EQ_INT(state_of(&f, "sw2", 7), IBEMU_PORT_INIT);
	T_EQ_INT(phys_of(&f, "sw2", 7), IBEMU_PHYS_LINKUP);
	/* Down -> Init by the link state machine sets the bit on both. */
	T_EQ_INT(psc(&f, "sw1"), 1);
	/* Set(SwitchInfo) with PortStateChange 1 clears it. */
	{
		struct ibemu_mad_switch_info si;
		uint8_t d[IBEMU_SMP_DATA_LEN];

		T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d),
			 0);
		T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
		T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d),
			 0);
		T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
		T_EQ_INT(si.port_state_change, 0);
	}
	T_EQ_INT(psc(&f, "sw1"), 0);

	/* The HCA end takes its own link down: its peer follows. */
	T_EQ_INT(set_state(&f, "hca2", 1, 0, IBEMU_MAD_PORT_DOWN, 0), 0);
	T_EQ_INT(state_of(&f, "sw1", 2), IBEMU_PORT_DOWN);
	T_EQ_INT(psc(&f, "sw1"), 1);
	run_for(&f, 1000000000ull);
	T_EQ_INT(state_of(&f, "hca2", 1), IBEMU_PORT_INIT);
	T_EQ_INT(state_of(&f, "sw1", 2), IBEMU_PORT_INIT);

	/* Disabled stays down; Polling brings the link back. */
	T_EQ_INT(set_state(&f, "sw1", 1, 1, 0, IBEMU_MAD_PHYS_DISABLED), 0);
	T_EQ_INT(state_of(&f, "sw1", 1), IBEMU_PORT_DOWN);
	T_EQ_INT(phys_of(&f, "sw1", 1), IBEMU_PHYS_DISABLED);
	T_EQ_INT(phys_of(&f, "hca1", 1), IBEMU_PHYS_POLLING);
	run_for(&f, 50000000000ull);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_DOWN);
	T_EQ_INT(phys_of(&f, "sw1", 1), IBEMU_PHYS_DISABLED);
	T_EQ_INT(set_state(&f, "sw1", 1, 1, 0, IBEMU_MAD_PHYS_POLLING), 0);
	T_EQ_INT(phys_of(&f, "sw1", 1), IBEMU_PHYS_POLLING);
	run_for(&f, 1000000000ull);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_INIT);
	T_EQ_INT(phys_of(&f, "sw1", 1), IBEMU_PHYS_LINKUP);
	/* Polling on a link that is up bounces it (ibportstate reset). */
	T_EQ_INT(set_state(&f, "sw1", 1, 1, 0, IBEMU_MAD_PHYS_POLLING), 0);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_DOWN);
	run_for(&f, 1000000000ull);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_INIT);
	/* A second Down before the first training ends restarts it. */
	T_EQ_INT(set_state(&f, "sw1", 1, 1, IBEMU_MAD_PORT_DOWN, 0), 0);
	run_for(&f, 500000000ull);
	T_EQ_INT(set_state(&f, "sw1", 1, 1, 0, IBEMU_MAD_PHYS_POLLING), 0);
	run_for(&f, 600000000ull);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_DOWN);
	run_for(&f, 400000000ull);
	T_EQ_INT(state_of(&f, "hca1", 1), IBEMU_PORT_INIT);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	teardown(&f);
}

/* Makes hca1 (LID 3) sw1's master SM, SubnetTimeout 'st'. */
static void set_master_sm(struct fx *f, const char *sw, uint8_t st)
{
	struct ibemu_mad_port_info pi;

	T_EQ_INT(get_pi(f, sw, 1, 0, &pi), 0);
	pi.master_sm_lid = 3;
	pi.master_sm_sl = 0;
	pi.subnet_timeout = st;
	pi.port_state = pi.port_phys_state = 0;
	T_EQ_INT(set_pi(f, sw, 1, 0, &pi), 0);
	T_EQ_INT(pi.master_sm_lid, 3);
	T_EQ_INT(pi.subnet_timeout, st);
}

static void check_trap128(struct fx *f, uint16_t lid)
{
	struct ibemu_mad_notice n;
	struct ibemu_mad_trap_lid tl;
	struct ibemu_mad_smp s;

	T_EQ_INT(f->mad_port, port_of(f, "hca1", 1));
	T_EQ_INT(f->mad.slid, lid);
	T_EQ_INT(f->mad.dlid, 3);
	T_EQ_INT(ibemu_mad_smp_decode(f->mad.mad, sizeof(f->mad.mad), &s), 0);
	T_EQ_INT(s.hdr.mgmt_class, IBEMU_MAD_CLASS_SUBN_LID);
	T_EQ_INT(s.hdr.method, IBEMU_MAD_METHOD_TRAP);
	T_EQ_INT(s.hdr.attr_id, IBEMU_SMP_ATTR_NOTICE);
	T_EQ_INT(ibemu_mad_notice_decode(s.data, sizeof(s.data), &n), 0);
	T_EQ_INT(n.is_generic, 1);
	T_EQ_INT(n.type, IBEMU_MAD_NOTICE_URGENT);
	T_EQ_INT(n.producer_type, IBEMU_MAD_NODE_SWITCH);
	T_EQ_INT(n.trap_number, 128);
	T_EQ_INT(n.issuer_lid, lid);
	T_EQ_INT(ibemu_mad_trap_lid_decode(n.data_details,
					   sizeof(n.data_details), &tl),
		 0);
	T_EQ_INT(tl.lid, lid);
}

static void test_trap128(void)
{
	struct ibemu_mad_smp s, first;
	uint64_t every = 4096000ull << 10; /* SubnetTimeout 10: 4.19 ms */
	struct fx f;

	setup(&f, 1);
	set_master_sm(&f, "sw2", 10);
	/* sw1 takes port 7 down: sw2's port 7 changes by its link, so sw2
	 * traps to its master SM at once (LID-routed through sw1). */
	T_EQ_INT(set_state(&f, "sw1", 1, 7, IBEMU_MAD_PORT_DOWN, 0), 0);
	run_for(&f, 1000000ull); /* 1 us: across both switches */
	T_EQ_INT(f.nmads, 1);
	check_trap128(&f, 2);
	T_EQ_INT(ibemu_mad_smp_decode(f.mad.mad, sizeof(f.mad.mad), &first), 0);
	/* No TrapRepress: it comes again after each SubnetTimeout, five
	 * sends in all, the same TID each time (and the link retrained at
	 * 1 ms, a change the pending trap already reports). */
	run_for(&f, every - 1000000ull);
	T_EQ_INT(f.nmads, 1);
	run_for(&f, 1000000ull);
	T_EQ_INT(f.nmads, 2);
	run_for(&f, 10 * every);
	T_EQ_INT(f.nmads, 5);
	T_EQ_INT(ibemu_mad_smp_decode(f.mad.mad, sizeof(f.mad.mad), &s), 0);
	T_EQ_U64(s.hdr.tid, first.hdr.tid);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	/* A new change after giving up traps again, with a new TID; a
	 * TrapRepress() with that TID stops the repeats. */
	T_EQ_INT(set_state(&f, "hca4", 1, 0, IBEMU_MAD_PORT_DOWN, 0), 0);
	run_for(&f, 1000000ull);
	T_EQ_INT(f.nmads, 6);
	check_trap128(&f, 2);
	T_EQ_INT(ibemu_mad_smp_decode(f.mad.mad, sizeof(f.mad.mad), &s), 0);
	T_TRUE(s.hdr.tid != first.hdr.tid);
	smp_req(&first, 0, IBEMU_MAD_METHOD_TRAP_REPRESS, IBEMU_SMP_ATTR_NOTICE,
		0);
	first.hdr.tid = s.hdr.tid + 1; /* not ours: ignored */
	T_EQ_INT(ask(&f, "sw2", 7, &first, NULL), 0);
	run_for(&f, every);
	T_EQ_INT(f.nmads, 7);
	first.hdr.tid = s.hdr.tid;
	T_EQ_INT(ask(&f, "sw2", 7, &first, NULL), 0);
	run_for(&f, 10 * every);
	T_EQ_INT(f.nmads, 7);
	/* A switch that knows no SM sets the bit and sends nothing. */
	T_EQ_INT(psc(&f, "sw1"), 1);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	teardown(&f);
}

/* Checks the Trap 144 hca1 (LID 3, the SM) got from hca4 (LID 6). */
static void check_trap144(struct fx *f, uint32_t cap_mask,
			  struct ibemu_mad_smp *s)
{
	struct ibemu_mad_trap_local_changes lc;
	struct ibemu_mad_notice n;
	struct ibemu_mad_port_info pi;

	T_EQ_INT(f->mad_port, port_of(f, "hca1", 1));
	T_EQ_INT(f->mad.slid, 6);
	T_EQ_INT(f->mad.dlid, 3);
	T_EQ_INT(ibemu_mad_smp_decode(f->mad.mad, sizeof(f->mad.mad), s), 0);
	T_EQ_INT(s->hdr.mgmt_class, IBEMU_MAD_CLASS_SUBN_LID);
	T_EQ_INT(s->hdr.method, IBEMU_MAD_METHOD_TRAP);
	T_EQ_INT(s->hdr.attr_id, IBEMU_SMP_ATTR_NOTICE);
	T_EQ_INT(ibemu_mad_notice_decode(s->data, sizeof(s->data), &n), 0);
	T_EQ_INT(n.is_generic, 1);
	T_EQ_INT(n.type, IBEMU_MAD_NOTICE_INFO);
	T_EQ_INT(n.producer_type, IBEMU_MAD_NODE_CA);
	T_EQ_INT(n.trap_number, 144);
	T_EQ_INT(n.issuer_lid, 6);
	/* IBA 14.2.5.1 (OpenSM's ib_mad_notice_attr144_t): the LID at
	 * DataDetails bytes 2-3, the new CapabilityMask at 6-9. */
	T_EQ_INT(s->data[10 + 2] << 8 | s->data[10 + 3], 6);
	T_EQ_U64((uint32_t)s->data[16] << 24 | (uint32_t)s->data[17] << 16 |
			 (uint32_t)s->data[18] << 8 | s->data[19],
		 cap_mask);
	T_EQ_INT(ibemu_mad_trap_local_changes_decode(
			 n.data_details, sizeof(n.data_details), &lc),
		 0);
	T_EQ_INT(lc.lid, 6);
	T_EQ_U64(lc.capability_mask, cap_mask);
	T_EQ_INT(get_pi(f, "hca4", 1, 0, &pi), 0);
	T_EQ_U64(pi.capability_mask, cap_mask);
	T_EQ_INT(lc.capability_mask2, pi.capability_mask2);
	T_EQ_INT(lc.other_local_changes | lc.node_description_change |
			 lc.link_width_enabled_change |
			 lc.link_speed_enabled_change,
		 0);
}

/* A TrapRepress() for 'trap', LID-routed from hca1 to hca4 as an SM
 * sends it, with TID 'tid'. */
static void send_trap_repress(struct fx *f, const struct ibemu_mad_smp *trap,
			      uint64_t tid)
{
	struct ibemu_mad_smp s = *trap;
	struct ibemu_mad_msg m;

	memset(&m, 0, sizeof(m));
	s.hdr.method = IBEMU_MAD_METHOD_TRAP_REPRESS;
	s.hdr.tid = tid;
	T_EQ_INT(ibemu_mad_smp_encode(&s, m.mad, sizeof(m.mad)), 0);
	m.slid = 3;
	m.dlid = 6;
	m.pkey = 0xffff;
	T_EQ_INT(ibemu_engine_mad_send(f->e, port_of(f, "hca1", 1), &m), 0);
}

/*
 * IBA 14.2.5.1: an HCA port whose CapabilityMask changes (an SM opened
 * its issm device: IsSM) sends its master SM Trap 144, repeated until a
 * TrapRepress() with its TID; a TrapRepress() with another TID is for
 * the port's owner (an attached SM that trapped), not the SMA.
 */
/* What the daemon will do on an issm open: set the bit, raise Trap 144. */
static void cap_change(struct fx *f, uint32_t pi, uint32_t set, uint32_t clear)
{
	struct ibemu_mad_port_info before, after;

	T_EQ_INT(ibemu_agent_port_info(f->e, pi, &before), 0);
	T_EQ_INT(ibemu_agent_set_port_cap(f->e, pi, set, clear), 0);
	T_EQ_INT(ibemu_agent_port_info(f->e, pi, &after), 0);
	if (before.capability_mask != after.capability_mask)
		ibemu__sma_cap_mask_changed(f->e, pi);
}

static void test_trap144(void)
{
	uint64_t every = 4096000ull << 10; /* SubnetTimeout 10: 4.19 ms */
	struct ibemu_mad_port_info pi;
	struct ibemu_mad_smp s, first;
	uint32_t hca4, cap;
	struct fx f;

	setup(&f, 1);
	hca4 = port_of(&f, "hca4", 1);
	/* A port that knows no SM changes silently. */
	cap_change(&f, hca4, IBEMU_MAD_CAP_IS_SM, 0);
	run_for(&f, every);
	T_EQ_INT(f.nmads, 0);
	cap_change(&f, hca4, 0, IBEMU_MAD_CAP_IS_SM);
	T_EQ_INT(get_pi(&f, "hca4", 1, 0, &pi), 0);
	cap = pi.capability_mask;
	pi.master_sm_lid = 3;
	pi.subnet_timeout = 10;
	pi.port_state = pi.port_phys_state = 0;
	T_EQ_INT(set_pi(&f, "hca4", 1, 0, &pi), 0);
	/* Asking for what the mask already has is no change. */
	cap_change(&f, hca4, 0, IBEMU_MAD_CAP_IS_SM);
	run_for(&f, 1000000ull);
	T_EQ_INT(f.nmads, 0);

	cap_change(&f, hca4, IBEMU_MAD_CAP_IS_SM, 0);
	run_for(&f, 1000000ull); /* 1 us: through sw2 and sw1 */
	T_EQ_INT(f.nmads, 1);
	check_trap144(&f, cap | IBEMU_MAD_CAP_IS_SM, &first);
	/* Repeated every SubnetTimeout with the same TID. */
	run_for(&f, every - 1000000ull);
	T_EQ_INT(f.nmads, 1);
	run_for(&f, 1000000ull);
	T_EQ_INT(f.nmads, 2);
	check_trap144(&f, cap | IBEMU_MAD_CAP_IS_SM, &s);
	T_EQ_U64(s.hdr.tid, first.hdr.tid);
	/* A TrapRepress() with another TID (an attached process's: its hi_tid
	 * in the upper bits) goes past the SMA to the port's owner... */
	send_trap_repress(&f, &first, 0x0000000500000001ull);
	run_for(&f, 1000000ull);
	T_EQ_INT(f.nmads, 3);
	T_EQ_INT(f.mad_port, hca4);
	T_EQ_INT(ibemu_mad_get_method(f.mad.mad),
		 IBEMU_MAD_METHOD_TRAP_REPRESS);
	run_for(&f, every);
	T_EQ_INT(f.nmads, 4); /* ...and the trap goes on */
	/* The trap's own TID stops it; the SMA keeps it to itself. */
	send_trap_repress(&f, &first, first.hdr.tid);
	run_for(&f, 10 * every);
	T_EQ_INT(f.nmads, 4);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	/* The SM leaves: another trap, a new TID, the mask without IsSM;
	 * unrepressed it gives up after five sends. */
	cap_change(&f, hca4, 0, IBEMU_MAD_CAP_IS_SM);
	run_for(&f, 1000000ull);
	T_EQ_INT(f.nmads, 5);
	check_trap144(&f, cap, &s);
	T_TRUE(s.hdr.tid != first.hdr.tid);
	run_for(&f, 10 * every);
	T_EQ_INT(f.nmads, 9);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	teardown(&f);
}

static void test_lids(void)
{
	struct ibemu_mad_port_info pi;
	struct fx f;

	setup(&f, 0);
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	pi.lid = 0x100;
	pi.lmc = 2;
	pi.master_sm_lid = 0x101;
	pi.port_state = pi.port_phys_state = 0;
	T_EQ_INT(set_pi(&f, "hca3", 1, 0, &pi), 0);
	T_EQ_INT(pi.lid, 0x100);
	T_EQ_INT(pi.lmc, 2);
	T_EQ_INT(ibemu_engine_get_lid(f.e, node_of(&f, "hca3"), 1), 0x100);
	/* A switch's LID is its port 0's; external ports ignore LIDs. */
	T_EQ_INT(get_pi(&f, "sw2", 1, 0, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.lid = 0x200;
	pi.master_sm_lid = 0x101;
	T_EQ_INT(set_pi(&f, "sw2", 1, 0, &pi), 0);
	T_EQ_INT(ibemu_engine_get_lid(f.e, node_of(&f, "sw2"), 0), 0x200);
	T_EQ_INT(get_pi(&f, "sw2", 1, 3, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.lid = 0x300;
	T_EQ_INT(set_pi(&f, "sw2", 1, 3, &pi), 0);
	T_EQ_INT(pi.lid, 0x200);
	T_EQ_INT(ibemu_engine_get_lid(f.e, node_of(&f, "sw2"), 0), 0x200);
	/* A multicast LID is not a port's LID; nothing else changes. */
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.lid = 0xc001;
	pi.lmc = 1;
	T_EQ_INT(set_pi(&f, "hca3", 1, 0, &pi), IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(pi.lid, 0x100);
	T_EQ_INT(pi.lmc, 2);
	/* Other invalid components. */
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.neighbor_mtu = 6;
	T_EQ_INT(set_pi(&f, "hca3", 1, 0, &pi), IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.operational_vls = IBEMU_MAD_VLS_8;
	T_EQ_INT(set_pi(&f, "hca3", 1, 0, &pi), IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.link_width_enabled = IBEMU_MAD_WIDTH_12X;
	T_EQ_INT(set_pi(&f, "hca3", 1, 0, &pi), IBEMU_MAD_STATUS_INVALID_FIELD);
	/* Enabled widths and speeds: 255 / 15 / 31 mean all supported. */
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.link_width_enabled = IBEMU_MAD_WIDTH_1X;
	pi.link_speed_enabled = IBEMU_MAD_SPEED_SDR;
	pi.link_speed_ext_enabled = 30;
	pi.operational_vls = IBEMU_MAD_VLS_2;
	pi.vl_high_limit = 7;
	/* Modifier bit 31: the SM knows LinkSpeedExtEnabled. */
	T_EQ_INT(set_pi(&f, "hca3", 1, 1u << 31, &pi), 0);
	T_EQ_INT(pi.link_width_enabled, IBEMU_MAD_WIDTH_1X);
	T_EQ_INT(pi.link_speed_enabled, IBEMU_MAD_SPEED_SDR);
	T_EQ_INT(pi.link_speed_ext_enabled, 0);
	T_EQ_INT(pi.operational_vls, IBEMU_MAD_VLS_2);
	T_EQ_INT(ibemu_engine_get_vl_high_limit(f.e, port_of(&f, "hca3", 1)),
		 7);
	pi.port_state = pi.port_phys_state = 0;
	pi.link_width_enabled = 255;
	pi.link_speed_enabled = 15;
	pi.link_speed_ext_enabled = 31;
	/* Without bit 31 LinkSpeedExtEnabled is left alone. */
	T_EQ_INT(set_pi(&f, "hca3", 1, 1, &pi), 0);
	T_EQ_INT(pi.link_width_enabled, pi.link_width_supported);
	T_EQ_INT(pi.link_speed_enabled, pi.link_speed_supported);
	T_EQ_INT(pi.link_speed_ext_enabled, 0);
	pi.port_state = pi.port_phys_state = 0;
	pi.link_speed_ext_enabled = 31;
	T_EQ_INT(set_pi(&f, "hca3", 1, 1u << 31 | 1, &pi), 0);
	T_EQ_INT(pi.link_speed_ext_enabled, pi.link_speed_ext_supported);
	pi.port_state = pi.port_phys_state = 0;
	pi.link_speed_ext_enabled = 8; /* NDR: not supported on HDR */
	T_EQ_INT(set_pi(&f, "hca3", 1, 1u << 31, &pi),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	/* ClientReregister is echoed, never kept. */
	pi.port_state = pi.port_phys_state = 0;
	pi.client_reregister = 1;
	T_EQ_INT(set_pi(&f, "hca3", 1, 0, &pi), 0);
	T_EQ_INT(pi.client_reregister, 1);
	T_EQ_INT(get_pi(&f, "hca3", 1, 0, &pi), 0);
	T_EQ_INT(pi.client_reregister, 0);
	teardown(&f);
}

static void test_lft(void)
{
	struct ibemu_mad_switch_info si;
	struct ibemu_mad_lft lft;
	uint8_t d[IBEMU_SMP_DATA_LEN] = {0};
	uint32_t sw1;
	uint8_t port;
	unsigned i;
	struct fx f;

	setup(&f, 1);
	sw1 = node_of(&f, "sw1");
	/* Before an SM writes LinearFDBTop, the routed LIDs' top shows. */
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
	T_EQ_INT(si.linear_fdb_cap, 49152);
	T_EQ_INT(si.multicast_fdb_cap, 1024);
	T_EQ_INT(si.linear_fdb_top, 6);
	T_EQ_INT(si.enhanced_port0, 0);
	/* Block 0 is what the routes programmed. */
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_LFT, 0, d), 0);
	T_EQ_INT(ibemu_mad_lft_decode(d, sizeof(d), &lft), 0);
	for (i = 0; i < 64; i++) {
		T_EQ_INT(ibemu_engine_get_lft(f.e, sw1, (uint16_t)i, &port), 0);
		T_EQ_INT(lft.port[i], port);
	}
	T_EQ_INT(lft.port[1], 0);
	T_EQ_INT(lft.port[3], 1);
	/* Set block 700, read the engine. */
	for (i = 0; i < 64; i++)
		lft.port[i] = (uint8_t)(i % 9);
	T_EQ_INT(ibemu_mad_lft_encode(&lft, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_LFT, 700, d), 0);
	for (i = 0; i < 64; i++) {
		T_EQ_INT(ibemu_engine_get_lft(f.e, sw1,
					      (uint16_t)(700 * 64 + i), &port),
			 0);
		T_EQ_INT(port, i % 9);
	}
	T_EQ_INT(ibemu_mad_lft_decode(d, sizeof(d), &lft), 0);
	T_EQ_INT(lft.port[10], 1);
	/* A block of no routes past the table's end leaves it as it was, and
	 * a block past the end reads as no route. */
	memset(lft.port, 0xff, sizeof(lft.port));
	T_EQ_INT(ibemu_mad_lft_encode(&lft, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_LFT, 760, d), 0);
	T_EQ_INT(ibemu_engine_lft_top(f.e, sw1), 700 * 64 + 63);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_LFT, 765, d), 0);
	T_EQ_INT(ibemu_mad_lft_decode(d, sizeof(d), &lft), 0);
	for (i = 0; i < 64; i++)
		T_EQ_INT(lft.port[i], 0xff);
	/* Set(SwitchInfo) LinearFDBTop; then it is the SM's value. */
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
	T_EQ_INT(si.linear_fdb_top, 700 * 64 + 63);
	si.linear_fdb_top = 100;
	si.life_time_value = 18;
	T_EQ_INT(ibemu_mad_switch_info_encode(&si, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
	T_EQ_INT(si.linear_fdb_top, 100);
	T_EQ_INT(si.life_time_value, 18);
	si.linear_fdb_top = 0xc000;
	T_EQ_INT(ibemu_mad_switch_info_encode(&si, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_SWITCH_INFO, 0, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(ibemu_mad_switch_info_decode(d, sizeof(d), &si), 0);
	T_EQ_INT(si.linear_fdb_top, 100);
	teardown(&f);
}

static void test_mft(void)
{
	struct ibemu_mad_mft mft;
	uint8_t d[IBEMU_SMP_DATA_LEN] = {0};
	unsigned i;
	struct fx f;

	setup(&f, 0);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_MFT, 31, d), 0);
	T_EQ_INT(ibemu_mad_mft_decode(d, sizeof(d), &mft), 0);
	T_EQ_INT(mft.port_mask[0], 0);
	/* 8 ports: position 0 holds ports 0..8; higher bits are dropped. */
	for (i = 0; i < 32; i++)
		mft.port_mask[i] = (uint16_t)(0xff00u | i);
	T_EQ_INT(ibemu_mad_mft_encode(&mft, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_MFT, 31, d), 0);
	T_EQ_INT(ibemu_mad_mft_decode(d, sizeof(d), &mft), 0);
	T_EQ_INT(mft.port_mask[5], 0x105);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_MFT, 31, d), 0);
	T_EQ_INT(ibemu_mad_mft_decode(d, sizeof(d), &mft), 0);
	T_EQ_INT(mft.port_mask[31], 0x11f);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_MFT, 30, d), 0);
	T_EQ_INT(ibemu_mad_mft_decode(d, sizeof(d), &mft), 0);
	T_EQ_INT(mft.port_mask[31], 0);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_MFT, 32, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	teardown(&f);
}

static void test_sl2vl(void)
{
	struct ibemu_mad_sl2vl_table t;
	uint8_t d[IBEMU_SMP_DATA_LEN] = {0};
	uint8_t vl[16];
	unsigned sl;
	struct fx f;

	setup(&f, 0);
	/* Default: SL n on VL n mod 4. */
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SL2VL_TABLE, 1u << 8 | 7, d),
		 0);
	T_EQ_INT(ibemu_mad_sl2vl_table_decode(d, sizeof(d), &t), 0);
	for (sl = 0; sl < 16; sl++)
		T_EQ_INT(t.vl[sl], sl % 4);
	/* Set (input 1, output 7): the engine's table of output port 7,
	 * which every input shares. VL15 (drop) is kept by the agent only. */
	for (sl = 0; sl < 16; sl++)
		t.vl[sl] = (uint8_t)(3 - sl % 4);
	t.vl[15] = 15;
	T_EQ_INT(ibemu_mad_sl2vl_table_encode(&t, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_SL2VL_TABLE, 1u << 8 | 7, d),
		 0);
	T_EQ_INT(ibemu_engine_get_sl2vl(f.e, port_of(&f, "sw1", 7), vl), 0);
	for (sl = 0; sl < 15; sl++)
		T_EQ_INT(vl[sl], 3 - sl % 4);
	T_EQ_INT(vl[15], 15 % 4);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SL2VL_TABLE, 2u << 8 | 7, d),
		 0);
	T_EQ_INT(ibemu_mad_sl2vl_table_decode(d, sizeof(d), &t), 0);
	T_EQ_INT(t.vl[0], 3);
	T_EQ_INT(t.vl[15], 15);
	/* A CA's table is its port's, whatever the modifier says. */
	t.vl[0] = 2;
	T_EQ_INT(ibemu_mad_sl2vl_table_encode(&t, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "hca2", 1, IBEMU_SMP_ATTR_SL2VL_TABLE, 0x0505, d), 0);
	T_EQ_INT(ibemu_engine_get_sl2vl(f.e, port_of(&f, "hca2", 1), vl), 0);
	T_EQ_INT(vl[0], 2);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SL2VL_TABLE, 9, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_SL2VL_TABLE, 1u << 16, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	teardown(&f);
}

/* The engine's VL arbitration table of 'port' ('high' or low) in 'ent';
 * returns its length up to the last non-zero weight. */
static unsigned vlarb_of(struct fx *f, uint32_t port, int high,
			 struct ibemu_vlarb_entry *ent)
{
	unsigned n;

	T_EQ_INT(ibemu_engine_get_vlarb(f->e, port, high, ent, &n), 0);
	T_EQ_INT(n, IBEMU_VLARB_ENTRIES);
	while (n && !ent[n - 1].weight)
		n--;
	return n;
}

static void test_vlarb(void)
{
	struct ibemu_vlarb_entry ent[IBEMU_VLARB_ENTRIES];
	struct ibemu_mad_vlarb_table t;
	uint8_t d[IBEMU_SMP_DATA_LEN] = {0};
	uint32_t sw2p7;
	unsigned i;
	struct fx f;

	setup(&f, 0);
	sw2p7 = port_of(&f, "sw2", 7);
	/* The engine's default low table: each data VL, weight 64. */
	T_EQ_INT(get(&f, "sw2", 1, IBEMU_SMP_ATTR_VLARB_TABLE, 1u << 16 | 7, d),
		 0);
	T_EQ_INT(ibemu_mad_vlarb_table_decode(d, sizeof(d), &t), 0);
	for (i = 0; i < 4; i++) {
		T_EQ_INT(t.entry[i].vl, i);
		T_EQ_INT(t.entry[i].weight, 64);
	}
	T_EQ_INT(t.entry[4].weight, 0);
	/* High table, entries 32..63: the engine's table grows to 64. */
	memset(&t, 0, sizeof(t));
	t.entry[0].vl = 1;
	t.entry[0].weight = 10;
	t.entry[5].vl = 2;
	t.entry[5].weight = 20;
	T_EQ_INT(ibemu_mad_vlarb_table_encode(&t, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw2", 1, IBEMU_SMP_ATTR_VLARB_TABLE, 4u << 16 | 7, d),
		 0);
	T_EQ_INT(vlarb_of(&f, sw2p7, 1, ent), 38);
	T_EQ_INT(ent[37].vl, 2);
	T_EQ_INT(ent[37].weight, 20);
	T_EQ_INT(vlarb_of(&f, sw2p7, 0, ent), 4);
	T_EQ_INT(get(&f, "sw2", 1, IBEMU_SMP_ATTR_VLARB_TABLE, 4u << 16 | 7, d),
		 0);
	T_EQ_INT(ibemu_mad_vlarb_table_decode(d, sizeof(d), &t), 0);
	T_EQ_INT(t.entry[5].weight, 20);
	/* Low table emptied of its last entries. */
	memset(&t, 0, sizeof(t));
	t.entry[0].vl = 3;
	t.entry[0].weight = 1;
	T_EQ_INT(ibemu_mad_vlarb_table_encode(&t, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "sw2", 1, IBEMU_SMP_ATTR_VLARB_TABLE, 1u << 16 | 7, d),
		 0);
	T_EQ_INT(vlarb_of(&f, sw2p7, 0, ent), 1);
	T_EQ_INT(ent[0].vl, 3);
	T_EQ_INT(ent[0].weight, 1);
	teardown(&f);
}

static void test_pkeys_guids(void)
{
	struct ibemu_mad_pkey_table pk;
	struct ibemu_mad_guid_info gi;
	uint8_t d[IBEMU_SMP_DATA_LEN] = {0};
	uint16_t keys[200];
	struct fx f;

	setup(&f, 0);
	T_EQ_INT(get(&f, "hca1", 1, IBEMU_SMP_ATTR_PKEY_TABLE, 0, d), 0);
	T_EQ_INT(ibemu_mad_pkey_table_decode(d, sizeof(d), &pk), 0);
	T_EQ_INT(pk.pkey[0], 0xffff);
	T_EQ_INT(pk.pkey[1], 0);
	memset(&pk, 0, sizeof(pk));
	pk.pkey[0] = 0x8001;
	pk.pkey[31] = 0x7fff;
	T_EQ_INT(ibemu_mad_pkey_table_encode(&pk, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "hca1", 1, IBEMU_SMP_ATTR_PKEY_TABLE, 3, d), 0);
	T_EQ_INT(ibemu_agent_pkeys(f.e, port_of(&f, "hca1", 1), keys, 200),
		 128);
	T_EQ_INT(keys[0], 0xffff);
	T_EQ_INT(keys[96], 0x8001);
	T_EQ_INT(keys[127], 0x7fff);
	/* A switch's external port: bits 31-16 name it; 32 entries. */
	T_EQ_INT(set(&f, "sw1", 1, IBEMU_SMP_ATTR_PKEY_TABLE, 7u << 16, d), 0);
	T_EQ_INT(ibemu_agent_pkeys(f.e, port_of(&f, "sw1", 7), keys, 200), 32);
	T_EQ_INT(keys[0], 0x8001);
	T_EQ_INT(get(&f, "sw1", 1, IBEMU_SMP_ATTR_PKEY_TABLE, 7u << 16 | 1, d),
		 IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(ibemu_agent_pkeys(f.e, port_of(&f, "sw1", 6), keys, 1), 32);
	T_EQ_INT(keys[0], 0xffff);

	/* GUIDInfo: entry 0 is the port GUID and read-only. */
	T_EQ_INT(get(&f, "hca1", 1, IBEMU_SMP_ATTR_GUID_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_guid_info_decode(d, sizeof(d), &gi), 0);
	T_EQ_U64(gi.guid[0], f.t->nodes[node_of(&f, "hca1")].ports[1].guid);
	gi.guid[0] = 1;
	gi.guid[1] = 0x1234;
	T_EQ_INT(ibemu_mad_guid_info_encode(&gi, d, sizeof(d)), 0);
	T_EQ_INT(set(&f, "hca1", 1, IBEMU_SMP_ATTR_GUID_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_guid_info_decode(d, sizeof(d), &gi), 0);
	T_EQ_U64(gi.guid[0], f.t->nodes[node_of(&f, "hca1")].ports[1].guid);
	T_EQ_U64(gi.guid[1], 0x1234);
	T_EQ_INT(get(&f, "sw1", 4, IBEMU_SMP_ATTR_GUID_INFO, 0, d), 0);
	T_EQ_INT(ibemu_mad_guid_info_decode(d, sizeof(d), &gi), 0);
	T_EQ_U64(gi.guid[0], f.t->nodes[node_of(&f, "sw1")].guid);
	T_EQ_U64(gi.guid[1], 0);
	teardown(&f);
}

/* Get(PortInfo) of hca1 carrying M_Key 'key'; returns 1 if answered. */
static int mkey_get(struct fx *f, uint64_t key, struct ibemu_mad_port_info *pi)
{
	struct ibemu_mad_smp s, r;

	smp_req(&s, 1, IBEMU_MAD_METHOD_GET, IBEMU_SMP_ATTR_PORT_INFO, 0);
	s.m_key = key;
	if (!ask(f, "hca1", 1, &s, &r))
		return 0;
	T_EQ_INT(ibemu_mad_port_info_decode(r.data, sizeof(r.data), pi), 0);
	return 1;
}

static int mkey_set(struct fx *f, uint64_t key,
		    const struct ibemu_mad_port_info *pi)
{
	struct ibemu_mad_smp s;

	smp_req(&s, 1, IBEMU_MAD_METHOD_SET, IBEMU_SMP_ATTR_PORT_INFO, 0);
	s.m_key = key;
	T_EQ_INT(ibemu_mad_port_info_encode(pi, s.data, sizeof(s.data)), 0);
	return ask(f, "hca1", 1, &s, NULL);
}

static void test_mkey(void)
{
	struct ibemu_mad_port_info pi, got;
	struct fx f;

	setup(&f, 0);
	T_EQ_INT(mkey_get(&f, 0, &pi), 1);
	pi.port_state = pi.port_phys_state = 0;
	pi.m_key = 0xabcd;
	pi.m_key_protect_bits = 0;
	T_EQ_INT(mkey_set(&f, 0, &pi), 1);
	/* IBA 14.2.4, protection 0: any Get; a Set needs the key. */
	T_EQ_INT(mkey_get(&f, 1, &got), 1);
	T_EQ_U64(got.m_key, 0xabcd);
	pi.m_key_protect_bits = 1;
	T_EQ_INT(mkey_set(&f, 1, &pi), 0);
	T_EQ_INT(mkey_get(&f, 0xabcd, &got), 1);
	T_EQ_INT(got.m_key_violations, 1);
	T_EQ_INT(got.m_key_protect_bits, 0);
	/* (A Set writing M_KeyViolations 0 clears the count.) */
	T_EQ_INT(mkey_set(&f, 0xabcd, &pi), 1);
	/* Protection 1: a Get with the wrong key reads M_Key as 0. */
	T_EQ_INT(mkey_get(&f, 7, &got), 1);
	T_EQ_U64(got.m_key, 0);
	T_EQ_INT(got.m_key_protect_bits, 1);
	T_EQ_INT(mkey_get(&f, 0xabcd, &got), 1);
	T_EQ_U64(got.m_key, 0xabcd);
	/* Protection 2: a Get with the wrong key is dropped too. */
	pi.m_key_protect_bits = 2;
	pi.m_key_lease_period = 2; /* seconds */
	T_EQ_INT(mkey_set(&f, 0xabcd, &pi), 1);
	T_EQ_INT(mkey_get(&f, 7, &got), 0);
	T_EQ_INT(mkey_get(&f, 0xabcd, &got), 1);
	T_EQ_INT(got.m_key_violations, 1);
	/* The lease: a violation starts it, the right key stops it... */
	T_EQ_INT(mkey_get(&f, 7, &got), 0);
	run_for(&f, 1000000000000ull);
	T_EQ_INT(mkey_get(&f, 0xabcd, &got), 1);
	run_for(&f, 5000000000000ull);
	T_EQ_INT(mkey_get(&f, 7, &got), 0);
	/* ...and when it runs out, the protection is gone (IBA 14.2.4). */
	T_EQ_INT(mkey_get(&f, 7, &got), 0);
	run_for(&f, 2000000000000ull);
	T_EQ_INT(mkey_get(&f, 7, &got), 1);
	T_EQ_INT(got.m_key_protect_bits, 0);
	T_EQ_INT(got.m_key_violations, 4);
	/* Writing 0 clears M_KeyViolations. */
	got.m_key_violations = 0;
	got.port_state = got.port_phys_state = 0;
	T_EQ_INT(mkey_set(&f, 0xabcd, &got), 1);
	T_EQ_INT(mkey_get(&f, 0xabcd, &got), 1);
	T_EQ_INT(got.m_key_violations, 0);
	teardown(&f);
}

void ibemu_test_register_agent_sma(void)
{
	static const struct ibemu_test tests[] = {
		{"node_info", test_node_info},
		{"port_info_values", test_port_info_values},
		{"status_codes", test_status_codes},
		{"takes", test_takes},
		{"state_machine", test_state_machine},
		{"link_down_retrains", test_link_down_retrains},
		{"trap128", test_trap128},
		{"trap144", test_trap144},
		{"lids", test_lids},
		{"lft", test_lft},
		{"mft", test_mft},
		{"sl2vl", test_sl2vl},
		{"vlarb", test_vlarb},
		{"pkeys_guids", test_pkeys_guids},
		{"mkey", test_mkey},
		{NULL, NULL},
	};

	ibemu_test_add_suite("agent.sma", tests);
}
