/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hashes for keys that fit a machine word (4 and 8 bytes): a product with
 * the map's random odd multiplier, then hash_finish (hash/hash_finish.h: the
 * bound and why two stages).  The first stage is a bijection of the key, so
 * distinct keys reach hash_finish distinct.  An 8-byte key's halves are
 * xored first, (hi, lo ^ hi), also a bijection: keys that differ only in
 * their high half would otherwise give products with one low half, which
 * the fold would not mix.  Inline: the maps' specialised lookups call them
 * with no indirection.
 */
#ifndef BPFMAP_HASH_FAST_HASH_H
#define BPFMAP_HASH_FAST_HASH_H

#include <stdint.h>

#include "hash/hash_finish.h"
#include "util/compiler.h"
#include "util/load.h"

static ALWAYS_INLINE uint64_t fast_hash_u32(uint32_t key, uint64_t mul, uint64_t fin)
{
	return hash_finish(key * mul, fin);
}

/* An 8-byte key as its two 32-bit halves (util/load.h). */
static ALWAYS_INLINE uint64_t fast_hash_u64_halves(uint32_t lo, uint32_t hi, uint64_t mul,
						   uint64_t fin)
{
	return hash_finish(((uint64_t)hi << 32 | (lo ^ hi)) * mul, fin);
}

static ALWAYS_INLINE uint64_t fast_hash_u64(uint64_t key, uint64_t mul, uint64_t fin)
{
	return fast_hash_u64_halves((uint32_t)key, (uint32_t)(key >> 32), mul, fin);
}

static ALWAYS_INLINE uint64_t fast_hash_u64_mem(const void *key, uint64_t mul, uint64_t fin)
{
	uint32_t lo, hi;

	load_u32_halves(key, &lo, &hi);
	return fast_hash_u64_halves(lo, hi, mul, fin);
}

#endif
