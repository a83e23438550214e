/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Allocation failing in the whole process, liburcu's allocations included
 * (test_oom fails bpfmap's own only).  An insert into a full chained LRU
 * map outside any section, with malloc failing, waits for its evicted
 * elements' grace period instead of borrowing (docs/MAPS.md); that wait
 * was liburcu's rcu_barrier, which callocs and aborts the process when it
 * cannot (an adversarial probe: "Unrecoverable error", SIGABRT, on the
 * first such insert).  Now 20000 evicting inserts with every allocation
 * failing all succeed, and the map keeps its size (per-CPU lists: at
 * least the share of the CPU the thread ran on last).
 *
 * glibc's and liburcu's calls to the allocator are seen only by
 * interposing it, so this test defines malloc and friends itself; the
 * sanitizers, which interpose them too, skip it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpfmap.h>

#include "interpose_alloc.h"

#if INTERPOSE_ALLOC_SKIP
int main(void)
{
	return interpose_alloc_skipped();
}
#else

static volatile int failing;

void *malloc(size_t n)
{
	return failing ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return failing ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return failing ? NULL : __libc_realloc(p, n);
}

static int run(enum bpfmap_type type, uint32_t flags)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = flags);
	struct bpfmap *m = bpfmap_create(type, "oom", 8, 8, 8, &o);
	uint64_t v[256] = { 0 }, k, next;
	int bad = 0, n = 0;

	if (!m || bpfmap_num_possible_cpus() > 256)
		return 1;
	for (k = 0; k < 8; k++)
		if (bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST))
			return 1;
	failing = 1;
	for (k = 100; k < 20100; k++) {
		int r = bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST);

		if (r && bad++ < 3) {
			failing = 0;
			printf("  insert %llu: %d\n", (unsigned long long)k, r);
			failing = 1;
		}
	}
	failing = 0;
	for (int r = bpfmap_get_next_key(m, NULL, &next); !r;
	     k = next, r = bpfmap_get_next_key(m, &k, &next))
		n++;
	printf("type %d, flags %#x: 20000 evicting inserts with allocation failing, %d failed; "
	       "%d keys\n", type, flags, bad, n);
	bpfmap_free(m);
	/* Per-CPU lists: a thread on one CPU keeps that CPU's share only. */
	return bad || (flags ? n < 8 / bpfmap_num_possible_cpus() || n > 8 : n != 8);
}

int main(void)
{
	int failed = run(BPFMAP_TYPE_LRU_HASH, BPFMAP_F_NO_COMMON_LRU);

	failed |= run(BPFMAP_TYPE_LRU_PERCPU_HASH, BPFMAP_F_NO_COMMON_LRU);
	failed |= run(BPFMAP_TYPE_LRU_HASH, 0);
	printf("%s\n", failed ? "FAILED" : "passed");
	return failed;
}
#endif
