/* SPDX-License-Identifier: BSD-2-Clause */
/* Zeroed, aligned arrays for the maps' tables (see big_alloc.h). */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "sync/spin_lock.h"
#include "util/big_alloc.h"

#define BIG_HUGE_PAGE ((size_t)2 << 20)
#define BIG_PAGE ((size_t)4096)
/* The largest mapping shown to a leak checker: it reads every page of what
 * it is shown at exit, touched or not. */
#define BIG_LSAN_MAX ((size_t)1 << 30)

/*
 * A leak checker does not look into mappings of its own accord, so a
 * program that keeps the only pointer to a heap block in a map's value
 * (in a table from mmap) would be told the block leaked, and so would a
 * freed RHASH whose last callback waits in a mapped table at exit.
 * LeakSanitizer (ASan's too) scans the regions registered with it: in a
 * process it runs in, these weak references find it, elsewhere they are
 * NULL.  Valgrind scans every mapping already.
 */
extern void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));
extern void __lsan_unregister_root_region(const void *p, size_t size) __attribute__((weak));

/* Around each call into LSan, and held across fork() (big_fork_hold):
 * LSan's own lock has no fork handler (GCC 12), and a child forked while
 * another thread was in one of these calls kept it locked for ever, and
 * hung at its first mapping. */
static uint32_t lsan_lock;

/* @call (LSan's register or unregister, NULL without LSan) on a mapping. */
static void lsan_tell(void (*call)(const void *p, size_t size), const void *p, size_t len)
{
	if (call && len <= BIG_LSAN_MAX) {
		spin_lock_word(&lsan_lock);
		call(p, len);
		spin_unlock_word(&lsan_lock);
	}
}

/* Large mapped arrays on huge pages.  Advice only: failure changes nothing. */
static void advise_huge(void *p, size_t bytes)
{
	if (bytes >= BIG_HUGE_PAGE)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
}

void big_fork_hold(void)
{
	if (__lsan_register_root_region)
		spin_lock_word(&lsan_lock);
}

void big_fork_release(void)
{
	if (__lsan_register_root_region)
		spin_unlock_word(&lsan_lock);
}

/* Just below every array: where its block starts, and how to release it. */
struct big_header {
	void *base;
	size_t map_len; /* 0: from calloc */
	char pad_[64 - sizeof(void *) - sizeof(size_t)];
};

_Static_assert(sizeof(struct big_header) == 64, "the header keeps arrays 64-byte aligned");

static char *align_up(char *p, size_t a)
{
	return (char *)(((uintptr_t)p + a - 1) & ~(uintptr_t)(a - 1));
}

/* 2 MiB-aligned and advised for huge pages from 2 MiB on; @flags: more
 * mmap flags. */
static void *zalloc_mapped(size_t bytes, int flags)
{
	size_t align = bytes >= BIG_HUGE_PAGE ? BIG_HUGE_PAGE : 64;
	size_t len = sizeof(struct big_header) + bytes + align;
	struct big_header *h;
	char *base, *p;

	if (bytes > SIZE_MAX - sizeof(*h) - align)
		return NULL;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	p = align_up(base + sizeof(*h), align);
	advise_huge(p, bytes);
	h = (struct big_header *)(void *)p - 1;
	h->base = base;
	h->map_len = len;
	lsan_tell(__lsan_register_root_region, base, len);
	return p;
}

void *big_zalloc_mapped(size_t bytes)
{
	return zalloc_mapped(bytes, 0);
}

void *big_zalloc_sparse(size_t bytes)
{
	return zalloc_mapped(bytes, MAP_NORESERVE);
}

void *big_zalloc(size_t bytes)
{
	struct big_header *h;
	char *base, *p;

	if (bytes >= BIG_ALLOC_MMAP_MIN)
		return big_zalloc_mapped(bytes);
	if (bytes > SIZE_MAX - sizeof(*h) - 63)
		return NULL;
	base = calloc(1, sizeof(*h) + bytes + 63);
	if (!base)
		return NULL;
	p = align_up(base + sizeof(*h), 64);
	h = (struct big_header *)(void *)p - 1;
	h->base = base;
	h->map_len = 0;
	return p;
}

bool big_is_mapped(const void *p)
{
	return ((const struct big_header *)p - 1)->map_len != 0;
}

void big_free(void *p)
{
	struct big_header *h;

	if (!p)
		return;
	h = (struct big_header *)p - 1;
	if (h->map_len) {
		lsan_tell(__lsan_unregister_root_region, h->base, h->map_len);
		munmap(h->base, h->map_len);
	} else
		free(h->base);
}

/* Zero [p, end) with atomic stores: p is 8-byte aligned. */
static void clear_atomic(char *p, char *end)
{
	for (; p + 8 <= end; p += 8)
		__atomic_store_n((uint64_t *)(void *)p, 0, __ATOMIC_RELAXED);
	for (; p < end; p++)
		__atomic_store_n(p, 0, __ATOMIC_RELAXED);
}

size_t big_clear(void *p, size_t bytes)
{
	const struct big_header *h = (const struct big_header *)p - 1;
	char *end = (char *)p + bytes, *lo = end, *hi = end; /* all by stores */

	if (h->map_len) {
		lo = align_up(p, BIG_PAGE);
		hi = (char *)((uintptr_t)end & ~(uintptr_t)(BIG_PAGE - 1));
		/* Advised for huge pages, the first store after this (a stash's
		 * header) would bring back 2 MiB: small pages until big_reuse. */
		if (bytes >= BIG_HUGE_PAGE && hi > lo)
			(void)madvise(lo, (size_t)(hi - lo), MADV_NOHUGEPAGE);
		if (hi <= lo || madvise(lo, (size_t)(hi - lo), MADV_DONTNEED))
			lo = hi = end;
	}
	clear_atomic(p, lo);
	clear_atomic(hi, end);
	return (size_t)(lo - (char *)p) + (size_t)(end - hi);
}

void big_reuse(void *p, size_t bytes)
{
	const struct big_header *h = (const struct big_header *)p - 1;

	if (h->map_len)
		advise_huge(p, bytes);
}

void *big_reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	lsan_tell(__lsan_register_root_region, p, bytes);
	/* Where transparent huge pages are "always", a first touch would
	 * commit 2 MiB.  Advice only: failure changes nothing. */
	(void)madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

size_t big_reserve_used(size_t used)
{
	return (used + 4095) & ~(size_t)4095;
}

void big_unreserve(void *p, size_t bytes)
{
	if (p) {
		lsan_tell(__lsan_unregister_root_region, p, bytes);
		munmap(p, bytes);
	}
}
