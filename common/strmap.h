/* SPDX-License-Identifier: MIT */
/*
 * An open-addressing hash map from borrowed C strings to uint32_t values,
 * used to find nodes by name in fabrics of any size. The map never copies
 * keys: they must outlive it (the topology owns its node names).
 */
#ifndef IBEMU_STRMAP_H
#define IBEMU_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct ibemu_strmap_slot {
	const char *key; /* NULL when empty */
	uint32_t value;
};

struct ibemu_strmap {
	struct ibemu_strmap_slot *slots;
	size_t cap; /* power of two, or 0 */
	size_t count;
};

void ibemu_strmap_init(struct ibemu_strmap *m);
void ibemu_strmap_fini(struct ibemu_strmap *m);
/* Returns 0, -EEXIST if the key is present, or -ENOMEM. */
int ibemu_strmap_insert(struct ibemu_strmap *m, const char *key,
			uint32_t value);
/* Returns the value of 'key', or IBEMU_NONE. */
uint32_t ibemu_strmap_get(const struct ibemu_strmap *m, const char *key);
uint64_t ibemu_hash_fnv1a(const void *data, size_t len);

#endif
