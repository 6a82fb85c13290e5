// SPDX-License-Identifier: MIT
/*
 * The topology YAML emitter: writes a model back in the format the loader
 * reads, one flow-style line per switch, HCA and link, and leaves out what
 * the loader would fill in by itself (defaults, GUIDs derived from names,
 * descriptions equal to names), so that the output reads like a hand-written
 * file and loads to the same fabric.
 */
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "yaml.h"
#include "yaml_keys.h"

/* Scalars other YAML readers would take for null, booleans or numbers. */
static int looks_special(const char *s)
{
	static const char *const words[] = {
		"null", "true", "false", "yes", "no",
		"on",	"off",	"y",	 "n",	"~",
	};
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(words); i++)
		if (!strcasecmp(s, words[i]))
			return 1;
	if (s[0] >= '0' && s[0] <= '9')
		return 1;
	if ((s[0] == '-' || s[0] == '+' || s[0] == '.') &&
	    ((s[1] >= '0' && s[1] <= '9') || s[1] == '.' || s[1] == 'i' ||
	     s[1] == 'I' || s[1] == 'n' || s[1] == 'N'))
		return 1;
	return 0;
}

/* A plain scalar is safe in flow style when it is a simple word. */
static int needs_quotes(const char *s)
{
	const char *p;

	if (!*s || looks_special(s))
		return 1;
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
	      *s == '_'))
		return 1;
	for (p = s; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.' || c == '+'))
			return 1;
	}
	return 0;
}

/*
 * Decodes the UTF-8 sequence at 's' into *cp. Returns its length, or 0 if it
 * is not valid UTF-8.
 */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	size_t n, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		*cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		*cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		*cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((n == 2 && *cp < 0x80) || (n == 3 && *cp < 0x800) ||
	    (n == 4 && *cp < 0x10000) || *cp > 0x10ffff ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Characters that may not appear as they are in a quoted scalar: those
 * outside YAML's printable set (YAML 1.2, 5.1: C0 and C1 controls, DEL,
 * U+FFFE, U+FFFF), the line breaks a reader would fold into spaces (NEL,
 * LS, PS, 5.4) and the byte order mark.
 */
static int needs_escape(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

/*
 * Writes 's' as a double-quoted YAML scalar: printable UTF-8 as it is, other
 * characters as escapes that read back to the same bytes. YAML text is
 * Unicode, so a byte that is not UTF-8 (a description cut in the middle of
 * a character, say) cannot be written at all: it becomes '?', which keeps
 * the length within the NodeDescription limit.
 */
static void put_quoted(struct ibemu_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	ibemu_buf_puts(b, "\"");
	while (*p) {
		n = utf8_decode(p, &cp);
		if (!n) {
			ibemu_buf_puts(b, "?");
			n = 1;
		} else if (cp == '"' || cp == '\\') {
			ibemu_buf_printf(b, "\\%c", (char)cp);
		} else if (needs_escape(cp)) {
			ibemu_buf_printf(b, cp <= 0xff ? "\\x%02x" : "\\u%04x",
					 (unsigned)cp);
		} else {
			ibemu_buf_append(b, p, n);
		}
		p += n;
	}
	ibemu_buf_puts(b, "\"");
}

static void put_string(struct ibemu_buf *b, const char *s)
{
	if (needs_quotes(s))
		put_quoted(b, s);
	else
		ibemu_buf_puts(b, s);
}

static void put_endpoint(struct ibemu_buf *b, const struct ibemu_topo *t,
			 uint32_t node, unsigned port)
{
	const char *name = t->nodes[node].name;

	if (needs_quotes(name))
		ibemu_buf_printf(b, "\"%s:%u\"", name, port);
	else
		ibemu_buf_printf(b, "%s:%u", name, port);
}

static void put_guid(struct ibemu_buf *b, const char *key, uint64_t guid)
{
	ibemu_buf_printf(b, ", %s: 0x%016" PRIx64, key, guid);
}

/* The port GUID finalize gives a port when none is set. */
static uint64_t derived_port_guid(const struct ibemu_topo_node *n,
				  unsigned port)
{
	return n->type == IBEMU_NODE_SWITCH ? n->guid : n->guid + port;
}

static void put_port_guids(struct ibemu_buf *b, const struct ibemu_topo_node *n)
{
	unsigned p;

	for (p = 1; p <= n->nports; p++)
		if (n->ports[p].guid &&
		    n->ports[p].guid != derived_port_guid(n, p))
			break;
	if (p > n->nports)
		return;
	ibemu_buf_puts(b, ", port_guids: [");
	for (p = 1; p <= n->nports; p++)
		ibemu_buf_printf(b, "%s0x%016" PRIx64, p > 1 ? ", " : "",
				 n->ports[p].guid ? n->ports[p].guid
						  : derived_port_guid(n, p));
	ibemu_buf_puts(b, "]");
}

static void put_node(struct ibemu_buf *b, const struct ibemu_topo *t,
		     const struct ibemu_topo_node *n)
{
	const struct ibemu_topo_defaults *def = &t->defaults;
	int sw = n->type == IBEMU_NODE_SWITCH;

	ibemu_buf_puts(b, "  - {name: ");
	put_string(b, n->name);
	if (sw || n->nports != 1)
		ibemu_buf_printf(b, ", ports: %u", n->nports);
	if (n->desc && strcmp(n->desc, n->name)) {
		ibemu_buf_puts(b, ", description: ");
		put_quoted(b, n->desc);
	}
	if (n->guid && n->guid != ibemu_topo_derive_guid(n->name))
		put_guid(b, "guid", n->guid);
	if (!sw)
		put_port_guids(b, n);
	if (n->sysimage_guid && n->sysimage_guid != n->guid)
		put_guid(b, "system_image_guid", n->sysimage_guid);
	if (n->vendor_id != IBEMU_OUI)
		ibemu_buf_printf(b, ", vendor_id: 0x%06" PRIx32, n->vendor_id);
	if (n->device_id != (sw ? IBEMU_DEVICE_SWITCH : IBEMU_DEVICE_HCA) &&
	    (sw || n->device_id != ibemu_hca_kind_device_id(ibemu_topo_hca_kind(
					   t, (uint32_t)(n - t->nodes)))))
		ibemu_buf_printf(b, ", device_id: 0x%04x", n->device_id);
	if (n->vls != def->vls)
		ibemu_buf_printf(b, ", vls: %u", n->vls);
	if (n->buffer_per_vl != def->buffer_per_vl) {
		ibemu_buf_puts(b, ", buffer_per_vl: ");
		ibemu__yaml_format_size(b, n->buffer_per_vl);
	}
	if (!sw && n->ip_loc.line)
		ibemu_buf_printf(b, ", ip: %u.%u.%u.%u", n->ip >> 24,
				 (n->ip >> 16) & 0xff, (n->ip >> 8) & 0xff,
				 n->ip & 0xff);
	if (sw && n->routing_latency_ps &&
	    n->routing_latency_ps != def->routing_latency_ps) {
		ibemu_buf_puts(b, ", routing_latency: ");
		ibemu__yaml_format_duration(b, n->routing_latency_ps);
	}
	if (!sw && n->hca_model != def->hca_model)
		ibemu_buf_printf(b, ", hca_model: %s",
				 ibemu_hca_kind_name(n->hca_model));
	ibemu_buf_puts(b, "}\n");
}

static void put_nodes(struct ibemu_buf *b, const struct ibemu_topo *t,
		      enum ibemu_node_type type)
{
	uint32_t i;
	int first = 1;

	for (i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].type != type)
			continue;
		if (first)
			ibemu_buf_puts(b, type == IBEMU_NODE_SWITCH
						  ? "switches:\n"
						  : "hcas:\n");
		first = 0;
		put_node(b, t, &t->nodes[i]);
	}
}

static void put_link(struct ibemu_buf *b, const struct ibemu_topo *t,
		     const struct ibemu_topo_link *l)
{
	const struct ibemu_topo_defaults *def = &t->defaults;
	uint64_t from_length =
		(uint64_t)l->length_mm * IBEMU_CABLE_PS_PER_M / 1000u;
	struct ibemu_buf extra;

	ibemu_buf_init(&extra);
	if (l->width != def->width)
		ibemu_buf_printf(&extra, ", width: %ux", l->width);
	if (l->speed != def->speed)
		ibemu_buf_printf(&extra, ", speed: %s",
				 ibemu_speed_name(l->speed));
	if (l->latency_ps == from_length) {
		if (l->length_mm != def->cable_length_mm) {
			ibemu_buf_puts(&extra, ", cable_length: ");
			ibemu__yaml_format_length(&extra, l->length_mm);
		}
	} else {
		/* A latency of its own: the length no longer matters. */
		ibemu_buf_puts(&extra, ", latency: ");
		ibemu__yaml_format_duration(&extra, l->latency_ps);
	}
	if (extra.err)
		b->err = extra.err;
	if (!extra.len) {
		ibemu_buf_puts(b, "  - [");
		put_endpoint(b, t, l->node[0], l->port[0]);
		ibemu_buf_puts(b, ", ");
		put_endpoint(b, t, l->node[1], l->port[1]);
		ibemu_buf_puts(b, "]\n");
	} else {
		ibemu_buf_puts(b, "  - {a: ");
		put_endpoint(b, t, l->node[0], l->port[0]);
		ibemu_buf_puts(b, ", b: ");
		put_endpoint(b, t, l->node[1], l->port[1]);
		ibemu_buf_append(b, extra.data, extra.len);
		ibemu_buf_puts(b, "}\n");
	}
	ibemu_buf_fini(&extra);
}

void ibemu_yaml_emit(const struct ibemu_topo *t, struct ibemu_buf *out)
{
	const struct ibemu_topo_defaults *def = &t->defaults;
	uint32_t i;

	if (t->name) {
		ibemu_buf_puts(out, "name: ");
		put_string(out, t->name);
		ibemu_buf_puts(out, "\n");
	}
	ibemu_buf_printf(out,
			 "defaults:\n  mtu: %u\n  vls: %u\n  width: %ux\n"
			 "  speed: %s\n  cable_length: ",
			 def->mtu, def->vls, def->width,
			 ibemu_speed_name(def->speed));
	ibemu__yaml_format_length(out, def->cable_length_mm);
	ibemu_buf_puts(out, "\n  buffer_per_vl: ");
	ibemu__yaml_format_size(out, def->buffer_per_vl);
	ibemu_buf_puts(out, "\n");
	if (def->routing_latency_ps) {
		ibemu_buf_puts(out, "  routing_latency: ");
		ibemu__yaml_format_duration(out, def->routing_latency_ps);
		ibemu_buf_puts(out, "\n");
	} else {
		ibemu_buf_puts(out, "  # routing_latency: by speed, ");
		ibemu__yaml_format_duration(
			out, ibemu_routing_latency_default_ps(def->speed));
		ibemu_buf_printf(out, " for %s\n",
				 ibemu_speed_name(def->speed));
	}
	/* Written only when not the default (auto, the preset of the link
	 * speed), so that the file reads back the same. */
	if (def->hca_model != IBEMU_HCA_AUTO)
		ibemu_buf_printf(out, "  hca_model: %s\n",
				 ibemu_hca_kind_name(def->hca_model));
	ibemu__yaml_tuning_emit(t, out);
	ibemu__yaml_cc_emit(t, out);
	put_nodes(out, t, IBEMU_NODE_SWITCH);
	put_nodes(out, t, IBEMU_NODE_HCA);
	if (t->nlinks)
		ibemu_buf_puts(out, "links:\n");
	for (i = 0; i < t->nlinks; i++)
		put_link(out, t, &t->links[i]);
}
