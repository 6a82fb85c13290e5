// SPDX-License-Identifier: MIT
/*
 * The generic codec behind every MAD layout: big-endian bit fields in the
 * IBA's numbering (bit 0 = most significant bit of the first byte), moved
 * to and from unsigned host members. Encoding checks every value before it
 * writes anything, so a failed encode leaves the buffer as it was.
 */
#include <errno.h>
#include <string.h>

#include "util.h"
#include "mad_layout.h"
#include "mad.h"
#include "mad_cc.h"
#include "mad_pma.h"
#include "mad_sma.h"

const struct ibemu_mad_layout *const ibemu_mad_layouts[] = {
	&ibemu_mad_hdr_layout,
	&ibemu_mad_smp_lid_layout,
	&ibemu_mad_smp_dr_layout,
	&ibemu_mad_pma_layout,
	&ibemu_mad_cc_layout,
	&ibemu_mad_node_desc_layout,
	&ibemu_mad_node_info_layout,
	&ibemu_mad_switch_info_layout,
	&ibemu_mad_guid_info_layout,
	&ibemu_mad_port_info_layout,
	&ibemu_mad_pkey_table_layout,
	&ibemu_mad_sl2vl_table_layout,
	&ibemu_mad_vlarb_table_layout,
	&ibemu_mad_lft_layout,
	&ibemu_mad_mft_layout,
	&ibemu_mad_sm_info_layout,
	&ibemu_mad_notice_layout,
	&ibemu_mad_notice_smp_layout,
	&ibemu_mad_trap_lid_layout,
	&ibemu_mad_trap_port_layout,
	&ibemu_mad_trap_local_changes_layout,
	&ibemu_mad_class_port_info_layout,
	&ibemu_mad_port_counters_layout,
	&ibemu_mad_port_counters_ext_layout,
	&ibemu_mad_congestion_info_layout,
	&ibemu_mad_congestion_key_info_layout,
	&ibemu_mad_congestion_log_switch_layout,
	&ibemu_mad_congestion_log_ca_layout,
	&ibemu_mad_switch_congestion_setting_layout,
	&ibemu_mad_switch_port_congestion_setting_layout,
	&ibemu_mad_ca_congestion_setting_layout,
	&ibemu_mad_cc_table_layout,
	&ibemu_mad_cc_timestamp_layout,
	NULL,
};

/* The generic walk: the bytes the field touches, their bits at the bottom. */
static uint64_t bits_get_walk(const uint8_t *buf, unsigned bit, unsigned width)
{
	unsigned end = bit + width, i;
	uint64_t v = 0;

	for (i = bit / 8; i * 8 < end; i++) {
		unsigned lo = i * 8 > bit ? i * 8 : bit;
		unsigned hi = i * 8 + 8 < end ? i * 8 + 8 : end;
		unsigned n = hi - lo;
		unsigned chunk = (buf[i] >> (i * 8 + 8 - hi)) & ((1u << n) - 1);

		v = (v << n) | chunk;
	}
	return v;
}

static void bits_put_walk(uint8_t *buf, unsigned bit, unsigned width,
			  uint64_t v)
{
	unsigned end = bit + width, i;

	for (i = bit / 8; i * 8 < end; i++) {
		unsigned lo = i * 8 > bit ? i * 8 : bit;
		unsigned hi = i * 8 + 8 < end ? i * 8 + 8 : end;
		unsigned n = hi - lo, shift = i * 8 + 8 - hi;
		unsigned mask = ((1u << n) - 1) << shift;
		unsigned chunk = (unsigned)(v >> (end - hi)) & ((1u << n) - 1);

		buf[i] = (uint8_t)((buf[i] & ~mask) | (chunk << shift));
	}
}

static uint64_t width_mask(unsigned width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/*
 * A field within 8 bytes (all but an unaligned field wider than 56 bits)
 * is read as one big-endian word of the bytes it touches: every SMP the
 * SM sends and the SMA answers goes through here, field by field.
 */
static inline uint64_t bits_get(const uint8_t *buf, unsigned bit,
				unsigned width)
{
	unsigned first = bit / 8, nbytes = (bit % 8 + width + 7) / 8, i;
	uint64_t w = 0;

	if (nbytes > 8)
		return bits_get_walk(buf, bit, width);
	for (i = 0; i < nbytes; i++)
		w = w << 8 | buf[first + i];
	return w >> (nbytes * 8 - bit % 8 - width) & width_mask(width);
}

static inline void bits_put(uint8_t *buf, unsigned bit, unsigned width,
			    uint64_t v)
{
	unsigned first = bit / 8, nbytes = (bit % 8 + width + 7) / 8, i, shift;
	uint64_t w = 0, mask;

	if (nbytes > 8) {
		bits_put_walk(buf, bit, width, v);
		return;
	}
	for (i = 0; i < nbytes; i++)
		w = w << 8 | buf[first + i];
	shift = nbytes * 8 - bit % 8 - width;
	mask = width_mask(width) << shift;
	w = (w & ~mask) | (v << shift & mask);
	for (i = nbytes; i-- > 0; w >>= 8)
		buf[first + i] = (uint8_t)w;
}

uint64_t ibemu_mad_bits_get(const uint8_t *buf, unsigned bit, unsigned width)
{
	return bits_get(buf, bit, width);
}

void ibemu_mad_bits_put(uint8_t *buf, unsigned bit, unsigned width, uint64_t v)
{
	bits_put(buf, bit, width, v);
}

static const uint8_t *member(const struct ibemu_mad_field *f, const void *host,
			     unsigned idx)
{
	return (const uint8_t *)host + f->host_off +
	       (size_t)idx * f->host_stride;
}

uint64_t ibemu_mad_field_get(const struct ibemu_mad_field *f, const void *host,
			     unsigned idx)
{
	const uint8_t *p = member(f, host, idx);
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	/* memcpy keeps this free of aliasing and alignment assumptions. */
	switch (f->host_size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		IBEMU_BUG_ON(f->host_size != 8);
		memcpy(&u64, p, 8);
		return u64;
	}
}

void ibemu_mad_field_set(const struct ibemu_mad_field *f, void *host,
			 unsigned idx, uint64_t v)
{
	uint8_t *p =
		(uint8_t *)host + f->host_off + (size_t)idx * f->host_stride;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (f->host_size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	default:
		IBEMU_BUG_ON(f->host_size != 8);
		memcpy(p, &v, 8);
		break;
	}
}

static int fits(uint64_t v, unsigned width)
{
	return width >= 64 || !(v >> width);
}

/*
 * Byte strings (MAD data, DR paths, GIDs, masks, LFT blocks) are most of
 * the bits of a MAD: copy them whole instead of field by field.
 */
static int is_bytes(const struct ibemu_mad_field *f)
{
	return f->width == 8 && f->host_size == 1 && f->bit % 8 == 0 &&
	       (f->count == 1 || (f->stride == 8 && f->host_stride == 1));
}

int ibemu_mad_layout_encode(const struct ibemu_mad_layout *l, const void *host,
			    uint8_t *buf, size_t len)
{
	/* Built here, checked as it goes, copied out whole: a value that
	 * does not fit leaves 'buf' as it was. No layout exceeds a MAD. */
	uint8_t wire[IBEMU_MAD_LEN];
	const struct ibemu_mad_field *f;
	unsigned i;
	uint64_t v;

	if (len < l->wire_len)
		return -ENOSPC;
	IBEMU_BUG_ON(l->wire_len > sizeof(wire));
	memset(wire, 0, l->wire_len);
	for (f = l->fields; f < l->fields + l->nfields; f++) {
		if (is_bytes(f)) {
			memcpy(wire + f->bit / 8, member(f, host, 0), f->count);
			continue;
		}
		for (i = 0; i < f->count; i++) {
			v = ibemu_mad_field_get(f, host, i);
			if (!fits(v, f->width))
				return -ERANGE;
			bits_put(wire, f->bit + i * f->stride, f->width, v);
		}
	}
	memcpy(buf, wire, l->wire_len);
	return 0;
}

int ibemu_mad_layout_decode(const struct ibemu_mad_layout *l,
			    const uint8_t *buf, size_t len, void *host)
{
	const struct ibemu_mad_field *f;
	unsigned i;

	if (len < l->wire_len)
		return -EINVAL;
	memset(host, 0, l->host_size);
	for (f = l->fields; f < l->fields + l->nfields; f++) {
		if (is_bytes(f)) {
			memcpy((uint8_t *)host + f->host_off, buf + f->bit / 8,
			       f->count);
			continue;
		}
		for (i = 0; i < f->count; i++)
			ibemu_mad_field_set(f, host, i,
					    bits_get(buf,
						     f->bit + i * f->stride,
						     f->width));
	}
	return 0;
}

const struct ibemu_mad_field *
ibemu_mad_layout_field(const struct ibemu_mad_layout *l, const char *name)
{
	const struct ibemu_mad_field *f;

	for (f = l->fields; f < l->fields + l->nfields; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}
