/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_PERCPU_HASH: a value slot per possible CPU.  The table stores
 * the slots side by side, as the syscall view copies them (CPU i at i x
 * round_up(value_size, 8)), so a copy in or out is one copy of the whole
 * value, and the program view adds the calling CPU's offset.  The chained
 * table holds every such map: its updates write parts of a value in place
 * (update_part), which the flat table does not offer.
 */
#include "core/map.h"
#include "maps/hash_family.h"
#include "tables/chain.h"

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
	return chain_create(&tp, err);
}

const struct map_type percpu_hash_map_type = {
	.alloc_check = percpu_hash_alloc_check,
	.alloc = percpu_hash_alloc,
};
