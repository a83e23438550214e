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

/*
 * 8-byte keys: the same multiply as fast_hash_u32, on the whole word.  The
 * product's high half depends on every key bit (bit j reaches bits j..63),
 * and for keys that differ only in their high half it is that half times
 * the constant's low half, an odd number: a bijection, like the u32 hash.
 * One multiply matters here: it is on the path of every lookup.
 *
 * The key comes as two 32-bit halves, never from one 64-bit load: callers
 * often build keys with narrower stores (a struct's fields, the selftests'
 * 4-byte patch of word 0), and a 64-bit load of bytes just written by a
 * 32-bit store stalls on store-to-load forwarding (~5 ns on x86).  Joining
 * the halves in registers costs two instructions.
 */
static ALWAYS_INLINE uint32_t fast_hash_u64_halves(uint32_t lo, uint32_t hi, uint64_t seed)
{
	return (uint32_t)((((uint64_t)hi << 32 | lo) ^ seed) * FAST_HASH_MUL >> 32);
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
 * empty asm hides the high half's origin, or the compiler would merge the
 * two loads back into the one 64-bit load that stalls (hiding the low half
 * too would cost a zero extension when the halves are joined).
 */
static ALWAYS_INLINE void load_u32_halves(const void *p, uint32_t *lo, uint32_t *hi)
{
	*lo = load_u32(p);
	*hi = load_u32((const char *)p + 4);
	__asm__("" : "+r"(*hi));
}

/*
 * fast_hash_u64_halves for a table that takes a hash's low bits (the chained
 * table's bucket mask): those see only the low bits of the key's high half,
 * so the high half of the hash is folded onto them (one shift and one xor;
 * cheaper in the chained table's lookups than taking the high bits there).
 */
static ALWAYS_INLINE uint32_t fast_hash_u64_folded_halves(uint32_t lo, uint32_t hi,
							  uint64_t seed)
{
	uint32_t h = fast_hash_u64_halves(lo, hi, seed);

	return h ^ h >> 16;
}

/* Hash an 8-byte key in memory by its halves (see fast_hash_u64_halves). */
static ALWAYS_INLINE uint32_t fast_hash_u64_mem(const void *key, uint64_t seed)
{
	uint32_t lo, hi;

	load_u32_halves(key, &lo, &hi);
	return fast_hash_u64_halves(lo, hi, seed);
}

#endif
