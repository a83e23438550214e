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

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_move_window_quiet),
	};

	return run_test_group(tests);
}
