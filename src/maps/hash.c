/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH: the kernel's hash-family checks, and the choice of table.
 *
 * Preallocated maps get the flat table (tables/flat.h: about 56 bytes per
 * element less than the chained table, faster word-key lookups and failed
 * inserts) when their keys fit a word or the map has at least
 * HASH_FLAT_LONG_MIN_ENTRIES elements; smaller maps of longer keys and
 * NO_PREALLOC maps get the chained table.  The cutoff is measured
 * (docs/ARCHITECTURE.md, "Which table a map gets"): in maps the caches
 * hold, the chained table's lookups of 16-64-byte keys were 15-30% faster
 * (one dependent load fewer); from 100000 elements flat's were 1.05-2.3x as
 * fast.
 * Below the cutoff the chained table's extra memory is under 1 MiB.
 */
#include "core/map.h"
#include "maps/hash_family.h"
#include "tables/chain.h"
#include "tables/flat.h"

#define HASH_FLAT_LONG_MIN_ENTRIES 16384

static int hash_alloc_check(const struct map_params *p)
{
	return hash_family_check(p, false, false);
}

static struct bpfmap *hash_alloc(const struct map_params *p, int *err)
{
	if (p->map_flags & BPFMAP_F_NO_PREALLOC)
		return chain_create(p, err);
	if (p->key_size > 8 && p->max_entries < HASH_FLAT_LONG_MIN_ENTRIES)
		return chain_create(p, err);
	return flat_create(p, err);
}

const struct map_type hash_map_type = {
	.alloc_check = hash_alloc_check,
	.alloc = hash_alloc,
};
