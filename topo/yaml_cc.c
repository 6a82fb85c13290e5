// SPDX-License-Identifier: MIT
/*
 * The congestion_control: section of the topology YAML, read into and
 * written from the fabric's CC policy (cc/cc_policy.h). A key left out
 * keeps ibemu's default; the CA's four values apply to every SL, and
 * 'sls:' overrides them for one SL. The writer gives only what differs
 * from the default, so a file without the section round-trips without it.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "yaml_keys.h"

static struct ibemu_cc_entry entry_of(uint64_t bits)
{
	return (struct ibemu_cc_entry){.shift = (uint8_t)(bits >> 14),
				       .multiplier = (uint16_t)(bits & 0x3fff)};
}

static int apply_switch(struct ibemu_cc_policy *p,
			const struct ibemu__ynode *map, struct ibemu_diag *d)
{
	struct ibemu__yaml_val v[IBEMU__K_CCSW_COUNT] = {0};
	int ret;

	ret = ibemu__yaml_map_parse(map, IBEMU__YS_CC_SWITCH, v, d);
	if (ret)
		goto out;
	if (v[IBEMU__K_CCSW_CONTROL_MAP].node)
		p->sw.control_map = (uint32_t)v[IBEMU__K_CCSW_CONTROL_MAP].u;
	if (v[IBEMU__K_CCSW_THRESHOLD].node)
		p->sw.threshold = (uint8_t)v[IBEMU__K_CCSW_THRESHOLD].u;
	if (v[IBEMU__K_CCSW_MARKING_RATE].node)
		p->sw.marking_rate = (uint16_t)v[IBEMU__K_CCSW_MARKING_RATE].u;
	if (v[IBEMU__K_CCSW_PACKET_SIZE].node)
		p->sw.packet_size = (uint8_t)v[IBEMU__K_CCSW_PACKET_SIZE].u;
	if (v[IBEMU__K_CCSW_VICTIM_MASK].node)
		memcpy(p->sw.victim_mask, v[IBEMU__K_CCSW_VICTIM_MASK].mask,
		       sizeof(p->sw.victim_mask));
	if (v[IBEMU__K_CCSW_CREDIT_MASK].node)
		memcpy(p->sw.credit_mask, v[IBEMU__K_CCSW_CREDIT_MASK].mask,
		       sizeof(p->sw.credit_mask));
	if (v[IBEMU__K_CCSW_CS_THRESHOLD].node)
		p->sw.cs_threshold = (uint8_t)v[IBEMU__K_CCSW_CS_THRESHOLD].u;
	if (v[IBEMU__K_CCSW_CS_RETURN_DELAY].node)
		p->sw.cs_return_delay =
			entry_of(v[IBEMU__K_CCSW_CS_RETURN_DELAY].u);
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_CCSW_COUNT);
	return ret;
}

/* Where each SL's ccti_min was given, checked against the table once it
 * is known (cct: may come after ca:); NULL where the default stands. */
struct min_at {
	const struct ibemu__ynode *node[IBEMU_CC_POLICY_SLS];
};

/* The four values given in 'v' (indices shared by ca: and an SL). */
static void apply_sl(struct ibemu_cc_ca_sl *sl, const struct ibemu__yaml_val *v,
		     const struct ibemu__ynode **min_at)
{
	if (v[IBEMU__K_CCCA_CCTI_MIN].node)
		*min_at = v[IBEMU__K_CCCA_CCTI_MIN].node;
	if (v[IBEMU__K_CCCA_CCTI_TIMER].node)
		sl->ccti_timer = (uint16_t)v[IBEMU__K_CCCA_CCTI_TIMER].u;
	if (v[IBEMU__K_CCCA_CCTI_INCREASE].node)
		sl->ccti_increase = (uint8_t)v[IBEMU__K_CCCA_CCTI_INCREASE].u;
	if (v[IBEMU__K_CCCA_TRIGGER_THRESHOLD].node)
		sl->trigger_threshold =
			(uint8_t)v[IBEMU__K_CCCA_TRIGGER_THRESHOLD].u;
	if (v[IBEMU__K_CCCA_CCTI_MIN].node)
		sl->ccti_min = (uint8_t)v[IBEMU__K_CCCA_CCTI_MIN].u;
}

static int apply_sls(struct ibemu_cc_policy *p, const struct ibemu__ynode *seq,
		     struct min_at *min, struct ibemu_diag *d)
{
	const struct ibemu__ynode *sl_at[IBEMU_CC_POLICY_SLS] = {0};
	struct ibemu__yaml_val v[IBEMU__K_CCCA_COUNT] = {0};
	const struct ibemu__ynode *at;
	unsigned sl;
	size_t i;
	int ret = 0;

	for (i = 0; seq && i < seq->nkids && !ret; i++) {
		const struct ibemu__ynode *item = seq->kids[i];

		if (item->kind != IBEMU__Y_MAP)
			return ibemu_diag_error(
				d, &item->loc,
				"an SL override is %s, expected a mapping "
				"such as {sl: 3, ccti_timer: 10}",
				ibemu__ynode_what(item));
		ret = ibemu__yaml_map_parse(item, IBEMU__YS_CC_SL, v, d);
		sl = (unsigned)v[IBEMU__K_CCCA_SL].u;
		at = v[IBEMU__K_CCCA_SL].node;
		/* Two overrides of one SL: the second would win silently. */
		if (!ret && sl_at[sl])
			ret = ibemu_diag_error(d, &at->loc,
					       "SL %u is overridden twice in "
					       "sls (first at %u:%u)",
					       sl, sl_at[sl]->loc.line,
					       sl_at[sl]->loc.col);
		if (!ret) {
			sl_at[sl] = at;
			apply_sl(&p->ca.sl[sl], v, &min->node[sl]);
		}
		ibemu__yaml_vals_fini(v, IBEMU__K_CCCA_COUNT);
	}
	return ret;
}

static int apply_ca(struct ibemu_cc_policy *p, const struct ibemu__ynode *map,
		    struct min_at *min, struct ibemu_diag *d)
{
	/* Zeroed whole: the CA's table is shorter than the index space. */
	struct ibemu__yaml_val v[IBEMU__K_CCCA_COUNT] = {0};
	const struct ibemu__yaml_val *c;
	unsigned sl;
	int ret;

	ret = ibemu__yaml_map_parse(map, IBEMU__YS_CC_CA, v, d);
	if (ret)
		goto out;
	c = &v[IBEMU__K_CCCA_CONTROL];
	if (c->node) {
		/* A10.4.3.8 Port_Control bit 0: 0 per QP, 1 per SL. */
		if (strcmp(c->s, "qp") && strcmp(c->s, "sl")) {
			ret = ibemu_diag_error(d, &c->node->loc,
					       "bad control '%s', expected qp "
					       "or sl",
					       c->s);
			goto out;
		}
		p->ca.port_control = !strcmp(c->s, "sl");
	}
	if (v[IBEMU__K_CCCA_CONTROL_MAP].node)
		p->ca.control_map = (uint16_t)v[IBEMU__K_CCCA_CONTROL_MAP].u;
	for (sl = 0; sl < IBEMU_CC_POLICY_SLS; sl++)
		apply_sl(&p->ca.sl[sl], v, &min->node[sl]);
	ret = apply_sls(p, v[IBEMU__K_CCCA_SLS].node, min, d);
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_CCCA_COUNT);
	return ret;
}

static int apply_cct(struct ibemu_cc_policy *p,
		     const struct ibemu__yaml_val *cct, struct ibemu_diag *d)
{
	struct ibemu__yaml_val v[IBEMU__K_CCT_COUNT] = {0};
	struct ibemu_cc_entry step = {0, 1};
	unsigned i;
	int ret;

	if (cct->node->kind == IBEMU__Y_SEQ) {
		p->cct_len = (unsigned)cct->u;
		for (i = 0; i < p->cct_len; i++)
			p->cct[i] = entry_of(cct->guids[i]);
		return 0;
	}
	ret = ibemu__yaml_map_parse(cct->node, IBEMU__YS_CC_CCT, v, d);
	if (ret)
		goto out;
	if (v[IBEMU__K_CCT_STEP].node)
		step = entry_of(v[IBEMU__K_CCT_STEP].u);
	p->cct_len = (unsigned)v[IBEMU__K_CCT_ENTRIES].u;
	if (p->cct_len &&
	    (uint64_t)(p->cct_len - 1) * step.multiplier > 0x3fff) {
		ret = ibemu_diag_error(
			d, &v[IBEMU__K_CCT_STEP].node->loc,
			"step %u:%u makes entry %u's multiplier %" PRIu64
			", expected at most 16383",
			step.shift, step.multiplier, p->cct_len - 1,
			(uint64_t)(p->cct_len - 1) * step.multiplier);
		goto out;
	}
	for (i = 0; i < p->cct_len; i++)
		p->cct[i] = (struct ibemu_cc_entry){
			.shift = step.shift,
			.multiplier = (uint16_t)(i * step.multiplier)};
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_CCT_COUNT);
	return ret;
}

/*
 * A10.4.3.8: CCTI_Min must not pass CCTI_Limit, the table's last index;
 * the CA would clamp the index to the limit and never throttle by the
 * floor asked for (an empty table has limit 0).
 */
static int check_ccti_min(const struct ibemu_cc_policy *p,
			  const struct min_at *min, struct ibemu_diag *d)
{
	unsigned sl, limit = p->cct_len ? p->cct_len - 1 : 0;

	for (sl = 0; sl < IBEMU_CC_POLICY_SLS; sl++)
		if (min->node[sl] && p->ca.sl[sl].ccti_min > limit)
			return ibemu_diag_error(
				d, &min->node[sl]->loc,
				"ccti_min %u of SL %u is past the congestion "
				"control table's last index %u (CCTI_Limit; "
				"the table has %u entries)",
				p->ca.sl[sl].ccti_min, sl, limit, p->cct_len);
	return 0;
}

int ibemu__yaml_cc_apply(struct ibemu_topo *t, const struct ibemu__ynode *map,
			 struct ibemu_diag *d)
{
	struct min_at min = {0};
	struct ibemu__yaml_val v[IBEMU__K_CC_COUNT] = {0};
	struct ibemu_cc_policy p = t->cc;
	int ret;

	ret = ibemu__yaml_map_parse(map, IBEMU__YS_CC, v, d);
	if (ret)
		goto out;
	if (v[IBEMU__K_CC_ENABLE].node)
		p.enable = (int)v[IBEMU__K_CC_ENABLE].u;
	if (v[IBEMU__K_CC_KEY].node)
		p.cc_key = v[IBEMU__K_CC_KEY].u;
	if (v[IBEMU__K_CC_SWITCH].node &&
	    v[IBEMU__K_CC_SWITCH].node->kind == IBEMU__Y_MAP)
		ret = apply_switch(&p, v[IBEMU__K_CC_SWITCH].node, d);
	if (!ret && v[IBEMU__K_CC_CA].node &&
	    v[IBEMU__K_CC_CA].node->kind == IBEMU__Y_MAP)
		ret = apply_ca(&p, v[IBEMU__K_CC_CA].node, &min, d);
	if (!ret && v[IBEMU__K_CC_CCT].node)
		ret = apply_cct(&p, &v[IBEMU__K_CC_CCT], d);
	if (!ret)
		ret = check_ccti_min(&p, &min, d);
	if (!ret)
		t->cc = p;
out:
	ibemu__yaml_vals_fini(v, IBEMU__K_CC_COUNT);
	return ret;
}

/* Appends "key: value" to a flow mapping under way in 'b'. */
static void put_kv(struct ibemu_buf *b, int *first, const char *key, int hex,
		   uint64_t v)
{
	ibemu_buf_printf(b, hex ? "%s%s: 0x%" PRIx64 : "%s%s: %" PRIu64,
			 *first ? "" : ", ", key, v);
	*first = 0;
}

static void put_ports(struct ibemu_buf *b, int *first, const char *key,
		      const uint8_t *mask)
{
	unsigned port, n = 0, all = 1;

	for (port = 0; port < 256; port++)
		all &= mask[31 - port / 8] >> (port % 8) & 1;
	ibemu_buf_printf(b, "%s%s: ", *first ? "" : ", ", key);
	*first = 0;
	if (all) {
		ibemu_buf_puts(b, "all");
		return;
	}
	ibemu_buf_puts(b, "[");
	for (port = 0; port < 256; port++)
		if (mask[31 - port / 8] >> (port % 8) & 1)
			ibemu_buf_printf(b, "%s%u", n++ ? ", " : "", port);
	ibemu_buf_puts(b, "]");
}

static void emit_switch(const struct ibemu_cc_policy *p,
			const struct ibemu_cc_policy *def, struct ibemu_buf *b)
{
	struct ibemu_buf m;
	int first = 1;

	ibemu_buf_init(&m);
	if (p->sw.control_map != def->sw.control_map)
		put_kv(&m, &first, "control_map", 1, p->sw.control_map);
	if (p->sw.threshold != def->sw.threshold)
		put_kv(&m, &first, "threshold", 0, p->sw.threshold);
	if (p->sw.marking_rate != def->sw.marking_rate)
		put_kv(&m, &first, "marking_rate", 0, p->sw.marking_rate);
	if (p->sw.packet_size != def->sw.packet_size)
		put_kv(&m, &first, "packet_size", 0, p->sw.packet_size);
	if (memcmp(p->sw.victim_mask, def->sw.victim_mask,
		   sizeof(p->sw.victim_mask)))
		put_ports(&m, &first, "victim_mask", p->sw.victim_mask);
	if (memcmp(p->sw.credit_mask, def->sw.credit_mask,
		   sizeof(p->sw.credit_mask)))
		put_ports(&m, &first, "credit_mask", p->sw.credit_mask);
	if (p->sw.cs_threshold != def->sw.cs_threshold)
		put_kv(&m, &first, "cs_threshold", 0, p->sw.cs_threshold);
	if (ibemu_cc_entry_bits(p->sw.cs_return_delay) !=
	    ibemu_cc_entry_bits(def->sw.cs_return_delay)) {
		ibemu_buf_printf(&m, "%scs_return_delay: \"%u:%u\"",
				 first ? "" : ", ", p->sw.cs_return_delay.shift,
				 p->sw.cs_return_delay.multiplier);
		first = 0;
	}
	if (!first)
		ibemu_buf_printf(b, "  switch: {%s}\n", m.data);
	ibemu_buf_fini(&m);
}

/* The values of 'sl' that differ from 'base', into a flow mapping. */
static void put_sl(struct ibemu_buf *m, int *first,
		   const struct ibemu_cc_ca_sl *sl,
		   const struct ibemu_cc_ca_sl *base)
{
	if (sl->ccti_timer != base->ccti_timer)
		put_kv(m, first, "ccti_timer", 0, sl->ccti_timer);
	if (sl->ccti_increase != base->ccti_increase)
		put_kv(m, first, "ccti_increase", 0, sl->ccti_increase);
	if (sl->trigger_threshold != base->trigger_threshold)
		put_kv(m, first, "trigger_threshold", 0, sl->trigger_threshold);
	if (sl->ccti_min != base->ccti_min)
		put_kv(m, first, "ccti_min", 0, sl->ccti_min);
}

static void emit_ca(const struct ibemu_cc_policy *p,
		    const struct ibemu_cc_policy *def, struct ibemu_buf *b)
{
	struct ibemu_buf m;
	unsigned sl, nsls = 0;
	int first = 1, one;

	ibemu_buf_init(&m);
	if (p->ca.port_control != def->ca.port_control) {
		ibemu_buf_printf(&m, "control: %s",
				 p->ca.port_control & 1 ? "sl" : "qp");
		first = 0;
	}
	if (p->ca.control_map != def->ca.control_map)
		put_kv(&m, &first, "control_map", 1, p->ca.control_map);
	/* SL 0's values for every SL, the others as overrides. */
	put_sl(&m, &first, &p->ca.sl[0], &def->ca.sl[0]);
	for (sl = 1; sl < IBEMU_CC_POLICY_SLS; sl++) {
		if (!memcmp(&p->ca.sl[sl], &p->ca.sl[0], sizeof(p->ca.sl[0])))
			continue;
		if (nsls++)
			ibemu_buf_puts(&m, ", ");
		else
			ibemu_buf_puts(&m, first ? "sls: [" : ", sls: [");
		ibemu_buf_printf(&m, "{sl: %u", sl);
		first = 0;
		one = 0;
		put_sl(&m, &one, &p->ca.sl[sl], &p->ca.sl[0]);
		ibemu_buf_puts(&m, "}");
	}
	if (nsls)
		ibemu_buf_puts(&m, "]");
	if (!first)
		ibemu_buf_printf(b, "  ca: {%s}\n", m.data);
	ibemu_buf_fini(&m);
}

static void emit_cct(const struct ibemu_cc_policy *p, struct ibemu_buf *b)
{
	struct ibemu_cc_entry step = {0, 0};
	unsigned i, ramp = 1;

	if (p->cct_len > 1)
		step = (struct ibemu_cc_entry){p->cct[1].shift,
					       p->cct[1].multiplier};
	for (i = 0; i < p->cct_len; i++)
		ramp &= p->cct[i].shift == step.shift &&
			p->cct[i].multiplier == i * step.multiplier;
	if (ramp && p->cct_len > 1) {
		ibemu_buf_printf(b, "  cct: {entries: %u, step: \"%u:%u\"}\n",
				 p->cct_len, step.shift, step.multiplier);
		return;
	}
	ibemu_buf_puts(b, "  cct: [");
	for (i = 0; i < p->cct_len; i++)
		ibemu_buf_printf(b, "%s\"%u:%u\"", i ? ", " : "",
				 p->cct[i].shift, p->cct[i].multiplier);
	ibemu_buf_puts(b, "]\n");
}

void ibemu__yaml_cc_emit(const struct ibemu_topo *t, struct ibemu_buf *b)
{
	const struct ibemu_cc_policy *p = &t->cc;
	struct ibemu_cc_policy def;
	unsigned i;
	int cct_same = 1;

	ibemu_cc_policy_default(&def);
	if (ibemu_cc_policy_equal(p, &def))
		return;
	ibemu_buf_puts(b, "congestion_control:\n");
	if (!p->enable != !def.enable)
		ibemu_buf_printf(b, "  enable: %s\n",
				 p->enable ? "true" : "false");
	if (p->cc_key != def.cc_key)
		ibemu_buf_printf(b, "  cc_key: 0x%" PRIx64 "\n", p->cc_key);
	emit_switch(p, &def, b);
	emit_ca(p, &def, b);
	cct_same = p->cct_len == def.cct_len;
	for (i = 0; cct_same && i < p->cct_len; i++)
		cct_same = ibemu_cc_entry_bits(p->cct[i]) ==
			   ibemu_cc_entry_bits(def.cct[i]);
	if (!cct_same)
		emit_cct(p, b);
}
