/* SPDX-License-Identifier: MIT */
/*
 * Management datagrams (IBA vol 1, ch. 13-16 and Annex A10): the 256-byte
 * MAD, its 24-byte common header, and the framings of the three classes
 * ibemu speaks: subnet management (LID-routed and directed-route SMPs),
 * performance management (PMA) and congestion control (CC). Host structs
 * hold values in host order; the codecs move them to and from the
 * big-endian wire image, never by casting a packed struct onto a buffer.
 *
 * Attributes are in mad_sma.h, mad_pma.h and mad_cc.h; the table-driven
 * codec under all of them is mad_layout.h. The lengths, classes, methods
 * and status codes, and accessors of the headers in place on a wire
 * image, are in mad_hdr.h.
 */
#ifndef IBEMU_MAD_H
#define IBEMU_MAD_H

#include <stddef.h>
#include <stdint.h>

#include "mad_hdr.h"
#include "mad_layout.h"

/* Class versions ibemu speaks (IBA 14.2.1, 16.1.1; A10.4.1 says 2). */
#define IBEMU_MAD_SMP_CLASS_VERSION  1
#define IBEMU_MAD_PERF_CLASS_VERSION 1
#define IBEMU_MAD_CC_CLASS_VERSION   2

/* Attributes shared by the GS classes (IBA 13.4.8). */
#define IBEMU_MAD_ATTR_CLASS_PORT_INFO 0x0001
#define IBEMU_MAD_ATTR_NOTICE	       0x0002

/* The common MAD header (IBA 13.4.2), without its reserved field. */
struct ibemu_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method; /* R bit included: 0x81 is GetResp */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/*
 * SMP framing (IBA 14.2.1). LID-routed: header, M_Key, 32 reserved bytes,
 * 64 bytes of data, 128 reserved. Directed route: the header's Status word
 * holds D and a 15-bit Status and its ClassSpecific word HopPointer and
 * HopCount; after M_Key come DrSLID, DrDLID, 28 reserved bytes, the data,
 * InitialPath and ReturnPath.
 */
#define IBEMU_SMP_MKEY_OFF	   24
#define IBEMU_SMP_DR_SLID_OFF	   32
#define IBEMU_SMP_DR_DLID_OFF	   34
#define IBEMU_SMP_DATA_OFF	   64
#define IBEMU_SMP_DATA_LEN	   64
#define IBEMU_SMP_INITIAL_PATH_OFF 128
#define IBEMU_SMP_RETURN_PATH_OFF  192
#define IBEMU_SMP_PATH_LEN	   64 /* IBA 14.2.1.2: at most 63 hops */

_Static_assert(IBEMU_SMP_MKEY_OFF == IBEMU_MAD_HDR_LEN, "M_Key follows header");
_Static_assert(IBEMU_SMP_DR_SLID_OFF == IBEMU_SMP_MKEY_OFF + 8, "DrSLID");
_Static_assert(IBEMU_SMP_DR_DLID_OFF == IBEMU_SMP_DR_SLID_OFF + 2, "DrDLID");
_Static_assert(IBEMU_SMP_DATA_OFF == IBEMU_SMP_DR_DLID_OFF + 2 + 28,
	       "28 reserved bytes before the SMP data");
_Static_assert(IBEMU_SMP_INITIAL_PATH_OFF ==
		       IBEMU_SMP_DATA_OFF + IBEMU_SMP_DATA_LEN,
	       "InitialPath follows the data");
_Static_assert(IBEMU_SMP_RETURN_PATH_OFF ==
		       IBEMU_SMP_INITIAL_PATH_OFF + IBEMU_SMP_PATH_LEN,
	       "ReturnPath follows InitialPath");
_Static_assert(IBEMU_SMP_RETURN_PATH_OFF + IBEMU_SMP_PATH_LEN == IBEMU_MAD_LEN,
	       "a DR SMP fills the MAD");

struct ibemu_mad_smp {
	/*
	 * For a directed-route SMP, hdr.status is the 15-bit Status and
	 * hdr.class_specific is unused (0 after decoding).
	 */
	struct ibemu_mad_hdr hdr;
	uint8_t d;	 /* DR: 1 on the way back to the requester */
	uint8_t hop_ptr; /* DR */
	uint8_t hop_cnt; /* DR */
	uint64_t m_key;
	uint16_t dr_slid; /* DR */
	uint16_t dr_dlid; /* DR */
	uint8_t data[IBEMU_SMP_DATA_LEN];
	uint8_t initial_path[IBEMU_SMP_PATH_LEN]; /* DR */
	uint8_t return_path[IBEMU_SMP_PATH_LEN];  /* DR */
};

/*
 * The fields of a directed-route SMP (IBA 14.2.1.2) in place: D (the top
 * bit of Status), HopPointer and HopCount (ClassSpecific), DrSLID and
 * DrDLID; the paths are the 64 bytes at IBEMU_SMP_INITIAL_PATH_OFF and
 * IBEMU_SMP_RETURN_PATH_OFF, indexed by hop.
 */
IBEMU__MAD_BITS(smp, d, 4, 7, 1)
IBEMU__MAD_BYTES(smp, hop_ptr, uint8_t, 6, 1)
IBEMU__MAD_BYTES(smp, hop_cnt, uint8_t, 7, 1)
IBEMU__MAD_BYTES(smp, dr_slid, uint16_t, IBEMU_SMP_DR_SLID_OFF, 2)
IBEMU__MAD_BYTES(smp, dr_dlid, uint16_t, IBEMU_SMP_DR_DLID_OFF, 2)

/*
 * PMA framing (IBA 16.1.1): the GS layout without RMPP, header, 40 reserved
 * bytes, 192 bytes of data.
 */
#define IBEMU_PMA_DATA_OFF 64
#define IBEMU_PMA_DATA_LEN 192
_Static_assert(IBEMU_PMA_DATA_OFF == IBEMU_MAD_HDR_LEN + 40, "PMA reserved");
_Static_assert(IBEMU_PMA_DATA_OFF + IBEMU_PMA_DATA_LEN == IBEMU_MAD_LEN,
	       "PMA data fills the MAD");

struct ibemu_mad_pma {
	struct ibemu_mad_hdr hdr;
	uint8_t data[IBEMU_PMA_DATA_LEN];
};

/*
 * CC framing (IBA Annex A10.4.1): header, CC_Key, 32 bytes that only the
 * CongestionLog attribute uses (it needs 224 bytes), then 192 bytes of
 * data for every other attribute. The host struct keeps bytes 32-255.
 */
#define IBEMU_CC_KEY_OFF      24
#define IBEMU_CC_LOG_DATA_OFF 32
#define IBEMU_CC_LOG_DATA_LEN 224
#define IBEMU_CC_DATA_OFF     64
#define IBEMU_CC_DATA_LEN     192
_Static_assert(IBEMU_CC_KEY_OFF == IBEMU_MAD_HDR_LEN, "CC_Key follows header");
_Static_assert(IBEMU_CC_LOG_DATA_OFF == IBEMU_CC_KEY_OFF + 8, "log data");
_Static_assert(IBEMU_CC_DATA_OFF == IBEMU_CC_LOG_DATA_OFF + 32,
	       "32 bytes between CC_Key and the data");
_Static_assert(IBEMU_CC_DATA_OFF + IBEMU_CC_DATA_LEN == IBEMU_MAD_LEN &&
		       IBEMU_CC_LOG_DATA_OFF + IBEMU_CC_LOG_DATA_LEN ==
			       IBEMU_MAD_LEN,
	       "CC data fills the MAD");

struct ibemu_mad_cc {
	struct ibemu_mad_hdr hdr;
	uint64_t cc_key;
	uint8_t data[IBEMU_CC_LOG_DATA_LEN]; /* MAD bytes 32..255 */
};

_Static_assert(sizeof(((struct ibemu_mad_smp *)0)->data) == IBEMU_SMP_DATA_LEN,
	       "SMP data");
_Static_assert(sizeof(((struct ibemu_mad_pma *)0)->data) == IBEMU_PMA_DATA_LEN,
	       "PMA data");
_Static_assert(sizeof(((struct ibemu_mad_cc *)0)->data) ==
		       IBEMU_CC_LOG_DATA_LEN,
	       "CC data");

/*
 * Where a CC attribute's payload sits in 'mad': the whole 224 bytes for
 * CongestionLog, the last 192 for the others. Sets '*len'.
 */
uint8_t *ibemu_mad_cc_payload(struct ibemu_mad_cc *mad, size_t *len);

/*
 * Codecs. Encoders write the whole wire image (IBEMU_MAD_HDR_LEN bytes for
 * a header, IBEMU_MAD_LEN for a MAD) with reserved bytes 0 and return 0,
 * -ENOSPC if 'len' is too short, -ERANGE if a value does not fit its field
 * (a DR SMP's Status above 0x7fff, d above 1) or -EINVAL for an SMP whose
 * class is neither SubnLID nor SubnDR. Decoders return 0 or -EINVAL (too
 * short, or that SMP class check) and read no byte past 'len'. Decoders do
 * not judge values: answering a bad version or method is the agent's job.
 */
int ibemu_mad_hdr_encode(const struct ibemu_mad_hdr *hdr, uint8_t *buf,
			 size_t len);
int ibemu_mad_hdr_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_hdr *hdr);
/*
 * LID-routed or directed route, as hdr.mgmt_class says; a LID-routed SMP
 * ignores the DR-only members.
 */
int ibemu_mad_smp_encode(const struct ibemu_mad_smp *smp, uint8_t *buf,
			 size_t len);
int ibemu_mad_smp_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_smp *smp);
int ibemu_mad_pma_encode(const struct ibemu_mad_pma *mad, uint8_t *buf,
			 size_t len);
int ibemu_mad_pma_decode(const uint8_t *buf, size_t len,
			 struct ibemu_mad_pma *mad);
int ibemu_mad_cc_encode(const struct ibemu_mad_cc *mad, uint8_t *buf,
			size_t len);
int ibemu_mad_cc_decode(const uint8_t *buf, size_t len,
			struct ibemu_mad_cc *mad);

extern const struct ibemu_mad_layout ibemu_mad_hdr_layout;
extern const struct ibemu_mad_layout ibemu_mad_smp_lid_layout;
extern const struct ibemu_mad_layout ibemu_mad_smp_dr_layout;
extern const struct ibemu_mad_layout ibemu_mad_pma_layout;
extern const struct ibemu_mad_layout ibemu_mad_cc_layout;

#endif
