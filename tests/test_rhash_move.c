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

#include "test_gate.h"
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

/*
 * Inserts inside read-side sections cannot wait for a grace period, but
 * they can wait for another thread to finish giving a chunk's pages back
 * (a system call).  They answered -ENOMEM instead: with a chunk going, its
 * free slots are no room, and when those are more than the arena's spare
 * beyond max_entries, the map ran dry far from full, with nothing retired
 * (an adversarial helper: 6144 keys of 8192 in the map, one chunk of 4096
 * held in its giving window).  Here the map is emptied, chunk 0 kept and
 * chunk 1 stopped while it goes; an inserter in sections fills the map:
 * past the room it waits for the chunk, and then has all 8192.
 */
struct giving_stop {
	const void *chunk;
	int stopped, go; /* test_gate.h flags */
};

static struct giving_stop giving;

static void giving_hook(enum test_hook_point point, const void *obj)
{
	if (point != HOOK_ARENA_GIVING || obj != giving.chunk)
		return;
	set_flag(&giving.stopped);
	(void)wait_flag(&giving.go);
}

static void *reclaim_thread(void *arg)
{
	rtab_reclaim_now(arg);
	return NULL;
}

struct section_filler {
	struct bpfmap *m;
	uint32_t n;
	uint32_t done; /* atomic: inserts that succeeded */
	int ret;       /* the first failure */
	int finished;  /* test_gate.h flag */
};

static void *fill_in_sections(void *arg)
{
	struct section_filler *f = arg;

	for (uint64_t k = 1u << 20; __atomic_load_n(&f->done, __ATOMIC_RELAXED) < f->n; k++) {
		uint64_t v = k;
		int ret;

		bpfmap_read_lock();
		ret = bpfmap_update(f->m, &k, &v, BPFMAP_NOEXIST);
		bpfmap_read_unlock();
		if (ret) {
			f->ret = ret;
			break;
		}
		__atomic_fetch_add(&f->done, 1, __ATOMIC_RELEASE);
	}
	set_flag(&f->finished);
	return NULL;
}

static uint32_t elem_slot(struct bpfmap *m, uint64_t k)
{
	struct rtab *r = to_rtab(m);
	char *v;

	bpfmap_read_lock();
	v = bpfmap_lookup(m, &k);
	bpfmap_read_unlock();
	assert_non_null(v);
	return rtab_index_of(r, v - r->value_off);
}

static void test_section_inserts_wait_for_giving(void **state)
{
	const uint32_t n = 8192;
	struct bpfmap *m = must_create(BPFMAP_TYPE_RHASH, 8, 8, n, BPFMAP_F_NO_PREALLOC);
	struct rtab *r = to_rtab(m);
	struct section_filler f = { .m = m, .n = n };
	uint32_t per = 1u << r->elems.chunk_shift, room;
	uint64_t *key_at, v = 0;
	pthread_t rt, ft;

	(void)state;
	assert_true(r->elems.cap - n < per); /* the spare is less than a chunk */
	key_at = calloc(r->elems.cap + 1, sizeof(*key_at));
	assert_non_null(key_at);
	for (uint64_t k = 1; k <= n; k++) {
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		key_at[elem_slot(m, k)] = k;
	}
	/* Chunk 0 and one element past chunk 1, back: chunk 0 is kept
	 * (nothing else was free).  Then chunk 1's, whose last free gives it
	 * back: stopped there, with every key gone. */
	for (uint32_t i = 1; i < per; i++)
		assert_int_equal(bpfmap_delete_elem(m, &key_at[i]), 0);
	assert_int_equal(bpfmap_delete_elem(m, &key_at[2 * per]), 0);
	rtab_reclaim_wait(r);
	for (uint32_t i = per; i < 2 * per; i++)
		assert_int_equal(bpfmap_delete_elem(m, &key_at[i]), 0);
	giving.chunk = r->arena + (size_t)per * r->stride;
	__atomic_store_n(&bpfmap_test_hook, giving_hook, __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&rt, NULL, reclaim_thread, r), 0);
	assert_true(wait_flag(&giving.stopped));
	room = slot_arena_room(&r->elems);
	assert_true(room < n);
	assert_int_equal(pthread_create(&ft, NULL, fill_in_sections, &f), 0);
	while (__atomic_load_n(&f.done, __ATOMIC_ACQUIRE) < room &&
	       !__atomic_load_n(&f.finished, __ATOMIC_ACQUIRE))
		sched_yield();
	usleep(20000);
	/* Past the room, waiting for the chunk rather than failing. */
	assert_int_equal(__atomic_load_n(&f.finished, __ATOMIC_ACQUIRE), 0);
	set_flag(&giving.go);
	pthread_join(rt, NULL);
	pthread_join(ft, NULL);
	__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_RELEASE);
	assert_int_equal(f.ret, 0);
	assert_int_equal(f.done, n);
	free(key_at);
	bpfmap_free(m);
	rcu_wait_deferred();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_move_window_quiet),
		test_entry(test_view_miss_checked_in_section),
		test_entry(test_section_inserts_wait_for_giving),
	};

	return run_test_group(tests);
}
