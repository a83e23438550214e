/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfmap_free of a chained-table map (maps/htab.c) with reclamation
 * callbacks queued or running: free does not wait for them, and the last of
 * them to finish releases the map.  Each case runs on a preallocated map
 * (keys of 16 bytes and fewer than 16384 entries go to the chained table)
 * and a BPFMAP_F_NO_PREALLOC one.  Two kinds of callback touch the map: the
 * flush of pending stacks (queued by the first delete) and one callback per
 * element for batches that a deleter inside a read-side section could not
 * wait for.  ASan sees a callback touching a released map, LSan a map no
 * one released; a free that waits for a reader that waits for it is caught
 * by the reader's watchdog.  No timing is asserted.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "test_util.h"
#include "maps/htab.h"

#define KEY_SIZE 16

/* 2 x the smallest reclamation batch: a deleter inside a read-side section
 * queues one batch element by element. */
#define MAX_ENTRIES 4096

static struct htab *htab_of(struct bpfmap *m)
{
	assert_ptr_equal(m->ops, &htab_ops); /* routed to the chained table */
	return to_htab(m);
}

static uint64_t callbacks_of(struct bpfmap *m)
{
	return __atomic_load_n(&htab_of(m)->callbacks, __ATOMIC_ACQUIRE);
}

static void key_of(uint64_t i, uint64_t key[2])
{
	key[0] = i;
	key[1] = ~i;
}

/* A chained map holding keys 0..n-1. */
static struct bpfmap *filled(uint32_t flags, uint32_t n)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, KEY_SIZE, 8, MAX_ENTRIES, flags);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t k[2];

		key_of(i, k);
		assert_int_equal(bpfmap_update_elem(m, k, &i, BPFMAP_NOEXIST), 0);
	}
	(void)htab_of(m);
	return m;
}

static void delete_range(struct bpfmap *m, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		uint64_t k[2];

		key_of(i, k);
		assert_int_equal(bpfmap_delete_elem(m, k), 0);
	}
}

/*
 * Keys 0..MAX_ENTRIES-1, all deleted: the first half inside a read-side
 * section, where the deleter cannot wait, so its full batch is queued
 * element by element (none can run before the section ends, which makes
 * the count exact), the second half outside (on the pending stacks, with a
 * flush queued): both kinds of callback outstanding.
 */
#define DEFERRED_BATCH (MAX_ENTRIES / 2)

static struct bpfmap *with_callbacks_queued(uint32_t flags)
{
	struct bpfmap *m = filled(flags, MAX_ENTRIES);
	struct htab *h = htab_of(m);

	assert_int_equal(h->reclaim_batch, DEFERRED_BATCH);
	bpfmap_read_lock();
	delete_range(m, 0, DEFERRED_BATCH);
	assert_int_equal(__atomic_load_n(&h->deferred, __ATOMIC_RELAXED), DEFERRED_BATCH);
	bpfmap_read_unlock();
	delete_range(m, DEFERRED_BATCH, MAX_ENTRIES);
	return m;
}

/* Free right after the deletes: the callbacks are still queued (or some run
 * already).  The map and its elements are released once they have all run. */
static void test_free_after_deletes(void **state)
{
	uint32_t flags = variant_flags(state);

	for (int round = 0; round < 8; round++) {
		struct bpfmap *m = with_callbacks_queued(flags);

		assert_int_not_equal(callbacks_of(m), 0);
		bpfmap_free(m);
	}
	/* Also with nothing outstanding: free releases at once. */
	{
		struct bpfmap *m = filled(flags, 100);

		assert_int_equal(callbacks_of(m), 0);
		bpfmap_free(m);
	}
	rcu_wait_deferred(); /* every callback ran: each map released */
}

/* A reader that holds a read-side section until the map is freed (as a
 * thread would that waits for the freeing thread inside its section).  A
 * free that waits for reclamation waits for that section too: a deadlock.
 * The reader gives up after FREE_WATCHDOG_S, unlocks, and the test fails; a
 * deadlock detector, not a timing. */
#define FREE_WATCHDOG_S 30

struct free_reader {
	int in_section; /* atomic */
	int freed;      /* atomic */
	int gave_up;
};

static void *free_reader_thread(void *arg)
{
	struct free_reader *r = arg;
	struct timespec t0, now, ms = { 0, 1000000 };

	bpfmap_read_lock();
	__atomic_store_n(&r->in_section, 1, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&r->freed, __ATOMIC_ACQUIRE)) {
		nanosleep(&ms, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= FREE_WATCHDOG_S) {
			r->gave_up = 1;
			break;
		}
	}
	bpfmap_read_unlock();
	return NULL;
}

static void test_free_during_reader(void **state)
{
	uint32_t flags = variant_flags(state);
	struct free_reader r = { 0 };
	struct bpfmap *m;
	pthread_t th;

	m = filled(flags, MAX_ENTRIES);
	assert_int_equal(pthread_create(&th, NULL, free_reader_thread, &r), 0);
	while (!__atomic_load_n(&r.in_section, __ATOMIC_ACQUIRE))
		sched_yield();
	/* Fewer than a batch outside a section (a full one would wait for a
	 * grace period, i.e. for the reader), the rest inside one. */
	delete_range(m, 0, 100);
	bpfmap_read_lock();
	delete_range(m, 100, MAX_ENTRIES);
	bpfmap_read_unlock();
	/* Queued, and none can run before the reader leaves its section. */
	assert_int_not_equal(callbacks_of(m), 0);
	bpfmap_free(m);
	__atomic_store_n(&r.freed, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(r.gave_up, 0);
	rcu_wait_deferred(); /* the last callback released the map */
}

/*
 * Free racing callbacks that run: by turns, free once the flush has begun
 * (it clears flush_queued first, then waits for a grace period and releases
 * the stacks: usually free comes during that wait), and once the callbacks
 * queued one by one have begun (some element released, the rest not yet).
 * ASan/TSan see an access after the release or a race on it, LSan a map
 * never released.
 */
static void test_free_racing_callbacks(void **state)
{
	uint32_t flags = variant_flags(state);

	for (int round = 0; round < 16; round++) {
		struct bpfmap *m = with_callbacks_queued(flags);
		struct htab *h = htab_of(m);

		if (round % 2 == 0) {
			while (__atomic_load_n(&h->flush_queued, __ATOMIC_ACQUIRE))
				sched_yield();
		} else {
			while (__atomic_load_n(&h->deferred, __ATOMIC_RELAXED) == DEFERRED_BATCH)
				sched_yield();
		}
		bpfmap_free(m);
	}
	rcu_wait_deferred();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT_TESTS(test_free_after_deletes),
		VARIANT_TESTS(test_free_during_reader),
		VARIANT_TESTS(test_free_racing_callbacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
