/* SPDX-License-Identifier: MIT */
/*
 * A congestion control policy (IBA Annex A10): what a CC manager writes
 * into every switch (SwitchCongestionSetting) and every CA port
 * (CACongestionSetting, CongestionControlTable). It reads and writes
 * OpenSM's option names and syntax (congestion_control, cc_key, cc_sw_*,
 * cc_ca_*, cc_cct), so one file configures ibemu-sm and OpenSM alike; the
 * topology YAML and 'ibemu up' build it, ibemu-sm applies it.
 */
#ifndef IBEMU_CC_POLICY_H
#define IBEMU_CC_POLICY_H

#include <stdint.h>

#include "buf.h"
#include "diag.h"

#define IBEMU_CC_POLICY_SLS	 16 /* CACongestionSetting: one per SL */
#define IBEMU_CC_POLICY_MASK_LEN 32 /* 256-bit port masks, big-endian */
/*
 * OpenSM 3.3 keeps at most 128 CCT entries (OSM_CCT_ENTRY_MAX, two MAD
 * blocks of 64) and drops the rest without a word; a policy that must mean
 * the same to both SMs stops there too.
 */
#define IBEMU_CC_POLICY_CCT_MAX	  128
#define IBEMU_CC_POLICY_CCT_BLOCK 64

/* A CCT entry or a delay: multiplier << shift (A10.4.3.9). */
struct ibemu_cc_entry {
	uint8_t shift;	     /* 2 bits */
	uint16_t multiplier; /* 14 bits */
};

struct ibemu_cc_ca_sl {
	uint16_t ccti_timer; /* in 1.024 us */
	uint8_t ccti_increase;
	uint8_t trigger_threshold;
	uint8_t ccti_min;
};

struct ibemu_cc_policy {
	int enable; /* congestion_control */
	uint64_t cc_key;
	struct {
		uint32_t control_map;
		/* Bit N of the 256-bit number is port N (port 0 the lowest
		 * bit of the last byte), as the MAD carries it. */
		uint8_t victim_mask[IBEMU_CC_POLICY_MASK_LEN];
		uint8_t credit_mask[IBEMU_CC_POLICY_MASK_LEN];
		uint8_t threshold;    /* 4 bits */
		uint8_t packet_size;  /* in 64-byte credits */
		uint8_t cs_threshold; /* 4 bits */
		struct ibemu_cc_entry cs_return_delay;
		uint16_t marking_rate;
	} sw;
	struct {
		uint16_t port_control; /* bit 0: 0 per QP, 1 per SL */
		uint16_t control_map;  /* one bit per SL */
		struct ibemu_cc_ca_sl sl[IBEMU_CC_POLICY_SLS];
	} ca;
	unsigned cct_len; /* entries; CCTI_Limit is cct_len - 1 */
	struct ibemu_cc_entry cct[IBEMU_CC_POLICY_CCT_MAX];
};

/* ibemu's default policy, a working one (see cc_policy.c for why). */
void ibemu_cc_policy_default(struct ibemu_cc_policy *p);
/* OpenSM's defaults: all zero and disabled, which configures nothing. */
void ibemu_cc_policy_opensm(struct ibemu_cc_policy *p);
/* 1 if the two policies set the same values, else 0. */
int ibemu_cc_policy_equal(const struct ibemu_cc_policy *a,
			  const struct ibemu_cc_policy *b);

/*
 * Applies one line of an OpenSM configuration file to 'p'. Blank lines,
 * comments and options that are not about congestion control leave 'p'
 * alone and return 1; a CC option applied returns 0; a CC option with a
 * bad value returns -EINVAL with the error at 'loc' in 'd' (what was
 * expected). 'p' is unchanged on error.
 */
int ibemu_cc_policy_parse_line(struct ibemu_cc_policy *p, const char *line,
			       const struct ibemu_loc *loc,
			       struct ibemu_diag *d);
/*
 * Reads an OpenSM configuration file into 'p', starting from OpenSM's
 * defaults (so the file means to ibemu-sm what it means to OpenSM).
 * Returns 0, -EINVAL with the error in 'd' (file:line:column), or the
 * -errno of reading it.
 */
int ibemu_cc_policy_load(struct ibemu_cc_policy *p, const char *path,
			 struct ibemu_diag *d);
/* Appends 'p' as OpenSM configuration lines, every option, every SL. */
void ibemu_cc_policy_write(const struct ibemu_cc_policy *p,
			   struct ibemu_buf *b);

/* "shift:multiplier" to an entry; 0, or -EINVAL/-ERANGE. */
int ibemu_cc_entry_parse(const char *s, struct ibemu_cc_entry *e);
/* The 16-bit wire form of an entry: shift in the top 2 bits. */
static inline uint16_t ibemu_cc_entry_bits(struct ibemu_cc_entry e)
{
	return (uint16_t)(e.shift << 14 | e.multiplier);
}

#endif
