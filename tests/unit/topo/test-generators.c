// SPDX-License-Identifier: MIT
/*
 * Unit tests of the topology generators: node and link counts against the
 * formulas of each kind, port budgets and degrees, connectivity, the exact
 * error messages, and that two runs build the very same fabric.
 */
#include <errno.h>
#include <stdlib.h>

#include "gen.h"
#include "topo.h"
#include "unit.h"

#define MAX_ARGS 8

/*
 * Runs generator 'kind' with "key", "value", ... (NULL-terminated) as given
 * on a command line. Returns what ibemu_gen_run() returns; *t is created
 * either way and d holds the diagnostics.
 */
static int gen(struct ibemu_topo **t, struct ibemu_diag *d, const char *kind,
	       const char *const *kv)
{
	static const struct ibemu_loc cmdline = {NULL, 0, 0};
	struct ibemu_gen_arg args[MAX_ARGS];
	size_t n = 0;

	ibemu_diag_init(d);
	if (ibemu_topo_create(t))
		return -ENOMEM;
	for (; kv && kv[0]; kv += 2, n++) {
		args[n].key = kv[0];
		args[n].value = kv[1];
		args[n].loc = cmdline;
	}
	return ibemu_gen_run(*t, kind, &cmdline, args, n, d);
}

/* The error text of a run that must fail. */
static char *gen_error(const char *kind, const char *const *kv)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char *msg;
	int ret = gen(&t, &d, kind, kv);

	T_EQ_INT(ret, -EINVAL);
	msg = d.error ? strdup(d.error) : NULL;
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
	return msg;
}

#define T_GEN_ERROR(kind, expect, ...)                                \
	do {                                                          \
		static const char *const _kv[] = {__VA_ARGS__, NULL}; \
		char *_msg = gen_error(kind, _kv);                    \
		T_EQ_STR(_msg, expect);                               \
		free(_msg);                                           \
	} while (0)

static uint32_t node(const struct ibemu_topo *t, const char *name)
{
	uint32_t i = ibemu_topo_find(t, name);

	T_TRUE(i != IBEMU_NONE);
	return i;
}

/* Ports of node 'n' that are cabled. */
static unsigned used_ports(const struct ibemu_topo *t, uint32_t n)
{
	unsigned p, used = 0;

	for (p = 1; p <= t->nodes[n].nports; p++)
		used += t->nodes[n].ports[p].peer_node != IBEMU_NONE;
	return used;
}

/* Links between nodes a and b. */
static unsigned links_between(const struct ibemu_topo *t, uint32_t a,
			      uint32_t b)
{
	unsigned p, n = 0;

	for (p = 1; p <= t->nodes[a].nports; p++)
		n += t->nodes[a].ports[p].peer_node == b;
	return n;
}

/* Ports of node 'n' cabled to HCAs. */
static unsigned host_ports(const struct ibemu_topo *t, uint32_t n)
{
	unsigned p, h = 0;

	for (p = 1; p <= t->nodes[n].nports; p++) {
		uint32_t peer = t->nodes[n].ports[p].peer_node;

		h += peer != IBEMU_NONE &&
		     t->nodes[peer].type == IBEMU_NODE_HCA;
	}
	return h;
}

/*
 * Checks what holds for every generated fabric: the counts, switches of
 * 'radix' ports, one-port HCAs cabled to a switch, host ports below every
 * other cabled port of a switch, and a connected fabric.
 */
static void check_fabric(struct ibemu_topo *t, uint64_t switches,
			 uint64_t hosts, uint64_t links, unsigned radix)
{
	struct ibemu_diag d;
	uint32_t s, h, i;
	unsigned p;

	ibemu_topo_count(t, &s, &h);
	T_EQ_U64(s, switches);
	T_EQ_U64(h, hosts);
	T_EQ_U64(t->nlinks, links);
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		if (n->type == IBEMU_NODE_HCA) {
			T_EQ_INT(n->nports, 1);
			T_TRUE(n->ports[1].peer_node != IBEMU_NONE &&
			       t->nodes[n->ports[1].peer_node].type ==
				       IBEMU_NODE_SWITCH);
			continue;
		}
		T_EQ_INT(n->nports, radix);
		/* Hosts occupy ports 1..hosts of their switch. */
		for (p = 1; p <= host_ports(t, i); p++)
			T_EQ_INT(t->nodes[n->ports[p].peer_node].type,
				 IBEMU_NODE_HCA);
	}
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	T_EQ_INT(d.nwarnings, 0);
	ibemu_diag_fini(&d);
}

static void test_single_switch(void)
{
	static const char *const kv[] = {"radix", "8", "hosts", "6", NULL};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t sw;

	T_EQ_INT(gen(&t, &d, "single-switch", kv), 0);
	check_fabric(t, 1, 6, 6, 8);
	sw = node(t, "sw");
	T_EQ_INT(t->nodes[sw].ports[1].peer_node, node(t, "hca01"));
	T_EQ_INT(t->nodes[sw].ports[6].peer_node, node(t, "hca06"));
	T_EQ_INT(used_ports(t, sw), 6);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_GEN_ERROR("single-switch",
		    "error: single-switch: 'hosts' must be between 1 and 8 for "
		    "radix 8 (one "
		    "switch port per host)",
		    "radix", "8", "hosts", "9");
}

static void test_ring(void)
{
	static const char *const kv[] = {"switches", "4", "hosts_per_switch",
					 "2", NULL};
	static const char *const two[] = {"switches", "2", NULL};
	static const char *const one[] = {"switches", "1", "hosts_per_switch",
					  "3", NULL};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t s1, s2;

	T_EQ_INT(gen(&t, &d, "ring", kv), 0);
	check_fabric(t, 4, 8, 4 + 8, 4);
	s1 = node(t, "sw01");
	s2 = node(t, "sw02");
	/* Port p+2 of switch i goes to port p+1 of switch i+1. */
	T_EQ_INT(t->nodes[s1].ports[4].peer_node, s2);
	T_EQ_INT(t->nodes[s1].ports[4].peer_port, 3);
	T_EQ_INT(t->nodes[s1].ports[3].peer_node, node(t, "sw04"));
	T_EQ_INT(t->nodes[s2].ports[1].peer_node, node(t, "hca03"));
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* Two switches close the ring with two parallel links. */
	T_EQ_INT(gen(&t, &d, "ring", two), 0);
	check_fabric(t, 2, 2, 2 + 2, 3);
	T_EQ_INT(links_between(t, node(t, "sw01"), node(t, "sw02")), 2);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_EQ_INT(gen(&t, &d, "ring", one), 0);
	check_fabric(t, 1, 3, 3, 5);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_GEN_ERROR("ring",
		    "error: ring: 'radix' must be at least 6 for "
		    "hosts_per_switch = 4 and 2 "
		    "ring ports",
		    "switches", "3", "hosts_per_switch", "4", "radix", "5");
}

/* The fewest top switches, as the documentation states the rule. */
static long fewest_tops(long half, long below, long radix)
{
	long s;

	for (s = 1; s <= half; s++)
		if (half % s == 0 && below * half / s <= radix)
			return s;
	return -1;
}

static void test_fat_tree_2l(void)
{
	static const char *const kv[] = {"radix", "12", "hosts", "36", NULL};
	static const char *const part[] = {"radix", "12", "hosts", "40", NULL};
	static const char *const six[] = {"radix",  "12", "hosts", "36",
					  "spines", "6",  NULL};
	static const long cases[][2] = {{2, 1},	   {2, 2},    {4, 8},
					{8, 5},	   {12, 72},  {18, 36},
					{36, 648}, {36, 100}, {48, 1000}};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char name[32];
	unsigned i, j;

	/* 6 leaves; 3 spines, each taking 2 links from every leaf. */
	T_EQ_INT(gen(&t, &d, "fat-tree-2l", kv), 0);
	check_fabric(t, 6 + 3, 36, 36 + 6 * 6, 12);
	for (i = 1; i <= 6; i++) {
		snprintf(name, sizeof(name), "leaf%02u", i);
		T_EQ_INT(host_ports(t, node(t, name)), 6);
		T_EQ_INT(used_ports(t, node(t, name)), 12);
		for (j = 1; j <= 3; j++) {
			char spine[32];

			snprintf(spine, sizeof(spine), "spine%02u", j);
			T_EQ_INT(
				links_between(t, node(t, name), node(t, spine)),
				2);
		}
	}
	for (j = 1; j <= 3; j++) {
		snprintf(name, sizeof(name), "spine%02u", j);
		T_EQ_INT(used_ports(t, node(t, name)), 12);
	}
	/* Predictable cabling: uplinks to spine01 first, leaf01 first. */
	T_EQ_INT(t->nodes[node(t, "leaf02")].ports[7].peer_node,
		 node(t, "spine01"));
	T_EQ_INT(t->nodes[node(t, "leaf02")].ports[7].peer_port, 3);
	T_EQ_INT(t->nodes[node(t, "leaf02")].ports[9].peer_node,
		 node(t, "spine02"));
	T_EQ_INT(t->nodes[node(t, "leaf01")].ports[1].peer_node,
		 node(t, "hca01"));
	T_EQ_INT(t->nodes[node(t, "leaf06")].ports[6].peer_node,
		 node(t, "hca36"));
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* 40 hosts: 7 leaves, the last with 4 hosts; 6 spines. */
	T_EQ_INT(gen(&t, &d, "fat-tree-2l", part), 0);
	check_fabric(t, 7 + 6, 40, 40 + 7 * 6, 12);
	T_EQ_INT(host_ports(t, node(t, "leaf07")), 4);
	T_EQ_INT(used_ports(t, node(t, "leaf07")), 10);
	T_EQ_INT(used_ports(t, node(t, "spine01")), 7);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_EQ_INT(gen(&t, &d, "fat-tree-2l", six), 0);
	check_fabric(t, 6 + 6, 36, 36 + 36, 12);
	T_EQ_INT(links_between(t, node(t, "leaf03"), node(t, "spine05")), 1);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	for (i = 0; i < IBEMU_ARRAY_SIZE(cases); i++) {
		long r = cases[i][0], h = cases[i][1], half = r / 2;
		long leaves = (h + half - 1) / half,
		     spines = fewest_tops(half, leaves, r);
		char rs[16], hs[16];
		const char *args[] = {"radix", rs, "hosts", hs, NULL};

		snprintf(rs, sizeof(rs), "%ld", r);
		snprintf(hs, sizeof(hs), "%ld", h);
		T_EQ_INT(gen(&t, &d, "fat-tree-2l", args), 0);
		check_fabric(t, (uint64_t)(leaves + spines), (uint64_t)h,
			     (uint64_t)(h + leaves * half), (unsigned)r);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}

	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'hosts' must be between 1 and 72 for "
		    "radix 12 (at "
		    "most radix*radix/2 hosts in two levels)",
		    "radix", "12", "hosts", "73");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'radix' must be even, not 13", "radix",
		    "13", "hosts", "10");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'spines' must be a divisor of radix/2 "
		    "= 6 and at "
		    "least 3 for 6 leaves of radix 12 (every leaf has "
		    "radix/2/spines links "
		    "to each spine), not 2",
		    "radix", "12", "hosts", "36", "spines", "2");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'spines' must be a divisor of radix/2 "
		    "= 6 and at "
		    "least 3 for 6 leaves of radix 12 (every leaf has "
		    "radix/2/spines links "
		    "to each spine), not 4",
		    "radix", "12", "hosts", "36", "spines", "4");
}

static void test_fat_tree_3l(void)
{
	static const char *const kv[] = {"radix", "8", "hosts", "128", NULL};
	static const long cases[][2] = {{2, 1},	    {2, 2},	{4, 16},
					{4, 5},	    {8, 20},	{12, 432},
					{36, 1000}, {36, 11664}};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char name[32];
	unsigned i, j;

	/* The full 8-port fat tree: 8 pods of 4 edge and 4 agg, 16 cores. */
	T_EQ_INT(gen(&t, &d, "fat-tree-3l", kv), 0);
	check_fabric(t, 80, 128, 128 + 32 * 4 + 32 * 4, 8);
	T_TRUE(ibemu_topo_find(t, "edge32") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "agg32") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "core16") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "core17") == IBEMU_NONE);
	for (i = 1; i <= 32; i++) {
		snprintf(name, sizeof(name), "edge%02u", i);
		T_EQ_INT(host_ports(t, node(t, name)), 4);
		T_EQ_INT(used_ports(t, node(t, name)), 8);
		snprintf(name, sizeof(name), "agg%02u", i);
		T_EQ_INT(used_ports(t, node(t, name)), 8);
	}
	for (i = 1; i <= 16; i++) {
		snprintf(name, sizeof(name), "core%02u", i);
		T_EQ_INT(used_ports(t, node(t, name)), 8);
	}
	/* Within pod 2 (edge05..08, agg05..08) every edge meets every agg once. */
	for (i = 5; i <= 8; i++)
		for (j = 5; j <= 8; j++) {
			char agg[32];

			snprintf(name, sizeof(name), "edge%02u", i);
			snprintf(agg, sizeof(agg), "agg%02u", j);
			T_EQ_INT(links_between(t, node(t, name), node(t, agg)),
				 1);
		}
	/* Agg j of each pod serves core group j: agg06 (j = 1) reaches core05..08. */
	T_EQ_INT(links_between(t, node(t, "agg06"), node(t, "core05")), 1);
	T_EQ_INT(links_between(t, node(t, "agg06"), node(t, "core08")), 1);
	T_EQ_INT(links_between(t, node(t, "agg06"), node(t, "core01")), 0);
	T_EQ_INT(t->nodes[node(t, "edge05")].ports[5].peer_node,
		 node(t, "agg05"));
	T_EQ_INT(t->nodes[node(t, "edge05")].ports[5].peer_port, 1);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	for (i = 0; i < IBEMU_ARRAY_SIZE(cases); i++) {
		long r = cases[i][0], h = cases[i][1], half = r / 2;
		long edges = (h + half - 1) / half,
		     pods = (edges + half - 1) / half;
		long cores = half * fewest_tops(half, pods, r);
		char rs[16], hs[16];
		const char *args[] = {"radix", rs, "hosts", hs, NULL};

		snprintf(rs, sizeof(rs), "%ld", r);
		snprintf(hs, sizeof(hs), "%ld", h);
		T_EQ_INT(gen(&t, &d, "fat-tree-3l", args), 0);
		check_fabric(t, (uint64_t)(edges + pods * half + cores),
			     (uint64_t)h,
			     (uint64_t)(h + edges * half + pods * half * half),
			     (unsigned)r);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}

	T_GEN_ERROR("fat-tree-3l",
		    "error: fat-tree-3l: 'hosts' must be between 1 and 128 for "
		    "radix 8 (at "
		    "most radix^3/4 hosts in three levels)",
		    "radix", "8", "hosts", "129");
}

/* A 10,000-host fabric builds (its speed belongs to benchmarks, not tests). */
static void test_fat_tree_3l_large(void)
{
	static const char *const kv[] = {"radix", "36", "hosts", "10000", NULL};
	struct ibemu_topo *t;
	struct ibemu_diag d;

	T_EQ_INT(gen(&t, &d, "fat-tree-3l", kv), 0);
	/* 556 edge, 31 pods of 18 agg, 18 groups of 18 core. */
	check_fabric(t, 556 + 558 + 324, 10000, 10000 + 556 * 18 + 558 * 18,
		     36);
	T_TRUE(ibemu_topo_find(t, "hca00001") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "hca0001") == IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "hca10000") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "hca09999") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "edge556") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "edge001") != IBEMU_NONE);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static uint64_t ipow(uint64_t k, unsigned e)
{
	uint64_t v = 1;

	while (e--)
		v *= k;
	return v;
}

static void test_kary_ntree(void)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	unsigned k, n, lvl, i;

	for (k = 2; k <= 4; k++)
		for (n = 1; n <= 4; n++) {
			uint64_t per = ipow(k, n - 1);
			char ks[8], ns[8], name[32];
			const char *args[] = {"k", ks, "n", ns, NULL};

			snprintf(ks, sizeof(ks), "%u", k);
			snprintf(ns, sizeof(ns), "%u", n);
			T_EQ_INT(gen(&t, &d, "kary-ntree", args), 0);
			check_fabric(t, n * per, ipow(k, n), n * ipow(k, n),
				     2 * k);
			for (lvl = 1; lvl <= n; lvl++)
				for (i = 1; i <= per; i++) {
					snprintf(name, sizeof(name),
						 "sw%u-%0*u", lvl,
						 per >= 100 ? 3 : 2, i);
					/* Below the top every port is used; the top uses k. */
					T_EQ_INT(used_ports(t, node(t, name)),
						 lvl < n ? 2 * k : k);
					T_EQ_INT(host_ports(t, node(t, name)),
						 lvl == 1 ? k : 0);
				}
			ibemu_topo_destroy(t);
			ibemu_diag_fini(&d);
		}

	/*
	 * 2-ary 3-tree: sw1-w goes up to the two sw2 switches whose word
	 * differs in the last digit, sw2 to the sw3 differing in the first.
	 */
	{
		static const char *const kv[] = {"k", "2", "n", "3", NULL};

		T_EQ_INT(gen(&t, &d, "kary-ntree", kv), 0);
		T_EQ_INT(links_between(t, node(t, "sw1-03"), node(t, "sw2-03")),
			 1);
		T_EQ_INT(links_between(t, node(t, "sw1-03"), node(t, "sw2-04")),
			 1);
		T_EQ_INT(links_between(t, node(t, "sw1-03"), node(t, "sw2-01")),
			 0);
		T_EQ_INT(links_between(t, node(t, "sw2-02"), node(t, "sw3-02")),
			 1);
		T_EQ_INT(links_between(t, node(t, "sw2-02"), node(t, "sw3-04")),
			 1);
		T_EQ_INT(links_between(t, node(t, "sw2-02"), node(t, "sw3-01")),
			 0);
		T_EQ_INT(t->nodes[node(t, "sw1-02")].ports[1].peer_node,
			 node(t, "hca03"));
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}

	T_GEN_ERROR("kary-ntree",
		    "error: kary-ntree: 'n' must be at most 7 for k = 4 (k^n "
		    "hosts and "
		    "n*k^(n-1) switches must fit in the 49151 unicast LIDs of "
		    "a subnet), not 8",
		    "k", "4", "n", "8");
	T_GEN_ERROR("kary-ntree",
		    "error: kary-ntree: missing parameter 'n' (levels of "
		    "switches; k^n hosts)",
		    "k", "4");
}

static void test_torus_mesh(void)
{
	static const char *const t44[] = {"dims", "4x4", NULL};
	static const char *const t442[] = {"dims", "4x4x2", "hosts_per_switch",
					   "2", NULL};
	static const char *const t31[] = {"dims", "3x1", NULL};
	static const char *const m43[] = {"dims", "4X3", "radix", "8", NULL};
	static const char *const m11[] = {"dims", "11x2x3", "hosts_per_switch",
					  "0", NULL};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t s;

	T_EQ_INT(gen(&t, &d, "torus", t44), 0);
	check_fabric(t, 16, 16, 16 + 32, 5);
	for (s = 0; s < t->nnodes; s++)
		if (t->nodes[s].type == IBEMU_NODE_SWITCH)
			T_EQ_INT(used_ports(t, s), 5);
	s = node(t, "sw-3-2");
	T_EQ_INT(t->nodes[s].ports[1].peer_node, node(t, "hca15"));
	T_EQ_INT(t->nodes[s].ports[2].peer_node, node(t, "sw-2-2")); /* x - 1 */
	T_EQ_INT(t->nodes[s].ports[3].peer_node,
		 node(t, "sw-0-2")); /* x + 1, wrapped */
	T_EQ_INT(t->nodes[s].ports[4].peer_node, node(t, "sw-3-1")); /* y - 1 */
	T_EQ_INT(t->nodes[s].ports[5].peer_node, node(t, "sw-3-3")); /* y + 1 */
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* A dimension of size 2 gets two parallel links. */
	T_EQ_INT(gen(&t, &d, "torus", t442), 0);
	check_fabric(t, 32, 64, 64 + 3 * 32, 8);
	T_EQ_INT(links_between(t, node(t, "sw-1-2-0"), node(t, "sw-1-2-1")), 2);
	T_EQ_INT(used_ports(t, node(t, "sw-1-2-0")), 8);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* A dimension of size 1 gets none: a ring of three. */
	T_EQ_INT(gen(&t, &d, "torus", t31), 0);
	check_fabric(t, 3, 3, 3 + 3, 5);
	T_EQ_INT(used_ports(t, node(t, "sw-1-0")), 3);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_EQ_INT(gen(&t, &d, "mesh", m43), 0);
	check_fabric(t, 12, 12, 12 + 3 * 3 + 4 * 2, 8);
	T_EQ_INT(used_ports(t, node(t, "sw-0-0")), 3);
	T_EQ_INT(used_ports(t, node(t, "sw-1-1")), 5);
	T_EQ_INT(t->nodes[node(t, "sw-0-0")].ports[2].peer_node, IBEMU_NONE);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* Coordinates are padded to the digits of the largest. */
	T_EQ_INT(gen(&t, &d, "mesh", m11), 0);
	check_fabric(t, 66, 0, 10 * 6 + 1 * 33 + 2 * 22, 6);
	T_TRUE(ibemu_topo_find(t, "sw-10-1-2") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "sw-09-1-2") != IBEMU_NONE);
	T_TRUE(ibemu_topo_find(t, "sw-00-0-0") != IBEMU_NONE);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_GEN_ERROR("torus",
		    "error: torus: 'radix' must be at least 5 for "
		    "hosts_per_switch = 1 in 2 "
		    "dimensions (hosts_per_switch + 2 per dimension)",
		    "dims", "4x4", "radix", "4");
	T_GEN_ERROR("torus",
		    "error: torus: 'dims' must be two or three sizes joined by "
		    "'x', like 4x4 "
		    "or 4x4x2, not '4x'",
		    "dims", "4x");
	T_GEN_ERROR("mesh",
		    "error: mesh: 'dims' must be two or three sizes joined by "
		    "'x', like 4x4 or "
		    "4x4x2, not '4'",
		    "dims", "4");
	T_GEN_ERROR("mesh",
		    "error: mesh: each size in 'dims' must be between 1 and "
		    "256, not 0",
		    "dims", "4x0");
	T_GEN_ERROR("torus",
		    "error: torus: 'hosts_per_switch' must be at most 248 in 3 "
		    "dimensions (a "
		    "switch has at most 254 ports and 6 of them link the grid)",
		    "dims", "2x2x2", "hosts_per_switch", "250");
	T_GEN_ERROR("torus",
		    "error: torus: 65536 hosts and 65536 switches need more "
		    "than the 49151 "
		    "unicast LIDs of a subnet",
		    "dims", "256x256");
}

static void test_dragonfly(void)
{
	static const char *const kv[] = {"p", "2", "a", "4", "h", "2", NULL};
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char a[32], b[32];
	long g, g1, g2;

	/* Largest size: 9 groups, one global link between every two. */
	T_EQ_INT(gen(&t, &d, "dragonfly", kv), 0);
	check_fabric(t, 36, 72, 72 + 9 * 6 + 36, 7);
	T_EQ_INT(used_ports(t, node(t, "g05-r03")), 7);
	T_EQ_INT(links_between(t, node(t, "g01-r01"), node(t, "g01-r04")), 1);
	T_EQ_INT(t->nodes[node(t, "g01-r02")].ports[1].peer_node,
		 node(t, "hca03"));
	T_EQ_INT(t->nodes[node(t, "g01-r02")].ports[3].peer_node,
		 node(t, "g01-r01"));
	T_EQ_INT(t->nodes[node(t, "g01-r02")].ports[4].peer_node,
		 node(t, "g01-r03"));
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	for (g = 1; g <= 9; g++) {
		char gs[8];
		const char *args[] = {"p", "2", "a", "4", "h",
				      "2", "g", gs,  NULL};
		long rounds = g > 1 ? 8 / (g - 1) : 0,
		     rem = g > 1 ? 8 % (g - 1) : 0;
		long last = 2 * rem - g + 1 > 0 ? 2 * rem - g + 1 : 0;
		long global =
			g > 1 ? rounds * g * (g - 1) / 2 + g * last / 2 : 0;
		uint32_t i, j;

		snprintf(gs, sizeof(gs), "%ld", g);
		T_EQ_INT(gen(&t, &d, "dragonfly", args), 0);
		check_fabric(t, (uint64_t)(g * 4), (uint64_t)(g * 8),
			     (uint64_t)(g * 8 + g * 6 + global), 7);
		/* Every two groups are joined; no router has more than h global links. */
		for (g1 = 1; g1 <= g; g1++)
			for (g2 = g1 + 1; g2 <= g; g2++) {
				unsigned n = 0;

				for (i = 1; i <= 4; i++)
					for (j = 1; j <= 4; j++) {
						snprintf(a, sizeof(a),
							 "g%02ld-r%02u", g1, i);
						snprintf(b, sizeof(b),
							 "g%02ld-r%02u", g2, j);
						n += links_between(t,
								   node(t, a),
								   node(t, b));
					}
				T_TRUE(n >= 1);
				if (g == 9)
					T_EQ_INT(n, 1);
			}
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}

	T_GEN_ERROR("dragonfly",
		    "error: dragonfly: 'g' must be between 1 and 9 for a = 4 "
		    "and h = 2 (a "
		    "group has a*h global links, one for each other group)",
		    "p", "2", "a", "4", "h", "2", "g", "10");
	T_GEN_ERROR("dragonfly",
		    "error: dragonfly: routers need p + a - 1 + h = 255 ports, "
		    "more than the "
		    "254 a switch can have",
		    "p", "100", "a", "100", "h", "56");
}

static void test_param_errors(void)
{
	static const struct ibemu_loc kind_loc = {"t.yaml", 2, 9};
	struct ibemu_gen_arg args[2] = {
		{"radix", "12", {"t.yaml", 3, 10}},
		{"radx", "12", {"t.yaml", 4, 9}},
	};
	struct ibemu_topo *t;
	struct ibemu_diag d;

	/* In a file, errors name the line and column of the value. */
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_gen_run(t, "fat-tree-2l", &kind_loc, args, 2, &d),
		 -EINVAL);
	T_EQ_STR(d.error,
		 "t.yaml:4:9: error: fat-tree-2l: unknown parameter 'radx' "
		 "(expected one of: radix, hosts, spines)");
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* A missing parameter is reported where the kind is. */
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_gen_run(t, "fat-tree-2l", &kind_loc, args, 1, &d),
		 -EINVAL);
	T_EQ_STR(d.error,
		 "t.yaml:2:9: error: fat-tree-2l: missing parameter 'hosts' "
		 "(hosts, at most radix*radix/2)");
	T_EQ_INT(t->nnodes, 0);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	/* A limit that depends on another parameter points at the one given. */
	args[1].key = "hosts";
	args[1].value = "100";
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_gen_run(t, "fat-tree-2l", &kind_loc, args, 2, &d),
		 -EINVAL);
	T_EQ_STR(
		d.error,
		"t.yaml:4:9: error: fat-tree-2l: 'hosts' must be between 1 and "
		"72 for radix 12 (at most radix*radix/2 hosts in two levels)");
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	T_GEN_ERROR(
		"fat-tree",
		"error: unknown generator kind 'fat-tree' (expected one of: "
		"single-switch, ring, fat-tree-2l, fat-tree-3l, kary-ntree, "
		"torus, "
		"mesh, dragonfly)",
		"hosts", "1");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'radix' must be an even integer "
		    "between 2 and 254, "
		    "not '12a'",
		    "radix", "12a", "hosts", "10");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'hosts' must be an integer between 1 "
		    "and 49151, not ''",
		    "hosts", "");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'hosts' must be an integer between 1 "
		    "and 49151, not ' 5'",
		    "hosts", " 5");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'radix' must be between 2 and 254, "
		    "not 300",
		    "radix", "300", "hosts", "10");
	T_GEN_ERROR(
		"fat-tree-2l",
		"error: fat-tree-2l: 'radix' must be between 2 and 254, not "
		"99999999999999999999999",
		"radix", "99999999999999999999999", "hosts", "10");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: 'hosts' must be between 1 and 49151, "
		    "not -3",
		    "hosts", "-3");
	T_GEN_ERROR("fat-tree-2l",
		    "error: fat-tree-2l: parameter 'hosts' is given twice",
		    "hosts", "10", "hosts", "12");
	T_EQ_INT(ibemu_gen_kind_exists("torus"), 1);
	T_EQ_INT(ibemu_gen_kind_exists("tor"), 0);
	T_EQ_INT(ibemu_gen_kind_exists(NULL), 0);
}

/* Every field of every node and link, as text, to compare two runs. */
static char *fingerprint(const struct ibemu_topo *t)
{
	struct ibemu_buf b;
	uint32_t i;

	ibemu_buf_init(&b);
	for (i = 0; i < t->nnodes; i++)
		ibemu_buf_printf(&b, "%s %d %u\n", t->nodes[i].name,
				 t->nodes[i].type, t->nodes[i].nports);
	for (i = 0; i < t->nlinks; i++)
		ibemu_buf_printf(&b, "%u:%u-%u:%u\n", t->links[i].node[0],
				 t->links[i].port[0], t->links[i].node[1],
				 t->links[i].port[1]);
	return ibemu_buf_steal(&b);
}

static void test_deterministic(void)
{
	static const struct {
		const char *kind;
		const char *kv[9];
	} runs[] = {
		{"single-switch", {"hosts", "5", NULL}},
		{"ring", {"switches", "5", NULL}},
		{"fat-tree-2l", {"radix", "16", "hosts", "100", NULL}},
		{"fat-tree-3l", {"radix", "12", "hosts", "300", NULL}},
		{"kary-ntree", {"k", "3", "n", "3", NULL}},
		{"torus", {"dims", "3x4x2", NULL}},
		{"mesh", {"dims", "3x4", NULL}},
		{"dragonfly", {"p", "3", "a", "6", "h", "3", "g", "12", NULL}},
	};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(runs); i++) {
		struct ibemu_topo *t1, *t2;
		struct ibemu_diag d1, d2;
		char *f1, *f2;

		T_EQ_INT(gen(&t1, &d1, runs[i].kind, runs[i].kv), 0);
		T_EQ_INT(gen(&t2, &d2, runs[i].kind, runs[i].kv), 0);
		f1 = fingerprint(t1);
		f2 = fingerprint(t2);
		T_TRUE(t1->nlinks > 0);
		T_TRUE(f1 && f2 && !strcmp(f1, f2));
		free(f1);
		free(f2);
		ibemu_topo_destroy(t1);
		ibemu_topo_destroy(t2);
		ibemu_diag_fini(&d1);
		ibemu_diag_fini(&d2);
	}
}

static void test_help(void)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_gen_help(&b, NULL);
	T_TRUE(b.data && strstr(b.data, "single-switch: one switch"));
	T_TRUE(b.data && strstr(b.data, "\ndragonfly: "));
	T_TRUE(b.data &&
	       strstr(b.data,
		      "    hosts             hosts, at most radix*radix/2 "
		      "(required; 1..49151)\n"));
	T_TRUE(b.data &&
	       strstr(b.data,
		      "    radix             ports of every switch (default "
		      "36; 2..254, even)\n"));
	ibemu_buf_reset(&b);
	ibemu_gen_help(&b, "torus");
	T_TRUE(b.data && !strncmp(b.data, "torus: ", 7));
	T_TRUE(b.data && !strstr(b.data, "mesh"));
	T_TRUE(b.data &&
	       strstr(b.data,
		      "    dims              switches along each dimension: "
		      "AxB or AxBxC (required; each size 1..256)\n"));
	ibemu_buf_fini(&b);
}

void ibemu_test_register_topo_generators(void)
{
	static const struct ibemu_test tests[] = {
		{"single_switch", test_single_switch},
		{"ring", test_ring},
		{"fat_tree_2l", test_fat_tree_2l},
		{"fat_tree_3l", test_fat_tree_3l},
		{"fat_tree_3l_large", test_fat_tree_3l_large},
		{"kary_ntree", test_kary_ntree},
		{"torus_mesh", test_torus_mesh},
		{"dragonfly", test_dragonfly},
		{"param_errors", test_param_errors},
		{"deterministic", test_deterministic},
		{"help", test_help},
		{NULL, NULL},
	};

	ibemu_test_add_suite("topo.generators", tests);
}
