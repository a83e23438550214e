/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The chained table as a map: creation, memory use and its operations.  The
 * per-key operations are in chain.c, the elements' lifetime in
 * chain_reclaim.c; the design in tables/chain.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "hash/hash_params.h"
#include "tables/chain.h"
#include "tables/chain_lru.h"
#include "util/big_alloc.h"

static size_t chain_mem_usage(const struct bpfmap *map)
{
	const struct chain *c = to_chain(map);
	size_t bytes = sizeof(*c) + (size_t)c->n_buckets * sizeof(*c->buckets) +
		       count_mem(&c->count) + (size_t)c->n_lru * sizeof(*c->lru);

	size_t heap;

	if (c->prealloc) {
		bytes += (size_t)c->pool_size * c->elem_size + freelist_mem_usage(&c->free_slots);
		heap = __atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED);
	} else {
		/* Every element is on the heap: live (or being inserted),
		 * pending, being reclaimed, or queued one by one. */
		heap = (size_t)count_elements(&c->count) +
		       __atomic_load_n(&c->reclaiming, __ATOMIC_RELAXED) +
		       __atomic_load_n(&c->deferred, __ATOMIC_RELAXED);
		for (uint32_t i = 0; i < CHAIN_PENDING_STACKS; i++)
			heap += __atomic_load_n(&c->pending[i].n, __ATOMIC_RELAXED);
	}
	bytes += heap * c->elem_size;
	if (c->pcpu) /* the pool's slots and the heap elements', the possible
		      * CPUs' (value_size): those in gaps of their list are
		      * never touched */
		bytes += ((size_t)c->pool_size + heap) * map->value_size;
	return bytes;
}

static const struct map_ops chain_view_ops;

struct bpfmap *chain_create(const struct map_params *p, int *err)
{
	struct chain *c = calloc(1, sizeof(*c));
	uint32_t value_bytes = map_params_value_bytes(p);
	size_t key_pad = ROUND_UP((size_t)p->key_size, 8);
	/* Per-CPU maps keep their slots apart (struct chain): the element
	 * holds their index. */
	size_t value_pad = p->cpus ? 8 : ROUND_UP((size_t)value_bytes, 8);
	size_t elem_size = chain_header_size() + key_pad + value_pad;
	map_copy_fn copy;

	if (p->evict)
		elem_size += sizeof(struct chain_lru_tag);
	if (!c || elem_size > UINT32_MAX)
		goto nomem;
	c->hash_kind = hash_kind_for_key_size(p->key_size);
	/* Per-CPU and evicting maps: their program view is not a bare value,
	 * so they have no bulk lookup of their own (core loops map->lookup). */
	c->prealloc = !(p->map_flags & BPFMAP_F_NO_PREALLOC);
	c->evict = p->evict;
	c->reuse = c->prealloc;
	map_init_common(&c->map, p, p->cpus || p->evict ? &chain_view_ops : &chain_ops,
			chain_lookup_for(c->hash_kind, p->key_size, p->cpus, p->evict, c->reuse));
	c->n_buckets = roundup_pow_of_two_u32(p->max_entries);
	c->shift = 32 - (uint32_t)__builtin_ctz(c->n_buckets);
	c->hash = hash_fn_for_kind(c->hash_kind);
	hash_params_init(&c->hp, p->map_flags & BPFMAP_F_ZERO_SEED);
	c->mul = c->hp.mul;
	c->fin = c->hp.fin;
	c->elem_size = (uint32_t)elem_size;
	c->value_off = (uint32_t)key_pad;
	c->lru_off = (uint32_t)(key_pad + value_pad);
	if (!c->prealloc) {
		c->lookup_walk = c->map.lookup;
		c->map.lookup = chain_lookup_sectioned;
	}
	/* Parts of a per-CPU value are stored under the lock (update_part),
	 * which one-word stores without it would race with. */
	c->value_word = value_bytes <= 8 && p->lock_off < 0 && !p->cpus;
	/* Not in evicting maps, which reuse elements at once all the time: a
	 * store that found its key's element could land after the element took
	 * another key.  Other maps turn them off before their first reuse
	 * (chain_insert_locked). */
	/* Per-CPU maps' adds are lock-free stores too (chain_percpu_add). */
	c->lockfree_store = (c->value_word || p->cpus) && !p->evict ? STORES_ON : STORES_OFF;
	copy = chain_copy_for(c);
	if (copy)
		map_set_copy(&c->map, copy);
	c->deferred_limit = chain_deferred_limit(p->max_entries);
	if (count_init(&c->count, p->max_entries))
		goto nomem;
	c->reclaim_batch = chain_reclaim_batch(c);
	c->buckets = big_zalloc((size_t)c->n_buckets * sizeof(*c->buckets));
	if (!c->buckets)
		goto nomem;
	if (c->prealloc && chain_prealloc(c))
		goto nomem;
	if (p->cpus && chain_pcpu_init(c))
		goto nomem;
	if (c->evict && chain_lru_init(c, p->map_flags & BPFMAP_F_NO_COMMON_LRU))
		goto nomem;
	chain_guard_fork(c);
	return &c->map;

nomem:
	if (c) {
		freelist_destroy(&c->free_slots);
		count_destroy(&c->count);
		chain_lru_destroy(c);
		chain_pcpu_free(c);
		big_free(c->pool);
		big_free(c->buckets);
		free(c);
	}
	*err = -ENOMEM;
	return NULL;
}

/* What every chained map does the same way. */
#define CHAIN_OPS_COMMON                                          \
	.free = chain_free, .lookup_elem = chain_lookup_elem,       \
	.update_elem = chain_update_elem,                           \
	.delete_elem = chain_delete_elem,                           \
	.lookup_and_delete_elem = chain_lookup_and_delete_elem,     \
	.get_next_key = chain_get_next_key,                         \
	.lookup_batch = chain_lookup_batch, .mem_usage = chain_mem_usage

const struct map_ops chain_ops = {
	CHAIN_OPS_COMMON,
	.lookup_bulk = chain_lookup_bulk,
};

/* Per-CPU and evicting maps: their slots and part updates; no bulk lookup
 * (their program view is not a bare value: core loops map->lookup). */
static const struct map_ops chain_view_ops = {
	CHAIN_OPS_COMMON,
	.update_part = chain_update_part,
	.lookup_percpu = chain_lookup_percpu,
	.percpu_add = chain_percpu_add,
};
