// SPDX-License-Identifier: BSD-2-Clause
/*
 * pthread_cancel() of a thread inside a map call that waits for a grace
 * period.  A reader holds a read-side section while a thread turns a full
 * map over (delete + insert of new keys) until the map's reclamation waits
 * for that reader; the thread is cancelled there and joined once the reader
 * leaves; then a grace period must still end for everyone else.  liburcu's
 * wait polls, a cancellation point, holding its grace-period mutex, with
 * the map's own reclamation flag set: a thread cancelled there left both
 * held, and every later grace period in the process waited for ever (an
 * adversarial probe, on the flat and chained tables and RHASH).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

#define ENTRIES 1000

struct victim {
	struct bpfmap *map;
	uint64_t pairs; /* atomic: delete + insert pairs done */
};

/* Out of line: the cancellation unwinds churn()'s frame, which then holds
 * no variable whose address was taken (AddressSanitizer leaves such a
 * frame's redzones poisoned when it is unwound, and reported the thread's
 * exit handlers writing there). */
static __attribute__((noinline)) void pair(struct bpfmap *map, uint32_t i)
{
	uint32_t old = i, new = i + ENTRIES;
	uint64_t val = 1;

	if (bpfmap_delete_elem(map, &old) || bpfmap_update_elem(map, &new, &val, BPFMAP_NOEXIST))
		abort();
}

static void *churn(void *arg)
{
	struct victim *v = arg;

	for (uint32_t i = 0;; i++) {
		pair(v->map, i);
		__atomic_store_n(&v->pairs, i + 1, __ATOMIC_SEQ_CST);
		pthread_testcancel();
	}
	return NULL;
}

/* Turn over @v's map until it stops for 200 ms (waiting for the reader's
 * section to end), 10 s at most; then cancel it and let the reader go. */
static void cancel_while_waiting(struct victim *v)
{
	pthread_t t;
	uint64_t seen = UINT64_MAX;
	int still = 0;

	test_section_hold();
	assert_int_equal(pthread_create(&t, NULL, churn, v), 0);
	for (int i = 0; i < 1000 && still < 20; i++) {
		uint64_t now = __atomic_load_n(&v->pairs, __ATOMIC_SEQ_CST);

		still = now == seen ? still + 1 : 0;
		seen = now;
		usleep(10 * 1000);
	}
	if (still < 20)
		fail_msg("the turnover never waited for the reader (%llu pairs)",
			 (unsigned long long)seen);
	assert_int_equal(pthread_cancel(t), 0);
	usleep(50 * 1000);
	test_section_release();
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* A hang inside liburcu's wait has every signal blocked (no alarm ends
 * it): a thread of its own ends the test after 30 s instead. */
static void *watchdog(void *arg)
{
	(void)arg;
	sleep(30);
	fprintf(stderr, "a grace period never ended\n");
	_exit(1);
}

/* Deletes and inserts that need grace periods, on a map of their own. */
static void grace_periods_still_end(enum bpfmap_type type, uint32_t flags)
{
	struct bpfmap *m = must_create(type, 4, 8, ENTRIES, flags);
	uint64_t val = 1;
	pthread_t dog;

	assert_int_equal(pthread_create(&dog, NULL, watchdog, NULL), 0);
	for (uint32_t k = 0; k < ENTRIES; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &val, BPFMAP_NOEXIST), 0);
	for (uint32_t i = 0; i < 20 * ENTRIES; i++) {
		uint32_t old = i, new = i + ENTRIES;

		assert_int_equal(bpfmap_delete_elem(m, &old), 0);
		assert_int_equal(bpfmap_update_elem(m, &new, &val, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(pthread_cancel(dog), 0);
	assert_int_equal(pthread_join(dog, NULL), 0);
	bpfmap_free(m);
}

static void cancel_case(enum bpfmap_type type, uint32_t flags)
{
	struct victim v = { .map = must_create(type, 4, 8, ENTRIES, flags) };
	uint64_t val = 1;

	for (uint32_t k = 0; k < ENTRIES; k++)
		assert_int_equal(bpfmap_update_elem(v.map, &k, &val, BPFMAP_NOEXIST), 0);
	cancel_while_waiting(&v);
	grace_periods_still_end(type, flags);
	grace_periods_still_end(BPFMAP_TYPE_HASH, 0);
	bpfmap_free(v.map);
}

static void test_cancel_flat(void **state)
{
	(void)state;
	cancel_case(BPFMAP_TYPE_HASH, 0);
}

static void test_cancel_chained(void **state)
{
	(void)state;
	cancel_case(BPFMAP_TYPE_HASH, BPFMAP_F_NO_PREALLOC);
}

static void test_cancel_rhash(void **state)
{
	(void)state;
	cancel_case(BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_cancel_flat),
		test_entry(test_cancel_chained),
		test_entry(test_cancel_rhash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
