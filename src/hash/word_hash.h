/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The word hash: multilinear hashing for keys other than 4 and 8 bytes, up
 * to WORD_HASH_MAX_KEY (Lemire & Kaser, "Strongly universal string hashing
 * is fast", Computer Journal 2014; their MULTILINEAR-HM form).  The key is
 * read as 32-bit words w_1..w_n, taken in pairs:
 *
 *	h = c_0 + (w_1 + c_1)(w_2 + c_2) + (w_3 + c_3)(w_4 + c_4) + ...  mod 2^64
 *
 * (an odd last word adds w_n * c_n), and the hash is the top 32 bits of h.
 * With independent random 64-bit coefficients c_i the paper proves this
 * family strongly universal.  Here c_i = K_i ^ seed, K_i a fixed table of
 * random odd constants (word_hash_coef[]): a ZERO_SEED map hashes
 * deterministically, every other seed gives another function (not
 * independent coefficients, so the bound is a design aim, not a proof).
 *
 * Why: one 64-bit multiply per two words, all independent (jhash chains
 * mixing rounds), and 32-bit loads only.  Callers, the selftests' lookup
 * benchmark among them, often write the key with narrow stores just before
 * the lookup; an 8- or 16-byte load over bytes just written by a 4-byte store
 * waits for the store to retire (store-to-load forwarding fails, ~5 ns on
 * x86), which is what makes XXH3 slow on such keys.
 *
 * The bucket index takes the low bits of the hash, bits 32.. of h, and an
 * arithmetic sequence in one word (the benchmark's keys) spreads there more
 * evenly than a random function would.  Keys varying in two words form a
 * lattice that a linear hash can map unevenly (tests/test_jhash.c measures
 * both).  A finalising mix (xorshift-multiply-xorshift) made every set look
 * random, lattices included, but cost 15-35% of the lookup rate on 16-64-byte
 * keys in bpfmap-bench (the lost even spread means more collisions), so there
 * is none.
 *
 * A key whose size is not a multiple of 4 ends with one more word (see
 * word_hash_tail()); the key -> words map stays injective for each size.
 * Key sizes are fixed per map, so the size is not hashed.
 *
 * word_hash() is the inline form, for callers that know the key size at
 * compile time (the code is then straight-line); hash_fn_for_kind(HASH_WORDS)
 * is the out-of-line one.
 */
#ifndef BPFMAP_HASH_WORD_HASH_H
#define BPFMAP_HASH_WORD_HASH_H

#include <stdint.h>
#include <string.h>

#include "hash/fast_hash.h"
#include "util/compiler.h"

/* Longest key the word hash takes (coefficients for 1 + its words). */
#define WORD_HASH_MAX_KEY 512
#define WORD_HASH_COEFS (1 + WORD_HASH_MAX_KEY / 4)

extern const uint64_t word_hash_coef[WORD_HASH_COEFS];

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
 * The hash of @key (1..WORD_HASH_MAX_KEY bytes), words taken in pairs:
 * c_0 + sum of (w_2i-1 + c_2i-1) * (w_2i + c_2i) mod 2^64, a last odd word
 * as w_n * c_n, the top 32 bits.  Two sums so that the additions do not form
 * one serial chain.  Coefficient i is @c[i] ^ @s: word_hash() passes the
 * constants and the seed, a map that keeps its own coefficients
 * (hash_coef_new) passes those and 0, and the xors fold away.
 */
static ALWAYS_INLINE uint32_t word_hash_with(const void *key, uint32_t key_size, const uint64_t *c,
					     uint64_t s)
{
	const unsigned char *k = key;
	uint64_t a = c[0] ^ s, b = 0;
	uint32_t n = key_size / 4, i = 0;

	/* Straight-line code for a constant key size (up to 128 bytes). */
#pragma GCC unroll 8
	for (; i + 4 <= n; i += 4) {
		a += (load_u32(k + 4 * i) + (c[i + 1] ^ s)) *
		     (load_u32(k + 4 * i + 4) + (c[i + 2] ^ s));
		b += (load_u32(k + 4 * i + 8) + (c[i + 3] ^ s)) *
		     (load_u32(k + 4 * i + 12) + (c[i + 4] ^ s));
	}
	if (i + 2 <= n) {
		a += (load_u32(k + 4 * i) + (c[i + 1] ^ s)) *
		     (load_u32(k + 4 * i + 4) + (c[i + 2] ^ s));
		i += 2;
	}
	if (i < n)
		b += (uint64_t)load_u32(k + 4 * i) * (c[i + 1] ^ s);
	if (key_size % 4)
		a += (uint64_t)word_hash_tail(k, key_size) * (c[n + 1] ^ s);
	return (uint32_t)((a + b) >> 32);
}

/* Seeded: the seed's bit 0 is dropped so the coefficients stay odd. */
static ALWAYS_INLINE uint32_t word_hash(const void *key, uint32_t key_size, uint64_t seed)
{
	return word_hash_with(key, key_size, word_hash_coef, seed & ~1ULL);
}

/* A map's own coefficients, word_hash_coef[i] ^ (seed & ~1) (malloc'ed;
 * NULL without memory): both word_hash_with() and nh_hash_with() take them
 * with 0. */
uint64_t *hash_coef_new(uint64_t seed);
#define HASH_COEF_BYTES (WORD_HASH_COEFS * sizeof(uint64_t))

#endif
