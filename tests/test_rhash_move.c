/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RHASH's resize moves runs of eight buckets, each run under its buckets'
 * locks, and a reader of one of them waits for the move (a miss or a
 * copy-out counts only over an even lock word).  So nothing slow may run
 * in that window: no page fault of the new table (a fresh table's first
 * store to a huge page clears 2 MiB) or of a fresh overflow group, no
 * populate call, no pages given back.  A probe that stalled a move there
 * kept a lookup waiting for the whole stall.  Links the hooked library:
 * the hooks bracket each run's locked window.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdbool.h>
#include <sys/resource.h>

#include "test_util.h"
#include "tables/rtab.h"

static unsigned int runs, runs_faulting, gives_locked;
static long faults_at_lock, faults_locked;
static __thread bool locked; /* this thread holds a run (reclamation runs elsewhere) */

static long thread_faults(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_minflt + ru.ru_majflt;
}

static void window_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	switch (point) {
	case HOOK_RTAB_RUN_LOCKED:
		locked = true;
		faults_at_lock = thread_faults();
		break;
	case HOOK_RTAB_RUN_UNLOCKING: {
		long f = thread_faults() - faults_at_lock;

		locked = false;
		runs++;
		runs_faulting += f > 0;
		faults_locked += f;
		break;
	}
	case HOOK_ARENA_GIVING:
		if (locked) /* a store from the reclaiming thread too would race */
			gives_locked++;
		break;
	default:
		break;
	}
}

/*
 * One thread grows a map of 8 + 8 from empty to 400K elements (its inserts
 * move the runs), deletes all but 1K (shrinks, which free overflow groups
 * and give chunks of them back), and grows it again: no run's locked
 * window faults a page in or gives one back.  Before the move took its
 * overflow groups and touched its new buckets ahead, and freed the old
 * groups after unlocking, 1515 of 32640 runs faulted there (3030 faults),
 * and 54 gave chunks back.
 */
static void test_move_window_quiet(void **state)
{
	struct bpfmap *m;
	uint64_t v = 1, n = 400000;

	(void)state;
	/* Its shadow pages fault on an address's first access, which are the
	 * faults counted. */
	skip_under_tsan("its shadow memory faults in the window measured");
	m = must_create(BPFMAP_TYPE_RHASH, 8, 8, 1u << 20, BPFMAP_F_NO_PREALLOC);
	__atomic_store_n(&bpfmap_test_hook, window_hook, __ATOMIC_RELEASE);
	for (uint64_t k = 0; k < n; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	for (uint64_t k = 1000; k < n; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	for (uint64_t k = 1000; k < n; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_RELEASE);
	print_message("  %u runs moved, %u faulting in their locked window (%ld faults), "
		      "%u chunks given back there\n", runs, runs_faulting, faults_locked,
		      gives_locked);
	assert_true(runs > 1000);
	assert_int_equal(runs_faulting, 0);
	assert_int_equal(gives_locked, 0);
	bpfmap_free(m);
	rcu_wait_deferred();
}

static unsigned int steps, steps_bare;

static void step_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (point != HOOK_RTAB_STEP)
		return;
	steps++;
	steps_bare += rcu_may_wait(); /* outside any read-side section */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The program view's lookup may be called outside a read-side section
 * (bpfmap.h).  Its first scan reads only what stays readable when a table
 * is retired and cleared; the scan that checks a miss reads the table's
 * header, which a cleared table no longer has (bucket count 0, no next):
 * a lookup that did so outside a section, while a resize retired its
 * table, indexed gigabytes past it and crashed.  A key that misses after
 * matching the 32-bit hash of a present key steps in both scans: the
 * first may be bare, the second must be in a section.
 */
static void test_view_miss_checked_in_section(void **state)
{
	enum { N = 200000 };
	uint64_t *hk = malloc(N * sizeof(*hk)), p = 0, k = 0;
	struct bpfmap *m;

	(void)state;
	assert_non_null(hk);
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	m = bpfmap_create(BPFMAP_TYPE_RHASH, "view", 8, 8, 1024, &o);
	assert_non_null(m);
	/* Two keys of one 32-bit hash: (hash << 32 | key) sorted. */
	for (uint64_t i = 0; i < N; i++)
		hk[i] = (uint64_t)rtab_hash(to_rtab(m), &i, 8, HASH_U64) << 32 | i;
	qsort(hk, N, sizeof(*hk), cmp_u64);
	for (uint64_t i = 1; i < N && p == k; i++)
		if (hk[i] >> 32 == hk[i - 1] >> 32) {
			p = (uint32_t)hk[i - 1];
			k = (uint32_t)hk[i];
		}
	free(hk);
	assert_true(p != k); /* 200K keys over 2^32 hashes: about 4.6 pairs */
	assert_int_equal(bpfmap_update_elem(m, &p, &p, BPFMAP_NOEXIST), 0);

	__atomic_store_n(&bpfmap_test_hook, step_hook, __ATOMIC_SEQ_CST);
	assert_null(bpfmap_lookup(m, &k)); /* no bpfmap_read_lock() */
	assert_int_equal(errno, ENOENT);
	__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_SEQ_CST);
	assert_int_equal(steps, 2);
	assert_int_equal(steps_bare, 1);
	bpfmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_move_window_quiet),
		test_entry(test_view_miss_checked_in_section),
	};

	return run_test_group(tests);
}
