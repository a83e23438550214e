/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The creation checks the kernel's hash-map family shares (its
 * htab_map_alloc_check), for the type files of maps/.
 */
#ifndef BPFMAP_MAPS_HASH_FAMILY_H
#define BPFMAP_MAPS_HASH_FAMILY_H

#include <stdbool.h>

#include "core/map.h"

/* The checks for a hash map (@lru: of an LRU type; @percpu: of a per-CPU
 * one); 0 or -errno, in the kernel's order. */
int hash_family_check(const struct map_params *p, bool lru, bool percpu);

/* The same without the map_extra check (RHASH's, whose own come first). */
int hash_family_check_common(const struct map_params *p, bool lru, bool percpu);

/* What the kernel's htab_map_alloc refuses before it allocates, after the
 * token is looked at: more than BPFMAP_HTAB_MAX_ENTRIES (map_type's
 * alloc_limits for the types whose max_entries sizes a bucket array). */
int hash_family_alloc_limits(const struct map_params *p);

/*
 * Does a map of these parameters belong on the flat table (tables/flat.h)?
 * When it is preallocated and its keys fit a word or it has at least
 * HASH_FLAT_LONG_MIN_ENTRIES elements; smaller maps of longer keys get the
 * chained table, as does every map when BPFMAP_TABLE=chain is in the
 * environment (the chained table holds any map: side-by-side measurements,
 * and the tests that run each suite on both tables).  The cutoff is
 * measured (docs/ARCHITECTURE.md, "Which table a map gets"): in maps the
 * caches hold, the chained table's lookups of 16-64-byte keys were 15-30%
 * faster (one dependent load fewer); from 100000 elements flat's were
 * 1.05-2.3x as fast.  Below the cutoff the chained table's extra memory is
 * under 1 MiB.
 */
#define HASH_FLAT_LONG_MIN_ENTRIES 16384

bool hash_family_chain_forced(void);

static inline bool hash_family_flat(const struct map_params *p)
{
	return !(p->map_flags & BPFMAP_F_NO_PREALLOC) &&
	       (p->key_size <= 8 || p->max_entries >= HASH_FLAT_LONG_MIN_ENTRIES) &&
	       !hash_family_chain_forced();
}

/* The number of per-CPU slots, indexed by CPU number (util/cpu.h's
 * cpu_slots); 0 with *err set if the possible CPUs cannot be read. */
uint32_t hash_family_cpus(int *err);

#endif
