// SPDX-License-Identifier: MIT
/*
 * Linear-probing hash map keyed by strings. Deletion is not needed (nodes
 * are never renamed), which keeps probing simple.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "util.h"

uint64_t ibemu_hash_fnv1a(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void ibemu_strmap_init(struct ibemu_strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void ibemu_strmap_fini(struct ibemu_strmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static struct ibemu_strmap_slot *probe(struct ibemu_strmap_slot *slots,
				       size_t cap, const char *key)
{
	size_t i = ibemu_hash_fnv1a(key, strlen(key)) & (cap - 1);

	while (slots[i].key && strcmp(slots[i].key, key))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct ibemu_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct ibemu_strmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			*probe(slots, cap, m->slots[i].key) = m->slots[i];
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int ibemu_strmap_insert(struct ibemu_strmap *m, const char *key, uint32_t value)
{
	struct ibemu_strmap_slot *s;
	int ret;

	/* Keep the load factor under 1/2 so probes stay short. */
	if ((m->count + 1) * 2 > m->cap) {
		ret = grow(m);
		if (ret)
			return ret;
	}
	s = probe(m->slots, m->cap, key);
	if (s->key)
		return -EEXIST;
	s->key = key;
	s->value = value;
	m->count++;
	return 0;
}

uint32_t ibemu_strmap_get(const struct ibemu_strmap *m, const char *key)
{
	const struct ibemu_strmap_slot *s;

	if (!m->cap)
		return IBEMU_NONE;
	s = probe(m->slots, m->cap, key);
	return s->key ? s->value : IBEMU_NONE;
}
