/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The NH hash, for keys of NH_HASH_MIN_KEY to NH_HASH_MAX_KEY bytes (it can
 * hash any size from 24 bytes on, up to NH_HASH_MAX_KEY):
 * the key is read as 64-bit lanes x = (lo, hi), each lane gets its own
 * coefficient c = (c_lo, c_hi), and
 *
 *	sum = sum over lanes of ((lo + c_lo) mod 2^32) * ((hi + c_hi) mod 2^32)  mod 2^64
 *
 * (the NH family of UMAC, Black et al., CRYPTO 1999: with independent random
 * coefficients, two distinct keys collide with probability at most 2^-32).
 * The sum goes through a multiply, an xorshift and a multiply, and the hash
 * is the top 32 bits.  That finaliser is needed, not decoration: a key differing in one
 * word by a small amount changes the sum by less than 2^32 times that amount,
 * so the sum's top bits barely move, and the flat table takes a hash's top
 * bits.  Coefficients: the word hash's table (word_hash_coef[lane]) xored
 * with the map's seed (bit 0 dropped, as there).
 *
 * Why: one 32x32->64 multiply per 8 bytes, and SSE2 does two at once
 * (pmuludq), so a 128-byte key costs 8 vector multiplies where the word hash
 * (hash/word_hash.h) needs 16 scalar ones and twice the loads.
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
 * distinct lane vectors.
 *
 * The SSE2 code and the portable code compute the same sum; nh_hash() is
 * inline so that callers knowing the key size at compile time get
 * straight-line code.
 */
#ifndef BPFMAP_HASH_NH_HASH_H
#define BPFMAP_HASH_NH_HASH_H

#include <stdint.h>
#include <string.h>

#include "hash/fast_hash.h"
#include "hash/word_hash.h"
#include "util/compiler.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

/* Key sizes hashed with NH (hash/hash_select.h says why these); the
 * coefficient table has a coefficient for every lane up to the longest. */
#define NH_HASH_MIN_KEY 64
#define NH_HASH_MAX_KEY 1024
_Static_assert(1 + (NH_HASH_MAX_KEY - 8 + 7) / 8 <= WORD_HASH_COEFS, "NH lanes lack coefficients");

#define NH_FINISH_MUL 0xc2b2ae3d27d4eb4fULL /* odd, from XXH64's PRIME64_2 */

/* Lanes of a @key_size-byte key, the head lane included. */
static ALWAYS_INLINE uint32_t nh_hash_lanes(uint32_t key_size)
{
	return 1 + (key_size - 8 + 7) / 8;
}

/* One lane's term: ((lo + c_lo) mod 2^32) * ((hi + c_hi) mod 2^32). */
static ALWAYS_INLINE uint64_t nh_term(uint32_t lo, uint32_t hi, uint64_t c)
{
	return (uint64_t)(uint32_t)(lo + (uint32_t)c) * (uint32_t)(hi + (uint32_t)(c >> 32));
}

static ALWAYS_INLINE uint32_t nh_finish(uint64_t sum)
{
	sum *= FAST_HASH_MUL;
	sum ^= sum >> 32;
	return (uint32_t)((sum * NH_FINISH_MUL) >> 32);
}

#if defined(__SSE2__) && defined(__x86_64__)
/* A 16-byte block's two terms, added to @acc. */
static ALWAYS_INLINE __m128i nh_block(__m128i acc, const unsigned char *p, const uint64_t *c,
				      __m128i seed)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i t = _mm_add_epi32(
	    x, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)c), seed));

	return _mm_add_epi64(acc, _mm_mul_epu32(t, _mm_srli_epi64(t, 32)));
}
#endif

/* A lane at @p (not at the key's first byte: one 8-byte load). */
static ALWAYS_INLINE uint64_t nh_lane(const unsigned char *p, uint64_t c)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return nh_term((uint32_t)x, (uint32_t)(x >> 32), c);
}

/* Lane i's coefficient is @c[i] ^ @s (see word_hash_with). */
static ALWAYS_INLINE uint32_t nh_hash_with(const void *key, uint32_t key_size, const uint64_t *c,
					   uint64_t seed)
{
	const unsigned char *k = key;
	uint32_t off = 16, lane = 2;
	uint64_t sum;

	sum = nh_term(load_u32(k), load_u32(k + 4), c[0] ^ seed) + nh_lane(k + 8, c[1] ^ seed);
#if defined(__SSE2__) && defined(__x86_64__)
	__m128i s = _mm_set1_epi64x((long long)seed), acc = _mm_setzero_si128();

#pragma GCC unroll 32
	for (; off + 16 <= key_size; off += 16, lane += 2)
		acc = nh_block(acc, k + off, c + lane, s);
	acc = _mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc));
	sum += (uint64_t)_mm_cvtsi128_si64(acc);
#else
#pragma GCC unroll 32
	for (; off + 16 <= key_size; off += 16, lane += 2) {
		sum += nh_lane(k + off, c[lane] ^ seed);
		sum += nh_lane(k + off + 8, c[lane + 1] ^ seed);
	}
#endif
	if (off + 8 <= key_size) {
		sum += nh_lane(k + off, c[lane++] ^ seed);
		off += 8;
	}
	if (off < key_size)
		sum += nh_lane(k + key_size - 8, c[lane] ^ seed);
	return nh_finish(sum);
}

/* Seeded, bit 0 dropped as in word_hash(), so that a map's coefficient
 * table (hash_coef_new) serves both hashes. */
static ALWAYS_INLINE uint32_t nh_hash(const void *key, uint32_t key_size, uint64_t seed)
{
	return nh_hash_with(key, key_size, word_hash_coef, seed & ~1ULL);
}

#endif
