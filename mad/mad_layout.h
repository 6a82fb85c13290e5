/* SPDX-License-Identifier: MIT */
/*
 * Wire layouts of MADs and of their attributes, as tables. The IBA gives
 * every MAD format and attribute as a table of (field, bit offset, length)
 * with bit 0 the most significant bit of byte 0 and every field
 * big-endian; a struct ibemu_mad_layout is such a table plus where each
 * field lives in a host struct. One generic codec moves values between the
 * two, so a layout is data that tests, fuzzers and the CLI can walk.
 *
 * Everything here is constant and may be used from any thread.
 */
#ifndef IBEMU_MAD_LAYOUT_H
#define IBEMU_MAD_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/*
 * One field of a layout: 'count' elements of 'width' bits, the first at
 * 'bit' and each 'stride' bits after the previous one on the wire; in the
 * host struct an unsigned integer of 'host_size' bytes at 'host_off',
 * elements 'host_stride' bytes apart.
 */
struct ibemu_mad_field {
	const char *name; /* the spec's name ("LinkWidthEnabled") */
	uint16_t bit;
	uint8_t width;	   /* 1..64 */
	uint8_t host_size; /* 1, 2, 4 or 8 */
	uint16_t host_off;
	uint16_t count; /* 1 for a scalar */
	uint16_t stride;
	uint16_t host_stride;
};

struct ibemu_mad_layout {
	const char *name;   /* "PortInfo" */
	uint8_t mgmt_class; /* 0 for the MAD formats themselves */
	uint16_t attr_id;
	uint16_t wire_len;  /* bytes the encoded form occupies */
	uint16_t host_size; /* sizeof the host struct */
	uint16_t nfields;
	const struct ibemu_mad_field *fields;
};

/*
 * Writes the host struct 'host' as 'l' lays it out into the first
 * l->wire_len bytes of 'buf' (reserved bits become 0; bytes past wire_len
 * are not touched). Returns 0, -ENOSPC if 'len' is shorter than wire_len, or
 * -ERANGE if a value does not fit its field; on error 'buf' is unchanged.
 */
int ibemu_mad_layout_encode(const struct ibemu_mad_layout *l, const void *host,
			    uint8_t *buf, size_t len);

/*
 * Reads the first l->wire_len bytes of 'buf' into the host struct 'host'
 * (zeroed first, padding included, so decoded structs compare with memcmp).
 * Reads no byte past wire_len. Returns 0, or -EINVAL if 'len' is shorter
 * than wire_len, in which case 'host' is unchanged.
 */
int ibemu_mad_layout_decode(const struct ibemu_mad_layout *l,
			    const uint8_t *buf, size_t len, void *host);

/* Looks a field up by its spec name; NULL if the layout has none. */
const struct ibemu_mad_field *
ibemu_mad_layout_field(const struct ibemu_mad_layout *l, const char *name);

/* Element 'idx' (< f->count) of field 'f' in a host struct. */
uint64_t ibemu_mad_field_get(const struct ibemu_mad_field *f, const void *host,
			     unsigned idx);
/* Stores 'v' truncated to the member's size (not to the field's width). */
void ibemu_mad_field_set(const struct ibemu_mad_field *f, void *host,
			 unsigned idx, uint64_t v);

/*
 * Big-endian bit fields of a byte buffer in the spec's numbering (bit 0 is
 * the most significant bit of buf[0]); 'width' is 1..64. The caller keeps
 * bit + width within the buffer.
 */
uint64_t ibemu_mad_bits_get(const uint8_t *buf, unsigned bit, unsigned width);
void ibemu_mad_bits_put(uint8_t *buf, unsigned bit, unsigned width, uint64_t v);

/* Every layout of the mad library (framings and attributes), NULL-ended. */
extern const struct ibemu_mad_layout *const ibemu_mad_layouts[];

/*
 * Table helpers for the layout definitions in mad/. IBEMU_MAD_F: a scalar
 * member 'm' of T; IBEMU_MAD_A: an array member 'm' of 'n' elements
 * 'stride' bits apart on the wire; IBEMU_MAD_S: member 'm' of each element
 * of the struct array 'arr'.
 */
#define IBEMU_MAD_F(T, m, bit_, width_, name_)                                \
	{                                                                     \
		.name = name_, .bit = bit_, .width = width_,                  \
		.host_size = sizeof(((T *)0)->m), .host_off = offsetof(T, m), \
		.count = 1, .stride = 0, .host_stride = 0                     \
	}
#define IBEMU_MAD_A(T, m, bit_, width_, n, stride_, name_)                    \
	{                                                                     \
		.name = name_, .bit = bit_, .width = width_,                  \
		.host_size = sizeof(((T *)0)->m[0]),                          \
		.host_off = offsetof(T, m[0]), .count = n, .stride = stride_, \
		.host_stride = sizeof(((T *)0)->m[0])                         \
	}
#define IBEMU_MAD_S(T, arr, m, bit_, width_, n, stride_, name_)            \
	{                                                                  \
		.name = name_, .bit = bit_, .width = width_,               \
		.host_size = sizeof(((T *)0)->arr[0].m),                   \
		.host_off = offsetof(T, arr[0].m), .count = n,             \
		.stride = stride_, .host_stride = sizeof(((T *)0)->arr[0]) \
	}
#define IBEMU_MAD_LAYOUT(name_, class_, attr_, T, wire_len_, fields_)  \
	{                                                              \
		.name = name_, .mgmt_class = class_, .attr_id = attr_, \
		.wire_len = wire_len_, .host_size = sizeof(T),         \
		.nfields = sizeof(fields_) / sizeof((fields_)[0]),     \
		.fields = fields_                                      \
	}

/*
 * Defines ibemu_mad_<noun>_encode() and _decode() for struct
 * ibemu_mad_<noun> and its layout ibemu_mad_<noun>_layout.
 */
#define IBEMU_MAD_DEFINE_CODEC(noun)                                          \
	int ibemu_mad_##noun##_encode(const struct ibemu_mad_##noun *v,       \
				      uint8_t *buf, size_t len)               \
	{                                                                     \
		return ibemu_mad_layout_encode(&ibemu_mad_##noun##_layout, v, \
					       buf, len);                     \
	}                                                                     \
	int ibemu_mad_##noun##_decode(const uint8_t *buf, size_t len,         \
				      struct ibemu_mad_##noun *v)             \
	{                                                                     \
		return ibemu_mad_layout_decode(&ibemu_mad_##noun##_layout,    \
					       buf, len, v);                  \
	}

#endif
