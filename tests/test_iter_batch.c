/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Iteration: get_next_key, and the four batch operations with the kernel's
 * cursor protocol (whole buckets, ENOSPC, ENOENT at the end with the last
 * elements still returned, count updated also on error).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "hash/hash_select.h"

/* Valgrind runs `test_iter_batch --small` (tests/CMakeLists.txt): the
 * churned map a tenth of the size, below the prefetching pass's threshold
 * (ASan and the plain build check that path). */
static uint32_t scale = 1;

static struct bpfmap *filled_map(void **state, uint32_t max, uint32_t n)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, max, variant_flags(state));

	for (uint32_t i = 0; i < n; i++) {
		uint64_t v = (uint64_t)i * 3;
		assert_int_equal(bpfmap_update_elem(map, &i, &v, BPFMAP_NOEXIST), 0);
	}
	return map;
}

static void test_get_next_key(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, 64, variant_flags(state));
	uint32_t k, first, absent = 12345;

	assert_errno(bpfmap_get_next_key(map, NULL, &k), ENOENT);
	assert_errno(bpfmap_get_next_key(map, &absent, &k), ENOENT);
	bpfmap_free(map);

	map = filled_map(state, 64, 50);
	assert_int_equal(walk_count(map, 4), 50);
	assert_int_equal(bpfmap_get_next_key(map, NULL, &first), 0);
	/* An absent key restarts from the first key. */
	assert_int_equal(bpfmap_get_next_key(map, &absent, &k), 0);
	assert_int_equal(k, first);
	/* Walk to the last key: one more step is ENOENT. */
	uint32_t cur = first, steps = 1;
	while (bpfmap_get_next_key(map, &cur, &k) == 0) {
		cur = k;
		steps++;
	}
	assert_int_equal(errno, ENOENT);
	assert_int_equal(steps, 50);
	assert_errno(bpfmap_get_next_key(map, &cur, &k), ENOENT);
	bpfmap_free(map);
}

/* Walk with lookup_batch in chunks of `chunk`, growing it on ENOSPC; returns
 * how many elements came back and checks each value. */
static uint32_t batch_walk(struct bpfmap *map, uint32_t chunk, bool do_delete, uint32_t n)
{
	uint32_t *keys = calloc(n + 1, 4), total = 0, cursor = 0;
	uint64_t *vals = calloc(n + 1, 8);
	bool *seen = calloc(n, 1);
	void *in = NULL;
	int ret;

	do {
		uint32_t count = chunk;

		ret = do_delete ? bpfmap_lookup_and_delete_batch(map, in, &cursor, keys, vals,
								  &count, NULL)
				: bpfmap_lookup_batch(map, in, &cursor, keys, vals, &count, NULL);
		if (ret == -ENOSPC) {
			assert_int_equal(count, 0);
			chunk++;
			continue;
		}
		assert_true(ret == 0 || ret == -ENOENT);
		assert_true(count <= chunk);
		for (uint32_t i = 0; i < count; i++) {
			assert_true(keys[i] < n);
			assert_false(seen[keys[i]]);
			seen[keys[i]] = true;
			assert_int_equal(vals[i], (uint64_t)keys[i] * 3);
		}
		total += count;
		in = &cursor;
	} while (ret != -ENOENT);
	free(keys);
	free(vals);
	free(seen);
	return total;
}

static void test_lookup_batch(void **state)
{
	const uint32_t n = 200;
	struct bpfmap *map = filled_map(state, 256, n);

	assert_int_equal(batch_walk(map, n, false, n), n);
	assert_int_equal(batch_walk(map, 1000, false, n), n);
	assert_int_equal(batch_walk(map, 1, false, n), n);
	assert_int_equal(batch_walk(map, 7, false, n), n);
	assert_int_equal(walk_count(map, 4), n);

	/* count == 0: nothing happens, not even the cursor. */
	uint32_t count = 0, cursor = 0xdead, k[1];
	uint64_t v[1];
	assert_int_equal(bpfmap_lookup_batch(map, NULL, &cursor, k, v, &count, NULL), 0);
	assert_int_equal(cursor, 0xdead);

	/* A cursor past the last bucket: ENOENT, count 0. */
	uint32_t past = 256;
	count = 1;
	assert_errno(bpfmap_lookup_batch(map, &past, &cursor, k, v, &count, NULL), ENOENT);
	assert_int_equal(count, 0);
	past = UINT32_MAX;
	count = 1;
	assert_errno(bpfmap_lookup_batch(map, &past, &cursor, k, v, &count, NULL), ENOENT);

	/* Bad options. */
	BPFMAP_BATCH_OPTS(lock, .elem_flags = BPFMAP_F_LOCK);
	BPFMAP_BATCH_OPTS(noexist, .elem_flags = BPFMAP_NOEXIST);
	BPFMAP_BATCH_OPTS(flags, .flags = 1);
	struct bpfmap_batch_opts tiny = { .sz = 1 };
	const struct bpfmap_batch_opts *bad[] = { &lock, &noexist, &flags, &tiny };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		count = 1;
		assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, k, v, &count, bad[i]), EINVAL);
		assert_errno(bpfmap_lookup_and_delete_batch(map, NULL, &cursor, k, v, &count,
							    bad[i]), EINVAL);
	}
	assert_int_equal(walk_count(map, 4), n);

	/* lookup_and_delete_batch empties the map, returning everything once. */
	assert_int_equal(batch_walk(map, 5, true, n), n);
	assert_int_equal(walk_count(map, 4), 0);
	count = 10;
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, k, v, &count, NULL), ENOENT);
	assert_int_equal(count, 0);
	bpfmap_free(map);
}

/* Two keys in one bucket (found with the map's own hash, seed 0) make a
 * bucket of two: count 1 must give ENOSPC, count 2 both. */
/* The chained table's bucket of 4-byte key k: the hash's top bits. */
static uint32_t chained_bucket(const struct hash_params *p, uint32_t k, uint32_t n_buckets)
{
	uint64_t h = hash_fn_for_kind(HASH_U32)(&k, 4, p);

	return (uint32_t)(h >> (64 - __builtin_ctz(n_buckets)));
}

static void test_enospc(void **state)
{
	const uint32_t max = 4; /* 4 buckets */
	struct hash_params zp;
	uint32_t a = 0, b;

	hash_params_seeded(&zp, 0); /* ZERO_SEED's */
	for (b = 1; chained_bucket(&zp, b, max) != chained_bucket(&zp, a, max); b++)
		;
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, max,
					 variant_flags(state) | BPFMAP_F_ZERO_SEED);
	uint64_t v = 0;
	assert_int_equal(bpfmap_update_elem(map, &a, &v, 0), 0);
	v = (uint64_t)b * 3;
	assert_int_equal(bpfmap_update_elem(map, &b, &v, 0), 0);

	uint32_t keys[2], count = 1, cursor = 0;
	uint64_t vals[2];
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, keys, vals, &count, NULL), ENOSPC);
	assert_int_equal(count, 0);
	count = 1;
	assert_errno(bpfmap_lookup_and_delete_batch(map, NULL, &cursor, keys, vals, &count,
						    NULL), ENOSPC);
	assert_int_equal(count, 0);
	assert_int_equal(walk_count(map, 4), 2); /* nothing deleted */
	count = 2;
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, keys, vals, &count, NULL), ENOENT);
	assert_int_equal(count, 2);
	assert_true((keys[0] == a && keys[1] == b) || (keys[0] == b && keys[1] == a));

	/* Add a key in another bucket, before a's bucket in the walk or after:
	 * with count 2 the call returns what fits and a cursor to resume. */
	uint32_t c = b + 1;
	while (chained_bucket(&zp, c, max) == chained_bucket(&zp, a, max))
		c++;
	v = (uint64_t)c * 3;
	assert_int_equal(bpfmap_update_elem(map, &c, &v, 0), 0);
	assert_int_equal(batch_walk(map, 2, false, c + 1), 3);
	bpfmap_free(map);
}

static void test_update_batch(void **state)
{
	const uint32_t max = 16;
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, max, variant_flags(state));
	uint32_t keys[20], count;
	uint64_t vals[20], out;

	for (uint32_t i = 0; i < 20; i++) {
		keys[i] = i;
		vals[i] = (uint64_t)i * 3;
	}
	count = 0;
	assert_int_equal(bpfmap_update_batch(map, keys, vals, &count, NULL), 0);
	count = 10;
	assert_int_equal(bpfmap_update_batch(map, keys, vals, &count, NULL), 0);
	assert_int_equal(count, 10);
	/* The map fills up at 16: the 17th update fails, count says 6 done. */
	count = 10;
	assert_errno(bpfmap_update_batch(map, keys + 10, vals + 10, &count, NULL), E2BIG);
	assert_int_equal(count, 6);
	assert_int_equal(walk_count(map, 4), max);
	/* Replacing present keys works in a full map. */
	count = max;
	assert_int_equal(bpfmap_update_batch(map, keys, vals, &count, NULL), 0);
	assert_int_equal(count, max);

	/* Not NOEXIST, nor F_LOCK without a lock (the kernel's rule); flags
	 * is ignored, as the kernel's generic update and delete batches do. */
	BPFMAP_BATCH_OPTS(noexist, .elem_flags = BPFMAP_NOEXIST);
	BPFMAP_BATCH_OPTS(lock, .elem_flags = BPFMAP_F_LOCK);
	BPFMAP_BATCH_OPTS(flags, .flags = 2);
	count = 1;
	assert_errno(bpfmap_update_batch(map, keys, vals, &count, &noexist), EINVAL);
	assert_errno(bpfmap_update_batch(map, keys, vals, &count, &lock), EINVAL);
	vals[0] = 77;
	assert_int_equal(bpfmap_update_batch(map, keys, vals, &count, &flags), 0);
	assert_int_equal(count, 1);
	assert_int_equal(bpfmap_lookup_elem(map, &keys[0], &out), 0);
	assert_int_equal(out, 77);
	assert_int_equal(bpfmap_delete_batch(map, keys, &count, &flags), 0);
	assert_int_equal(count, 1);
	assert_errno(bpfmap_lookup_elem(map, &keys[0], &out), ENOENT);

	/* EXIST, as bpf-next's BPF_F_CPU series takes it (6.18 refuses it):
	 * each key as update_elem(EXIST), stopping at the first absent one. */
	BPFMAP_BATCH_OPTS(exist, .elem_flags = BPFMAP_EXIST);
	uint32_t ekeys[3] = { keys[1], keys[0], keys[2] };
	uint64_t evals[3] = { 501, 502, 503 };

	count = 3;
	assert_errno(bpfmap_update_batch(map, ekeys, evals, &count, &exist), ENOENT);
	assert_int_equal(count, 1);
	assert_int_equal(bpfmap_lookup_elem(map, &keys[1], &out), 0);
	assert_int_equal(out, 501);
	assert_errno(bpfmap_lookup_elem(map, &keys[0], &out), ENOENT);
	assert_int_equal(bpfmap_lookup_elem(map, &keys[2], &out), 0);
	assert_int_not_equal(out, 503);
	bpfmap_free(map);
}

static void test_delete_batch(void **state)
{
	struct bpfmap *map = filled_map(state, 16, 10);
	uint32_t keys[] = { 0, 1, 2, 100, 3 }, count;

	count = 0;
	assert_int_equal(bpfmap_delete_batch(map, keys, &count, NULL), 0);
	count = 5;
	assert_errno(bpfmap_delete_batch(map, keys, &count, NULL), ENOENT);
	assert_int_equal(count, 3);
	assert_int_equal(walk_count(map, 4), 7);
	BPFMAP_BATCH_OPTS(lock, .elem_flags = BPFMAP_F_LOCK);
	BPFMAP_BATCH_OPTS(exist, .elem_flags = BPFMAP_EXIST);
	count = 1;
	assert_errno(bpfmap_delete_batch(map, keys + 4, &count, &lock), EINVAL);
	assert_errno(bpfmap_delete_batch(map, keys + 4, &count, &exist), EINVAL);
	count = 1;
	assert_int_equal(bpfmap_delete_batch(map, keys + 4, &count, NULL), 0);
	assert_int_equal(count, 1);
	assert_int_equal(walk_count(map, 4), 6);
	bpfmap_free(map);
}

/*
 * A full map too big for the caches, turned over: its batch pass prefetches
 * the chains' nodes ahead (tables/flat_iter.c), and a quarter of its keys are
 * chained.  Every live key must still come back once with its value, from
 * lookup_batch and then lookup_and_delete_batch.
 * 8-byte keys and 16-byte ones (whose nodes are reached through an element
 * index); the map is larger than the 8 MiB from which the pass prefetches.
 */
static void churned_batch(void **state, uint32_t ks)
{
	const uint32_t max = 600000 / scale, chunk = 997;
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, 8, max, variant_flags(state));
	uint64_t *live = malloc(sizeof(uint64_t) * max), next = 1, rng = 0x9e3779b97f4a7c15ULL;
	uint64_t key[2] = { 0, 0x5bd1e995 }, v;
	uint8_t *keys = malloc((size_t)chunk * ks), *seen;
	uint64_t *vals = malloc(sizeof(uint64_t) * chunk);

	assert_non_null(live);
	assert_non_null(keys);
	assert_non_null(vals);
	for (uint32_t i = 0; i < max; i++) {
		live[i] = key[0] = next++;
		v = key[0] * 7;
		assert_int_equal(bpfmap_update_elem(map, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < max; i++) { /* one delete + insert each */
		uint32_t j;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		j = (uint32_t)(rng % max);
		key[0] = live[j];
		assert_int_equal(bpfmap_delete_elem(map, key), 0);
		live[j] = key[0] = next++;
		v = key[0] * 7;
		assert_int_equal(bpfmap_update_elem(map, key, &v, BPFMAP_NOEXIST), 0);
	}
	if (scale == 1 && !(variant_flags(state) & BPFMAP_F_NO_PREALLOC))
		assert_true(bpfmap_mem_usage(map) > (8u << 20));
	seen = calloc(next, 1);
	assert_non_null(seen);
	for (int del = 0; del < 2; del++) {
		uint32_t cursor = 0, total = 0;
		void *in = NULL;
		int ret;

		memset(seen, 0, next);
		do {
			uint32_t count = chunk;

			ret = del ? bpfmap_lookup_and_delete_batch(map, in, &cursor, keys, vals,
								   &count, NULL)
				  : bpfmap_lookup_batch(map, in, &cursor, keys, vals, &count, NULL);
			assert_true(ret == 0 || ret == -ENOENT);
			for (uint32_t i = 0; i < count; i++) {
				uint64_t id;

				memcpy(&id, keys + (size_t)i * ks, 8);
				assert_true(id > 0 && id < next);
				assert_false(seen[id]);
				seen[id] = 1;
				assert_int_equal(vals[i], id * 7);
				if (ks > 8)
					assert_memory_equal(keys + (size_t)i * ks + 8, &key[1], 8);
			}
			total += count;
			in = &cursor;
		} while (ret != -ENOENT);
		assert_int_equal(total, max);
		for (uint32_t i = 0; i < max; i++)
			assert_true(seen[live[i]]);
	}
	key[0] = live[0];
	assert_errno(bpfmap_lookup_elem(map, key, &v), ENOENT);
	free(seen);
	free(vals);
	free(keys);
	free(live);
	bpfmap_free(map);
}

static void test_churned_batch_k8(void **state)
{
	churned_batch(state, 8);
}

static void test_churned_batch_k16(void **state)
{
	churned_batch(state, 16);
}

/* A walk whose last key is deleted and inserted again before each next
 * call (as another thread may do) still returns every key: the key
 * lands in another slot or node, and a walk by position resumed after the
 * new one, skipping the rest of the map (6 of 40 keys seen). */
static void test_get_next_key_reinserted(void **state)
{
	(void)state;
	skip_if_chain_forced("the chained table's walk, as the kernel's, meets a re-inserted "
			     "key again and never ends");
	for (enum bpfmap_type t = BPFMAP_TYPE_HASH; t <= BPFMAP_TYPE_LRU_HASH; t += 8) {
		struct bpfmap *map = must_create(t, 4, 8, 64, 0);
		uint32_t k, seen = 0, mask[2] = { 0, 0 };
		uint64_t v = 1;
		int ret;

		for (uint32_t i = 0; i < 40; i++)
			assert_int_equal(bpfmap_update_elem(map, &i, &v, BPFMAP_NOEXIST), 0);
		uint32_t calls = 0;

		/* Preallocated maps only: the chained table's walk, as the
		 * kernel's, meets a key re-inserted at its bucket's head again,
		 * and under this pattern never ends. */
		for (ret = bpfmap_get_next_key(map, NULL, &k); !ret && calls++ < 1000;
		     ret = bpfmap_get_next_key(map, &k, &k)) {
			assert_true(k < 40);
			if (!(mask[k / 32] & 1u << (k % 32)))
				seen++;
			mask[k / 32] |= 1u << (k % 32);
			assert_int_equal(bpfmap_delete_elem(map, &k), 0);
			assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
		}
		assert_int_equal(ret, -ENOENT);
		assert_int_equal(seen, 40);
		bpfmap_free(map);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--small"))
		scale = 10;
	const struct CMUnitTest tests[] = {
		VARIANT_TESTS(test_get_next_key),
		cmocka_unit_test(test_get_next_key_reinserted),
		VARIANT_TESTS(test_lookup_batch),
		VARIANT_TESTS(test_enospc),
		VARIANT_TESTS(test_update_batch),
		VARIANT_TESTS(test_delete_batch),
		VARIANT_TESTS(test_churned_batch_k8),
		VARIANT_TESTS(test_churned_batch_k16),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
