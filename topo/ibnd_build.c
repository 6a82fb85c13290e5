// SPDX-License-Identifier: MIT
/*
 * Import of ibnetdiscover topology files, second step: the records that
 * ibnd_parse.c read become nodes and cables. Cables are resolved only once
 * every record is read, because a peer may be declared further down and
 * most cables are listed from both ends, which must then agree.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "ibnd.h"
#include "ibnd_int.h"

/* Speeds as bits 1 << enum ibemu_speed; bits 0..2 are LinkSpeedEnabled's. */
#define SPEED_ALL ((1u << IBEMU_SPEED_COUNT) - 1)

/* Widest width in a LinkWidthEnabled mask, in lanes. */
static unsigned widest(unsigned mask)
{
	static const uint8_t order[] = {8, 4, 2, 16, 1}; /* 12x..1x */
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(order); i++)
		if (mask & order[i])
			return ibemu_width_from_ib(order[i]);
	return 0;
}

static enum ibemu_speed fastest(unsigned mask)
{
	unsigned s = IBEMU_SPEED_COUNT;

	while (s-- > 0)
		if (mask & (1u << s))
			return (enum ibemu_speed)s;
	return IBEMU_SPEED_SDR;
}

/* Writes "1x/4x" or "SDR/DDR" for a mask, for messages. */
static void mask_text(char *out, size_t size, unsigned mask, int speed)
{
	static const uint8_t widths[] = {1, 16, 2, 4, 8}; /* 1x..12x */
	size_t n = 0;
	unsigned i;

	out[0] = '\0';
	if (!mask) {
		snprintf(out, size, "any");
		return;
	}
	for (i = 0; speed && i < IBEMU_SPEED_COUNT; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(out + n, size - n, "%s%s",
					      n ? "/" : "",
					      ibemu_speed_name(i));
	for (i = 0; !speed && i < IBEMU_ARRAY_SIZE(widths); i++)
		if (mask & widths[i])
			n += (size_t)snprintf(out + n, size - n, "%s%ux",
					      n ? "/" : "",
					      ibemu_width_from_ib(widths[i]));
}

static int name_char(char c)
{
	return ibemu__ibnd_is_alpha(c) || ibemu__ibnd_is_digit(c) || c == '_' ||
	       c == '-' || c == '.' || c == '+';
}

/* Replaces the characters a name may not hold; never returns "". */
static void sanitize(const char *s, size_t len, char out[64])
{
	size_t i, n = 0;

	for (i = 0; i < len && s[i] && n < 63; i++)
		out[n++] = name_char(s[i]) ? s[i] : '_';
	out[n] = '\0';
	if (!n)
		snprintf(out, 64, "node");
}

/*
 * A name for a record whose id is not a valid name: the id made valid, with
 * "-2", "-3"... until it is used by no node and is nobody's id, so that
 * the ids that are valid names always keep them.
 */
static void free_name(const struct ibemu__ibnd_parser *ps,
		      const struct ibemu_topo *t, const char *id, char out[64])
{
	char base[64];
	unsigned k;

	sanitize(id, strlen(id), base);
	snprintf(out, 64, "%s", base);
	for (k = 2; ibemu_strmap_get(&ps->ids, out) != IBEMU_NONE ||
		    ibemu_topo_find(t, out) != IBEMU_NONE;
	     k++) {
		char suffix[16];
		int n = snprintf(suffix, sizeof(suffix), "-%u", k);

		snprintf(out, 64, "%.*s%s", 63 - n, base, suffix);
	}
}

/* The fabric is named after the file: base name, no extension. */
static int name_fabric(struct ibemu_topo *t, const char *file)
{
	const char *base = file ? strrchr(file, '/') : NULL, *dot;
	char name[64];

	base = base ? base + 1 : file ? file : "";
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		dot = base + strlen(base);
	if (dot == base)
		snprintf(name, sizeof(name), "fabric");
	else
		sanitize(base, (size_t)(dot - base), name);
	return ibemu_topo_set_name(t, name);
}

/* Records become nodes, in file order. */
static int add_nodes(struct ibemu__ibnd_parser *ps, struct ibemu_topo *t)
{
	uint32_t i, idx;

	for (i = 0; i < ps->nrecs; i++) {
		const struct ibemu__ibnd_rec *r = &ps->recs[i];
		int valid = ibemu_name_valid(r->id);
		struct ibemu_topo_node *n;
		char name[64], desc[IBEMU_NODEDESC_MAX + 1];

		if (valid)
			snprintf(name, sizeof(name), "%s", r->id);
		else
			free_name(ps, t, r->id, name);
		if (ibemu_topo_add_node(t, r->type, name, r->nports, &idx))
			return ibemu__ibnd_oom(ps);
		IBEMU_BUG_ON(idx != i);
		if (r->desc || !valid) {
			/* An id that had to change survives as description. */
			snprintf(desc, sizeof(desc), "%s",
				 r->desc ? r->desc : r->id);
			if (ibemu_topo_set_desc(t, idx, desc))
				return ibemu__ibnd_oom(ps);
		}
		n = &t->nodes[idx];
		n->guid = r->guid;
		n->sysimage_guid = r->sysguid;
		n->vendor_id = r->vendor_id;
		n->device_id = r->device_id;
		n->loc = (struct ibemu_loc){t->source, r->line, 1};
		if (r->guid_line)
			n->guid_loc =
				(struct ibemu_loc){t->source, r->guid_line, 1};
		if (r->port0_guid && r->port0_guid != r->guid)
			n->ports[0].guid = r->port0_guid;
	}
	for (i = 0; i < ps->nsides; i++) {
		const struct ibemu__ibnd_side *s = &ps->sides[i];

		if (s->guid)
			t->nodes[s->rec].ports[s->port].guid = s->guid;
	}
	return 0;
}

/* Finds every peer, in file order, so the first unknown one is reported. */
static int resolve_peers(struct ibemu__ibnd_parser *ps)
{
	uint32_t i;

	for (i = 0; i < ps->nsides; i++) {
		struct ibemu__ibnd_side *s = &ps->sides[i];
		const struct ibemu__ibnd_rec *pr;

		s->peer = ibemu_strmap_get(&ps->ids, s->peer_id);
		if (s->peer == IBEMU_NONE)
			return ibemu__ibnd_perr_at(
				ps, s->line, s->peer_col,
				"unknown peer \"%s\": no Switch, Ca or"
				" Hca record has this id",
				s->peer_id);
		pr = &ps->recs[s->peer];
		if (s->peer_port < 1 || s->peer_port > pr->nports) {
			char nbuf[16];

			return ibemu__ibnd_perr_at(
				ps, s->line, s->pport_col,
				"port %s out of range: \"%s\" has ports"
				" 1..%u",
				ibemu__ibnd_num_text(s->peer_port, nbuf),
				pr->id, pr->nports);
		}
		if (s->peer == s->rec && s->peer_port == s->port)
			return ibemu__ibnd_perr_at(
				ps, s->line, s->peer_col,
				"port %u of \"%s\" is cabled to itself",
				s->port, pr->id);
	}
	return 0;
}

/*
 * Width or speed of a cable from what its two ends enable: the widest
 * (fastest) both allow, as ibsim sets LinkWidthActive. A mask of 0 allows
 * everything; 'all' is everything.
 */
static int pick_rate(struct ibemu__ibnd_parser *ps,
		     const struct ibemu__ibnd_side *s,
		     const struct ibemu__ibnd_side *m, unsigned other_line,
		     unsigned a, unsigned b, unsigned all, int speed,
		     unsigned *mask)
{
	char ta[64], tb[64];

	*mask = (a ? a : all) & (b ? b : all);
	if (*mask || (!a && !b))
		return 0;
	mask_text(ta, sizeof(ta), a, speed);
	mask_text(tb, sizeof(tb), b, speed);
	return ibemu__ibnd_perr_at(
		ps, s->line, 1,
		"sides disagree on the %s of \"%s\"[%u] -- \"%s\"[%u]:"
		" %s on this line, %s on line %u",
		speed ? "speed" : "width", ps->recs[s->rec].id, s->port,
		ps->recs[s->peer].id, s->peer_port, ta, tb,
		m ? m->line : other_line);
}

static int cable(struct ibemu__ibnd_parser *ps, struct ibemu_topo *t,
		 uint32_t i)
{
	const struct ibemu__ibnd_side *s = &ps->sides[i];
	const struct ibemu__ibnd_rec *pr = &ps->recs[s->peer];
	uint32_t mi = pr->side_of[s->peer_port], link;
	const struct ibemu__ibnd_side *m =
		mi == IBEMU_NONE ? NULL : &ps->sides[mi];
	unsigned wmask, smask;
	struct ibemu_topo_link *l;
	int ret;

	if (m && (m->peer != s->rec || m->peer_port != s->port))
		return ibemu__ibnd_perr_at(
			ps, s->line, 1,
			"sides disagree: this line cables \"%s\"[%u] to"
			" \"%s\"[%u], but line %u cables \"%s\"[%u] to"
			" \"%s\"[%u]",
			ps->recs[s->rec].id, s->port, pr->id, s->peer_port,
			m->line, pr->id, s->peer_port, ps->recs[m->peer].id,
			m->peer_port);
	if (m && mi < i)
		return 0; /* connected when its other end was read */
	if (!m &&
	    t->nodes[s->peer].ports[s->peer_port].peer_node != IBEMU_NONE) {
		const struct ibemu_topo_port *pp =
			&t->nodes[s->peer].ports[s->peer_port];

		return ibemu__ibnd_perr_at(
			ps, s->line, s->peer_col,
			"\"%s\"[%u] is cabled twice: line %u cables it"
			" to \"%s\"[%u], this line to \"%s\"[%u]",
			pr->id, s->peer_port, t->links[pp->link].loc.line,
			ps->recs[pp->peer_node].id, pp->peer_port,
			ps->recs[s->rec].id, s->port);
	}
	ret = pick_rate(ps, s, m, pr->line, s->wmask, m ? m->wmask : pr->wmask,
			IBEMU__IBND_WIDTH_ALL, 0, &wmask);
	if (!ret)
		ret = pick_rate(ps, s, m, pr->line, s->smask,
				m ? m->smask : pr->smask, SPEED_ALL, 1, &smask);
	if (ret)
		return ret;
	ret = ibemu_topo_connect(t, s->rec, s->port, s->peer, s->peer_port,
				 &link);
	if (ret == -ENOMEM)
		return ibemu__ibnd_oom(ps);
	if (ret)
		return ibemu__ibnd_perr_at(
			ps, s->line, 1, "cannot cable \"%s\"[%u] to \"%s\"[%u]",
			ps->recs[s->rec].id, s->port, pr->id, s->peer_port);
	l = &t->links[link];
	l->loc = (struct ibemu_loc){t->source, s->line, 1};
	/* What neither end says comes from the fabric's defaults. */
	if (s->wmask || (m ? m->wmask : pr->wmask))
		l->width = (uint8_t)widest(wmask);
	if (s->smask || (m ? m->smask : pr->smask))
		l->speed = fastest(smask);
	return 0;
}

/*
 * The GUID in parentheses after a peer's port is that port's GUID (written
 * for CAs only): it fills in a port whose own line gave none and must agree
 * with one that did.
 */
static int peer_guids(struct ibemu__ibnd_parser *ps, struct ibemu_topo *t)
{
	uint32_t i;

	for (i = 0; i < ps->nsides; i++) {
		const struct ibemu__ibnd_side *s = &ps->sides[i];
		struct ibemu_topo_port *pp =
			&t->nodes[s->peer].ports[s->peer_port];
		uint32_t mi;

		if (!s->peer_guid || ps->recs[s->peer].type != IBEMU_NODE_HCA)
			continue;
		if (!pp->guid) {
			pp->guid = s->peer_guid;
			continue;
		}
		if (pp->guid == s->peer_guid)
			continue;
		mi = ps->recs[s->peer].side_of[s->peer_port];
		return ibemu__ibnd_perr_at(
			ps, s->line, s->peer_col,
			"sides disagree on the port GUID of \"%s\"[%u]:"
			" %" PRIx64 " on this line, %" PRIx64 " on line %u",
			ps->recs[s->peer].id, s->peer_port, s->peer_guid,
			pp->guid, mi == IBEMU_NONE ? 0 : ps->sides[mi].line);
	}
	return 0;
}

static int build(struct ibemu__ibnd_parser *ps, struct ibemu_topo *t)
{
	uint32_t i;
	int ret;

	if (ps->file) {
		t->source = strdup(ps->file);
		if (!t->source)
			return ibemu__ibnd_oom(ps);
	}
	if (name_fabric(t, ps->file))
		return ibemu__ibnd_oom(ps);
	ret = add_nodes(ps, t);
	if (!ret)
		ret = resolve_peers(ps);
	for (i = 0; !ret && i < ps->nsides; i++)
		ret = cable(ps, t, i);
	if (!ret)
		ret = peer_guids(ps, t);
	return ret;
}

int ibemu_ibnd_import(const char *file, const char *data, size_t len,
		      struct ibemu_topo **out, struct ibemu_diag *d)
{
	struct ibemu_topo *t = NULL;
	struct ibemu__ibnd_parser ps;
	int ret;

	ibemu__ibnd_parser_init(&ps, file, d);

	ret = ibemu__ibnd_parse(&ps, data, len);
	if (ret)
		goto err_parse;
	ret = ibemu_topo_create(&t);
	if (ret) {
		ret = ibemu__ibnd_oom(&ps);
		goto err_parse;
	}
	ret = build(&ps, t);
	if (ret)
		goto err_topo;
	ret = ibemu_topo_finalize(t, d);
	if (ret)
		goto err_topo;
	ibemu__ibnd_parser_fini(&ps);
	*out = t;
	return 0;

err_topo:
	ibemu_topo_destroy(t);
err_parse:
	ibemu__ibnd_parser_fini(&ps);
	return ret;
}

int ibemu_ibnd_import_file(const char *path, struct ibemu_topo **out,
			   struct ibemu_diag *d)
{
	struct ibemu_loc loc = {path, 0, 0};
	char *data;
	size_t len;
	int ret;

	ret = ibemu_file_read(path, &data, &len);
	if (ret) {
		ibemu_diag_error(d, &loc, "cannot read the file: %s",
				 strerror(-ret));
		return ret;
	}
	ret = ibemu_ibnd_import(path, data, len, out, d);
	free(data);
	return ret;
}
