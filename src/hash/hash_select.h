/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash function of a map, chosen once at creation from the key size:
 * one multiply for 4- and 8-byte keys (hash/fast_hash.h), jhash2 (word-wise)
 * for other multiples of 4, jhash otherwise, XXH3 from HASH_XXH3_MIN_KEY
 * bytes on, where it is faster (see `bpfmap-bench -a hash`).  Seeds are 64
 * bits; the jhash family uses the low 32, so a zero seed hashes those key
 * sizes exactly as the kernel does.
 */
#ifndef BPFMAP_HASH_HASH_SELECT_H
#define BPFMAP_HASH_HASH_SELECT_H

#include <stdint.h>

typedef uint32_t (*hash_fn)(const void *key, uint32_t key_size, uint64_t seed);

enum hash_kind {
	HASH_U32,    /* 4-byte keys: fast_hash_u32 */
	HASH_U64,    /* 8-byte keys: fast_hash_u64 */
	HASH_JHASH,  /* byte-wise lookup3 */
	HASH_JHASH2, /* word-wise lookup3 */
	HASH_XXH3,   /* XXH3-64 folded to 32 bits */
};

#define HASH_XXH3_MIN_KEY 64

enum hash_kind hash_kind_for_key_size(uint32_t key_size);
hash_fn hash_fn_for_kind(enum hash_kind kind);
const char *hash_kind_name(enum hash_kind kind);

/* A random seed (getrandom), or 0 when zero_seed is set. */
uint64_t hash_seed_new(int zero_seed);

#endif
