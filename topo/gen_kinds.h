/* SPDX-License-Identifier: MIT */
/*
 * Private to the generators: how a kind declares its parameters, the state
 * a kind's builder receives once gen.c has parsed and checked every value,
 * and the helpers that name and cable nodes. Each family file defines its
 * kinds; gen.c lists them in the one table of kinds.
 */
#ifndef IBEMU_GEN_KINDS_H
#define IBEMU_GEN_KINDS_H

#include <stdint.h>

#include "gen.h"

#define IBEMU__GEN_MAX_PARAMS 8
#define IBEMU__GEN_MAX_DIMS   3

/*
 * IBA 4.1.3: unicast LIDs are 0x0001..0xbfff, and every HCA port and every
 * switch (its port 0) needs one with LMC 0.
 */
#define IBEMU__GEN_MAX_LIDS 0xbfffu

enum ibemu__gen_type {
	IBEMU__GEN_INT,	 /* a decimal integer */
	IBEMU__GEN_DIMS, /* "AxB" or "AxBxC"; min and max bound each size */
};

#define IBEMU__GEN_REQUIRED 0x1u /* no default: the user must give it */
#define IBEMU__GEN_EVEN	    0x2u /* must be an even number */

struct ibemu__gen_param {
	const char *name;
	enum ibemu__gen_type type;
	unsigned flags;
	long def; /* used when not required and 'def_text' is NULL */
	/* Non-NULL: the kind computes the default, which this describes. */
	const char *def_text;
	long min, max;
	const char *help;
};

struct ibemu__gen_ctx;

struct ibemu__gen_kind {
	const char *name;
	const char *summary; /* one line for the help */
	const struct ibemu__gen_param *params;
	unsigned nparams;
	/* Checks what depends on several parameters, then builds. */
	int (*run)(struct ibemu__gen_ctx *c);
};

/* What a kind's builder works with; filled by ibemu_gen_run(). */
struct ibemu__gen_ctx {
	struct ibemu_topo *t;
	struct ibemu_diag *d;
	const struct ibemu__gen_kind *kind;
	const struct ibemu_loc *kind_loc;
	long val[IBEMU__GEN_MAX_PARAMS];
	unsigned char given[IBEMU__GEN_MAX_PARAMS];
	const struct ibemu_loc
		*loc[IBEMU__GEN_MAX_PARAMS]; /* kind_loc if not given */
	unsigned dims
		[IBEMU__GEN_MAX_DIMS]; /* for an IBEMU__GEN_DIMS parameter */
	unsigned ndims;
	/* Host naming: hca<number>, numbered from 1 in creation order. */
	unsigned host_width;
	uint32_t next_host;
};

extern const struct ibemu__gen_kind ibemu__gen_single_switch;
extern const struct ibemu__gen_kind ibemu__gen_ring;
extern const struct ibemu__gen_kind ibemu__gen_fat_tree_2l;
extern const struct ibemu__gen_kind ibemu__gen_fat_tree_3l;
extern const struct ibemu__gen_kind ibemu__gen_kary_ntree;
extern const struct ibemu__gen_kind ibemu__gen_torus;
extern const struct ibemu__gen_kind ibemu__gen_mesh;
extern const struct ibemu__gen_kind ibemu__gen_dragonfly;

/*
 * Reports "<kind>: <message>" at the location of parameter 'param' (the
 * kind's location when it was not given, or when 'param' is negative).
 * Returns -EINVAL.
 */
int ibemu__gen_error(struct ibemu__gen_ctx *c, int param, const char *fmt, ...)
	IBEMU_PRINTF(3, 4);

/* Digits of 'count' in decimal, at least 2: the width of padded numbers. */
unsigned ibemu__gen_width(uint64_t count);

/*
 * Checks that 'hosts' HCAs and 'switches' switches fit in the unicast LID
 * space of one subnet and sets up host naming for 'hosts' hosts. Returns 0
 * or the error reported.
 */
int ibemu__gen_plan(struct ibemu__gen_ctx *c, uint64_t hosts,
		    uint64_t switches);

/* Adds a switch of 'nports' ports named by 'fmt'; reports failures. */
int ibemu__gen_switch(struct ibemu__gen_ctx *c, unsigned nports, uint32_t *idx,
		      const char *fmt, ...) IBEMU_PRINTF(4, 5);

/*
 * Adds 'count' switches named <prefix>01, <prefix>02, ... (padded to the
 * digits of 'count'). They take consecutive indices from *first on.
 */
int ibemu__gen_switches(struct ibemu__gen_ctx *c, unsigned nports,
			uint32_t count, const char *prefix, uint32_t *first);

/*
 * Adds the next 'count' hosts (one-port HCAs) and cables them to switch
 * 'sw' on ports 1..count, host ports being the low-numbered ones.
 */
int ibemu__gen_hosts(struct ibemu__gen_ctx *c, uint32_t sw, unsigned count);

/* Cables a:ap to b:bp. Only memory can run out: the wiring is ours. */
int ibemu__gen_link(struct ibemu__gen_ctx *c, uint32_t a, unsigned ap,
		    uint32_t b, unsigned bp);

#endif
