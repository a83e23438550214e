/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH iteration by key (get_next_key): bucket order, then chain
 * order, the kernel's walk.  Lock-free: chains are read in a read-side section
 * and keys are immutable while an element is reachable.
 */
#include <errno.h>
#include <string.h>

#include "maps/htab.h"

/* Copy the first key found in buckets [from, n_buckets). */
static int first_key_from(const struct htab *h, uint32_t from, void *next_key)
{
	for (uint32_t i = from; i < h->n_buckets; i++) {
		struct htab_elem *e = bucket_first(&h->buckets[i]);

		if (e) {
			memcpy(next_key, elem_key(e), h->map.key_size);
			return 0;
		}
	}
	return -ENOENT;
}

int htab_get_next_key(struct bpfmap *map, const void *key, void *next_key)
{
	struct htab *h = to_htab(map);
	uint32_t start = 0;
	int ret;

	rcu_lock();
	if (key) {
		uint32_t hash = htab_hash(h, key);
		struct htab_bucket *b = htab_bucket(h, hash);
		struct htab_elem *e = htab_find(h, b, hash, key);

		if (e) {
			struct htab_elem *next = elem_next(e);

			if (next) {
				memcpy(next_key, elem_key(next), map->key_size);
				rcu_unlock();
				return 0;
			}
			start = (uint32_t)(b - h->buckets) + 1;
		}
		/* An absent key restarts the walk, as in the kernel. */
	}
	ret = first_key_from(h, start, next_key);
	rcu_unlock();
	return ret;
}
