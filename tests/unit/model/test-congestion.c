// SPDX-License-Identifier: MIT
/*
 * Congestion control (IBA Annex A10) in the models: switches mark FECN at
 * the root of congestion as their SwitchCongestionSetting says (Threshold,
 * Packet_Size, Marking_Rate, Victim_Mask) and log it; a study's
 * destinations answer with CNPs; sources raise CCTI per BECN, lower it per
 * CCTI_Timer and space their packets by the Congestion Control Table.
 * Settings are written the way the CC agent writes them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hca.h"
#include "model.h"
#include "routing.h"
#include "switch.h"
#include "traffic.h"
#include "unit.h"

/* Every switch marks at 'threshold'; every CA port throttles per QP with
 * CCTI_Timer 10, CCTI_Increase 3 and a linear table of 128 entries. */
static void configure(struct ibemu_test_fab *f, unsigned threshold,
		      unsigned rate, unsigned packet_size, int victim_all)
{
	uint32_t n, pi;
	unsigned p, sl, i;

	for (n = 0; n < f->t->nnodes; n++) {
		struct ibemu_switch_cc *sc = ibemu_switch_cc(f->e, n);

		if (sc) {
			sc->threshold = (uint8_t)threshold;
			sc->marking_rate = (uint16_t)rate;
			sc->packet_size = (uint8_t)packet_size;
			if (victim_all)
				memset(sc->victim_mask, 0xff,
				       sizeof(sc->victim_mask));
			continue;
		}
		for (p = 1; p <= f->t->nodes[n].nports; p++) {
			struct ibemu_hca_cc *cc;

			pi = ibemu_engine_port_index(f->e, n, p);
			cc = ibemu_hca_cc(f->e, pi, 1);
			T_TRUE(cc != NULL);
			cc->control_map = 0xffff;
			for (sl = 0; sl < IBEMU_HCA_CC_SLS; sl++) {
				cc->sl[sl].ccti_timer = 10;
				cc->sl[sl].ccti_increase = 3;
				cc->sl[sl].trigger_threshold = 8;
			}
			cc->ccti_limit = 127;
			for (i = 0; i < 128; i++)
				cc->cct[i].multiplier = (uint16_t)i;
		}
	}
}

static uint64_t port_counter_fecn(struct ibemu_test_fab *f, const char *node,
				  unsigned port)
{
	struct ibemu_port_counters c;

	ibemu_engine_counters(f->e,
			      ibemu_engine_port_index(
				      f->e, ibemu_topo_find(f->t, node), port),
			      &c);
	return c.fecn_marked;
}

static void run_incast(struct ibemu_test_fab *f, enum ibemu_traffic_cc cc,
		       uint64_t duration_ps, int victims)
{
	struct ibemu_traffic_opts o;

	ibemu_traffic_opts_init(&o);
	o.pattern = IBEMU_TRAFFIC_INCAST;
	o.duration_ps = duration_ps;
	o.victims = victims;
	o.cc = cc;
	T_EQ_INT(ibemu_traffic_create(f->e, f->t, &o, &f->tr, &f->d), 0);
	T_EQ_INT(ibemu_traffic_run(f->tr), 0);
}

/*
 * Seven hosts into one on a single switch: only the port to the hotspot
 * is congested, so only it marks; every FECN comes back as a CNP (BECN),
 * CCTI rises, and the switch's CongestionLog names the port.
 */
static void test_marks_at_the_root(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_switch_cc_log *log;
	uint64_t fecns = 0, marked = 0;
	uint32_t sw;
	struct ibemu_test_fab f;
	unsigned p;
	size_t i;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	configure(&f, 10, 0, 0, 0);
	run_incast(&f, IBEMU_TRAFFIC_CC_ON, 200000000, 0);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_TRUE(r.fecns > 0);
		T_EQ_U64(r.becns, r.fecns);
		T_TRUE(r.ccti_max > 0);
		fecns += r.fecns;
	}
	sw = ibemu_topo_find(f.t, "sw");
	for (p = 1; p <= f.t->nodes[sw].nports; p++) {
		uint64_t m = port_counter_fecn(&f, "sw", p);

		if (f.t->nodes[sw].ports[p].peer_node ==
		    ibemu_topo_find(f.t, "hca1"))
			T_TRUE(m > 0);
		else
			T_EQ_U64(m, 0);
		marked += m;
	}
	T_EQ_U64(marked, fecns);
	log = ibemu_switch_cc_log(f.e, sw);
	T_TRUE(log->events > 0);
	T_TRUE(log->len > 0);
	ibemu_test_fab_fini(&f);
}

/* Threshold 0 marks nothing; a Packet_Size above the packets' too. */
static void test_no_marking(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_test_fab f;
	size_t i;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	configure(&f, 0, 0, 0, 0);
	run_incast(&f, IBEMU_TRAFFIC_CC_ON, 50000000, 0);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_U64(r.fecns, 0);
		T_EQ_U64(r.becns, 0);
	}
	ibemu_test_fab_fini(&f);

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	configure(&f, 15, 0, 100, 0); /* a 4 KiB packet is 65 credits */
	run_incast(&f, IBEMU_TRAFFIC_CC_ON, 50000000, 0);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_U64(r.fecns, 0);
	}
	ibemu_test_fab_fini(&f);
}

/* Marking_Rate 3: at most one eligible packet in four is marked. */
static void test_marking_rate(void)
{
	uint64_t every, fourth;
	struct ibemu_test_fab f;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	configure(&f, 10, 0, 0, 0);
	run_incast(&f, IBEMU_TRAFFIC_CC_OFF, 50000000, 0);
	every = port_counter_fecn(&f, "sw", 1);
	ibemu_test_fab_fini(&f);

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	configure(&f, 10, 3, 0, 0);
	run_incast(&f, IBEMU_TRAFFIC_CC_OFF, 50000000, 0);
	fourth = port_counter_fecn(&f, "sw", 1);
	ibemu_test_fab_fini(&f);
	T_TRUE(fourth > 0);
	T_TRUE(fourth <= (every + 3) / 4);
}

/*
 * With --cc off the switches still mark but nobody answers or slows down:
 * (the congestion tree slows the victims down). The ports upstream of
 * the root that wait for credit are victims of the congestion: they mark
 * only when Victim_Mask names them.
 */
static uint64_t total_fecns(struct ibemu_test_fab *f)
{
	struct ibemu_traffic_flow_result r;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < ibemu_traffic_nflows(f->tr); i++) {
		ibemu_traffic_flow(f->tr, i, &r);
		n += r.fecns;
	}
	return n;
}

static void test_off_and_victim_mask(void)
{
	struct ibemu_traffic_flow_result r;
	uint64_t plain, victim;
	unsigned slowed = 0;
	struct ibemu_test_fab f;
	size_t i;

	ibemu_test_fab_init(&f, ibemu_test_load("fat-tree-2l-36"));
	configure(&f, 10, 0, 0, 0);
	run_incast(&f, IBEMU_TRAFFIC_CC_OFF, 50000000, 1);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_U64(r.becns, 0);
		T_EQ_U64(r.ccti_max, 0);
		slowed += r.victim && r.gbps < 10; /* the congestion tree */
	}
	T_TRUE(slowed >= 5);
	T_TRUE(port_counter_fecn(&f, "leaf01", 1) > 0);
	plain = total_fecns(&f);
	ibemu_test_fab_fini(&f);

	/* Ports upstream of the root mark too: more packets arrive marked. */
	ibemu_test_fab_init(&f, ibemu_test_load("fat-tree-2l-36"));
	configure(&f, 10, 0, 0, 1);
	run_incast(&f, IBEMU_TRAFFIC_CC_OFF, 50000000, 1);
	victim = total_fecns(&f);
	ibemu_test_fab_fini(&f);
	T_TRUE(victim > plain);
}

/*
 * The incast of docs/congestion-control.md on the default fabric, in
 * virtual time: with congestion control the victims get their link back,
 * the contributors share the hotspot fairly and keep it busy.
 */
static void test_incast_cc_on(void)
{
	struct ibemu_traffic_flow_result r;
	double sum = 0, sum2 = 0, n = 0, vmin = 1e9;
	struct ibemu_test_fab f;
	size_t i;

	ibemu_test_fab_init(&f, ibemu_test_load("fat-tree-2l-36"));
	configure(&f, 10, 0, 0, 0);
	run_incast(&f, IBEMU_TRAFFIC_CC_ON, 1000000000, 1);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		if (r.victim) {
			if (r.gbps < vmin)
				vmin = r.gbps;
			continue;
		}
		sum += r.gbps;
		sum2 += r.gbps * r.gbps;
		n++;
	}
	T_TRUE(vmin > 60);		       /* from under 3 Gb/s without */
	T_TRUE(sum * sum / (n * sum2) > 0.95); /* Jain's index */
	ibemu_test_fab_fini(&f);
}

/*
 * The source side alone: CCTI rises by CCTI_Increase per BECN up to
 * CCTI_Limit, falls by one per CCTI_Timer (1.024 us units, from the
 * source's first use) down to CCTI_Min, and the next packet waits its own time plus the entry's delay
 * (multiplier x packet time >> shift).
 */
static void test_source(void)
{
	struct ibemu_cc_event ev = {.local_qp = 1, .remote_qp = 2};
	struct ibemu_cc_src s;
	struct ibemu_hca_cc *cc;
	uint64_t t0, pkt_ps;
	struct ibemu_test_fab f;
	uint32_t pi;
	unsigned i;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	/* Links up, queue empty: runs to a time then end there. */
	ibemu_engine_run(f.e, UINT64_MAX, SIZE_MAX);
	T_EQ_U64(ibemu_engine_pending(f.e), 0);
	pi = ibemu_engine_port_index(f.e, ibemu_topo_find(f.t, "hca1"), 1);
	memset(&s, 0, sizeof(s));
	/* Nothing configured: nothing throttles. */
	T_TRUE(ibemu_hca_cc_src(f.e, pi, 0, &s) == NULL);
	ibemu_hca_cc_becn(f.e, pi, 0, &s, &ev);
	T_EQ_U64(s.becns, 0);

	cc = ibemu_hca_cc(f.e, pi, 1);
	cc->sl[0].ccti_timer = 10; /* 10.24 us */
	cc->sl[0].ccti_increase = 4;
	cc->sl[0].trigger_threshold = 8;
	cc->sl[0].ccti_min = 1;
	cc->ccti_limit = 10;
	for (i = 0; i <= 10; i++) {
		cc->cct[i].shift = 1;
		cc->cct[i].multiplier = (uint16_t)(2 * i); /* i packet times */
	}
	T_TRUE(ibemu_hca_cc_src(f.e, pi, 0, &s) == &s);
	t0 = ibemu_engine_now(f.e);
	/* A source starts at CCTI_Min. */
	T_EQ_INT(ibemu_hca_cc_ccti(f.e, pi, 0, &s), 1);
	ibemu_hca_cc_becn(f.e, pi, 0, &s, &ev);
	T_EQ_INT(ibemu_hca_cc_ccti(f.e, pi, 0, &s), 5);
	T_EQ_U64(cc->log_len, 0);
	ibemu_hca_cc_becn(f.e, pi, 0, &s, &ev);
	T_EQ_INT(ibemu_hca_cc_ccti(f.e, pi, 0, &s), 9);
	T_EQ_U64(cc->log_len, 1); /* reached Trigger_Threshold */
	T_EQ_U64(cc->log[0].ev.remote_qp, 2);
	ibemu_hca_cc_becn(f.e, pi, 0, &s, &ev);
	T_EQ_INT(ibemu_hca_cc_ccti(f.e, pi, 0, &s), 10); /* CCTI_Limit */

	/* Spacing: the packet's own time plus 10 of them (CCT[10]). */
	ibemu_hca_cc_sent(f.e, pi, 0, &s, 1024);
	T_TRUE(ibemu_hca_cc_wait(f.e, pi, 0, &s) > ibemu_engine_now(f.e));
	pkt_ps = ibemu_hca_cc_wait(f.e, pi, 0, &s) - ibemu_engine_now(f.e);
	T_EQ_U64(pkt_ps % 11, 0);

	/* Three timer periods later: down by three; then never below 1. */
	ibemu_engine_run(f.e, t0 + 3 * 10240000ull + 1, SIZE_MAX);
	T_EQ_INT(ibemu_hca_cc_ccti(f.e, pi, 0, &s), 7);
	ibemu_engine_run(f.e, t0 + 100 * 10240000ull, SIZE_MAX);
	T_EQ_INT(ibemu_hca_cc_ccti(f.e, pi, 0, &s), 1);
	T_EQ_U64(ibemu_hca_cc_wait(f.e, pi, 0, &s), 0);

	/* Port_Control bit 0: one source per SL, shared by all. */
	cc->port_control = 1;
	T_TRUE(ibemu_hca_cc_src(f.e, pi, 3, &s) == &cc->sl_src[3]);
	ibemu_test_fab_fini(&f);
}

void ibemu_test_register_model_congestion(void)
{
	static const struct ibemu_test tests[] = {
		{"marks_at_the_root", test_marks_at_the_root},
		{"no_marking", test_no_marking},
		{"marking_rate", test_marking_rate},
		{"off_and_victim_mask", test_off_and_victim_mask},
		{"incast_cc_on", test_incast_cc_on},
		{"source", test_source},
		{NULL, NULL},
	};

	ibemu_test_add_suite("model.congestion", tests);
}
