/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_RHASH, one thread: the merged kernel's creation checks in its
 * order, the update modes, exact -E2BIG, in-place values, growth and
 * shrinking with the memory that follows, get_next_key and the
 * element-granular batches in the map's order, BPFMAP_F_LOCK, and a
 * model-based run of random operations over several key sizes, every
 * return code and byte compared.  The threaded cases are in
 * test_rhash_threads.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "tables/rtab.h"

/* Valgrind runs `test_rhash --small` (tests/CMakeLists.txt): a tenth of
 * the keys and operations, the same cases. */
static uint32_t scale = 1;

/* splitmix64; each case that uses it seeds rnd_state first. */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state += 0x9e3779b97f4a7c15ULL;
	uint64_t z = rnd_state;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct bpfmap *rhash(uint32_t ks, uint32_t vs, uint32_t max, uint64_t extra)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC, .map_extra = extra);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, "rh", ks, vs, max, &o);

	assert_non_null(m);
	return m;
}

static int create_err(uint32_t ks, uint32_t vs, uint32_t max, uint32_t flags, uint64_t extra)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = flags, .map_extra = extra);
	struct bpfmap *m;

	errno = 0;
	m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, ks, vs, max, &o);
	if (m) {
		bpfmap_free(m);
		return 0;
	}
	return -errno;
}

static void test_uapi_value(void **state)
{
	(void)state;
	assert_int_equal(BPFMAP_TYPE_RHASH, 35);
}

/* Each check, and where two fail at once, the earlier one's answer. */
static void test_create_order(void **state)
{
	const uint32_t NP = BPFMAP_F_NO_PREALLOC;

	(void)state;
	assert_int_equal(create_err(8, 8, 16, 0, 0), -EINVAL);                 /* 1 */
	assert_int_equal(create_err(8, 8, 16, BPFMAP_F_ZERO_SEED, 0), -EINVAL);
	assert_int_equal(create_err(8, 8, 16, NP | BPFMAP_F_ZERO_SEED, 0), -EINVAL); /* 2 */
	assert_int_equal(create_err(65536, 8, 16, NP, 0), -E2BIG);             /* 3 */
	assert_int_equal(create_err(65536, 8, 16, NP | BPFMAP_F_ZERO_SEED, 0), -EINVAL);
	assert_int_equal(create_err(8, 8, 16, NP, 1ULL << 32), -EINVAL);       /* 4 */
	assert_int_equal(create_err(65536, 8, 16, NP, 1ULL << 32), -E2BIG);
	assert_int_equal(create_err(8, 8, 1u << 20, NP, 65536), -E2BIG);       /* 5 */
	assert_int_equal(create_err(8, 8, 1u << 20, NP, (1ULL << 32) | 1), -EINVAL);
	assert_int_equal(create_err(8, 8, 16, NP, 17), -EINVAL);               /* 6 */
	assert_int_equal(create_err(8, 8, 16, NP, 16), 0);
	assert_int_equal(create_err(8, 8, 1u << 20, NP, 65535), 0);
	/* 7: the HASH checks. */
	assert_int_equal(create_err(0, 8, 16, NP, 0), -EINVAL);
	assert_int_equal(create_err(8, 0, 16, NP, 0), -EINVAL);
	assert_int_equal(create_err(8, 8, 0, NP, 0), -EINVAL);
	assert_int_equal(create_err(8, 8, 16, NP | BPFMAP_F_NO_COMMON_LRU, 0), -EINVAL);
	assert_int_equal(create_err(8, 8, 16, NP | (1u << 30), 0), -EINVAL);
	assert_int_equal(create_err(8, BPFMAP_MAX_ELEM_BYTES, 16, NP, 0), -E2BIG);
	assert_int_equal(create_err(8, 8, 16, NP | BPFMAP_F_NUMA_NODE, 0), 0);
	/* 8: max_entries is no bucket count: above HASH's 2^27, up to 2^31. */
	assert_int_equal(create_err(8, 8, BPFMAP_HTAB_MAX_ENTRIES + 1, NP, 0), 0);
	assert_int_equal(create_err(8, 8, 1u << 31, NP, 0), 0);
	assert_int_equal(create_err(8, 8, (1u << 31) + 1, NP, 0), -E2BIG);
}

/* map_extra sizes the first table (8 elements a bucket); the smallest
 * table holds 2048, or max_entries when that is less.  bpfmap_get_info()
 * gives the hint back, as the kernel's map info does map_extra. */
static void test_size_hint(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1u << 20, 65535);
	struct bpfmap_info info;

	(void)state;
	assert_int_equal(rtab_table_of(to_rtab(m))->n, 8192);
	memset(&info, 0xaa, sizeof(info));
	assert_int_equal(bpfmap_get_info(m, &info, &(uint32_t){ sizeof(info) }), 0);
	assert_int_equal(info.map_extra, 65535);
	assert_int_equal(info.reserved, 0);
	bpfmap_free(m);
	m = rhash(8, 8, 1u << 20, 0);
	assert_int_equal(rtab_table_of(to_rtab(m))->n, 256);
	assert_int_equal(bpfmap_get_info(m, &info, &(uint32_t){ sizeof(info) }), 0);
	assert_int_equal(info.map_extra, 0);
	bpfmap_free(m);
	m = rhash(8, 8, 100, 0);
	assert_int_equal(rtab_table_of(to_rtab(m))->n, 16);
	bpfmap_free(m);
}

static void test_update_modes(void **state)
{
	struct bpfmap *m = rhash(8, 8, 4, 0);
	uint64_t k, v, out;

	(void)state;
	for (k = 1; k <= 4; k++) {
		v = k * 10;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	k = 5;
	v = 50;
	assert_errno(bpfmap_update_elem(m, &k, &v, BPFMAP_ANY), E2BIG);
	assert_errno(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), E2BIG);
	assert_errno(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), ENOENT);
	/* Replacing a present key of a full map succeeds, in place. */
	k = 2;
	v = 222;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_ANY), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, 222);
	v = 223;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0);
	assert_errno(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), EEXIST);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, 223);
	assert_errno(bpfmap_update_elem(m, &k, &v, 4), EINVAL); /* F_LOCK, no lock */
	assert_errno(bpfmap_update_elem(m, &k, &v, 3), EINVAL);
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	assert_errno(bpfmap_delete_elem(m, &k), ENOENT);
	assert_errno(bpfmap_lookup_elem(m, &k, &out), ENOENT);
	k = 5;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_lookup_and_delete_elem(m, &k, &out), 0);
	assert_int_equal(out, 223);
	assert_errno(bpfmap_lookup_and_delete_elem(m, &k, &out), ENOENT);
	bpfmap_free(m);
}

/* The program view's pointer is the element's: it stays with its key while
 * the table grows and shrinks under it, and sees stores in place. */
static void test_pointer_stays(void **state)
{
	struct bpfmap *m = rhash(4, 8, 1u << 20, 0);
	uint32_t k = 7;
	uint64_t v = 1, out, *p, *q;

	(void)state;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, 0), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, &k);
	bpfmap_read_unlock();
	assert_non_null(p);
	for (uint32_t i = 100; i < 100 + 100000 / scale; i++)
		assert_int_equal(bpfmap_update_elem(m, &i, &v, 0), 0);
	for (uint32_t i = 100; i < 100 + 100000 / scale; i++)
		assert_int_equal(bpfmap_delete_elem(m, &i), 0);
	bpfmap_read_lock();
	q = bpfmap_lookup(m, &k);
	assert_ptr_equal(p, q);
	__atomic_fetch_add(q, 41, __ATOMIC_RELAXED);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, 42);
	v = 5;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0);
	assert_int_equal(*p, 5); /* values change in place */
	bpfmap_free(m);
}

/* Memory follows the elements: a 1M-entry map holding 1K is small, and
 * one grown to 500K and deleted back to 1K is small again once its
 * reclamation ran: the table shrank, and the arenas gave back their chunks
 * left without a live element (the first 1K elements share the first). */
static void test_memory_follows(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1u << 20, 0);
	size_t small, grown, shrunk;
	uint64_t v = 0;

	(void)state;
	for (uint64_t k = 0; k < 1000; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, 0), 0);
	small = bpfmap_mem_usage(m);
	assert_true(small < 256u << 10);
	for (uint64_t k = 1000; k < 500000 / scale; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, 0), 0);
	grown = bpfmap_mem_usage(m);
	assert_true(grown <= 500000ull / scale * 40);
	for (uint64_t k = 1000; k < 500000 / scale; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	/* Deletes drive the shrinks: a few more rounds of churn on the 1K. */
	for (int round = 0; round < 64; round++)
		for (uint64_t k = 0; k < 1000; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0);
	for (uint64_t k = 0; k < 1000; k++) {
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	rtab_reclaim_wait(to_rtab(m));
	shrunk = bpfmap_mem_usage(m);
	assert_true(shrunk < grown);
	assert_true(shrunk < 512u << 10);
	for (uint64_t k = 0; k < 1000; k++)
		assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(walk_count(m, 8), 1000);
	bpfmap_free(m);
}

/* The tables in @r's stash. */
static uint32_t stash_len(struct rtab *r)
{
	uint32_t n = 0;

	for (struct rtab_table *t = r->stash; t; t = t->stash.next)
		n++;
	return n;
}

/*
 * Retired tables stay mapped for the probes that take no read-side section
 * (rtab.h, rtab_bare_find), cleared, and the next resize to their size
 * takes them again: a map that grows and shrinks over and over keeps the
 * tables of its first cycle and no more, and they hold little memory.
 */
static void test_tables_reused(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1u << 20, 0);
	struct rtab *r = to_rtab(m);
	struct rtab_table *first = rtab_table_of(r);
	uint32_t stashed = 0;
	uint64_t v = 0;

	(void)state;
	for (int cycle = 0; cycle < 4; cycle++) {
		for (uint64_t k = 0; k < 40000 / scale; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_ANY), 0);
		rtab_reclaim_wait(r);
		assert_ptr_not_equal(rtab_table_of(r), first);
		for (uint64_t k = 1000; k < 40000 / scale; k++)
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		/* Shrinks move on with operations. */
		for (int round = 0; round < 64; round++)
			for (uint64_t k = 0; k < 1000; k++)
				assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0);
		rtab_reclaim_wait(r);
		assert_ptr_equal(rtab_table_of(r), first); /* the first one, again */
		if (!cycle) {
			stashed = stash_len(r);
			assert_true(stashed >= 1);
		}
		assert_int_equal(stash_len(r), stashed);
		assert_true(bpfmap_mem_usage(m) < 512u << 10);
		assert_int_equal(walk_count(m, 8), 1000);
	}
	/* Cleared: a stashed table's pages went back, a page or two stay. */
	assert_true(r->stash_bytes <= (size_t)stashed * 8192);
	bpfmap_free(m);
}

/* Rss of the mapping that holds @p, in KiB (/proc/self/smaps), or -1. */
static long mapping_rss_kib(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long rss = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char c;

		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &rss) == 1)
			break;
	}
	fclose(f);
	return rss;
}

/*
 * A table of 2 MiB or more is advised for huge pages.  Stashed, it is
 * cleared and its header written again: that store brought back a whole
 * huge page, 2 MiB held for the map's life per table size, which
 * bpfmap_mem_usage() did not count (6 MiB after a growth to 1M and back).
 */
static void test_stash_small_pages(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1u << 20, 0);
	struct rtab *r = to_rtab(m);
	uint64_t v = 0, n = 300000 / scale;
	unsigned int big = 0;
	char mode[64] = "";
	FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	(void)state;
	if (thp) {
		if (!fgets(mode, sizeof(mode), thp))
			mode[0] = 0;
		fclose(thp);
	}
	if (!strstr(mode, "[madvise]") && !strstr(mode, "[always]")) {
		print_message("skipped: transparent huge pages are off here\n");
		bpfmap_free(m);
		skip();
	}
	for (uint64_t k = 0; k < n; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	for (uint64_t k = 1000; k < n; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	for (int round = 0; round < 64; round++) /* shrinks move on with operations */
		for (uint64_t k = 0; k < 1000; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0);
	rtab_reclaim_wait(r);
	for (struct rtab_table *t = r->stash; t; t = t->stash.next) {
		if ((size_t)t->n * sizeof(struct rtab_group) < (2u << 20))
			continue;
		big++;
		assert_in_range(mapping_rss_kib(t), 0, 64);
	}
	if (scale == 1)
		assert_true(big >= 1);
	bpfmap_free(m);
}

/*
 * Churn through the arenas' chunk life cycle: grown, thinned out at random
 * by nine in ten, refilled with new keys, three times, then emptied.  Every
 * value and the walk must stay the model's through chunks given back and
 * taken again; freed slots must be used before never-used ones (the
 * arena's high-water mark stays where the first fill left it); and once
 * empty and reclaimed, the map is small again.
 */
static void test_churn_memory(void **state)
{
	const uint32_t n = 200000 / scale;
	struct bpfmap *m = rhash(8, 16, 1u << 20, 0);
	struct rtab *r = to_rtab(m);
	uint64_t *keys = malloc(n * sizeof(*keys)), next = 1, v[2];
	uint32_t live = 0, fresh = 0;

	(void)state;
	assert_non_null(keys);
	rnd_state = 77;
	for (int cycle = 0; cycle < 4; cycle++) {
		while (live < n) {
			keys[live] = next++;
			v[0] = keys[live] * 3;
			v[1] = ~keys[live];
			assert_int_equal(bpfmap_update_elem(m, &keys[live], v, BPFMAP_NOEXIST), 0);
			live++;
		}
		if (!cycle)
			fresh = r->elems.fresh;
		/* Refills took freed slots and given-back chunks first (the
		 * deleted ones were reclaimed before them, below). */
		assert_true(r->elems.fresh <= fresh + (fresh >> 6));
		for (uint32_t i = 0; i < live; i++) {
			assert_int_equal(bpfmap_lookup_elem(m, &keys[i], v), 0);
			assert_true(v[0] == keys[i] * 3 && v[1] == ~keys[i]);
		}
		assert_int_equal(walk_count(m, 8), live);
		while (live > n / 10) {
			uint32_t j = (uint32_t)(rnd() % live);

			assert_int_equal(bpfmap_delete_elem(m, &keys[j]), 0);
			keys[j] = keys[--live];
		}
		rtab_reclaim_wait(r);
	}
	while (live)
		assert_int_equal(bpfmap_delete_elem(m, &keys[--live]), 0);
	/* Shrinks move on with operations: a few on one key. */
	for (int i = 0; i < 64; i++) {
		assert_int_equal(bpfmap_update_elem(m, &next, v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_delete_elem(m, &next), 0);
	}
	rtab_reclaim_wait(r);
	assert_int_equal(walk_count(m, 8), 0);
	assert_true(bpfmap_mem_usage(m) < 512u << 10);
	free(keys);
	bpfmap_free(m);
}

/*
 * Deleted elements go back to the arena once no reader can hold them, even
 * when deletes stop before a batch of them fills: the flush queued with a
 * batch's first element takes it.  Only the deferred callbacks are waited
 * for here (no explicit flush, which the tests above use): a 48-entry map
 * filled and emptied three times kept every batch, and its memory grew by
 * a page a round.
 */
static void test_idle_batch_goes_back(void **state)
{
	struct bpfmap *m = rhash(8, 72, 48, 0);
	struct rtab *r = to_rtab(m);
	size_t empty = bpfmap_mem_usage(m), emptied = 0;
	char v[72] = { 0 };
	uint32_t fresh = 0;

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (uint64_t k = 0; k < 48; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), 0);
		if (!round)
			fresh = r->elems.fresh;
		/* The round before's elements came back: none fresh. */
		assert_int_equal(r->elems.fresh, fresh);
		for (uint64_t k = 0; k < 48; k++)
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		rcu_wait_deferred();
		/* The first round's pages stay, one of elements and one of
		 * overflow groups (a chunk too few to give back), and nothing
		 * else; later rounds add nothing. */
		if (!round) {
			emptied = bpfmap_mem_usage(m);
			assert_int_equal(emptied, empty + rtab_arenas_mem(r));
			assert_true(rtab_arenas_mem(r) <= 2 * 4096);
		}
		assert_int_equal(bpfmap_mem_usage(m), emptied);
	}
	bpfmap_free(m);
}

/*
 * bpfmap_mem_usage counts every element's bytes: a fresh map counts no
 * element page, so that whatever fills it shows at least its elements
 * more.  A fresh map once counted the arena's first page before any slot
 * was used, and 48 elements of 88 bytes then added 4096 bytes for 4224
 * (a stress run's bound caught it when few slots had been used).
 */
static void test_memory_counts_elements(void **state)
{
	static const uint32_t sizes[][2] = { { 8, 80 }, { 8, 8 }, { 4, 4 }, { 64, 200 } };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t ks = sizes[i][0], vs = sizes[i][1];
		size_t stride = ((ks + 7) & ~7u) + ((vs + 7) & ~7u);
		struct bpfmap *m = rhash(ks, vs, 4096, 0);
		size_t empty = bpfmap_mem_usage(m);
		uint8_t key[64] = { 0 }, val[200] = { 0 };

		for (uint32_t n = 1; n <= 4096; n++) {
			memcpy(key, &n, sizeof(n));
			assert_int_equal(bpfmap_update_elem(m, key, val, BPFMAP_NOEXIST), 0);
			if (bpfmap_mem_usage(m) < empty + n * stride)
				fail_msg("%u+%u: %u elements, mem_usage %zu, empty %zu", ks, vs, n,
					 bpfmap_mem_usage(m), empty);
		}
		bpfmap_free(m);
	}
}

static void test_get_next_key(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1000, 0);
	uint64_t k, next, first, prev;
	uint8_t seen[1000] = { 0 };
	uint32_t n = 0;

	(void)state;
	assert_errno(bpfmap_get_next_key(m, NULL, &next), ENOENT);
	k = 3;
	assert_errno(bpfmap_get_next_key(m, &k, &next), ENOENT);
	for (k = 0; k < 1000; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &k, 0), 0);
	assert_int_equal(bpfmap_get_next_key(m, NULL, &first), 0);
	prev = first;
	seen[first] = 1;
	n = 1;
	while (bpfmap_get_next_key(m, &prev, &next) == 0) {
		assert_true(next < 1000);
		assert_int_equal(seen[next], 0);
		seen[next] = 1;
		n++;
		/* Delete the cursor's key before going on: the walk resumes
		 * from its place, neither from the first key nor skipping. */
		if (n % 3 == 0)
			assert_int_equal(bpfmap_delete_elem(m, &prev), 0);
		prev = next;
	}
	assert_int_equal(errno, ENOENT);
	assert_int_equal(n, 1000);
	/* Same buffer in and out, as callers often pass it. */
	k = first;
	assert_int_equal(bpfmap_get_next_key(m, NULL, &k), 0);
	assert_int_equal(k, first);
	bpfmap_free(m);
}

/* The read-only walk below waited for the reader, which waits for it. */
static void *walk_watchdog(void *arg)
{
	(void)arg;
	sleep(20);
	fprintf(stderr, "a read-only walk waited for a grace period\n");
	_exit(1);
}

/*
 * Read-only walks wait for no grace period.  Deletes inside a read-side
 * section leave retired elements that a delete outside one would take back
 * (one grace period); get_next_key and lookup_batch steps took them back
 * too, and beside a churn inside sections walks nearly stopped (an
 * adversarial probe).  Here a reader holds its section until the walk is
 * done: a walk that waited would never end.
 */
static void test_walk_waits_for_nothing(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1000, 0);
	uint64_t k, next, keys[8], vals[8], cursor;
	uint32_t n = 0, count;
	pthread_t dog;

	(void)state;
	for (k = 0; k < 1000; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &k, 0), 0);
	bpfmap_read_lock();
	for (k = 0; k < 990; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	bpfmap_read_unlock();
	assert_true(rtab_settle_due(to_rtab(m)));
	test_section_hold();
	assert_int_equal(pthread_create(&dog, NULL, walk_watchdog, NULL), 0);
	for (int rc = bpfmap_get_next_key(m, NULL, &next); !rc;
	     rc = bpfmap_get_next_key(m, &k, &next)) {
		k = next;
		n++;
	}
	assert_int_equal(n, 10);
	count = 8;
	assert_int_equal(bpfmap_lookup_batch(m, NULL, &cursor, keys, vals, &count, NULL), 0);
	assert_int_equal(count, 8);
	assert_int_equal(pthread_cancel(dog), 0);
	assert_int_equal(pthread_join(dog, NULL), 0);
	test_section_release();
	bpfmap_free(m);
}

static void test_batches(void **state)
{
	struct bpfmap *m = rhash(4, 4, 512, 0);
	uint32_t keys[512], vals[512], cursor, count, total = 0;
	uint8_t seen[512] = { 0 };
	int ret;

	(void)state;
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, NULL, &cursor, keys, vals, &count, NULL), ENOENT);
	assert_int_equal(count, 0);
	for (uint32_t k = 0; k < 300; k++) {
		uint32_t v = k * 3;

		assert_int_equal(bpfmap_update_elem(m, &k, &v, 0), 0);
	}
	/* One element at a time makes progress: no -ENOSPC. */
	count = 1;
	ret = bpfmap_lookup_batch(m, NULL, &cursor, keys, vals, &count, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(count, 1);
	assert_int_equal(vals[0], keys[0] * 3);
	seen[keys[0]] = 1;
	total = 1;
	for (;;) {
		uint32_t in = cursor;

		count = 7;
		ret = bpfmap_lookup_batch(m, &in, &cursor, keys, vals, &count, NULL);
		for (uint32_t i = 0; i < count; i++) {
			assert_int_equal(seen[keys[i]], 0);
			seen[keys[i]] = 1;
			assert_int_equal(vals[i], keys[i] * 3);
		}
		total += count;
		/* The cursor's key deleted between calls: not lost. */
		if (count)
			assert_int_equal(bpfmap_delete_elem(m, &keys[count - 1]), 0);
		if (ret) {
			assert_int_equal(ret, -ENOENT);
			break;
		}
	}
	assert_int_equal(total, 300);
	/* lookup_and_delete_batch empties the map, in any chunk size. */
	total = 0;
	ret = 0;
	for (uint32_t *in = NULL; ret == 0; in = &cursor) {
		count = 5;
		ret = bpfmap_lookup_and_delete_batch(m, in, &cursor, keys, vals, &count, NULL);
		total += count;
	}
	assert_int_equal(ret, -ENOENT);
	assert_int_equal(walk_count(m, 4), 0);
	assert_true(total > 0);
	bpfmap_free(m);
}

struct lval {
	uint32_t a;
	struct bpfmap_spin_lock lock;
	uint64_t b;
};

static void test_spin_lock_value(void **state)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC,
			   .lock_off = offsetof(struct lval, lock));
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 4, sizeof(struct lval), 8, &o);
	struct lval v = { 1, { 0x1234 }, 2 }, out;
	uint32_t k = 1, cursor, keys[2];
	struct lval vals[2];
	uint32_t count = 2;

	(void)state;
	assert_non_null(m);
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_F_LOCK), 0);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(bpfmap_lookup_elem_flags(m, &k, &out, BPFMAP_F_LOCK), 0);
	assert_int_equal(out.a, 1);
	assert_int_equal(out.lock.val, 0);
	assert_int_equal(out.b, 2);
	v.a = 3;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_F_LOCK | BPFMAP_EXIST), 0);
	assert_errno(bpfmap_update_elem(m, &k, &v, BPFMAP_F_LOCK | BPFMAP_NOEXIST), EEXIST);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out.a, 3);
	assert_int_equal(out.lock.val, 0);
	BPFMAP_BATCH_OPTS(bo, .elem_flags = BPFMAP_F_LOCK);
	assert_errno(bpfmap_lookup_batch(m, NULL, &cursor, keys, vals, &count, &bo), ENOENT);
	assert_int_equal(count, 1);
	assert_int_equal(vals[0].a, 3);
	assert_int_equal(vals[0].lock.val, 0);
	bpfmap_free(m);
}

/* Overflow groups of bucket @b's chain, and whether every one but the
 * last is full (the first group counts as one). */
static uint32_t chain_groups(struct rtab *r, struct rtab_table *t, uint32_t b, bool *packed)
{
	struct rtab_group *g = &t->groups[b];
	uint32_t n = 0;

	*packed = true;
	for (;;) {
		uint32_t used = 0;

		for (int i = 0; i < RTAB_SLOTS; i++)
			used += g->link[i] != RTAB_NONE;
		if (g->next == RTAB_NONE)
			return n;
		*packed = *packed && used == RTAB_SLOTS;
		g = rtab_ogroup(r, g->next);
		n++;
	}
}

/* A key of the map's @t that lands in bucket @b, from *@next on. */
static uint64_t key_in_bucket(struct rtab *r, struct rtab_table *t, uint32_t b, uint64_t *next)
{
	uint64_t k;

	do
		k = (*next)++;
	while (rtab_bucket(t, rtab_hash(r, &k, 8, HASH_U64)) != b);
	return k;
}

/*
 * Deletes keep chains packed: every group but a chain's last stays full.
 * Chains that kept an overflow group for one key each used to run the
 * overflow arena (a group for three elements) dry in a map a third full,
 * and an insert then waited for ever for a grace period to give a group
 * back.  A map of 9216 elements grows to 1024 buckets at most; each
 * bucket in turn gets five overflow groups' worth of keys (which an
 * attacker cannot aim without the map's hash key), then keeps one key of
 * each overflow group, the keys of its first group deleted: five keys,
 * which packed take no overflow group, where the old chains kept five, and
 * the arena (4864 groups) ran dry near the 970th bucket.
 */
static void test_chains_stay_packed(void **state)
{
	struct bpfmap *m = rhash(8, 8, 9216, 0);
	struct rtab *r = to_rtab(m);
	uint64_t k = 1, next = 1ull << 40, v = 1;
	uint32_t buckets = 1024 / scale;
	struct rtab_table *t;

	(void)state;
	while (rtab_table_of(r)->n < 1024 || rtab_table_of(r)->next)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0), k++;
	t = rtab_table_of(r);
	assert_int_equal(r->max_bits, 10);
	for (uint32_t b = 0; b < buckets; b++) {
		struct rtab_group *g = &t->groups[b];
		uint64_t del[6 * RTAB_SLOTS];
		uint32_t n = 0, kept = 0;
		bool packed;

		while (chain_groups(r, t, b, &packed) < 5 || !packed) {
			k = key_in_bucket(r, t, b, &next);
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		}
		for (bool first = true; g; first = false) {
			for (int i = 0, keep = !first; i < RTAB_SLOTS; i++) {
				if (g->link[i] == RTAB_NONE)
					continue;
				if (keep)
					kept++, keep = 0;
				else
					memcpy(&del[n++], rtab_elem(r, g->link[i]), 8);
			}
			g = g->next == RTAB_NONE ? NULL : rtab_ogroup(r, g->next);
		}
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(bpfmap_delete_elem(m, &del[i]), 0);
		assert_ptr_equal(rtab_table_of(r), t);
		assert_int_equal(kept, 5);
		assert_int_equal(chain_groups(r, t, b, &packed), 0);
	}
	assert_int_equal(bpfmap_update_elem(m, &next, &v, BPFMAP_NOEXIST), 0);
	bpfmap_free(m);
}

/* A key from *@next on whose hash puts it in bucket 0 of @t and of the
 * table twice @t's size. */
static uint64_t key_in_low_half(struct rtab *r, struct rtab_table *t, uint64_t *next)
{
	uint64_t k;

	do
		k = (*next)++;
	while (rtab_hash(r, &k, 8, HASH_U64) >> (t->shift - 1));
	return k;
}

/*
 * A resize whose run finds the overflow arena dry gives the run back with
 * nothing changed, and a later insert moves it.  Bucket 0 holds 22 keys
 * that all go to the new table's bucket 0, which needs overflow groups for
 * them: with the arena dry (its cap lowered to what it has handed out, and
 * its free groups taken), the move fails after filling that bucket's first
 * group, and must empty it again (rtab_unbuild).  Else the move that
 * succeeds later adds those seven keys a second time.
 */
static void test_resize_groups_dry(void **state)
{
	struct bpfmap *m = rhash(8, 8, 9216, 0);
	struct rtab *r = to_rtab(m);
	uint64_t k, next = 1ull << 40, v, *keys = malloc(sizeof(*keys) * 9216);
	uint32_t n = 0, held = 0, cap, *taken = malloc(sizeof(*taken) * 8192);
	struct rtab_table *t = rtab_table_of(r), *nt;
	bool packed;

	(void)state;
	assert_true(keys && taken);
	assert_true(t->n * RTAB_GROW_LOAD < 4096); /* the smallest table */
	while (chain_groups(r, t, 0, &packed) < 3) {
		k = key_in_low_half(r, t, &next);
		assert_int_equal(bpfmap_update_elem(m, &k, &k, BPFMAP_NOEXIST), 0);
		keys[n++] = k;
	}
	/* Up to the grow threshold with keys of other buckets. */
	for (k = 1ull << 50; n < t->n * RTAB_GROW_LOAD; k++) {
		if (rtab_bucket(t, rtab_hash(r, &k, 8, HASH_U64)) == 0)
			continue;
		assert_int_equal(bpfmap_update_elem(m, &k, &k, BPFMAP_NOEXIST), 0);
		keys[n++] = k;
	}
	assert_ptr_equal(rtab_table_of(r), t);
	assert_null(t->next);
	cap = r->groups.cap;
	r->groups.cap = r->groups.fresh - 1;
	while ((taken[held] = rtab_ogroup_alloc(r)) != RTAB_NONE)
		assert_true(++held < 8192);
	/* Into bucket 0's last group, which has room: the grow starts, and
	 * its first run cannot move. */
	k = key_in_low_half(r, t, &next);
	assert_int_equal(bpfmap_update_elem(m, &k, &k, BPFMAP_NOEXIST), 0);
	keys[n++] = k;
	nt = t->next;
	assert_non_null(nt);
	assert_ptr_equal(rtab_table_of(r), t);
	assert_int_equal(t->runs[0], RTAB_RUN_IDLE);
	for (uint32_t b = 0; b < 2 * RTAB_RUN; b++) {
		assert_int_equal(nt->groups[b].next, RTAB_NONE);
		for (int i = 0; i < RTAB_SLOTS; i++)
			assert_int_equal(nt->groups[b].link[i], RTAB_NONE);
	}
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, keys[i]);
	}
	r->groups.cap = cap;
	while (held)
		rtab_ogroup_free(r, taken[--held]);
	for (k = 1ull << 52; rtab_table_of(r) == t; k++) {
		assert_true(n < 9216);
		assert_int_equal(bpfmap_update_elem(m, &k, &k, BPFMAP_NOEXIST), 0);
		keys[n++] = k;
	}
	assert_int_equal(walk_count(m, 8), n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, keys[i]);
	}
	free(taken);
	free(keys);
	bpfmap_free(m);
}

/* Deleted elements wait for a grace period before reuse.  Inside a
 * read-side section none can end, so churn exhausts the arena's spare room
 * and an insert answers -ENOMEM (nothing else changes); outside one, an
 * insert that finds the arena exhausted waits for reclamation and succeeds. */
static void test_arena_exhausted(void **state)
{
	struct bpfmap *m = rhash(8, 8, 16, 0);
	uint64_t v = 7, k, n = 0, out;
	int ret = 0;

	(void)state;
	bpfmap_read_lock();
	for (k = 0; k < 100000 && ret == 0; k++) {
		ret = bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST);
		if (ret == 0) {
			n++;
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		}
	}
	bpfmap_read_unlock();
	assert_int_equal(ret, -ENOMEM);
	assert_int_equal(errno, ENOMEM);
	/* 16 + a spare of 1024, less the one in flight. */
	assert_true(n >= 1000 && n <= 16 + 1024);
	assert_int_equal(walk_count(m, 8), 0);
	/* Outside a section the same churn always succeeds. */
	for (k = 0; k < 5000; k++) {
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	}
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, 7);
	bpfmap_free(m);
}

/* A model: a universe of keys, each present or not with its value bytes. */
#define MODEL_KEYS 600

struct model {
	uint32_t ks, vs, max, n;
	uint8_t *keys, *vals, *present;
};

static void model_run(uint32_t ks, uint32_t vs, uint32_t max, uint64_t extra, uint64_t seed,
		      uint32_t ops)
{
	struct bpfmap *m = rhash(ks, vs, max, extra);
	struct model md = { ks, vs, max, 0, calloc(MODEL_KEYS, ks), calloc(MODEL_KEYS, vs),
			    calloc(MODEL_KEYS, 1) };
	uint8_t *val = malloc(vs), *out = malloc(vs), *nk = malloc(ks);
	uint8_t *bkeys = malloc((size_t)ks * MODEL_KEYS), *bvals = malloc((size_t)vs * MODEL_KEYS);
	uint8_t *cursor = malloc(ks);
	uint32_t universe = ks == 1 ? 256 : MODEL_KEYS;

	rnd_state = seed;
	for (uint32_t i = 0; i < MODEL_KEYS; i++) {
		/* Keys that differ in a few bytes only, and some all-zero. */
		memset(md.keys + (size_t)i * ks, 0, ks);
		for (uint32_t b = 0; b < ks && b < 4; b++)
			md.keys[(size_t)i * ks + (ks - 1 - b)] = (uint8_t)(i >> (8 * b));
	}
	for (uint32_t op = 0; op < ops; op++) {
		uint32_t i = (uint32_t)(rnd() % universe);
		const uint8_t *key = md.keys + (size_t)i * ks;
		uint8_t *mv = md.vals + (size_t)i * vs;
		uint32_t what = (uint32_t)(rnd() % 100);
		int ret, want;

		for (uint32_t b = 0; b < vs; b++)
			val[b] = (uint8_t)rnd();
		if (what < 45) {
			uint64_t mode = rnd() % 3;

			if (mode == BPFMAP_NOEXIST && md.present[i])
				want = -EEXIST;
			else if (mode == BPFMAP_EXIST && !md.present[i])
				want = -ENOENT;
			else if (!md.present[i] && md.n == max)
				want = -E2BIG;
			else
				want = 0;
			ret = bpfmap_update_elem(m, key, val, mode);
			assert_int_equal(ret, want);
			if (!want) {
				md.n += !md.present[i];
				md.present[i] = 1;
				memcpy(mv, val, vs);
			}
		} else if (what < 70) {
			ret = bpfmap_delete_elem(m, key);
			assert_int_equal(ret, md.present[i] ? 0 : -ENOENT);
			md.n -= md.present[i];
			md.present[i] = 0;
		} else if (what < 80) {
			ret = bpfmap_lookup_and_delete_elem(m, key, out);
			assert_int_equal(ret, md.present[i] ? 0 : -ENOENT);
			if (md.present[i])
				assert_memory_equal(out, mv, vs);
			md.n -= md.present[i];
			md.present[i] = 0;
		} else if (what < 97) {
			ret = bpfmap_lookup_elem(m, key, out);
			assert_int_equal(ret, md.present[i] ? 0 : -ENOENT);
			if (!ret)
				assert_memory_equal(out, mv, vs);
			bpfmap_read_lock();
			uint8_t *p = bpfmap_lookup(m, key);
			assert_int_equal(p != NULL, md.present[i]);
			if (p)
				assert_memory_equal(p, mv, vs);
			bpfmap_read_unlock();
		} else {
			/* A whole walk, by batches of a random size, then by
			 * get_next_key: each present key once, values equal. */
			uint32_t total = 0, count, chunk = 1 + (uint32_t)(rnd() % 9);
			uint8_t *seen = calloc(MODEL_KEYS, 1);
			const uint8_t *in = NULL;

			do {
				count = chunk;
				ret = bpfmap_lookup_batch(m, (void *)in, cursor, bkeys, bvals, &count,
							  NULL);
				assert_true(ret == 0 || ret == -ENOENT);
				for (uint32_t j = 0; j < count; j++) {
					uint32_t idx = 0;

					for (uint32_t b = 0; b < ks && b < 4; b++)
						idx |= (uint32_t)bkeys[(size_t)j * ks + (ks - 1 - b)]
						       << (8 * b);
					assert_true(idx < universe);
					assert_memory_equal(bkeys + (size_t)j * ks,
							    md.keys + (size_t)idx * ks, ks);
					assert_true(md.present[idx]);
					assert_false(seen[idx]);
					seen[idx] = 1;
					assert_memory_equal(bvals + (size_t)j * vs,
							    md.vals + (size_t)idx * vs, vs);
				}
				total += count;
				in = cursor;
			} while (ret == 0);
			assert_int_equal(total, md.n);
			assert_int_equal(walk_count(m, ks), md.n);
			free(seen);
		}
	}
	assert_int_equal(walk_count(m, ks), md.n);
	free(cursor);
	free(bkeys);
	free(bvals);
	free(nk);
	free(out);
	free(val);
	free(md.keys);
	free(md.vals);
	free(md.present);
	bpfmap_free(m);
}

static void test_model(void **state)
{
	static const uint32_t sizes[][2] = { { 4, 4 }, { 8, 8 }, { 12, 20 }, { 16, 8 },
					     { 64, 3 }, { 300, 16 }, { 1, 1 } };

	(void)state;
	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t ks = sizes[s][0], vs = sizes[s][1];

		/* A cap the run hits (E2BIG), and one it never reaches; a
		 * hint, and none. */
		model_run(ks, vs, ks == 1 ? 256 : 200, 0, 1000 + s, 20000 / scale);
		model_run(ks, vs, 4096, s % 2 ? 64 : 0, 2000 + s, 20000 / scale);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--small"))
		scale = 10;
	const struct CMUnitTest tests[] = {
		test_entry(test_uapi_value),   test_entry(test_create_order),
		test_entry(test_size_hint),
		test_entry(test_update_modes), test_entry(test_pointer_stays),
		test_entry(test_memory_follows), test_entry(test_churn_memory),
		test_entry(test_idle_batch_goes_back), test_entry(test_memory_counts_elements),
		test_entry(test_tables_reused),
		test_entry(test_stash_small_pages),
		test_entry(test_get_next_key), test_entry(test_walk_waits_for_nothing),
		test_entry(test_batches),      test_entry(test_spin_lock_value),
		test_entry(test_arena_exhausted), test_entry(test_chains_stay_packed),
		test_entry(test_resize_groups_dry),
		test_entry(test_model),
	};

	return run_test_group(tests);
}
