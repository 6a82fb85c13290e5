// SPDX-License-Identifier: MIT
/*
 * The congestion control policy (cc/): ibemu's default, OpenSM's option
 * lines read back to the same policy, and bad values reported with where
 * they are and what was expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cc_policy.h"
#include "unit.h"

static void test_default(void)
{
	struct ibemu_cc_policy p, z;
	unsigned i;

	ibemu_cc_policy_default(&p);
	T_EQ_INT(p.enable, 1);
	T_EQ_U64(p.cc_key, 0);
	T_EQ_U64(p.sw.control_map, 0x1f);
	T_EQ_U64(p.sw.threshold, 10);
	T_EQ_U64(p.sw.marking_rate, 1);
	T_EQ_U64(p.ca.port_control, 0);
	T_EQ_U64(p.ca.control_map, 0xffff);
	for (i = 0; i < IBEMU_CC_POLICY_SLS; i++) {
		T_EQ_U64(p.ca.sl[i].ccti_timer, 9);
		T_EQ_U64(p.ca.sl[i].ccti_increase, 4);
		T_EQ_U64(p.ca.sl[i].trigger_threshold, 8);
		T_EQ_U64(p.ca.sl[i].ccti_min, 0);
	}
	T_EQ_U64(p.cct_len, 128);
	for (i = 0; i < p.cct_len; i++) {
		T_EQ_U64(p.cct[i].shift, 0);
		T_EQ_U64(p.cct[i].multiplier, i);
	}
	ibemu_cc_policy_opensm(&z);
	T_EQ_INT(z.enable, 0);
	T_EQ_INT(ibemu_cc_policy_equal(&p, &z), 0);
	T_EQ_INT(ibemu_cc_policy_equal(&p, &p), 1);
}

/* Written as OpenSM lines and read back: the same policy. */
static void test_roundtrip(void)
{
	char path[] = "/tmp/ibemu-cc-XXXXXX";
	struct ibemu_cc_policy p, q;
	struct ibemu_diag d;
	struct ibemu_buf b;
	int fd;

	ibemu_cc_policy_default(&p);
	p.cc_key = 0x1234567890abcdefull;
	p.sw.victim_mask[31] = 0x06; /* ports 1 and 2 */
	p.sw.credit_mask[0] = 0x80;  /* port 255 */
	p.sw.cs_return_delay = (struct ibemu_cc_entry){2, 300};
	p.ca.sl[3].ccti_timer = 7;
	p.ca.sl[15].ccti_min = 2;
	p.cct_len = 70;
	p.cct[69] = (struct ibemu_cc_entry){3, 0x3fff};
	ibemu_buf_init(&b);
	ibemu_cc_policy_write(&p, &b);
	T_TRUE(!b.err);
	T_TRUE(strstr(b.data, "congestion_control TRUE\n") != NULL);
	T_TRUE(strstr(b.data, "cc_ca_cong_setting_ccti_timer 3 7\n") != NULL);
	fd = mkstemp(path);
	T_TRUE(fd >= 0);
	T_EQ_INT((int)write(fd, b.data, b.len), (int)b.len);
	close(fd);
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_cc_policy_load(&q, path, &d), 0);
	T_TRUE(ibemu_cc_policy_equal(&p, &q));
	unlink(path);
	ibemu_diag_fini(&d);
	ibemu_buf_fini(&b);
}

static void expect_error(const char *line, const char *msg)
{
	struct ibemu_loc loc = {.file = "cc.conf", .line = 4, .col = 1};
	struct ibemu_cc_policy p, before;
	struct ibemu_diag d;

	ibemu_cc_policy_default(&p);
	before = p;
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, line, &loc, &d), -22);
	T_EQ_STR(d.error, msg);
	T_TRUE(ibemu_cc_policy_equal(&p, &before));
	ibemu_diag_fini(&d);
}

static void test_lines(void)
{
	struct ibemu_loc loc = {.file = "x", .line = 1, .col = 1};
	struct ibemu_cc_policy p;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	ibemu_cc_policy_opensm(&p);
	/* Not about CC, blank, comments: left alone. */
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, "routing_engine ftree", &loc,
					    &d),
		 1);
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, "   # cc_key 5", &loc, &d), 1);
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, "", &loc, &d), 1);
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, "congestion_control TRUE", &loc,
					    &d),
		 0);
	T_EQ_INT(p.enable, 1);
	T_EQ_INT(ibemu_cc_policy_parse_line(
			 &p, "cc_sw_cong_setting_victim_mask 0x3 # two", &loc,
			 &d),
		 0);
	T_EQ_U64(p.sw.victim_mask[31], 3);
	T_EQ_INT(ibemu_cc_policy_parse_line(
			 &p, "\tcc_ca_cong_setting_ccti_increase 5\t9", &loc,
			 &d),
		 0);
	T_EQ_U64(p.ca.sl[5].ccti_increase, 9);
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, "cc_cct 0:0,1:2,3:16383", &loc,
					    &d),
		 0);
	T_EQ_U64(p.cct_len, 3);
	T_EQ_U64(p.cct[2].multiplier, 16383);
	T_EQ_INT(ibemu_cc_policy_parse_line(&p, "cc_cct (null)", &loc, &d), 0);
	T_EQ_U64(p.cct_len, 0);
	T_TRUE(d.error == NULL);
	ibemu_diag_fini(&d);

	expect_error("congestion_control yes",
		     "cc.conf:4:20: error: congestion_control is 'yes', "
		     "expected TRUE or FALSE");
	expect_error("cc_sw_cong_setting_threshold 16",
		     "cc.conf:4:30: error: cc_sw_cong_setting_threshold is "
		     "'16', expected an integer 0..0xf");
	expect_error("cc_ca_cong_setting_ccti_min 16 1",
		     "cc.conf:4:29: error: cc_ca_cong_setting_ccti_min: bad "
		     "SL or value, expected an SL 0..15 and an integer 0..255");
	expect_error("cc_cct 0:1,4:1",
		     "cc.conf:4:8: error: cc_cct entry 1 is '4:1', expected "
		     "shift:multiplier (shift 0..3, multiplier 0..16383)");
	expect_error("cc_sw_cong_setting_victim_mask 0xg",
		     "cc.conf:4:32: error: cc_sw_cong_setting_victim_mask is "
		     "'0xg', expected a 256-bit hex number (bit N: port N)");
	expect_error("cc_key",
		     "cc.conf:4:7: error: cc_key has no value, expected: "
		     "CC_Key carried by every congestion control MAD");
}

void ibemu_test_register_cc_policy(void)
{
	static const struct ibemu_test tests[] = {
		{"default", test_default},
		{"roundtrip", test_roundtrip},
		{"lines", test_lines},
		{NULL, NULL},
	};

	ibemu_test_add_suite("cc.policy", tests);
}
