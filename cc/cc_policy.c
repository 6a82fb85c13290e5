// SPDX-License-Identifier: MIT
/*
 * The congestion control policy: ibemu's default, and OpenSM's option
 * lines read and written. Each option is declared once in 'opts' (name,
 * kind, range, help): the parser, the writer and the comments of the file
 * written all come from it. Values are read as OpenSM reads them (strtoul
 * with base 0, TRUE for a boolean), but where OpenSM would truncate or
 * ignore a bad value silently, ibemu says where and what was expected.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_policy.h"
#include "file.h"

/*
 * ibemu's default policy, in one place to tune. OpenSM's defaults are all
 * zero with congestion_control FALSE: a CCT of no entries, CCTI_Timer 0,
 * no port that marks. That configures nothing (and, enabled, a CA that
 * can never throttle), so a fabric started without a word about CC would
 * show no CC at all. ibemu instead starts from a policy that works, the
 * kind the literature measured on real switches and CAs (Gran et al.,
 * "First experiences with congestion control in InfiniBand hardware",
 * IPDPS 2010; Pfister et al., "Solving hot spot contention using
 * InfiniBand architecture congestion control", 2005): every switch port
 * marks one eligible packet in two (Marking_Rate 1) while it is the root
 * of congestion past Threshold 10 (in ibemu's scale, 6/16 of a VL
 * buffer: about 1.5 packets of 4 KiB waiting), every SL of every CA
 * reacts, CCTI grows by 4 per BECN and a CCTI_Timer of 9 (9.216 us) walks
 * it back by one, and the CCT is a linear ramp of inter-packet delays 0,
 * 1, 2... packet times. Tuned on docs/congestion-control.md's incast and
 * congestion tree of the default fabric (bench/cc.py measures them): a
 * smaller increase or a longer timer lets the tree live longer, a larger
 * one leaves the hotspot idle.
 */
static const struct {
	int enable;
	uint32_t sw_control_map;
	uint8_t sw_threshold, sw_packet_size, sw_cs_threshold;
	struct ibemu_cc_entry sw_cs_return_delay;
	uint16_t sw_marking_rate;
	uint16_t ca_port_control, ca_control_map;
	struct ibemu_cc_ca_sl ca_sl; /* every SL */
	unsigned cct_len;
	struct ibemu_cc_entry cct_step; /* entry i is i times this */
} ibemu_default = {
	.enable = 1,
	.sw_control_map = 0x1f,
	.sw_threshold = 10,
	.sw_packet_size = 0,
	.sw_cs_threshold = 0,
	.sw_cs_return_delay = {0, 0},
	.sw_marking_rate = 1,
	.ca_port_control = 0, /* per QP */
	.ca_control_map = 0xffff,
	.ca_sl = {.ccti_timer = 9,
		  .ccti_increase = 4,
		  .trigger_threshold = 8,
		  .ccti_min = 0},
	.cct_len = 128,
	.cct_step = {.shift = 0, .multiplier = 1},
};

void ibemu_cc_policy_opensm(struct ibemu_cc_policy *p)
{
	memset(p, 0, sizeof(*p));
}

void ibemu_cc_policy_default(struct ibemu_cc_policy *p)
{
	unsigned i;

	ibemu_cc_policy_opensm(p);
	p->enable = ibemu_default.enable;
	p->sw.control_map = ibemu_default.sw_control_map;
	p->sw.threshold = ibemu_default.sw_threshold;
	p->sw.packet_size = ibemu_default.sw_packet_size;
	p->sw.cs_threshold = ibemu_default.sw_cs_threshold;
	p->sw.cs_return_delay = ibemu_default.sw_cs_return_delay;
	p->sw.marking_rate = ibemu_default.sw_marking_rate;
	p->ca.port_control = ibemu_default.ca_port_control;
	p->ca.control_map = ibemu_default.ca_control_map;
	for (i = 0; i < IBEMU_CC_POLICY_SLS; i++)
		p->ca.sl[i] = ibemu_default.ca_sl;
	p->cct_len = ibemu_default.cct_len;
	for (i = 0; i < p->cct_len; i++) {
		p->cct[i].shift = ibemu_default.cct_step.shift;
		p->cct[i].multiplier =
			(uint16_t)(i * ibemu_default.cct_step.multiplier);
	}
}

int ibemu_cc_policy_equal(const struct ibemu_cc_policy *a,
			  const struct ibemu_cc_policy *b)
{
	unsigned i;

	if (!a->enable != !b->enable || a->cc_key != b->cc_key ||
	    a->sw.control_map != b->sw.control_map ||
	    memcmp(a->sw.victim_mask, b->sw.victim_mask,
		   sizeof(a->sw.victim_mask)) ||
	    memcmp(a->sw.credit_mask, b->sw.credit_mask,
		   sizeof(a->sw.credit_mask)) ||
	    a->sw.threshold != b->sw.threshold ||
	    a->sw.packet_size != b->sw.packet_size ||
	    a->sw.cs_threshold != b->sw.cs_threshold ||
	    ibemu_cc_entry_bits(a->sw.cs_return_delay) !=
		    ibemu_cc_entry_bits(b->sw.cs_return_delay) ||
	    a->sw.marking_rate != b->sw.marking_rate ||
	    a->ca.port_control != b->ca.port_control ||
	    a->ca.control_map != b->ca.control_map || a->cct_len != b->cct_len)
		return 0;
	for (i = 0; i < IBEMU_CC_POLICY_SLS; i++)
		if (memcmp(&a->ca.sl[i], &b->ca.sl[i], sizeof(a->ca.sl[i])))
			return 0;
	for (i = 0; i < a->cct_len; i++)
		if (ibemu_cc_entry_bits(a->cct[i]) !=
		    ibemu_cc_entry_bits(b->cct[i]))
			return 0;
	return 1;
}

enum opt_kind {
	OPT_BOOL,
	OPT_UINT,  /* 'max' bounds it */
	OPT_MASK,  /* 256-bit hex number */
	OPT_ENTRY, /* shift:multiplier */
	OPT_SL,	   /* "SL VALUE", one field of ca.sl[SL] */
	OPT_CCT,   /* shift:multiplier,... */
};

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off;   /* of the field in struct ibemu_cc_policy */
	unsigned len; /* its bytes (OPT_UINT), or of the SL field */
	uint64_t max;
	const char *help;
};

#define OFF(f)	 offsetof(struct ibemu_cc_policy, f)
#define LEN(f)	 sizeof(((struct ibemu_cc_policy *)0)->f)
#define SLOFF(f) offsetof(struct ibemu_cc_ca_sl, f)
#define SLLEN(f) sizeof(((struct ibemu_cc_ca_sl *)0)->f)

static const struct opt opts[] = {
	{"congestion_control", OPT_BOOL, OFF(enable), 0, 1,
	 "Enable congestion control (IBA Annex A10): TRUE or FALSE"},
	{"cc_key", OPT_UINT, OFF(cc_key), LEN(cc_key), UINT64_MAX,
	 "CC_Key carried by every congestion control MAD"},
	{"cc_sw_cong_setting_control_map", OPT_UINT, OFF(sw.control_map),
	 LEN(sw.control_map), UINT32_MAX,
	 "Which fields of SwitchCongestionSetting are valid"},
	{"cc_sw_cong_setting_victim_mask", OPT_MASK, OFF(sw.victim_mask), 0, 0,
	 "Ports (bit N: port N) that mark packets even as victims of "
	 "congestion"},
	{"cc_sw_cong_setting_credit_mask", OPT_MASK, OFF(sw.credit_mask), 0, 0,
	 "Ports (bit N: port N) that mark when credits starve"},
	{"cc_sw_cong_setting_threshold", OPT_UINT, OFF(sw.threshold),
	 LEN(sw.threshold), 0xf,
	 "How eagerly a port marks: 0 never, 1 least .. 0xf most"},
	{"cc_sw_cong_setting_packet_size", OPT_UINT, OFF(sw.packet_size),
	 LEN(sw.packet_size), UINT8_MAX,
	 "Packets smaller than this many 64-byte credits are not marked"},
	{"cc_sw_cong_setting_credit_starvation_threshold", OPT_UINT,
	 OFF(sw.cs_threshold), LEN(sw.cs_threshold), 0xf,
	 "Credit starvation threshold"},
	{"cc_sw_cong_setting_credit_starvation_return_delay", OPT_ENTRY,
	 OFF(sw.cs_return_delay), 0, 0,
	 "Credit starvation return delay, "
	 "shift:multiplier"},
	{"cc_sw_cong_setting_marking_rate", OPT_UINT, OFF(sw.marking_rate),
	 LEN(sw.marking_rate), UINT16_MAX,
	 "Packets sent unmarked between two marked ones"},
	{"cc_ca_cong_setting_port_control", OPT_UINT, OFF(ca.port_control),
	 LEN(ca.port_control), UINT16_MAX,
	 "bit 0 = 0: per QP congestion control, 1: per SL/port"},
	{"cc_ca_cong_setting_control_map", OPT_UINT, OFF(ca.control_map),
	 LEN(ca.control_map), UINT16_MAX,
	 "The SLs (bit N: SL N) whose CA congestion setting is valid"},
	{"cc_ca_cong_setting_ccti_timer", OPT_SL, SLOFF(ccti_timer),
	 SLLEN(ccti_timer), UINT16_MAX,
	 "SL and CCTI_Timer: CCTI drops by 1 each time it expires "
	 "(1.024 us units)"},
	{"cc_ca_cong_setting_ccti_increase", OPT_SL, SLOFF(ccti_increase),
	 SLLEN(ccti_increase), UINT8_MAX,
	 "SL and how much a BECN adds to CCTI"},
	{"cc_ca_cong_setting_trigger_threshold", OPT_SL,
	 SLOFF(trigger_threshold), SLLEN(trigger_threshold), UINT8_MAX,
	 "SL and the CCTI at which the CA logs an event"},
	{"cc_ca_cong_setting_ccti_min", OPT_SL, SLOFF(ccti_min),
	 SLLEN(ccti_min), UINT8_MAX,
	 "SL and the least CCTI (a floor under the delay)"},
	{"cc_cct", OPT_CCT, OFF(cct), 0, 0,
	 "Congestion Control Table: shift:multiplier,shift:multiplier,..."},
};

static uint64_t field_get(const void *base, size_t off, unsigned len)
{
	const uint8_t *p = (const uint8_t *)base + off;

	switch (len) {
	case 1:
		return *p;
	case 2:
		return *(const uint16_t *)(const void *)p;
	case 4:
		return *(const uint32_t *)(const void *)p;
	default:
		return *(const uint64_t *)(const void *)p;
	}
}

static void field_set(void *base, size_t off, unsigned len, uint64_t v)
{
	uint8_t *p = (uint8_t *)base + off;

	switch (len) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)(void *)p = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)(void *)p = (uint32_t)v;
		break;
	default:
		*(uint64_t *)(void *)p = v;
	}
}

/* A whole unsigned number (base 0, as OpenSM's strtoul) up to 'max'. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int ibemu_cc_entry_parse(const char *s, struct ibemu_cc_entry *e)
{
	const char *colon = strchr(s, ':');
	char shift[24];
	uint64_t sh, mul;
	int ret;

	if (!colon || (size_t)(colon - s) >= sizeof(shift))
		return -EINVAL;
	memcpy(shift, s, (size_t)(colon - s));
	shift[colon - s] = '\0';
	ret = parse_uint(shift, 3, &sh);
	if (!ret)
		ret = parse_uint(colon + 1, 0x3fff, &mul);
	if (ret)
		return ret;
	e->shift = (uint8_t)sh;
	e->multiplier = (uint16_t)mul;
	return 0;
}

/* A 256-bit number in hex (0x optional), most significant digit first. */
static int parse_mask(const char *s, uint8_t *mask)
{
	size_t n, i;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strlen(s);
	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
	while (n > 1 && *s == '0')
		s++, n--;
	if (n > 2 * IBEMU_CC_POLICY_MASK_LEN)
		return -ERANGE;
	memset(mask, 0, IBEMU_CC_POLICY_MASK_LEN);
	for (i = 0; i < n; i++) {
		char c = s[n - 1 - i];
		unsigned d = isdigit((unsigned char)c)
				     ? (unsigned)(c - '0')
				     : (unsigned)(tolower((unsigned char)c) -
						  'a' + 10);

		mask[IBEMU_CC_POLICY_MASK_LEN - 1 - i / 2] |=
			(uint8_t)(d << (i % 2 * 4));
	}
	return 0;
}

static int parse_cct(const char *s, struct ibemu_cc_policy *p,
		     const struct ibemu_loc *loc, struct ibemu_diag *d,
		     const char *name)
{
	struct ibemu_cc_entry e[IBEMU_CC_POLICY_CCT_MAX];
	char item[48];
	unsigned n = 0;
	size_t len;

	/* OpenSM's "(null)": no table (CCTI_Limit 0). */
	if (!strcmp(s, "(null)")) {
		p->cct_len = 0;
		return 0;
	}
	while (*s) {
		len = strcspn(s, ",");
		if (n == IBEMU_CC_POLICY_CCT_MAX)
			return ibemu_diag_error(
				d, loc,
				"%s has more than %u entries, expected at "
				"most %u (OpenSM's limit, OSM_CCT_ENTRY_MAX)",
				name, IBEMU_CC_POLICY_CCT_MAX,
				IBEMU_CC_POLICY_CCT_MAX);
		if (len >= sizeof(item))
			len = sizeof(item) - 1;
		memcpy(item, s, len);
		item[len] = '\0';
		if (ibemu_cc_entry_parse(item, &e[n]))
			return ibemu_diag_error(
				d, loc,
				"%s entry %u is '%s', expected "
				"shift:multiplier (shift 0..3, multiplier "
				"0..16383)",
				name, n, item);
		n++;
		s += strcspn(s, ",");
		if (*s == ',')
			s++;
	}
	memcpy(p->cct, e, n * sizeof(e[0]));
	p->cct_len = n;
	return 0;
}

/* Applies 'val' (trimmed) to option 'o'. */
static int apply(struct ibemu_cc_policy *p, const struct opt *o,
		 const char *val, const struct ibemu_loc *loc,
		 struct ibemu_diag *d)
{
	uint64_t v, sl;
	char *space;
	int ret;

	if (!*val)
		return ibemu_diag_error(d, loc, "%s has no value, expected: %s",
					o->name, o->help);
	switch (o->kind) {
	case OPT_BOOL:
		if (!strcmp(val, "TRUE") || !strcmp(val, "FALSE")) {
			p->enable = !strcmp(val, "TRUE");
			return 0;
		}
		return ibemu_diag_error(d, loc,
					"%s is '%s', expected TRUE or FALSE",
					o->name, val);
	case OPT_UINT:
		ret = parse_uint(val, o->max, &v);
		if (ret)
			return ibemu_diag_error(
				d, loc,
				"%s is '%s', expected an integer 0..0x%" PRIx64,
				o->name, val, o->max);
		field_set(p, o->off, o->len, v);
		return 0;
	case OPT_MASK:
		if (parse_mask(val, (uint8_t *)p + o->off))
			return ibemu_diag_error(
				d, loc,
				"%s is '%s', expected a 256-bit hex number "
				"(bit N: port N)",
				o->name, val);
		return 0;
	case OPT_ENTRY:
		if (ibemu_cc_entry_parse(
			    val,
			    (struct ibemu_cc_entry *)(void *)((uint8_t *)p +
							      o->off)))
			return ibemu_diag_error(
				d, loc,
				"%s is '%s', expected shift:multiplier "
				"(shift 0..3, multiplier 0..16383)",
				o->name, val);
		return 0;
	case OPT_SL:
		space = strpbrk(val, " \t");
		if (!space)
			return ibemu_diag_error(d, loc,
						"%s is '%s', expected an SL "
						"and a value",
						o->name, val);
		*space = '\0';
		ret = parse_uint(val, IBEMU_CC_POLICY_SLS - 1, &sl);
		val = space + 1 + strspn(space + 1, " \t");
		if (!ret)
			ret = parse_uint(val, o->max, &v);
		if (ret)
			return ibemu_diag_error(
				d, loc,
				"%s: bad SL or value, expected an SL 0..15 "
				"and an integer 0..%" PRIu64,
				o->name, o->max);
		field_set(&p->ca.sl[sl], o->off, o->len, v);
		return 0;
	case OPT_CCT:
		return parse_cct(val, p, loc, d, o->name);
	}
	return -EINVAL;
}

int ibemu_cc_policy_parse_line(struct ibemu_cc_policy *p, const char *line,
			       const struct ibemu_loc *loc,
			       struct ibemu_diag *d)
{
	char buf[4096];
	struct ibemu_cc_policy np;
	struct ibemu_loc at;
	char *key, *val, *end;
	size_t i, klen;
	int ret;

	/* As OpenSM: '#' starts a comment anywhere on the line. */
	snprintf(buf, sizeof(buf), "%s", line);
	buf[strcspn(buf, "#\n")] = '\0';
	key = buf + strspn(buf, " \t");
	klen = strcspn(key, " \t");
	if (!klen)
		return 1;
	val = key + klen;
	if (*val)
		*val++ = '\0';
	val += strspn(val, " \t");
	for (end = val + strlen(val);
	     end > val && isspace((unsigned char)end[-1]);)
		*--end = '\0';
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (strcmp(opts[i].name, key))
			continue;
		at = *loc;
		at.col = (unsigned)(val - buf) + 1;
		np = *p;
		ret = apply(&np, &opts[i], val, &at, d);
		if (!ret)
			*p = np;
		return ret;
	}
	return 1;
}

int ibemu_cc_policy_load(struct ibemu_cc_policy *p, const char *path,
			 struct ibemu_diag *d)
{
	struct ibemu_loc loc = {.file = path, .line = 1, .col = 1};
	char *data, *line, *next;
	size_t len;
	int ret;

	ret = ibemu_file_read(path, &data, &len);
	if (ret) {
		ibemu_diag_error(d, &loc, "cannot read: %s", strerror(-ret));
		return ret;
	}
	ibemu_cc_policy_opensm(p);
	for (line = data; line; line = next, loc.line++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ret = ibemu_cc_policy_parse_line(p, line, &loc, d);
		if (ret < 0)
			break;
		ret = 0;
	}
	free(data);
	return ret;
}

static void write_opt(const struct ibemu_cc_policy *p, const struct opt *o,
		      struct ibemu_buf *b)
{
	const uint8_t *m;
	unsigned i;

	ibemu_buf_printf(b, "# %s\n", o->help);
	switch (o->kind) {
	case OPT_BOOL:
		ibemu_buf_printf(b, "%s %s\n\n", o->name,
				 p->enable ? "TRUE" : "FALSE");
		break;
	case OPT_UINT:
		ibemu_buf_printf(b, "%s 0x%" PRIx64 "\n\n", o->name,
				 field_get(p, o->off, o->len));
		break;
	case OPT_MASK:
		/* Every digit, as OpenSM writes it. */
		m = (const uint8_t *)p + o->off;
		ibemu_buf_printf(b, "%s 0x", o->name);
		for (i = 0; i < IBEMU_CC_POLICY_MASK_LEN; i++)
			ibemu_buf_printf(b, "%02X", m[i]);
		ibemu_buf_puts(b, "\n\n");
		break;
	case OPT_ENTRY:
		ibemu_buf_printf(b, "%s %u:%u\n\n", o->name,
				 p->sw.cs_return_delay.shift,
				 p->sw.cs_return_delay.multiplier);
		break;
	case OPT_SL:
		for (i = 0; i < IBEMU_CC_POLICY_SLS; i++)
			ibemu_buf_printf(
				b, "%s %u %" PRIu64 "\n", o->name, i,
				field_get(&p->ca.sl[i], o->off, o->len));
		ibemu_buf_puts(b, "\n");
		break;
	case OPT_CCT:
		ibemu_buf_printf(b, "%s ", o->name);
		if (!p->cct_len)
			ibemu_buf_puts(b, "(null)");
		for (i = 0; i < p->cct_len; i++)
			ibemu_buf_printf(b, "%s%u:%u", i ? "," : "",
					 p->cct[i].shift, p->cct[i].multiplier);
		ibemu_buf_puts(b, "\n");
		break;
	}
}

void ibemu_cc_policy_write(const struct ibemu_cc_policy *p, struct ibemu_buf *b)
{
	size_t i;

	ibemu_buf_puts(b, "# Congestion control (IBA Annex A10) in OpenSM's "
			  "option syntax:\n# give it to ibemu-sm "
			  "(--cc-config) or to OpenSM (-F).\n\n");
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		write_opt(p, &opts[i], b);
}
