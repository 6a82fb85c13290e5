// SPDX-License-Identifier: MIT
/*
 * The congestion control manager (IBA Annex A10), as OpenSM's: after a
 * heavy sweep it sets the policy (--cc-config, OpenSM's cc_* options)
 * into every switch and CA port by LID-routed GMPs of class CC, only where
 * a port does not hold it yet (new, or an earlier Set failed), and checks
 * each answer's status and echoed values. Every sweep it reads the
 * CongestionLog of each and counts the events, for sm.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "mad_cc.h"
#include "sm.h"

#define NODE_TYPE_SWITCH 2
#define CC_CLASS_VERSION 2 /* A10.4.1 */

int sm_cc_load(struct sm *sm)
{
	struct ibemu_diag d;
	int ret;

	if (!sm->cc_config)
		return 0;
	sm->cc = calloc(1, sizeof(*sm->cc));
	if (!sm->cc)
		return -ENOMEM;
	ibemu_diag_init(&d);
	ret = ibemu_cc_policy_load(sm->cc, sm->cc_config, &d);
	if (ret)
		fprintf(stderr, "ibemu-sm: %s\n", d.error);
	ibemu_diag_fini(&d);
	return ret ? -EINVAL : 0;
}

int sm_cc_open(struct sm *sm)
{
	long mask[16 / sizeof(long)] = {0};

	sm->cc_agent = -1;
	if (!sm->cc || !sm->cc->enable)
		return 0;
	/* No method: it only sends requests, and their answers come back. */
	sm->cc_agent = umad_register(sm->fd, IBEMU_MAD_CLASS_CC,
				     CC_CLASS_VERSION, 0, mask);
	return sm->cc_agent < 0 ? sm->cc_agent : 0;
}

void sm_cc_close(struct sm *sm)
{
	if (sm->cc_agent >= 0)
		umad_unregister(sm->fd, sm->cc_agent);
	sm->cc_agent = -1;
	free(sm->cc_ports);
	sm->cc_ports = NULL;
	sm->ncc_ports = 0;
	free(sm->cc);
	sm->cc = NULL;
}

static int enabled(const struct sm *sm)
{
	return sm->cc && sm->cc->enable && sm->cc_agent >= 0;
}

/* The CCT blocks of the policy: none gives one, CCTI_Limit 0 (OpenSM). */
static unsigned cct_blocks(const struct ibemu_cc_policy *p)
{
	return p->cct_len ? (p->cct_len - 1) / IBEMU_CC_TABLE_BLOCK + 1 : 1;
}

static int by_guid(const void *a, const void *b)
{
	const struct sm_cc_port *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/*
 * The switches and CA ports of this sweep, each keeping what it held
 * after the last one; a port not found now is forgotten, so if it comes
 * back it is new and configured anew (OpenSM's need_update).
 */
static int gather(struct sm *sm)
{
	size_t room = (size_t)sm->routes->max_lid + 1;
	struct sm_lid_port *ports = calloc(room, sizeof(*ports));
	struct sm_cc_port *all = calloc(room, sizeof(*all)), *old;
	uint32_t n, k;

	if (!ports || !all) {
		free(ports);
		free(all);
		return -ENOMEM;
	}
	k = sm_lid_ports(sm, ports);
	for (n = 0; n < k; n++)
		all[n] = (struct sm_cc_port){.guid = ports[n].guid,
					     .lid = ports[n].lid,
					     .is_switch = ports[n].is_switch};
	free(ports);
	qsort(all, k, sizeof(*all), by_guid);
	for (n = 0; n < k; n++) {
		old = sm->ncc_ports
			      ? bsearch(&all[n], sm->cc_ports, sm->ncc_ports,
					sizeof(*all), by_guid)
			      : NULL;
		/* The same port at another LID holds what it held. */
		if (old && old->is_switch == all[n].is_switch) {
			all[n].sw_set = old->sw_set;
			all[n].ca_set = old->ca_set;
			all[n].cct_set = old->cct_set;
			all[n].configured = old->configured;
		}
	}
	free(sm->cc_ports);
	sm->cc_ports = all;
	sm->ncc_ports = k;
	return 0;
}

/* A CC MAD's header and CC_Key (A10.4.1), its data zero. */
static void cc_mad(const struct sm *sm, uint8_t *mad, uint8_t method,
		   uint16_t attr, uint32_t mod)
{
	unsigned i;

	memset(mad, 0, IBEMU_MAD_LEN);
	ibemu_mad_set_base_version(mad, IBEMU_MAD_BASE_VERSION);
	ibemu_mad_set_mgmt_class(mad, IBEMU_MAD_CLASS_CC);
	ibemu_mad_set_class_version(mad, CC_CLASS_VERSION);
	ibemu_mad_set_method(mad, method);
	ibemu_mad_set_attr_id(mad, attr);
	ibemu_mad_set_attr_mod(mad, mod);
	for (i = 0; i < 8; i++)
		mad[IBEMU_CC_KEY_OFF + i] =
			(uint8_t)(sm->cc->cc_key >> (56 - 8 * i));
}

static void switch_setting(const struct ibemu_cc_policy *p,
			   struct ibemu_mad_switch_congestion_setting *s)
{
	memset(s, 0, sizeof(*s));
	s->control_map = p->sw.control_map;
	memcpy(s->victim_mask, p->sw.victim_mask, sizeof(s->victim_mask));
	memcpy(s->credit_mask, p->sw.credit_mask, sizeof(s->credit_mask));
	s->threshold = p->sw.threshold;
	s->packet_size = p->sw.packet_size;
	s->cs_threshold = p->sw.cs_threshold;
	s->cs_return_delay = ibemu_cc_entry_bits(p->sw.cs_return_delay);
	s->marking_rate = p->sw.marking_rate;
}

static void ca_setting(const struct ibemu_cc_policy *p,
		       struct ibemu_mad_ca_congestion_setting *s)
{
	unsigned sl;

	memset(s, 0, sizeof(*s));
	s->port_control = p->ca.port_control;
	s->control_map = p->ca.control_map;
	for (sl = 0; sl < IBEMU_CC_CA_SETTING_ENTRIES; sl++) {
		s->entry[sl].ccti_timer = p->ca.sl[sl].ccti_timer;
		s->entry[sl].ccti_increase = p->ca.sl[sl].ccti_increase;
		s->entry[sl].trigger_threshold = p->ca.sl[sl].trigger_threshold;
		s->entry[sl].ccti_min = p->ca.sl[sl].ccti_min;
	}
}

static void cct_block(const struct ibemu_cc_policy *p, unsigned block,
		      struct ibemu_mad_cc_table *t)
{
	unsigned i, k;

	memset(t, 0, sizeof(*t));
	t->ccti_limit = (uint16_t)(p->cct_len ? p->cct_len - 1 : 0);
	for (i = 0; i < IBEMU_CC_TABLE_BLOCK; i++) {
		k = block * IBEMU_CC_TABLE_BLOCK + i;
		if (k < p->cct_len) {
			t->entry[i].shift = p->cct[k].shift;
			t->entry[i].multiplier = p->cct[k].multiplier;
		}
	}
}

/*
 * Whether the answer echoes what was set: a Set changes only what its
 * Control_Map names (A10.4.3.6, A10.4.3.8), so only that is compared.
 */
static int switch_echoed(const struct ibemu_cc_policy *p, const uint8_t *data)
{
	struct ibemu_mad_switch_congestion_setting want, got;
	uint32_t m = p->sw.control_map;

	switch_setting(p, &want);
	if (ibemu_mad_switch_congestion_setting_decode(data, IBEMU_CC_DATA_LEN,
						       &got))
		return 0;
	return got.control_map == want.control_map &&
	       (!(m & 1) || !memcmp(got.victim_mask, want.victim_mask,
				    sizeof(got.victim_mask))) &&
	       (!(m & 2) || !memcmp(got.credit_mask, want.credit_mask,
				    sizeof(got.credit_mask))) &&
	       (!(m & 4) || (got.threshold == want.threshold &&
			     got.packet_size == want.packet_size)) &&
	       (!(m & 8) || (got.cs_threshold == want.cs_threshold &&
			     got.cs_return_delay == want.cs_return_delay)) &&
	       (!(m & 16) || got.marking_rate == want.marking_rate);
}

static int ca_echoed(const struct ibemu_cc_policy *p, const uint8_t *data)
{
	struct ibemu_mad_ca_congestion_setting want, got;
	unsigned sl;

	ca_setting(p, &want);
	if (ibemu_mad_ca_congestion_setting_decode(data, IBEMU_CC_DATA_LEN,
						   &got) ||
	    got.port_control != want.port_control ||
	    got.control_map != want.control_map)
		return 0;
	for (sl = 0; sl < IBEMU_CC_CA_SETTING_ENTRIES; sl++)
		if ((want.control_map >> sl & 1) &&
		    memcmp(&got.entry[sl], &want.entry[sl],
			   sizeof(got.entry[sl])))
			return 0;
	return 1;
}

static int cct_echoed(const struct ibemu_cc_policy *p, unsigned block,
		      const uint8_t *data)
{
	struct ibemu_mad_cc_table want, got;

	cct_block(p, block, &want);
	if (ibemu_mad_cc_table_decode(data, IBEMU_CC_DATA_LEN, &got))
		return 0;
	return !memcmp(&got, &want, sizeof(got));
}

static const char *attr_name(uint16_t attr)
{
	switch (attr) {
	case IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING:
		return "SwitchCongestionSetting";
	case IBEMU_CC_ATTR_CA_CONGESTION_SETTING:
		return "CACongestionSetting";
	case IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE:
		return "CongestionControlTable";
	default:
		return "CongestionLog";
	}
}

/* arg2: the port's index, the attribute and the modifier (CCT block). */
#define ARG2(idx, attr, mod) \
	((uint64_t)(idx) | (uint64_t)(attr) << 32 | (uint64_t)(mod) << 48)

static void fail(struct sm *sm, const struct sm_cc_port *cp, uint16_t attr,
		 uint32_t mod, const char *what)
{
	sm->cc_stats.failed++;
	fprintf(stderr,
		"ibemu-sm: CC %s block %u to port GUID 0x%016" PRIx64
		" (LID %u): %s\n",
		attr_name(attr), mod, cp->guid, cp->lid, what);
}

static void mark_configured(struct sm *sm, struct sm_cc_port *cp)
{
	unsigned all = (1u << cct_blocks(sm->cc)) - 1;

	if (cp->configured)
		return;
	if (cp->is_switch ? cp->sw_set
			  : cp->ca_set && (cp->cct_set & all) == all) {
		cp->configured = 1;
		sm->cc_stats.configured++;
	}
}

static void on_set(struct sm *sm, int status, const uint8_t *mad, void *arg,
		   uint64_t arg2)
{
	struct sm_cc_port *cp = &sm->cc_ports[(uint32_t)arg2];
	uint16_t attr = (uint16_t)(arg2 >> 32);
	uint32_t mod = (uint32_t)(arg2 >> 48);
	const uint8_t *data;
	char why[64];
	int ok;

	(void)arg;
	if (status) {
		fail(sm, cp, attr, mod,
		     status == -ETIMEDOUT ? "timed out" : "failed");
		return;
	}
	if (ibemu_mad_get_status(mad)) {
		snprintf(why, sizeof(why), "status 0x%04x",
			 ibemu_mad_get_status(mad));
		fail(sm, cp, attr, mod, why);
		return;
	}
	data = mad + IBEMU_CC_DATA_OFF;
	if (attr == IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING)
		ok = cp->sw_set = (uint8_t)switch_echoed(sm->cc, data);
	else if (attr == IBEMU_CC_ATTR_CA_CONGESTION_SETTING)
		ok = cp->ca_set = (uint8_t)ca_echoed(sm->cc, data);
	else if ((ok = cct_echoed(sm->cc, mod, data)))
		cp->cct_set |= (uint8_t)(1u << mod);
	if (!ok) {
		fail(sm, cp, attr, mod, "the answer does not echo the Set");
		return;
	}
	mark_configured(sm, cp);
}

static int send_set(struct sm *sm, uint32_t idx, uint16_t attr, uint32_t mod,
		    uint8_t *mad)
{
	int ret = sm_gmp(sm, sm->cc_agent, sm->cc_ports[idx].lid, mad, on_set,
			 NULL, ARG2(idx, attr, mod));

	if (!ret)
		sm->cc_stats.sets++;
	return ret;
}

int sm_cc_configure(struct sm *sm)
{
	struct ibemu_mad_switch_congestion_setting sw;
	struct ibemu_mad_ca_congestion_setting ca;
	struct ibemu_mad_cc_table t;
	uint8_t mad[IBEMU_MAD_LEN];
	unsigned b, nblocks;
	uint32_t i;
	int ret;

	if (!enabled(sm) || !sm->routes)
		return 0;
	ret = gather(sm);
	if (ret)
		return ret;
	switch_setting(sm->cc, &sw);
	ca_setting(sm->cc, &ca);
	nblocks = cct_blocks(sm->cc);
	for (i = 0; i < sm->ncc_ports && !ret; i++) {
		const struct sm_cc_port *cp = &sm->cc_ports[i];

		if (!cp->lid)
			continue;
		if (cp->is_switch) {
			if (cp->sw_set)
				continue;
			cc_mad(sm, mad, IBEMU_MAD_METHOD_SET,
			       IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING, 0);
			IBEMU_BUG_ON(ibemu_mad_switch_congestion_setting_encode(
				&sw, mad + IBEMU_CC_DATA_OFF,
				IBEMU_CC_DATA_LEN));
			ret = send_set(sm, i,
				       IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING,
				       0, mad);
			continue;
		}
		if (!cp->ca_set) {
			cc_mad(sm, mad, IBEMU_MAD_METHOD_SET,
			       IBEMU_CC_ATTR_CA_CONGESTION_SETTING, 0);
			IBEMU_BUG_ON(ibemu_mad_ca_congestion_setting_encode(
				&ca, mad + IBEMU_CC_DATA_OFF,
				IBEMU_CC_DATA_LEN));
			ret = send_set(sm, i,
				       IBEMU_CC_ATTR_CA_CONGESTION_SETTING, 0,
				       mad);
		}
		for (b = 0; b < nblocks && !ret; b++) {
			if (cp->cct_set >> b & 1)
				continue;
			cct_block(sm->cc, b, &t);
			cc_mad(sm, mad, IBEMU_MAD_METHOD_SET,
			       IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE, b);
			IBEMU_BUG_ON(ibemu_mad_cc_table_encode(
				&t, mad + IBEMU_CC_DATA_OFF,
				IBEMU_CC_DATA_LEN));
			ret = send_set(sm, i,
				       IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE,
				       b, mad);
		}
	}
	if (!ret)
		ret = sm_smp_run(sm);
	return ret;
}

/*
 * A10.4.3.5: a switch's LogEventsCounter and a CA's ThresholdEventCounter
 * count the events since the log was last read, and reading clears them:
 * their sum over the reads is every event.
 */
static void on_log(struct sm *sm, int status, const uint8_t *mad, void *arg,
		   uint64_t arg2)
{
	struct ibemu_mad_congestion_log_switch sw;
	struct ibemu_mad_congestion_log_ca ca;
	const uint8_t *data;

	(void)arg;
	(void)arg2;
	if (status || ibemu_mad_get_status(mad)) {
		sm->cc_stats.failed++;
		return;
	}
	data = mad + IBEMU_CC_LOG_DATA_OFF;
	switch (ibemu_mad_congestion_log_type(data, IBEMU_CC_LOG_DATA_LEN)) {
	case IBEMU_CC_LOG_SWITCH:
		if (!ibemu_mad_congestion_log_switch_decode(
			    data, IBEMU_CC_LOG_DATA_LEN, &sw))
			sm->cc_stats.switch_events += sw.log_events_counter;
		break;
	case IBEMU_CC_LOG_CA:
		if (!ibemu_mad_congestion_log_ca_decode(
			    data, IBEMU_CC_LOG_DATA_LEN, &ca))
			sm->cc_stats.ca_events += ca.threshold_event_counter;
		break;
	default:
		sm->cc_stats.failed++;
	}
}

int sm_cc_poll(struct sm *sm)
{
	uint8_t mad[IBEMU_MAD_LEN];
	uint32_t i;
	int ret = 0;

	if (!enabled(sm))
		return 0;
	for (i = 0; i < sm->ncc_ports && !ret; i++) {
		if (!sm->cc_ports[i].lid)
			continue;
		cc_mad(sm, mad, IBEMU_MAD_METHOD_GET,
		       IBEMU_CC_ATTR_CONGESTION_LOG, 0);
		ret = sm_gmp(sm, sm->cc_agent, sm->cc_ports[i].lid, mad, on_log,
			     NULL, i);
		if (!ret)
			sm->cc_stats.gets++;
	}
	if (!ret)
		ret = sm_smp_run(sm);
	return ret;
}
