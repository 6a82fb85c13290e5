// SPDX-License-Identifier: MIT
/*
 * The topology YAML loader. libyaml's event parser turns the text into a
 * small tree that remembers where each node starts; the sections are then
 * checked against their key tables (yaml_keys.c) and applied to the model
 * in a fixed order: name, defaults, generate, switches, HCAs, links. Every
 * error names the place in the file and what was expected there.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml_libyaml.h>

#include "fabric_name.h"
#include "file.h"
#include "gen.h"
#include "yaml.h"
#include "yaml_keys.h"

/* The format needs four levels; anything much deeper is not a topology. */
#define MAX_DEPTH 32

struct loader {
	struct ibemu_topo *t;
	struct ibemu_diag *d;
	const char *file; /* t->source: every location borrows it */
	const unsigned char *data;
	size_t len;
	struct ibemu__ynode **all; /* every tree node, for freeing */
	size_t nall, all_cap;
	struct ibemu__ynode *root; /* NULL for an empty document */
	struct ibemu_loc end;	   /* where the text ends */
	int nomem;
};

static struct ibemu_loc mark_loc(const struct loader *L, const yaml_mark_t *m)
{
	/* libyaml counts lines and columns from 0. */
	struct ibemu_loc loc = {
		.file = L->file,
		.line = (unsigned)m->line + 1,
		.col = (unsigned)m->column + 1,
	};

	return loc;
}

static int nomem(struct loader *L)
{
	L->nomem = 1;
	ibemu_diag_error(L->d, NULL, "out of memory");
	return -ENOMEM;
}

static void tree_free(struct loader *L)
{
	size_t i;

	for (i = 0; i < L->nall; i++) {
		free(L->all[i]->str);
		free(L->all[i]->kids);
		free(L->all[i]);
	}
	free(L->all);
	L->all = NULL;
	L->nall = 0;
}

static int push_kid(struct ibemu__ynode *parent, struct ibemu__ynode *kid)
{
	if (parent->nkids == parent->kids_cap) {
		size_t cap = parent->kids_cap ? parent->kids_cap * 2 : 4;
		struct ibemu__ynode **k;

		k = realloc(parent->kids, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		parent->kids = k;
		parent->kids_cap = cap;
	}
	parent->kids[parent->nkids++] = kid;
	return 0;
}

/* Makes a node for 'ev' and hangs it under 'parent' (or at the root). */
static int add_node(struct loader *L, struct ibemu__ynode *parent,
		    const yaml_event_t *ev, struct ibemu__ynode **out)
{
	struct ibemu__ynode *n;

	if (L->nall == L->all_cap) {
		size_t cap = L->all_cap ? L->all_cap * 2 : 64;
		struct ibemu__ynode **a = realloc(L->all, cap * sizeof(*a));

		if (!a)
			return nomem(L);
		L->all = a;
		L->all_cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return nomem(L);
	L->all[L->nall++] = n;
	n->loc = mark_loc(L, &ev->start_mark);
	if (ev->type == YAML_SCALAR_EVENT) {
		n->kind = IBEMU__Y_SCALAR;
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->str = malloc(n->len + 1);
		if (!n->str)
			return nomem(L);
		memcpy(n->str, ev->data.scalar.value, n->len);
		n->str[n->len] = '\0';
	} else {
		n->kind = ev->type == YAML_SEQUENCE_START_EVENT ? IBEMU__Y_SEQ
								: IBEMU__Y_MAP;
	}
	if (!parent)
		L->root = n;
	else if (push_kid(parent, n))
		return nomem(L);
	*out = n;
	return 0;
}

/* Anchors, aliases and tags are YAML features the format does not use. */
static int check_props(struct loader *L, const yaml_event_t *ev)
{
	static const char core[] = "tag:yaml.org,2002:"; /* what !! means */
	struct ibemu_loc loc = mark_loc(L, &ev->start_mark);
	const yaml_char_t *anchor = NULL, *tag = NULL;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		break;
	}
	if (anchor)
		return ibemu_diag_error(
			L->d, &loc,
			"anchor '&%s' is not supported, expected "
			"plain values (no anchors or aliases)",
			(const char *)anchor);
	if (tag && !strncmp((const char *)tag, core, sizeof(core) - 1))
		return ibemu_diag_error(L->d, &loc,
					"tag '!!%s' is not supported, expected "
					"untagged values",
					(const char *)tag + sizeof(core) - 1);
	if (tag)
		return ibemu_diag_error(L->d, &loc,
					"tag '%s' is not supported, expected "
					"untagged values",
					(const char *)tag);
	return 0;
}

static int syntax_error(struct loader *L, const yaml_parser_t *p)
{
	struct ibemu_loc loc, ctx;
	size_t i, off;

	if (p->error == YAML_MEMORY_ERROR)
		return nomem(L);
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors carry a byte offset, not a mark. */
		loc.file = L->file;
		loc.line = 1;
		loc.col = 1;
		off = p->problem_offset < L->len ? p->problem_offset : L->len;
		for (i = 0; i < off; i++) {
			if (L->data[i] == '\n') {
				loc.line++;
				loc.col = 1;
			} else if ((L->data[i] & 0xc0) != 0x80) {
				loc.col++;
			}
		}
		if (p->problem_value != -1)
			return ibemu_diag_error(
				L->d, &loc,
				"invalid YAML: %s (byte 0x%02x), "
				"expected UTF-8 text",
				p->problem, p->problem_value);
		return ibemu_diag_error(L->d, &loc,
					"invalid YAML: %s, expected UTF-8 text",
					p->problem ? p->problem : "unreadable");
	}
	loc = mark_loc(L, &p->problem_mark);
	if (p->problem_mark.index < L->len &&
	    L->data[p->problem_mark.index] == '\t')
		return ibemu_diag_error(
			L->d, &loc,
			"invalid YAML: a tab character, expected "
			"spaces (YAML indents with spaces only)");
	if (p->context) {
		ctx = mark_loc(L, &p->context_mark);
		return ibemu_diag_error(
			L->d, &loc, "invalid YAML: %s %s at %u:%u",
			p->problem ? p->problem : "syntax error", p->context,
			ctx.line, ctx.col);
	}
	return ibemu_diag_error(L->d, &loc, "invalid YAML: %s",
				p->problem ? p->problem : "syntax error");
}

/* Where the tree builder is: the open sequences and mappings. */
struct builder {
	struct ibemu__ynode *stack[MAX_DEPTH];
	unsigned depth;
	unsigned docs;
	int done;
};

static int on_event(struct loader *L, struct builder *b, const yaml_event_t *ev)
{
	struct ibemu_loc loc = mark_loc(L, &ev->start_mark);
	struct ibemu__ynode *n;
	int ret;

	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		L->end = loc;
		b->done = 1;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->docs++)
			return ibemu_diag_error(
				L->d, &loc,
				"a second YAML document, expected "
				"one document per file");
		return 0;
	case YAML_ALIAS_EVENT:
		return ibemu_diag_error(
			L->d, &loc,
			"alias '*%s' is not supported, expected "
			"plain values (no anchors or aliases)",
			(const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		ret = check_props(L, ev);
		if (!ret)
			ret = add_node(L,
				       b->depth ? b->stack[b->depth - 1] : NULL,
				       ev, &n);
		if (ret || ev->type == YAML_SCALAR_EVENT)
			return ret;
		if (b->depth == MAX_DEPTH)
			return ibemu_diag_error(
				L->d, &loc,
				"nesting deeper than %d levels, "
				"expected a topology",
				MAX_DEPTH);
		b->stack[b->depth++] = n;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		/* libyaml balances every start with an end. */
		IBEMU_BUG_ON(!b->depth);
		b->depth--;
		return 0;
	default:
		return 0;
	}
}

/* Builds the tree of the one document in the text. */
static int build_tree(struct loader *L)
{
	struct builder b = {.depth = 0};
	yaml_parser_t p;
	yaml_event_t ev;
	int ret = 0;

	if (!yaml_parser_initialize(&p))
		return nomem(L);
	yaml_parser_set_input_string(&p, L->data, L->len);
	while (!b.done && !ret) {
		if (!yaml_parser_parse(&p, &ev)) {
			ret = syntax_error(L, &p);
			break;
		}
		ret = on_event(L, &b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return ret;
}

static struct ibemu_topo_node *node(struct loader *L, uint32_t i)
{
	return &L->t->nodes[i];
}

/*
 * IBA 7.9: a sender needs credit for a whole packet, counted in 64-byte
 * blocks. The largest header set around a payload is LRH 8, GRH 40, BTH 12,
 * RETH 16, ImmDt 4, ICRC 4 and VCRC 2 bytes: 86 bytes on top of the MTU.
 */
static uint32_t packet_buffer_min(uint32_t mtu)
{
	return (mtu + 86 + 63) / 64 * 64;
}

/* A buffer too small for one MTU-sized packet stalls every such packet. */
static void check_buffer(struct loader *L, const struct ibemu_loc *loc,
			 uint32_t bytes)
{
	uint32_t need = packet_buffer_min(L->t->defaults.mtu);
	struct ibemu_buf b;

	if (bytes >= need)
		return;
	ibemu_buf_init(&b);
	ibemu__yaml_format_size(&b, bytes);
	ibemu_diag_warn(L->d, loc,
			"buffer_per_vl %s is smaller than one %u-byte MTU "
			"packet with its headers (%u bytes): such packets "
			"can never be sent",
			b.err ? "?" : b.data, L->t->defaults.mtu, need);
	ibemu_buf_fini(&b);
}

/* Copies the values given in 'v' (a 'defaults:' section) into 'def'. */
static void defaults_set(struct ibemu_topo_defaults *def,
			 const struct ibemu__yaml_val *v)
{
	if (v[IBEMU__K_DEF_MTU].node)
		def->mtu = (uint16_t)v[IBEMU__K_DEF_MTU].u;
	if (v[IBEMU__K_DEF_VLS].node)
		def->vls = (uint8_t)v[IBEMU__K_DEF_VLS].u;
	if (v[IBEMU__K_DEF_WIDTH].node)
		def->width = (uint8_t)v[IBEMU__K_DEF_WIDTH].u;
	if (v[IBEMU__K_DEF_SPEED].node)
		def->speed = (enum ibemu_speed)v[IBEMU__K_DEF_SPEED].u;
	if (v[IBEMU__K_DEF_CABLE_LENGTH].node)
		def->cable_length_mm = (uint32_t)v[IBEMU__K_DEF_CABLE_LENGTH].u;
	if (v[IBEMU__K_DEF_BUFFER_PER_VL].node)
		def->buffer_per_vl = (uint32_t)v[IBEMU__K_DEF_BUFFER_PER_VL].u;
	if (v[IBEMU__K_DEF_ROUTING_LATENCY].node)
		def->routing_latency_ps = v[IBEMU__K_DEF_ROUTING_LATENCY].u;
	if (v[IBEMU__K_DEF_HCA_MODEL].node)
		def->hca_model =
			(enum ibemu_hca_kind)v[IBEMU__K_DEF_HCA_MODEL].u;
}

int ibemu__yaml_defaults_init(struct ibemu_topo_defaults *def)
{
	const struct ibemu__yaml_section *sec =
		ibemu__yaml_section(IBEMU__YS_DEFAULTS);
	struct ibemu__yaml_val v[IBEMU__K_DEF_COUNT];
	struct ibemu__ynode n[IBEMU__K_DEF_COUNT];
	struct ibemu_diag d;
	size_t i;
	int ret = 0;

	memset(def, 0, sizeof(*def));
	memset(v, 0, sizeof(v));
	memset(n, 0, sizeof(n));
	ibemu_diag_init(&d);
	/* The table's text, read as if a file had said it. */
	for (i = 0; i < sec->nkeys && !ret; i++) {
		const struct ibemu__yaml_key *k = &sec->keys[i];

		if (k->flags & IBEMU__YAML_DERIVED)
			continue;
		n[i].kind = IBEMU__Y_SCALAR;
		n[i].str = (char *)k->def;
		n[i].len = strlen(k->def);
		n[i].plain = 1;
		ret = ibemu__yaml_value_parse(k, &n[i], &v[i], &d);
	}
	if (!ret)
		defaults_set(def, v);
	ibemu__yaml_vals_fini(v, IBEMU__K_DEF_COUNT);
	ibemu_diag_fini(&d);
	return ret;
}

static int apply_defaults(struct loader *L, const struct ibemu__ynode *map)
{
	struct ibemu__yaml_val v[IBEMU__K_DEF_COUNT];
	struct ibemu_topo_defaults *def = &L->t->defaults;
	int ret;

	ret = ibemu__yaml_map_parse(map, IBEMU__YS_DEFAULTS, v, L->d);
	if (ret)
		goto out;
	defaults_set(def, v);
	/* Nodes inherit it: one warning here rather than one per node. */
	if (v[IBEMU__K_DEF_BUFFER_PER_VL].node)
		check_buffer(L, &v[IBEMU__K_DEF_BUFFER_PER_VL].node->loc,
			     def->buffer_per_vl);
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_DEF_COUNT);
	return ret;
}

/* Hands the keys of 'generate:' other than 'kind' to the generator. */
static int run_generator(struct loader *L, const struct ibemu__ynode *map)
{
	struct ibemu__yaml_val v[IBEMU__K_GEN_COUNT];
	struct ibemu_gen_arg *args = NULL;
	size_t i, nargs = 0;
	int ret;

	ret = ibemu__yaml_map_parse(map, IBEMU__YS_GENERATE, v, L->d);
	if (ret)
		goto out;
	args = calloc(map->nkids / 2 + 1, sizeof(*args));
	if (!args) {
		ret = nomem(L);
		goto out;
	}
	for (i = 0; i + 1 < map->nkids; i += 2) {
		const struct ibemu__ynode *key = map->kids[i];
		const struct ibemu__ynode *val = map->kids[i + 1];

		if (key == v[IBEMU__K_GEN_KIND].key)
			continue;
		if (val->kind != IBEMU__Y_SCALAR || ibemu__ynode_is_null(val) ||
		    strlen(val->str) != val->len) {
			ret = ibemu_diag_error(
				L->d, &val->loc,
				"generator parameter '%s' is %s, "
				"expected a number or a word",
				key->str, ibemu__ynode_what(val));
			goto out;
		}
		args[nargs].key = key->str;
		args[nargs].value = val->str;
		args[nargs].loc = val->loc;
		nargs++;
	}
	ret = ibemu_gen_run(L->t, v[IBEMU__K_GEN_KIND].s,
			    &v[IBEMU__K_GEN_KIND].node->loc, args, nargs, L->d);
	if (ret == -ENOMEM)
		ret = nomem(L);
	else if (ret && !L->d->error)
		ret = ibemu_diag_error(L->d, &map->loc, "generator failed: %s",
				       strerror(-ret));
out:
	free(args);
	ibemu__yaml_vals_fini(v, IBEMU__K_GEN_COUNT);
	return ret;
}

/*
 * An HCA's ip: a dotted IPv4 address in 127.0.0.0/8 with room for every
 * port's (ip + N - 1), so that no address of the fabric can route off the
 * machine. Uniqueness is checked at finalize, with the derived ones.
 */
static int set_node_ip(struct loader *L, struct ibemu_topo_node *n,
		       const struct ibemu__yaml_val *v)
{
	const struct ibemu_loc *loc = &v->node->loc;
	struct in_addr a;
	uint32_t ip;

	if (inet_pton(AF_INET, v->s, &a) != 1)
		return ibemu_diag_error(L->d, loc,
					"ip '%s' is not an IPv4 address, "
					"expected a dotted quad such as "
					"127.10.0.1",
					v->s);
	ip = ntohl(a.s_addr);
	if (!ibemu_topo_ip_loopback(ip) ||
	    !ibemu_topo_ip_loopback(ip + n->nports - 1))
		return ibemu_diag_error(
			L->d, loc,
			"ip %s%s is outside 127.0.0.0/8, expected a loopback "
			"address (with room for %u port%s), which cannot "
			"route off the machine",
			v->s, ibemu_topo_ip_loopback(ip) ? " + ports" : "",
			n->nports, n->nports == 1 ? "" : "s");
	n->ip = ip;
	n->ip_loc = *loc;
	return 0;
}

/* Gives node 'idx' the values its mapping set; the rest stay defaults. */
static int set_node_keys(struct loader *L, uint32_t idx,
			 const struct ibemu__yaml_val *v)
{
	const struct ibemu__yaml_val *guids = &v[IBEMU__K_NODE_PORT_GUIDS];
	struct ibemu_topo_node *n;
	unsigned p;

	if (v[IBEMU__K_NODE_DESCRIPTION].node &&
	    ibemu_topo_set_desc(L->t, idx, v[IBEMU__K_NODE_DESCRIPTION].s))
		return nomem(L);
	n = node(L, idx);
	n->loc = v[IBEMU__K_NODE_NAME].node->loc;
	if (v[IBEMU__K_NODE_GUID].node) {
		n->guid = v[IBEMU__K_NODE_GUID].u;
		n->guid_loc = v[IBEMU__K_NODE_GUID].node->loc;
	}
	for (p = 0; guids->node && p < n->nports; p++)
		n->ports[p + 1].guid = guids->guids[p];
	if (v[IBEMU__K_NODE_SYSIMAGE_GUID].node)
		n->sysimage_guid = v[IBEMU__K_NODE_SYSIMAGE_GUID].u;
	if (v[IBEMU__K_NODE_VENDOR_ID].node)
		n->vendor_id = (uint32_t)v[IBEMU__K_NODE_VENDOR_ID].u;
	if (v[IBEMU__K_NODE_DEVICE_ID].node)
		n->device_id = (uint16_t)v[IBEMU__K_NODE_DEVICE_ID].u;
	if (v[IBEMU__K_NODE_VLS].node)
		n->vls = (uint8_t)v[IBEMU__K_NODE_VLS].u;
	if (v[IBEMU__K_NODE_BUFFER_PER_VL].node) {
		n->buffer_per_vl = (uint32_t)v[IBEMU__K_NODE_BUFFER_PER_VL].u;
		check_buffer(L, &v[IBEMU__K_NODE_BUFFER_PER_VL].node->loc,
			     n->buffer_per_vl);
	}
	if (v[IBEMU__K_NODE_ROUTING_LATENCY].node)
		n->routing_latency_ps = v[IBEMU__K_NODE_ROUTING_LATENCY].u;
	if (v[IBEMU__K_NODE_HCA_MODEL].node)
		n->hca_model =
			(enum ibemu_hca_kind)v[IBEMU__K_NODE_HCA_MODEL].u;
	if (v[IBEMU__K_NODE_IP].node)
		return set_node_ip(L, n, &v[IBEMU__K_NODE_IP]);
	return 0;
}

static int add_node_item(struct loader *L, const struct ibemu__ynode *item,
			 enum ibemu_node_type type)
{
	struct ibemu__yaml_val v[IBEMU__YAML_MAX_KEYS];
	const char *what = type == IBEMU_NODE_SWITCH ? "switch" : "HCA";
	const struct ibemu__yaml_val *name = &v[IBEMU__K_NODE_NAME];
	const struct ibemu__yaml_val *guids = &v[IBEMU__K_NODE_PORT_GUIDS];
	unsigned nports = 1;
	uint32_t idx;
	int ret;

	memset(v, 0, sizeof(v));
	if (item->kind != IBEMU__Y_MAP) {
		ret = ibemu_diag_error(
			L->d, &item->loc,
			"%s %s is %s, expected a mapping such as "
			"{name: %s1, ports: %u}",
			type == IBEMU_NODE_SWITCH ? "a" : "an", what,
			ibemu__ynode_what(item),
			type == IBEMU_NODE_SWITCH ? "sw" : "hca",
			type == IBEMU_NODE_SWITCH ? 36 : 1);
		goto out;
	}
	ret = ibemu__yaml_map_parse(item,
				    type == IBEMU_NODE_SWITCH ? IBEMU__YS_SWITCH
							      : IBEMU__YS_HCA,
				    v, L->d);
	if (ret)
		goto out;
	if (v[IBEMU__K_NODE_PORTS].node)
		nports = (unsigned)v[IBEMU__K_NODE_PORTS].u;
	idx = ibemu_topo_find(L->t, name->s);
	if (idx != IBEMU_NONE) {
		const struct ibemu_loc *first = &node(L, idx)->loc;

		if (first->line)
			ret = ibemu_diag_error(
				L->d, &name->node->loc,
				"duplicate node name '%s' (first "
				"declared at %u:%u), expected "
				"unique names",
				name->s, first->line, first->col);
		else
			ret = ibemu_diag_error(L->d, &name->node->loc,
					       "duplicate node name '%s' (made "
					       "by generate:), expected unique "
					       "names",
					       name->s);
		goto out;
	}
	if (guids->node && guids->u != nports) {
		ret = ibemu_diag_error(L->d, &guids->node->loc,
				       "port_guids has %u GUID%s but '%s' has "
				       "%u port%s, expected one GUID per port",
				       (unsigned)guids->u,
				       guids->u == 1 ? "" : "s", name->s,
				       nports, nports == 1 ? "" : "s");
		goto out;
	}
	/* An HCA's port N takes GUID guid + N unless port_guids says. */
	if (type == IBEMU_NODE_HCA && v[IBEMU__K_NODE_GUID].node &&
	    !guids->node && v[IBEMU__K_NODE_GUID].u > UINT64_MAX - nports) {
		ret = ibemu_diag_error(
			L->d, &v[IBEMU__K_NODE_GUID].node->loc,
			"guid %s leaves no room for the port "
			"GUIDs guid+1..guid+%u, expected at "
			"most 0x%llx or port_guids",
			v[IBEMU__K_NODE_GUID].node->str, nports,
			(unsigned long long)(UINT64_MAX - nports));
		goto out;
	}
	ret = ibemu_topo_add_node(L->t, type, name->s, nports, &idx);
	if (ret) {
		ret = nomem(L);
		goto out;
	}
	ret = set_node_keys(L, idx, v);
out:
	ibemu__yaml_vals_fini(v, IBEMU__YAML_MAX_KEYS);
	return ret;
}

static int add_nodes(struct loader *L, const struct ibemu__ynode *seq,
		     enum ibemu_node_type type)
{
	size_t i;
	int ret;

	for (i = 0; seq && i < seq->nkids; i++) {
		ret = add_node_item(L, seq->kids[i], type);
		if (ret)
			return ret;
	}
	return 0;
}

/* Resolves one end of a link: a known node and a port it has. */
static int link_end(struct loader *L, const struct ibemu__yaml_val *v,
		    uint32_t *idx)
{
	const struct ibemu_loc *loc = &v->node->loc;
	const struct ibemu_topo_node *n;

	*idx = ibemu_topo_find(L->t, v->s);
	if (*idx == IBEMU_NONE)
		return ibemu_diag_error(
			L->d, loc,
			"unknown node '%s' in link endpoint "
			"'%s', expected the name of a switch or "
			"an HCA",
			v->s, v->node->str);
	n = node(L, *idx);
	if (v->u == 0 && n->type == IBEMU_NODE_SWITCH)
		return ibemu_diag_error(
			L->d, loc,
			"port 0 of switch '%s' is its management "
			"port and has no cable, expected 1..%u",
			n->name, n->nports);
	if (v->u < 1 || v->u > n->nports)
		return ibemu_diag_error(L->d, loc,
					"port %llu of '%s' is out of range, "
					"expected 1..%u",
					(unsigned long long)v->u, n->name,
					n->nports);
	return 0;
}

static int port_free(struct loader *L, const struct ibemu__yaml_val *v,
		     uint32_t idx)
{
	const struct ibemu_topo_node *n = node(L, idx);
	const struct ibemu_topo_port *port = &n->ports[v->u];
	const struct ibemu_loc *first;

	if (port->peer_node == IBEMU_NONE)
		return 0;
	first = &L->t->links[port->link].loc;
	if (first->line)
		return ibemu_diag_error(
			L->d, &v->node->loc,
			"port %u of '%s' is cabled twice (first "
			"by the link at %u:%u), expected one "
			"link per port",
			(unsigned)v->u, n->name, first->line, first->col);
	return ibemu_diag_error(L->d, &v->node->loc,
				"port %u of '%s' is cabled twice (first by "
				"generate:), expected one link per port",
				(unsigned)v->u, n->name);
}

/* The short form's endpoints, checked as the long form's 'a' and 'b'. */
static const struct ibemu__yaml_key short_end = {
	.name = "link endpoint",
	.type = IBEMU__YT_ENDPOINT,
};

static int add_link_item(struct loader *L, const struct ibemu__ynode *item)
{
	struct ibemu__yaml_val v[IBEMU__K_LINK_COUNT];
	const struct ibemu__yaml_val *a = &v[IBEMU__K_LINK_A];
	const struct ibemu__yaml_val *b = &v[IBEMU__K_LINK_B];
	const struct ibemu__yaml_val *len = &v[IBEMU__K_LINK_CABLE_LENGTH];
	const struct ibemu__yaml_val *lat = &v[IBEMU__K_LINK_LATENCY];
	struct ibemu_topo_link *l;
	uint32_t na, nb, li;
	int ret = 0;

	memset(v, 0, sizeof(v));
	if (item->kind == IBEMU__Y_SEQ) {
		if (item->nkids != 2) {
			ret = ibemu_diag_error(L->d, &item->loc,
					       "a link with %zu endpoint%s, "
					       "expected 2 as [node:port, "
					       "node:port]",
					       item->nkids,
					       item->nkids == 1 ? "" : "s");
			goto out;
		}
		ret = ibemu__yaml_value_parse(&short_end, item->kids[0],
					      &v[IBEMU__K_LINK_A], L->d);
		if (!ret)
			ret = ibemu__yaml_value_parse(&short_end, item->kids[1],
						      &v[IBEMU__K_LINK_B],
						      L->d);
	} else if (item->kind == IBEMU__Y_MAP) {
		ret = ibemu__yaml_map_parse(item, IBEMU__YS_LINK, v, L->d);
	} else {
		ret = ibemu_diag_error(L->d, &item->loc,
				       "a link is %s, expected [node:port, "
				       "node:port] or {a: node:port, b: "
				       "node:port, ...}",
				       ibemu__ynode_what(item));
	}
	if (ret)
		goto out;
	if (len->node && lat->node) {
		ret = ibemu_diag_error(L->d, &lat->key->loc,
				       "a link with both cable_length (at "
				       "%u:%u) and latency, expected one of "
				       "them",
				       len->key->loc.line, len->key->loc.col);
		goto out;
	}
	ret = link_end(L, a, &na);
	if (!ret)
		ret = link_end(L, b, &nb);
	if (ret)
		goto out;
	if (na == nb && a->u == b->u) {
		ret = ibemu_diag_error(L->d, &b->node->loc,
				       "port %u of '%s' is cabled to itself, "
				       "expected two different ports",
				       (unsigned)a->u, node(L, na)->name);
		goto out;
	}
	ret = port_free(L, a, na);
	if (!ret)
		ret = port_free(L, b, nb);
	if (ret)
		goto out;
	ret = ibemu_topo_connect(L->t, na, (unsigned)a->u, nb, (unsigned)b->u,
				 &li);
	if (ret) {
		/* Every reason connect could refuse was checked above. */
		ret = nomem(L);
		goto out;
	}
	l = &L->t->links[li];
	l->loc = item->loc;
	if (v[IBEMU__K_LINK_WIDTH].node)
		l->width = (uint8_t)v[IBEMU__K_LINK_WIDTH].u;
	if (v[IBEMU__K_LINK_SPEED].node)
		l->speed = (enum ibemu_speed)v[IBEMU__K_LINK_SPEED].u;
	if (len->node)
		ibemu_topo_link_set_length(l, (uint32_t)len->u);
	if (lat->node)
		l->latency_ps = lat->u;
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_LINK_COUNT);
	return ret;
}

/* A node name may be '..'; the fabric's name is a directory. */
static int fabric_name_bad(struct loader *L, const struct ibemu__yaml_val *v)
{
	const char *why;

	if (!ibemu_fabric_name_check(v->s, &why))
		return 0;
	return ibemu_diag_error(L->d, &v->node->loc,
				"bad fabric name '%s': %s (a name is %s)", v->s,
				why, IBEMU_FABRIC_NAME_RULE);
}

/* The fabric's name when the file gives none: its base name, made valid. */
static int default_name(struct loader *L, const char *file)
{
	const char *base = strrchr(file, '/');
	char name[64];
	size_t n = 0;
	const char *dot;

	base = base ? base + 1 : file;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		dot = base + strlen(base);
	for (; base < dot && n < sizeof(name) - 1; base++) {
		char c[2] = {*base, 0};

		name[n++] = ibemu_name_valid(c) ? *base : '_';
	}
	name[n] = '\0';
	/* "-x.yaml" or "..yaml" must not become an option or a directory. */
	if (name[0] == '.' || name[0] == '-')
		name[0] = '_';
	if (ibemu_topo_set_name(L->t, n ? name : "fabric"))
		return nomem(L);
	return 0;
}

static const char top_keys_text[] =
	"name, defaults, switches, hcas, links, generate or "
	"congestion_control";

/* hca_tuning: where no HCA has a preset (every one is wire) changes
 * nothing: said, as the file may mean otherwise. */
static void warn_tuning_unused(struct loader *L, const struct ibemu_loc *loc)
{
	uint32_t i;

	for (i = 0; i < L->t->nnodes; i++)
		if (L->t->nodes[i].type == IBEMU_NODE_HCA &&
		    ibemu_topo_hca_kind(L->t, i) != IBEMU_HCA_WIRE)
			return;
	ibemu_diag_warn(L->d, loc,
			"hca_tuning changes nothing: no HCA has a host model "
			"(every one is hca_model: wire)");
}

static int build_model(struct loader *L, const char *file)
{
	struct ibemu__yaml_val v[IBEMU__K_TOP_COUNT];
	const struct ibemu__ynode *links;
	size_t i;
	int ret;

	memset(v, 0, sizeof(v));
	if (!L->root || ibemu__ynode_is_null(L->root)) {
		const struct ibemu_loc *loc = L->root ? &L->root->loc : &L->end;

		return ibemu_diag_error(L->d, loc,
					"empty document, expected a mapping of "
					"%s",
					top_keys_text);
	}
	if (L->root->kind != IBEMU__Y_MAP)
		return ibemu_diag_error(
			L->d, &L->root->loc,
			"the top level is %s, expected a mapping "
			"of %s",
			ibemu__ynode_what(L->root), top_keys_text);
	ret = ibemu__yaml_map_parse(L->root, IBEMU__YS_TOP, v, L->d);
	if (ret)
		goto out;
	if (v[IBEMU__K_TOP_NAME].node &&
	    fabric_name_bad(L, &v[IBEMU__K_TOP_NAME]))
		ret = -EINVAL;
	else if (v[IBEMU__K_TOP_NAME].node)
		ret = ibemu_topo_set_name(L->t, v[IBEMU__K_TOP_NAME].s)
			      ? nomem(L)
			      : 0;
	else
		ret = default_name(L, file ? file : "");
	if (ret)
		goto out;
	/* Defaults first: generated and listed nodes and links inherit them. */
	if (v[IBEMU__K_TOP_DEFAULTS].node &&
	    v[IBEMU__K_TOP_DEFAULTS].node->kind == IBEMU__Y_MAP) {
		ret = apply_defaults(L, v[IBEMU__K_TOP_DEFAULTS].node);
		if (ret)
			goto out;
	}
	if (v[IBEMU__K_TOP_CC].node &&
	    v[IBEMU__K_TOP_CC].node->kind == IBEMU__Y_MAP) {
		ret = ibemu__yaml_cc_apply(L->t, v[IBEMU__K_TOP_CC].node, L->d);
		if (ret)
			goto out;
	}
	if (v[IBEMU__K_TOP_HCA_TUNING].node &&
	    v[IBEMU__K_TOP_HCA_TUNING].node->kind == IBEMU__Y_MAP) {
		ret = ibemu__yaml_tuning_apply(
			L->t, v[IBEMU__K_TOP_HCA_TUNING].node, L->d);
		if (ret)
			goto out;
	}
	if (v[IBEMU__K_TOP_GENERATE].node &&
	    v[IBEMU__K_TOP_GENERATE].node->kind == IBEMU__Y_MAP) {
		ret = run_generator(L, v[IBEMU__K_TOP_GENERATE].node);
		if (ret)
			goto out;
	}
	ret = add_nodes(L, v[IBEMU__K_TOP_SWITCHES].node, IBEMU_NODE_SWITCH);
	if (!ret)
		ret = add_nodes(L, v[IBEMU__K_TOP_HCAS].node, IBEMU_NODE_HCA);
	if (ret)
		goto out;
	if (!L->t->nnodes) {
		ret = ibemu_diag_error(L->d, &L->root->loc,
				       "a fabric without nodes, expected "
				       "switches, hcas or generate");
		goto out;
	}
	links = v[IBEMU__K_TOP_LINKS].node;
	for (i = 0; links && i < links->nkids; i++) {
		ret = add_link_item(L, links->kids[i]);
		if (ret)
			goto out;
	}
	ret = ibemu_topo_finalize(L->t, L->d);
	if (ret && L->nomem)
		ret = -ENOMEM;
	if (!ret && v[IBEMU__K_TOP_HCA_TUNING].node)
		warn_tuning_unused(L, &v[IBEMU__K_TOP_HCA_TUNING].key->loc);
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_TOP_COUNT);
	return ret;
}

int ibemu_yaml_load(const char *file, const char *data, size_t len,
		    struct ibemu_topo **out, struct ibemu_diag *d)
{
	struct loader L;
	int ret;

	memset(&L, 0, sizeof(L));
	L.d = d;
	L.data = (const unsigned char *)data;
	L.len = len;
	ret = ibemu_topo_create(&L.t);
	if (ret)
		return nomem(&L);
	L.t->source = strdup(file ? file : "<input>");
	if (!L.t->source) {
		ret = nomem(&L);
		goto err;
	}
	L.file = L.t->source;
	ret = build_tree(&L);
	if (!ret)
		ret = build_model(&L, file);
	tree_free(&L);
	if (ret)
		goto err;
	*out = L.t;
	return 0;

err:
	ibemu_topo_destroy(L.t);
	if (L.nomem)
		return -ENOMEM;
	/* A failure that left no message is still a failure to explain. */
	if (!d->error)
		ibemu_diag_error(d, NULL, "cannot load the topology");
	return -EINVAL;
}

int ibemu_yaml_load_file(const char *path, struct ibemu_topo **out,
			 struct ibemu_diag *d)
{
	struct ibemu_loc loc = {.file = path};
	size_t len;
	char *data;
	int ret;

	ret = ibemu_file_read(path, &data, &len);
	if (ret) {
		ibemu_diag_error(d, &loc, "cannot read: %s", strerror(-ret));
		return ret;
	}
	ret = ibemu_yaml_load(path, data, len, out, d);
	free(data);
	return ret;
}
