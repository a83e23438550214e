/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A flat bucket's eight tag bytes and eight word keys as a group, compared at
 * once (as abseil keeps its control-byte groups apart from the table): the
 * tag values, SWAR matches on the 64-bit tag word, and SSE2 compares of the
 * tags or of the keys.  Nothing here knows the table.
 */
#ifndef BPFMAP_TABLES_FLAT_GROUP_H
#define BPFMAP_TABLES_FLAT_GROUP_H

#include <stdint.h>

#include "util/compiler.h"

#if defined(__SSE2__) && !defined(BPFMAP_TSAN)
/* Small keys compared a bucket at a time (SSE2 is part of x86-64).  TSan
 * builds use the scalar path: the vector loads read slots being filled. */
#include <emmintrin.h>
#define FLAT_SIMD 1
#else
#define FLAT_SIMD 0
#endif

/* Tag bytes. */
#define FLAT_EMPTY 0
#define FLAT_BUSY 1
#define FLAT_WAIT 2
#define FLAT_QUEUED 3
#define FLAT_SYNCQ 4 /* deleted; an inserter's own grace period covers it */
#define FLAT_TAG_MIN 0x80 /* live tags: 0x80 | 7 bits of the hash */

#define FLAT_BYTES_LO 0x0101010101010101ULL
#define FLAT_BYTES_7F 0x7f7f7f7f7f7f7f7fULL
#define FLAT_BYTES_HI 0x8080808080808080ULL

/* 0x80 in each byte of tags equal to the byte broadcast in bcast, else 0
 * (exact: no false positives). */
static ALWAYS_INLINE uint64_t flat_match(uint64_t tags, uint64_t bcast)
{
	uint64_t x = tags ^ bcast;

	return ~(((x & FLAT_BYTES_7F) + FLAT_BYTES_7F) | x) & FLAT_BYTES_HI;
}

/* 0x80 in each byte holding a live tag (>= FLAT_TAG_MIN). */
static ALWAYS_INLINE uint64_t flat_live(uint64_t tags)
{
	return tags & FLAT_BYTES_HI;
}

/* The slot of a match mask's lowest byte. */
static ALWAYS_INLINE uint32_t flat_first(uint64_t mask)
{
	return (uint32_t)__builtin_ctzll(mask) >> 3;
}

#if FLAT_SIMD
/*
 * One bit per slot of the tag word @tags whose tag is @tag (a live tag,
 * >= FLAT_TAG_MIN), the tags read as an acquire load would: one vector load
 * (x86 keeps loads in order, and the fence keeps the compiler from moving
 * later loads above it; TSan builds have no FLAT_SIMD), no move from a
 * general register.  The tag is broadcast by a multiply: fewer instructions
 * than SSE2's shuffles.
 */
static ALWAYS_INLINE uint32_t flat_simd_tag_bits_at(const uint64_t *tags, uint32_t tag)
{
	__m128i t = _mm_loadl_epi64((const __m128i *)(const void *)tags);
	__m128i b;

	__atomic_signal_fence(__ATOMIC_ACQUIRE);
	b = _mm_cvtsi64_si128((long long)(tag * FLAT_BYTES_LO));
	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(t, b)) & 0xffu;
}

/* One bit per slot whose 4-byte key (of a bucket's eight, 32-byte aligned)
 * equals k. */
static ALWAYS_INLINE uint32_t flat_simd_eq4(const char *keys, uint32_t k)
{
	const __m128i *p = (const __m128i *)(const void *)keys;
	__m128i kv = _mm_set1_epi32((int)k);
	uint32_t a = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(p[0], kv)));
	uint32_t b = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(p[1], kv)));

	return a | b << 4;
}

/* The same for 8-byte keys (64 bytes, aligned), given as two halves: SSE2
 * compares 32-bit lanes, so the eight keys' sixteen lane results are packed
 * to bytes (lane 2i: key i's low half, 2i + 1 its high half) and a key
 * matches where both of its lanes do.  Bit 2i of the result stands for slot
 * i. */
static ALWAYS_INLINE uint32_t flat_simd_eq8(const char *keys, uint32_t lo, uint32_t hi)
{
	const __m128i *p = (const __m128i *)(const void *)keys;
	__m128i kv = _mm_set_epi32((int)hi, (int)lo, (int)hi, (int)lo);
	__m128i w01 = _mm_packs_epi32(_mm_cmpeq_epi32(p[0], kv), _mm_cmpeq_epi32(p[1], kv));
	__m128i w23 = _mm_packs_epi32(_mm_cmpeq_epi32(p[2], kv), _mm_cmpeq_epi32(p[3], kv));
	uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(w01, w23));

	return eq & (eq >> 1) & 0x5555u;
}
#endif

#endif
