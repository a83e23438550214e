/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Comparing a stored key of at least 8 bytes (8-byte aligned, as both map
 * layouts store keys) with a caller's key, without the store-forwarding
 * stall: callers often patch the head of a key with a 4-byte store just
 * before the call, so the caller's first 8 bytes are read as two 32-bit
 * halves (BENCHMARKS.md, "A trap").  Sizes the compiler knows (the
 * specialised lookups) compare inline.
 */
#ifndef BPFMAP_UTIL_KEY_EQUAL_H
#define BPFMAP_UTIL_KEY_EQUAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/load.h"
#include "util/compiler.h"

#ifdef BPFMAP_TSAN
/*
 * ThreadSanitizer builds read the stored key with relaxed atomic loads.  A
 * reader that matched a tag may compare a key while a reuse of its position
 * rewrites it; the bucket's seq then discards the answer (a seqlock read),
 * but the tool would report the plain loads.  Stored keys are whole words,
 * so the tail word is loaded whole and masked to the key's bytes.
 */
static ALWAYS_INLINE bool key_equal_long(const char *slot, const void *key, uint32_t ks)
{
	const char *k = key;

	for (uint32_t off = 0; off < ks; off += 8) {
		uint64_t a = __atomic_load_n((const uint64_t *)(const void *)(slot + off),
					     __ATOMIC_RELAXED), b = 0;
		uint32_t n = ks - off < 8 ? ks - off : 8;

		memcpy(&b, k + off, n);
		if (n < 8)
			a &= (UINT64_C(1) << (8 * n)) - 1;
		if (a != b)
			return false;
	}
	return true;
}
#else
static ALWAYS_INLINE bool key_equal_long(const char *slot, const void *key, uint32_t ks)
{
	const char *k = key;
	uint32_t lo, hi;
	uint64_t w, diff;

	/* Hide the key's object from GCC's bounds warnings in inlined dead
	 * paths (a 4-byte key reaching here with a constant ks <= 8). */
	__asm__("" : "+r"(k));

	/* The key's first word by halves: callers often patch the head of a
	 * key with a 4-byte store, and an 8-byte load of it would stall on
	 * store forwarding (BENCHMARKS.md, "A trap"). */
	load_u32_halves(k, &lo, &hi);
	memcpy(&w, slot, 8);
	diff = w ^ ((uint64_t)hi << 32 | lo);
	if (__builtin_constant_p(ks) && ks <= 64) {
		uint32_t off = 8;

		/* Unrolled: a loop's back edge would be a taken branch per word. */
#pragma GCC unroll 8
		for (; off + 8 <= ks; off += 8) {
			uint64_t a, b;

			memcpy(&a, slot + off, 8);
			memcpy(&b, k + off, 8);
			diff |= a ^ b;
		}
		return !diff && !memcmp(slot + off, k + off, ks - off);
	}
	/* Long keys span several cache lines: ask for all of them at once
	 * rather than one miss after the other inside memcmp. */
	for (uint32_t off = 64; off < ks; off += 64)
		__builtin_prefetch(slot + off);
	return !diff && !memcmp(slot + 8, k + 8, ks > 8 ? ks - 8 : 0);
}
#endif

#endif
