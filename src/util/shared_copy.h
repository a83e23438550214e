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
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* The tail by its bits, from the low end of the word: a memcpy
		 * of a variable size is a call, which made every copy-out
		 * save registers for it. */
		char *p = d + i;
		size_t t = n - i;

		if (t & 4) {
			uint32_t x = (uint32_t)w;

			memcpy(p, &x, 4);
			p += 4;
			w >>= 32;
		}
		if (t & 2) {
			uint16_t x = (uint16_t)w;

			memcpy(p, &x, 2);
			p += 2;
			w >>= 16;
		}
		if (t & 1)
			*p = (char)w;
#else
		memcpy(d + i, &w, n - i);
#endif
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
