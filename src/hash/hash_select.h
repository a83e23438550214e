/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash function of a map, chosen once at creation from the key size
 * (numbers: `bpfmap-bench -a hash` and bpf-hashmap-lookup, both with and
 * without --full_width_keys):
 *  - 4- and 8-byte keys: one multiply (hash/fast_hash.h);
 *  - other sizes below NH_HASH_MIN_KEY: the word hash, multilinear over
 *    32-bit words (hash/word_hash.h), 2-2.5x faster than jhash2 at 12-64
 *    bytes and never slowed by the selftests' 4-byte key stores;
 *  - NH_HASH_MIN_KEY to NH_HASH_MAX_KEY: NH (hash/nh_hash.h), two 32x32-bit
 *    multiplies per SSE2 instruction: at 64-1024 bytes 2-2.4x faster than
 *    the word hash and 1.2-3x faster than XXH3, with either store pattern.
 *    Below 64 bytes it is faster alone too, but the word hash spreads the
 *    benchmark's arithmetic key sequences evenly where NH (random-like,
 *    after its finaliser) does not, and in the chained table's lookups of
 *    32-48-byte keys that won (NH 2-8% slower there);
 *  - from HASH_XXH3_MIN_KEY on: XXH3 (8- and 16-byte loads).
 * jhash and jhash2 (the kernel's hashes) stay available by kind; bpfmap no
 * longer picks them, so no key size lays a ZERO_SEED map out exactly as the
 * kernel does.  Seeds are 64 bits (the jhash family would use the low 32).
 */
#ifndef BPFMAP_HASH_HASH_SELECT_H
#define BPFMAP_HASH_HASH_SELECT_H

#include <stdint.h>

typedef uint32_t (*hash_fn)(const void *key, uint32_t key_size, uint64_t seed);

enum hash_kind {
	HASH_U32,    /* 4-byte keys: fast_hash_u32 */
	HASH_U64,    /* 8-byte keys: fast_hash_u64 */
	HASH_JHASH,  /* byte-wise lookup3 (not picked by size any more) */
	HASH_JHASH2, /* word-wise lookup3 (not picked by size any more) */
	HASH_XXH3,   /* XXH3-64 folded to 32 bits */
	HASH_WORDS,  /* multilinear over 32-bit words (hash/word_hash.h) */
	HASH_NH,     /* NH over 64-bit lanes, SSE2 (hash/nh_hash.h) */
};

/* XXH3 from here on (NH has coefficients up to NH_HASH_MAX_KEY). */
#define HASH_XXH3_MIN_KEY 1025

enum hash_kind hash_kind_for_key_size(uint32_t key_size);
hash_fn hash_fn_for_kind(enum hash_kind kind);
/* The same, for a table that takes a hash's low bits (a power-of-two mask):
 * HASH_U64 folded (fast_hash_u64_folded_halves), the others as they are. */
hash_fn hash_fn_low_bits(enum hash_kind kind);
const char *hash_kind_name(enum hash_kind kind);

/* A random seed (getrandom), or 0 when zero_seed is set. */
uint64_t hash_seed_new(int zero_seed);

#endif
