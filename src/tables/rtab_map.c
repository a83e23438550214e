/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table as a map: creation, memory use and its operations
 * (tables/rtab.h has the design).
 */
#include <errno.h>
#include <stdlib.h>

#include "sync/store_switch.h"
#include "tables/rtab.h"

static uint32_t rtab_bits_for(uint64_t n)
{
	uint32_t bits = RTAB_MIN_BITS;

	while (bits < RTAB_MAX_BITS && ((uint64_t)1 << bits) < n)
		bits++;
	return bits;
}

static uint64_t rtab_map_extra(const struct bpfmap *map)
{
	return to_rtab((struct bpfmap *)map)->map_extra;
}

static size_t rtab_mem_usage(const struct bpfmap *map)
{
	struct rtab *r = to_rtab((struct bpfmap *)map);
	return sizeof(*r) + count_mem(&r->count) + rtab_arenas_mem(r) + rtab_table_mem(r);
}

static void rtab_free(struct bpfmap *map)
{
	rtab_destroy(to_rtab(map));
}

static const struct map_ops rtab_ops = {
	.free = rtab_free,
	.lookup_elem = rtab_lookup_elem,
	.update_elem = rtab_update_elem,
	.delete_elem = rtab_delete_elem,
	.lookup_and_delete_elem = rtab_lookup_and_delete_elem,
	.get_next_key = rtab_get_next_key,
	.lookup_batch = rtab_lookup_batch,
	.mem_usage = rtab_mem_usage,
	.map_extra = rtab_map_extra,
};

struct bpfmap *rtab_create(const struct map_params *p, int *err)
{
	struct rtab *r = aligned_alloc(64, ROUND_UP(sizeof(*r), 64));
	uint64_t stride = ROUND_UP((uint64_t)p->key_size, 8) + ROUND_UP((uint64_t)p->value_size, 8);
	/* map_extra: the number of elements to size the first table for. */
	uint64_t hint = p->map_extra;
	struct rtab_table *t;
	uint32_t bits, limit;

	if (!r || stride > UINT32_MAX)
		goto nomem;
	memset(r, 0, sizeof(*r));
	r->hash_kind = hash_kind_for_key_size(p->key_size);
	map_init_common(&r->map, p, &rtab_ops, rtab_lookup_for(r->hash_kind, p->key_size));
	map_set_copy(&r->map, rtab_copy_for(r->hash_kind, p->key_size));
	r->hash = hash_fn_for_kind(r->hash_kind);
	hash_params_init(&r->hp, false);
	r->mul = r->hp.mul;
	r->fin = r->hp.fin;
	r->map_extra = hint;
	r->stride = (uint32_t)stride;
	r->value_off = (uint32_t)ROUND_UP(p->key_size, 8);
	r->value_word = p->value_size <= 8 && p->lock_off < 0;
	r->lockfree_store = r->value_word ? STORES_ON : STORES_OFF;
	r->max_bits = rtab_bits_for(((uint64_t)p->max_entries + RTAB_GROW_LOAD - 1) / RTAB_GROW_LOAD);
	/* The smallest table holds RTAB_FLOOR_ELEMS (or max_entries) at the
	 * grow load: 16 KiB, so that the first resizes, when the fixed costs
	 * weigh most, come after 2K elements. */
	r->min_bits = rtab_bits_for(((uint64_t)(p->max_entries < RTAB_FLOOR_ELEMS ? p->max_entries
									      : RTAB_FLOOR_ELEMS) +
				     RTAB_GROW_LOAD - 1) / RTAB_GROW_LOAD);
	limit = rtab_arenas_init(r, p->max_entries);
	if (!limit || count_init(&r->count, limit))
		goto nomem;
	r->full_err = limit < p->max_entries ? -ENOMEM : -E2BIG;
	bits = rtab_bits_for((hint + RTAB_GROW_LOAD - 1) / RTAB_GROW_LOAD);
	t = rtab_table_alloc(r, bits > r->min_bits ? bits : r->min_bits);
	if (!t)
		goto nomem;
	r->table = rtab_table_word(t);
	rtab_guard_fork(r);
	return &r->map;

nomem:
	if (r)
		rtab_destroy(r);
	*err = -ENOMEM;
	return NULL;
}
