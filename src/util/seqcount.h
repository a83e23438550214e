/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sequence counter for values updated in place.  Writers (already serialised
 * by a lock) make the count odd while they write; readers retry when they saw
 * an odd count or a different count afterwards.  The data itself must be
 * accessed through util/shared_copy.h, whose acquire loads keep the closing
 * count read after the data reads, and whose release stores keep the opening
 * count write before the data writes: a C11-correct seqlock with no fences.
 */
#ifndef BPFMAP_UTIL_SEQCOUNT_H
#define BPFMAP_UTIL_SEQCOUNT_H

#include <stdint.h>

#include "util/compiler.h"

static ALWAYS_INLINE uint32_t seqcount_read_begin(const uint32_t *seq)
{
	uint32_t s;

	while ((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & 1)
		cpu_relax();
	return s;
}

static ALWAYS_INLINE int seqcount_read_retry(const uint32_t *seq, uint32_t start)
{
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != start;
}

static ALWAYS_INLINE void seqcount_write_begin(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + 1, __ATOMIC_RELAXED);
}

static ALWAYS_INLINE void seqcount_write_end(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + 1, __ATOMIC_RELEASE);
}

#endif
