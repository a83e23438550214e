/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_LRU_HASH and BPFMAP_TYPE_LRU_PERCPU_HASH: preallocated hash
 * maps that evict an old element instead of answering -E2BIG.  Maps with
 * the common LRU live on the flat table (tables/flat_lru.h) where HASH
 * would (hash_family_flat), the rest on the chained table
 * (tables/chain_lru.h), whose lists are per CPU; both evict by the same
 * policy, S3-FIFO.
 * BPFMAP_F_NO_COMMON_LRU rounds max_entries up to a multiple of the CPU
 * count, as the kernel does, and caps each CPU's list at its share.
 */
#include "core/map.h"
#include "maps/hash_family.h"
#include "tables/chain.h"
#include "tables/flat.h"

static int lru_hash_alloc_check(const struct map_params *p)
{
	return hash_family_check(p, true, false);
}

static int lru_percpu_hash_alloc_check(const struct map_params *p)
{
	return hash_family_check(p, true, true);
}

/* NO_COMMON_LRU's max_entries, the kernel's rounding: up to a multiple of
 * the CPUs, or down where up overflows. */
static uint32_t lru_rounded_entries(uint32_t max_entries, uint32_t cpus)
{
	uint64_t up = ((uint64_t)max_entries + cpus - 1) / cpus * cpus;

	return up <= UINT32_MAX ? (uint32_t)up : max_entries / cpus * cpus;
}

/* HASH's limit on the rounded count, as the kernel sizes its buckets from
 * it: 2^27 - 1 entries round up to 2^27 + 1 on 3 CPUs, -E2BIG there. */
static int lru_alloc_limits(const struct map_params *p)
{
	struct map_params tp = *p;

	if (p->map_flags & BPFMAP_F_NO_COMMON_LRU) {
		int cpus = bpfmap_num_possible_cpus();

		if (cpus <= 0)
			return cpus < 0 ? cpus : -ENODEV;
		tp.max_entries = lru_rounded_entries(p->max_entries, (uint32_t)cpus);
	}
	return hash_family_alloc_limits(&tp);
}

static struct bpfmap *lru_alloc(const struct map_params *p, bool percpu, int *err)
{
	struct map_params tp = *p;

	tp.evict = true;
	if (percpu) {
		tp.cpus = hash_family_cpus(err);
		if (!tp.cpus)
			return NULL;
	}
	if (p->map_flags & BPFMAP_F_NO_COMMON_LRU) {
		/* The possible CPUs' count, as the kernel's num_possible_cpus(). */
		int cpus = bpfmap_num_possible_cpus();

		if (cpus <= 0) {
			*err = cpus < 0 ? cpus : -ENODEV;
			return NULL;
		}
		tp.max_entries = lru_rounded_entries(p->max_entries, (uint32_t)cpus);
	}
	if (!(p->map_flags & BPFMAP_F_NO_COMMON_LRU) && hash_family_flat(p)) {
		/* The flat table, unless the map has more positions than its
		 * LRU's ring entries can name (tables/flat_lru.h). */
		struct bpfmap *m = flat_create(&tp, err);

		if (m || *err != -E2BIG)
			return m;
	}
	return chain_create(&tp, err);
}

static struct bpfmap *lru_hash_alloc(const struct map_params *p, int *err)
{
	return lru_alloc(p, false, err);
}

static struct bpfmap *lru_percpu_hash_alloc(const struct map_params *p, int *err)
{
	return lru_alloc(p, true, err);
}

const struct map_type lru_hash_map_type = {
	.alloc_check = lru_hash_alloc_check,
	.alloc_limits = lru_alloc_limits,
	.alloc = lru_hash_alloc,
};

const struct map_type lru_percpu_hash_map_type = {
	.alloc_check = lru_percpu_hash_alloc_check,
	.alloc_limits = lru_alloc_limits,
	.alloc = lru_percpu_hash_alloc,
};
