/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Zeroed, 64-byte-aligned arrays for a map's tables.  Large ones (from
 * BIG_ALLOC_MMAP_MIN bytes) come straight from mmap, 2 MiB-aligned from
 * 2 MiB on and advised for transparent huge pages, rather than from malloc.
 * Why: glibc raises its mmap threshold each time a large block is freed, so
 * in a program that has freed a map, the next map's tables came from the
 * heap instead, laid out and paged differently, and lookups in large maps
 * ran measurably slower than in a fresh process.  Smaller arrays come from
 * calloc, where tests/test_oom.c can make them fail, and so does every
 * array in AddressSanitizer builds, whose leak and bounds checks do not see
 * mmap.
 */
#ifndef BPFMAP_UTIL_BIG_ALLOC_H
#define BPFMAP_UTIL_BIG_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#define BIG_ALLOC_MMAP_MIN SIZE_MAX
#else
#define BIG_ALLOC_MMAP_MIN ((size_t)128 << 10)
#endif

/* @bytes zeroed bytes, 64-byte aligned; NULL (errno ENOMEM) without memory. */
void *big_zalloc(size_t bytes);
/* The same, from mmap whatever the size or the build: for arrays that
 * big_clear gives back to the kernel by the page. */
void *big_zalloc_mapped(size_t bytes);
/* The same for an array of which whole regions are never touched (the
 * slots of CPUs in a gap of the possible list): not counted against the
 * kernel's commit limit, which refused a per-CPU map whose slots on
 * "0,4095" took more than the machine's memory though it would use 2 of
 * 4096 of them. */
void *big_zalloc_sparse(size_t bytes);
/* Did @p (from big_zalloc*) come from mmap?  Then its pages cost memory
 * once touched; from the heap, all of it is the program's at once. */
bool big_is_mapped(const void *p);
/* Release what big_zalloc or big_zalloc_mapped returned; NULL is a no-op. */
void big_free(void *p);
/* Zero the @bytes at @p (from big_zalloc*) while threads may still load
 * from them, atomically: the whole pages of a mapped array go back to the
 * kernel and read as zero from then on, the rest is cleared by atomic
 * stores.  Returns the bytes of it that still take memory. */
size_t big_clear(void *p, size_t bytes);
/* @p, cleared by big_clear, about to be filled again: large arrays go back
 * to huge pages (big_clear keeps the first stores after it on small ones). */
void big_reuse(void *p, size_t bytes);

/* @bytes of address space, page-aligned, zero when first touched and
 * costing memory only from then on, in 4 KiB pages (no huge pages: they
 * would cost 2 MiB at a time); never moved, so what lives there keeps its
 * address.  NULL without room. */
void *big_reserve(size_t bytes);
/* The memory that the first @used bytes of a reservation take. */
size_t big_reserve_used(size_t used);
void big_unreserve(void *p, size_t bytes);

/* fork(): the lock around the calls into a leak checker (big_alloc.c),
 * taken last by the prepare handler, given back first after. */
void big_fork_hold(void);
void big_fork_release(void);

#endif
