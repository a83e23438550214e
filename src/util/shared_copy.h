/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Copies to and from memory that other threads may write at the same time
 * (map values: in-place updates, program-view atomics).  Every access to the
 * shared side is atomic, so a racing copy is defined behaviour in C11 and
 * clean under ThreadSanitizer.  Loads are acquire and stores release: that is
 * what lets sync/seqcount.h do without fences (which ThreadSanitizer does not
 * model), and on x86 both are plain moves.  Consistency itself comes from the
 * seqcount or the spin lock around the copy.  The shared side is 8-byte
 * aligned at its start; the private side may have any alignment.
 */
#ifndef BPFMAP_UTIL_SHARED_COPY_H
#define BPFMAP_UTIL_SHARED_COPY_H

#include <stdint.h>
#include <string.h>

#include "util/compiler.h"

/* Copy n bytes out of shared memory; reads whole words, so the shared side
 * must be readable up to ROUND_UP(n, 8). */
static ALWAYS_INLINE void shared_copy_out(void *dst, const void *shared, size_t n)
{
	const uint64_t *s = shared;
	char *d = dst;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w = __atomic_load_n(s++, __ATOMIC_ACQUIRE);
		memcpy(d + i, &w, 8);
	}
	if (i < n) {
		uint64_t w = __atomic_load_n(s, __ATOMIC_ACQUIRE);
		unsigned char b[8];
		size_t t = n - i, j = 0;

		/* The tail by its bits: a memcpy of a variable size is a call,
		 * which made every copy-out save registers for it. */
		memcpy(b, &w, 8);
		if (t & 4) {
			memcpy(d + i, b, 4);
			j = 4;
		}
		if (t & 2) {
			memcpy(d + i + j, b + j, 2);
			j += 2;
		}
		if (t & 1)
			d[i + j] = (char)b[j];
	}
}

/* Copy n bytes into shared memory at byte offset off from an 8-aligned base,
 * touching nothing outside [off, off + n): neighbouring bytes (a spin lock)
 * may be live. */
static ALWAYS_INLINE void shared_copy_in(void *shared_base, size_t off, const void *src,
					 size_t n)
{
	unsigned char *d = (unsigned char *)shared_base + off;
	const unsigned char *s = src;

	while (n && ((uintptr_t)d & 7)) {
		__atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
		n--;
	}
	for (; n >= 8; n -= 8, d += 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		__atomic_store_n((uint64_t *)(void *)d, w, __ATOMIC_RELEASE);
	}
	while (n--)
		__atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
}

#endif
