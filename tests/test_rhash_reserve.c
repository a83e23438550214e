/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RHASH's address-space budget (tables/rtab.h, RTAB_RESERVE_BYTES).  An
 * element arena is reserved at creation for max_entries elements and some
 * spare, so a map declared for 2^31 elements of 64 KiB or more needed more
 * than the 128 TiB a process has, and bpfmap_create answered -ENOMEM for a
 * map that would hold a handful of keys (the kernel's RHASH allocates per
 * element and takes it).  Past the budget a map now holds fewer elements
 * than max_entries and answers -ENOMEM beyond them.  Links the hooked
 * library, whose budget a test may lower.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tables/rtab.h"

/* Maps of the largest max_entries with large values: created, usable, and
 * their memory follows the few elements they hold. */
static void test_unbounded_large_values(void **state)
{
	/* The largest value beside an 8-byte key (key + value < 4 MiB - 48). */
	static const uint32_t sizes[] = { 65536, 1u << 20, (4u << 20) - 48 - 8 - 1 };

	(void)state;
#ifdef __SANITIZE_THREAD__
	print_message("skipped: one thread, and ThreadSanitizer takes 10 s over its "
		      "terabyte reservations (the ASan and release runs cover it)\n");
	skip();
#endif
	assert_int_equal(rtab_reserve_budget(), RTAB_RESERVE_BYTES);
	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t vs = sizes[s];
		struct bpfmap *m = must_create(BPFMAP_TYPE_RHASH, 8, vs, 1u << 31, BPFMAP_F_NO_PREALLOC);
		char *val = malloc(vs), *out = malloc(vs);

		assert_non_null(val);
		assert_non_null(out);
		for (uint64_t k = 0; k < 16; k++) {
			memset(val, (int)(k + 1), vs);
			assert_int_equal(bpfmap_update_elem(m, &k, val, BPFMAP_NOEXIST), 0);
		}
		for (uint64_t k = 0; k < 16; k++) {
			assert_int_equal(bpfmap_lookup_elem(m, &k, out), 0);
			assert_int_equal((unsigned char)out[0], k + 1);
			assert_int_equal((unsigned char)out[vs - 1], k + 1);
		}
		/* The 16 elements, slot 0's pages, a run faulted in ahead (a
		 * chunk: one element of these sizes) and the fixed costs; not
		 * the reservation. */
		assert_true(bpfmap_mem_usage(m) < 18 * ((uint64_t)vs + 8 + 4096) + (1u << 20));
		assert_int_equal(walk_count(m, 8), 16);
		for (uint64_t k = 0; k < 16; k++)
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		bpfmap_free(m);
		free(val);
		free(out);
	}
	rcu_wait_deferred();
}

/* Under a budget of 4096 elements of 1 KiB (one is never used), a map of
 * 1M max_entries keeps a quarter of its room as spare and holds 3072. */
#define SMALL_BUDGET (4096u * 1024)
#define SMALL_LIMIT 3072u

static void test_budget_limits_elements(void **state)
{
	uint64_t k, v[127] = { 0 }, out[127];
	struct bpfmap *m;

	(void)state;
	rtab_reserve_bytes = SMALL_BUDGET;
	m = must_create(BPFMAP_TYPE_RHASH, 8, sizeof(v), 1u << 20, BPFMAP_F_NO_PREALLOC);
	for (k = 0; k < SMALL_LIMIT; k++) {
		v[0] = k;
		assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), 0);
	}
	/* Full for this budget: -ENOMEM, never -E2BIG, in each mode that
	 * inserts, outside sections (the lock-free probe) and in one (the
	 * locked path). */
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), ENOMEM);
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_ANY), ENOMEM);
	bpfmap_read_lock();
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_ANY), ENOMEM);
	bpfmap_read_unlock();
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_EXIST), ENOENT);
	/* Present keys answer as ever, and overwrite in place. */
	k = 5;
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), EEXIST);
	v[0] = 1000;
	assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_ANY), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, out), 0);
	assert_int_equal(out[0], 1000);
	assert_int_equal(walk_count(m, 8), SMALL_LIMIT);
	/* A delete makes room again. */
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	k = SMALL_LIMIT;
	assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), 0);
	k++;
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), ENOMEM);
	/* Churn at the limit goes on: deleted elements come back. */
	for (uint64_t i = 0; i < 4 * SMALL_LIMIT; i++) {
		uint64_t old = i % SMALL_LIMIT == 5 ? SMALL_LIMIT : i % SMALL_LIMIT;

		assert_int_equal(bpfmap_delete_elem(m, &old), 0);
		assert_int_equal(bpfmap_update_elem(m, &old, v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(walk_count(m, 8), SMALL_LIMIT);
	bpfmap_free(m);

	/* A map whose max_entries and spare fit the budget is not cut. */
	m = must_create(BPFMAP_TYPE_RHASH, 8, sizeof(v), 2000, BPFMAP_F_NO_PREALLOC);
	for (k = 0; k < 2000; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), 0);
	assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), E2BIG);
	bpfmap_free(m);
	rtab_reserve_bytes = RTAB_RESERVE_BYTES;
	rcu_wait_deferred();
}

/* Threads racing for the last room: exactly SMALL_LIMIT keys get in, and
 * every other insert answers -ENOMEM (the count is exact, as for -E2BIG). */
struct racer {
	struct bpfmap *m;
	uint64_t first;
	uint32_t in, nomem, other;
};

static void *race_inserts(void *arg)
{
	struct racer *r = arg;
	uint64_t v[127] = { 0 };

	test_pin_cpu((unsigned int)(r->first >> 32));
	for (uint64_t k = r->first; k < r->first + SMALL_LIMIT; k++) {
		int ret = bpfmap_update_elem(r->m, &k, v, BPFMAP_NOEXIST);

		if (ret == 0)
			r->in++;
		else if (ret == -ENOMEM)
			r->nomem++;
		else
			r->other++;
	}
	return NULL;
}

static void test_budget_exact_under_threads(void **state)
{
	struct racer r[2];
	pthread_t t[2];

	(void)state;
	rtab_reserve_bytes = SMALL_BUDGET;
	for (int round = 0; round < 20; round++) {
		struct bpfmap *m = must_create(BPFMAP_TYPE_RHASH, 8, 127 * 8, 1u << 20, BPFMAP_F_NO_PREALLOC);

		for (int i = 0; i < 2; i++) {
			r[i] = (struct racer){ m, (uint64_t)i << 32, 0, 0, 0 };
			assert_int_equal(pthread_create(&t[i], NULL, race_inserts, &r[i]), 0);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		assert_int_equal(r[0].other + r[1].other, 0);
		assert_int_equal(r[0].in + r[1].in, SMALL_LIMIT);
		assert_int_equal(r[0].nomem + r[1].nomem, SMALL_LIMIT);
		assert_int_equal(walk_count(m, 8), SMALL_LIMIT);
		bpfmap_free(m);
	}
	rtab_reserve_bytes = RTAB_RESERVE_BYTES;
	rcu_wait_deferred(); /* the maps' memory, before the leak check */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_unbounded_large_values),
		test_entry(test_budget_limits_elements),
		test_entry(test_budget_exact_under_threads),
	};

	return run_test_group(tests);
}
