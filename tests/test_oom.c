/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Allocation failure injection (the build wraps malloc and calloc for this
 * test): every allocation bpfmap_create() makes for a hash-family map may
 * fail and must give NULL with ENOMEM and leak nothing; a failed insert
 * into a NO_PREALLOC map gives -ENOMEM and leaves the map exactly as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);

/* Allocation number `fail_at` (1-based, counted from arming) fails; 0: none. */
static unsigned long fail_at, allocations;

static bool should_fail(void)
{
	return fail_at && ++allocations == fail_at;
}

void *__wrap_malloc(size_t size)
{
	return should_fail() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

static void arm(unsigned long nth)
{
	allocations = 0;
	fail_at = nth;
}

/* Fail each allocation of one creation in turn, until one succeeds. */
static void create_fails_cleanly(enum bpfmap_type type, uint32_t key_size, uint32_t flags)
{
	unsigned long nth;

	for (nth = 1; nth < 100; nth++) {
		arm(nth);
		errno = 0;
		struct bpfmap *map = bpfmap_create(type, NULL, key_size, 8, 64,
						   &(struct bpfmap_create_opts){
							   .sz = sizeof(struct bpfmap_create_opts),
							   .map_flags = flags,
							   .lock_off = -1 });
		arm(0);
		if (map) { /* nth is past the last allocation create makes */
			bpfmap_free(map);
			break;
		}
		assert_int_equal(errno, ENOMEM);
	}
	assert_true(nth > 1 && nth < 100);
}

/* Every hash type, on each table it may get (8-byte keys: the flat table
 * when preallocated; 16-byte keys in a small map: the chained one), and
 * RHASH (its table and both arenas' chunk counts). */
static void test_create_fails_cleanly(void **state)
{
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_HASH, BPFMAP_TYPE_PERCPU_HASH,
						  BPFMAP_TYPE_LRU_HASH,
						  BPFMAP_TYPE_LRU_PERCPU_HASH, BPFMAP_TYPE_RHASH };
	uint32_t flags = variant_flags(state);

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		bool lru = types[t] == BPFMAP_TYPE_LRU_HASH ||
			   types[t] == BPFMAP_TYPE_LRU_PERCPU_HASH;

		if (lru && (flags & BPFMAP_F_NO_PREALLOC))
			continue; /* ENOTSUPP: LRU maps are always preallocated */
		if (types[t] == BPFMAP_TYPE_RHASH && !(flags & BPFMAP_F_NO_PREALLOC))
			continue; /* EINVAL: RHASH needs NO_PREALLOC */
		create_fails_cleanly(types[t], 8, flags);
		create_fails_cleanly(types[t], 16, flags);
	}
}

static void test_insert_fails_cleanly(void **state)
{
	(void)state;
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 8, 8, 64, BPFMAP_F_NO_PREALLOC);
	uint64_t k, v, out;

	for (k = 0; k < 10; k++)
		assert_int_equal(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), 0);
	size_t mem = bpfmap_mem_usage(map);

	k = 100;
	v = 1;
	arm(1);
	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_ANY), ENOMEM);
	arm(0);
	assert_errno(bpfmap_lookup_elem(map, &k, &out), ENOENT);
	assert_int_equal(walk_count(map, 8), 10);
	assert_int_equal(bpfmap_mem_usage(map), mem);

	/* Replacing a present key needs no memory: it still works. */
	k = 3;
	v = 33;
	arm(1);
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_ANY), 0);
	arm(0);
	assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
	assert_int_equal(out, 33);

	/* The failed insert did not use up capacity: the map still takes 54 more. */
	for (k = 100; k < 154; k++)
		assert_int_equal(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), 0);
	assert_errno(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), E2BIG);
	bpfmap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT_TESTS(test_create_fails_cleanly),
		cmocka_unit_test(test_insert_fails_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
