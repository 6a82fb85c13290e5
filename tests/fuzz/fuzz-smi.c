// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the management path as a whole: arbitrary MADs
 * sent from the HCA ports of a small routed fabric travel the engine
 * (fabric/smi.c) and reach the switches' and HCAs' agents (agent/), which
 * may answer, drop, or change the fabric (port states, LIDs, LFTs). Each
 * input is a sequence of 260-byte records: source HCA, DLID (2 bytes), SL,
 * then the 256 MAD bytes (short records are zero-padded). After every
 * record the engine runs until idle; nothing may crash, and nothing may
 * stay in flight, unless the MADs programmed a routing loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "model.h"
#include "fuzz-fabric.h"
#include "routing.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECORD	   (4 + IBEMU_MAD_MSG_LEN)
#define MAX_EVENTS 200000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hcas[] = {"h1", "h2", "h3"};
	struct ibemu_topo *t = ibemu_fuzz_topo();
	struct ibemu_engine *e = NULL;
	struct ibemu_routes *r = NULL;
	size_t off;

	if (ibemu_model_create(t, &e))
		abort();
	/* Routed, so that LID-routed MADs and GMPs go somewhere too. */
	if (ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r) ||
	    ibemu_engine_apply_routes(e, r))
		abort();
	ibemu_fuzz_attach(e);
	ibemu_engine_run(e, UINT64_MAX, MAX_EVENTS);
	for (off = 0; off < size; off += RECORD) {
		struct ibemu_mad_msg m = {0};
		size_t n = size - off < RECORD ? size - off : RECORD;
		uint8_t rec[RECORD] = {0};
		uint32_t node;
		unsigned port;

		memcpy(rec, data + off, n);
		node = ibemu_topo_find(t, hcas[rec[0] % 3]);
		port = 1 + (rec[0] >> 2) % t->nodes[node].nports;
		m.dlid = (uint16_t)(rec[1] << 8 | rec[2]);
		m.sl = rec[3] & 15;
		m.src_qp = rec[1] & 1;
		m.dst_qp = rec[1] & 1;
		memcpy(m.mad, rec + 4, sizeof(m.mad));
		if (ibemu_engine_mad_send(
			    e, ibemu_engine_port_index(e, node, port), &m))
			abort();
		/*
		 * An SM's Set(LFT) may build a routing loop, where a packet
		 * circles for ever as on real hardware (the LRH has no hop
		 * limit): stop at a bound then, and skip the idle checks.
		 */
		if (ibemu_engine_run(e, UINT64_MAX, MAX_EVENTS) == MAX_EVENTS)
			goto out;
	}
	if (ibemu_engine_pending(e) || ibemu_engine_in_flight(e)) {
		fprintf(stderr, "pending %zu, in flight %llu after idle\n",
			ibemu_engine_pending(e),
			(unsigned long long)ibemu_engine_in_flight(e));
		abort();
	}
out:
	ibemu_routes_destroy(r);
	ibemu_engine_destroy(e);
	return 0;
}
