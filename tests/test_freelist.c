/* SPDX-License-Identifier: BSD-2-Clause */
/* The lock-free slot stack: LIFO order, chains pushed at once, and no slot
 * lost or duplicated under concurrent pushes (single and chained) and pops
 * (run under ThreadSanitizer too). */
#include <pthread.h>
#include <stdlib.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/freelist.h"

static void test_lifo(void **state)
{
	(void)state;
	struct freelist fl;

	assert_int_equal(freelist_init(&fl, 8), 0);
	assert_int_equal(freelist_pop(&fl), FREELIST_EMPTY);
	for (uint32_t i = 0; i < 8; i++)
		freelist_push(&fl, i);
	for (uint32_t i = 8; i-- > 0;)
		assert_int_equal(freelist_pop(&fl), i);
	assert_int_equal(freelist_pop(&fl), FREELIST_EMPTY);
	assert_true(freelist_mem_usage(&fl) >= 8 * sizeof(uint32_t));
	freelist_destroy(&fl);
}

/* A chain goes on top as one: its last added first, then down to its first
 * added, then what was on top before. */
static void test_chain(void **state)
{
	(void)state;
	struct freelist fl;
	struct freelist_chain c = FREELIST_CHAIN_EMPTY;

	assert_int_equal(freelist_init(&fl, 8), 0);
	freelist_push_chain(&fl, &c); /* empty: nothing */
	assert_int_equal(freelist_pop(&fl), FREELIST_EMPTY);
	freelist_push(&fl, 7);
	freelist_chain_add(&fl, &c, 2);
	freelist_chain_add(&fl, &c, 5);
	freelist_chain_add(&fl, &c, 0);
	freelist_push_chain(&fl, &c);
	assert_int_equal(freelist_pop(&fl), 0);
	assert_int_equal(freelist_pop(&fl), 5);
	assert_int_equal(freelist_pop(&fl), 2);
	assert_int_equal(freelist_pop(&fl), 7);
	assert_int_equal(freelist_pop(&fl), FREELIST_EMPTY);
	c = FREELIST_CHAIN_EMPTY; /* a chain of one onto an empty list */
	freelist_chain_add(&fl, &c, 3);
	freelist_push_chain(&fl, &c);
	assert_int_equal(freelist_pop(&fl), 3);
	assert_int_equal(freelist_pop(&fl), FREELIST_EMPTY);
	freelist_destroy(&fl);
}

#define SLOTS 64
#define THREADS 4
#define ROUNDS 20000

static struct freelist shared;

static void *churn(void *arg)
{
	uint32_t held[8], n = 0, seed = (uint32_t)(uintptr_t)arg;

	for (int r = 0; r < ROUNDS; r++) {
		seed = seed * 1103515245 + 12345;
		if ((seed >> 16) & 1 && n < 8) {
			uint32_t i = freelist_pop(&shared);
			if (i != FREELIST_EMPTY)
				held[n++] = i;
		} else if (n) {
			freelist_push(&shared, held[--n]);
		}
	}
	while (n)
		freelist_push(&shared, held[--n]);
	return NULL;
}

/* As churn, but what it holds goes back as one chain each time. */
static void *churn_chains(void *arg)
{
	uint32_t seed = (uint32_t)(uintptr_t)arg;

	for (int r = 0; r < ROUNDS / 8; r++) {
		struct freelist_chain c = FREELIST_CHAIN_EMPTY;
		uint32_t n;

		seed = seed * 1103515245 + 12345;
		n = 1 + (seed >> 16) % 8;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t i = freelist_pop(&shared);

			if (i != FREELIST_EMPTY)
				freelist_chain_add(&shared, &c, i);
		}
		freelist_push_chain(&shared, &c);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	int seen[SLOTS] = { 0 };

	assert_int_equal(freelist_init(&shared, SLOTS), 0);
	for (uint32_t i = 0; i < SLOTS; i++)
		freelist_push(&shared, i);
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, i % 2 ? churn_chains : churn,
						(void *)(i + 1)),
				 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (uint32_t i; (i = freelist_pop(&shared)) != FREELIST_EMPTY;) {
		assert_true(i < SLOTS);
		seen[i]++;
	}
	for (int i = 0; i < SLOTS; i++)
		assert_int_equal(seen[i], 1);
	freelist_destroy(&shared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifo),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
