/* SPDX-License-Identifier: MIT */
/*
 * Shared by the CUnit suites: assertions that print both values when they
 * fail, and the paths of the source and build trees.
 */
#ifndef IBEMU_TEST_UNIT_H
#define IBEMU_TEST_UNIT_H

#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"

#define T_EQ_U64(a, b)                                                        \
	do {                                                                  \
		uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);              \
		char _m[512];                                                 \
		snprintf(_m, sizeof(_m),                                      \
			 "%s == %s (%" PRIu64 " vs %" PRIu64 ")", #a, #b, _a, \
			 _b);                                                 \
		CU_assertImplementation(_a == _b, __LINE__, _m, __FILE__, "", \
					CU_FALSE);                            \
	} while (0)

#define T_EQ_INT(a, b)                                                        \
	do {                                                                  \
		long long _a = (long long)(a), _b = (long long)(b);           \
		char _m[512];                                                 \
		snprintf(_m, sizeof(_m), "%s == %s (%lld vs %lld)", #a, #b,   \
			 _a, _b);                                             \
		CU_assertImplementation(_a == _b, __LINE__, _m, __FILE__, "", \
					CU_FALSE);                            \
	} while (0)

#define T_EQ_STR(a, b)                                                        \
	do {                                                                  \
		const char *_a = (a), *_b = (b);                              \
		char _m[2048];                                                \
		snprintf(_m, sizeof(_m), "%s == %s (\"%s\" vs \"%s\")", #a,   \
			 #b, _a ? _a : "(null)", _b ? _b : "(null)");         \
		CU_assertImplementation(_a &&_b && !strcmp(_a, _b), __LINE__, \
					_m, __FILE__, "", CU_FALSE);          \
	} while (0)

#define T_TRUE(c) \
	CU_assertImplementation(!!(c), __LINE__, #c, __FILE__, "", CU_FALSE)

/* Declares the register function of each suite (see suites.h). */
#define IBEMU_SUITE(name) void ibemu_test_register_##name(void);
#include "suites.h"
#undef IBEMU_SUITE

/* Adds a suite of 'tests' (NULL-terminated) named 'name'. */
struct ibemu_test {
	const char *name;
	void (*fn)(void);
};
void ibemu_test_add_suite(const char *name, const struct ibemu_test *tests);

/* Fabrics for tests (fabrics.c); the caller destroys them. */
struct ibemu_topo;
/* Runs generator 'kind' with "key", "value", ..., NULL (at most 8). */
struct ibemu_topo *ibemu_test_gen(const char *kind, const char *const *kv);
/* Loads topologies/NAME.yaml of the source tree. */
struct ibemu_topo *ibemu_test_load(const char *name);

/*
 * A traffic study's fabric: topology 't' (taken), min-hop routes
 * applied, its engine, the study once created ('tr'), a diagnostic.
 * ibemu_test_fab_fini() frees all of it.
 */
struct ibemu_routes;
struct ibemu_traffic;
struct ibemu_test_fab {
	struct ibemu_topo *t;
	struct ibemu_routes *r;
	struct ibemu_engine *e;
	struct ibemu_traffic *tr;
	struct ibemu_diag d;
};
void ibemu_test_fab_init(struct ibemu_test_fab *f, struct ibemu_topo *t);
void ibemu_test_fab_fini(struct ibemu_test_fab *f);

/*
 * An engine on topologies/NAME.yaml (switches, HCAs and agents: model/),
 * with every HCA port attached to 'ops' and 'ctx' unless 'ops' is NULL,
 * and min-hop routes (routing/) applied when 'routes' (LIDs, LFTs, Active
 * ports). Sets *t, *e and *r (NULL without routes);
 * ibemu_test_engine_down() asserts that no packet is left in the fabric,
 * then frees them.
 */
struct ibemu_engine;
struct ibemu_port_ops;
struct ibemu_routes;
void ibemu_test_engine_up(const char *name, int routes,
			  const struct ibemu_port_ops *ops, void *ctx,
			  struct ibemu_topo **t, struct ibemu_engine **e,
			  struct ibemu_routes **r);
void ibemu_test_engine_down(struct ibemu_topo *t, struct ibemu_engine *e,
			    struct ibemu_routes *r);
/* Attaches every HCA port of 'e' to 'ops' and 'ctx' (asserted). */
void ibemu_test_attach_all(struct ibemu_engine *e,
			   const struct ibemu_port_ops *ops, void *ctx);
/* The node named 'name' (asserted to exist), and the global index of its
 * port 'port' in 'e'. */
uint32_t ibemu_test_node(const struct ibemu_topo *t, const char *name);
uint32_t ibemu_test_port(const struct ibemu_topo *t,
			 const struct ibemu_engine *e, const char *node,
			 unsigned port);

#define IBEMU_TEST_SRCDIR   IBEMU_SOURCE_DIR
#define IBEMU_TEST_BUILDDIR IBEMU_BUILD_DIR

#endif
