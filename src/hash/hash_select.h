/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash function of a map, chosen once at creation from the key size
 * (numbers: `bpfmap-bench -a hash` and bpf-hashmap-lookup, both with and
 * without --full_width_keys):
 *  - 4- and 8-byte keys: one multiply (hash/fast_hash.h);
 *  - every other size below HASH_XXH3_MIN_KEY: the word hash, multilinear
 *    over 32-bit words (hash/word_hash.h), 2-2.5x faster than jhash2 at
 *    12-64 bytes and never slowed by the selftests' 4-byte key stores;
 *  - from HASH_XXH3_MIN_KEY on: XXH3 (8- and 16-byte loads): at 1 KiB it
 *    ties the word hash in lookups and beats it as a bare hash.
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
};

/* XXH3 from here on; the word hash has coefficients up to WORD_HASH_MAX_KEY. */
#define HASH_XXH3_MIN_KEY 513

enum hash_kind hash_kind_for_key_size(uint32_t key_size);
hash_fn hash_fn_for_kind(enum hash_kind kind);
/* The same, for a table that takes a hash's low bits (a power-of-two mask):
 * HASH_U64 folded (fast_hash_u64_folded_halves), the others as they are. */
hash_fn hash_fn_low_bits(enum hash_kind kind);
const char *hash_kind_name(enum hash_kind kind);

/* A random seed (getrandom), or 0 when zero_seed is set. */
uint64_t hash_seed_new(int zero_seed);

#endif
