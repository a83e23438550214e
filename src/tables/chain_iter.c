/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH iteration by key (get_next_key): bucket order, then chain
 * order, the kernel's walk.  Lock-free: chains are read in a read-side section
 * and keys are immutable while an element is reachable.
 */
#include <errno.h>
#include <string.h>

#include "tables/chain.h"

/* Copy the first key found in buckets [from, n_buckets). */
static int first_key_from(const struct chain *c, uint32_t from, void *next_key)
{
	for (uint32_t i = from; i < c->n_buckets; i++) {
		struct chain_elem *e = bucket_first(&c->buckets[i]);

		if (e) {
			memcpy(next_key, elem_key(e), c->map.key_size);
			return 0;
		}
	}
	return -ENOENT;
}

int chain_get_next_key(struct bpfmap *map, const void *key, void *next_key)
{
	struct chain *c = to_chain(map);
	uint32_t start = 0;
	int ret;

	rcu_lock();
	if (key) {
		uint32_t hash = chain_hash(c, key);
		struct chain_bucket *b = chain_bucket(c, hash);
		struct chain_elem *e = chain_find(c, b, hash, key);

		if (e) {
			struct chain_elem *next = elem_next(e);

			if (next) {
				memcpy(next_key, elem_key(next), map->key_size);
				rcu_unlock();
				return 0;
			}
			start = (uint32_t)(b - c->buckets) + 1;
		}
		/* An absent key restarts the walk, as in the kernel. */
	}
	ret = first_key_from(c, start, next_key);
	rcu_unlock();
	return ret;
}
