/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH: the kernel's hash-family checks, and the choice of table.
 *
 * Preallocated maps get the flat table (tables/flat.h: about 56 bytes per
 * element less than the chained table, faster word-key lookups and failed
 * inserts) where hash_family_flat says so; the rest, and NO_PREALLOC maps,
 * the chained table.
 */
#include "core/map.h"
#include "maps/hash_family.h"
#include "tables/chain.h"
#include "tables/flat.h"

static int hash_alloc_check(const struct map_params *p)
{
	return hash_family_check(p, false, false);
}

static struct bpfmap *hash_alloc(const struct map_params *p, int *err)
{
	return hash_family_flat(p) ? flat_create(p, err) : chain_create(p, err);
}

const struct map_type hash_map_type = {
	.alloc_check = hash_alloc_check,
	.alloc_limits = hash_family_alloc_limits,
	.alloc = hash_alloc,
	.spin_lock = true,
};
