/* SPDX-License-Identifier: MIT */
/*
 * The headers at the front of a MAD, read and written in place on its
 * big-endian wire image: the common MAD header (IBA 13.4.2), the RMPP
 * header of the classes that use RMPP (IBA 13.6.2.1), the SA header that
 * follows it (IBA 15.2.1.1) and the OUI of the vendor classes of range 2.
 * This is what code that forwards MADs without decoding them needs (the
 * session server, the client libraries), so it is header only and
 * includes libc only: umad/ uses it without linking ibemu-mad. The codecs
 * of whole MADs to and from host structs are in mad.h.
 *
 * Every accessor takes a pointer to byte 0 of the MAD; the caller keeps
 * the buffer long enough for the field (IBEMU_MAD_HDR_LEN bytes for the
 * common header, IBEMU_RMPP_HDR_END for RMPP, IBEMU_SA_DATA_OFF for SA).
 * Setters change the field's bits only. All may be used from any thread.
 */
#ifndef IBEMU_MAD_HDR_H
#define IBEMU_MAD_HDR_H

#include <stdint.h>

/* IBA 13.4.1: every MAD is 256 bytes, its common header 24. */
#define IBEMU_MAD_LEN	       256
#define IBEMU_MAD_HDR_LEN      24
#define IBEMU_MAD_BASE_VERSION 1

/* Management classes (IBA 13.4.4, Annex A10.4.1). */
#define IBEMU_MAD_CLASS_SUBN_LID      0x01
#define IBEMU_MAD_CLASS_SA	      0x03
#define IBEMU_MAD_CLASS_PERF	      0x04
#define IBEMU_MAD_CLASS_BM	      0x05
#define IBEMU_MAD_CLASS_DEV_MGT	      0x06
#define IBEMU_MAD_CLASS_DEV_ADM	      0x10
#define IBEMU_MAD_CLASS_BIS	      0x12
#define IBEMU_MAD_CLASS_CC	      0x21
#define IBEMU_MAD_CLASS_VENDOR2_FIRST 0x30 /* vendor classes with an OUI */
#define IBEMU_MAD_CLASS_VENDOR2_LAST  0x4f
#define IBEMU_MAD_CLASS_SUBN_DR	      0x81

/* Methods (IBA 13.4.5); the top bit of the Method byte is R (response). */
#define IBEMU_MAD_METHOD_GET	      0x01
#define IBEMU_MAD_METHOD_SET	      0x02
#define IBEMU_MAD_METHOD_SEND	      0x03
#define IBEMU_MAD_METHOD_TRAP	      0x05
#define IBEMU_MAD_METHOD_REPORT	      0x06
#define IBEMU_MAD_METHOD_TRAP_REPRESS 0x07
#define IBEMU_MAD_METHOD_RESP	      0x80
#define IBEMU_MAD_METHOD_GET_RESP     0x81
#define IBEMU_MAD_METHOD_REPORT_RESP  0x86

/*
 * Status (IBA 13.4.7): bit 0 busy, bit 1 redirect, bits 2-4 a code for
 * the invalid field, bits 8-14 class specific. In a directed-route SMP
 * bit 15 is the D bit instead (IBA 14.2.1.2), so its Status has 15 bits.
 */
#define IBEMU_MAD_STATUS_OK		    0x0000
#define IBEMU_MAD_STATUS_BUSY		    0x0001
#define IBEMU_MAD_STATUS_REDIRECT	    0x0002
#define IBEMU_MAD_STATUS_BAD_VERSION	    (1 << 2)
#define IBEMU_MAD_STATUS_METHOD_UNSUPP	    (2 << 2)
#define IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP (3 << 2)
#define IBEMU_MAD_STATUS_INVALID_FIELD	    (7 << 2)
#define IBEMU_MAD_STATUS_CODE_MASK	    0x001c

/*
 * The RMPP header (IBA 13.6.2.1) follows the common header: RMPPVersion,
 * RMPPType, RRespTime (5 bits) and RMPPFlags (3), RMPPStatus, then two
 * words whose meaning depends on the type: SegmentNumber, and
 * PayloadLength (DATA) or NewWindowLast (ACK). IBEMU_RMPP_HDR_END is
 * ib_mad's IB_MGMT_RMPP_HDR.
 */
#define IBEMU_RMPP_HDR_OFF 24
#define IBEMU_RMPP_HDR_LEN 12
#define IBEMU_RMPP_HDR_END (IBEMU_RMPP_HDR_OFF + IBEMU_RMPP_HDR_LEN)

#define IBEMU_RMPP_VERSION     1
#define IBEMU_RMPP_TYPE_DATA   1
#define IBEMU_RMPP_TYPE_ACK    2
#define IBEMU_RMPP_TYPE_STOP   3
#define IBEMU_RMPP_TYPE_ABORT  4
#define IBEMU_RMPP_FLAG_ACTIVE 0x1
#define IBEMU_RMPP_FLAG_FIRST  0x2
#define IBEMU_RMPP_FLAG_LAST   0x4

/*
 * The SA header (IBA 15.2.1.1) follows the RMPP header: SM_Key,
 * AttributeOffset (in 8-byte words), 16 reserved bits, ComponentMask;
 * then 200 bytes of data.
 */
#define IBEMU_SA_HDR_OFF  IBEMU_RMPP_HDR_END
#define IBEMU_SA_DATA_OFF 56
#define IBEMU_SA_DATA_LEN (IBEMU_MAD_LEN - IBEMU_SA_DATA_OFF)

/*
 * Vendor classes of range 2 (0x30-0x4f): after the RMPP header, a reserved
 * byte and the 24-bit OUI, then the data (libibmad's IB_VEND2_OUI_F).
 */
#define IBEMU_VENDOR2_OUI_OFF  37
#define IBEMU_VENDOR2_DATA_OFF 40

_Static_assert(IBEMU_RMPP_HDR_OFF == IBEMU_MAD_HDR_LEN,
	       "the RMPP header follows the common header");
_Static_assert(IBEMU_SA_DATA_OFF == IBEMU_SA_HDR_OFF + 8 + 2 + 2 + 8,
	       "SM_Key, AttributeOffset, reserved, ComponentMask");
_Static_assert(IBEMU_VENDOR2_OUI_OFF == IBEMU_RMPP_HDR_END + 1 &&
		       IBEMU_VENDOR2_DATA_OFF == IBEMU_VENDOR2_OUI_OFF + 3,
	       "a reserved byte, then the OUI");

/* Big-endian words at 'p', for the accessors below. */
static inline uint64_t ibemu__mad_get_be(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void ibemu__mad_set_be(uint8_t *p, unsigned bytes, uint64_t v)
{
	unsigned i;

	for (i = bytes; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

/*
 * Defines ibemu_<hdr>_get_<name>() and ibemu_<hdr>_set_<name>() for the
 * field of 'bytes' bytes at byte 'off'.
 */
#define IBEMU__MAD_BYTES(hdr, name, T, off, bytes)                     \
	static inline T ibemu_##hdr##_get_##name(const uint8_t *mad)   \
	{                                                              \
		return (T)ibemu__mad_get_be(mad + (off), bytes);       \
	}                                                              \
	static inline void ibemu_##hdr##_set_##name(uint8_t *mad, T v) \
	{                                                              \
		ibemu__mad_set_be(mad + (off), bytes, v);              \
	}

/*
 * The same for a field of 'width' bits at bit 'shift' from the least
 * significant bit of byte 'off'.
 */
#define IBEMU__MAD_BITS(hdr, name, off, shift, width)                          \
	static inline uint8_t ibemu_##hdr##_get_##name(const uint8_t *mad)     \
	{                                                                      \
		return (uint8_t)(mad[off] >> (shift) & ((1u << (width)) - 1)); \
	}                                                                      \
	static inline void ibemu_##hdr##_set_##name(uint8_t *mad, uint8_t v)   \
	{                                                                      \
		uint8_t m = (uint8_t)(((1u << (width)) - 1) << (shift));       \
		mad[off] = (uint8_t)((mad[off] & ~m) | (v << (shift)&m));      \
	}

/*
 * The common header (IBA 13.4.2). ibemu_mad_get_method() is the whole
 * byte, R bit included (0x81 is GetResp, as struct ibemu_mad_hdr holds
 * it); ibemu_mad_get_r() is the R bit alone. In a directed-route SMP,
 * Status holds D and ClassSpecific holds HopPointer and HopCount
 * (IBA 14.2.1.2).
 */
IBEMU__MAD_BYTES(mad, base_version, uint8_t, 0, 1)
IBEMU__MAD_BYTES(mad, mgmt_class, uint8_t, 1, 1)
IBEMU__MAD_BYTES(mad, class_version, uint8_t, 2, 1)
IBEMU__MAD_BYTES(mad, method, uint8_t, 3, 1)
IBEMU__MAD_BITS(mad, r, 3, 7, 1)
IBEMU__MAD_BYTES(mad, status, uint16_t, 4, 2)
IBEMU__MAD_BYTES(mad, class_specific, uint16_t, 6, 2)
IBEMU__MAD_BYTES(mad, tid, uint64_t, 8, 8)
IBEMU__MAD_BYTES(mad, attr_id, uint16_t, 16, 2)
IBEMU__MAD_BYTES(mad, attr_mod, uint32_t, 20, 4)

/* The RMPP header (IBA 13.6.2.1). */
IBEMU__MAD_BYTES(rmpp, version, uint8_t, 24, 1)
IBEMU__MAD_BYTES(rmpp, type, uint8_t, 25, 1)
IBEMU__MAD_BITS(rmpp, resp_time, 26, 3, 5)
IBEMU__MAD_BITS(rmpp, flags, 26, 0, 3)
IBEMU__MAD_BYTES(rmpp, status, uint8_t, 27, 1)
IBEMU__MAD_BYTES(rmpp, seg_num, uint32_t, 28, 4)
IBEMU__MAD_BYTES(rmpp, paylen, uint32_t, 32, 4)
IBEMU__MAD_BYTES(rmpp, new_window_last, uint32_t, 32, 4)

/* The SA header (IBA 15.2.1.1). */
IBEMU__MAD_BYTES(sa, sm_key, uint64_t, 36, 8)
IBEMU__MAD_BYTES(sa, attr_offset, uint16_t, 44, 2)
IBEMU__MAD_BYTES(sa, comp_mask, uint64_t, 48, 8)

/* Vendor classes of range 2: the OUI, 24 bits. */
IBEMU__MAD_BYTES(vendor, oui, uint32_t, IBEMU_VENDOR2_OUI_OFF, 3)

/* Whether 'mgmt_class' is a vendor class with an OUI (range 2). */
static inline int ibemu_mad_class_is_vendor2(uint8_t mgmt_class)
{
	return mgmt_class >= IBEMU_MAD_CLASS_VENDOR2_FIRST &&
	       mgmt_class <= IBEMU_MAD_CLASS_VENDOR2_LAST;
}

/*
 * Whether MADs of 'mgmt_class' carry an RMPP header: SA, DevMgt, DevAdm,
 * BIS and vendor range 2, as the kernel's ib_is_mad_class_rmpp() says.
 */
static inline int ibemu_mad_class_has_rmpp(uint8_t mgmt_class)
{
	return mgmt_class == IBEMU_MAD_CLASS_SA ||
	       mgmt_class == IBEMU_MAD_CLASS_DEV_MGT ||
	       mgmt_class == IBEMU_MAD_CLASS_DEV_ADM ||
	       mgmt_class == IBEMU_MAD_CLASS_BIS ||
	       ibemu_mad_class_is_vendor2(mgmt_class);
}

/*
 * Whether 'mad' (IBEMU_RMPP_HDR_END bytes at least) is RMPP-active: of a
 * class with an RMPP header, with the Active flag set.
 */
static inline int ibemu_rmpp_is_active(const uint8_t *mad)
{
	return ibemu_mad_class_has_rmpp(ibemu_mad_get_mgmt_class(mad)) &&
	       (ibemu_rmpp_get_flags(mad) & IBEMU_RMPP_FLAG_ACTIVE);
}

#endif
