// SPDX-License-Identifier: MIT
/*
 * Topology generators: the one table of kinds, and the generic half of every
 * kind (parsing and checking each declared parameter, help from the table,
 * naming and cabling helpers). The wiring of each family lives in its own
 * file (gen_basic.c, gen_fattree.c, gen_ktree.c, gen_torus.c, ...).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_kinds.h"
#include "util.h"

static const struct ibemu__gen_kind *const kinds[] = {
	&ibemu__gen_single_switch, &ibemu__gen_ring,
	&ibemu__gen_fat_tree_2l,   &ibemu__gen_fat_tree_3l,
	&ibemu__gen_kary_ntree,	   &ibemu__gen_torus,
	&ibemu__gen_mesh,	   &ibemu__gen_dragonfly,
};

static const struct ibemu__gen_kind *find_kind(const char *name)
{
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(kinds); i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

int ibemu_gen_kind_exists(const char *kind)
{
	return kind && find_kind(kind) != NULL;
}

const char *ibemu_gen_kind_name(size_t i)
{
	return i < IBEMU_ARRAY_SIZE(kinds) ? kinds[i]->name : NULL;
}

const char *ibemu_gen_param_name(size_t kind, size_t j, const char **help)
{
	if (kind >= IBEMU_ARRAY_SIZE(kinds) || j >= kinds[kind]->nparams)
		return NULL;
	*help = kinds[kind]->params[j].help;
	return kinds[kind]->params[j].name;
}

static void list_kinds(struct ibemu_buf *b)
{
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(kinds); i++)
		ibemu_buf_printf(b, "%s%s", i ? ", " : "", kinds[i]->name);
}

static void list_params(struct ibemu_buf *b, const struct ibemu__gen_kind *k)
{
	unsigned i;

	for (i = 0; i < k->nparams; i++)
		ibemu_buf_printf(b, "%s%s", i ? ", " : "", k->params[i].name);
}

int ibemu__gen_error(struct ibemu__gen_ctx *c, int param, const char *fmt, ...)
{
	const struct ibemu_loc *loc = c->kind_loc;
	char *msg = NULL;
	va_list ap;
	int n;

	if (param >= 0 && c->loc[param])
		loc = c->loc[param];
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ibemu_diag_error(c->d, loc, "%s: out of memory",
					c->kind->name);
	ibemu_diag_error(c->d, loc, "%s: %s", c->kind->name, msg);
	free(msg);
	return -EINVAL;
}

unsigned ibemu__gen_width(uint64_t count)
{
	unsigned w = 1;

	while (count >= 10) {
		count /= 10;
		w++;
	}
	return w < 2 ? 2 : w;
}

int ibemu__gen_plan(struct ibemu__gen_ctx *c, uint64_t hosts, uint64_t switches)
{
	if (hosts + switches > IBEMU__GEN_MAX_LIDS)
		return ibemu__gen_error(c, -1,
					"%llu hosts and %llu switches need more"
					" than the %u unicast LIDs of a subnet",
					(unsigned long long)hosts,
					(unsigned long long)switches,
					IBEMU__GEN_MAX_LIDS);
	c->host_width = ibemu__gen_width(hosts);
	c->next_host = 1;
	return 0;
}

static int add_node(struct ibemu__gen_ctx *c, enum ibemu_node_type type,
		    unsigned nports, uint32_t *idx, const char *name)
{
	int ret = ibemu_topo_add_node(c->t, type, name, nports, idx);

	if (ret == -EEXIST)
		return ibemu__gen_error(c, -1,
					"cannot add node '%s': the fabric has a"
					" node of that name already",
					name);
	if (ret == -ENOMEM)
		ibemu__gen_error(c, -1, "out of memory");
	/* Names and port counts were checked before building. */
	IBEMU_BUG_ON(ret == -EINVAL);
	return ret;
}

int ibemu__gen_switch(struct ibemu__gen_ctx *c, unsigned nports, uint32_t *idx,
		      const char *fmt, ...)
{
	char name[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	IBEMU_BUG_ON(n < 0 || (size_t)n >= sizeof(name));
	return add_node(c, IBEMU_NODE_SWITCH, nports, idx, name);
}

int ibemu__gen_switches(struct ibemu__gen_ctx *c, unsigned nports,
			uint32_t count, const char *prefix, uint32_t *first)
{
	unsigned width = ibemu__gen_width(count);
	uint32_t i;
	int ret;

	*first = c->t->nnodes;
	for (i = 0; i < count; i++) {
		ret = ibemu__gen_switch(c, nports, NULL, "%s%0*u", prefix,
					(int)width, (unsigned)i + 1);
		if (ret)
			return ret;
	}
	return 0;
}

int ibemu__gen_hosts(struct ibemu__gen_ctx *c, uint32_t sw, unsigned count)
{
	char name[64];
	uint32_t h;
	unsigned i;
	int ret;

	for (i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "hca%0*u", (int)c->host_width,
			 (unsigned)c->next_host++);
		ret = add_node(c, IBEMU_NODE_HCA, 1, &h, name);
		if (ret)
			return ret;
		ret = ibemu__gen_link(c, sw, i + 1, h, 1);
		if (ret)
			return ret;
	}
	return 0;
}

int ibemu__gen_link(struct ibemu__gen_ctx *c, uint32_t a, unsigned ap,
		    uint32_t b, unsigned bp)
{
	int ret = ibemu_topo_connect(c->t, a, ap, b, bp, NULL);

	if (ret == -ENOMEM) {
		ibemu__gen_error(c, -1, "out of memory");
		return ret;
	}
	/* Any other failure is a port computed wrongly by a generator. */
	IBEMU_BUG_ON(ret);
	return 0;
}

/* Parses a decimal integer; -ERANGE when it does not fit in a long. */
static int parse_long(const char *s, long *out)
{
	const char *p = s;
	char *end;
	long v;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_int(struct ibemu__gen_ctx *c, unsigned i, const char *s)
{
	const struct ibemu__gen_param *p = &c->kind->params[i];
	const char *even = p->flags & IBEMU__GEN_EVEN ? "n even" : "n";
	long v;
	int ret = parse_long(s, &v);

	if (ret == -EINVAL)
		return ibemu__gen_error(c, (int)i,
					"'%s' must be a%s integer between %ld"
					" and %ld, not '%s'",
					p->name, even, p->min, p->max, s);
	if (ret || v < p->min || v > p->max)
		return ibemu__gen_error(
			c, (int)i, "'%s' must be between %ld and %ld, not %s",
			p->name, p->min, p->max, s);
	if ((p->flags & IBEMU__GEN_EVEN) && v % 2)
		return ibemu__gen_error(c, (int)i, "'%s' must be even, not %ld",
					p->name, v);
	c->val[i] = v;
	return 0;
}

static int parse_dims(struct ibemu__gen_ctx *c, unsigned i, const char *s)
{
	const struct ibemu__gen_param *p = &c->kind->params[i];
	const char *q = s;
	unsigned n = 0;

	for (;;) {
		const char *start = q;
		long v = 0;

		while (*q >= '0' && *q <= '9' && v <= p->max)
			v = v * 10 + (*q++ - '0');
		while (*q >= '0' && *q <= '9')
			q++;
		if (q == start || n == IBEMU__GEN_MAX_DIMS)
			goto bad;
		if (v < p->min || v > p->max)
			return ibemu__gen_error(
				c, (int)i,
				"each size in '%s' must be"
				" between %ld and %ld, not %.*s",
				p->name, p->min, p->max, (int)(q - start),
				start);
		c->dims[n++] = (unsigned)v;
		if (!*q)
			break;
		if (*q != 'x' && *q != 'X')
			goto bad;
		q++;
	}
	if (n < 2)
		goto bad;
	c->ndims = n;
	c->val[i] = n;
	return 0;

bad:
	return ibemu__gen_error(c, (int)i,
				"'%s' must be two or three sizes joined by 'x',"
				" like 4x4 or 4x4x2, not '%s'",
				p->name, s);
}

static int parse_arg(struct ibemu__gen_ctx *c, const struct ibemu_gen_arg *a)
{
	const struct ibemu__gen_kind *k = c->kind;
	unsigned i;

	for (i = 0; i < k->nparams; i++)
		if (!strcmp(k->params[i].name, a->key))
			break;
	if (i == k->nparams) {
		struct ibemu_buf b;
		int ret;

		ibemu_buf_init(&b);
		list_params(&b, k);
		ret = ibemu_diag_error(c->d, &a->loc,
				       "%s: unknown parameter '%s' (expected"
				       " one of: %s)",
				       k->name, a->key, b.data ? b.data : "");
		ibemu_buf_fini(&b);
		return ret;
	}
	if (c->given[i])
		return ibemu_diag_error(c->d, &a->loc,
					"%s: parameter '%s' is given twice",
					k->name, a->key);
	c->given[i] = 1;
	c->loc[i] = &a->loc;
	if (k->params[i].type == IBEMU__GEN_DIMS)
		return parse_dims(c, i, a->value ? a->value : "");
	return parse_int(c, i, a->value ? a->value : "");
}

int ibemu_gen_run(struct ibemu_topo *t, const char *kind,
		  const struct ibemu_loc *kind_loc,
		  const struct ibemu_gen_arg *args, size_t nargs,
		  struct ibemu_diag *d)
{
	const struct ibemu__gen_kind *k = kind ? find_kind(kind) : NULL;
	struct ibemu__gen_ctx c;
	size_t i;
	int ret;

	if (!k) {
		struct ibemu_buf b;

		ibemu_buf_init(&b);
		list_kinds(&b);
		ret = ibemu_diag_error(d, kind_loc,
				       "unknown generator kind '%s' (expected"
				       " one of: %s)",
				       kind ? kind : "", b.data ? b.data : "");
		ibemu_buf_fini(&b);
		return ret;
	}
	IBEMU_BUG_ON(k->nparams > IBEMU__GEN_MAX_PARAMS);
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.d = d;
	c.kind = k;
	c.kind_loc = kind_loc;
	for (i = 0; i < nargs; i++) {
		ret = parse_arg(&c, &args[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < k->nparams; i++) {
		const struct ibemu__gen_param *p = &k->params[i];

		if (c.given[i])
			continue;
		c.loc[i] = kind_loc;
		if (p->flags & IBEMU__GEN_REQUIRED)
			return ibemu_diag_error(
				d, kind_loc, "%s: missing parameter '%s' (%s)",
				k->name, p->name, p->help);
		if (!p->def_text)
			c.val[i] = p->def;
	}
	return k->run(&c);
}

static void help_param(struct ibemu_buf *out, const struct ibemu__gen_param *p)
{
	ibemu_buf_printf(out, "    %-17s %s (", p->name, p->help);
	if (p->flags & IBEMU__GEN_REQUIRED)
		ibemu_buf_puts(out, "required");
	else if (p->def_text)
		ibemu_buf_printf(out, "default %s", p->def_text);
	else
		ibemu_buf_printf(out, "default %ld", p->def);
	if (p->type == IBEMU__GEN_DIMS)
		ibemu_buf_printf(out, "; each size %ld..%ld", p->min, p->max);
	else
		ibemu_buf_printf(out, "; %ld..%ld", p->min, p->max);
	if (p->flags & IBEMU__GEN_EVEN)
		ibemu_buf_puts(out, ", even");
	ibemu_buf_puts(out, ")\n");
}

void ibemu_gen_help(struct ibemu_buf *out, const char *kind)
{
	size_t i;
	unsigned j;
	int first = 1;

	for (i = 0; i < IBEMU_ARRAY_SIZE(kinds); i++) {
		const struct ibemu__gen_kind *k = kinds[i];

		if (kind && strcmp(kind, k->name))
			continue;
		if (!first)
			ibemu_buf_puts(out, "\n");
		first = 0;
		ibemu_buf_printf(out, "%s: %s\n", k->name, k->summary);
		for (j = 0; j < k->nparams; j++)
			help_param(out, &k->params[j]);
	}
}
