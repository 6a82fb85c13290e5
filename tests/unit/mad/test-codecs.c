// SPDX-License-Identifier: MIT
/*
 * Unit tests of the MAD formats and codecs (mad/). Besides round trips and
 * error paths, every field that libibmad's field table also defines is
 * cross-checked against libibmad in both directions, from one table of
 * (ibemu field, libibmad field) pairs; the framings are also checked
 * against rdma-core's packed structs (<infiniband/umad_sm.h>), and the
 * in-place header accessors of mad_hdr.h against libibmad's header, RMPP
 * and SA fields.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_types.h>

#include "mad.h"
#include "mad_cc.h"
#include "mad_pma.h"
#include "mad_sma.h"
#include "unit.h"
#include "util.h"

#define ROUNDS 64
#define POS    64 /* where a layout is encoded in a test buffer */
#define BUFLEN 1024

/* splitmix64: seeded, so every failure reproduces. */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t mask(unsigned width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/* Host structs and wire images are at most this big. */
union host {
	uint64_t align;
	uint8_t b[2048];
};

static void fill_random(const struct ibemu_mad_layout *l, void *host,
			struct rng *r)
{
	const struct ibemu_mad_field *f;
	unsigned i;

	memset(host, 0, l->host_size);
	for (f = l->fields; f < l->fields + l->nfields; f++)
		for (i = 0; i < f->count; i++)
			ibemu_mad_field_set(f, host, i,
					    rng_next(r) & mask(f->width));
}

/*
 * Big-endian bit strings, written here bit by bit so that the tests do not
 * lean on the code under test.
 */
static uint64_t bitstr_get(const uint8_t *p, unsigned bit, unsigned width)
{
	uint64_t v = 0;
	unsigned i;

	for (i = bit; i < bit + width; i++)
		v = v << 1 | ((p[i / 8] >> (7 - i % 8)) & 1);
	return v;
}

static void bitstr_put(uint8_t *p, unsigned bit, unsigned width, uint64_t v)
{
	unsigned i;

	for (i = 0; i < width; i++) {
		unsigned b = bit + width - 1 - i;
		uint8_t m = (uint8_t)(0x80 >> (b % 8));

		p[b / 8] =
			(uint8_t)((v >> i) & 1 ? p[b / 8] | m : p[b / 8] & ~m);
	}
}

static void test_bits(void)
{
	uint8_t b[24] = {0};

	ibemu_mad_bits_put(b, 6, 12, 0xabc);
	T_EQ_INT(b[0], 0x02);
	T_EQ_INT(b[1], 0xaf);
	T_EQ_INT(b[2], 0x00);
	T_EQ_U64(ibemu_mad_bits_get(b, 6, 12), 0xabc);
	ibemu_mad_bits_put(b, 68, 64, 0x0123456789abcdefull);
	T_EQ_INT(b[8], 0x00);
	T_EQ_INT(b[9], 0x12);
	T_EQ_INT(b[15], 0xde);
	T_EQ_INT(b[16], 0xf0);
	T_EQ_U64(ibemu_mad_bits_get(b, 68, 64), 0x0123456789abcdefull);
	T_EQ_U64(bitstr_get(b, 68, 64), 0x0123456789abcdefull);
	/* Neighbours are left alone. */
	memset(b, 0xff, sizeof(b));
	ibemu_mad_bits_put(b, 3, 2, 0);
	T_EQ_INT(b[0], 0xe7);
	ibemu_mad_bits_put(b, 15, 2, 0);
	T_EQ_INT(b[1], 0xfe);
	T_EQ_INT(b[2], 0x7f);
	T_EQ_U64(ibemu_mad_bits_get(b, 15, 2), 0);
	T_EQ_U64(ibemu_mad_bits_get(b, 14, 4), 0x9);
}

/*
 * Every offset within a byte and every width against the bit-by-bit
 * reference: the value read back, bits past the width dropped, and the
 * bits around the field left as they were (both backgrounds).
 */
static void test_bits_all(void)
{
	const uint64_t v = 0xfedcba9876543210ull;
	unsigned bit, width, bg, i;
	uint8_t b[24], ref[24];

	for (bg = 0; bg < 2; bg++)
		for (bit = 0; bit < 16; bit++)
			for (width = 1; width <= 64; width++) {
				uint64_t want =
					width == 64 ? v
						    : v & ((1ull << width) - 1);

				memset(b, bg ? 0xff : 0x00, sizeof(b));
				memset(ref, bg ? 0xff : 0x00, sizeof(ref));
				ibemu_mad_bits_put(b, bit, width, v);
				bitstr_put(ref, bit, width, want);
				for (i = 0; i < sizeof(b); i++)
					T_EQ_INT(b[i], ref[i]);
				T_EQ_U64(ibemu_mad_bits_get(b, bit, width),
					 want);
				T_EQ_U64(ibemu_mad_bits_get(ref, bit, width),
					 bitstr_get(ref, bit, width));
			}
}

/* Fields stay inside the wire image and the host struct and never overlap. */
static void check_layout(const struct ibemu_mad_layout *l)
{
	uint8_t wire[IBEMU_MAD_LEN * 8] = {0};
	uint8_t host[sizeof(union host)] = {0};
	const struct ibemu_mad_field *f, *g;
	unsigned i, b;
	int ok = 1;

	T_TRUE(l->wire_len <= IBEMU_MAD_LEN && l->host_size <= sizeof(host));
	for (f = l->fields; f < l->fields + l->nfields; f++) {
		ok &= f->width >= 1 && f->width <= 64;
		ok &= f->host_size == 1 || f->host_size == 2 ||
		      f->host_size == 4 || f->host_size == 8;
		ok &= f->width <= f->host_size * 8u && f->count >= 1;
		ok &= f->count == 1 ||
		      (f->stride >= f->width && f->host_stride >= f->host_size);
		for (g = l->fields; g < f; g++)
			ok &= strcmp(f->name, g->name) != 0;
		for (i = 0; i < f->count; i++) {
			unsigned at = f->bit + i * f->stride;
			size_t h = f->host_off + (size_t)i * f->host_stride;

			ok &= at + f->width <= l->wire_len * 8u;
			ok &= h + f->host_size <= l->host_size;
			if (!ok)
				break;
			for (b = at; b < at + f->width; b++)
				ok &= !wire[b]++;
			for (b = 0; b < f->host_size; b++)
				ok &= !host[h + b]++;
		}
		if (!ok) {
			fprintf(stderr, "layout %s: bad field %s\n", l->name,
				f->name);
			break;
		}
	}
	T_TRUE(ok);
}

static void test_layouts(void)
{
	const struct ibemu_mad_layout *const *l;
	unsigned n = 0;

	for (l = ibemu_mad_layouts; *l; l++, n++)
		check_layout(*l);
	T_TRUE(n >= 33);
	T_TRUE(ibemu_mad_layout_field(&ibemu_mad_port_info_layout, "LMC") !=
	       NULL);
	T_TRUE(!ibemu_mad_layout_field(&ibemu_mad_port_info_layout, "LCM"));
}

/*
 * decode(encode(x)) == x for random x; encoding writes exactly wire_len
 * bytes; buffers are malloc'ed at their exact size so the sanitizers see
 * any access past them.
 */
static void test_roundtrip(void)
{
	const struct ibemu_mad_layout *const *lp;
	struct rng r = {1};

	for (lp = ibemu_mad_layouts; *lp; lp++) {
		const struct ibemu_mad_layout *l = *lp;
		uint8_t *wire = malloc(l->wire_len),
			*again = malloc(l->wire_len);
		uint8_t canary[IBEMU_MAD_LEN + 16];
		union host a, b;
		unsigned k;

		for (k = 0; k < ROUNDS; k++) {
			fill_random(l, &a, &r);
			T_EQ_INT(ibemu_mad_layout_encode(l, &a, wire,
							 l->wire_len),
				 0);
			T_EQ_INT(ibemu_mad_layout_decode(l, wire, l->wire_len,
							 &b),
				 0);
			T_TRUE(!memcmp(&a, &b, l->host_size));
			T_EQ_INT(ibemu_mad_layout_encode(l, &b, again,
							 l->wire_len),
				 0);
			T_TRUE(!memcmp(wire, again, l->wire_len));
		}
		memset(canary, 0xa5, sizeof(canary));
		T_EQ_INT(ibemu_mad_layout_encode(l, &a, canary, sizeof(canary)),
			 0);
		for (k = l->wire_len; k < sizeof(canary); k++)
			if (canary[k] != 0xa5)
				break;
		T_EQ_INT(k, sizeof(canary));
		free(wire);
		free(again);
	}
}

/* Short buffers and values too wide fail, and change nothing. */
static void test_errors(void)
{
	const struct ibemu_mad_layout *const *lp;
	struct rng r = {2};

	for (lp = ibemu_mad_layouts; *lp; lp++) {
		const struct ibemu_mad_layout *l = *lp;
		const struct ibemu_mad_field *f;
		uint8_t wire[IBEMU_MAD_LEN], before[IBEMU_MAD_LEN];
		union host a, b;

		fill_random(l, &a, &r);
		memset(wire, 0x5a, sizeof(wire));
		memcpy(before, wire, sizeof(wire));
		T_EQ_INT(ibemu_mad_layout_encode(l, &a, wire, l->wire_len - 1),
			 -ENOSPC);
		memset(&b, 0x77, sizeof(b));
		T_EQ_INT(ibemu_mad_layout_decode(l, wire, l->wire_len - 1, &b),
			 -EINVAL);
		T_EQ_INT(b.b[0], 0x77);
		for (f = l->fields; f < l->fields + l->nfields; f++) {
			union host c = a;

			if (f->width == f->host_size * 8)
				continue;
			ibemu_mad_field_set(f, &c, f->count - 1,
					    1ull << f->width);
			T_EQ_INT(ibemu_mad_layout_encode(l, &c, wire,
							 sizeof(wire)),
				 -ERANGE);
		}
		T_TRUE(!memcmp(wire, before, sizeof(wire)));
	}
}

static void test_framings(void)
{
	struct ibemu_mad_smp smp = {0}, back;
	struct ibemu_mad_cc cc = {0};
	uint8_t wire[IBEMU_MAD_LEN];
	size_t len;

	smp.hdr.base_version = 1;
	smp.hdr.mgmt_class = IBEMU_MAD_CLASS_PERF;
	T_EQ_INT(ibemu_mad_smp_encode(&smp, wire, sizeof(wire)), -EINVAL);
	smp.hdr.mgmt_class = IBEMU_MAD_CLASS_SUBN_DR;
	smp.hdr.status = 0x7fff;
	smp.d = 1;
	smp.hop_ptr = 3;
	smp.hop_cnt = 4;
	T_EQ_INT(ibemu_mad_smp_encode(&smp, wire, sizeof(wire)), 0);
	T_EQ_INT(wire[4], 0xff);
	T_EQ_INT(wire[5], 0xff);
	T_EQ_INT(wire[6], 3);
	T_EQ_INT(wire[7], 4);
	T_EQ_INT(ibemu_mad_smp_decode(wire, sizeof(wire) - 1, &back), -EINVAL);
	T_EQ_INT(ibemu_mad_smp_decode(wire, sizeof(wire), &back), 0);
	T_EQ_INT(back.d, 1);
	T_EQ_INT(back.hdr.status, 0x7fff);
	T_EQ_INT(back.hdr.class_specific, 0);
	smp.hdr.status = 0x8000; /* would clobber D */
	T_EQ_INT(ibemu_mad_smp_encode(&smp, wire, sizeof(wire)), -ERANGE);
	smp.hdr.status = 0;
	smp.d = 2;
	T_EQ_INT(ibemu_mad_smp_encode(&smp, wire, sizeof(wire)), -ERANGE);
	wire[1] = IBEMU_MAD_CLASS_CC;
	T_EQ_INT(ibemu_mad_smp_decode(wire, sizeof(wire), &back), -EINVAL);

	/* A LID-routed SMP keeps its Status word whole and no DR fields. */
	smp.hdr.mgmt_class = IBEMU_MAD_CLASS_SUBN_LID;
	smp.hdr.status = 0x801c;
	smp.hdr.class_specific = 0x1234;
	T_EQ_INT(ibemu_mad_smp_encode(&smp, wire, sizeof(wire)), 0);
	T_EQ_INT(ibemu_mad_smp_decode(wire, sizeof(wire), &back), 0);
	T_EQ_INT(back.hdr.status, 0x801c);
	T_EQ_INT(back.hdr.class_specific, 0x1234);
	T_EQ_INT(back.d + back.hop_ptr + back.hop_cnt, 0);

	cc.hdr.attr_id = IBEMU_CC_ATTR_CONGESTION_LOG;
	T_TRUE(ibemu_mad_cc_payload(&cc, &len) == cc.data);
	T_EQ_INT(len, IBEMU_CC_LOG_DATA_LEN);
	cc.hdr.attr_id = IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE;
	T_TRUE(ibemu_mad_cc_payload(&cc, &len) == cc.data + 32);
	T_EQ_INT(len, IBEMU_CC_DATA_LEN);
}

/*
 * rdma-core's packed structs are a second, independent statement of the
 * framings (and of ClassPortInfo): build MADs with them, decode with ibemu,
 * and encode back to the same bytes.
 */
static void test_umad_structs(void)
{
	struct umad_smp u;
	struct umad_class_port_info c;
	struct ibemu_mad_smp smp;
	struct ibemu_mad_class_port_info cpi;
	uint8_t wire[IBEMU_MAD_LEN];
	unsigned i;

	T_EQ_INT(sizeof(struct umad_hdr), IBEMU_MAD_HDR_LEN);
	T_EQ_INT(sizeof(u), IBEMU_MAD_LEN);
	T_EQ_INT(offsetof(struct umad_smp, mkey), IBEMU_SMP_MKEY_OFF);
	T_EQ_INT(offsetof(struct umad_smp, dr_slid), IBEMU_SMP_DR_SLID_OFF);
	T_EQ_INT(offsetof(struct umad_smp, dr_dlid), IBEMU_SMP_DR_DLID_OFF);
	T_EQ_INT(offsetof(struct umad_smp, data), IBEMU_SMP_DATA_OFF);
	T_EQ_INT(offsetof(struct umad_smp, initial_path),
		 IBEMU_SMP_INITIAL_PATH_OFF);
	T_EQ_INT(offsetof(struct umad_smp, return_path),
		 IBEMU_SMP_RETURN_PATH_OFF);
	T_EQ_INT(offsetof(struct umad_dm_packet, data), IBEMU_PMA_DATA_OFF);
	T_EQ_INT(sizeof(c), IBEMU_MAD_CLASS_PORT_INFO_LEN);
	T_EQ_INT(IB_CC_DATA_OFFS, IBEMU_CC_DATA_OFF);
	T_EQ_INT(IB_CC_LOG_DATA_OFFS, IBEMU_CC_LOG_DATA_OFF);
	T_EQ_INT(IB_PC_DATA_OFFS, IBEMU_PMA_DATA_OFF);
	T_EQ_INT(IB_SMP_DATA_OFFS, IBEMU_SMP_DATA_OFF);

	memset(&u, 0, sizeof(u));
	u.base_version = 1;
	u.mgmt_class = UMAD_CLASS_SUBN_DIRECTED_ROUTE;
	u.class_version = 1;
	u.method = UMAD_METHOD_GET_RESP;
	u.status = htobe16(UMAD_SMP_DIRECTION | UMAD_STATUS_INVALID_ATTR_VALUE);
	u.hop_ptr = 2;
	u.hop_cnt = 3;
	u.tid = htobe64(0x1122334455667788ull);
	u.attr_id = htobe16(UMAD_SM_ATTR_NODE_INFO);
	u.attr_mod = htobe32(0xdeadbeef);
	u.mkey = htobe64(0x0102030405060708ull);
	u.dr_slid = htobe16(0xffff);
	u.dr_dlid = htobe16(0x1234);
	for (i = 0; i < 64; i++) {
		u.data[i] = (uint8_t)i;
		u.initial_path[i] = (uint8_t)(64 + i);
		u.return_path[i] = (uint8_t)(255 - i);
	}
	T_EQ_INT(ibemu_mad_smp_decode((const uint8_t *)&u, sizeof(u), &smp), 0);
	T_EQ_INT(smp.hdr.method, IBEMU_MAD_METHOD_GET_RESP);
	T_EQ_INT(smp.d, 1);
	T_EQ_INT(smp.hdr.status, IBEMU_MAD_STATUS_INVALID_FIELD);
	T_EQ_INT(smp.hop_ptr, 2);
	T_EQ_INT(smp.hop_cnt, 3);
	T_EQ_U64(smp.hdr.tid, 0x1122334455667788ull);
	T_EQ_INT(smp.hdr.attr_id, IBEMU_SMP_ATTR_NODE_INFO);
	T_EQ_U64(smp.hdr.attr_mod, 0xdeadbeef);
	T_EQ_U64(smp.m_key, 0x0102030405060708ull);
	T_EQ_INT(smp.dr_slid, 0xffff);
	T_EQ_INT(smp.dr_dlid, 0x1234);
	T_EQ_INT(smp.data[63], 63);
	T_EQ_INT(smp.initial_path[1], 65);
	T_EQ_INT(smp.return_path[2], 253);
	T_EQ_INT(ibemu_mad_smp_encode(&smp, wire, sizeof(wire)), 0);
	T_TRUE(!memcmp(wire, &u, sizeof(wire)));

	memset(&c, 0, sizeof(c));
	c.base_ver = 1;
	c.class_ver = 2;
	c.cap_mask = htobe16(0x1234);
	c.cap_mask2_resp_time = htobe32(0x5432100u << 5 | 0x13);
	for (i = 0; i < 16; i++) {
		c.redirgid.raw[i] = (uint8_t)(0x10 + i);
		c.trapgid.raw[i] = (uint8_t)(0x30 + i);
	}
	c.redir_tc_sl_fl = htobe32(0xabu << 24 | 0xcu << 20 | 0xdef01u);
	c.redir_lid = htobe16(0x2345);
	c.redir_pkey = htobe16(0xffff);
	c.redir_qp = htobe32(0x00abcdef);
	c.redir_qkey = htobe32(0x80010000);
	c.trap_tc_sl_fl = htobe32(0x12u << 24 | 0x3u << 20 | 0x45678u);
	c.trap_lid = htobe16(7);
	c.trap_pkey = htobe16(0x7fff);
	c.trap_hl_qp = htobe32(0xffu << 24 | 1);
	c.trap_qkey = htobe32(0x12345678);
	T_EQ_INT(ibemu_mad_class_port_info_decode((const uint8_t *)&c,
						  sizeof(c), &cpi),
		 0);
	T_EQ_INT(cpi.class_version, 2);
	T_EQ_INT(cpi.capability_mask, 0x1234);
	T_EQ_U64(cpi.capability_mask2, 0x5432100);
	T_EQ_INT(cpi.resp_time_value, 0x13);
	T_EQ_INT(cpi.redirect_gid[15], 0x1f);
	T_EQ_INT(cpi.redirect_tc, 0xab);
	T_EQ_INT(cpi.redirect_sl, 0xc);
	T_EQ_U64(cpi.redirect_fl, 0xdef01);
	T_EQ_INT(cpi.redirect_lid, 0x2345);
	T_EQ_INT(cpi.redirect_pkey, 0xffff);
	T_EQ_U64(cpi.redirect_qp, 0xabcdef);
	T_EQ_U64(cpi.redirect_qkey, 0x80010000);
	T_EQ_INT(cpi.trap_gid[0], 0x30);
	T_EQ_INT(cpi.trap_tc, 0x12);
	T_EQ_INT(cpi.trap_sl, 3);
	T_EQ_U64(cpi.trap_fl, 0x45678);
	T_EQ_INT(cpi.trap_lid, 7);
	T_EQ_INT(cpi.trap_pkey, 0x7fff);
	T_EQ_INT(cpi.trap_hl, 0xff);
	T_EQ_U64(cpi.trap_qp, 1);
	T_EQ_U64(cpi.trap_qkey, 0x12345678);
	T_EQ_INT(ibemu_mad_class_port_info_encode(&cpi, wire, sizeof(wire)), 0);
	T_TRUE(!memcmp(wire, &c, sizeof(c)));
}

/* The constants agree with rdma-core's. */
static void test_constants(void)
{
	T_EQ_INT(IBEMU_MAD_CLASS_SUBN_LID, UMAD_CLASS_SUBN_LID_ROUTED);
	T_EQ_INT(IBEMU_MAD_CLASS_SUBN_DR, UMAD_CLASS_SUBN_DIRECTED_ROUTE);
	T_EQ_INT(IBEMU_MAD_CLASS_PERF, UMAD_CLASS_PERF_MGMT);
	T_EQ_INT(IBEMU_MAD_CLASS_CC, UMAD_CLASS_CONG_MGMT);
	T_EQ_INT(IBEMU_MAD_METHOD_GET, UMAD_METHOD_GET);
	T_EQ_INT(IBEMU_MAD_METHOD_SET, UMAD_METHOD_SET);
	T_EQ_INT(IBEMU_MAD_METHOD_GET_RESP, UMAD_METHOD_GET_RESP);
	T_EQ_INT(IBEMU_MAD_METHOD_SEND, UMAD_METHOD_SEND);
	T_EQ_INT(IBEMU_MAD_METHOD_TRAP, UMAD_METHOD_TRAP);
	T_EQ_INT(IBEMU_MAD_METHOD_REPORT, UMAD_METHOD_REPORT);
	T_EQ_INT(IBEMU_MAD_METHOD_REPORT_RESP, UMAD_METHOD_REPORT_RESP);
	T_EQ_INT(IBEMU_MAD_METHOD_TRAP_REPRESS, UMAD_METHOD_TRAP_REPRESS);
	T_EQ_INT(IBEMU_MAD_METHOD_RESP, UMAD_METHOD_RESP_MASK);
	T_EQ_INT(IBEMU_MAD_STATUS_BUSY, UMAD_STATUS_BUSY);
	T_EQ_INT(IBEMU_MAD_STATUS_REDIRECT, UMAD_STATUS_REDIRECT);
	T_EQ_INT(IBEMU_MAD_STATUS_BAD_VERSION, UMAD_STATUS_BAD_VERSION);
	T_EQ_INT(IBEMU_MAD_STATUS_METHOD_UNSUPP,
		 UMAD_STATUS_METHOD_NOT_SUPPORTED);
	T_EQ_INT(IBEMU_MAD_STATUS_METHOD_ATTR_UNSUPP,
		 UMAD_STATUS_ATTR_NOT_SUPPORTED);
	T_EQ_INT(IBEMU_MAD_STATUS_INVALID_FIELD,
		 UMAD_STATUS_INVALID_ATTR_VALUE);
	T_EQ_INT(IBEMU_MAD_STATUS_CODE_MASK, UMAD_STATUS_INVALID_FIELD_MASK);
	T_EQ_INT(IBEMU_SMP_ATTR_NODE_DESC, UMAD_SM_ATTR_NODE_DESC);
	T_EQ_INT(IBEMU_SMP_ATTR_NODE_INFO, UMAD_SM_ATTR_NODE_INFO);
	T_EQ_INT(IBEMU_SMP_ATTR_SWITCH_INFO, UMAD_SM_ATTR_SWITCH_INFO);
	T_EQ_INT(IBEMU_SMP_ATTR_GUID_INFO, UMAD_SM_ATTR_GUID_INFO);
	T_EQ_INT(IBEMU_SMP_ATTR_PORT_INFO, UMAD_SM_ATTR_PORT_INFO);
	T_EQ_INT(IBEMU_SMP_ATTR_PKEY_TABLE, UMAD_SM_ATTR_PKEY_TABLE);
	T_EQ_INT(IBEMU_SMP_ATTR_SL2VL_TABLE, UMAD_SM_ATTR_SLVL_TABLE);
	T_EQ_INT(IBEMU_SMP_ATTR_VLARB_TABLE, UMAD_SM_ATTR_VL_ARB_TABLE);
	T_EQ_INT(IBEMU_SMP_ATTR_LFT, UMAD_SM_ATTR_LINEAR_FT);
	T_EQ_INT(IBEMU_SMP_ATTR_RFT, UMAD_SM_ATTR_RANDOM_FT);
	T_EQ_INT(IBEMU_SMP_ATTR_MFT, UMAD_SM_ATTR_MCAST_FT);
	T_EQ_INT(IBEMU_SMP_ATTR_SM_INFO, UMAD_SM_ATTR_SM_INFO);
	T_EQ_INT(IBEMU_SMP_ATTR_VENDOR_DIAG, UMAD_SM_ATTR_VENDOR_DIAG);
	T_EQ_INT(IBEMU_SMP_ATTR_LED_INFO, UMAD_SM_ATTR_LED_INFO);
	T_EQ_INT(IBEMU_SMP_ATTR_NOTICE, UMAD_ATTR_NOTICE);
	T_EQ_INT(IBEMU_PMA_ATTR_CLASS_PORT_INFO, UMAD_ATTR_CLASS_PORT_INFO);
	T_EQ_INT(IBEMU_PMA_ATTR_PORT_SAMPLES_CONTROL,
		 IB_GSI_PORT_SAMPLES_CONTROL);
	T_EQ_INT(IBEMU_PMA_ATTR_PORT_SAMPLES_RESULT,
		 IB_GSI_PORT_SAMPLES_RESULT);
	T_EQ_INT(IBEMU_PMA_ATTR_PORT_COUNTERS, IB_GSI_PORT_COUNTERS);
	T_EQ_INT(IBEMU_PMA_ATTR_PORT_COUNTERS_EXT, IB_GSI_PORT_COUNTERS_EXT);
	T_EQ_INT(IBEMU_CC_ATTR_CONGESTION_INFO, IB_CC_ATTR_CONGESTION_INFO);
	T_EQ_INT(IBEMU_CC_ATTR_CONGESTION_KEY_INFO,
		 IB_CC_ATTR_CONGESTION_KEY_INFO);
	T_EQ_INT(IBEMU_CC_ATTR_CONGESTION_LOG, IB_CC_ATTR_CONGESTION_LOG);
	T_EQ_INT(IBEMU_CC_ATTR_SWITCH_CONGESTION_SETTING,
		 IB_CC_ATTR_SWITCH_CONGESTION_SETTING);
	T_EQ_INT(IBEMU_CC_ATTR_SWITCH_PORT_CONG_SETTING,
		 IB_CC_ATTR_SWITCH_PORT_CONGESTION_SETTING);
	T_EQ_INT(IBEMU_CC_ATTR_CA_CONGESTION_SETTING,
		 IB_CC_ATTR_CA_CONGESTION_SETTING);
	T_EQ_INT(IBEMU_CC_ATTR_CONGESTION_CONTROL_TABLE,
		 IB_CC_ATTR_CONGESTION_CONTROL_TABLE);
	T_EQ_INT(IBEMU_CC_ATTR_TIMESTAMP, IB_CC_ATTR_TIMESTAMP);
	T_EQ_INT(IBEMU_MAD_TRAP_LINK_STATE_CHANGE,
		 UMAD_SM_LINK_STATE_CHANGED_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_LINK_INTEGRITY,
		 UMAD_SM_LINK_INTEGRITY_THRESHOLD_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_BUFFER_OVERRUN,
		 UMAD_SM_BUFFER_OVERRUN_THRESHOLD_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_FLOW_WATCHDOG,
		 UMAD_SM_WATCHDOG_TIMER_EXPIRED_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_LOCAL_CHANGES, UMAD_SM_LOCAL_CHANGES_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_SYSTEM_IMAGE_GUID,
		 UMAD_SM_SYS_IMG_GUID_CHANGED_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_BAD_MKEY, UMAD_SM_BAD_MKEY_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_BAD_PKEY, UMAD_SM_BAD_PKEY_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_BAD_QKEY, UMAD_SM_BAD_QKEY_TRAP);
	T_EQ_INT(IBEMU_MAD_TRAP_SWITCH_EXT_BAD_PKEY,
		 UMAD_SM_BAD_SWITCH_PKEY_TRAP);
	T_EQ_INT(IBEMU_MAD_NODE_SWITCH, IB_NODE_SWITCH);
	T_EQ_INT(IBEMU_MAD_NODE_CA, IB_NODE_CA);
}

/*
 * Fields libibmad does not define, checked here by hand against the
 * spec's tables (and OpenSM's ib_types.h for PortCounters).
 */
static void test_known_bytes(void)
{
	struct ibemu_mad_port_counters pc = {0};
	struct ibemu_mad_pkey_table pk = {0};
	struct ibemu_mad_trap_port t129 = {0};
	struct ibemu_mad_trap_local_changes t144 = {0}, t144b;
	struct ibemu_mad_notice n = {0}, nb;
	uint8_t w[IBEMU_MAD_LEN];
	uint8_t mask[IBEMU_CC_PORT_MASK_LEN] = {0};
	unsigned i;

	/*
	 * IBA 16.1.3.5: QP1Dropped took the reserved bytes 20-21, ahead of
	 * VL15Dropped at 22-23 (OpenSM's ib_port_counters_t agrees).
	 */
	pc.qp1_dropped = 0x1234;
	pc.vl15_dropped = 0x5678;
	T_EQ_INT(ibemu_mad_port_counters_encode(&pc, w, sizeof(w)), 0);
	T_EQ_INT(w[20], 0x12);
	T_EQ_INT(w[21], 0x34);
	T_EQ_INT(w[22], 0x56);
	T_EQ_INT(w[23], 0x78);

	for (i = 0; i < IBEMU_MAD_PKEY_TABLE_BLOCK; i++)
		pk.pkey[i] = (uint16_t)(0x8000 | i);
	T_EQ_INT(ibemu_mad_pkey_table_encode(&pk, w, sizeof(w)), 0);
	T_EQ_INT(w[0], 0x80);
	T_EQ_INT(w[62], 0x80);
	T_EQ_INT(w[63], 31);

	t129.lid = 0xbeef;
	t129.port_num = 17;
	T_EQ_INT(ibemu_mad_trap_port_encode(&t129, w, sizeof(w)), 0);
	T_EQ_INT(w[0] | w[1] | w[4], 0);
	T_EQ_INT(w[2], 0xbe);
	T_EQ_INT(w[3], 0xef);
	T_EQ_INT(w[5], 17);

	t144.lid = 0x0102;
	t144.other_local_changes = 1;
	t144.capability_mask = 0x0a0b0c0d;
	t144.link_speed_enabled_change = 1;
	t144.node_description_change = 1;
	t144.capability_mask2 = 0x4321;
	T_EQ_INT(ibemu_mad_trap_local_changes_encode(&t144, n.data_details,
						     sizeof(n.data_details)),
		 0);
	T_EQ_INT(n.data_details[5], 0x01);
	T_EQ_INT(n.data_details[6], 0x0a);
	T_EQ_INT(n.data_details[11], 0x05);
	T_EQ_INT(n.data_details[12], 0x43);
	n.is_generic = 1;
	n.type = IBEMU_MAD_NOTICE_INFO;
	n.trap_number = IBEMU_MAD_TRAP_LOCAL_CHANGES;
	for (i = 0; i < 16; i++)
		n.issuer_gid[i] = (uint8_t)(i + 1);
	memset(w, 0xee, sizeof(w));
	T_EQ_INT(ibemu_mad_notice_encode(&n, w, IBEMU_MAD_NOTICE_SMP_LEN), 0);
	T_EQ_INT(w[0], 0x84);
	T_EQ_INT(w[IBEMU_MAD_NOTICE_SMP_LEN], 0xee); /* no IssuerGID */
	T_EQ_INT(ibemu_mad_notice_decode(w, IBEMU_MAD_NOTICE_SMP_LEN, &nb), 0);
	T_EQ_INT(nb.issuer_gid[0], 0);
	T_EQ_INT(ibemu_mad_trap_local_changes_decode(
			 nb.data_details, sizeof(nb.data_details), &t144b),
		 0);
	T_TRUE(!memcmp(&t144, &t144b, sizeof(t144)));
	T_EQ_INT(ibemu_mad_notice_encode(&n, w, IBEMU_MAD_NOTICE_LEN), 0);
	T_EQ_INT(w[64], 1);
	T_EQ_INT(w[79], 16);
	T_EQ_INT(ibemu_mad_notice_decode(w, IBEMU_MAD_NOTICE_LEN, &nb), 0);
	T_TRUE(!memcmp(&n, &nb, sizeof(n)));
	T_EQ_INT(ibemu_mad_notice_decode(w, IBEMU_MAD_NOTICE_SMP_LEN - 1, &nb),
		 -EINVAL);

	/* 256-bit port masks: port 0 is the last byte's lowest bit. */
	ibemu_mad_port_mask_set(mask, 0, 1);
	ibemu_mad_port_mask_set(mask, 9, 1);
	ibemu_mad_port_mask_set(mask, 255, 1);
	T_EQ_INT(mask[31], 0x01);
	T_EQ_INT(mask[30], 0x02);
	T_EQ_INT(mask[0], 0x80);
	T_TRUE(ibemu_mad_port_mask_get(mask, 9));
	T_TRUE(!ibemu_mad_port_mask_get(mask, 8));
	ibemu_mad_port_mask_set(mask, 9, 0);
	T_EQ_INT(mask[30], 0);
	w[0] = IBEMU_CC_LOG_CA;
	T_EQ_INT(ibemu_mad_congestion_log_type(w, 1), IBEMU_CC_LOG_CA);
	T_EQ_INT(ibemu_mad_congestion_log_type(w, 0), -EINVAL);
}

/*
 * The cross-check table. A row pairs an ibemu field (elements first ..
 * first + n - 1, or part of it: 'my_width' bits from bit 'my_bit' counted
 * from its most significant bit) with a libibmad field of 'bits' bits read
 * at 'off' (+ 'off_step' per element) bytes from where the ibemu layout
 * starts; when the libibmad field is wider than what is compared (arrays,
 * a 64-bit SL2VL word), the part at 'sub' (+ 'sub_step' per element) bits
 * is compared.
 */
struct xrow {
	const struct ibemu_mad_layout *l;
	const char *field;
	unsigned first, n;
	unsigned my_bit, my_width;
	enum MAD_FIELDS id;
	unsigned bits;
	int off, off_step;
	unsigned sub, sub_step;
	int part; /* compares parts of libibmad's field (XS) */
};

#define L(x) (&ibemu_##x##_layout)
/* A whole field. */
#define X(lay, f, id_, bits_)                                             \
	{                                                                 \
		.l = L(lay), .field = f, .n = 1, .id = id_, .bits = bits_ \
	}
/* A whole field, libibmad's at another base. */
#define XO(lay, f, id_, bits_, off_)                                       \
	{                                                                  \
		.l = L(lay), .field = f, .n = 1, .id = id_, .bits = bits_, \
		.off = off_                                                \
	}
/* Part of an ibemu field. */
#define XM(lay, f, mb, mw, id_, bits_)                                         \
	{                                                                      \
		.l = L(lay), .field = f, .n = 1, .my_bit = mb, .my_width = mw, \
		.id = id_, .bits = bits_                                       \
	}
/* Elements of an ibemu array as parts of one libibmad field. */
#define XS(lay, f, first_, n_, id_, bits_, sub_, step)                        \
	{                                                                     \
		.l = L(lay), .field = f, .first = first_, .n = n_, .id = id_, \
		.bits = bits_, .sub = sub_, .sub_step = step, .part = 1       \
	}
/* Elements of an ibemu struct array, libibmad's field per element. */
#define XE(lay, f, n_, id_, bits_, off_, step)                              \
	{                                                                   \
		.l = L(lay), .field = f, .n = n_, .id = id_, .bits = bits_, \
		.off = off_, .off_step = step                               \
	}

#define HDR_ROWS(lay)                                          \
	X(lay, "BaseVersion", IB_MAD_BASEVER_F, 8),            \
		X(lay, "MgmtClass", IB_MAD_MGMTCLASS_F, 8),    \
		X(lay, "ClassVersion", IB_MAD_CLASSVER_F, 8),  \
		XM(lay, "Method", 0, 1, IB_MAD_RESPONSE_F, 1), \
		XM(lay, "Method", 1, 7, IB_MAD_METHOD_F, 7),   \
		X(lay, "TransactionID", IB_MAD_TRID_F, 64),    \
		X(lay, "AttributeID", IB_MAD_ATTRID_F, 16),    \
		X(lay, "AttributeModifier", IB_MAD_ATTRMOD_F, 32)
/* Outside DR SMPs, ClassSpecific sits where a DR SMP's hop fields are. */
#define STATUS_ROWS(lay)                                              \
	X(lay, "Status", IB_MAD_STATUS_F, 16),                        \
		XM(lay, "ClassSpecific", 0, 8, IB_DRSMP_HOPPTR_F, 8), \
		XM(lay, "ClassSpecific", 8, 8, IB_DRSMP_HOPCNT_F, 8)
#define NOTICE_ROWS(lay)                                                     \
	X(lay, "IsGeneric", IB_NOTICE_IS_GENERIC_F, 1),                      \
		X(lay, "Type", IB_NOTICE_TYPE_F, 7),                         \
		X(lay, "ProducerType", IB_NOTICE_PRODUCER_F, 24),            \
		X(lay, "TrapNumber", IB_NOTICE_TRAP_NUMBER_F, 16),           \
		X(lay, "IssuerLID", IB_NOTICE_ISSUER_LID_F, 16),             \
		X(lay, "NoticeToggle", IB_NOTICE_TOGGLE_F, 1),               \
		X(lay, "NoticeCount", IB_NOTICE_COUNT_F, 15),                \
		XS(lay, "DataDetails", 0, 54, IB_NOTICE_DATA_DETAILS_F, 432, \
		   0, 8)

static const struct xrow xrows[] = {
	HDR_ROWS(mad_hdr),
	STATUS_ROWS(mad_hdr),

	HDR_ROWS(mad_smp_lid),
	STATUS_ROWS(mad_smp_lid),
	X(mad_smp_lid, "M_Key", IB_MAD_MKEY_F, 64),

	HDR_ROWS(mad_smp_dr),
	X(mad_smp_dr, "D", IB_DRSMP_DIRECTION_F, 1),
	X(mad_smp_dr, "Status", IB_DRSMP_STATUS_F, 15),
	XS(mad_smp_dr, "D", 0, 1, IB_MAD_STATUS_F, 16, 0, 0),
	XS(mad_smp_dr, "Status", 0, 1, IB_MAD_STATUS_F, 16, 1, 0),
	X(mad_smp_dr, "HopPointer", IB_DRSMP_HOPPTR_F, 8),
	X(mad_smp_dr, "HopCount", IB_DRSMP_HOPCNT_F, 8),
	X(mad_smp_dr, "M_Key", IB_MAD_MKEY_F, 64),
	X(mad_smp_dr, "DrSLID", IB_DRSMP_DRSLID_F, 16),
	X(mad_smp_dr, "DrDLID", IB_DRSMP_DRDLID_F, 16),
	XS(mad_smp_dr, "InitialPath", 0, 64, IB_DRSMP_PATH_F, 512, 0, 8),
	XS(mad_smp_dr, "ReturnPath", 0, 64, IB_DRSMP_RPATH_F, 512, 0, 8),

	HDR_ROWS(mad_pma),
	STATUS_ROWS(mad_pma),
	XS(mad_pma, "Data", 0, 192, IB_GS_DATA_F, 1536, 0, 8),

	HDR_ROWS(mad_cc),
	STATUS_ROWS(mad_cc),
	X(mad_cc, "CC_Key", IB_CC_CCKEY_F, 64),
	XS(mad_cc, "Data", 32, 192, IB_GS_DATA_F, 1536, 0, 8),

	XS(mad_node_desc, "NodeString", 0, 64, IB_NODE_DESC_F, 512, 0, 8),

	X(mad_node_info, "BaseVersion", IB_NODE_BASE_VERS_F, 8),
	X(mad_node_info, "ClassVersion", IB_NODE_CLASS_VERS_F, 8),
	X(mad_node_info, "NodeType", IB_NODE_TYPE_F, 8),
	X(mad_node_info, "NumPorts", IB_NODE_NPORTS_F, 8),
	X(mad_node_info, "SystemImageGUID", IB_NODE_SYSTEM_GUID_F, 64),
	X(mad_node_info, "NodeGUID", IB_NODE_GUID_F, 64),
	X(mad_node_info, "PortGUID", IB_NODE_PORT_GUID_F, 64),
	X(mad_node_info, "PartitionCap", IB_NODE_PARTITION_CAP_F, 16),
	X(mad_node_info, "DeviceID", IB_NODE_DEVID_F, 16),
	X(mad_node_info, "Revision", IB_NODE_REVISION_F, 32),
	X(mad_node_info, "LocalPortNum", IB_NODE_LOCAL_PORT_F, 8),
	X(mad_node_info, "VendorID", IB_NODE_VENDORID_F, 24),

	X(mad_switch_info, "LinearFDBCap", IB_SW_LINEAR_FDB_CAP_F, 16),
	X(mad_switch_info, "RandomFDBCap", IB_SW_RANDOM_FDB_CAP_F, 16),
	X(mad_switch_info, "MulticastFDBCap", IB_SW_MCAST_FDB_CAP_F, 16),
	X(mad_switch_info, "LinearFDBTop", IB_SW_LINEAR_FDB_TOP_F, 16),
	X(mad_switch_info, "DefaultPort", IB_SW_DEF_PORT_F, 8),
	X(mad_switch_info, "DefaultMulticastPrimaryPort",
	  IB_SW_DEF_MCAST_PRIM_F, 8),
	X(mad_switch_info, "DefaultMulticastNotPrimaryPort",
	  IB_SW_DEF_MCAST_NOT_PRIM_F, 8),
	X(mad_switch_info, "LifeTimeValue", IB_SW_LIFE_TIME_F, 5),
	X(mad_switch_info, "PortStateChange", IB_SW_STATE_CHANGE_F, 1),
	X(mad_switch_info, "OptimizedSLtoVLMappingProgramming",
	  IB_SW_OPT_SLTOVL_MAPPING_F, 2),
	X(mad_switch_info, "LIDsPerPort", IB_SW_LIDS_PER_PORT_F, 16),
	X(mad_switch_info, "PartitionEnforcementCap",
	  IB_SW_PARTITION_ENFORCE_CAP_F, 16),
	X(mad_switch_info, "InboundEnforcementCap", IB_SW_PARTITION_ENF_INB_F,
	  1),
	X(mad_switch_info, "OutboundEnforcementCap", IB_SW_PARTITION_ENF_OUTB_F,
	  1),
	X(mad_switch_info, "FilterRawInboundCap", IB_SW_FILTER_RAW_INB_F, 1),
	X(mad_switch_info, "FilterRawOutboundCap", IB_SW_FILTER_RAW_OUTB_F, 1),
	X(mad_switch_info, "EnhancedPort0", IB_SW_ENHANCED_PORT0_F, 1),
	X(mad_switch_info, "MulticastFDBTop", IB_SW_MCAST_FDB_TOP_F, 16),

	XS(mad_guid_info, "GUID", 0, 1, IB_GUID_GUID0_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 0, 1, IB_GI_GUID0_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 1, 1, IB_GI_GUID1_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 2, 1, IB_GI_GUID2_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 3, 1, IB_GI_GUID3_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 4, 1, IB_GI_GUID4_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 5, 1, IB_GI_GUID5_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 6, 1, IB_GI_GUID6_F, 64, 0, 0),
	XS(mad_guid_info, "GUID", 7, 1, IB_GI_GUID7_F, 64, 0, 0),

	X(mad_port_info, "M_Key", IB_PORT_MKEY_F, 64),
	X(mad_port_info, "GidPrefix", IB_PORT_GID_PREFIX_F, 64),
	X(mad_port_info, "LID", IB_PORT_LID_F, 16),
	X(mad_port_info, "MasterSMLID", IB_PORT_SMLID_F, 16),
	X(mad_port_info, "CapabilityMask", IB_PORT_CAPMASK_F, 32),
	X(mad_port_info, "DiagCode", IB_PORT_DIAG_F, 16),
	X(mad_port_info, "M_KeyLeasePeriod", IB_PORT_MKEY_LEASE_F, 16),
	X(mad_port_info, "LocalPortNum", IB_PORT_LOCAL_PORT_F, 8),
	X(mad_port_info, "LinkWidthEnabled", IB_PORT_LINK_WIDTH_ENABLED_F, 8),
	X(mad_port_info, "LinkWidthSupported", IB_PORT_LINK_WIDTH_SUPPORTED_F,
	  8),
	X(mad_port_info, "LinkWidthActive", IB_PORT_LINK_WIDTH_ACTIVE_F, 8),
	X(mad_port_info, "LinkSpeedSupported", IB_PORT_LINK_SPEED_SUPPORTED_F,
	  4),
	X(mad_port_info, "PortState", IB_PORT_STATE_F, 4),
	X(mad_port_info, "PortPhysicalState", IB_PORT_PHYS_STATE_F, 4),
	X(mad_port_info, "LinkDownDefaultState", IB_PORT_LINK_DOWN_DEF_F, 4),
	X(mad_port_info, "M_KeyProtectBits", IB_PORT_MKEY_PROT_BITS_F, 2),
	X(mad_port_info, "LMC", IB_PORT_LMC_F, 3),
	X(mad_port_info, "LinkSpeedActive", IB_PORT_LINK_SPEED_ACTIVE_F, 4),
	X(mad_port_info, "LinkSpeedEnabled", IB_PORT_LINK_SPEED_ENABLED_F, 4),
	X(mad_port_info, "NeighborMTU", IB_PORT_NEIGHBOR_MTU_F, 4),
	X(mad_port_info, "MasterSMSL", IB_PORT_SMSL_F, 4),
	X(mad_port_info, "VLCap", IB_PORT_VL_CAP_F, 4),
	X(mad_port_info, "InitType", IB_PORT_INIT_TYPE_F, 4),
	X(mad_port_info, "VLHighLimit", IB_PORT_VL_HIGH_LIMIT_F, 8),
	X(mad_port_info, "VLArbitrationHighCap",
	  IB_PORT_VL_ARBITRATION_HIGH_CAP_F, 8),
	X(mad_port_info, "VLArbitrationLowCap",
	  IB_PORT_VL_ARBITRATION_LOW_CAP_F, 8),
	X(mad_port_info, "InitTypeReply", IB_PORT_INIT_TYPE_REPLY_F, 4),
	X(mad_port_info, "MTUCap", IB_PORT_MTU_CAP_F, 4),
	X(mad_port_info, "VLStallCount", IB_PORT_VL_STALL_COUNT_F, 3),
	X(mad_port_info, "HOQLife", IB_PORT_HOQ_LIFE_F, 5),
	X(mad_port_info, "OperationalVLs", IB_PORT_OPER_VLS_F, 4),
	X(mad_port_info, "PartitionEnforcementInbound", IB_PORT_PART_EN_INB_F,
	  1),
	X(mad_port_info, "PartitionEnforcementOutbound", IB_PORT_PART_EN_OUTB_F,
	  1),
	X(mad_port_info, "FilterRawInbound", IB_PORT_FILTER_RAW_INB_F, 1),
	X(mad_port_info, "FilterRawOutbound", IB_PORT_FILTER_RAW_OUTB_F, 1),
	X(mad_port_info, "M_KeyViolations", IB_PORT_MKEY_VIOL_F, 16),
	X(mad_port_info, "P_KeyViolations", IB_PORT_PKEY_VIOL_F, 16),
	X(mad_port_info, "Q_KeyViolations", IB_PORT_QKEY_VIOL_F, 16),
	X(mad_port_info, "GUIDCap", IB_PORT_GUID_CAP_F, 8),
	X(mad_port_info, "ClientReregister", IB_PORT_CLIENT_REREG_F, 1),
	X(mad_port_info, "MulticastPKeyTrapSuppressionEnabled",
	  IB_PORT_MCAST_PKEY_SUPR_ENAB_F, 2),
	X(mad_port_info, "SubnetTimeOut", IB_PORT_SUBN_TIMEOUT_F, 5),
	X(mad_port_info, "RespTimeValue", IB_PORT_RESP_TIME_VAL_F, 5),
	X(mad_port_info, "LocalPhyErrors", IB_PORT_LOCAL_PHYS_ERR_F, 4),
	X(mad_port_info, "OverrunErrors", IB_PORT_OVERRUN_ERR_F, 4),
	X(mad_port_info, "MaxCreditHint", IB_PORT_MAX_CREDIT_HINT_F, 16),
	X(mad_port_info, "LinkRoundTripLatency", IB_PORT_LINK_ROUND_TRIP_F, 24),
	X(mad_port_info, "CapabilityMask2", IB_PORT_CAPMASK2_F, 16),
	X(mad_port_info, "LinkSpeedExtActive", IB_PORT_LINK_SPEED_EXT_ACTIVE_F,
	  4),
	X(mad_port_info, "LinkSpeedExtSupported",
	  IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, 4),
	X(mad_port_info, "LinkSpeedExtEnabled",
	  IB_PORT_LINK_SPEED_EXT_ENABLED_F, 5),

	XS(mad_sl2vl_table, "SLtoVL", 0, 16, IB_SLTOVL_MAPPING_TABLE_F, 64, 0,
	   4),
	XS(mad_vlarb_table, "VL", 0, 32, IB_VL_ARBITRATION_TABLE_F, 512, 4, 16),
	XS(mad_vlarb_table, "Weight", 0, 32, IB_VL_ARBITRATION_TABLE_F, 512, 8,
	   16),
	XS(mad_lft, "Port", 0, 64, IB_LINEAR_FORW_TBL_F, 512, 0, 8),
	XS(mad_mft, "PortMask", 0, 32, IB_MULTICAST_FORW_TBL_F, 512, 0, 16),

	X(mad_sm_info, "GUID", IB_SMINFO_GUID_F, 64),
	X(mad_sm_info, "SM_Key", IB_SMINFO_KEY_F, 64),
	X(mad_sm_info, "ActCount", IB_SMINFO_ACT_F, 32),
	X(mad_sm_info, "Priority", IB_SMINFO_PRIO_F, 4),
	X(mad_sm_info, "SMState", IB_SMINFO_STATE_F, 4),

	NOTICE_ROWS(mad_notice),
	NOTICE_ROWS(mad_notice_smp),
	/* libibmad's trap fields count from the Notice, 10 bytes earlier. */
	XO(mad_trap_lid, "LIDADDR", IB_NOTICE_DATA_LID_F, 16, -10),
	XO(mad_trap_port, "LIDADDR", IB_NOTICE_DATA_144_LID_F, 16, -10),
	XO(mad_trap_local_changes, "LIDADDR", IB_NOTICE_DATA_144_LID_F, 16,
	   -10),
	XO(mad_trap_local_changes, "CAPABILITYMASK",
	   IB_NOTICE_DATA_144_CAPMASK_F, 32, -10),

	X(mad_class_port_info, "BaseVersion", IB_CPI_BASEVER_F, 8),
	X(mad_class_port_info, "ClassVersion", IB_CPI_CLASSVER_F, 8),
	X(mad_class_port_info, "CapabilityMask", IB_CPI_CAPMASK_F, 16),
	X(mad_class_port_info, "CapabilityMask2", IB_CPI_CAPMASK2_F, 27),
	X(mad_class_port_info, "RespTimeValue", IB_CPI_RESP_TIME_VALUE_F, 5),
	XS(mad_class_port_info, "RedirectGID", 0, 16, IB_CPI_REDIRECT_GID_F,
	   128, 0, 8),
	X(mad_class_port_info, "RedirectTC", IB_CPI_REDIRECT_TC_F, 8),
	X(mad_class_port_info, "RedirectSL", IB_CPI_REDIRECT_SL_F, 4),
	X(mad_class_port_info, "RedirectFL", IB_CPI_REDIRECT_FL_F, 20),
	X(mad_class_port_info, "RedirectLID", IB_CPI_REDIRECT_LID_F, 16),
	X(mad_class_port_info, "RedirectP_Key", IB_CPI_REDIRECT_PKEY_F, 16),
	X(mad_class_port_info, "RedirectQP", IB_CPI_REDIRECT_QP_F, 24),
	X(mad_class_port_info, "RedirectQ_Key", IB_CPI_REDIRECT_QKEY_F, 32),
	XS(mad_class_port_info, "TrapGID", 0, 16, IB_CPI_TRAP_GID_F, 128, 0, 8),
	X(mad_class_port_info, "TrapTC", IB_CPI_TRAP_TC_F, 8),
	X(mad_class_port_info, "TrapSL", IB_CPI_TRAP_SL_F, 4),
	X(mad_class_port_info, "TrapFL", IB_CPI_TRAP_FL_F, 20),
	X(mad_class_port_info, "TrapLID", IB_CPI_TRAP_LID_F, 16),
	X(mad_class_port_info, "TrapP_Key", IB_CPI_TRAP_PKEY_F, 16),
	X(mad_class_port_info, "TrapHL", IB_CPI_TRAP_HL_F, 8),
	X(mad_class_port_info, "TrapQP", IB_CPI_TRAP_QP_F, 24),
	X(mad_class_port_info, "TrapQ_Key", IB_CPI_TRAP_QKEY_F, 32),

	X(mad_port_counters, "PortSelect", IB_PC_PORT_SELECT_F, 8),
	X(mad_port_counters, "CounterSelect", IB_PC_COUNTER_SELECT_F, 16),
	X(mad_port_counters, "SymbolErrorCounter", IB_PC_ERR_SYM_F, 16),
	X(mad_port_counters, "LinkErrorRecoveryCounter", IB_PC_LINK_RECOVERS_F,
	  8),
	X(mad_port_counters, "LinkDownedCounter", IB_PC_LINK_DOWNED_F, 8),
	X(mad_port_counters, "PortRcvErrors", IB_PC_ERR_RCV_F, 16),
	X(mad_port_counters, "PortRcvRemotePhysicalErrors", IB_PC_ERR_PHYSRCV_F,
	  16),
	X(mad_port_counters, "PortRcvSwitchRelayErrors", IB_PC_ERR_SWITCH_REL_F,
	  16),
	X(mad_port_counters, "PortXmitDiscards", IB_PC_XMT_DISCARDS_F, 16),
	X(mad_port_counters, "PortXmitConstraintErrors", IB_PC_ERR_XMTCONSTR_F,
	  8),
	X(mad_port_counters, "PortRcvConstraintErrors", IB_PC_ERR_RCVCONSTR_F,
	  8),
	X(mad_port_counters, "CounterSelect2", IB_PC_COUNTER_SELECT2_F, 8),
	X(mad_port_counters, "LocalLinkIntegrityErrors", IB_PC_ERR_LOCALINTEG_F,
	  4),
	X(mad_port_counters, "ExcessiveBufferOverrunErrors",
	  IB_PC_ERR_EXCESS_OVR_F, 4),
	X(mad_port_counters, "VL15Dropped", IB_PC_VL15_DROPPED_F, 16),
	X(mad_port_counters, "PortXmitData", IB_PC_XMT_BYTES_F, 32),
	X(mad_port_counters, "PortRcvData", IB_PC_RCV_BYTES_F, 32),
	X(mad_port_counters, "PortXmitPkts", IB_PC_XMT_PKTS_F, 32),
	X(mad_port_counters, "PortRcvPkts", IB_PC_RCV_PKTS_F, 32),
	X(mad_port_counters, "PortXmitWait", IB_PC_XMT_WAIT_F, 32),

	X(mad_port_counters_ext, "PortSelect", IB_PC_EXT_PORT_SELECT_F, 8),
	X(mad_port_counters_ext, "CounterSelect", IB_PC_EXT_COUNTER_SELECT_F,
	  16),
	X(mad_port_counters_ext, "CounterSelect2", IB_PC_EXT_COUNTER_SELECT2_F,
	  32),
	X(mad_port_counters_ext, "PortXmitData", IB_PC_EXT_XMT_BYTES_F, 64),
	X(mad_port_counters_ext, "PortRcvData", IB_PC_EXT_RCV_BYTES_F, 64),
	X(mad_port_counters_ext, "PortXmitPkts", IB_PC_EXT_XMT_PKTS_F, 64),
	X(mad_port_counters_ext, "PortRcvPkts", IB_PC_EXT_RCV_PKTS_F, 64),
	X(mad_port_counters_ext, "PortUnicastXmitPkts", IB_PC_EXT_XMT_UPKTS_F,
	  64),
	X(mad_port_counters_ext, "PortUnicastRcvPkts", IB_PC_EXT_RCV_UPKTS_F,
	  64),
	X(mad_port_counters_ext, "PortMulticastXmitPkts", IB_PC_EXT_XMT_MPKTS_F,
	  64),
	X(mad_port_counters_ext, "PortMulticastRcvPkts", IB_PC_EXT_RCV_MPKTS_F,
	  64),
	X(mad_port_counters_ext, "SymbolErrorCounter", IB_PC_EXT_ERR_SYM_F, 64),
	X(mad_port_counters_ext, "LinkErrorRecoveryCounter",
	  IB_PC_EXT_LINK_RECOVERS_F, 64),
	X(mad_port_counters_ext, "LinkDownedCounter", IB_PC_EXT_LINK_DOWNED_F,
	  64),
	X(mad_port_counters_ext, "PortRcvErrors", IB_PC_EXT_ERR_RCV_F, 64),
	X(mad_port_counters_ext, "PortRcvRemotePhysicalErrors",
	  IB_PC_EXT_ERR_PHYSRCV_F, 64),
	X(mad_port_counters_ext, "PortRcvSwitchRelayErrors",
	  IB_PC_EXT_ERR_SWITCH_REL_F, 64),
	X(mad_port_counters_ext, "PortXmitDiscards", IB_PC_EXT_XMT_DISCARDS_F,
	  64),
	X(mad_port_counters_ext, "PortXmitConstraintErrors",
	  IB_PC_EXT_ERR_XMTCONSTR_F, 64),
	X(mad_port_counters_ext, "PortRcvConstraintErrors",
	  IB_PC_EXT_ERR_RCVCONSTR_F, 64),
	X(mad_port_counters_ext, "LocalLinkIntegrityErrors",
	  IB_PC_EXT_ERR_LOCALINTEG_F, 64),
	X(mad_port_counters_ext, "ExcessiveBufferOverrunErrors",
	  IB_PC_EXT_ERR_EXCESS_OVR_F, 64),
	X(mad_port_counters_ext, "VL15Dropped", IB_PC_EXT_VL15_DROPPED_F, 64),
	X(mad_port_counters_ext, "PortXmitWait", IB_PC_EXT_XMT_WAIT_F, 64),
	X(mad_port_counters_ext, "QP1Dropped", IB_PC_EXT_QP1_DROP_F, 64),

	X(mad_congestion_info, "CongestionInfo", IB_CC_CONGESTION_INFO_F, 16),
	X(mad_congestion_info, "ControlTableCap",
	  IB_CC_CONGESTION_INFO_CONTROL_TABLE_CAP_F, 8),

	X(mad_congestion_key_info, "CC_Key", IB_CC_CONGESTION_KEY_INFO_CC_KEY_F,
	  64),
	X(mad_congestion_key_info, "CC_KeyProtectBit",
	  IB_CC_CONGESTION_KEY_INFO_CC_KEY_PROTECT_BIT_F, 1),
	X(mad_congestion_key_info, "CC_KeyLeasePeriod",
	  IB_CC_CONGESTION_KEY_INFO_CC_KEY_LEASE_PERIOD_F, 16),
	X(mad_congestion_key_info, "CC_KeyViolations",
	  IB_CC_CONGESTION_KEY_INFO_CC_KEY_VIOLATIONS_F, 16),

	X(mad_congestion_log_switch, "LogType", IB_CC_CONGESTION_LOG_LOGTYPE_F,
	  8),
	X(mad_congestion_log_switch, "CongestionFlags",
	  IB_CC_CONGESTION_LOG_CONGESTION_FLAGS_F, 8),
	X(mad_congestion_log_switch, "LogEventsCounter",
	  IB_CC_CONGESTION_LOG_SWITCH_LOG_EVENTS_COUNTER_F, 16),
	X(mad_congestion_log_switch, "CurrentTimeStamp",
	  IB_CC_CONGESTION_LOG_SWITCH_CURRENT_TIME_STAMP_F, 32),
	XS(mad_congestion_log_switch, "PortMap", 0, 32,
	   IB_CC_CONGESTION_LOG_SWITCH_PORTMAP_F, 256, 0, 8),
	XE(mad_congestion_log_switch, "SLID", 15,
	   IB_CC_CONGESTION_LOG_ENTRY_SWITCH_SLID_F, 16, 40, 12),
	XE(mad_congestion_log_switch, "DLID", 15,
	   IB_CC_CONGESTION_LOG_ENTRY_SWITCH_DLID_F, 16, 40, 12),
	XE(mad_congestion_log_switch, "SL", 15,
	   IB_CC_CONGESTION_LOG_ENTRY_SWITCH_SL_F, 4, 40, 12),
	XE(mad_congestion_log_switch, "Timestamp", 15,
	   IB_CC_CONGESTION_LOG_ENTRY_SWITCH_TIMESTAMP_F, 32, 40, 12),

	X(mad_congestion_log_ca, "LogType", IB_CC_CONGESTION_LOG_LOGTYPE_F, 8),
	X(mad_congestion_log_ca, "CongestionFlags",
	  IB_CC_CONGESTION_LOG_CONGESTION_FLAGS_F, 8),
	X(mad_congestion_log_ca, "ThresholdEventCounter",
	  IB_CC_CONGESTION_LOG_CA_THRESHOLD_EVENT_COUNTER_F, 16),
	X(mad_congestion_log_ca, "ThresholdCongestionEventMap",
	  IB_CC_CONGESTION_LOG_CA_THRESHOLD_CONGESTION_EVENT_MAP_F, 16),
	X(mad_congestion_log_ca, "CurrentTimeStamp",
	  IB_CC_CONGESTION_LOG_CA_CURRENT_TIMESTAMP_F, 32),
	XE(mad_congestion_log_ca, "Local_QP_CN_Entry", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_LOCAL_QP_CN_ENTRY_F, 24, 12, 16),
	XE(mad_congestion_log_ca, "SL_CN_Entry", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_SL_CN_ENTRY_F, 4, 12, 16),
	XE(mad_congestion_log_ca, "Service_Type_CN_Entry", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_SERVICE_TYPE_CN_ENTRY_F, 4, 12, 16),
	XE(mad_congestion_log_ca, "Remote_QP_Number_CN_Entry", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_REMOTE_QP_NUMBER_CN_ENTRY_F, 24, 12,
	   16),
	XE(mad_congestion_log_ca, "Local_LID_CN", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_LOCAL_LID_CN_F, 16, 12, 16),
	XE(mad_congestion_log_ca, "Remote_LID_CN_Entry", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_REMOTE_LID_CN_ENTRY_F, 16, 12, 16),
	XE(mad_congestion_log_ca, "Timestamp_CN_Entry", 13,
	   IB_CC_CONGESTION_LOG_ENTRY_CA_TIMESTAMP_CN_ENTRY_F, 32, 12, 16),

	X(mad_switch_congestion_setting, "Control_Map",
	  IB_CC_SWITCH_CONGESTION_SETTING_CONTROL_MAP_F, 32),
	XS(mad_switch_congestion_setting, "Victim_Mask", 0, 32,
	   IB_CC_SWITCH_CONGESTION_SETTING_VICTIM_MASK_F, 256, 0, 8),
	XS(mad_switch_congestion_setting, "Credit_Mask", 0, 32,
	   IB_CC_SWITCH_CONGESTION_SETTING_CREDIT_MASK_F, 256, 0, 8),
	X(mad_switch_congestion_setting, "Threshold",
	  IB_CC_SWITCH_CONGESTION_SETTING_THRESHOLD_F, 4),
	X(mad_switch_congestion_setting, "Packet_Size",
	  IB_CC_SWITCH_CONGESTION_SETTING_PACKET_SIZE_F, 8),
	X(mad_switch_congestion_setting, "CS_Threshold",
	  IB_CC_SWITCH_CONGESTION_SETTING_CS_THRESHOLD_F, 4),
	X(mad_switch_congestion_setting, "CS_ReturnDelay",
	  IB_CC_SWITCH_CONGESTION_SETTING_CS_RETURN_DELAY_F, 16),
	X(mad_switch_congestion_setting, "Marking_Rate",
	  IB_CC_SWITCH_CONGESTION_SETTING_MARKING_RATE_F, 16),

	XE(mad_switch_port_congestion_setting, "Valid", 32,
	   IB_CC_SWITCH_PORT_CONGESTION_SETTING_ELEMENT_VALID_F, 1, 0, 4),
	XE(mad_switch_port_congestion_setting, "Control_Type", 32,
	   IB_CC_SWITCH_PORT_CONGESTION_SETTING_ELEMENT_CONTROL_TYPE_F, 1, 0,
	   4),
	XE(mad_switch_port_congestion_setting, "Threshold", 32,
	   IB_CC_SWITCH_PORT_CONGESTION_SETTING_ELEMENT_THRESHOLD_F, 4, 0, 4),
	XE(mad_switch_port_congestion_setting, "Packet_Size", 32,
	   IB_CC_SWITCH_PORT_CONGESTION_SETTING_ELEMENT_PACKET_SIZE_F, 8, 0, 4),
	XE(mad_switch_port_congestion_setting, "Cong_Parm", 32,
	   IB_CC_SWITCH_PORT_CONGESTION_SETTING_ELEMENT_CONG_PARM_MARKING_RATE_F,
	   16, 0, 4),

	X(mad_ca_congestion_setting, "Port_Control",
	  IB_CC_CA_CONGESTION_SETTING_PORT_CONTROL_F, 16),
	X(mad_ca_congestion_setting, "Control_Map",
	  IB_CC_CA_CONGESTION_SETTING_CONTROL_MAP_F, 16),
	XE(mad_ca_congestion_setting, "CCTI_Timer", 16,
	   IB_CC_CA_CONGESTION_ENTRY_CCTI_TIMER_F, 16, 4, 8),
	XE(mad_ca_congestion_setting, "CCTI_Increase", 16,
	   IB_CC_CA_CONGESTION_ENTRY_CCTI_INCREASE_F, 8, 4, 8),
	XE(mad_ca_congestion_setting, "Trigger_Threshold", 16,
	   IB_CC_CA_CONGESTION_ENTRY_TRIGGER_THRESHOLD_F, 8, 4, 8),
	XE(mad_ca_congestion_setting, "CCTI_Min", 16,
	   IB_CC_CA_CONGESTION_ENTRY_CCTI_MIN_F, 8, 4, 8),

	X(mad_cc_table, "CCTI_Limit",
	  IB_CC_CONGESTION_CONTROL_TABLE_CCTI_LIMIT_F, 16),
	XE(mad_cc_table, "CCT_Shift", 64,
	   IB_CC_CONGESTION_CONTROL_TABLE_ENTRY_CCT_SHIFT_F, 2, 4, 2),
	XE(mad_cc_table, "CCT_Multiplier", 64,
	   IB_CC_CONGESTION_CONTROL_TABLE_ENTRY_CCT_MULTIPLIER_F, 14, 4, 2),

	X(mad_cc_timestamp, "Timestamp", IB_CC_TIMESTAMP_F, 32),
};

/*
 * ibemu fields libibmad has no field for (or gets wrong), and where they
 * are checked instead.
 */
static const struct {
	const struct ibemu_mad_layout *l;
	const char *field;
	const char *why;
} no_xcheck[] = {
	{L(mad_smp_lid), "Data", "IB_SM_DATA_F is empty; umad_smp"},
	{L(mad_smp_dr), "Data", "IB_SM_DATA_F is empty; umad_smp"},
	{L(mad_cc), "Data", "bytes 32-63: IB_CC_LOG_DATA_OFFS only"},
	{L(mad_pkey_table), "P_KeyEntry", "no field; test_known_bytes"},
	{L(mad_notice), "IssuerGID", "no field; test_known_bytes"},
	{L(mad_trap_port), "PORTNO", "no field; test_known_bytes"},
	{L(mad_trap_local_changes), "OtherLocalChanges", "no field"},
	{L(mad_trap_local_changes), "LinkSpeedEnabledChange", "no field"},
	{L(mad_trap_local_changes), "LinkWidthEnabledChange", "no field"},
	{L(mad_trap_local_changes), "NodeDescriptionChange", "no field"},
	{L(mad_trap_local_changes), "CapabilityMask2", "no field"},
	/*
	 * libibmad's IB_PC_QP1_DROP_F is {160, 16} without BITSOFFS, so it
	 * reads bytes 22-23, VL15Dropped's; test_known_bytes checks 20-21.
	 */
	{L(mad_port_counters), "QP1Dropped", "libibmad bug"},
};

static const struct ibemu_mad_field *row_field(const struct xrow *r)
{
	const struct ibemu_mad_field *f =
		ibemu_mad_layout_field(r->l, r->field);

	if (!f)
		fprintf(stderr, "no field %s in %s\n", r->field, r->l->name);
	return f;
}

/* The compared width of a row. */
static unsigned row_width(const struct xrow *r, const struct ibemu_mad_field *f)
{
	return r->my_width ? r->my_width : f->width;
}

static uint64_t ibemu_value(const struct xrow *r,
			    const struct ibemu_mad_field *f, const void *host,
			    unsigned k)
{
	uint64_t v = ibemu_mad_field_get(f, host, r->first + k);

	if (!r->my_width)
		return v;
	return (v >> (f->width - r->my_bit - r->my_width)) & mask(r->my_width);
}

union ibmad_val {
	uint32_t u32;
	uint64_t u64;
	uint8_t b[256];
};

/* libibmad's value of row 'r', element 'k', the layout encoded at 'at'. */
static uint64_t ibmad_value(const struct xrow *r, unsigned cw, uint8_t *at,
			    unsigned k)
{
	uint8_t *p = at + r->off + (int)k * r->off_step;
	unsigned sub = r->sub + k * r->sub_step;
	union ibmad_val v;

	memset(&v, 0, sizeof(v));
	mad_decode_field(p, r->id, &v);
	if (r->bits <= 32)
		return (v.u32 >> (r->bits - sub - cw)) & mask(cw);
	if (r->bits == 64)
		return (v.u64 >> (64 - sub - cw)) & mask(cw);
	return bitstr_get(v.b, sub, cw);
}

/* Writes 'val' into row 'r', element 'k', through libibmad. */
static void ibmad_store(const struct xrow *r, unsigned cw, uint8_t *at,
			unsigned k, uint64_t val)
{
	uint8_t *p = at + r->off + (int)k * r->off_step;
	unsigned sub = r->sub + k * r->sub_step;
	union ibmad_val v;
	uint64_t m;

	memset(&v, 0, sizeof(v));
	if (cw != r->bits) /* only part of libibmad's field: read first */
		mad_decode_field(p, r->id, &v);
	if (r->bits <= 32) {
		m = mask(cw) << (r->bits - sub - cw);
		v.u32 = (uint32_t)((v.u32 & ~m) |
				   (val << (r->bits - sub - cw) & m));
	} else if (r->bits == 64) {
		m = mask(cw) << (64 - sub - cw);
		v.u64 = (v.u64 & ~m) | (val << (64 - sub - cw) & m);
	} else {
		bitstr_put(v.b, sub, cw, val);
	}
	mad_encode_field(p, r->id, &v);
}

/*
 * The rows' own claims about libibmad (the field's width) hold: a field
 * read from all ones is all ones over 'bits' bits.
 */
static void test_xcheck_rows(void)
{
	const struct xrow *r;

	for (r = xrows; r < xrows + IBEMU_ARRAY_SIZE(xrows); r++) {
		const struct ibemu_mad_field *f = row_field(r);
		union ibmad_val v, ones;
		unsigned nbytes = 0, i, cw;

		T_TRUE(f != NULL);
		if (!f)
			continue;
		cw = row_width(r, f);
		T_TRUE(r->first + r->n <= f->count);
		T_TRUE(r->my_bit + cw <= f->width);
		/* Only XS rows compare a part of libibmad's field. */
		if (r->part)
			T_TRUE(r->sub + (r->n - 1) * r->sub_step + cw <=
			       r->bits);
		else
			T_EQ_INT(cw, r->bits);
		memset(&ones, 0xff, sizeof(ones));
		memset(&v, 0, sizeof(v));
		mad_decode_field(ones.b, r->id, &v);
		if (r->bits <= 32) {
			T_EQ_U64(v.u32, mask(r->bits));
			continue;
		}
		for (i = 0; i < sizeof(v.b); i++)
			if (v.b[i])
				nbytes = i + 1;
		if (nbytes != r->bits / 8)
			fprintf(stderr, "%s %s: libibmad %s is %u bytes\n",
				r->l->name, r->field, mad_field_name(r->id),
				nbytes);
		T_EQ_INT(nbytes, r->bits / 8);
	}
}

/* Every row of layout 'l' agrees with the host struct 'host' encoded. */
static unsigned check_rows(const struct ibemu_mad_layout *l, const void *host)
{
	uint8_t buf[BUFLEN] = {0};
	const struct xrow *r;
	unsigned k, bad = 0;

	if (ibemu_mad_layout_encode(l, host, buf + POS, l->wire_len))
		return 1;
	for (r = xrows; r < xrows + IBEMU_ARRAY_SIZE(xrows); r++) {
		const struct ibemu_mad_field *f;

		if (r->l != l || !(f = row_field(r)))
			continue;
		for (k = 0; k < r->n; k++) {
			uint64_t mine = ibemu_value(r, f, host, k);
			uint64_t theirs =
				ibmad_value(r, row_width(r, f), buf + POS, k);

			if (mine == theirs)
				continue;
			if (bad++ < 10)
				fprintf(stderr,
					"%s.%s[%u]: ibemu %#" PRIx64
					", libibmad %s %#" PRIx64 "\n",
					l->name, r->field, r->first + k, mine,
					mad_field_name(r->id), theirs);
		}
	}
	return bad;
}

/* ibemu encodes, libibmad decodes: random structs, then one field at a time. */
static void test_xcheck_encode(void)
{
	const struct ibemu_mad_layout *const *lp;
	struct rng r = {3};

	for (lp = ibemu_mad_layouts; *lp; lp++) {
		const struct ibemu_mad_layout *l = *lp;
		const struct ibemu_mad_field *f;
		union host h;
		unsigned k, i;

		for (k = 0; k < ROUNDS; k++) {
			fill_random(l, &h, &r);
			T_EQ_INT(check_rows(l, &h), 0);
		}
		/* All ones in one field: a width or offset off by one shows. */
		for (f = l->fields; f < l->fields + l->nfields; f++) {
			for (i = 0; i < f->count; i++) {
				memset(&h, 0, sizeof(h));
				ibemu_mad_field_set(f, &h, i, mask(f->width));
				T_EQ_INT(check_rows(l, &h), 0);
			}
		}
	}
}

/*
 * libibmad encodes one field into random bytes, ibemu decodes: reading
 * any neighbouring bit would show as a wrong value.
 */
static void test_xcheck_decode(void)
{
	struct rng r = {4};
	const struct xrow *x;

	for (x = xrows; x < xrows + IBEMU_ARRAY_SIZE(xrows); x++) {
		const struct ibemu_mad_field *f = row_field(x);
		unsigned k, round, i, cw;

		if (!f)
			continue;
		cw = row_width(x, f);
		for (k = 0; k < x->n; k++) {
			for (round = 0; round < 8; round++) {
				uint8_t buf[BUFLEN];
				uint64_t val = rng_next(&r) & mask(cw), got;
				union host h;

				for (i = 0; i < sizeof(buf); i++)
					buf[i] = (uint8_t)rng_next(&r);
				ibmad_store(x, cw, buf + POS, k, val);
				T_EQ_INT(ibemu_mad_layout_decode(
						 x->l, buf + POS,
						 x->l->wire_len, &h),
					 0);
				got = ibemu_value(x, f, &h, k);
				if (got != val)
					fprintf(stderr,
						"%s.%s[%u]: libibmad %s wrote "
						"%#" PRIx64
						", ibemu read %#" PRIx64 "\n",
						x->l->name, x->field,
						x->first + k,
						mad_field_name(x->id), val,
						got);
				T_EQ_U64(got, val);
			}
		}
	}
}

static int covered(const struct ibemu_mad_layout *l,
		   const struct ibemu_mad_field *f, unsigned idx)
{
	const struct xrow *r;

	for (r = xrows; r < xrows + IBEMU_ARRAY_SIZE(xrows); r++)
		if (r->l == l && !strcmp(r->field, f->name) &&
		    idx >= r->first && idx < r->first + r->n)
			return 1;
	return 0;
}

static int excused(const struct ibemu_mad_layout *l,
		   const struct ibemu_mad_field *f)
{
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(no_xcheck); i++)
		if (no_xcheck[i].l == l && !strcmp(no_xcheck[i].field, f->name))
			return 1;
	return 0;
}

/*
 * Nothing is skipped: every element of every ibemu field is in a row or
 * in the list of fields libibmad lacks, and every libibmad field of the
 * families this library implements is in some row.
 */
static void test_xcheck_coverage(void)
{
	static const struct {
		enum MAD_FIELDS first, last; /* [first, last) */
	} families[] = {
		{IB_MAD_METHOD_F, IB_SA_MKEY_F},
		{IB_PORT_FIRST_F, IB_PORT_LAST_F},
		{IB_NODE_FIRST_F, IB_NODE_LAST_F},
		{IB_SW_FIRST_F, IB_SW_LAST_F},
		{IB_LINEAR_FORW_TBL_F, IB_PC_FIRST_F},
		{IB_PC_FIRST_F, IB_PC_LAST_F},
		{IB_SMINFO_GUID_F, IB_SA_RMPP_VERS_F},
		{IB_SLTOVL_MAPPING_TABLE_F, IB_VEND2_OUI_F},
		{IB_PC_EXT_FIRST_F, IB_PC_EXT_LAST_F},
		{IB_GUID_GUID0_F, IB_PC_XMT_DATA_SL_FIRST_F},
		{IB_GI_GUID0_F, IB_SA_GIR_LID_F},
		{IB_PORT_CAPMASK2_F, IB_PORT_LINK_SPEED_EXT_LAST_F},
		{IB_CC_CCKEY_F, IB_SA_NR_FIRST_F},
		{IB_PC_EXT_COUNTER_SELECT2_F, IB_PC_EXT_ERR_LAST_F},
	};
	const struct ibemu_mad_layout *const *lp;
	unsigned i, ids = 0, pairs = 0, missing = 0;
	int e;

	for (lp = ibemu_mad_layouts; *lp; lp++) {
		const struct ibemu_mad_field *f;

		for (f = (*lp)->fields; f < (*lp)->fields + (*lp)->nfields; f++)
			for (i = 0; i < f->count; i++)
				if (!covered(*lp, f, i) && !excused(*lp, f)) {
					fprintf(stderr, "%s.%s[%u] unchecked\n",
						(*lp)->name, f->name, i);
					missing++;
				}
	}
	T_EQ_INT(missing, 0);

	for (i = 0; i < IBEMU_ARRAY_SIZE(families); i++) {
		for (e = families[i].first; e < (int)families[i].last; e++) {
			const struct xrow *r;
			int used = 0;

			/* The FIRST and LAST markers are empty fields. */
			if (!mad_field_name(e)[0])
				continue;
			for (r = xrows; r < xrows + IBEMU_ARRAY_SIZE(xrows);
			     r++)
				used |= (int)r->id == e;
			if (!used)
				fprintf(stderr, "libibmad %s (%d) unchecked\n",
					mad_field_name(e), e);
			T_TRUE(used);
		}
	}

	for (e = 1; e < IB_FIELD_LAST_; e++) {
		const struct xrow *r;
		int used = 0;

		for (r = xrows; r < xrows + IBEMU_ARRAY_SIZE(xrows); r++) {
			if ((int)r->id == e) {
				used = 1;
				pairs += r->n;
			}
		}
		ids += used;
	}
	printf("\n  mad: %u libibmad fields cross-checked, %u field pairs, "
	       "%zu rows\n",
	       ids, pairs, IBEMU_ARRAY_SIZE(xrows));
	T_TRUE(ids >= 200);
}

/*
 * The accessors of mad_hdr.h against libibmad's fields: each accessor is
 * one or two libibmad fields (Method is IB_MAD_RESPONSE_F and
 * IB_MAD_METHOD_F; ClassSpecific, which libibmad has for directed-route
 * SMPs only, is IB_DRSMP_HOPPTR_F and IB_DRSMP_HOPCNT_F). 'shift' and
 * 'width' say which bits of the accessor's value a field holds.
 */
struct hdr_part {
	unsigned shift, width;
	enum MAD_FIELDS id;
};

struct hdr_row {
	const char *name;
	uint64_t (*get)(const uint8_t *mad);
	void (*set)(uint8_t *mad, uint64_t v);
	unsigned width;		 /* of the accessor's value */
	struct hdr_part part[2]; /* part[1].width 0: one part */
};

/* Uniform wrappers of ibemu_<hdr>_get_<name>() and _set_<name>(). */
#define HDR_ACC(hdr, name)                                       \
	static uint64_t get_##hdr##_##name(const uint8_t *mad)   \
	{                                                        \
		return ibemu_##hdr##_get_##name(mad);            \
	}                                                        \
	static void set_##hdr##_##name(uint8_t *mad, uint64_t v) \
	{                                                        \
		ibemu_##hdr##_set_##name(mad, v);                \
	}
HDR_ACC(mad, base_version)
HDR_ACC(mad, mgmt_class)
HDR_ACC(mad, class_version)
HDR_ACC(mad, method)
HDR_ACC(mad, r)
HDR_ACC(mad, status)
HDR_ACC(mad, class_specific)
HDR_ACC(mad, tid)
HDR_ACC(mad, attr_id)
HDR_ACC(mad, attr_mod)
HDR_ACC(rmpp, version)
HDR_ACC(rmpp, type)
HDR_ACC(rmpp, resp_time)
HDR_ACC(rmpp, flags)
HDR_ACC(rmpp, status)
HDR_ACC(rmpp, seg_num)
HDR_ACC(rmpp, paylen)
HDR_ACC(rmpp, new_window_last)
HDR_ACC(sa, sm_key)
HDR_ACC(sa, attr_offset)
HDR_ACC(sa, comp_mask)
HDR_ACC(vendor, oui)
HDR_ACC(smp, d)
HDR_ACC(smp, hop_ptr)
HDR_ACC(smp, hop_cnt)
HDR_ACC(smp, dr_slid)
HDR_ACC(smp, dr_dlid)

#define HDR_ROW(hdr, name, w, id_)                                         \
	{                                                                  \
#hdr "_" #name, get_##hdr##_##name, set_##hdr##_##name, w, \
		{                                                          \
			{                                                  \
				0, w, id_                                  \
			}                                                  \
		}                                                          \
	}
#define HDR_ROW2(hdr, name, w, s0, w0, id0, s1, w1, id1)                   \
	{                                                                  \
#hdr "_" #name, get_##hdr##_##name, set_##hdr##_##name, w, \
		{                                                          \
			{s0, w0, id0},                                     \
			{                                                  \
				s1, w1, id1                                \
			}                                                  \
		}                                                          \
	}

static const struct hdr_row hdr_rows[] = {
	HDR_ROW(mad, base_version, 8, IB_MAD_BASEVER_F),
	HDR_ROW(mad, mgmt_class, 8, IB_MAD_MGMTCLASS_F),
	HDR_ROW(mad, class_version, 8, IB_MAD_CLASSVER_F),
	HDR_ROW2(mad, method, 8, 0, 7, IB_MAD_METHOD_F, 7, 1,
		 IB_MAD_RESPONSE_F),
	HDR_ROW(mad, r, 1, IB_MAD_RESPONSE_F),
	HDR_ROW(mad, status, 16, IB_MAD_STATUS_F),
	HDR_ROW2(mad, class_specific, 16, 8, 8, IB_DRSMP_HOPPTR_F, 0, 8,
		 IB_DRSMP_HOPCNT_F),
	HDR_ROW(mad, tid, 64, IB_MAD_TRID_F),
	HDR_ROW(mad, attr_id, 16, IB_MAD_ATTRID_F),
	HDR_ROW(mad, attr_mod, 32, IB_MAD_ATTRMOD_F),
	HDR_ROW(rmpp, version, 8, IB_SA_RMPP_VERS_F),
	HDR_ROW(rmpp, type, 8, IB_SA_RMPP_TYPE_F),
	HDR_ROW(rmpp, resp_time, 5, IB_SA_RMPP_RESP_F),
	HDR_ROW(rmpp, flags, 3, IB_SA_RMPP_FLAGS_F),
	HDR_ROW(rmpp, status, 8, IB_SA_RMPP_STATUS_F),
	HDR_ROW(rmpp, seg_num, 32, IB_SA_RMPP_SEGNUM_F),
	HDR_ROW(rmpp, seg_num, 32, IB_SA_RMPP_D1_F),
	HDR_ROW(rmpp, paylen, 32, IB_SA_RMPP_LEN_F),
	HDR_ROW(rmpp, paylen, 32, IB_SA_RMPP_D2_F),
	HDR_ROW(rmpp, new_window_last, 32, IB_SA_RMPP_NEWWIN_F),
	HDR_ROW(sa, sm_key, 64, IB_SA_MKEY_F),
	HDR_ROW(sa, attr_offset, 16, IB_SA_ATTROFFS_F),
	HDR_ROW(sa, comp_mask, 64, IB_SA_COMPMASK_F),
	HDR_ROW(vendor, oui, 24, IB_VEND2_OUI_F),
	HDR_ROW(smp, d, 1, IB_DRSMP_DIRECTION_F),
	HDR_ROW(smp, hop_ptr, 8, IB_DRSMP_HOPPTR_F),
	HDR_ROW(smp, hop_cnt, 8, IB_DRSMP_HOPCNT_F),
	HDR_ROW(smp, dr_slid, 16, IB_DRSMP_DRSLID_F),
	HDR_ROW(smp, dr_dlid, 16, IB_DRSMP_DRDLID_F),
};

static uint64_t ibmad_get(uint8_t *mad, const struct hdr_part *p)
{
	if (p->width == 64)
		return mad_get_field64(mad, 0, p->id);
	return mad_get_field(mad, 0, p->id);
}

static void ibmad_set(uint8_t *mad, const struct hdr_part *p, uint64_t v)
{
	uint64_t part = (v >> p->shift) & mask(p->width);

	if (p->width == 64)
		mad_set_field64(mad, 0, p->id, part);
	else
		mad_set_field(mad, 0, p->id, (uint32_t)part);
}

static unsigned hdr_nparts(const struct hdr_row *row)
{
	return row->part[1].width ? 2 : 1;
}

/*
 * Both directions on random MADs: what ibemu writes, libibmad reads, and
 * the reverse; and an ibemu setter changes exactly the bytes libibmad's
 * setters change (no neighbouring bit is touched).
 */
static void test_hdr_accessors(void)
{
	struct rng r = {5};
	const struct hdr_row *row;
	unsigned round, i, k;

	for (row = hdr_rows; row < hdr_rows + IBEMU_ARRAY_SIZE(hdr_rows);
	     row++) {
		unsigned bits = 0;

		/* The parts cover the accessor's value, each its full field. */
		for (k = 0; k < hdr_nparts(row); k++) {
			uint8_t ones[IBEMU_MAD_LEN];

			memset(ones, 0xff, sizeof(ones));
			T_EQ_U64(ibmad_get(ones, &row->part[k]),
				 mask(row->part[k].width));
			bits += row->part[k].width;
		}
		T_EQ_INT(bits, row->width);
		for (round = 0; round < ROUNDS; round++) {
			uint8_t orig[IBEMU_MAD_LEN], mine[IBEMU_MAD_LEN],
				theirs[IBEMU_MAD_LEN];
			uint64_t v = rng_next(&r) & mask(row->width);

			for (i = 0; i < sizeof(orig); i++)
				orig[i] = (uint8_t)rng_next(&r);
			memcpy(mine, orig, sizeof(mine));
			memcpy(theirs, orig, sizeof(theirs));
			row->set(mine, v);
			for (k = 0; k < hdr_nparts(row); k++)
				ibmad_set(theirs, &row->part[k], v);
			if (memcmp(mine, theirs, sizeof(mine)))
				fprintf(stderr,
					"%s: set %#" PRIx64
					" differs from libibmad\n",
					row->name, v);
			T_TRUE(!memcmp(mine, theirs, sizeof(mine)));
			T_EQ_U64(row->get(theirs), v);
			for (k = 0; k < hdr_nparts(row); k++)
				T_EQ_U64(ibmad_get(mine, &row->part[k]),
					 (v >> row->part[k].shift) &
						 mask(row->part[k].width));
		}
	}
}

/* The framing constants of mad_hdr.h against rdma-core's and libibmad's. */
static void test_hdr_constants(void)
{
	uint8_t mad[IBEMU_MAD_LEN];
	unsigned c;

	T_EQ_INT(offsetof(struct umad_rmpp_packet, rmpp_hdr),
		 IBEMU_RMPP_HDR_OFF);
	T_EQ_INT(sizeof(struct umad_rmpp_hdr), IBEMU_RMPP_HDR_LEN);
	T_EQ_INT(offsetof(struct umad_rmpp_packet, data), IBEMU_RMPP_HDR_END);
	T_EQ_INT(offsetof(struct umad_sa_packet, sm_key), IBEMU_SA_HDR_OFF);
	T_EQ_INT(offsetof(struct umad_sa_packet, data), IBEMU_SA_DATA_OFF);
	T_EQ_INT(sizeof(((struct umad_sa_packet *)0)->data), IBEMU_SA_DATA_LEN);
	T_EQ_INT(IB_SA_DATA_OFFS, IBEMU_SA_DATA_OFF);
	T_EQ_INT(offsetof(struct umad_vendor_packet, oui),
		 IBEMU_VENDOR2_OUI_OFF);
	T_EQ_INT(offsetof(struct umad_vendor_packet, data),
		 IBEMU_VENDOR2_DATA_OFF);
	T_EQ_INT(IB_VENDOR_RANGE2_DATA_OFFS, IBEMU_VENDOR2_DATA_OFF);
	T_EQ_INT(IBEMU_RMPP_VERSION, UMAD_RMPP_VERSION);
	T_EQ_INT(IBEMU_RMPP_FLAG_ACTIVE, UMAD_RMPP_FLAG_ACTIVE);
	T_EQ_INT(IBEMU_MAD_CLASS_SA, UMAD_CLASS_SUBN_ADM);
	T_EQ_INT(IBEMU_MAD_CLASS_BM, UMAD_CLASS_BM);
	T_EQ_INT(IBEMU_MAD_CLASS_DEV_MGT, UMAD_CLASS_DEVICE_MGMT);
	T_EQ_INT(IBEMU_MAD_CLASS_DEV_ADM, UMAD_CLASS_DEVICE_ADM);
	T_EQ_INT(IBEMU_MAD_CLASS_BIS, UMAD_CLASS_BIS);
	T_EQ_INT(IBEMU_MAD_CLASS_VENDOR2_FIRST, UMAD_CLASS_VENDOR_RANGE2_START);
	T_EQ_INT(IBEMU_MAD_CLASS_VENDOR2_LAST, UMAD_CLASS_VENDOR_RANGE2_END);

	/* The classes with an RMPP header, and RMPP-active MADs. */
	for (c = 0; c < 256; c++) {
		int rmpp = c == 0x03 || c == 0x06 || c == 0x10 || c == 0x12 ||
			   (c >= 0x30 && c <= 0x4f);

		T_EQ_INT(ibemu_mad_class_has_rmpp((uint8_t)c), rmpp);
		T_EQ_INT(ibemu_mad_class_is_vendor2((uint8_t)c),
			 c >= 0x30 && c <= 0x4f);
		memset(mad, 0, sizeof(mad));
		mad[1] = (uint8_t)c;
		mad[26] = 0xfe; /* every bit of the byte but Active */
		T_EQ_INT(ibemu_rmpp_is_active(mad), 0);
		mad[26] = IBEMU_RMPP_FLAG_ACTIVE;
		T_EQ_INT(ibemu_rmpp_is_active(mad), rmpp);
	}
}

void ibemu_test_register_mad_codecs(void)
{
	static const struct ibemu_test tests[] = {
		{"bits", test_bits},
		{"bits_all", test_bits_all},
		{"layouts", test_layouts},
		{"roundtrip", test_roundtrip},
		{"errors", test_errors},
		{"framings", test_framings},
		{"umad_structs", test_umad_structs},
		{"constants", test_constants},
		{"known_bytes", test_known_bytes},
		{"xcheck_rows", test_xcheck_rows},
		{"xcheck_encode", test_xcheck_encode},
		{"xcheck_decode", test_xcheck_decode},
		{"xcheck_coverage", test_xcheck_coverage},
		{"hdr_accessors", test_hdr_accessors},
		{"hdr_constants", test_hdr_constants},
		{NULL, NULL},
	};

	ibemu_test_add_suite("mad.codecs", tests);
}
