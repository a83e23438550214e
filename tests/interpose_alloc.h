/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * For tests that interpose the allocator to see every call to it, glibc's
 * and liburcu's included (a --wrap sees only bpfmap's own): glibc's entry
 * points to forward to.  The sanitizers interpose the allocator
 * themselves, so such a test's main skips under them
 * (INTERPOSE_ALLOC_SKIP).
 */
#ifndef BPFMAP_TESTS_INTERPOSE_ALLOC_H
#define BPFMAP_TESTS_INTERPOSE_ALLOC_H

#include <stddef.h>
#include <stdio.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INTERPOSE_ALLOC_SKIP 1
#else
#define INTERPOSE_ALLOC_SKIP 0
#endif

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

/* The main of a test that cannot interpose here. */
static inline int interpose_alloc_skipped(void)
{
	printf("skipped: the sanitizer interposes the allocator this test interposes\n");
	return 77;
}

#endif
