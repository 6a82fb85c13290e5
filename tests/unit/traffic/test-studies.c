// SPDX-License-Identifier: MIT
/*
 * Traffic studies as a library: option checks, the flows each pattern
 * makes, message segmentation and offered load, incast victims, results
 * rendered as text and JSON, progress in bounded steps, lost packets and
 * deadlocks reported as errors, and an all-to-all on 1,152 hosts.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "engine.h"
#include "hca.h"
#include "mad.h"
#include "mad_sma.h"
#include "model.h"
#include "routing.h"
#include "traffic_int.h" /* the series, checked from inside */
#include "yaml.h"
#include "unit.h"

/* Loads 'topo', runs a study of 'o' to the end; 0 or its error. */
static int study(struct ibemu_test_fab *f, const char *topo,
		 const struct ibemu_traffic_opts *o)
{
	int ret;

	ibemu_test_fab_init(f, ibemu_test_load(topo));
	ret = ibemu_traffic_create(f->e, f->t, o, &f->tr, &f->d);
	if (ret)
		return ret;
	return ibemu_traffic_run(f->tr);
}

static void opts(struct ibemu_traffic_opts *o, enum ibemu_traffic_pattern p,
		 uint64_t duration_ps)
{
	ibemu_traffic_opts_init(o);
	o->pattern = p;
	o->duration_ps = duration_ps;
}

static void test_opts(void)
{
	static const char *const names[] = {
		"uniform",   "shift",  "permutation", "alltoall",
		"bisection", "incast", "pairs"};
	enum ibemu_traffic_pattern p;
	struct ibemu_traffic_opts o;
	unsigned i;

	ibemu_traffic_opts_init(&o);
	T_EQ_INT(o.pattern, IBEMU_TRAFFIC_UNIFORM);
	T_EQ_U64(o.shift, 1);
	T_EQ_U64(o.msg_bytes, 65536);
	T_TRUE(o.load == 1.0);
	T_EQ_U64(o.duration_ps, 100000000);
	T_EQ_U64(o.seed, 1);
	T_EQ_U64(o.mtu, 0);
	for (i = 0; i < IBEMU_ARRAY_SIZE(names); i++) {
		T_EQ_INT(ibemu_traffic_pattern_parse(names[i], &p), 0);
		T_EQ_INT(p, i);
		T_EQ_STR(ibemu_traffic_pattern_name(p), names[i]);
	}
	T_EQ_INT(ibemu_traffic_pattern_parse("hotspot", &p), -EINVAL);
	T_EQ_INT(ibemu_traffic_pattern_parse("", &p), -EINVAL);
}

/* Creating a study with 'o' on single-switch-8 fails with 'msg'. */
static void bad(const struct ibemu_traffic_opts *o, const char *msg)
{
	struct ibemu_test_fab f;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, o, &f.tr, &f.d), -EINVAL);
	T_EQ_STR(f.d.error, msg);
	T_TRUE(f.tr == NULL);
	ibemu_test_fab_fini(&f);
}

static void test_bad_opts(void)
{
	static const struct ibemu_traffic_pair self = {2, 2}, far = {0, 8};
	struct ibemu_traffic_opts o;

	opts(&o, IBEMU_TRAFFIC_UNIFORM, 1000000);
	o.load = 0;
	bad(&o,
	    "error: load 0: expected a fraction of the link rate in (0, 1]");
	o.load = 1.5;
	bad(&o,
	    "error: load 1.5: expected a fraction of the link rate in (0, 1]");
	o.load = 0.0001;
	bad(&o, "error: load 0.0001: at least 0.001 is supported");
	o.load = 1;
	o.mtu = 300;
	bad(&o, "error: MTU 300: expected 256, 512, 1024, 2048 or 4096");
	o.mtu = 0;
	o.duration_ps = 0;
	bad(&o, "error: duration must be more than 0 and at most 2^62 ps");
	o.duration_ps = UINT64_MAX;
	bad(&o, "error: duration must be more than 0 and at most 2^62 ps");
	o.duration_ps = 1000000;
	o.sl = 16;
	bad(&o, "error: SL 16: expected 0..15");
	o.sl = 0;
	o.pattern = IBEMU_TRAFFIC_SHIFT;
	o.shift = 16;
	bad(&o, "error: shift 16 maps every host to itself on 8 hosts");
	o.pattern = IBEMU_TRAFFIC_INCAST;
	o.incast_dst = 8;
	bad(&o, "error: incast destination 8: the fabric has hosts 0..7");
	o.incast_dst = 0;
	o.incast_sources = 8;
	bad(&o, "error: 8 incast sources: at most 7 (every host but the "
		"destination)");
	o.pattern = IBEMU_TRAFFIC_PAIRS;
	bad(&o, "error: no pairs given");
	o.pairs = &self;
	o.npairs = 1;
	bad(&o, "error: pair 0: 2 -> 2: hosts are 0..7 and a host cannot send "
		"to itself");
	o.pairs = &far;
	bad(&o, "error: pair 0: 0 -> 8: hosts are 0..7 and a host cannot send "
		"to itself");
}

static void test_needs_lids(void)
{
	struct ibemu_traffic_opts o;
	struct ibemu_traffic *tr = NULL;
	struct ibemu_engine *e;
	struct ibemu_topo *t = ibemu_test_load("single-switch-8");
	struct ibemu_diag d;

	/* An engine without routes: hosts have no LID yet. */
	ibemu_diag_init(&d);
	opts(&o, IBEMU_TRAFFIC_UNIFORM, 1000000);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_traffic_create(e, t, &o, &tr, &d), -EINVAL);
	T_EQ_STR(d.error, "error: hca1:1 has no LID: apply routes first");
	ibemu_engine_destroy(e);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

/* Every flow's messages delivered whole, once and in order. */
static void check_clean(const struct ibemu_test_fab *f)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_summary s;
	uint64_t msgs = 0;
	size_t i;

	ibemu_traffic_summary(f->tr, &s);
	T_EQ_U64(s.misordered, 0);
	for (i = 0; i < ibemu_traffic_nflows(f->tr); i++) {
		ibemu_traffic_flow(f->tr, i, &r);
		T_TRUE(r.src != r.dst);
		T_TRUE(r.msgs > 0);
		T_EQ_U64(r.misordered, 0);
		T_EQ_U64(r.pkts_sent, r.pkts_delivered);
		T_TRUE(r.lat_p50_ps <= r.lat_p99_ps &&
		       r.lat_p99_ps <= r.lat_max_ps);
		msgs += r.msgs;
	}
	T_EQ_U64(msgs, s.msgs);
	T_EQ_U64(ibemu_engine_in_flight(f->e), 0);
}

static void test_shift(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_opts o;
	struct ibemu_test_fab f;
	uint32_t i;

	opts(&o, IBEMU_TRAFFIC_SHIFT, 20000000);
	o.shift = 11; /* 3 modulo 8 */
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	check_clean(&f);
	T_EQ_U64(ibemu_traffic_nflows(f.tr), 8);
	for (i = 0; i < 8; i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_U64(r.src, i);
		T_EQ_U64(r.dst, (i + 3) % 8);
	}
	ibemu_test_fab_fini(&f);
}

/* dst[src] of a study whose sources have one destination each. */
static void one_dst_each(const struct ibemu_test_fab *f, uint32_t *dst,
			 uint32_t n)
{
	struct ibemu_traffic_flow_result r;
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = IBEMU_NONE;
	T_EQ_U64(ibemu_traffic_nflows(f->tr), n);
	for (i = 0; i < ibemu_traffic_nflows(f->tr); i++) {
		ibemu_traffic_flow(f->tr, i, &r);
		T_EQ_U64(dst[r.src], IBEMU_NONE);
		dst[r.src] = r.dst;
	}
}

static void test_permutation(void)
{
	uint32_t a[36], b[36], seen[36] = {0}, i, len = 0, h = 0, differ = 0;
	struct ibemu_traffic_opts o;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_PERMUTATION, 10000000);
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	check_clean(&f);
	one_dst_each(&f, a, 36);
	ibemu_test_fab_fini(&f);
	/* Sattolo: one cycle through all 36 hosts, so nobody sends to itself
	 * and everybody receives from exactly one. */
	do {
		T_TRUE(a[h] < 36 && !seen[h]);
		seen[h] = 1;
		h = a[h];
		len++;
	} while (h != 0 && len <= 36);
	T_EQ_U64(len, 36);

	o.seed = 2;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	one_dst_each(&f, b, 36);
	ibemu_test_fab_fini(&f);
	for (i = 0; i < 36; i++)
		differ += a[i] != b[i];
	T_TRUE(differ > 0);
}

static void test_bisection(void)
{
	struct ibemu_traffic_opts o;
	uint32_t d[36], i;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_BISECTION, 10000000);
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	check_clean(&f);
	one_dst_each(&f, d, 36);
	/* Pairs across the halves [0, 18) and [18, 36), both ways. */
	for (i = 0; i < 36; i++) {
		T_TRUE(d[i] < 36);
		T_TRUE((i < 18) != (d[i] < 18));
		T_EQ_U64(d[d[i]], i);
	}
	ibemu_test_fab_fini(&f);
}

static void test_alltoall(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_opts o;
	uint64_t lo = UINT64_MAX, hi = 0;
	struct ibemu_test_fab f;
	size_t i;

	/* 100 us of 64 KiB slots (5.28 us) at load 1: 18 or 19 messages a
	 * source, dealt to the 7 others in turn: 2 or 3 to each. */
	opts(&o, IBEMU_TRAFFIC_ALLTOALL, 100000000);
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	check_clean(&f);
	T_EQ_U64(ibemu_traffic_nflows(f.tr), 8 * 7);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_U64(r.src, i / 7);
		lo = r.msgs < lo ? r.msgs : lo;
		hi = r.msgs > hi ? r.msgs : hi;
	}
	T_EQ_U64(lo, 2);
	T_EQ_U64(hi, 3);
	ibemu_test_fab_fini(&f);
}

static void test_uniform(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_summary s;
	struct ibemu_traffic_opts o;
	uint32_t to[36] = {0};
	struct ibemu_test_fab f;
	size_t i;

	opts(&o, IBEMU_TRAFFIC_UNIFORM, 200000000);
	o.msg_bytes = 4096;
	o.load = 0.5;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	check_clean(&f);
	ibemu_traffic_summary(f.tr, &s);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		to[r.dst] += (uint32_t)r.msgs;
	}
	/* 36 sources x 200 us / 0.33 us slots x 0.5: about 10,900 messages,
	 * about 300 to each host; none gets fewer than half of that. */
	T_TRUE(s.msgs > 10000 && s.msgs < 12000);
	for (i = 0; i < 36; i++)
		T_TRUE(to[i] > 150);
	ibemu_test_fab_fini(&f);
}

static void test_segments_and_load(void)
{
	struct ibemu_traffic_flow_result r;
	static const struct ibemu_traffic_pair p = {0, 1};
	struct ibemu_port_counters c;
	struct ibemu_traffic_opts o;
	struct ibemu_traffic_summary s;
	double util;
	struct ibemu_test_fab f;

	/*
	 * 5,000-byte messages at MTU 2048: packets of 2048, 2048 and 904
	 * bytes (wire 2074, 2074, 930: 5078 bytes, 406.24 ns on 4x EDR).
	 * Load 0.5 for 1 ms: about 1,230 of 2,461 slots carry a message, and
	 * the source link is busy about half the time.
	 */
	opts(&o, IBEMU_TRAFFIC_PAIRS, 1000000000);
	o.pairs = &p;
	o.npairs = 1;
	o.msg_bytes = 5000;
	o.mtu = 2048;
	o.load = 0.5;
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	check_clean(&f);
	ibemu_traffic_flow(f.tr, 0, &r);
	T_EQ_U64(r.pkts_delivered, r.msgs * 3);
	T_EQ_U64(r.bytes, r.msgs * 5000);
	ibemu_engine_counters(f.e, ibemu_engine_port_index(f.e, 1, 1), &c);
	T_EQ_U64(c.busy_ps, r.msgs * 5078 * 80);
	ibemu_traffic_summary(f.tr, &s);
	util = (double)c.busy_ps / (double)s.duration_ps;
	T_TRUE(util > 0.45 && util < 0.55);
	ibemu_test_fab_fini(&f);

	/* Empty messages are one packet of headers only. */
	o.msg_bytes = 0;
	o.load = 1;
	o.duration_ps = 10000000;
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	ibemu_traffic_flow(f.tr, 0, &r);
	T_TRUE(r.msgs > 0);
	T_EQ_U64(r.pkts_delivered, r.msgs);
	T_EQ_U64(r.bytes, 0);
	ibemu_engine_counters(f.e, ibemu_engine_port_index(f.e, 1, 1), &c);
	T_EQ_U64(c.xmit_data, r.msgs * 24 / 4); /* LRH..ICRC */
	ibemu_test_fab_fini(&f);
}

static void test_incast_victims(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_opts o;
	uint32_t victims = 0, slowed = 0, node, sw_src, sw_dst;
	uint8_t taken[36];
	uint16_t hot_lid;
	unsigned port;
	struct ibemu_test_fab f;
	size_t i;

	/*
	 * All 35 others into hca01 (host 0) on the 36-host fat tree, with
	 * victims: the last source of every leaf (hca06, hca12, ..., hca36)
	 * also sends a victim flow, to a host on neither its leaf nor the
	 * hotspot's that its leaf routes out of another uplink than the
	 * hotspot, no two to the same host. The victim shares only its
	 * source's link and input buffer with the congestion tree, and waits
	 * behind packets for the hotspot there: congestion spreads to traffic
	 * that never goes near the hotspot.
	 */
	opts(&o, IBEMU_TRAFFIC_INCAST, 50000000);
	o.victims = 1;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	check_clean(&f);
	T_EQ_U64(ibemu_traffic_nflows(f.tr), 41);
	ibemu_traffic_host(f.tr, 0, &node, &port);
	hot_lid = ibemu_engine_get_lid(f.e, node, port);
	memset(taken, 0, sizeof(taken));
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		uint8_t up_hot, up_dst;

		ibemu_traffic_flow(f.tr, i, &r);
		if (!r.victim) {
			T_EQ_U64(r.dst, 0);
			continue;
		}
		victims++;
		T_EQ_U64(r.src % 6, 5);
		T_TRUE(r.dst != 0 && r.dst / 6 != 0 && r.dst / 6 != r.src / 6);
		T_EQ_U64(taken[r.dst]++, 0);
		ibemu_traffic_host(f.tr, r.src, &node, &port);
		sw_src = f.t->nodes[node].ports[port].peer_node;
		ibemu_traffic_host(f.tr, r.dst, &node, &port);
		sw_dst = f.t->nodes[node].ports[port].peer_node;
		T_TRUE(sw_src != sw_dst);
		T_EQ_INT(ibemu_engine_get_lft(f.e, sw_src, hot_lid, &up_hot),
			 0);
		T_EQ_INT(ibemu_engine_get_lft(
				 f.e, sw_src,
				 ibemu_engine_get_lid(f.e, node, port),
				 &up_dst),
			 0);
		T_TRUE(up_hot != up_dst);
		slowed += r.gbps < 10;
	}
	T_EQ_U64(victims, 6);
	T_TRUE(slowed >= 5);
	ibemu_test_fab_fini(&f);

	/* With fewer sources: 3 after host 0 (hosts 1..3, all on leaf01):
	 * host 3 sends the one victim flow, off leaf01. */
	opts(&o, IBEMU_TRAFFIC_INCAST, 10000000);
	o.victims = 1;
	o.incast_sources = 3;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	T_EQ_U64(ibemu_traffic_nflows(f.tr), 4);
	ibemu_traffic_flow(f.tr, 3, &r);
	T_EQ_U64(r.victim, 1);
	T_EQ_U64(r.src, 3);
	T_TRUE(r.dst >= 6);
	ibemu_test_fab_fini(&f);
}

/* Checks that 'j' is one JSON value made of balanced objects and arrays. */
static int json_balanced(const char *j)
{
	int depth = 0, str = 0;

	for (; *j; j++) {
		if (str) {
			if (*j == '\\' && j[1])
				j++;
			else if (*j == '"')
				str = 0;
			continue;
		}
		if (*j == '"')
			str = 1;
		else if (*j == '{' || *j == '[')
			depth++;
		else if (*j == '}' || *j == ']')
			if (--depth < 0)
				return 0;
	}
	return depth == 0 && !str;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

static int starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static void test_render(void)
{
	struct ibemu_traffic_opts o;
	struct ibemu_buf text, json, all;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_SHIFT, 20000000);
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	ibemu_buf_init(&text);
	ibemu_buf_init(&json);
	ibemu_buf_init(&all);
	ibemu_traffic_render(f.tr, 0, 5, &text);
	ibemu_traffic_render(f.tr, 1, 5, &json);
	ibemu_traffic_render(f.tr, 1, 0, &all);
	T_EQ_INT(text.err, 0);
	T_TRUE(starts(text.data,
		      "PATTERN:          shift\nHOSTS:            36\n"));
	T_TRUE(strstr(text.data, "\nFlows: 5 of 36, slowest first\nSRC ") !=
	       NULL);
	T_TRUE(strstr(text.data,
		      "\nPort transmitters: 5 of 144, busiest first\nPORT ") !=
	       NULL);
	T_TRUE(starts(
		json.data,
		"{\"fabric\": \"fat-tree-2l-36\",\n\"summary\": {\"pattern\": "
		"\"shift\", \"hosts\": 36, "));
	T_TRUE(strstr(json.data, "},\n\"flows\": [\n  {\"src\": ") != NULL);
	T_TRUE(strstr(json.data, "],\n\"links\": [\n  {\"port\": ") != NULL);
	T_TRUE(json_balanced(json.data));
	T_TRUE(json_balanced(all.data));
	T_EQ_U64(count(json.data, "{\"src\""), 5);
	T_EQ_U64(count(json.data, "{\"port\""), 5);
	T_EQ_U64(count(all.data, "{\"src\""), 36);
	T_EQ_U64(count(all.data, "{\"port\""), 144);
	/* Without a hotspot every flow is "other", and the summary has no
	 * hotspot figures. */
	T_EQ_U64(count(all.data, "\"role\": \"other\""), 36);
	T_EQ_U64(count(all.data, "\"fair_gbps\": "), 36);
	T_TRUE(strstr(all.data, "\"hotspot\"") == NULL);
	ibemu_buf_fini(&all);
	ibemu_buf_fini(&json);
	ibemu_buf_fini(&text);
	ibemu_test_fab_fini(&f);
}

static void test_progress(void)
{
	struct ibemu_traffic_progress p;
	struct ibemu_traffic_opts o;
	uint32_t last = 0, steps = 0;
	struct ibemu_buf b;
	int done = 0;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_SHIFT, 10000000);
	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	ibemu_traffic_progress(f.tr, &p);
	T_EQ_U64(p.permille, 0);
	T_EQ_U64(p.duration_ps, 10000000);
	while (!done && steps < 100000) {
		T_EQ_INT(ibemu_traffic_step(f.tr, 100, &done), 0);
		ibemu_traffic_progress(f.tr, &p);
		T_TRUE(p.permille >= last);
		T_TRUE(p.msgs_delivered <= p.msgs_created);
		last = p.permille;
		steps++;
	}
	T_TRUE(done && steps > 10);
	T_EQ_U64(p.permille, 1000);
	T_TRUE(p.done);
	T_EQ_U64(p.pkts_in_fabric, 0);
	T_EQ_U64(p.msgs_created, p.msgs_delivered);
	/* Done stays done. */
	T_EQ_INT(ibemu_traffic_step(f.tr, 100, &done), 0);
	T_TRUE(done);
	ibemu_buf_init(&b);
	ibemu_traffic_progress_line(f.tr, &b);
	T_TRUE(starts(b.data, "traffic shift: 100.0% of 10 us, done at "));
	T_TRUE(strstr(b.data, " messages delivered, 0 in flight") != NULL);
	ibemu_buf_fini(&b);
	ibemu_test_fab_fini(&f);
}

static void test_lost_packets(void)
{
	struct ibemu_port_counters c;
	struct ibemu_traffic_opts o;
	uint64_t relay = 0;
	uint32_t pi;
	struct ibemu_test_fab f;

	/* hca2's LID has no route on the switch: packets to it are
	 * discarded (IBA 18.2.4.3.3), which the study reports. */
	opts(&o, IBEMU_TRAFFIC_SHIFT, 10000000);
	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	T_EQ_INT(ibemu_engine_set_lft(f.e, 0, ibemu_engine_get_lid(f.e, 2, 1),
				      255),
		 0);
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	T_EQ_INT(ibemu_traffic_run(f.tr), -EIO);
	for (pi = 0; pi < ibemu_engine_nports(f.e); pi++) {
		ibemu_engine_counters(f.e, pi, &c);
		relay += c.rcv_switch_relay_errors;
	}
	T_TRUE(relay > 0);
	ibemu_test_fab_fini(&f);
}

static void test_deadlock(void)
{
	struct ibemu_traffic_opts o;
	static const struct ibemu_traffic_pair p = {0, 1};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t s1, s2, h1, h2;
	uint16_t lid;
	struct ibemu_test_fab f;
	int ret = 0, done = 0, n = 0;

	/*
	 * h1 - s1 = s2 - h2, with s2 sending h2's LID back to s1: a routing
	 * loop. Packets circle until both switch buffers on the loop are
	 * full, then nothing can move: a credit deadlock.
	 */
	T_EQ_INT(ibemu_topo_create(&t), 0);
	ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "s1", 4, &s1);
	ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "s2", 4, &s2);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h1", 1, &h1);
	ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h2", 1, &h2);
	ibemu_topo_connect(t, s1, 1, h1, 1, NULL);
	ibemu_topo_connect(t, s2, 1, h2, 1, NULL);
	ibemu_topo_connect(t, s1, 2, s2, 2, NULL);
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	ibemu_diag_fini(&d);
	ibemu_test_fab_init(&f, t);
	lid = ibemu_engine_get_lid(f.e, h2, 1);
	T_EQ_INT(ibemu_engine_set_lft(f.e, s2, lid, 2), 0);
	opts(&o, IBEMU_TRAFFIC_PAIRS, 10000000);
	o.pairs = &p;
	o.npairs = 1;
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	while (!ret && !done && n++ < 1000)
		ret = ibemu_traffic_step(f.tr, 10000, &done);
	T_EQ_INT(ret, -EDEADLK);
	T_TRUE(ibemu_engine_in_flight(f.e) > 0);
	ibemu_test_fab_fini(&f);
}

static void test_hosts(void)
{
	struct ibemu_traffic_opts o;
	uint32_t node;
	unsigned port;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_SHIFT, 1000000);
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	T_EQ_U64(ibemu_traffic_nhosts(f.tr), 8);
	ibemu_traffic_host(f.tr, 7, &node, &port);
	T_EQ_STR(f.t->nodes[node].name, "hca8");
	T_EQ_U64(port, 1);
	T_EQ_U64(ibemu_traffic_host_index(f.tr, node, 1), 7);
	T_EQ_U64(ibemu_traffic_host_index(f.tr, node, 0), IBEMU_NONE);
	T_EQ_U64(ibemu_traffic_host_index(f.tr, 0, 1),
		 IBEMU_NONE); /* the switch */
	ibemu_test_fab_fini(&f);
}

/* An owner of one HCA port besides a study: records what reaches it. */
struct bystander {
	struct ibemu_engine *e;
	unsigned mads, pkts, lends, returns;
	struct ibemu_mad_msg last;
};

static void bystander_mad(void *ctx, uint32_t port,
			  const struct ibemu_mad_msg *m)
{
	struct bystander *b = ctx;

	(void)port;
	b->mads++;
	b->last = *m;
}

static void bystander_deliver(void *ctx, uint32_t port, struct ibemu_pkt *p)
{
	struct bystander *b = ctx;

	(void)port;
	b->pkts++;
	ibemu_engine_pkt_free(b->e, p);
}

static const struct ibemu_port_ops bystander_ops = {
	.mad_recv = bystander_mad,
	.deliver = bystander_deliver,
};

/*
 * A study and another owner share one fabric: the study takes the hosts
 * nobody holds, and the other owner's MADs cross the fabric and come back
 * to it while the study runs.
 */
static void test_shares_fabric(void)
{
	struct ibemu_traffic_summary s;
	struct ibemu_traffic_opts o;
	struct bystander b = {0};
	struct ibemu_mad_msg m;
	uint32_t hca1, pi;
	int done = 0, sent = 0;
	struct ibemu_test_fab f;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	b.e = f.e;
	hca1 = ibemu_test_node(f.t, "hca1");
	pi = ibemu_engine_port_index(f.e, hca1, 1);
	T_EQ_INT(ibemu_engine_port_attach(f.e, pi, &bystander_ops, &b), 0);
	/* hca1 is no host of a study any more. */
	T_EQ_U64(ibemu_traffic_host_number(f.e, hca1, 1), IBEMU_NONE);
	T_EQ_U64(
		ibemu_traffic_host_number(f.e, ibemu_test_node(f.t, "hca2"), 1),
		0);
	opts(&o, IBEMU_TRAFFIC_SHIFT, 20000000);
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	T_EQ_U64(ibemu_traffic_nhosts(f.tr), 7);
	/* A port the study holds cannot be taken; hca1's is not its. */
	T_EQ_INT(ibemu_engine_port_attach(
			 f.e,
			 ibemu_engine_port_index(
				 f.e, ibemu_test_node(f.t, "hca2"), 1),
			 &bystander_ops, &b),
		 -EBUSY);
	T_TRUE(ibemu_engine_port_owner(f.e, pi) == &b);
	while (!done) {
		T_EQ_INT(ibemu_traffic_step(f.tr, 1000, &done), 0);
		if (!sent && ibemu_engine_now(f.e) > 5000000) {
			/* Mid-study: a NodeInfo SMP to the switch, hop 1. */
			struct ibemu_mad_smp smp = {
				.hdr = {.base_version = 1,
					.mgmt_class = IBEMU_MAD_CLASS_SUBN_DR,
					.class_version = 1,
					.method = IBEMU_MAD_METHOD_GET,
					.tid = 42,
					.attr_id = IBEMU_SMP_ATTR_NODE_INFO},
				.hop_cnt = 1,
				.initial_path = {0, 1},
				.dr_slid = 0xffff,
				.dr_dlid = 0xffff,
			};

			memset(&m, 0, sizeof(m));
			T_EQ_INT(ibemu_mad_smp_encode(&smp, m.mad,
						      sizeof(m.mad)),
				 0);
			m.dlid = 0xffff;
			T_EQ_INT(ibemu_engine_mad_send(f.e, pi, &m), 0);
			sent = 1;
		}
	}
	T_TRUE(sent);
	T_EQ_INT(b.mads, 1);
	T_EQ_INT(b.last.mad[3], IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_INT(b.pkts, 0); /* no study data reached hca1 */
	ibemu_traffic_summary(f.tr, &s);
	T_EQ_U64(s.hosts, 7);
	T_TRUE(s.msgs > 0);
	ibemu_traffic_destroy(f.tr);
	f.tr = NULL;
	/* The study gave its ports back: they can be taken again. */
	T_TRUE(ibemu_engine_port_owner(
		       f.e, ibemu_engine_port_index(
				    f.e, ibemu_test_node(f.t, "hca2"), 1)) ==
	       NULL);
	ibemu_test_fab_fini(&f);
}

/* An owner that moves no data and lends its port (an SM's HCA). */
static int lender_lend(void *ctx, uint32_t port, enum ibemu_lend what)
{
	struct bystander *b = ctx;

	(void)port;
	b->lends += what == IBEMU_LEND_TAKE;
	b->returns += what == IBEMU_LEND_RETURN;
	return 0;
}

static const struct ibemu_port_ops lender_ops = {
	.mad_recv = bystander_mad,
	.deliver = bystander_deliver,
	.lend = lender_lend,
};

/*
 * A port held for MADs only is lent to a study: it is one of the study's
 * hosts, the owner keeps its MADs meanwhile and gets the port back at the
 * end; an owner that goes mid-study leaves the port to the study, whose
 * timers there keep running (the study completes), and that ends with the
 * study.
 */
static void test_borrows_a_lent_port(void)
{
	struct ibemu_traffic_summary s;
	struct ibemu_traffic_opts o;
	struct bystander b = {0};
	uint32_t hca1, pi;
	int done = 0, gone = 0;
	struct ibemu_test_fab f;

	ibemu_test_fab_init(&f, ibemu_test_load("single-switch-8"));
	b.e = f.e;
	hca1 = ibemu_test_node(f.t, "hca1");
	pi = ibemu_engine_port_index(f.e, hca1, 1);
	T_EQ_INT(ibemu_engine_port_attach(f.e, pi, &lender_ops, &b), 0);
	T_EQ_U64(ibemu_traffic_host_number(f.e, hca1, 1), 0);
	opts(&o, IBEMU_TRAFFIC_SHIFT, 20000000);
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	T_EQ_U64(ibemu_traffic_nhosts(f.tr), 8);
	T_EQ_INT(b.lends, 1);
	T_TRUE(ibemu_engine_port_owner(f.e, pi) == &b);
	T_EQ_INT(ibemu_traffic_step(f.tr, 1000, &done), 0);
	ibemu_traffic_destroy(f.tr);
	f.tr = NULL;
	T_EQ_INT(b.returns, 1);
	T_TRUE(ibemu_engine_port_owner(f.e, pi) == &b);
	T_EQ_INT(b.pkts, 0); /* the study's packets were never the owner's */

	/* Again, and the owner detaches half way. */
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	while (!done) {
		T_EQ_INT(ibemu_traffic_step(f.tr, 1000, &done), 0);
		if (!gone && ibemu_engine_now(f.e) > 5000000) {
			ibemu_engine_port_detach(f.e, pi);
			T_TRUE(ibemu_engine_port_owner(f.e, pi) == f.tr);
			gone = 1;
		}
	}
	T_TRUE(gone);
	ibemu_traffic_summary(f.tr, &s);
	T_EQ_U64(s.hosts, 8);
	T_TRUE(s.msgs > 0); /* delivered whole: the study did not fail */
	ibemu_traffic_destroy(f.tr);
	f.tr = NULL;
	T_TRUE(ibemu_engine_port_owner(f.e, pi) == NULL);
	T_EQ_INT(b.returns, 1); /* gone: nothing to give back to */
	ibemu_test_fab_fini(&f);
}

/* Runs 'o' on engine 'f', renders the JSON report. */
static char *study_json(struct ibemu_test_fab *f,
			const struct ibemu_traffic_opts *o)
{
	struct ibemu_buf b;

	T_EQ_INT(ibemu_traffic_create(f->e, f->t, o, &f->tr, &f->d), 0);
	T_EQ_INT(ibemu_traffic_run(f->tr), 0);
	ibemu_buf_init(&b);
	ibemu_traffic_render(f->tr, 1, 0, &b);
	ibemu_traffic_destroy(f->tr);
	f->tr = NULL;
	return ibemu_buf_steal(&b);
}

/*
 * Nothing of a study leaks into the next on the same engine: credits still
 * on their way back, arbiters' positions. Two identical studies in a row
 * report the same bytes, events included.
 */
static void test_back_to_back(void)
{
	struct ibemu_traffic_opts o;
	char *first, *second;
	struct ibemu_test_fab f;

	ibemu_test_fab_init(&f, ibemu_test_load("fat-tree-2l-36"));
	opts(&o, IBEMU_TRAFFIC_SHIFT, 20000000);
	o.load = 0.9;
	first = study_json(&f, &o);
	second = study_json(&f, &o);
	T_EQ_STR(second, first);
	T_TRUE(strstr(first, "\"events\"") != NULL);
	free(first);
	free(second);
	ibemu_test_fab_fini(&f);
}

static void test_alltoall_1152(void)
{
	struct ibemu_traffic_summary s;
	struct ibemu_traffic_opts o;
	struct ibemu_test_fab f;

	/* The large fabric: 1,152 HDR hosts, 10 us of all-to-all at full
	 * load (about 4 messages a source, 70,000 packets). */
	opts(&o, IBEMU_TRAFFIC_ALLTOALL, 10000000);
	T_EQ_INT(study(&f, "fat-tree-2l-1152", &o), 0);
	check_clean(&f);
	ibemu_traffic_summary(f.tr, &s);
	T_EQ_U64(s.hosts, 1152);
	T_TRUE(s.msgs >= 1152 * 3);
	T_EQ_U64(s.bytes, s.msgs * 65536);
	ibemu_test_fab_fini(&f);
}

#define T_NEAR(a, b, tol)                                                      \
	do {                                                                   \
		double _a = (a), _b = (b);                                     \
		char _m[512];                                                  \
		snprintf(_m, sizeof(_m), "%s ~ %s (%.9g vs %.9g)", #a, #b, _a, \
			 _b);                                                  \
		CU_assertImplementation(fabs(_a - _b) <= (tol), __LINE__, _m,  \
					__FILE__, "", CU_FALSE);               \
	} while (0)

static void test_waterfill(void)
{
	/*
	 * Link 0 (10) carries flows 0, 1 and 2; link 1 (5) flows 2 and 3.
	 * Flow 1 wants 2 and gets it; link 1 fills at 2.5 each, freezing
	 * flows 2 and 3; flow 0 takes what link 0 has left: 10 - 2 - 2.5.
	 */
	static const double demand[] = {100, 2, 100, 100}, cap[] = {10, 5};
	static const uint32_t off[] = {0, 1, 2, 4, 5}, path[] = {0, 0, 0, 1, 1};
	/* Two flows on one link that both want less than half of it, and a
	 * flow on no link: each gets its demand. */
	static const double demand2[] = {3, 4, 7}, cap2[] = {10};
	static const uint32_t off2[] = {0, 1, 2, 2}, path2[] = {0, 0};
	double share[4];

	T_EQ_INT(ibemu_traffic_waterfill(4, demand, off, path, 2, cap, share),
		 0);
	T_NEAR(share[0], 5.5, 1e-9);
	T_NEAR(share[1], 2, 1e-9);
	T_NEAR(share[2], 2.5, 1e-9);
	T_NEAR(share[3], 2.5, 1e-9);
	T_EQ_INT(ibemu_traffic_waterfill(3, demand2, off2, path2, 1, cap2,
					 share),
		 0);
	T_NEAR(share[0], 3, 1e-9);
	T_NEAR(share[1], 4, 1e-9);
	T_NEAR(share[2], 7, 1e-9);
}

static void test_jain(void)
{
	static const double even[] = {4, 4, 4, 4}, one[] = {1, 0, 0, 0},
			    two[] = {2, 1};

	T_NEAR(ibemu_traffic_jain(even, 4), 1, 1e-12);
	T_NEAR(ibemu_traffic_jain(one, 4), 0.25, 1e-12);
	T_NEAR(ibemu_traffic_jain(two, 2), 0.9, 1e-12);
	T_NEAR(ibemu_traffic_jain(NULL, 0), 1, 1e-12);
}

/* An uncontended flow at load 1 gets its fair share, measured. */
static void test_fair_uncontended(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_opts o;
	struct ibemu_test_fab f;
	size_t i;

	/* Many messages, so that the drain after the duration is small. */
	opts(&o, IBEMU_TRAFFIC_SHIFT, 100000000);
	o.msg_bytes = 4096;
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_INT(r.role, IBEMU_TRAFFIC_OTHER);
		T_NEAR(r.gbps / r.fair_gbps, 1, 0.01);
	}
	ibemu_test_fab_fini(&f);
}

/* Incast without congestion control: the hotspot's port is shared
 * evenly, in fair shares and (nearly) in throughput. */
static void test_fair_incast(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_summary s;
	struct ibemu_traffic_opts o;
	struct ibemu_test_fab f;
	size_t i;

	/* The aggregate is the hotspot's port's payload rate: it is busy
	 * from the first packet to the last. */
	opts(&o, IBEMU_TRAFFIC_INCAST, 20000000);
	o.incast_sources = 7;
	o.msg_bytes = 4096;
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	ibemu_traffic_summary(f.tr, &s);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_EQ_INT(r.role, IBEMU_TRAFFIC_CONTRIBUTOR);
		T_NEAR(r.fair_gbps * 7 / s.gbps, 1, 0.01);
		T_NEAR(r.gbps / r.fair_gbps, 1, 0.02);
	}
	T_EQ_U64(s.hotspot, 0);
	T_TRUE(s.hotspot_util > 0.99 && s.hotspot_util <= 1.0);
	T_TRUE(s.jain_contributors > 0.95 && s.jain_contributors <= 1.0);
	T_EQ_U64(s.victims, 0);
	ibemu_test_fab_fini(&f);
}

static uint32_t switch_of(const struct ibemu_test_fab *f, uint32_t h)
{
	uint32_t node;
	unsigned port;

	ibemu_traffic_host(f->tr, h, &node, &port);
	return f->t->nodes[node].ports[port].peer_node;
}

static void test_congestion_tree(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_summary s;
	struct ibemu_traffic_opts o;
	uint32_t contrib = 0, victims = 0;
	double cfair = 0;
	struct ibemu_test_fab f;
	size_t i;

	/*
	 * 36 hosts, 6 per leaf, hotspot hca01 on leaf01: the 30 hosts of the
	 * five other leaves contribute; the last of each leaf also sends a
	 * victim flow to a host on another leaf, not leaf01.
	 */
	opts(&o, IBEMU_TRAFFIC_CTREE, 20000000);
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	check_clean(&f);
	T_EQ_U64(ibemu_traffic_nflows(f.tr), 35);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		T_TRUE(switch_of(&f, r.src) != switch_of(&f, 0));
		if (r.role == IBEMU_TRAFFIC_CONTRIBUTOR) {
			T_EQ_U64(r.dst, 0);
			cfair = r.fair_gbps;
			contrib++;
			continue;
		}
		T_EQ_INT(r.role, IBEMU_TRAFFIC_VICTIM);
		T_EQ_U64(r.src % 6, 5);
		T_TRUE(switch_of(&f, r.dst) != switch_of(&f, 0));
		T_TRUE(switch_of(&f, r.dst) != switch_of(&f, r.src));
		victims++;
	}
	T_EQ_U64(contrib, 30);
	T_EQ_U64(victims, 5);
	/* Contributors split the hotspot's link; victims, sharing their
	 * source's link with one of them, get far more. */
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		if (r.role == IBEMU_TRAFFIC_CONTRIBUTOR)
			T_NEAR(r.fair_gbps, cfair, 1e-6);
		else
			T_TRUE(r.fair_gbps > 20 * cfair);
	}
	ibemu_traffic_summary(f.tr, &s);
	T_EQ_U64(s.hotspot, 0);
	T_EQ_U64(s.victims, 5);
	T_TRUE(s.hotspot_util > 0.5 && s.hotspot_util <= 1.0);
	T_TRUE(s.victim_min > 0 && s.victim_min <= s.victim_mean);
	ibemu_test_fab_fini(&f);

	/* Eight contributors on the three-level fat tree: dealt one per
	 * edge switch first, so each of those edges sends a victim. */
	opts(&o, IBEMU_TRAFFIC_CTREE, 10000000);
	o.incast_sources = 8;
	T_EQ_INT(study(&f, "fat-tree-3l-k8", &o), 0);
	contrib = victims = 0;
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		if (r.role == IBEMU_TRAFFIC_VICTIM) {
			T_TRUE(switch_of(&f, r.dst) != switch_of(&f, 0));
			victims++;
		} else {
			contrib++;
		}
	}
	T_EQ_U64(contrib, 8);
	T_EQ_U64(victims, 8);
	ibemu_test_fab_fini(&f);

	/* One switch: no tree to build. */
	opts(&o, IBEMU_TRAFFIC_CTREE, 1000000);
	T_EQ_INT(study(&f, "single-switch-8", &o), -EINVAL);
	T_TRUE(strstr(ibemu_diag_what(f.d.error),
		      "congestion-tree needs "
		      "hosts on switches other") != NULL);
	ibemu_test_fab_fini(&f);
}

/*
 * The series add up: every plotted flow's bins hold all its bytes, though
 * the drain (35 sources into one for 10 us: about 350 us) made pairs of
 * bins merge; bins span the run and every one has its CCTI sample.
 */
static void check_series(const struct ibemu_test_fab *f)
{
	const struct ibemu_traffic_series *s = f->tr->series;
	uint64_t sum;
	uint32_t c, b;

	T_EQ_U64(s->ncols, f->tr->nflows);
	T_TRUE(s->nbins <= 512 && s->nbins >= 200);
	T_TRUE(s->bin_ps > f->tr->o.duration_ps / 200);
	T_TRUE((uint64_t)s->nbins * s->bin_ps > f->tr->sum.end_ps);
	T_EQ_U64(s->sampled, s->nbins);
	for (c = 0; c < s->ncols; c++) {
		sum = 0;
		for (b = 0; b < s->nbins; b++)
			sum += s->bytes[(size_t)b * s->cap_cols + c];
		T_EQ_U64(sum, f->tr->flows[s->col_flow[c]].bytes);
	}
}

static void test_plot(void)
{
	struct ibemu_traffic_flow_result r;
	struct ibemu_traffic_opts o;
	struct ibemu_buf svg;
	uint32_t roles[3] = {0, 0, 0};
	struct ibemu_test_fab f;
	size_t i;

	opts(&o, IBEMU_TRAFFIC_INCAST, 10000000);
	o.victims = 1;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	ibemu_buf_init(&svg);
	/* Without series there is nothing to plot. */
	T_EQ_INT(ibemu_traffic_plot_svg(f.tr, NULL, &svg), -EINVAL);
	ibemu_test_fab_fini(&f);

	o.series = 1;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	T_EQ_INT(ibemu_traffic_plot_svg(f.tr, "test", &svg), 0);
	for (i = 0; i < ibemu_traffic_nflows(f.tr); i++) {
		ibemu_traffic_flow(f.tr, i, &r);
		roles[r.role]++;
	}
	T_EQ_U64(roles[IBEMU_TRAFFIC_CONTRIBUTOR], 35);
	T_EQ_U64(roles[IBEMU_TRAFFIC_VICTIM], 6);
	T_TRUE(starts(svg.data, "<?xml version=\"1.0\""));
	T_EQ_U64(count(svg.data, "<polyline class=\"series contributor\""), 35);
	T_EQ_U64(count(svg.data, "<polyline class=\"series victim\""), 6);
	T_EQ_U64(count(svg.data, "<polyline class=\"ccti contributor\""), 35);
	T_EQ_U64(count(svg.data, "<polyline class=\"ccti victim\""), 0);
	T_EQ_U64(count(svg.data, "<g class=\"ccti-panel\">"), 1);
	T_TRUE(strstr(svg.data, "congestion control off, test</text>") != NULL);
	T_TRUE(strstr(svg.data, "data-flow=\"hca02:1-&gt;hca01:1\"") != NULL);
	check_series(&f);
	ibemu_buf_fini(&svg);
	ibemu_test_fab_fini(&f);

	/* Without roles: the 16 busiest flows. */
	opts(&o, IBEMU_TRAFFIC_SHIFT, 10000000);
	o.series = 1;
	T_EQ_INT(study(&f, "fat-tree-2l-36", &o), 0);
	ibemu_buf_init(&svg);
	T_EQ_INT(ibemu_traffic_plot_svg(f.tr, NULL, &svg), 0);
	T_EQ_U64(count(svg.data, "<polyline class=\"series other\""), 16);
	ibemu_buf_fini(&svg);
	ibemu_test_fab_fini(&f);
}

/* The polyline of 'flow' in the panel whose lines have class 'what'. */
static char *polyline(const char *svg, const char *what, const char *flow)
{
	char key[256];
	const char *at, *end;

	snprintf(key, sizeof(key), "<polyline class=\"%s", what);
	for (at = strstr(svg, key); at; at = strstr(at + 1, key)) {
		end = strstr(at, "/>");
		snprintf(key, sizeof(key), "data-flow=\"%s\"", flow);
		if (end && strstr(at, key) && strstr(at, key) < end)
			return strndup(at, (size_t)(end - at));
		snprintf(key, sizeof(key), "<polyline class=\"%s", what);
	}
	return NULL;
}

/*
 * The CCTI panel shows what the source's congestion control state says:
 * hca02's port controls per SL (Port_Control bit 0) and its SL 0 sits at
 * CCTI 10 with no CCTI_Timer to bring it down; the other contributors
 * have no CC settings, so their CCTI reads 0.
 */
static void test_plot_ccti(void)
{
	struct ibemu_traffic_opts o;
	struct ibemu_hca_cc *cc;
	struct ibemu_buf svg;
	char *line;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_INCAST, 5000000);
	o.incast_sources = 3;
	o.series = 1;
	ibemu_test_fab_init(&f, ibemu_test_load("fat-tree-2l-36"));
	cc = ibemu_hca_cc(
		f.e,
		ibemu_engine_port_index(f.e, ibemu_topo_find(f.t, "hca02"), 1),
		1);
	T_TRUE(cc != NULL);
	cc->port_control = 1;
	cc->ccti_limit = 127;
	cc->sl_src[0].ccti = 10;
	T_EQ_INT(ibemu_traffic_create(f.e, f.t, &o, &f.tr, &f.d), 0);
	T_EQ_INT(ibemu_traffic_run(f.tr), 0);
	ibemu_buf_init(&svg);
	T_EQ_INT(ibemu_traffic_plot_svg(f.tr, NULL, &svg), 0);
	T_TRUE(strstr(svg.data, "congestion control on</text>") != NULL);
	/* The panel spans y 430 (top, CCTI 10 on a 0..10 axis) to 590. */
	line = polyline(svg.data, "ccti", "hca02:1-&gt;hca01:1");
	T_TRUE(line && strstr(line, ",430.0") && !strstr(line, ",590.0"));
	free(line);
	line = polyline(svg.data, "ccti", "hca03:1-&gt;hca01:1");
	T_TRUE(line && strstr(line, ",590.0") && !strstr(line, ",430.0"));
	free(line);
	ibemu_buf_fini(&svg);
	ibemu_test_fab_fini(&f);
}

/*
 * --backlog: a sender with its fill of messages waiting makes no more, so
 * an incast ends soon after its duration instead of draining what the
 * sources piled up; without it the hotspot drains 7 sources' worth.
 */
static void test_backlog(void)
{
	struct ibemu_traffic_summary bounded, unbounded;
	struct ibemu_traffic_opts o;
	struct ibemu_test_fab f;

	opts(&o, IBEMU_TRAFFIC_INCAST, 100000000);
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	ibemu_traffic_summary(f.tr, &unbounded);
	ibemu_test_fab_fini(&f);
	o.backlog = 2;
	T_EQ_INT(study(&f, "single-switch-8", &o), 0);
	ibemu_traffic_summary(f.tr, &bounded);
	check_clean(&f);
	ibemu_test_fab_fini(&f);
	T_TRUE(unbounded.end_ps > 6 * unbounded.duration_ps);
	/* Two messages (of 64 KiB, 5.3 us each at EDR) per source at most
	 * are left when the duration ends: 7 x 2 x 5.3 us to drain. */
	T_TRUE(bounded.end_ps < bounded.duration_ps + 80000000);
	T_TRUE(bounded.msgs < unbounded.msgs);
	/* The hotspot was as busy: what was skipped could not have gone. */
	T_TRUE(bounded.gbps > 90);
}

void ibemu_test_register_traffic_studies(void)
{
	static const struct ibemu_test tests[] = {
		{"opts", test_opts},
		{"bad_opts", test_bad_opts},
		{"needs_lids", test_needs_lids},
		{"shift", test_shift},
		{"permutation", test_permutation},
		{"bisection", test_bisection},
		{"alltoall", test_alltoall},
		{"uniform", test_uniform},
		{"segments_and_load", test_segments_and_load},
		{"incast_victims", test_incast_victims},
		{"backlog", test_backlog},
		{"render", test_render},
		{"progress", test_progress},
		{"lost_packets", test_lost_packets},
		{"deadlock", test_deadlock},
		{"hosts", test_hosts},
		{"shares_fabric", test_shares_fabric},
		{"borrows_a_lent_port", test_borrows_a_lent_port},
		{"back_to_back", test_back_to_back},
		{"alltoall_1152", test_alltoall_1152},
		{"waterfill", test_waterfill},
		{"jain", test_jain},
		{"fair_uncontended", test_fair_uncontended},
		{"fair_incast", test_fair_incast},
		{"congestion_tree", test_congestion_tree},
		{"plot", test_plot},
		{"plot_ccti", test_plot_ccti},
		{NULL, NULL},
	};

	ibemu_test_add_suite("traffic.studies", tests);
}
