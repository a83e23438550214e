/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_PERCPU_HASH: a value slot per possible CPU.  The type asks its
 * table for per-CPU values (map_params.cpus); the syscall view copies them
 * as the kernel lays them out (CPU i at i x round_up(value_size, 8)), the
 * program view sees the calling CPU's slot.  Both tables keep the slots in
 * per-CPU regions; a map goes on the table HASH would give it
 * (hash_family_flat).
 */
#include "core/map.h"
#include "maps/hash_family.h"
#include "tables/chain.h"
#include "tables/flat.h"

static int percpu_hash_alloc_check(const struct map_params *p)
{
	return hash_family_check(p, false, true);
}

static struct bpfmap *percpu_hash_alloc(const struct map_params *p, int *err)
{
	struct map_params tp = *p;

	tp.cpus = hash_family_cpus(err);
	if (!tp.cpus)
		return NULL;
	return hash_family_flat(p) ? flat_create(&tp, err) : chain_create(&tp, err);
}

const struct map_type percpu_hash_map_type = {
	.alloc_check = percpu_hash_alloc_check,
	.alloc_limits = hash_family_alloc_limits,
	.alloc = percpu_hash_alloc,
};
