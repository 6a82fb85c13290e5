// SPDX-License-Identifier: MIT
/*
 * The congestion_control: section of the topology YAML: every key lands in
 * the policy, the emitter writes only what differs from ibemu's default
 * and reads back to the same policy, and mistakes name file:line:column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "yaml.h"

#define FABRIC                               \
	"switches: [{name: sw, ports: 4}]\n" \
	"hcas: [{name: h1}]\n"               \
	"links: [[sw:1, h1:1]]\n"

static struct ibemu_topo *load(const char *text, struct ibemu_diag *d)
{
	struct ibemu_topo *t = NULL;

	ibemu_diag_init(d);
	if (ibemu_yaml_load("cc.yaml", text, strlen(text), &t, d))
		return NULL;
	return t;
}

static char *emit(const struct ibemu_topo *t)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_yaml_emit(t, &b);
	return ibemu_buf_steal(&b);
}

/* Emits 't', loads that, and checks the policy survived; frees 't'. */
static void roundtrip(struct ibemu_topo *t, const char *expect)
{
	struct ibemu_topo *u;
	struct ibemu_diag d;
	char *text = emit(t);

	T_TRUE(text != NULL);
	if (!text)
		return;
	if (expect && !strstr(text, expect))
		fprintf(stderr, "emitted:\n%s\nlacks: %s\n", text, expect);
	T_TRUE(!expect || strstr(text, expect));
	u = load(text, &d);
	if (!u)
		fprintf(stderr, "%s\n%s\n", text, d.error);
	T_TRUE(u != NULL);
	if (u)
		T_TRUE(ibemu_cc_policy_equal(&t->cc, &u->cc));
	ibemu_topo_destroy(u);
	ibemu_diag_fini(&d);
	free(text);
	ibemu_topo_destroy(t);
}

static void test_keys(void)
{
	static const char text[] =
		"congestion_control:\n"
		"  cc_key: 0x42\n"
		"  switch:\n"
		"    control_map: 0x7\n"
		"    threshold: 8\n"
		"    marking_rate: 3\n"
		"    packet_size: 2\n"
		"    victim_mask: [1, 2, 255]\n"
		"    credit_mask: all\n"
		"    cs_threshold: 4\n"
		"    cs_return_delay: \"1:5\"\n"
		"  ca:\n"
		"    control: sl\n"
		"    control_map: 0xff\n"
		"    ccti_timer: 10\n"
		"    ccti_increase: 2\n"
		"    trigger_threshold: 9\n"
		"    ccti_min: 1\n"
		"    sls:\n"
		"      - {sl: 3, ccti_increase: 4}\n"
		"      - {sl: 15, ccti_timer: 65535, ccti_min: 3}\n"
		"  cct: {entries: 64, step: \"2:3\"}\n" FABRIC;
	const struct ibemu_cc_policy *p;
	struct ibemu_topo *t;
	struct ibemu_diag d;
	unsigned i;

	t = load(text, &d);
	T_TRUE(t != NULL);
	if (!t) {
		fprintf(stderr, "%s\n", d.error);
		ibemu_diag_fini(&d);
		return;
	}
	p = &t->cc;
	T_EQ_INT(p->enable, 1);
	T_EQ_U64(p->cc_key, 0x42);
	T_EQ_U64(p->sw.control_map, 7);
	T_EQ_U64(p->sw.threshold, 8);
	T_EQ_U64(p->sw.marking_rate, 3);
	T_EQ_U64(p->sw.packet_size, 2);
	T_EQ_U64(p->sw.victim_mask[31], 0x06);
	T_EQ_U64(p->sw.victim_mask[0], 0x80);
	T_EQ_U64(p->sw.credit_mask[5], 0xff);
	T_EQ_U64(p->sw.cs_threshold, 4);
	T_EQ_U64(p->sw.cs_return_delay.shift, 1);
	T_EQ_U64(p->sw.cs_return_delay.multiplier, 5);
	T_EQ_U64(p->ca.port_control, 1);
	T_EQ_U64(p->ca.control_map, 0xff);
	T_EQ_U64(p->ca.sl[0].ccti_timer, 10);
	T_EQ_U64(p->ca.sl[3].ccti_increase, 4);
	T_EQ_U64(p->ca.sl[3].ccti_timer, 10);
	T_EQ_U64(p->ca.sl[7].ccti_increase, 2);
	T_EQ_U64(p->ca.sl[15].ccti_timer, 65535);
	T_EQ_U64(p->ca.sl[15].ccti_min, 3);
	T_EQ_U64(p->ca.sl[15].trigger_threshold, 9);
	T_EQ_U64(p->cct_len, 64);
	for (i = 0; i < 64; i++) {
		T_EQ_U64(p->cct[i].shift, 2);
		T_EQ_U64(p->cct[i].multiplier, 3 * i);
	}
	ibemu_diag_fini(&d);
	roundtrip(t, "  cct: {entries: 64, step: \"2:3\"}\n");
}

static void test_roundtrip(void)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char *text;

	/* Without the section: nothing written, the default kept. */
	t = load(FABRIC, &d);
	T_TRUE(t != NULL);
	if (!t)
		return;
	text = emit(t);
	T_TRUE(text && !strstr(text, "congestion_control"));
	free(text);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);

	t = load("congestion_control: {enable: false}\n" FABRIC, &d);
	T_TRUE(t && !t->cc.enable);
	ibemu_diag_fini(&d);
	if (t)
		roundtrip(t, "congestion_control:\n  enable: false\n");

	t = load("congestion_control:\n"
		 "  switch: {victim_mask: [0, 8]}\n"
		 "  cct: [\"0:0\", \"1:7\", \"3:16383\"]\n" FABRIC,
		 &d);
	T_TRUE(t && t->cc.cct_len == 3);
	ibemu_diag_fini(&d);
	if (t)
		roundtrip(t, "  switch: {victim_mask: [0, 8]}\n"
			     "  cct: [\"0:0\", \"1:7\", \"3:16383\"]\n");

	t = load("congestion_control:\n"
		 "  ca: {sls: [{sl: 2, ccti_timer: 1}]}\n" FABRIC,
		 &d);
	T_TRUE(t && t->cc.ca.sl[2].ccti_timer == 1);
	ibemu_diag_fini(&d);
	if (t)
		roundtrip(t, "  ca: {sls: [{sl: 2, ccti_timer: 1}]}\n");
}

static void expect_error(const char *cc, const char *msg)
{
	struct ibemu_topo *t;
	struct ibemu_diag d;
	char text[2048];

	snprintf(text, sizeof(text), "congestion_control:\n%s" FABRIC, cc);
	t = load(text, &d);
	T_TRUE(t == NULL);
	T_EQ_STR(d.error, msg);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_errors(void)
{
	expect_error("  enable: yes\n",
		     "cc.yaml:2:11: error: bad enable 'yes', expected true "
		     "or false");
	expect_error("  switch: {threshold: 16}\n",
		     "cc.yaml:2:23: error: threshold 16 is out of range, "
		     "expected 0..15");
	expect_error("  switch: {victim_mask: [1, 256]}\n",
		     "cc.yaml:2:29: error: port 256 is out of range, "
		     "expected 0..255");
	expect_error("  switch: {victim_mask: some}\n",
		     "cc.yaml:2:25: error: victim_mask is a scalar 'some', "
		     "expected all, or a sequence of port numbers 0..255");
	expect_error("  switch: {cs_return_delay: \"4:1\"}\n",
		     "cc.yaml:2:29: error: bad cs_return_delay '4:1', "
		     "expected \"shift:multiplier\" (shift 0..3, multiplier "
		     "0..16383)");
	expect_error("  ca: {control: port}\n",
		     "cc.yaml:2:17: error: bad control 'port', expected qp "
		     "or sl");
	expect_error("  ca: {sls: [{ccti_timer: 3}]}\n",
		     "cc.yaml:2:14: error: missing key 'sl' in an SL of "
		     "congestion_control: ca: sls, expected the SL it "
		     "overrides");
	expect_error("  ca: {sls: [{sl: 16}]}\n",
		     "cc.yaml:2:19: error: sl 16 is out of range, expected "
		     "0..15");
	expect_error("  cct: [\"0:0\", \"0:x\"]\n",
		     "cc.yaml:2:16: error: bad CCT entry '0:x', expected "
		     "\"shift:multiplier\" (shift 0..3, multiplier 0..16383)");
	expect_error("  cct: {entries: 129}\n",
		     "cc.yaml:2:18: error: entries 129 is out of range, "
		     "expected 0..128: OpenSM keeps at most 128 entries");
	expect_error("  cct: {entries: 128, step: \"0:200\"}\n",
		     "cc.yaml:2:29: error: step 0:200 makes entry 127's "
		     "multiplier 25400, expected at most 16383");
	expect_error("  cct: 5\n",
		     "cc.yaml:2:8: error: cct is a scalar, expected a "
		     "sequence of \"shift:multiplier\" (at most 128), or "
		     "{entries: N, step: \"shift:multiplier\"}");
	expect_error("  sw: {}\n",
		     "cc.yaml:2:3: error: unknown key 'sw' in "
		     "congestion_control, expected one of enable, cc_key, "
		     "switch, ca, cct");
}

void ibemu_test_register_topo_yaml_cc(void)
{
	static const struct ibemu_test tests[] = {
		{"keys", test_keys},
		{"roundtrip", test_roundtrip},
		{"errors", test_errors},
		{NULL, NULL},
	};

	ibemu_test_add_suite("topo.yaml_cc", tests);
}
