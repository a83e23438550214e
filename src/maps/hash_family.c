/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/compiler.h"

#include "maps/hash_family.h"
#include "util/cpu.h"

/* Flags a hash-family map accepts at creation (the kernel's mask). */
#define HASH_CREATE_FLAGS                                                            \
	(BPFMAP_F_NO_PREALLOC | BPFMAP_F_NO_COMMON_LRU | BPFMAP_F_NUMA_NODE |        \
	 BPFMAP_F_RDONLY | BPFMAP_F_WRONLY | BPFMAP_F_ZERO_SEED | BPFMAP_F_RDONLY_PROG | \
	 BPFMAP_F_WRONLY_PROG)

/*
 * The ceiling on max_entries, measured on Linux 6.18 (x86-64): the kernel's
 * bucket array (roundup_pow_of_two(max_entries) buckets of 16 bytes) must
 * fit in 32 bits of bytes, so max_entries above 2^27 is E2BIG.
 */
#define HASH_MAX_ENTRIES BPFMAP_HTAB_MAX_ENTRIES

/* The kernel's PCPU_MIN_UNIT_SIZE: the largest per-CPU value slot. */
#define PERCPU_SLOT_MAX (32U << 10)

int hash_family_check(const struct map_params *p, bool lru, bool percpu)
{
	if (p->map_extra)
		return -EINVAL;
	return hash_family_check_common(p, lru, percpu);
}

int hash_family_alloc_limits(const struct map_params *p)
{
	return p->max_entries > HASH_MAX_ENTRIES ? -E2BIG : 0;
}

int hash_family_check_common(const struct map_params *p, bool lru, bool percpu)
{
	if (p->map_flags & ~HASH_CREATE_FLAGS)
		return -EINVAL;
	if ((p->map_flags & BPFMAP_F_NO_COMMON_LRU) && !lru)
		return -EINVAL;
	if (lru && (p->map_flags & BPFMAP_F_NO_PREALLOC))
		return -BPFMAP_ENOTSUPP;
	/* A NUMA node for per-CPU memory or per-CPU lists: the kernel's EINVAL. */
	if ((p->map_flags & BPFMAP_F_NUMA_NODE) &&
	    (percpu || (p->map_flags & BPFMAP_F_NO_COMMON_LRU)))
		return -EINVAL;
	if (!p->max_entries || !p->key_size || !p->value_size)
		return -EINVAL;
	if ((uint64_t)p->key_size + p->value_size >= BPFMAP_MAX_ELEM_BYTES)
		return -E2BIG;
	if (percpu && ROUND_UP((uint64_t)p->value_size, 8) > PERCPU_SLOT_MAX)
		return -E2BIG;
	return 0;
}

bool hash_family_chain_forced(void)
{
	const char *t = getenv("BPFMAP_TABLE");

	return t && !strcmp(t, "chain");
}

uint32_t hash_family_cpus(int *err)
{
	int n = cpu_slots();

	if (n <= 0) {
		*err = n < 0 ? n : -ENODEV;
		return 0;
	}
	return (uint32_t)n;
}
