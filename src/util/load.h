/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unaligned loads of a caller's key.  An 8-byte key is read as two 32-bit
 * halves: callers often build keys with narrower stores (a struct's fields,
 * the selftests' 4-byte patch of word 0), and a 64-bit load of bytes just
 * written by a 32-bit store stalls on store-to-load forwarding (~5 ns on
 * x86; BENCHMARKS.md, "A trap").  Joining the halves in registers costs two
 * instructions.
 */
#ifndef BPFMAP_UTIL_LOAD_H
#define BPFMAP_UTIL_LOAD_H

#include <stdint.h>
#include <string.h>

#include "util/compiler.h"

static ALWAYS_INLINE uint32_t load_u32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static ALWAYS_INLINE uint64_t load_u64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The empty asm hides the high half's origin, or the compiler would merge
 * the two loads back into the one 64-bit load that stalls. */
static ALWAYS_INLINE void load_u32_halves(const void *p, uint32_t *lo, uint32_t *hi)
{
	*lo = load_u32(p);
	*hi = load_u32((const char *)p + 4);
	__asm__("" : "+r"(*hi));
}

static ALWAYS_INLINE uint64_t load_u64_by_halves(const void *p)
{
	uint32_t lo, hi;

	load_u32_halves(p, &lo, &hi);
	return (uint64_t)hi << 32 | lo;
}

#endif
