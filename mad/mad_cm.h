/* SPDX-License-Identifier: MIT */
/*
 * Communication Management MADs (IBA vol 1 §12.6, management class 0x07,
 * class version 2, method Send): the field layouts of REQ, MRA, REJ, REP,
 * RTU, DREQ, DREP, SIDR_REQ and SIDR_REP (tables 106-113, 119, 120) as
 * in-place accessors on a big-endian 256-byte wire image. Header only and
 * libc only, as mad_hdr.h, so that librdmacm (rdmacm/) and the daemon's
 * CM dispatch (attach/sess_cm.c) share one layout.
 *
 * A field is named by its byte offset in the MAD (the CM message starts
 * after the 24-byte common header), its first bit in that byte (IBA
 * numbering: bit 0 is the most significant) and its width in bits; it may
 * span bytes. The offsets are the spec's, cross-checked against the Linux
 * kernel's include/rdma/ibta_vol1_c12.h and Wireshark's dissector
 * (tests/unit/mad/test-cm.c pins them).
 */
#ifndef IBEMU_MAD_CM_H
#define IBEMU_MAD_CM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mad_hdr.h"

#define IBEMU_MAD_CLASS_CM     0x07
#define IBEMU_CM_CLASS_VERSION 2
#define IBEMU_CM_ATTR_REQ      0x0010
#define IBEMU_CM_ATTR_MRA      0x0011
#define IBEMU_CM_ATTR_REJ      0x0012
#define IBEMU_CM_ATTR_REP      0x0013
#define IBEMU_CM_ATTR_RTU      0x0014
#define IBEMU_CM_ATTR_DREQ     0x0015
#define IBEMU_CM_ATTR_DREP     0x0016
#define IBEMU_CM_ATTR_SIDR_REQ 0x0017
#define IBEMU_CM_ATTR_SIDR_REP 0x0018
#define IBEMU_CM_DATA_OFF      IBEMU_MAD_HDR_LEN

/* A field: byte offset in the MAD, first bit (0 = MSB), width in bits. */
struct ibemu_cm_field {
	uint16_t byte;
	uint8_t bit;
	uint8_t width;
};

/* Offsets below are the spec's, relative to the CM message (byte 24). */
#define IBEMU__CM_F(b, bit, w) \
	((struct ibemu_cm_field){IBEMU_CM_DATA_OFF + (b), (bit), (w)})

/* Table 106: REQ. */
#define IBEMU_CM_REQ_LOCAL_COMM_ID	       IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_REQ_SERVICE_ID		       IBEMU__CM_F(8, 0, 64)
#define IBEMU_CM_REQ_LOCAL_CA_GUID	       IBEMU__CM_F(16, 0, 64)
#define IBEMU_CM_REQ_LOCAL_QKEY		       IBEMU__CM_F(28, 0, 32)
#define IBEMU_CM_REQ_LOCAL_QPN		       IBEMU__CM_F(32, 0, 24)
#define IBEMU_CM_REQ_RESPONDER_RESOURCES       IBEMU__CM_F(35, 0, 8)
#define IBEMU_CM_REQ_LOCAL_EECN		       IBEMU__CM_F(36, 0, 24)
#define IBEMU_CM_REQ_INITIATOR_DEPTH	       IBEMU__CM_F(39, 0, 8)
#define IBEMU_CM_REQ_REMOTE_EECN	       IBEMU__CM_F(40, 0, 24)
#define IBEMU_CM_REQ_REMOTE_CM_RESP_TIMEOUT    IBEMU__CM_F(43, 0, 5)
#define IBEMU_CM_REQ_TRANSPORT_SERVICE_TYPE    IBEMU__CM_F(43, 5, 2)
#define IBEMU_CM_REQ_END_TO_END_FLOW_CONTROL   IBEMU__CM_F(43, 7, 1)
#define IBEMU_CM_REQ_STARTING_PSN	       IBEMU__CM_F(44, 0, 24)
#define IBEMU_CM_REQ_LOCAL_CM_RESP_TIMEOUT     IBEMU__CM_F(47, 0, 5)
#define IBEMU_CM_REQ_RETRY_COUNT	       IBEMU__CM_F(47, 5, 3)
#define IBEMU_CM_REQ_PKEY		       IBEMU__CM_F(48, 0, 16)
#define IBEMU_CM_REQ_PATH_MTU		       IBEMU__CM_F(50, 0, 4)
#define IBEMU_CM_REQ_RDC_EXISTS		       IBEMU__CM_F(50, 4, 1)
#define IBEMU_CM_REQ_RNR_RETRY_COUNT	       IBEMU__CM_F(50, 5, 3)
#define IBEMU_CM_REQ_MAX_CM_RETRIES	       IBEMU__CM_F(51, 0, 4)
#define IBEMU_CM_REQ_SRQ		       IBEMU__CM_F(51, 4, 1)
#define IBEMU_CM_REQ_EXTENDED_TRANSPORT	       IBEMU__CM_F(51, 5, 3)
#define IBEMU_CM_REQ_PRIMARY_LOCAL_LID	       IBEMU__CM_F(52, 0, 16)
#define IBEMU_CM_REQ_PRIMARY_REMOTE_LID	       IBEMU__CM_F(54, 0, 16)
#define IBEMU_CM_REQ_PRIMARY_LOCAL_GID_OFF     (IBEMU_CM_DATA_OFF + 56)
#define IBEMU_CM_REQ_PRIMARY_REMOTE_GID_OFF    (IBEMU_CM_DATA_OFF + 72)
#define IBEMU_CM_REQ_PRIMARY_FLOW_LABEL	       IBEMU__CM_F(88, 0, 20)
#define IBEMU_CM_REQ_PRIMARY_PACKET_RATE       IBEMU__CM_F(91, 2, 6)
#define IBEMU_CM_REQ_PRIMARY_TRAFFIC_CLASS     IBEMU__CM_F(92, 0, 8)
#define IBEMU_CM_REQ_PRIMARY_HOP_LIMIT	       IBEMU__CM_F(93, 0, 8)
#define IBEMU_CM_REQ_PRIMARY_SL		       IBEMU__CM_F(94, 0, 4)
#define IBEMU_CM_REQ_PRIMARY_SUBNET_LOCAL      IBEMU__CM_F(94, 4, 1)
#define IBEMU_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT IBEMU__CM_F(95, 0, 5)
#define IBEMU_CM_REQ_PRIVATE_OFF	       (IBEMU_CM_DATA_OFF + 140)
#define IBEMU_CM_REQ_PRIVATE_LEN	       92

/* Table 107: MRA. */
#define IBEMU_CM_MRA_LOCAL_COMM_ID   IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_MRA_REMOTE_COMM_ID  IBEMU__CM_F(4, 0, 32)
#define IBEMU_CM_MRA_MESSAGE_MRAED   IBEMU__CM_F(8, 0, 2)
#define IBEMU_CM_MRA_SERVICE_TIMEOUT IBEMU__CM_F(9, 0, 5)
#define IBEMU_CM_MRA_PRIVATE_OFF     (IBEMU_CM_DATA_OFF + 10)
#define IBEMU_CM_MRA_PRIVATE_LEN     222
/* Message MRAed / Message Rejected: which message is answered. */
#define IBEMU_CM_MSG_REQ 0
#define IBEMU_CM_MSG_REP 1
#define IBEMU_CM_MSG_LAP 2

/* Table 108: REJ. */
#define IBEMU_CM_REJ_LOCAL_COMM_ID    IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_REJ_REMOTE_COMM_ID   IBEMU__CM_F(4, 0, 32)
#define IBEMU_CM_REJ_MESSAGE_REJECTED IBEMU__CM_F(8, 0, 2)
#define IBEMU_CM_REJ_INFO_LENGTH      IBEMU__CM_F(9, 0, 7)
#define IBEMU_CM_REJ_REASON	      IBEMU__CM_F(10, 0, 16)
#define IBEMU_CM_REJ_ARI_OFF	      (IBEMU_CM_DATA_OFF + 12)
#define IBEMU_CM_REJ_ARI_LEN	      72
#define IBEMU_CM_REJ_PRIVATE_OFF      (IBEMU_CM_DATA_OFF + 84)
#define IBEMU_CM_REJ_PRIVATE_LEN      148
/* Reject reasons (table 109) that ibemu sends. */
#define IBEMU_CM_REJ_TIMEOUT		1
#define IBEMU_CM_REJ_INVALID_SERVICE_ID 8
#define IBEMU_CM_REJ_STALE_CONN		10
#define IBEMU_CM_REJ_CONSUMER_DEFINED	28

/* Table 110: REP. */
#define IBEMU_CM_REP_LOCAL_COMM_ID	 IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_REP_REMOTE_COMM_ID	 IBEMU__CM_F(4, 0, 32)
#define IBEMU_CM_REP_LOCAL_QKEY		 IBEMU__CM_F(8, 0, 32)
#define IBEMU_CM_REP_LOCAL_QPN		 IBEMU__CM_F(12, 0, 24)
#define IBEMU_CM_REP_LOCAL_EECN		 IBEMU__CM_F(16, 0, 24)
#define IBEMU_CM_REP_STARTING_PSN	 IBEMU__CM_F(20, 0, 24)
#define IBEMU_CM_REP_RESPONDER_RESOURCES IBEMU__CM_F(24, 0, 8)
#define IBEMU_CM_REP_INITIATOR_DEPTH	 IBEMU__CM_F(25, 0, 8)
#define IBEMU_CM_REP_TARGET_ACK_DELAY	 IBEMU__CM_F(26, 0, 5)
#define IBEMU_CM_REP_FAILOVER_ACCEPTED	 IBEMU__CM_F(26, 5, 2)
#define IBEMU_CM_REP_END_TO_END_FLOW	 IBEMU__CM_F(26, 7, 1)
#define IBEMU_CM_REP_RNR_RETRY_COUNT	 IBEMU__CM_F(27, 0, 3)
#define IBEMU_CM_REP_SRQ		 IBEMU__CM_F(27, 3, 1)
#define IBEMU_CM_REP_LOCAL_CA_GUID	 IBEMU__CM_F(28, 0, 64)
#define IBEMU_CM_REP_PRIVATE_OFF	 (IBEMU_CM_DATA_OFF + 36)
#define IBEMU_CM_REP_PRIVATE_LEN	 196

/* Tables 111-113: RTU, DREQ, DREP. */
#define IBEMU_CM_RTU_LOCAL_COMM_ID   IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_RTU_REMOTE_COMM_ID  IBEMU__CM_F(4, 0, 32)
#define IBEMU_CM_RTU_PRIVATE_OFF     (IBEMU_CM_DATA_OFF + 8)
#define IBEMU_CM_RTU_PRIVATE_LEN     224
#define IBEMU_CM_DREQ_LOCAL_COMM_ID  IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_DREQ_REMOTE_COMM_ID IBEMU__CM_F(4, 0, 32)
#define IBEMU_CM_DREQ_REMOTE_QPN     IBEMU__CM_F(8, 0, 24)
#define IBEMU_CM_DREQ_PRIVATE_OFF    (IBEMU_CM_DATA_OFF + 12)
#define IBEMU_CM_DREQ_PRIVATE_LEN    220
#define IBEMU_CM_DREP_LOCAL_COMM_ID  IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_DREP_REMOTE_COMM_ID IBEMU__CM_F(4, 0, 32)
#define IBEMU_CM_DREP_PRIVATE_OFF    (IBEMU_CM_DATA_OFF + 8)
#define IBEMU_CM_DREP_PRIVATE_LEN    224

/* Tables 119, 120: SIDR_REQ, SIDR_REP. */
#define IBEMU_CM_SIDR_REQ_REQUEST_ID  IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_SIDR_REQ_PKEY	      IBEMU__CM_F(4, 0, 16)
#define IBEMU_CM_SIDR_REQ_SERVICE_ID  IBEMU__CM_F(8, 0, 64)
#define IBEMU_CM_SIDR_REQ_PRIVATE_OFF (IBEMU_CM_DATA_OFF + 16)
#define IBEMU_CM_SIDR_REQ_PRIVATE_LEN 216
#define IBEMU_CM_SIDR_REP_REQUEST_ID  IBEMU__CM_F(0, 0, 32)
#define IBEMU_CM_SIDR_REP_STATUS      IBEMU__CM_F(4, 0, 8)
#define IBEMU_CM_SIDR_REP_INFO_LENGTH IBEMU__CM_F(5, 0, 8)
#define IBEMU_CM_SIDR_REP_QPN	      IBEMU__CM_F(8, 0, 24)
#define IBEMU_CM_SIDR_REP_SERVICE_ID  IBEMU__CM_F(12, 0, 64)
#define IBEMU_CM_SIDR_REP_QKEY	      IBEMU__CM_F(20, 0, 32)
#define IBEMU_CM_SIDR_REP_PRIVATE_OFF (IBEMU_CM_DATA_OFF + 96)
#define IBEMU_CM_SIDR_REP_PRIVATE_LEN 136
/* SIDR_REP status (table 120). */
#define IBEMU_CM_SIDR_SUCCESS	  0
#define IBEMU_CM_SIDR_UNSUPPORTED 1 /* service ID not supported */
#define IBEMU_CM_SIDR_REJECT	  2

/* The field 'f' of 'mad', MSB first across bytes (at most 64 bits). */
static inline uint64_t ibemu_cm_get(const uint8_t *mad, struct ibemu_cm_field f)
{
	uint64_t v = 0;
	unsigned i, bit;

	for (i = 0; i < f.width; i++) {
		bit = f.bit + i;
		v = v << 1 | ((mad[f.byte + bit / 8] >> (7 - bit % 8)) & 1);
	}
	return v;
}

/* Sets field 'f' of 'mad' to the low f.width bits of 'v'. */
static inline void ibemu_cm_set(uint8_t *mad, struct ibemu_cm_field f,
				uint64_t v)
{
	unsigned i, bit;
	uint8_t *p, m;

	for (i = 0; i < f.width; i++) {
		bit = f.bit + i;
		p = &mad[f.byte + bit / 8];
		m = (uint8_t)(1u << (7 - bit % 8));
		if ((v >> (f.width - 1 - i)) & 1)
			*p |= m;
		else
			*p &= (uint8_t)~m;
	}
}

/*
 * Where a CM message keeps its private data, and how much (0: 'attr' is
 * not a CM message ibemu knows).
 */
static inline size_t ibemu_cm_private(uint16_t attr, size_t *len)
{
	static const struct {
		uint16_t off, len;
	} t[] = {
		[0] = {IBEMU_CM_REQ_PRIVATE_OFF, IBEMU_CM_REQ_PRIVATE_LEN},
		[1] = {IBEMU_CM_MRA_PRIVATE_OFF, IBEMU_CM_MRA_PRIVATE_LEN},
		[2] = {IBEMU_CM_REJ_PRIVATE_OFF, IBEMU_CM_REJ_PRIVATE_LEN},
		[3] = {IBEMU_CM_REP_PRIVATE_OFF, IBEMU_CM_REP_PRIVATE_LEN},
		[4] = {IBEMU_CM_RTU_PRIVATE_OFF, IBEMU_CM_RTU_PRIVATE_LEN},
		[5] = {IBEMU_CM_DREQ_PRIVATE_OFF, IBEMU_CM_DREQ_PRIVATE_LEN},
		[6] = {IBEMU_CM_DREP_PRIVATE_OFF, IBEMU_CM_DREP_PRIVATE_LEN},
		[7] = {IBEMU_CM_SIDR_REQ_PRIVATE_OFF,
		       IBEMU_CM_SIDR_REQ_PRIVATE_LEN},
		[8] = {IBEMU_CM_SIDR_REP_PRIVATE_OFF,
		       IBEMU_CM_SIDR_REP_PRIVATE_LEN},
	};

	if (attr < IBEMU_CM_ATTR_REQ || attr > IBEMU_CM_ATTR_SIDR_REP) {
		*len = 0;
		return 0;
	}
	*len = t[attr - IBEMU_CM_ATTR_REQ].len;
	return t[attr - IBEMU_CM_ATTR_REQ].off;
}

/* Starts a CM message 'attr' in 'mad' (zeroed): header, TID. */
static inline void ibemu_cm_init(uint8_t *mad, uint16_t attr, uint64_t tid)
{
	memset(mad, 0, IBEMU_MAD_LEN);
	ibemu_mad_set_base_version(mad, IBEMU_MAD_BASE_VERSION);
	ibemu_mad_set_mgmt_class(mad, IBEMU_MAD_CLASS_CM);
	ibemu_mad_set_class_version(mad, IBEMU_CM_CLASS_VERSION);
	ibemu_mad_set_method(mad, IBEMU_MAD_METHOD_SEND);
	ibemu_mad_set_tid(mad, tid);
	ibemu_mad_set_attr_id(mad, attr);
}

/*
 * Whether the 'len' bytes at 'mad' are a CM message ibemu takes: a whole
 * MAD, base version 1, class 0x07 version 2, method Send, one of the nine
 * attributes. 0, or -EINVAL (-EPROTONOSUPPORT for another class version).
 */
static inline int ibemu_cm_check(const uint8_t *mad, size_t len)
{
	uint16_t attr;

	if (len < IBEMU_MAD_LEN ||
	    ibemu_mad_get_base_version(mad) != IBEMU_MAD_BASE_VERSION ||
	    ibemu_mad_get_mgmt_class(mad) != IBEMU_MAD_CLASS_CM ||
	    ibemu_mad_get_method(mad) != IBEMU_MAD_METHOD_SEND)
		return -EINVAL;
	if (ibemu_mad_get_class_version(mad) != IBEMU_CM_CLASS_VERSION)
		return -EPROTONOSUPPORT;
	attr = ibemu_mad_get_attr_id(mad);
	if (attr < IBEMU_CM_ATTR_REQ || attr > IBEMU_CM_ATTR_SIDR_REP)
		return -EINVAL;
	return 0;
}

#endif
