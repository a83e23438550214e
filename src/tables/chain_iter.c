/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH iteration by key (get_next_key): bucket order, then chain
 * order, the kernel's walk.  Lock-free: chains are read in a read-side section
 * and keys are immutable while an element is reachable.  In a map that
 * reuses elements at once (chain_reuses) an element may leave its chain and
 * take another key under the walk, so there each step holds its bucket's
 * lock (a key copied twice could not be validated: @next_key may be @key).
 */
#include <errno.h>
#include <string.h>

#include "tables/chain.h"

/* Copy the first key of bucket @b to @next_key: true, or false if empty. */
static bool first_key_of(const struct chain *c, struct chain_bucket *b, void *next_key)
{
	struct chain_elem *e = bucket_first(b);
	bool lock = e && chain_reuses(c);

	if (lock) {
		chain_bucket_lock(b);
		e = bucket_first(b);
	}
	if (e)
		memcpy(next_key, elem_key(e), c->map.key_size);
	if (lock)
		chain_bucket_unlock(b);
	return e != NULL;
}

/* Copy the first key found in buckets [from, n_buckets). */
static int first_key_from(const struct chain *c, uint32_t from, void *next_key)
{
	for (uint32_t i = from; i < c->n_buckets; i++)
		if (first_key_of(c, &c->buckets[i], next_key))
			return 0;
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
		bool lock = chain_reuses(c);
		struct chain_elem *e, *next = NULL;

		if (lock)
			chain_bucket_lock(b);
		e = chain_find(c, b, hash, key);
		if (e)
			next = elem_next(e);
		if (next)
			memcpy(next_key, elem_key(next), map->key_size);
		if (lock)
			chain_bucket_unlock(b);
		if (next) {
			rcu_unlock();
			return 0;
		}
		/* An absent key restarts the walk, as in the kernel. */
		if (e)
			start = (uint32_t)(b - c->buckets) + 1;
	}
	ret = first_key_from(c, start, next_key);
	rcu_unlock();
	return ret;
}
