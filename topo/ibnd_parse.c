// SPDX-License-Identifier: MIT
/*
 * Reading of ibnetdiscover topology files, the format ibsim reads too. A
 * file is a list of node records: key lines (vendid=, caguid=...), a header
 * line ("Switch 36 \"id\"") and one line per cabled port ("[1] \"peer\"[3]").
 * This step only records what each line says; ibnd_build.c turns the
 * records into nodes and cables once all of them are read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibnd_int.h"

/* Numbers read from the file stop growing here: every limit is lower. */
#define NUM_CAP 100000u
/* Longest excerpt of the input quoted in a message. */
#define QUOTE_MAX 40

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

static int verr(struct ibemu__ibnd_parser *ps, unsigned line, unsigned col,
		const char *fmt, va_list ap) IBEMU_PRINTF(4, 0);

static int verr(struct ibemu__ibnd_parser *ps, unsigned line, unsigned col,
		const char *fmt, va_list ap)
{
	struct ibemu_loc loc = {ps->file, line, col};
	va_list ap2;
	char *msg;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!msg)
		return ibemu_diag_error(ps->d, &loc, "out of memory");
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	ibemu_diag_error(ps->d, &loc, "%s", msg);
	free(msg);
	return -EINVAL;
}

/* Reports an error at 'at', a place in the current line. */
static int perr(struct ibemu__ibnd_parser *ps, const char *at, const char *fmt,
		...) IBEMU_PRINTF(3, 4);

static int perr(struct ibemu__ibnd_parser *ps, const char *at, const char *fmt,
		...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = verr(ps, ps->lineno, (unsigned)(at - ps->line) + 1, fmt, ap);
	va_end(ap);
	return ret;
}

int ibemu__ibnd_perr_at(struct ibemu__ibnd_parser *ps, unsigned line,
			unsigned col, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = verr(ps, line, col, fmt, ap);
	va_end(ap);
	return ret;
}

int ibemu__ibnd_oom(struct ibemu__ibnd_parser *ps)
{
	ibemu_diag_error(ps->d, NULL, "out of memory");
	return -ENOMEM;
}

/* Length of an excerpt of [p, end) short enough to quote in a message. */
static int quote_len(const char *p, const char *end)
{
	return end - p > QUOTE_MAX ? QUOTE_MAX : (int)(end - p);
}

/* End of the token at 'p': up to a blank, a '#' or the end of the line. */
static const char *token_end(const char *p, const char *end)
{
	while (p < end && !is_ws(*p) && *p != '#')
		p++;
	return p;
}

static char *copy_slice(const char *s, const char *e)
{
	char *c = malloc((size_t)(e - s) + 1);

	if (c) {
		memcpy(c, s, (size_t)(e - s));
		c[e - s] = '\0';
	}
	return c;
}

/* Reads decimal digits at *pp; the value stops growing at NUM_CAP. */
static void read_dec(const char **pp, const char *end, unsigned *val)
{
	const char *p = *pp;
	unsigned v = 0;

	while (p < end && ibemu__ibnd_is_digit(*p)) {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (v > NUM_CAP)
			v = NUM_CAP;
	}
	*val = v;
	*pp = p;
}

const char *ibemu__ibnd_num_text(unsigned v, char buf[16])
{
	if (v >= NUM_CAP)
		snprintf(buf, 16, "%u+", NUM_CAP);
	else
		snprintf(buf, 16, "%u", v);
	return buf;
}

/*
 * Reads a 64-bit number at *pp: "0x" and hex digits, or hex digits alone if
 * 'hex', else decimal digits. Returns 0, -EINVAL (no digits) or -ERANGE.
 */
static int read_u64(const char **pp, const char *end, int hex, uint64_t *val)
{
	const char *p = *pp, *start;
	uint64_t v = 0;
	int over = 0;

	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		hex = 1;
	}
	start = p;
	for (; p < end; p++) {
		int h = hex ? ibemu_hex_digit(*p)
			    : (ibemu__ibnd_is_digit(*p) ? *p - '0' : -1);

		if (h < 0)
			break;
		if (hex) {
			over |= v >> 60 != 0;
			v = v << 4 | (unsigned)h;
		} else {
			over |= v > (UINT64_MAX - (unsigned)h) / 10;
			v = v * 10 + (unsigned)h;
		}
	}
	*pp = p;
	if (p == start)
		return -EINVAL;
	*val = v;
	return over ? -ERANGE : 0;
}

/* ibnetdiscover's "4xEDR" token: the active width and speed of a port. */
static void rate_token(const char *tok, const char *end, uint8_t *wmask,
		       uint16_t *smask)
{
	const char *p = tok;
	enum ibemu_speed s;
	unsigned lanes = 0;
	char name[8];
	size_t n;

	while (p < end && ibemu__ibnd_is_digit(*p) && lanes < 100)
		lanes = lanes * 10 + (unsigned)(*p++ - '0');
	if (p == tok || p >= end || (*p != 'x' && *p != 'X') ||
	    !ibemu_width_valid(lanes))
		return;
	p++;
	n = (size_t)(end - p);
	if (!n || n >= sizeof(name))
		return;
	memcpy(name, p, n);
	name[n] = '\0';
	if (ibemu_speed_parse(name, &s))
		return;
	*wmask = ibemu_width_to_ib(lanes);
	*smask = (uint16_t)(1u << s);
}

/*
 * Finds the last rate token in a port line's comment. Only what follows the
 * quoted peer description counts, so a description cannot fake one;
 * tokens that are not rates (lid numbers, "4x???") are only comment.
 */
static void comment_rate(const char *c, const char *end, uint8_t *wmask,
			 uint16_t *smask)
{
	const char *q = memrchr(c, '"', (size_t)(end - c));
	const char *p = q ? q + 1 : c;

	while (p < end) {
		const char *tok;

		p = skip_ws(p, end);
		tok = p;
		while (p < end && !is_ws(*p))
			p++;
		if (p > tok)
			rate_token(tok, p, wmask, smask);
	}
}

/* Does a word of an unquoted description start at 'p'? */
static int desc_stop(const char *s, const char *p, const char *end)
{
	static const char *const stops[] = {"enhanced port ", "base port ",
					    "lid ", "lmc "};
	unsigned i;

	if (p > s && !is_ws(p[-1]))
		return 0;
	for (i = 0; i < IBEMU_ARRAY_SIZE(stops); i++) {
		size_t n = strlen(stops[i]);

		if ((size_t)(end - p) >= n && !memcmp(p, stops[i], n))
			return 1;
	}
	return 0;
}

/*
 * The description in a header's comment: "# \"desc\" enhanced port 0 lid 1"
 * as ibnetdiscover writes it, up to the last quote so that a description
 * may hold quotes; or, as ibsim also accepts, unquoted up to "lid" and the
 * like. Sets *desc to NULL when there is none.
 */
static int header_desc(struct ibemu__ibnd_parser *ps, const char *c,
		       char **desc)
{
	const char *s, *e = ps->end;

	c = skip_ws(c, e);
	if (c < e && *c == '"') {
		const char *q = memrchr(c + 1, '"', (size_t)(e - c - 1));

		s = c + 1;
		if (q)
			e = q;
	} else {
		const char *p;

		s = c;
		for (p = s; p < e; p++) {
			if (desc_stop(s, p, e)) {
				e = p;
				break;
			}
		}
		while (e > s && is_ws(e[-1]))
			e--;
		if (e == s) {
			*desc = NULL;
			return 0;
		}
	}
	if (e - s > IBEMU_NODEDESC_MAX) {
		struct ibemu_loc loc = {ps->file, ps->lineno,
					(unsigned)(s - ps->line) + 1};

		ibemu_diag_warn(ps->d, &loc,
				"description longer than %u bytes, truncated",
				IBEMU_NODEDESC_MAX);
		e = s + IBEMU_NODEDESC_MAX;
	}
	*desc = copy_slice(s, e);
	return *desc ? 0 : ibemu__ibnd_oom(ps);
}

/*
 * Reads "\"id\"" at p. On success *s and *e bound the id and *after points
 * past the closing quote.
 */
static int quoted_id(struct ibemu__ibnd_parser *ps, const char *p,
		     const char *what, const char **s, const char **e,
		     const char **after)
{
	const char *q;

	if (p >= ps->end || *p != '"')
		return perr(ps, p, "expected %s in double quotes", what);
	q = memchr(p + 1, '"', (size_t)(ps->end - p - 1));
	if (!q)
		return perr(ps, p,
			    "missing the closing '\"' of %s on this line",
			    what);
	*s = p + 1;
	*e = q;
	*after = q + 1;
	return 0;
}

/* "Switch 36 \"id\" # \"desc\" ...", with 'p' just past the type word. */
static int parse_header(struct ibemu__ibnd_parser *ps,
			enum ibemu_node_type type, const char *word,
			const char *p)
{
	const int ti = type == IBEMU_NODE_SWITCH ? 0 : 1;
	const char *num, *ids = NULL, *ide = NULL, *q;
	struct ibemu__ibnd_rec *r;
	unsigned n, i;
	char nbuf[16];
	char *id;
	int ret;

	num = skip_ws(p, ps->end);
	if (num == p || num >= ps->end || !ibemu__ibnd_is_digit(*num))
		return perr(ps, num,
			    "expected the port count (1..%u) after '%.*s'",
			    IBEMU_MAX_PORTS, (int)(p - word), word);
	q = num;
	read_dec(&q, ps->end, &n);
	if (n < 1 || n > IBEMU_MAX_PORTS)
		return perr(ps, num,
			    "port count %s out of range: expected 1..%u",
			    ibemu__ibnd_num_text(n, nbuf), IBEMU_MAX_PORTS);
	if (type == IBEMU_NODE_HCA && n > IBEMU_HCA_MAX_PORTS)
		return perr(ps, num,
			    "port count %u out of range for an HCA: expected "
			    "1..%u (rdma-core's libibumad handles HCA ports "
			    "1..9; UMAD_CA_MAX_PORTS is 10)",
			    n, IBEMU_HCA_MAX_PORTS);
	p = skip_ws(q, ps->end);
	ret = quoted_id(ps, p, "the node id", &ids, &ide, &q);
	if (ret)
		return ret;
	p = skip_ws(q, ps->end);
	if (p < ps->end && *p != '#')
		return perr(ps, p,
			    "unexpected '%.*s' after the node id: expected a"
			    " '#' comment or the end of the line",
			    quote_len(p, token_end(p, ps->end)), p);

	id = copy_slice(ids, ide);
	if (!id)
		return ibemu__ibnd_oom(ps);
	i = ibemu_strmap_get(&ps->ids, id);
	if (i != IBEMU_NONE) {
		free(id);
		return perr(ps, ids - 1,
			    "duplicate node id \"%s\" (first declared on line"
			    " %u)",
			    ps->recs[i].id, ps->recs[i].line);
	}
	if (ibemu_array_grow((void **)&ps->recs, &ps->recs_cap, ps->nrecs + 1,
			     sizeof(*ps->recs))) {
		free(id);
		return ibemu__ibnd_oom(ps);
	}
	r = &ps->recs[ps->nrecs];
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->type = type;
	r->nports = n;
	r->line = ps->lineno;
	r->side_of = malloc((n + 1) * sizeof(*r->side_of));
	if (!r->side_of || ibemu_strmap_insert(&ps->ids, id, ps->nrecs)) {
		free(r->side_of);
		free(id);
		return ibemu__ibnd_oom(ps);
	}
	ps->nrecs++;
	for (i = 0; i <= n; i++)
		r->side_of[i] = IBEMU_NONE;
	if (p < ps->end) {
		ret = header_desc(ps, p + 1, &r->desc);
		if (ret)
			return ret;
	}

	if (ps->k.has_base[ti]) {
		r->guid = ps->k.base[ti];
		r->guid_line = ps->k.base_line[ti];
		ps->k.base[ti] += type == IBEMU_NODE_SWITCH ? 1 : n + 1;
	}
	if (type == IBEMU_NODE_SWITCH) {
		r->port0_guid = ps->k.port0_guid;
		ps->k.port0_guid = 0;
	}
	if (ps->k.has_sysguid)
		r->sysguid = ps->k.sysguid;
	ps->k.has_sysguid = 0;
	r->vendor_id = ps->k.vendid >= 0 ? (uint32_t)ps->k.vendid : IBEMU_OUI;
	if (ps->k.devid >= 0)
		r->device_id = (uint16_t)ps->k.devid;
	else
		r->device_id = type == IBEMU_NODE_SWITCH ? IBEMU_DEVICE_SWITCH
							 : IBEMU_DEVICE_HCA;
	r->wmask = ps->k.wmask;
	r->smask = ps->k.smask;
	ps->k.unused_line = 0;
	ps->cur = ps->nrecs - 1;
	return 0;
}

/* Reads "[N]" at p into *port; *after points past the ']'. */
static int bracket_port(struct ibemu__ibnd_parser *ps, const char *p,
			unsigned *port, const char **num, const char **after)
{
	const char *q = skip_ws(p + 1, ps->end), *e;

	*num = q;
	if (q >= ps->end || !ibemu__ibnd_is_digit(*q))
		return perr(ps, q, "expected a port number after '['");
	read_dec(&q, ps->end, port);
	e = skip_ws(q, ps->end);
	if (e >= ps->end || *e != ']')
		return perr(ps, q, "expected ']' after the port number");
	*after = e + 1;
	return 0;
}

/* Reads "(GUID)" at p, the GUID in hex as ibnetdiscover prints it. */
static int paren_guid(struct ibemu__ibnd_parser *ps, const char *p,
		      uint64_t *guid, const char **after)
{
	const char *q = skip_ws(p + 1, ps->end);
	const char *g = q, *e;
	int ret = read_u64(&q, ps->end, 1, guid);

	if (ret == -ERANGE)
		return perr(ps, g,
			    "GUID out of range: expected at most 64 bits");
	if (ret)
		return perr(ps, g, "expected a hexadecimal GUID after '('");
	e = skip_ws(q, ps->end);
	if (e >= ps->end || *e != ')')
		return perr(ps, q, "expected ')' after the GUID");
	*after = e + 1;
	return 0;
}

/* ibsim's port options: "w=N" (LinkWidthEnabled), "s=N" (LinkSpeedEnabled). */
static int port_option(struct ibemu__ibnd_parser *ps, const char *p,
		       const char *e, struct ibemu__ibnd_side *sd)
{
	const char *v = p + 2;
	uint64_t val = 0;
	int ret;

	if (e - p < 2 || (*p != 'w' && *p != 's') || p[1] != '=')
		return perr(ps, p,
			    "unexpected '%.*s' after the peer port: expected"
			    " w=N, s=N or a '#' comment",
			    quote_len(p, e), p);
	ret = read_u64(&v, e, 0, &val);
	if (*p == 'w' &&
	    (ret || v != e || val < 1 || val > IBEMU__IBND_WIDTH_ALL))
		return perr(ps, p,
			    "bad '%.*s': expected w=N with N a LinkWidthEnabled"
			    " mask 1..31 (1=1x 2=4x 4=8x 8=12x 16=2x)",
			    quote_len(p, e), p);
	if (*p == 's' && (ret || v != e || val < 1 || val > 7))
		return perr(ps, p,
			    "bad '%.*s': expected s=N with N a LinkSpeedEnabled"
			    " mask 1..7 (1=SDR 2=DDR 4=QDR)",
			    quote_len(p, e), p);
	if (*p == 'w')
		sd->wmask = (uint8_t)val;
	else
		sd->smask = (uint16_t)val;
	return 0;
}

/*
 * "[1](guid) \"peer\"[3](guid) w=N s=N # comment": one cabled port of the
 * current record. Both GUIDs and the options are optional; so is the peer
 * port, which is 1 if left out, as in ibsim.
 */
static int parse_port(struct ibemu__ibnd_parser *ps, const char *p)
{
	struct ibemu__ibnd_rec *r = &ps->recs[ps->cur];
	const char *num, *ids = NULL, *ide = NULL, *q, *pnum;
	uint8_t cw = 0;
	uint16_t cs = 0;
	struct ibemu__ibnd_side sd;
	char nbuf[16];
	int ret;

	memset(&sd, 0, sizeof(sd));
	sd.rec = ps->cur;
	sd.peer = IBEMU_NONE;
	sd.line = ps->lineno;
	ret = bracket_port(ps, p, &sd.port, &num, &q);
	if (ret)
		return ret;
	if (sd.port < 1 || sd.port > r->nports)
		return perr(
			ps, num, "port %s out of range: \"%s\" has ports 1..%u",
			ibemu__ibnd_num_text(sd.port, nbuf), r->id, r->nports);
	if (r->side_of[sd.port] != IBEMU_NONE)
		return perr(ps, p,
			    "port %u of \"%s\" listed twice (first on line %u)",
			    sd.port, r->id,
			    ps->sides[r->side_of[sd.port]].line);
	p = skip_ws(q, ps->end);
	if (p < ps->end && *p == '(') {
		if (r->type == IBEMU_NODE_SWITCH)
			return perr(ps, p,
				    "a switch port has no GUID of its own"
				    " (its ports share port 0's GUID, given"
				    " as switchguid=G(P)): remove '(...)'");
		ret = paren_guid(ps, p, &sd.guid, &q);
		if (ret)
			return ret;
		p = skip_ws(q, ps->end);
	}
	ret = quoted_id(ps, p, "the peer's node id", &ids, &ide, &q);
	if (ret)
		return ret;
	sd.peer_col = (unsigned)(p - ps->line) + 1;
	p = skip_ws(q, ps->end);
	sd.peer_port = 1;
	sd.pport_col = sd.peer_col;
	if (p < ps->end && *p == '[') {
		ret = bracket_port(ps, p, &sd.peer_port, &pnum, &q);
		if (ret)
			return ret;
		sd.pport_col = (unsigned)(pnum - ps->line) + 1;
		p = skip_ws(q, ps->end);
	}
	if (p < ps->end && *p == '(') {
		ret = paren_guid(ps, p, &sd.peer_guid, &q);
		if (ret)
			return ret;
		p = skip_ws(q, ps->end);
	}
	while (p < ps->end && *p != '#') {
		q = token_end(p, ps->end);
		ret = port_option(ps, p, q, &sd);
		if (ret)
			return ret;
		p = skip_ws(q, ps->end);
	}
	if (p < ps->end)
		comment_rate(p + 1, ps->end, &cw, &cs);
	/* Options say what ibsim enables; the comment what was active. */
	if (!sd.wmask)
		sd.wmask = cw ? cw : r->wmask;
	if (!sd.smask)
		sd.smask = cs ? cs : r->smask;

	if (ibemu_array_grow((void **)&ps->sides, &ps->sides_cap,
			     ps->nsides + 1, sizeof(*ps->sides)))
		return ibemu__ibnd_oom(ps);
	sd.peer_id = copy_slice(ids, ide);
	if (!sd.peer_id)
		return ibemu__ibnd_oom(ps);
	r->side_of[sd.port] = ps->nsides;
	ps->sides[ps->nsides++] = sd;
	return 0;
}

/* "key=value": GUIDs and ids of the next record, or ibsim's defaults. */
static int parse_key(struct ibemu__ibnd_parser *ps, const char *key,
		     const char *ke, const char *p)
{
	static const char *const keys[] = {
		"vendid", "devid", "sysimgguid", "switchguid",
		"caguid", "width", "speed",
	};
	const int klen = (int)(ke - key);
	const char *v = skip_ws(p, ps->end), *q = v;
	uint64_t val = 0, port0 = 0;
	unsigned k;
	int ret;

	for (k = 0; k < IBEMU_ARRAY_SIZE(keys); k++)
		if (strlen(keys[k]) == (size_t)klen &&
		    !memcmp(key, keys[k], (size_t)klen))
			break;
	if (k == IBEMU_ARRAY_SIZE(keys)) {
		if (klen == 6 && !memcmp(key, "rtguid", 6))
			return perr(ps, key,
				    "router nodes are not supported: expected"
				    " Switch, Ca or Hca records");
		if (klen == 6 && !memcmp(key, "module", 6))
			return perr(ps, key,
				    "'module' (ibsim node id prefixes) is not"
				    " supported");
		return perr(ps, key,
			    "unknown key '%.*s': expected vendid, devid,"
			    " sysimgguid, switchguid, caguid, width or speed",
			    quote_len(key, ke), key);
	}
	ret = read_u64(&q, ps->end, 0, &val);
	if (ret == -EINVAL)
		return perr(ps, v, "expected a number after '%s='", keys[k]);
	if (ret)
		return perr(ps, v, "%s out of range: expected at most 64 bits",
			    keys[k]);
	if (k == 3) {
		q = skip_ws(q, ps->end);
		if (q < ps->end && *q == '(') {
			ret = paren_guid(ps, q, &port0, &q);
			if (ret)
				return ret;
		}
	}
	p = skip_ws(q, ps->end);
	if (p < ps->end && *p != '#')
		return perr(ps, p,
			    "unexpected '%.*s' after the value of %s: expected"
			    " a '#' comment or the end of the line",
			    quote_len(p, token_end(p, ps->end)), p, keys[k]);
	switch (k) {
	case 0:
		if (val > 0xffffff)
			return perr(ps, v,
				    "vendid %.*s out of range: expected at most"
				    " 0xffffff (24 bits)",
				    quote_len(v, q), v);
		ps->k.vendid = (long)val;
		break;
	case 1:
		if (val > 0xffff)
			return perr(ps, v,
				    "devid %.*s out of range: expected at most"
				    " 0xffff (16 bits)",
				    quote_len(v, q), v);
		ps->k.devid = (long)val;
		break;
	case 2:
		ps->k.sysguid = val;
		ps->k.has_sysguid = 1;
		break;
	case 3:
	case 4:
		ps->k.base[k - 3] = val;
		ps->k.has_base[k - 3] = 1;
		ps->k.base_line[k - 3] = ps->lineno;
		if (k == 3)
			ps->k.port0_guid = port0;
		break;
	case 5:
		if (val < 1 || val > IBEMU__IBND_WIDTH_ALL)
			return perr(ps, v,
				    "width %.*s out of range: expected a"
				    " LinkWidthEnabled mask 1..31",
				    quote_len(v, q), v);
		ps->k.wmask = (uint8_t)val;
		break;
	default:
		if (val < 1 || val > 7)
			return perr(ps, v,
				    "speed %.*s out of range: expected a"
				    " LinkSpeedEnabled mask 1..7",
				    quote_len(v, q), v);
		ps->k.smask = (uint16_t)val;
		break;
	}
	if (!ps->k.unused_line)
		ps->k.unused_line = ps->lineno;
	return 0;
}

static int word_is(const char *w, const char *we, const char *s)
{
	return strlen(s) == (size_t)(we - w) && !memcmp(w, s, (size_t)(we - w));
}

static int parse_line(struct ibemu__ibnd_parser *ps)
{
	const char *p = skip_ws(ps->line, ps->end), *w, *we, *q;

	if (memchr(ps->line, '\0', (size_t)(ps->end - ps->line)))
		return perr(
			ps,
			memchr(ps->line, '\0', (size_t)(ps->end - ps->line)),
			"unexpected NUL byte: expected text");
	if (p == ps->end) {
		ps->cur = IBEMU_NONE; /* a blank line ends a record */
		return 0;
	}
	if (*p == '#')
		return 0;
	if (*p == '[') {
		if (ps->cur == IBEMU_NONE)
			return perr(ps, p,
				    "port line outside a node record: port"
				    " lines follow their Switch, Ca or Hca"
				    " line with no blank line between");
		return parse_port(ps, p);
	}
	ps->cur = IBEMU_NONE;
	if (*p == '@')
		return perr(ps, p,
			    "ibsim port aliases ('@') are not supported");
	w = p;
	we = w;
	while (we < ps->end && (ibemu__ibnd_is_alpha(*we) ||
				ibemu__ibnd_is_digit(*we) || *we == '_'))
		we++;
	q = skip_ws(we, ps->end);
	if (we > w && ibemu__ibnd_is_alpha(*w) && q < ps->end && *q == '=')
		return parse_key(ps, w, we, q + 1);
	if (word_is(w, we, "Switch"))
		return parse_header(ps, IBEMU_NODE_SWITCH, w, we);
	if (word_is(w, we, "Ca") || word_is(w, we, "Hca"))
		return parse_header(ps, IBEMU_NODE_HCA, w, we);
	if (word_is(w, we, "Rt"))
		return perr(ps, w,
			    "router nodes (Rt) are not supported: expected"
			    " Switch, Ca or Hca");
	if (word_is(w, we, "include"))
		return perr(ps, w,
			    "'include' is not supported: ibemu reads one"
			    " self-contained file, paste the included file"
			    " in its place");
	if (word_is(w, we, "do"))
		return perr(ps, w,
			    "'do' is not supported: ibsim console commands"
			    " cannot run while a topology is read");
	if (we > w && q > we && q < ps->end && ibemu__ibnd_is_digit(*q))
		return perr(ps, w,
			    "unknown node type '%.*s': expected Switch, Ca or"
			    " Hca",
			    quote_len(w, we), w);
	return perr(ps, p,
		    "unexpected '%.*s': expected a node record (Switch, Ca or"
		    " Hca), a port line ([N] \"peer\"[M]), a key=value line"
		    " or a '#' comment",
		    quote_len(p, token_end(p, ps->end)), p);
}

int ibemu__ibnd_parse(struct ibemu__ibnd_parser *ps, const char *data,
		      size_t len)
{
	const char *p = data, *dend = data + len;
	int ret;

	while (p < dend) {
		const char *nl = memchr(p, '\n', (size_t)(dend - p));

		ps->line = p;
		ps->end = nl ? nl : dend;
		if (ps->end > p && ps->end[-1] == '\r')
			ps->end--;
		if (ps->lineno == UINT32_MAX)
			return perr(ps, p, "too many lines");
		ps->lineno++;
		ret = parse_line(ps);
		if (ret)
			return ret;
		p = nl ? nl + 1 : dend;
	}
	if (!ps->nrecs) {
		struct ibemu_loc loc = {ps->file, 0, 0};

		return ibemu_diag_error(ps->d, &loc,
					"no node records: expected Switch, Ca"
					" or Hca lines");
	}
	if (ps->k.unused_line) {
		struct ibemu_loc loc = {ps->file, ps->k.unused_line, 1};

		ibemu_diag_warn(ps->d, &loc,
				"key lines after the last node record apply"
				" to no node");
	}
	return 0;
}

void ibemu__ibnd_parser_init(struct ibemu__ibnd_parser *ps, const char *file,
			     struct ibemu_diag *d)
{
	memset(ps, 0, sizeof(*ps));
	ps->file = file;
	ps->d = d;
	ps->cur = IBEMU_NONE;
	ps->k.vendid = -1;
	ps->k.devid = -1;
	ibemu_strmap_init(&ps->ids);
}

void ibemu__ibnd_parser_fini(struct ibemu__ibnd_parser *ps)
{
	uint32_t i;

	for (i = 0; i < ps->nrecs; i++) {
		free(ps->recs[i].id);
		free(ps->recs[i].desc);
		free(ps->recs[i].side_of);
	}
	for (i = 0; i < ps->nsides; i++)
		free(ps->sides[i].peer_id);
	free(ps->recs);
	free(ps->sides);
	ibemu_strmap_fini(&ps->ids);
}
