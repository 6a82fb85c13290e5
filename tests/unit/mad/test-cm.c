// SPDX-License-Identifier: MIT
/*
 * Unit tests of the CM MAD layouts (mad/mad_cm.h). The offsets are pinned
 * byte by byte against IBA vol 1 tables 106-113, 119 and 120 as the Linux
 * kernel's include/rdma/ibta_vol1_c12.h and Wireshark's packet-infiniband.c
 * give them: fields are set and the wire bytes checked, known bytes are
 * decoded, and every field is set to all ones alone to show it touches
 * exactly its own bits.
 */
#include <errno.h>
#include <string.h>

#include "mad_cm.h"
#include "unit.h"

/* Byte 'b' of the CM message (after the 24-byte header). */
#define MSG(mad, b) ((mad)[IBEMU_CM_DATA_OFF + (b)])

static void test_header(void)
{
	uint8_t mad[IBEMU_MAD_LEN];

	ibemu_cm_init(mad, IBEMU_CM_ATTR_REP, 0x1122334455667788ull);
	T_EQ_INT(mad[0], 1);
	T_EQ_INT(mad[1], 0x07);
	T_EQ_INT(mad[2], 2);
	T_EQ_INT(mad[3], 0x03);
	T_EQ_INT(mad[8], 0x11);
	T_EQ_INT(mad[15], 0x88);
	T_EQ_INT(mad[16], 0x00);
	T_EQ_INT(mad[17], 0x13);
	T_EQ_INT(ibemu_cm_check(mad, sizeof(mad)), 0);
	T_EQ_INT(ibemu_cm_check(mad, 255), -EINVAL);
	mad[2] = 1;
	T_EQ_INT(ibemu_cm_check(mad, sizeof(mad)), -EPROTONOSUPPORT);
	mad[2] = 2;
	mad[17] = 0x19; /* LAP: not taken */
	T_EQ_INT(ibemu_cm_check(mad, sizeof(mad)), -EINVAL);
	mad[17] = 0x10;
	mad[3] = 0x81;
	T_EQ_INT(ibemu_cm_check(mad, sizeof(mad)), -EINVAL);
}

/* Table 106 as the kernel's CM_REQ_* give it. */
static void test_req_bytes(void)
{
	uint8_t mad[IBEMU_MAD_LEN] = {0};

	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_COMM_ID, 0xa1b2c3d4);
	T_EQ_INT(MSG(mad, 0), 0xa1);
	T_EQ_INT(MSG(mad, 3), 0xd4);
	ibemu_cm_set(mad, IBEMU_CM_REQ_SERVICE_ID,
		     0x0000000001060000ull | 7174);
	T_EQ_INT(MSG(mad, 11), 0x00);
	T_EQ_INT(MSG(mad, 12), 0x01);
	T_EQ_INT(MSG(mad, 13), 0x06);
	T_EQ_INT(MSG(mad, 14), 7174 >> 8);
	T_EQ_INT(MSG(mad, 15), 7174 & 0xff);
	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_QPN, 0x123456);
	ibemu_cm_set(mad, IBEMU_CM_REQ_RESPONDER_RESOURCES, 0x9a);
	T_EQ_INT(MSG(mad, 32), 0x12);
	T_EQ_INT(MSG(mad, 34), 0x56);
	T_EQ_INT(MSG(mad, 35), 0x9a);
	ibemu_cm_set(mad, IBEMU_CM_REQ_REMOTE_CM_RESP_TIMEOUT, 20);
	ibemu_cm_set(mad, IBEMU_CM_REQ_TRANSPORT_SERVICE_TYPE, 1);
	ibemu_cm_set(mad, IBEMU_CM_REQ_END_TO_END_FLOW_CONTROL, 1);
	T_EQ_INT(MSG(mad, 43), 20 << 3 | 1 << 1 | 1);
	ibemu_cm_set(mad, IBEMU_CM_REQ_STARTING_PSN, 0xabcdef);
	ibemu_cm_set(mad, IBEMU_CM_REQ_LOCAL_CM_RESP_TIMEOUT, 20);
	ibemu_cm_set(mad, IBEMU_CM_REQ_RETRY_COUNT, 7);
	T_EQ_INT(MSG(mad, 44), 0xab);
	T_EQ_INT(MSG(mad, 46), 0xef);
	T_EQ_INT(MSG(mad, 47), 20 << 3 | 7);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PKEY, 0xffff);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PATH_MTU, 5);
	ibemu_cm_set(mad, IBEMU_CM_REQ_RNR_RETRY_COUNT, 6);
	ibemu_cm_set(mad, IBEMU_CM_REQ_MAX_CM_RETRIES, 15);
	ibemu_cm_set(mad, IBEMU_CM_REQ_SRQ, 1);
	T_EQ_INT(MSG(mad, 48), 0xff);
	T_EQ_INT(MSG(mad, 50), 5 << 4 | 6);
	T_EQ_INT(MSG(mad, 51), 15 << 4 | 1 << 3);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_LOCAL_LID, 0x0102);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_REMOTE_LID, 0x0304);
	T_EQ_INT(MSG(mad, 52), 0x01);
	T_EQ_INT(MSG(mad, 55), 0x04);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_FLOW_LABEL, 0xfffff);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_PACKET_RATE, 16);
	T_EQ_INT(MSG(mad, 88), 0xff);
	T_EQ_INT(MSG(mad, 90), 0xf0);
	T_EQ_INT(MSG(mad, 91), 16);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_SL, 3);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_SUBNET_LOCAL, 1);
	ibemu_cm_set(mad, IBEMU_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, 18);
	T_EQ_INT(MSG(mad, 94), 3 << 4 | 1 << 3);
	T_EQ_INT(MSG(mad, 95), 18 << 3);
	T_EQ_INT(IBEMU_CM_REQ_PRIMARY_LOCAL_GID_OFF, 24 + 56);
	T_EQ_INT(IBEMU_CM_REQ_PRIMARY_REMOTE_GID_OFF, 24 + 72);
	T_EQ_INT(IBEMU_CM_REQ_PRIVATE_OFF + IBEMU_CM_REQ_PRIVATE_LEN, 256);
}

/* Known bytes decode: tables 107, 108, 110-113, 119, 120. */
static void test_decode_known(void)
{
	uint8_t mad[IBEMU_MAD_LEN] = {0};

	MSG(mad, 8) = 0x40; /* MRA: Message MRAed 1 (REP) */
	MSG(mad, 9) = 0xc0; /* Service Timeout 24 */
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_MRA_MESSAGE_MRAED), 1);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_MRA_SERVICE_TIMEOUT), 24);
	memset(mad, 0, sizeof(mad));
	MSG(mad, 4) = 0xde;
	MSG(mad, 7) = 0xef;
	MSG(mad, 9) = 0x02 << 1; /* REJ: info length 2 */
	MSG(mad, 11) = 28;
	T_EQ_U64(ibemu_cm_get(mad, IBEMU_CM_REJ_REMOTE_COMM_ID), 0xde0000ef);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REJ_INFO_LENGTH), 2);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REJ_REASON), 28);
	T_EQ_INT(IBEMU_CM_REJ_PRIVATE_OFF, 24 + 84);
	memset(mad, 0, sizeof(mad));
	MSG(mad, 12) = 0x00; /* REP: QPN 0x0000a5, vendor high byte 0x77 */
	MSG(mad, 14) = 0xa5;
	MSG(mad, 15) = 0x77;
	MSG(mad, 20) = 0x01; /* Starting PSN 0x010203 */
	MSG(mad, 21) = 0x02;
	MSG(mad, 22) = 0x03;
	MSG(mad, 26) = 17 << 3 | 1;	/* Target ACK delay, E2E flow control */
	MSG(mad, 27) = 7 << 5 | 1 << 4; /* RNR retry 7, SRQ */
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REP_LOCAL_QPN), 0xa5);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REP_STARTING_PSN), 0x010203);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REP_TARGET_ACK_DELAY), 17);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REP_END_TO_END_FLOW), 1);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REP_RNR_RETRY_COUNT), 7);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_REP_SRQ), 1);
	T_EQ_INT(IBEMU_CM_REP_PRIVATE_OFF, 24 + 36);
	memset(mad, 0, sizeof(mad));
	MSG(mad, 8) = 0x00; /* DREQ: Remote QPN 0x00beef */
	MSG(mad, 9) = 0xbe;
	MSG(mad, 10) = 0xef;
	MSG(mad, 11) = 0xff; /* reserved */
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_DREQ_REMOTE_QPN), 0xbeef);
	T_EQ_INT(IBEMU_CM_DREQ_PRIVATE_OFF, 24 + 12);
	T_EQ_INT(IBEMU_CM_RTU_PRIVATE_OFF, 24 + 8);
	T_EQ_INT(IBEMU_CM_DREP_PRIVATE_OFF, 24 + 8);
	memset(mad, 0, sizeof(mad));
	MSG(mad, 4) = 0xff; /* SIDR_REQ: P_Key */
	MSG(mad, 5) = 0xff;
	MSG(mad, 15) = 0x42; /* service ID */
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_SIDR_REQ_PKEY), 0xffff);
	T_EQ_U64(ibemu_cm_get(mad, IBEMU_CM_SIDR_REQ_SERVICE_ID), 0x42);
	memset(mad, 0, sizeof(mad));
	MSG(mad, 4) = 1; /* SIDR_REP: status, QPN, service ID, Q_Key */
	MSG(mad, 10) = 0x99;
	MSG(mad, 11) = 0x55; /* vendor ID low byte */
	MSG(mad, 19) = 0x11;
	MSG(mad, 20) = 0x01;
	MSG(mad, 23) = 0x67;
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_STATUS), 1);
	T_EQ_INT(ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_QPN), 0x99);
	T_EQ_U64(ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_SERVICE_ID), 0x11);
	T_EQ_U64(ibemu_cm_get(mad, IBEMU_CM_SIDR_REP_QKEY), 0x01000067);
	T_EQ_INT(IBEMU_CM_SIDR_REP_PRIVATE_OFF, 24 + 96);
}

/* Each field set to all ones alone sets exactly its own bits. */
static void check_alone(struct ibemu_cm_field f)
{
	uint8_t mad[IBEMU_MAD_LEN] = {0};
	unsigned bits = 0, i;
	uint64_t ones = f.width == 64 ? ~0ull : (1ull << f.width) - 1;

	ibemu_cm_set(mad, f, ones);
	for (i = 0; i < sizeof(mad); i++)
		bits += (unsigned)__builtin_popcount(mad[i]);
	T_EQ_INT(bits, f.width);
	T_EQ_U64(ibemu_cm_get(mad, f), ones);
	T_EQ_INT(mad[f.byte] >> (7 - f.bit) & 1, 1);
	ibemu_cm_set(mad, f, 0);
	for (i = 0; i < sizeof(mad); i++)
		T_EQ_INT(mad[i], 0);
}

static void test_fields_alone(void)
{
	const struct ibemu_cm_field f[] = {
		IBEMU_CM_REQ_LOCAL_COMM_ID,
		IBEMU_CM_REQ_SERVICE_ID,
		IBEMU_CM_REQ_LOCAL_QPN,
		IBEMU_CM_REQ_REMOTE_CM_RESP_TIMEOUT,
		IBEMU_CM_REQ_TRANSPORT_SERVICE_TYPE,
		IBEMU_CM_REQ_STARTING_PSN,
		IBEMU_CM_REQ_RETRY_COUNT,
		IBEMU_CM_REQ_PATH_MTU,
		IBEMU_CM_REQ_RNR_RETRY_COUNT,
		IBEMU_CM_REQ_MAX_CM_RETRIES,
		IBEMU_CM_REQ_PRIMARY_FLOW_LABEL,
		IBEMU_CM_REQ_PRIMARY_PACKET_RATE,
		IBEMU_CM_REQ_PRIMARY_SL,
		IBEMU_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT,
		IBEMU_CM_MRA_MESSAGE_MRAED,
		IBEMU_CM_MRA_SERVICE_TIMEOUT,
		IBEMU_CM_REJ_INFO_LENGTH,
		IBEMU_CM_REJ_REASON,
		IBEMU_CM_REP_TARGET_ACK_DELAY,
		IBEMU_CM_REP_FAILOVER_ACCEPTED,
		IBEMU_CM_REP_RNR_RETRY_COUNT,
		IBEMU_CM_REP_LOCAL_CA_GUID,
		IBEMU_CM_DREQ_REMOTE_QPN,
		IBEMU_CM_SIDR_REP_QKEY,
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		check_alone(f[i]);
}

static void test_private(void)
{
	size_t len, off;

	off = ibemu_cm_private(IBEMU_CM_ATTR_REQ, &len);
	T_EQ_INT(off, 164);
	T_EQ_INT(len, 92);
	off = ibemu_cm_private(IBEMU_CM_ATTR_SIDR_REP, &len);
	T_EQ_INT(off, 120);
	T_EQ_INT(len, 136);
	off = ibemu_cm_private(IBEMU_CM_ATTR_REJ, &len);
	T_EQ_INT(off + len, 256);
	T_EQ_INT(ibemu_cm_private(0x19, &len), 0);
	T_EQ_INT(len, 0);
}

void ibemu_test_register_mad_cm(void)
{
	static const struct ibemu_test tests[] = {
		{"header", test_header},
		{"req_bytes", test_req_bytes},
		{"decode_known", test_decode_known},
		{"fields_alone", test_fields_alone},
		{"private", test_private},
		{NULL, NULL},
	};

	ibemu_test_add_suite("mad.cm", tests);
}
