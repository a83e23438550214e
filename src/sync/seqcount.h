/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sequence counter for values updated in place.  Writers (already serialised
 * by a lock) make the count odd while they write; readers retry when they saw
 * an odd count or a different count afterwards.  The data itself must be
 * accessed through util/shared_copy.h, whose acquire loads keep the closing
 * count read after the data reads, and whose release stores keep the opening
 * count write before the data writes: a C11-correct seqlock with no fences.
 *
 * Bit 1 marks the counted object retired (a hash element being unlinked):
 * set once, under the same lock as the writers, it tells readers and
 * lock-free writers that the object left the structure at that instant.
 * Writes therefore step the count by 4, leaving the bit alone.
 */
#ifndef BPFMAP_UTIL_SEQCOUNT_H
#define BPFMAP_UTIL_SEQCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

#define SEQCOUNT_WRITING 1U
#define SEQCOUNT_RETIRED 2U

static ALWAYS_INLINE uint32_t seqcount_read_begin(const uint32_t *seq)
{
	uint32_t s;

	while ((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & SEQCOUNT_WRITING)
		cpu_relax();
	return s;
}

static ALWAYS_INLINE int seqcount_read_retry(const uint32_t *seq, uint32_t start)
{
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != start;
}

/* A count read by seqcount_read_begin() (or any acquire load) says retired. */
static ALWAYS_INLINE bool seqcount_is_retired(uint32_t s)
{
	return s & SEQCOUNT_RETIRED;
}

static ALWAYS_INLINE void seqcount_write_begin(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + SEQCOUNT_WRITING, __ATOMIC_RELAXED);
}

static ALWAYS_INLINE void seqcount_write_end(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + 4 - SEQCOUNT_WRITING, __ATOMIC_RELEASE);
}

/* Mark retired; no write in progress (the caller holds the writers' lock).
 * Release: a reader that sees the mark sees everything before it. */
static ALWAYS_INLINE void seqcount_retire(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s | SEQCOUNT_RETIRED, __ATOMIC_RELEASE);
}

#endif
