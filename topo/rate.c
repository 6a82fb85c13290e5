// SPDX-License-Identifier: MIT
/*
 * The IBA link rate tables. SDR..QDR use 8b/10b; FDR10..EDR 64b/66b; HDR and
 * later use PAM4 lanes with RS-FEC(544,514) over 256b/257b transcoding,
 * which leaves exactly 50, 100 and 200 Gb/s per lane of data.
 */
#include <errno.h>
#include <strings.h>

#include "rate.h"
#include "util.h"

/* RS(544,514) FEC after 256b/257b transcoding: 514*256 / (544*257). */
#define RSFEC_NUM (514u * 256u)
#define RSFEC_DEN (544u * 257u)

static const struct ibemu_speed_info speeds[IBEMU_SPEED_COUNT] = {
	[IBEMU_SPEED_SDR] = {"SDR", 2500000000ull, 8, 10, "8b/10b"},
	[IBEMU_SPEED_DDR] = {"DDR", 5000000000ull, 8, 10, "8b/10b"},
	[IBEMU_SPEED_QDR] = {"QDR", 10000000000ull, 8, 10, "8b/10b"},
	[IBEMU_SPEED_FDR10] = {"FDR10", 10312500000ull, 64, 66, "64b/66b"},
	[IBEMU_SPEED_FDR] = {"FDR", 14062500000ull, 64, 66, "64b/66b"},
	[IBEMU_SPEED_EDR] = {"EDR", 25781250000ull, 64, 66, "64b/66b"},
	[IBEMU_SPEED_HDR] = {"HDR", 53125000000ull, RSFEC_NUM, RSFEC_DEN,
			     "PAM4 RS-FEC 256b/257b"},
	[IBEMU_SPEED_NDR] = {"NDR", 106250000000ull, RSFEC_NUM, RSFEC_DEN,
			     "PAM4 RS-FEC 256b/257b"},
	[IBEMU_SPEED_XDR] = {"XDR", 212500000000ull, RSFEC_NUM, RSFEC_DEN,
			     "PAM4 RS-FEC 256b/257b"},
};

const struct ibemu_speed_info *ibemu_speed_info(enum ibemu_speed speed)
{
	IBEMU_BUG_ON((unsigned)speed >= IBEMU_SPEED_COUNT);
	return &speeds[speed];
}

int ibemu_speed_parse(const char *s, enum ibemu_speed *out)
{
	unsigned i;

	for (i = 0; i < IBEMU_SPEED_COUNT; i++) {
		if (!strcasecmp(s, speeds[i].name)) {
			*out = (enum ibemu_speed)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ibemu_speed_name(enum ibemu_speed speed)
{
	return ibemu_speed_info(speed)->name;
}

const char *ibemu_speed_names(void)
{
	return "SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR";
}

const unsigned ibemu_mtu_choices[] = {256, 512, 1024, 2048, 4096, 0};

int ibemu_mtu_valid(unsigned bytes)
{
	unsigned i;

	for (i = 0; ibemu_mtu_choices[i]; i++)
		if (ibemu_mtu_choices[i] == bytes)
			return 1;
	return 0;
}

int ibemu_mtu_parse(const char *s, uint64_t *bytes)
{
	unsigned v = 0;
	const char *p = s;

	/* Five digits at most: enough to see a value too large, no overflow. */
	while (*p >= '0' && *p <= '9' && p - s < 5)
		v = v * 10 + (unsigned)(*p++ - '0');
	if (p == s || *p || !ibemu_mtu_valid(v))
		return -EINVAL;
	*bytes = v;
	return 0;
}

const char *ibemu_mtu_names(void)
{
	return IBEMU_MTU_NAMES;
}

const char *ibemu_width_names(void)
{
	return "1x, 2x, 4x, 8x or 12x";
}

int ibemu_width_valid(unsigned lanes)
{
	return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 ||
	       lanes == 12;
}

int ibemu_width_parse(const char *s, uint8_t *lanes)
{
	unsigned n = 0;
	const char *p = s;

	if (*p < '1' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9' && n < 100)
		n = n * 10 + (unsigned)(*p++ - '0');
	if ((*p != 'x' && *p != 'X') || p[1] || !ibemu_width_valid(n))
		return -EINVAL;
	*lanes = (uint8_t)n;
	return 0;
}

uint8_t ibemu_width_to_ib(unsigned lanes)
{
	switch (lanes) {
	case 1:
		return 1;
	case 4:
		return 2;
	case 8:
		return 4;
	case 12:
		return 8;
	case 2:
		return 16;
	}
	IBEMU_BUG_ON(1);
	return 0;
}

unsigned ibemu_width_from_ib(uint8_t ib)
{
	switch (ib) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	}
	return 0;
}

uint64_t ibemu_link_data_rate_bps(unsigned lanes, enum ibemu_speed speed)
{
	const struct ibemu_speed_info *si = ibemu_speed_info(speed);

	return (uint64_t)((unsigned __int128)si->lane_baud_bps * lanes *
			  si->enc_num / si->enc_den);
}

uint64_t ibemu_link_serialize_ps(unsigned lanes, enum ibemu_speed speed,
				 uint64_t bytes)
{
	const struct ibemu_speed_info *si = ibemu_speed_info(speed);
	unsigned __int128 num, den;

	/* ps = bytes * 8 bits * 1e12 / (baud * lanes * enc_num / enc_den) */
	num = (unsigned __int128)bytes * 8u * 1000000000000ull * si->enc_den;
	den = (unsigned __int128)si->lane_baud_bps * lanes * si->enc_num;
	return (uint64_t)((num + den - 1) / den);
}
