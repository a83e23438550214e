/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash function of a map, chosen once at creation from the key size
 * (numbers: `bpfmap-bench -a hash` and bpf-hashmap-lookup, both with and
 * without --full_width_keys; docs/PERFORMANCE.md):
 *  - 4- and 8-byte keys: a multiply, a fold, a multiply (hash/fast_hash.h);
 *  - other sizes below NH_HASH_MIN_KEY: the word hash, multilinear over
 *    32-bit words (hash/word_hash.h), 2-2.5x faster than jhash2 at 12-64
 *    bytes and never slowed by the selftests' 4-byte key stores;
 *  - NH_HASH_MIN_KEY to NH_BLOCK: NH (hash/nh_hash.h), two 32x32-bit
 *    multiplies per SSE2 instruction;
 *  - longer keys: NH over 1024-byte blocks, joined by a polynomial modulo
 *    2^61 - 1.
 * Every one is (almost) universal with the map's random parameters
 * (hash/hash_params.h, hash/hash_finish.h); each header states its bound.
 */
#ifndef BPFMAP_HASH_HASH_SELECT_H
#define BPFMAP_HASH_HASH_SELECT_H

#include <stdint.h>

#include "hash/hash_params.h"

/* A key's 64-bit hash; the tables use its top bits. */
typedef uint64_t (*hash_fn)(const void *key, uint32_t key_size, const struct hash_params *p);

enum hash_kind {
	HASH_U32,     /* 4-byte keys: fast_hash_u32 */
	HASH_U64,     /* 8-byte keys: fast_hash_u64 */
	HASH_WORDS,   /* multilinear over 32-bit words (hash/word_hash.h) */
	HASH_NH,      /* NH over 64-bit lanes (hash/nh_hash.h) */
	HASH_NH_LONG, /* NH over 1024-byte blocks, then a polynomial */
};

enum hash_kind hash_kind_for_key_size(uint32_t key_size);
hash_fn hash_fn_for_kind(enum hash_kind kind);
const char *hash_kind_name(enum hash_kind kind);

/*
 * The tables' update entry points, one per key kind: @name##_u32, _u64 and
 * _any call the inline @sized(self, key, value, flags, key_size, kind)
 * with their kind a constant, so that each keeps only the registers its
 * kind needs; @name##_kind(kind, ...) picks one, as a tail call.  @type
 * @self: the table's first parameter; the "any" variant passes @any_ks
 * and @any_kind, expressions of @self.  Each starts on a 64-byte boundary:
 * where an unrelated change moved RHASH's by 16 bytes, its -E2BIG updates
 * ran 10% slower with identical code.
 */
#define HASH_KIND_UPDATES(name, sized, type, self, any_ks, any_kind)                            \
	static __attribute__((noinline, aligned(64))) int name##_u32(type self, const void *key,        \
							const void *value, uint64_t flags)       \
	{                                                                                        \
		return sized(self, key, value, flags, 4, HASH_U32);                              \
	}                                                                                        \
	static __attribute__((noinline, aligned(64))) int name##_u64(type self, const void *key,        \
							const void *value, uint64_t flags)       \
	{                                                                                        \
		return sized(self, key, value, flags, 8, HASH_U64);                              \
	}                                                                                        \
	static __attribute__((noinline, aligned(64))) int name##_any(type self, const void *key,        \
							const void *value, uint64_t flags)       \
	{                                                                                        \
		return sized(self, key, value, flags, any_ks, any_kind);                         \
	}                                                                                        \
	static inline __attribute__((always_inline)) int name##_kind(                            \
		enum hash_kind kind_, type self, const void *key, const void *value, uint64_t flags) \
	{                                                                                        \
		if (kind_ == HASH_U32)                                                           \
			return name##_u32(self, key, value, flags);                              \
		if (kind_ == HASH_U64)                                                           \
			return name##_u64(self, key, value, flags);                              \
		return name##_any(self, key, value, flags);                                      \
	}

#endif
