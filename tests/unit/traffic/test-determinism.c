// SPDX-License-Identifier: MIT
/*
 * Determinism of the engine and of traffic studies: the same study on the
 * same fabric gives the same counters on every port and byte-identical
 * results, whatever the size of the steps it runs in; another seed gives
 * other results.
 */
#include <stdlib.h>

#include "engine.h"
#include "model.h"
#include "routing.h"
#include "traffic.h"
#include "yaml.h"
#include "unit.h"

/* What a finished study leaves behind. */
struct outcome {
	struct ibemu_port_counters *cnt; /* every port */
	uint32_t nports;
	char *text, *json;
	uint64_t end_time; /* engine time */
};

static void outcome_fini(struct outcome *o)
{
	free(o->cnt);
	free(o->text);
	free(o->json);
}

/* Runs 'opts' on fat-tree-2l-36 in steps of 'batch' events. */
static void run(const struct ibemu_traffic_opts *opts, size_t batch,
		struct outcome *out)
{
	struct ibemu_traffic *tr = NULL;
	struct ibemu_topo *t = NULL;
	struct ibemu_routes *r = NULL;
	struct ibemu_engine *e = NULL;
	struct ibemu_diag d;
	struct ibemu_buf b;
	int done = 0, ret = 0;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load_file(IBEMU_TEST_SRCDIR
				      "/topologies/fat-tree-2l-36.yaml",
				      &t, &d),
		 0);
	T_EQ_INT(ibemu_routing_run_topo(ibemu_routing_find("minhop"), t, &r),
		 0);
	T_EQ_INT(ibemu_model_create(t, &e), 0);
	T_EQ_INT(ibemu_engine_apply_routes(e, r), 0);
	T_EQ_INT(ibemu_traffic_create(e, t, opts, &tr, &d), 0);
	while (!ret && !done)
		ret = ibemu_traffic_step(tr, batch, &done);
	T_EQ_INT(ret, 0);

	out->nports = ibemu_engine_nports(e);
	out->cnt = calloc(out->nports, sizeof(*out->cnt));
	for (i = 0; i < out->nports; i++)
		ibemu_engine_counters(e, i, &out->cnt[i]);
	out->end_time = ibemu_engine_now(e);
	ibemu_buf_init(&b);
	ibemu_traffic_render(tr, 0, 0, &b);
	out->text = ibemu_buf_steal(&b);
	ibemu_traffic_render(tr, 1, 0, &b);
	out->json = ibemu_buf_steal(&b);

	ibemu_traffic_destroy(tr);
	ibemu_engine_destroy(e);
	ibemu_routes_destroy(r);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

/* Ports whose counters differ between 'a' and 'b'. */
static uint32_t ports_differ(const struct outcome *a, const struct outcome *b)
{
	uint32_t i, n = 0;

	T_EQ_U64(a->nports, b->nports);
	for (i = 0; i < a->nports && i < b->nports; i++)
		n += memcmp(&a->cnt[i], &b->cnt[i], sizeof(a->cnt[i])) != 0;
	return n;
}

static void uniform(struct ibemu_traffic_opts *o, uint64_t seed)
{
	/* Uniform random destinations, Bernoulli arrivals at load 0.8,
	 * 16 KiB messages for 50 us: thousands of random draws. */
	ibemu_traffic_opts_init(o);
	o->pattern = IBEMU_TRAFFIC_UNIFORM;
	o->msg_bytes = 16384;
	o->load = 0.8;
	o->duration_ps = 50000000;
	o->seed = seed;
}

static void test_same_study(void)
{
	struct ibemu_traffic_opts o;
	struct outcome a, b;

	uniform(&o, 7);
	run(&o, 1u << 20, &a);
	run(&o, 1u << 20, &b);
	T_EQ_U64(ports_differ(&a, &b), 0);
	T_EQ_U64(a.end_time, b.end_time);
	T_EQ_STR(a.text, b.text);
	T_EQ_STR(a.json, b.json);
	/* Something happened at all. */
	T_TRUE(a.text && strstr(a.text, "\nFlows: ") != NULL);
	outcome_fini(&a);
	outcome_fini(&b);
}

static void test_step_size(void)
{
	struct ibemu_traffic_opts o;
	struct outcome a, b;

	/* Stepping one event at a time or a million at once is the same. */
	uniform(&o, 7);
	run(&o, 1, &a);
	run(&o, 1u << 20, &b);
	T_EQ_U64(ports_differ(&a, &b), 0);
	T_EQ_STR(a.text, b.text);
	T_EQ_STR(a.json, b.json);
	outcome_fini(&a);
	outcome_fini(&b);
}

static void test_other_seed(void)
{
	struct ibemu_traffic_opts o;
	struct outcome a, b;

	uniform(&o, 7);
	run(&o, 1u << 20, &a);
	uniform(&o, 8);
	run(&o, 1u << 20, &b);
	T_TRUE(ports_differ(&a, &b) > 0);
	T_TRUE(a.text && b.text && strcmp(a.text, b.text) != 0);
	T_TRUE(a.json && b.json && strcmp(a.json, b.json) != 0);
	outcome_fini(&a);
	outcome_fini(&b);
}

static void test_incast_victims(void)
{
	struct ibemu_traffic_opts o;
	struct outcome a, b;

	/* Congestion (back-pressure, head-of-line blocking) is as
	 * repeatable as light traffic. */
	ibemu_traffic_opts_init(&o);
	o.pattern = IBEMU_TRAFFIC_INCAST;
	o.victims = 1;
	o.duration_ps = 20000000;
	run(&o, 1000, &a);
	run(&o, 1u << 20, &b);
	T_EQ_U64(ports_differ(&a, &b), 0);
	T_EQ_STR(a.text, b.text);
	T_EQ_STR(a.json, b.json);
	outcome_fini(&a);
	outcome_fini(&b);
}

void ibemu_test_register_traffic_determinism(void)
{
	static const struct ibemu_test tests[] = {
		{"same_study", test_same_study},
		{"step_size", test_step_size},
		{"other_seed", test_other_seed},
		{"incast_victims", test_incast_victims},
		{NULL, NULL},
	};

	ibemu_test_add_suite("traffic.determinism", tests);
}
