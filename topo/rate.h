/* SPDX-License-Identifier: MIT */
/*
 * Link widths and speeds as the IBA defines them (IBA vol 1, 14.2.5.6
 * PortInfo LinkWidth*, LinkSpeed*, LinkSpeedExt*), with their names, their
 * PortInfo encodings and the data rate left after line encoding.
 */
#ifndef IBEMU_RATE_H
#define IBEMU_RATE_H

#include <stdint.h>

/* Widths are stored as lane counts: 1, 2, 4, 8 or 12. */
enum ibemu_speed {
	IBEMU_SPEED_SDR,
	IBEMU_SPEED_DDR,
	IBEMU_SPEED_QDR,
	IBEMU_SPEED_FDR10,
	IBEMU_SPEED_FDR,
	IBEMU_SPEED_EDR,
	IBEMU_SPEED_HDR,
	IBEMU_SPEED_NDR,
	IBEMU_SPEED_XDR,
	IBEMU_SPEED_COUNT
};

struct ibemu_speed_info {
	const char *name;
	uint64_t lane_baud_bps; /* line signalling rate, bits/s per lane */
	/* Data rate per lane = lane_baud_bps * enc_num / enc_den. */
	uint32_t enc_num;
	uint32_t enc_den;
	const char *encoding;
};

const struct ibemu_speed_info *ibemu_speed_info(enum ibemu_speed speed);
/* Parses "EDR" (any case); returns 0 or -EINVAL. */
int ibemu_speed_parse(const char *s, enum ibemu_speed *out);
const char *ibemu_speed_name(enum ibemu_speed speed);
/* Lists the accepted names, for error messages ("SDR, DDR, ..."). */
const char *ibemu_speed_names(void);

/*
 * IBA 14.2.5.6 PortInfo NeighborMTU/MTUCap: the MTUs a port may have, in
 * bytes. The one list every part of ibemu checks an MTU against.
 */
#define IBEMU_MTU_MIN 256u
#define IBEMU_MTU_MAX 4096u
/* The MTUs, smallest first, 0-terminated (the YAML key's choices). */
extern const unsigned ibemu_mtu_choices[];
/* Returns 1 for 256, 512, 1024, 2048 or 4096. */
int ibemu_mtu_valid(unsigned bytes);
/* Parses a decimal MTU in bytes; returns 0 or -EINVAL. */
int ibemu_mtu_parse(const char *s, uint64_t *bytes);
/* Lists the MTUs, for help and errors (a constant, for static tables). */
#define IBEMU_MTU_NAMES "256, 512, 1024, 2048 or 4096"
const char *ibemu_mtu_names(void);

/* Lists the widths, for help and errors ("1x, 2x, 4x, 8x or 12x"). */
const char *ibemu_width_names(void);
/* Parses "4x" or "4X"; returns 0 or -EINVAL. */
int ibemu_width_parse(const char *s, uint8_t *lanes);
int ibemu_width_valid(unsigned lanes);
/* PortInfo LinkWidthActive encoding: 1x=1, 4x=2, 8x=4, 12x=8, 2x=16. */
uint8_t ibemu_width_to_ib(unsigned lanes);
/* Returns lanes, or 0 for an encoding that is not a single width. */
unsigned ibemu_width_from_ib(uint8_t ib);

/* Data rate of a link after encoding, in bits per second (rounded down). */
uint64_t ibemu_link_data_rate_bps(unsigned lanes, enum ibemu_speed speed);

/*
 * Time in picoseconds to put 'bytes' on a link, rounded up. Exact rational
 * arithmetic: FDR's 64b/66b rate is not a whole number of bits per second.
 */
uint64_t ibemu_link_serialize_ps(unsigned lanes, enum ibemu_speed speed,
				 uint64_t bytes);

#endif
