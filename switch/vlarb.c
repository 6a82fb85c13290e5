// SPDX-License-Identifier: MIT
/*
 * VL arbitration (IBA vol 1, 7.6.9): a high- and a low-priority table of
 * (VL, weight) entries served as weighted round robin, weights in 64-byte
 * units; a packet always goes whole even past its entry's weight. High
 * priority wins unless LimitOfHighPriority bytes went since the last
 * low-priority packet and a low-priority VL is waiting.
 */
#include <string.h>

#include "switch_int.h"

static int table_has(const struct ibemu_vlarb_entry *t, unsigned n,
		     uint32_t eligible)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (t[i].weight && (eligible & (1u << t[i].vl)))
			return 1;
	return 0;
}

/* Moves *idx to the next entry that may send now; returns its VL. */
static int table_pick(const struct ibemu_vlarb_entry *t, unsigned n,
		      uint8_t *idx, int32_t *left, uint32_t eligible)
{
	unsigned tries;

	for (tries = 0; tries <= n; tries++) {
		const struct ibemu_vlarb_entry *en = &t[*idx];

		if (en->weight && *left > 0 && (eligible & (1u << en->vl)))
			return en->vl;
		*idx = (uint8_t)((*idx + 1u) % n);
		*left = t[*idx].weight * 64;
	}
	return -1;
}

static int high_may_go(const struct ibemu_vlarb *a, int low_waiting)
{
	if (!low_waiting || a->high_limit == 255)
		return 1;
	/* Limit 0 still lets one high-priority packet through. */
	if (a->high_limit == 0)
		return a->high_sent == 0;
	return a->high_sent < (uint32_t)a->high_limit * 4096u;
}

int ibemu_vlarb_pick(struct ibemu_vlarb *a, uint32_t eligible)
{
	int high = table_has(a->high, a->nhigh, eligible);
	int low = table_has(a->low, a->nlow, eligible);

	if (high && high_may_go(a, low)) {
		a->picked_high = 1;
		return table_pick(a->high, a->nhigh, &a->high_idx,
				  &a->high_left, eligible);
	}
	a->picked_high = 0;
	if (low)
		return table_pick(a->low, a->nlow, &a->low_idx, &a->low_left,
				  eligible);
	return -1;
}

void ibemu_vlarb_charge(struct ibemu_vlarb *a, uint32_t bytes)
{
	const struct ibemu_vlarb_entry *t = a->picked_high ? a->high : a->low;
	unsigned n = a->picked_high ? a->nhigh : a->nlow;
	uint8_t *idx = a->picked_high ? &a->high_idx : &a->low_idx;
	int32_t *left = a->picked_high ? &a->high_left : &a->low_left;

	if (a->picked_high)
		a->high_sent += bytes;
	else
		a->high_sent = 0;
	if (!n)
		return;
	*left -= (int32_t)((bytes + 63) / 64 * 64);
	if (*left <= 0) {
		*idx = (uint8_t)((*idx + 1u) % n);
		*left = t[*idx].weight * 64;
	}
}
