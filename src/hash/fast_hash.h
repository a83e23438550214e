/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hashes for keys that fit a machine word (4 and 8 bytes), chosen at map
 * creation instead of jhash2: one multiply by a 64-bit odd constant after
 * mixing in the map's 64-bit seed, keeping the product's high half, where
 * every key bit has reached (the u32 hash is a bijection before the final
 * truncation).  Spread over regular key sets is measured in
 * tests/test_jhash.c.
 * Inline: the maps' specialised lookups call them with no indirection.
 */
#ifndef BPFMAP_HASH_FAST_HASH_H
#define BPFMAP_HASH_FAST_HASH_H

#include <stdint.h>
#include <string.h>

#include "util/compiler.h"

#define FAST_HASH_MUL 0x9e3779b97f4a7c15ULL /* 2^64 / golden ratio, odd */

static ALWAYS_INLINE uint32_t fast_hash_u32(uint32_t key, uint64_t seed)
{
	return (uint32_t)((((uint64_t)key ^ seed) * FAST_HASH_MUL) >> 32);
}

#define FAST_HASH_MUL2 0xc2b2ae3d27d4eb4fULL /* another odd 64-bit constant */

/*
 * 8-byte keys are hashed from their two 32-bit halves, each multiplied by its
 * own constant, never from one 64-bit load: callers often build keys with
 * narrower stores (a struct's fields, the selftests' 4-byte patch of word 0),
 * and a 64-bit load of bytes just written by a 32-bit store stalls on
 * store-to-load forwarding (~5 ns on x86).  The sum is folded once more so
 * that its low bits mix too.
 */
static ALWAYS_INLINE uint32_t fast_hash_u64_halves(uint32_t lo, uint32_t hi, uint64_t seed)
{
	uint64_t x = ((uint64_t)lo ^ seed) * FAST_HASH_MUL +
		     ((uint64_t)hi ^ (seed >> 32)) * FAST_HASH_MUL2;

	x ^= x >> 29;
	return (uint32_t)(x >> 32);
}

static ALWAYS_INLINE uint32_t fast_hash_u64(uint64_t key, uint64_t seed)
{
	return fast_hash_u64_halves((uint32_t)key, (uint32_t)(key >> 32), seed);
}

static ALWAYS_INLINE uint32_t load_u32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * An 8-byte key read as two 32-bit loads (see fast_hash_u64_halves).  The
 * empty asm hides the halves' origin, or the compiler would merge the two
 * loads back into the one 64-bit load that stalls.
 */
static ALWAYS_INLINE void load_u32_halves(const void *p, uint32_t *lo, uint32_t *hi)
{
	*lo = load_u32(p);
	*hi = load_u32((const char *)p + 4);
	__asm__("" : "+r"(*lo), "+r"(*hi));
}

/* Hash an 8-byte key in memory by its halves (see fast_hash_u64_halves). */
static ALWAYS_INLINE uint32_t fast_hash_u64_mem(const void *key, uint64_t seed)
{
	uint32_t lo, hi;

	load_u32_halves(key, &lo, &hi);
	return fast_hash_u64_halves(lo, hi, seed);
}

#endif
