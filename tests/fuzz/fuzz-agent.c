// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the node agents alone (agent/): arbitrary MADs
 * handed straight to ibemu__agent_process() of the switches and HCAs of a
 * small routed fabric, as the SMI hands them over. Each input is a
 * sequence of 257-byte records: a byte choosing the node and the port the
 * MAD came in through, then the 256 MAD bytes (short records are
 * zero-padded). After each record the engine runs until idle (link
 * retraining, trap repeats, M_Key leases) and the agents' state must
 * still make sense: a response is a response with a valid Status, every
 * port's PortInfo encodes, both ends of a cable agree on whether the link
 * is up, and no delayed work is left.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "engine.h"
#include "fuzz-fabric.h"
#include "mad.h"
#include "mad_sma.h"
#include "model.h"
#include "routing.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECORD (1 + IBEMU_MAD_LEN)

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-agent: %s\n", what);
	abort();
}

/* IBA 13.4.7: what a response's Status may hold. */
static void check_response(const uint8_t *req, const uint8_t *resp)
{
	struct ibemu_mad_hdr q, r;
	uint16_t status;

	if (ibemu_mad_hdr_decode(req, IBEMU_MAD_LEN, &q) ||
	    ibemu_mad_hdr_decode(resp, IBEMU_MAD_LEN, &r))
		fail("header");
	if (!(r.method & IBEMU_MAD_METHOD_RESP) || (q.method & 0x80))
		fail("answered a response, or answered without R");
	if (r.tid != q.tid || r.mgmt_class != q.mgmt_class ||
	    r.attr_id != q.attr_id || r.attr_mod != q.attr_mod)
		fail("response does not match its request");
	status = r.mgmt_class == IBEMU_MAD_CLASS_SUBN_DR ? r.status & 0x7fff
							 : r.status;
	switch (status) {
	case IBEMU_MAD_STATUS_OK:
	case IBEMU_MAD_STATUS_BUSY:
	case IBEMU_MAD_STATUS_BAD_VERSION:
	case IBEMU_MAD_STATUS_METHOD_UNSUPP:
	case IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP:
	case IBEMU_MAD_STATUS_INVALID_FIELD:
		break;
	default:
		fail("status");
	}
	/* The D bit is the SMI's to set. */
	if (r.mgmt_class == IBEMU_MAD_CLASS_SUBN_DR &&
	    (r.status & 0x8000) != (q.status & 0x8000))
		fail("D bit changed");
}

static void check_ports(const struct ibemu_engine *e)
{
	struct ibemu_mad_port_info pi;
	uint8_t buf[IBEMU_SMP_DATA_LEN];
	uint16_t pkeys[4];
	uint32_t i;

	for (i = 0; i < ibemu_engine_nports(e); i++) {
		struct ibemu_port_link p;

		if (ibemu_engine_port_link(e, i, &p))
			fail("port index");
		if (ibemu_agent_port_info(e, i, &pi) ||
		    ibemu_mad_port_info_encode(&pi, buf, sizeof(buf)))
			fail("PortInfo does not encode");
		ibemu_agent_pkeys(e, i, pkeys, 4);
		if (p.state < IBEMU_PORT_DOWN || p.state > IBEMU_PORT_ACTIVE)
			fail("port state");
		if (p.state != IBEMU_PORT_DOWN &&
		    p.phys_state != IBEMU_PHYS_LINKUP)
			fail("logical state up on a link that is down");
		if (p.peer != IBEMU_NONE &&
		    (p.phys_state == IBEMU_PHYS_LINKUP) !=
			    (ibemu_engine_phys_state(e, p.peer) ==
			     IBEMU_PHYS_LINKUP))
			fail("the ends of a cable disagree");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibemu_topo *t = ibemu_fuzz_topo();
	struct ibemu_engine *e = NULL;
	struct ibemu_routes *r = NULL;
	size_t off;

	if (ibemu_model_create(t, &e))
		abort();
	/* Routed, so that the switches and HCAs have LIDs and traps go. */
	if (ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r) ||
	    ibemu_engine_apply_routes(e, r))
		abort();
	ibemu_fuzz_attach(e);
	for (off = 0; off < size; off += RECORD) {
		uint8_t rec[RECORD] = {0}, resp[IBEMU_MAD_LEN];
		size_t n = size - off < RECORD ? size - off : RECORD;
		unsigned port, lo;
		uint32_t node;

		memcpy(rec, data + off, n);
		node = rec[0] % t->nnodes;
		/* A switch's SMA also takes MADs of its own (port 0). */
		lo = t->nodes[node].type == IBEMU_NODE_SWITCH ? 0 : 1;
		port = lo +
		       (rec[0] / t->nnodes) % (t->nodes[node].nports + 1u - lo);
		/* Every other record is answered in place, as a caller may. */
		memcpy(resp, rec + 1, IBEMU_MAD_LEN);
		if (ibemu__agent_process(e, node, port,
					 (off / RECORD) & 1 ? resp : rec + 1,
					 resp))
			check_response(rec + 1, resp);
		ibemu_engine_run(e, UINT64_MAX, 1000000);
		if (ibemu_engine_pending(e))
			fail("agent work does not end");
		check_ports(e);
	}
	ibemu_routes_destroy(r);
	ibemu_engine_destroy(e);
	return 0;
}
