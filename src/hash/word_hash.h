/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The word hash: multilinear hashing in the pair-multiply form (Lemire &
 * Kaser, "Strongly universal string hashing is fast", Computer Journal 2014,
 * MULTILINEAR-HM) for keys of 1..WORD_HASH_MAX_KEY bytes other than 4 and 8.
 * The key is read as 32-bit words w_1..w_n, taken in pairs:
 *
 *	h = c_0 + (w_1 + c_1)(w_2 + c_2) + (w_3 + c_3)(w_4 + c_4) + ...  mod 2^64
 *
 * (an odd last word adds w_n * c_n, a key whose size is not a multiple of 4
 * one more word w_t * c_t); the hash is hash_finish(h) (hash/hash_finish.h).
 *
 * First-stage bound (c_i independent uniform 64-bit words: the map's
 * hash_params.coef): take two distinct keys of one size; their word vectors
 * differ (the key -> words map is injective per size), say in w_i.  Fix
 * every coefficient but the one that multiplies w_i's term (c_i's partner
 * in its pair, or c_i itself for a single term); the difference of the two
 * sums is then D = c * delta + R, delta = w_i - w'_i a non-zero integer
 * below 2^32 in size, R fixed.  c * delta mod 2^64 is uniform over the
 * multiples of 2^t (t < 32, the power of two in delta), so the sums are
 * equal with probability at most 2^(t - 64) <= 2^-33; hash_finish does the
 * rest.
 *
 * Why: one 64-bit multiply per two words, all independent (jhash chains
 * mixing rounds), and 32-bit loads only.  Callers, the selftests' lookup
 * benchmark among them, often write the key with narrow stores just before
 * the lookup; an 8- or 16-byte load over bytes just written by a 4-byte store
 * waits for the store to retire (store-to-load forwarding fails, ~5 ns on
 * x86).
 *
 * word_hash() is inline, for callers that know the key size at compile time
 * (the code is then straight-line).
 */
#ifndef BPFMAP_HASH_WORD_HASH_H
#define BPFMAP_HASH_WORD_HASH_H

#include <stdint.h>

#include "hash/hash_finish.h"
#include "hash/hash_params.h"
#include "util/compiler.h"
#include "util/load.h"

/* Longest key the word hash takes (coefficients for 1 + its words). */
#define WORD_HASH_MAX_KEY 512

/*
 * The last word of a key of @key_size bytes that is not a multiple of 4.
 * From 8 bytes on, the key's last 4 bytes (overlapping the previous word,
 * which is not word 0).  Shorter keys assemble their last 1-3 bytes instead:
 * a load overlapping bytes 0-3 would stall on a 4-byte store to word 0 just
 * as a wide load does.  (First, middle and last byte: injective for each
 * length.)
 */
static ALWAYS_INLINE uint32_t word_hash_tail(const unsigned char *k, uint32_t key_size)
{
	uint32_t off = key_size / 4 * 4, r = key_size - off;

	if (key_size >= 8)
		return load_u32(k + key_size - 4);
	return (uint32_t)k[off] | (uint32_t)k[off + r / 2] << 8 | (uint32_t)k[key_size - 1] << 16;
}

/*
 * The first-stage sum of @key (1..WORD_HASH_MAX_KEY bytes) with coefficients
 * @c (at least (key_size - 1) / 4 + 2 of them).  Two sums, so that the
 * additions do not form one serial chain.
 */
static ALWAYS_INLINE uint64_t word_hash_sum(const void *key, uint32_t key_size, const uint64_t *c)
{
	const unsigned char *k = key;
	uint64_t a = c[0], b = 0;
	uint32_t n = key_size / 4, i = 0;

	/* Straight-line code for a constant key size (up to 128 bytes). */
#pragma GCC unroll 8
	for (; i + 4 <= n; i += 4) {
		a += (load_u32(k + 4 * i) + c[i + 1]) * (load_u32(k + 4 * i + 4) + c[i + 2]);
		b += (load_u32(k + 4 * i + 8) + c[i + 3]) * (load_u32(k + 4 * i + 12) + c[i + 4]);
	}
	if (i + 2 <= n) {
		a += (load_u32(k + 4 * i) + c[i + 1]) * (load_u32(k + 4 * i + 4) + c[i + 2]);
		i += 2;
	}
	if (i < n)
		b += (uint64_t)load_u32(k + 4 * i) * c[i + 1];
	if (key_size % 4)
		a += (uint64_t)word_hash_tail(k, key_size) * c[n + 1];
	return a + b;
}

static ALWAYS_INLINE uint64_t word_hash(const void *key, uint32_t key_size,
					const struct hash_params *p)
{
	return hash_finish(word_hash_sum(key, key_size, p->coef), p->fin);
}

#endif
