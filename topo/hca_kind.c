// SPDX-License-Identifier: MIT
/*
 * The names of the HCA kinds a topology declares with 'hca_model:', and
 * the preset 'auto' picks by link speed (the adapter generation sold for
 * that speed: ConnectX-5 for EDR, ConnectX-6 for HDR, ConnectX-7 for NDR).
 */
#include <errno.h>
#include <strings.h>

#include "hca_kind.h"

static const char *const names[IBEMU_HCA_KIND_COUNT] = {
	[IBEMU_HCA_WIRE] = "wire",	[IBEMU_HCA_AUTO] = "auto",
	[IBEMU_HCA_CX4] = "connectx-4", [IBEMU_HCA_CX5] = "connectx-5",
	[IBEMU_HCA_CX6] = "connectx-6", [IBEMU_HCA_CX7] = "connectx-7",
};

int ibemu_hca_kind_parse(const char *s, enum ibemu_hca_kind *out)
{
	unsigned k;

	for (k = 0; k < IBEMU_HCA_KIND_COUNT; k++) {
		if (!strcasecmp(s, names[k])) {
			*out = (enum ibemu_hca_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ibemu_hca_kind_name(enum ibemu_hca_kind kind)
{
	return (unsigned)kind < IBEMU_HCA_KIND_COUNT ? names[kind] : "?";
}

const char *ibemu_hca_kind_names(void)
{
	return "wire, auto, connectx-4, connectx-5, connectx-6 or "
	       "connectx-7";
}

enum ibemu_hca_kind ibemu_hca_kind_for_speed(enum ibemu_speed speed)
{
	if (speed >= IBEMU_SPEED_NDR)
		return IBEMU_HCA_CX7;
	if (speed == IBEMU_SPEED_HDR)
		return IBEMU_HCA_CX6;
	if (speed == IBEMU_SPEED_EDR)
		return IBEMU_HCA_CX5;
	return IBEMU_HCA_CX4;
}

/* The ConnectX PCI device IDs (the adapters' user manuals give them in
 * decimal: 4115, 4119, 4123, 4129). */
unsigned ibemu_hca_kind_device_id(enum ibemu_hca_kind kind)
{
	switch (kind) {
	case IBEMU_HCA_CX4:
		return 0x1013;
	case IBEMU_HCA_CX5:
		return 0x1017;
	case IBEMU_HCA_CX6:
		return 0x101b;
	case IBEMU_HCA_CX7:
		return 0x1021;
	default:
		return 0;
	}
}
