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

/* The map's max_entries into *@entries: NO_COMMON_LRU's the kernel's
 * rounding, up to a multiple of the possible CPUs (their count, as its
 * num_possible_cpus()), or down where up overflows.  0 or -errno. */
static int lru_entries(const struct map_params *p, uint32_t *entries)
{
	int cpus;
	uint64_t n, up;

	*entries = p->max_entries;
	if (!(p->map_flags & BPFMAP_F_NO_COMMON_LRU))
		return 0;
	cpus = bpfmap_num_possible_cpus();
	if (cpus <= 0)
		return cpus < 0 ? cpus : -ENODEV;
	n = (uint64_t)cpus;
	up = (p->max_entries + n - 1) / n * n;
	*entries = (uint32_t)(up <= UINT32_MAX ? up : p->max_entries / n * n);
	return 0;
}

/* HASH's limit on the rounded count, as the kernel sizes its buckets from
 * it: 2^27 - 1 entries round up to 2^27 + 1 on 3 CPUs, -E2BIG there. */
static int lru_alloc_limits(const struct map_params *p)
{
	struct map_params tp = *p;
	int err = lru_entries(p, &tp.max_entries);

	return err ? err : hash_family_alloc_limits(&tp);
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
	*err = lru_entries(p, &tp.max_entries);
	if (*err)
		return NULL;
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
