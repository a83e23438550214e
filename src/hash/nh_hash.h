/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NH, the hash of UMAC (Black, Halevi, Krawczyk, Krovetz, Rogaway, "UMAC:
 * Fast and Secure Message Authentication", CRYPTO 1999), for keys from
 * NH_HASH_MIN_KEY bytes on.  The key is read as 64-bit lanes x = (lo, hi),
 * lane i has its own coefficient c_i = (c_lo, c_hi), and
 *
 *	sum = sum over lanes of ((lo + c_lo) mod 2^32) * ((hi + c_hi) mod 2^32)  mod 2^64
 *
 * With the c_i independent and uniform (the map's hash_params.coef), two
 * distinct lane vectors of one length give the same sum with probability at
 * most 2^-32 (the paper's Theorem: NH is 2^-w-almost-universal, w = 32).
 * The sum then goes through hash_finish (hash/hash_finish.h), which cannot
 * save a sum collision: the coefficients themselves must be independent (one
 * seed xored into fixed coefficients let a single integer relation between
 * 35 lanes collide under every seed).
 *
 * Keys longer than NH_BLOCK: NH over 1024-byte blocks, all with the same
 * coefficients (blocks at 0, 1024, ..., the last one the key's last 1024
 * bytes, overlapping the one before: fixed positions for a key size, so
 * distinct keys give distinct block vectors), then the blocks' sums, as two
 * 32-bit limbs each, are the coefficients of a polynomial evaluated at the
 * map's random point r modulo the prime 2^61 - 1 (UMAC's second layer, in
 * the form of Carter & Wegman).  Two keys collide only if a block that
 * differs has one NH sum (2^-32) or the two polynomials, distinct, of degree
 * < 2m for m blocks, agree at r (at most 2m / 2^61); then hash_finish.
 *
 * Why NH: one 32x32->64 multiply per 8 bytes, and SSE2 does two at once
 * (pmuludq), so a 128-byte key costs 8 vector multiplies where the word hash
 * (hash/word_hash.h) needs 16 scalar ones and twice the loads.  XXH3 was the
 * hash of keys over 1024 bytes before: with a random seed or secret a fixed
 * pair of messages still collides with probability about 2^-27
 * (github.com/Cyan4973/xxHash/issues/1127), so no bound holds for it.
 *
 * Lanes: bytes 0-7 come from two 32-bit loads (callers, the selftests'
 * lookup benchmark among them, patch a key's first word with a 4-byte store
 * just before the lookup, and a wider load over those bytes would stall on
 * store-to-load forwarding); then 8-byte lanes from byte 8 on, from byte 16
 * on two at a time (16-byte blocks at 16-byte offsets, inside the stores of
 * a caller who writes the key 16 or 32 bytes at a time: a block straddling
 * two of them would stall as well), a last partial lane taken as the key's
 * last 8 bytes (overlapping the one before).  Every byte is in some lane at
 * a position fixed by the key size, so distinct keys of one size give
 * distinct lane vectors.  The SSE2 code and the portable code compute the
 * same sum.
 */
#ifndef BPFMAP_HASH_NH_HASH_H
#define BPFMAP_HASH_NH_HASH_H

#include <stdint.h>
#include <string.h>

#include "hash/hash_finish.h"
#include "hash/hash_params.h"
#include "util/compiler.h"
#include "util/load.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

/* NH from here on (hash/hash_select.h says why); blocks of NH_BLOCK bytes
 * beyond it.  NH itself takes any size from 24 bytes on. */
#define NH_HASH_MIN_KEY 64
#define NH_BLOCK 1024
#define NH_POLY_PRIME ((1ULL << 61) - 1)

/* Lanes of a @key_size-byte key (or block), the head lane included. */
static ALWAYS_INLINE uint32_t nh_hash_lanes(uint32_t key_size)
{
	return 1 + (key_size - 8 + 7) / 8;
}
_Static_assert(1 + (NH_BLOCK - 8 + 7) / 8 <= HASH_COEFS, "NH lanes lack coefficients");

/* One lane's term: ((lo + c_lo) mod 2^32) * ((hi + c_hi) mod 2^32). */
static ALWAYS_INLINE uint64_t nh_term(uint32_t lo, uint32_t hi, uint64_t c)
{
	return (uint64_t)(uint32_t)(lo + (uint32_t)c) * (uint32_t)(hi + (uint32_t)(c >> 32));
}

#if defined(__SSE2__) && defined(__x86_64__)
/* A 16-byte block's two terms, added to @acc. */
static ALWAYS_INLINE __m128i nh_block(__m128i acc, const unsigned char *p, const uint64_t *c)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i t = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(const void *)c));

	return _mm_add_epi64(acc, _mm_mul_epu32(t, _mm_srli_epi64(t, 32)));
}
#endif

/* A lane at @p (not at the key's first byte: one 8-byte load). */
static ALWAYS_INLINE uint64_t nh_lane(const unsigned char *p, uint64_t c)
{
	uint64_t x = load_u64(p);

	return nh_term((uint32_t)x, (uint32_t)(x >> 32), c);
}

/* NH's sum over @key_size (24..NH_BLOCK) bytes; lane i takes @c[i]. */
static ALWAYS_INLINE uint64_t nh_sum(const void *key, uint32_t key_size, const uint64_t *c)
{
	const unsigned char *k = key;
	uint32_t off = 16, lane = 2;
	uint64_t sum;

	sum = nh_term(load_u32(k), load_u32(k + 4), c[0]) + nh_lane(k + 8, c[1]);
#if defined(__SSE2__) && defined(__x86_64__)
	__m128i acc = _mm_setzero_si128();

#pragma GCC unroll 32
	for (; off + 16 <= key_size; off += 16, lane += 2)
		acc = nh_block(acc, k + off, c + lane);
	acc = _mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc));
	sum += (uint64_t)_mm_cvtsi128_si64(acc);
#else
#pragma GCC unroll 32
	for (; off + 16 <= key_size; off += 16, lane += 2) {
		sum += nh_lane(k + off, c[lane]);
		sum += nh_lane(k + off + 8, c[lane + 1]);
	}
#endif
	if (off + 8 <= key_size) {
		sum += nh_lane(k + off, c[lane++]);
		off += 8;
	}
	if (off < key_size)
		sum += nh_lane(k + key_size - 8, c[lane]);
	return sum;
}

/* Keys of 24..NH_BLOCK bytes. */
static ALWAYS_INLINE uint64_t nh_hash(const void *key, uint32_t key_size,
				      const struct hash_params *p)
{
	return hash_finish(nh_sum(key, key_size, p->coef), p->fin);
}

/* (a * b) mod 2^61 - 1, for a, b below 2^61 (or a product below 2^122). */
static ALWAYS_INLINE uint64_t nh_poly_mulmod(uint64_t a, uint64_t b)
{
	unsigned __int128 m = (unsigned __int128)a * b;
	uint64_t r = ((uint64_t)m & NH_POLY_PRIME) + (uint64_t)(m >> 61);

	return r >= NH_POLY_PRIME ? r - NH_POLY_PRIME : r;
}

/* One Horner step: acc * r + limb, mod 2^61 - 1 (acc < 2^61 - 1, limb < 2^32). */
static ALWAYS_INLINE uint64_t nh_poly_step(uint64_t acc, uint64_t r, uint32_t limb)
{
	uint64_t x = nh_poly_mulmod(acc, r) + limb;

	return x >= NH_POLY_PRIME ? x - NH_POLY_PRIME : x;
}

/* Keys longer than NH_BLOCK bytes: NH per block, the blocks' sums as the
 * coefficients of a polynomial at the map's point (see the top). */
static inline uint64_t nh_hash_long(const void *key, uint32_t key_size,
				    const struct hash_params *p)
{
	const unsigned char *k = key;
	uint64_t acc = 0;

	for (uint32_t off = 0;; off += NH_BLOCK) {
		uint32_t at = off + NH_BLOCK < key_size ? off : key_size - NH_BLOCK;
		uint64_t s = nh_sum(k + at, NH_BLOCK, p->coef);

		acc = nh_poly_step(acc, p->poly, (uint32_t)s);
		acc = nh_poly_step(acc, p->poly, (uint32_t)(s >> 32));
		if (at == key_size - NH_BLOCK)
			break;
	}
	return hash_finish(acc, p->fin);
}

#endif
