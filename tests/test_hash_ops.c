/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * HASH per-key semantics: update flags, full maps, lookup, delete,
 * lookup_and_delete, access flags, NULL arguments, the program view; each on
 * preallocated and BPFMAP_F_NO_PREALLOC maps.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static void test_update_flags(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, variant_flags(state));
	uint32_t k = 7;
	uint64_t v = 1, out = 0;

	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_EXIST), ENOENT);
	assert_errno(bpfmap_lookup_elem(map, &k, &out), ENOENT);
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
	v = 2;
	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), EEXIST);
	assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
	assert_int_equal(out, 1); /* the failed update left the value alone */
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_EXIST), 0);
	assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
	assert_int_equal(out, 2);
	v = 3;
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_ANY), 0);
	assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
	assert_int_equal(out, 3);

	/* Unknown flags, F_LOCK without a lock: refused, map unchanged. */
	static const uint64_t bad[] = { 3, 8, 16, 1ULL << 32, ~0ULL, BPFMAP_F_LOCK,
					BPFMAP_F_LOCK | BPFMAP_EXIST };
	v = 99;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t k2 = 8;

		assert_errno(bpfmap_update_elem(map, &k, &v, bad[i]), EINVAL);
		assert_errno(bpfmap_update_elem(map, &k2, &v, bad[i]), EINVAL);
		assert_errno(bpfmap_lookup_elem(map, &k2, &out), ENOENT);
	}
	assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
	assert_int_equal(out, 3);
	bpfmap_free(map);
}

static void test_full_map(void **state)
{
	const uint32_t max = 32;
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, max, variant_flags(state));
	uint64_t v, out;
	uint32_t k;

	for (k = 0; k < max; k++) {
		v = k;
		assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
	}
	k = max;
	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_ANY), E2BIG);
	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), E2BIG);
	/* EXIST on an absent key reports ENOENT before fullness matters. */
	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_EXIST), ENOENT);
	assert_errno(bpfmap_lookup_elem(map, &k, &out), ENOENT);

	/* Replacing present keys in a full map always succeeds. */
	for (int round = 0; round < 100; round++)
		for (k = 0; k < max; k++) {
			v = k + 1000 * (uint64_t)round;
			assert_int_equal(bpfmap_update_elem(map, &k, &v,
							    round & 1 ? BPFMAP_EXIST : BPFMAP_ANY), 0);
		}
	for (k = 0; k < max; k++) {
		assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
		assert_int_equal(out, k + 99000);
	}
	assert_int_equal(walk_count(map, 4), max);

	/* Delete then insert at once, many times over: no transient E2BIG while
	 * deleted elements wait for reclamation. */
	for (uint32_t i = 0; i < 20 * max; i++) {
		uint32_t old = i % max + (i / max) * max, new = old + max;

		assert_int_equal(bpfmap_delete_elem(map, &old), 0);
		v = new;
		assert_int_equal(bpfmap_update_elem(map, &new, &v, BPFMAP_NOEXIST), 0);
		assert_errno(bpfmap_update_elem(map, &(uint32_t){ UINT32_MAX }, &v, BPFMAP_ANY),
			     E2BIG);
	}
	assert_int_equal(walk_count(map, 4), max);
	bpfmap_free(map);
}

static void test_lookup_delete(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 8, 16, 64, variant_flags(state));
	uint64_t k = 0x1122334455667788ULL, v[2] = { 1, 2 }, out[2];

	assert_errno(bpfmap_delete_elem(map, &k), ENOENT);
	assert_errno(bpfmap_lookup_and_delete_elem(map, &k, out), ENOENT);
	assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_ANY), 0);
	assert_int_equal(bpfmap_lookup_elem(map, &k, out), 0);
	assert_memory_equal(out, v, sizeof(v));
	assert_int_equal(bpfmap_delete_elem(map, &k), 0);
	assert_errno(bpfmap_lookup_elem(map, &k, out), ENOENT);
	assert_errno(bpfmap_delete_elem(map, &k), ENOENT);

	v[0] = 5;
	assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_ANY), 0);
	memset(out, 0, sizeof(out));
	assert_int_equal(bpfmap_lookup_and_delete_elem(map, &k, out), 0);
	assert_memory_equal(out, v, sizeof(v));
	assert_errno(bpfmap_lookup_elem(map, &k, out), ENOENT);
	assert_errno(bpfmap_lookup_and_delete_elem(map, &k, out), ENOENT);

	/* lookup_elem_flags: only F_LOCK is a flag, and needs a lock. */
	assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_ANY), 0);
	assert_int_equal(bpfmap_lookup_elem_flags(map, &k, out, 0), 0);
	assert_errno(bpfmap_lookup_elem_flags(map, &k, out, BPFMAP_F_LOCK), EINVAL);
	assert_errno(bpfmap_lookup_elem_flags(map, &k, out, 1), EINVAL);
	assert_errno(bpfmap_lookup_elem_flags(map, &k, out, 1ULL << 40), EINVAL);
	bpfmap_free(map);
}

struct locked_pair {
	struct bpfmap_spin_lock lock;
	uint32_t word;
};

/* lookup_and_delete_elem_flags on one map with a spin lock: F_LOCK copies
 * the value with its lock field zero and removes the key; every other flag
 * bit is EINVAL and removes nothing. */
static void lookup_delete_flags_on(struct bpfmap *map, uint64_t k)
{
	struct locked_pair v = { .word = 5 }, out;

	assert_non_null(map);
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
	for (int b = 0; b < 64; b++) {
		if (b == 2) /* BPFMAP_F_LOCK */
			continue;
		assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, &out, 1ULL << b),
			     EINVAL);
		assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, &out,
								 BPFMAP_F_LOCK | 1ULL << b),
			     EINVAL);
	}
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(bpfmap_lookup_and_delete_elem_flags(map, &k, &out, BPFMAP_F_LOCK), 0);
	assert_int_equal(out.lock.val, 0);
	assert_int_equal(out.word, 5);
	assert_errno(bpfmap_lookup_elem(map, &k, &out), ENOENT);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, &out, BPFMAP_F_LOCK), ENOENT);
	v.word = 6;
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(bpfmap_lookup_and_delete_elem_flags(map, &k, &out, 0), 0);
	assert_int_equal(out.lock.val, 0);
	assert_int_equal(out.word, 6);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, &out, 0), ENOENT);
	bpfmap_free(map);
}

static void test_lookup_delete_flags(void **state)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = variant_flags(state), .lock_off = 0);
	struct locked_pair out;
	uint64_t k = 3;
	struct bpfmap *map;

	/* Word keys (the flat table unless NO_PREALLOC), long keys (chained
	 * in a small map), and RHASH. */
	lookup_delete_flags_on(bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, sizeof(out), 64, &o), k);
	map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 24, sizeof(out), 64, &o);
	assert_non_null(map);
	uint64_t lk[3] = { k, 0, 0 };
	struct locked_pair v = { .word = 9 };

	assert_int_equal(bpfmap_update_elem(map, lk, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_lookup_and_delete_elem_flags(map, lk, &out, BPFMAP_F_LOCK), 0);
	assert_int_equal(out.word, 9);
	assert_errno(bpfmap_lookup_elem(map, lk, &out), ENOENT);
	bpfmap_free(map);
	o.map_flags = BPFMAP_F_NO_PREALLOC;
	lookup_delete_flags_on(bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 8, sizeof(out), 64, &o), k);

	/* The kernel's order: flag bits, then access rights, then F_LOCK on
	 * a map without a lock. */
	struct bpfmap *ro = must_create(BPFMAP_TYPE_HASH, 8, 8, 4,
					variant_flags(state) | BPFMAP_F_RDONLY);
	struct bpfmap *wo = must_create(BPFMAP_TYPE_HASH, 8, 8, 4,
					variant_flags(state) | BPFMAP_F_WRONLY);
	struct bpfmap *plain = must_create(BPFMAP_TYPE_HASH, 8, 8, 4, variant_flags(state));

	assert_errno(bpfmap_lookup_and_delete_elem_flags(ro, &k, &out, 1), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(wo, &k, &out, 1ULL << 32), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(ro, &k, &out, BPFMAP_F_LOCK), EPERM);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(wo, &k, &out, BPFMAP_F_LOCK), EPERM);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(plain, &k, &out, BPFMAP_F_LOCK), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(plain, &k, &out, 0), ENOENT);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(NULL, &k, &out, 0), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(plain, NULL, &out, 0), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(plain, &k, NULL, 0), EINVAL);
	bpfmap_free(ro);
	bpfmap_free(wo);
	bpfmap_free(plain);

	/* Per-CPU maps: neither per-CPU flag, and no lock to take. */
	map = must_create(BPFMAP_TYPE_PERCPU_HASH, 8, 8, 4, variant_flags(state));
	uint64_t *pv = calloc((size_t)bpfmap_num_possible_cpus(), 8);

	assert_non_null(pv);
	assert_int_equal(bpfmap_update_elem(map, &k, pv, BPFMAP_NOEXIST), 0);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, pv, BPFMAP_F_LOCK), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, pv, BPFMAP_F_CPU), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem_flags(map, &k, pv, BPFMAP_F_ALL_CPUS), EINVAL);
	assert_int_equal(bpfmap_lookup_and_delete_elem_flags(map, &k, pv, 0), 0);
	free(pv);
	bpfmap_free(map);
}

static void test_null_arguments(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 4, 4, variant_flags(state));
	uint32_t k = 1, v = 1, count = 1, cursor;

	assert_errno(bpfmap_lookup_elem(NULL, &k, &v), EINVAL);
	assert_errno(bpfmap_lookup_elem(map, NULL, &v), EINVAL);
	assert_errno(bpfmap_lookup_elem(map, &k, NULL), EINVAL);
	assert_errno(bpfmap_lookup_elem_flags(NULL, &k, &v, 0), EINVAL);
	assert_errno(bpfmap_update_elem(NULL, &k, &v, 0), EINVAL);
	assert_errno(bpfmap_update_elem(map, NULL, &v, 0), EINVAL);
	assert_errno(bpfmap_update_elem(map, &k, NULL, 0), EINVAL);
	assert_errno(bpfmap_delete_elem(NULL, &k), EINVAL);
	assert_errno(bpfmap_delete_elem(map, NULL), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem(NULL, &k, &v), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem(map, NULL, &v), EINVAL);
	assert_errno(bpfmap_lookup_and_delete_elem(map, &k, NULL), EINVAL);
	assert_errno(bpfmap_get_next_key(NULL, NULL, &k), EINVAL);
	assert_errno(bpfmap_get_next_key(map, NULL, NULL), EINVAL);
	assert_errno(bpfmap_lookup_batch(NULL, NULL, &cursor, &k, &v, &count, NULL), EINVAL);
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, &k, &v, NULL, NULL), EINVAL);
	/* A NULL buffer with room asked for: -EINVAL with nothing copied
	 * (*count 0, as the kernel's -EFAULT leaves it); with no room asked
	 * for, nothing to check (0), as in the kernel. */
	assert_errno(bpfmap_lookup_batch(map, NULL, NULL, &k, &v, &count, NULL), EINVAL);
	assert_int_equal(count, 0);
	assert_int_equal(bpfmap_lookup_batch(map, NULL, NULL, &k, &v, &count, NULL), 0);
	count = 1;
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, NULL, &v, &count, NULL), EINVAL);
	count = 1;
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, &k, NULL, &count, NULL), EINVAL);
	count = 1;
	assert_errno(bpfmap_lookup_and_delete_batch(map, NULL, NULL, &k, &v, &count, NULL),
		     EINVAL);
	count = 1;
	assert_errno(bpfmap_update_batch(NULL, &k, &v, &count, NULL), EINVAL);
	assert_errno(bpfmap_update_batch(map, NULL, &v, &count, NULL), EINVAL);
	assert_errno(bpfmap_update_batch(map, &k, NULL, &count, NULL), EINVAL);
	assert_errno(bpfmap_update_batch(map, &k, &v, NULL, NULL), EINVAL);
	assert_errno(bpfmap_delete_batch(NULL, &k, &count, NULL), EINVAL);
	assert_errno(bpfmap_delete_batch(map, NULL, &count, NULL), EINVAL);
	assert_errno(bpfmap_delete_batch(map, &k, NULL, NULL), EINVAL);
	/* A count of 0 touches nothing, NULL buffers included (the kernel's 0). */
	uint32_t zero = 0;

	assert_int_equal(bpfmap_update_batch(map, &k, NULL, &zero, NULL), 0);
	assert_int_equal(bpfmap_update_batch(map, NULL, &v, &zero, NULL), 0);
	assert_int_equal(bpfmap_delete_batch(map, NULL, &zero, NULL), 0);
	assert_int_equal(bpfmap_lookup_batch(map, NULL, &cursor, NULL, NULL, &zero, NULL), 0);
	assert_int_equal(zero, 0);
	errno = 0;
	assert_null(bpfmap_lookup(NULL, &k));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(bpfmap_lookup(map, NULL));
	assert_int_equal(errno, EINVAL);
	/* Nothing above changed the map. */
	assert_int_equal(walk_count(map, 4), 0);
	bpfmap_free(map);
}

static void test_access_flags(void **state)
{
	uint32_t k = 1, v = 1, count = 4, cursor, ks[4], vs[4];
	struct bpfmap *ro = must_create(BPFMAP_TYPE_HASH, 4, 4, 4,
					variant_flags(state) | BPFMAP_F_RDONLY);
	struct bpfmap *wo = must_create(BPFMAP_TYPE_HASH, 4, 4, 4,
					variant_flags(state) | BPFMAP_F_WRONLY);

	assert_errno(bpfmap_update_elem(ro, &k, &v, 0), EPERM);
	assert_errno(bpfmap_delete_elem(ro, &k), EPERM);
	assert_errno(bpfmap_lookup_and_delete_elem(ro, &k, &v), EPERM);
	assert_errno(bpfmap_update_batch(ro, &k, &v, &count, NULL), EPERM);
	assert_errno(bpfmap_delete_batch(ro, &k, &count, NULL), EPERM);
	assert_errno(bpfmap_lookup_and_delete_batch(ro, NULL, &cursor, ks, vs, &count, NULL),
		     EPERM);
	assert_errno(bpfmap_lookup_elem(ro, &k, &v), ENOENT); /* reading is allowed */
	assert_errno(bpfmap_get_next_key(ro, NULL, &k), ENOENT);
	assert_errno(bpfmap_lookup_batch(ro, NULL, &cursor, ks, vs, &count, NULL), ENOENT);

	assert_int_equal(bpfmap_update_elem(wo, &k, &v, 0), 0); /* writing is allowed */
	assert_errno(bpfmap_lookup_elem(wo, &k, &v), EPERM);
	assert_errno(bpfmap_lookup_elem_flags(wo, &k, &v, 0), EPERM);
	assert_errno(bpfmap_get_next_key(wo, NULL, &k), EPERM);
	assert_errno(bpfmap_lookup_and_delete_elem(wo, &k, &v), EPERM);
	assert_errno(bpfmap_lookup_batch(wo, NULL, &cursor, ks, vs, &count, NULL), EPERM);
	assert_errno(bpfmap_lookup_and_delete_batch(wo, NULL, &cursor, ks, vs, &count, NULL),
		     EPERM);
	assert_int_equal(bpfmap_delete_elem(wo, &k), 0);
	bpfmap_free(ro);
	bpfmap_free(wo);

	/* The tables specialise their copy-outs (8-byte keys and values):
	 * a write-only map's is still refused, with the key present. */
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_HASH, BPFMAP_TYPE_LRU_HASH,
						  BPFMAP_TYPE_RHASH };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint32_t flags = BPFMAP_F_WRONLY |
				 (types[i] == BPFMAP_TYPE_RHASH	     ? BPFMAP_F_NO_PREALLOC
				  : types[i] == BPFMAP_TYPE_LRU_HASH ? 0 /* preallocated only */
								     : variant_flags(state));
		struct bpfmap *w8 = must_create(types[i], 8, 8, 64, flags);
		uint64_t k8 = 7, v8 = 9;

		assert_int_equal(bpfmap_update_elem(w8, &k8, &v8, 0), 0);
		v8 = 0;
		assert_errno(bpfmap_lookup_elem(w8, &k8, &v8), EPERM);
		assert_int_equal(v8, 0);
		bpfmap_free(w8);
	}

	struct bpfmap *wop = must_create(BPFMAP_TYPE_HASH, 4, 4, 4,
					 variant_flags(state) | BPFMAP_F_WRONLY_PROG);
	assert_int_equal(bpfmap_update_elem(wop, &k, &v, 0), 0);
	errno = 0;
	assert_null(bpfmap_lookup(wop, &k));
	assert_int_equal(errno, EPERM);
	assert_int_equal(bpfmap_lookup_elem(wop, &k, &v), 0); /* syscall view may read */
	bpfmap_free(wop);
}

static void test_program_view(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 16, 8, variant_flags(state));
	uint32_t k = 3;
	uint64_t v[2] = { 10, 20 }, out[2];

	bpfmap_read_lock();
	errno = 0;
	assert_null(bpfmap_lookup(map, &k));
	assert_int_equal(errno, ENOENT);
	bpfmap_read_unlock();

	assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_ANY), 0);
	bpfmap_read_lock();
	uint64_t *p = bpfmap_lookup(map, &k);
	assert_non_null(p);
	assert_int_equal(p[0], 10);
	__atomic_fetch_add(&p[1], 5, __ATOMIC_RELAXED);
	/* Nested sections are allowed. */
	bpfmap_read_lock();
	assert_ptr_equal(bpfmap_lookup(map, &k), p);
	bpfmap_read_unlock();
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(map, &k, out), 0);
	assert_int_equal(out[1], 25);

	/* An update writes in place: the pointer sees the new value. */
	v[0] = 11;
	assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_EXIST), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(map, &k);
	assert_int_equal(p[0], 11);
	/* A deleted element stays readable until the section ends. */
	assert_int_equal(bpfmap_delete_elem(map, &k), 0);
	assert_int_equal(p[0], 11);
	assert_null(bpfmap_lookup(map, &k));
	bpfmap_read_unlock();
	bpfmap_free(map);
}

/* bpfmap_lookup_func(): the same answers as bpfmap_lookup(), errno
 * included, for every key-size class; EINVAL for no map, EPERM through it
 * for a BPFMAP_F_WRONLY_PROG map. */
static void test_lookup_func(void **state)
{
	static const uint32_t key_sizes[] = { 4, 8, 5, 16, 64, 300 };
	uint8_t key[300] = { 0 };
	uint64_t v = 0;

	errno = 0;
	assert_null(bpfmap_lookup_func(NULL));
	assert_int_equal(errno, EINVAL);
	for (size_t s = 0; s < sizeof(key_sizes) / sizeof(key_sizes[0]); s++) {
		uint32_t ks = key_sizes[s];
		struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, 8, 256, variant_flags(state));
		bpfmap_lookup_fn fn = bpfmap_lookup_func(map);

		assert_non_null(fn);
		for (uint32_t i = 0; i < 200; i += 2) {
			memcpy(key, &i, 4);
			v = i + 1;
			assert_int_equal(bpfmap_update_elem(map, key, &v, BPFMAP_NOEXIST), 0);
		}
		bpfmap_read_lock();
		for (uint32_t i = 0; i < 200; i++) {
			uint64_t *p;
			int err;

			memcpy(key, &i, 4);
			errno = 0;
			p = fn(map, key);
			err = errno;
			assert_ptr_equal(p, bpfmap_lookup(map, key));
			if (i % 2) {
				assert_null(p);
				assert_int_equal(err, ENOENT);
			} else {
				assert_non_null(p);
				assert_int_equal(*p, i + 1);
			}
		}
		bpfmap_read_unlock();
		bpfmap_free(map);
	}

	struct bpfmap *wop = must_create(BPFMAP_TYPE_HASH, 4, 8, 4,
					 variant_flags(state) | BPFMAP_F_WRONLY_PROG);
	bpfmap_lookup_fn fn = bpfmap_lookup_func(wop);

	assert_int_equal(bpfmap_update_elem(wop, key, &v, 0), 0);
	assert_non_null(fn);
	errno = 0;
	assert_null(fn(wop, key));
	assert_int_equal(errno, EPERM);
	bpfmap_free(wop);
}

/* Every key-size class (hash paths: jhash, jhash2, XXH3) round-trips. */
static void test_key_value_sizes(void **state)
{
	static const uint32_t key_sizes[] = { 1, 2, 3, 4, 7, 8, 12, 13, 16, 63, 64, 65, 100, 1024 };
	static const uint32_t value_sizes[] = { 1, 5, 8, 100 };

	for (size_t a = 0; a < sizeof(key_sizes) / sizeof(key_sizes[0]); a++)
		for (size_t b = 0; b < sizeof(value_sizes) / sizeof(value_sizes[0]); b++) {
			uint32_t ks = key_sizes[a], vs = value_sizes[b];
			uint32_t n = ks == 1 ? 200 : 300;
			struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, vs, n,
							 variant_flags(state));
			unsigned char *key = calloc(1, ks), *val = malloc(vs), *out = malloc(vs);

			for (uint32_t i = 0; i < n; i++) {
				memcpy(key, &i, ks < 4 ? ks : 4);
				memset(val, (int)(i * 7 + 1), vs);
				assert_int_equal(bpfmap_update_elem(map, key, val, BPFMAP_NOEXIST), 0);
			}
			for (uint32_t i = 0; i < n; i++) {
				memcpy(key, &i, ks < 4 ? ks : 4);
				memset(val, (int)(i * 7 + 1), vs);
				assert_int_equal(bpfmap_lookup_elem(map, key, out), 0);
				assert_memory_equal(out, val, vs);
			}
			assert_int_equal(walk_count(map, ks), n);
			free(key);
			free(val);
			free(out);
			bpfmap_free(map);
		}
}

/* ZERO_SEED: the same inserts give the same layout, so the same walk order. */
static void test_zero_seed_deterministic(void **state)
{
	uint32_t flags = variant_flags(state) | BPFMAP_F_ZERO_SEED;
	struct bpfmap *a = must_create(BPFMAP_TYPE_HASH, 4, 4, 128, flags);
	struct bpfmap *b = must_create(BPFMAP_TYPE_HASH, 4, 4, 128, flags);
	uint32_t ka, kb;

	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(bpfmap_update_elem(a, &i, &i, 0), 0);
		assert_int_equal(bpfmap_update_elem(b, &i, &i, 0), 0);
	}
	int ra = bpfmap_get_next_key(a, NULL, &ka), rb = bpfmap_get_next_key(b, NULL, &kb);
	uint32_t n = 0;
	while (ra == 0 && rb == 0) {
		assert_int_equal(ka, kb);
		n++;
		ra = bpfmap_get_next_key(a, &ka, &ka);
		rb = bpfmap_get_next_key(b, &kb, &kb);
	}
	assert_int_equal(ra, rb);
	assert_int_equal(n, 100);
	bpfmap_free(a);
	bpfmap_free(b);
}

static void test_mem_usage(void **state)
{
	uint32_t flags = variant_flags(state);
	skip_if_chain_forced("the flat table's bytes per element");
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 8, 8, 1000, flags);
	size_t empty = bpfmap_mem_usage(map);

	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(bpfmap_update_elem(map, &i, &i, 0), 0);
	size_t full = bpfmap_mem_usage(map);
	if (flags & BPFMAP_F_NO_PREALLOC) {
		size_t now = full;

		assert_true(full >= empty + 1000 * 16);
		/* It follows the elements: once the deleted ones are freed
		 * after their grace period (liburcu's worker, within a few
		 * of its 10 ms rounds), it falls back. */
		for (uint64_t i = 0; i < 1000; i++)
			assert_int_equal(bpfmap_delete_elem(map, &i), 0);
		for (int tries = 0; tries < 500 && now > empty + (full - empty) / 8; tries++) {
			usleep(10 * 1000);
			now = bpfmap_mem_usage(map);
		}
		assert_true(now <= empty + (full - empty) / 8);
	} else {
		/* Preallocated: the home slots from the start, and the
		 * overflow nodes a full map needs (about 14% of its keys)
		 * once touched; but a map this small takes its pool from the
		 * heap, held whole from the start, 1024 spare nodes and more
		 * (test_flat's test_mem_usage has the 24 bytes an element of
		 * maps whose pool is address space until used).  Less than
		 * the kernel's 80 all the same. */
		assert_true(empty >= 1000 * 16 && full >= empty);
		assert_true(full <= 1000 * 80);
		/* Churn touches no more than it reuses: every key replaced
		 * twice over. */
		for (uint64_t i = 0; i < 2000; i++) {
			uint64_t k = i + 1000;

			assert_int_equal(bpfmap_delete_elem(map, &i), 0);
			assert_int_equal(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), 0);
		}
		assert_true(bpfmap_mem_usage(map) <= full + full / 4 + (256 << 10)); /* + spares */
	}
	bpfmap_free(map);
}

/* The same in full maps of word keys, where many keys lie away from their
 * home bucket and deletes leave their slots' words flipped (flat.h, "Matching
 * by key"): present, deleted and never-inserted keys mixed in each call. */
static void test_lookup_bulk_full(void **state)
{
	enum { MAX = 4096, N = 3 * MAX, CALL = 61 };

	for (uint32_t ks = 4; ks <= 8; ks += 4) {
		struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, 8, MAX, variant_flags(state));
		unsigned char *keys = calloc(N, ks);
		void **values = calloc(N, sizeof(*values)), **singles = calloc(N, sizeof(*singles));
		uint32_t expect = 0;
		int found = 0;

		assert_non_null(keys);
		assert_non_null(values);
		assert_non_null(singles);
		for (uint32_t i = 0; i < N; i++) {
			uint64_t k = (uint64_t)i * 0x9e3779b97f4a7c15ull;

			memcpy(keys + (size_t)i * ks, &k, ks);
			if (i < MAX)
				assert_int_equal(bpfmap_update_elem(map, keys + (size_t)i * ks, &k, 0), 0);
		}
		for (uint32_t i = 0; i < MAX; i += 5) /* a fifth deleted */
			assert_int_equal(bpfmap_delete_elem(map, keys + (size_t)i * ks), 0);
		bpfmap_read_lock();
		for (uint32_t i = 0; i < N; i += CALL) {
			uint32_t n = N - i < CALL ? N - i : CALL;
			int r = bpfmap_lookup_bulk(map, keys + (size_t)i * ks, n, values + i);

			found += r > 0 ? r : 0;
		}
		for (uint32_t i = 0; i < N; i++) {
			singles[i] = bpfmap_lookup(map, keys + (size_t)i * ks);
			expect += singles[i] != NULL;
		}
		bpfmap_read_unlock(); /* assert outside: a failing one leaves */
		for (uint32_t i = 0; i < N; i++)
			assert_ptr_equal(values[i], singles[i]);
		assert_int_equal(expect, MAX - (MAX + 4) / 5);
		assert_int_equal(found, expect);
		free(singles);
		free(values);
		free(keys);
		bpfmap_free(map);
	}
}

/* bpfmap_lookup_bulk agrees with bpfmap_lookup key by key, for every hash
 * path and for counts that are not a multiple of its internal chunk. */
static void test_lookup_bulk(void **state)
{
	static const uint32_t key_sizes[] = { 4, 8, 13, 64 };

	for (size_t s = 0; s < sizeof(key_sizes) / sizeof(key_sizes[0]); s++) {
		uint32_t ks = key_sizes[s], n = 37;
		struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, 8, 64, variant_flags(state));
		unsigned char *keys = calloc(n, ks);
		void *values[37];

		for (uint32_t i = 0; i < n; i++) {
			memcpy(keys + (size_t)i * ks, &i, 4);
			uint64_t v = i * 10;
			if (i % 3) /* a third of the keys stay absent */
				assert_int_equal(bpfmap_update_elem(map, keys + (size_t)i * ks, &v, 0), 0);
		}
		bpfmap_read_lock();
		assert_int_equal(bpfmap_lookup_bulk(map, keys, n, values), n - (n + 2) / 3);
		for (uint32_t i = 0; i < n; i++) {
			assert_ptr_equal(values[i], bpfmap_lookup(map, keys + (size_t)i * ks));
			if (values[i])
				assert_int_equal(*(uint64_t *)values[i], i * 10);
		}
		assert_int_equal(bpfmap_lookup_bulk(map, keys, 0, NULL), 0);
		bpfmap_read_unlock();
		assert_errno(bpfmap_lookup_bulk(NULL, keys, n, values), EINVAL);
		assert_errno(bpfmap_lookup_bulk(map, NULL, n, values), EINVAL);
		assert_errno(bpfmap_lookup_bulk(map, keys, n, NULL), EINVAL);
		free(keys);
		bpfmap_free(map);
	}
	struct bpfmap *wop = must_create(BPFMAP_TYPE_HASH, 4, 4, 4,
					 variant_flags(state) | BPFMAP_F_WRONLY_PROG);
	uint32_t k = 0;
	void *v;
	assert_errno(bpfmap_lookup_bulk(wop, &k, 1, &v), EPERM);
	bpfmap_free(wop);
	/* A count the int result could not hold: refused before any key is
	 * read (these arrays hold one). */
	wop = must_create(BPFMAP_TYPE_HASH, 4, 4, 4, variant_flags(state));
	v = &k;
	assert_errno(bpfmap_lookup_bulk(wop, &k, (uint32_t)INT_MAX + 1, &v), E2BIG);
	assert_ptr_equal(v, &k);
	assert_int_equal(bpfmap_lookup_bulk(wop, &k, 1, &v), 0);
	bpfmap_free(wop);
}

/* A reader that keeps grace periods from ending for 20 ms at a time. */
static bool slow_reader_stop;

static void *slow_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&slow_reader_stop, __ATOMIC_ACQUIRE)) {
		bpfmap_read_lock();
		usleep(20000);
		bpfmap_read_unlock();
	}
	return NULL;
}

/* Deleting far faster than reclamation can run (a reader holds grace
 * periods back) does not grow memory without bound: unlinked elements are
 * reclaimed in batches of at most 8192 per stack (four stacks), each after
 * the deleter waited for a grace period (bpfmap_mem_usage counts elements
 * awaiting it). */
static void test_reclaim_backlog_bounded(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, variant_flags(state));
	size_t empty = bpfmap_mem_usage(map), peak = empty;
	const size_t elem_bound = 128; /* bytes per element, header included */
	pthread_t reader;

	slow_reader_stop = false;
	assert_int_equal(pthread_create(&reader, NULL, slow_reader, NULL), 0);
	for (uint32_t i = 0; i < 120000; i++) {
		uint64_t v = i;
		assert_int_equal(bpfmap_update_elem(map, &i, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_delete_elem(map, &i), 0);
		size_t m = bpfmap_mem_usage(map);
		if (m > peak)
			peak = m;
	}
	__atomic_store_n(&slow_reader_stop, true, __ATOMIC_RELEASE);
	pthread_join(reader, NULL);
	if (peak > empty + (16384 + 16 + 1024) * elem_bound)
		fail_msg("peak %zu bytes, empty map %zu", peak, empty);
	bpfmap_free(map);
}

/* mem_usage back to @target within 10 s (reclamation runs in the
 * background); the last value seen otherwise. */
static size_t wait_mem(struct bpfmap *map, size_t target)
{
	size_t m = bpfmap_mem_usage(map);

	for (int i = 0; i < 1000 && m != target; i++) {
		usleep(10000);
		m = bpfmap_mem_usage(map);
	}
	return m;
}

/* Elements left pending when deletes stop (fewer than a batch) are still
 * reclaimed, and so are the ones deleted inside a read-side section (the
 * deleter cannot wait there: it queues them one by one). */
static void test_reclaim_completes(void **state)
{
	uint32_t flags = variant_flags(state);
	const uint32_t n = 6000; /* more than a batch (2048 for this map) */
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 4, 8, n, flags);
	size_t empty = bpfmap_mem_usage(map);

	for (uint32_t i = 0; i < 10; i++) {
		uint64_t v = i;
		assert_int_equal(bpfmap_update_elem(map, &i, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(bpfmap_delete_elem(map, &i), 0);
	/* A preallocated map keeps what it touched, so mem_usage cannot tell:
	 * its reclamation is checked through its internals (tests/test_flat.c,
	 * test_reclaim_idle). */
	if (flags & BPFMAP_F_NO_PREALLOC)
		assert_int_equal(wait_mem(map, empty), empty);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t v = i;
		assert_int_equal(bpfmap_update_elem(map, &i, &v, BPFMAP_NOEXIST), 0);
	}
	bpfmap_read_lock();
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;
		if (i & 1)
			assert_int_equal(bpfmap_delete_elem(map, &i), 0);
		else
			assert_int_equal(bpfmap_lookup_and_delete_elem(map, &i, &v), 0);
	}
	bpfmap_read_unlock();
	assert_int_equal(walk_count(map, 4), 0);
	if (flags & BPFMAP_F_NO_PREALLOC)
		assert_int_equal(wait_mem(map, empty), empty);
	bpfmap_free(map);
}

/*
 * Issue 14, first defect, through the public API only (so that the same
 * test builds against e3e6fd2, where it failed in about 1 trial of 100): a
 * reader holds a program-view pointer to key L in a read-side section;
 * another thread deletes L and inserts K, which is L with the bit flipped
 * that the old flat table's deletes flipped (bit 31 of a 4-byte key, bit 32
 * of an 8-byte one).  The old table took L's deleted slot for K's own and
 * revived it: the pointer then showed K's value, and an increment through
 * it changed K.  The maps are nearly full first, so that inserts probe far.
 */
struct flip_job {
	struct bpfmap *map;
	uint64_t k, l;
};

static void *flip_writer(void *arg)
{
	struct flip_job *j = arg;
	uint64_t v = 2;

	assert_int_equal(bpfmap_delete_elem(j->map, &j->l), 0);
	assert_int_equal(bpfmap_update_elem(j->map, &j->k, &v, BPFMAP_NOEXIST), 0);
	return NULL;
}

static void test_pointer_after_flipped_key(void **state)
{
	uint64_t rng = 0x243f6a8885a308d3ULL;

	for (uint32_t ks = 4; ks <= 8; ks += 4)
		for (uint32_t me = 8; me <= 4096; me *= 8)
			for (int t = 0; t < 100; t++) {
				uint64_t mask = ks == 4 ? UINT32_MAX : UINT64_MAX, v = 1, out, *p;
				uint64_t k = (rng = rng * 6364136223846793005ULL + 1442695040888963407ULL) & mask;
				struct flip_job j = { NULL, k, k ^ (ks == 4 ? 1ULL << 31 : 1ULL << 32) };
				pthread_t th;

				j.map = must_create(BPFMAP_TYPE_HASH, ks, 8, me, variant_flags(state));
				for (uint32_t i = 0; i + 1 < me; i++) {
					uint64_t o, z = 0;

					rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
					o = (rng >> 7) & mask;
					if (o != j.k && o != j.l)
						(void)bpfmap_update_elem(j.map, &o, &z, BPFMAP_NOEXIST);
				}
				assert_int_equal(bpfmap_update_elem(j.map, &j.l, &v, BPFMAP_NOEXIST), 0);
				bpfmap_read_lock();
				p = bpfmap_lookup(j.map, &j.l);
				assert_non_null(p);
				assert_int_equal(pthread_create(&th, NULL, flip_writer, &j), 0);
				assert_int_equal(pthread_join(th, NULL), 0);
				assert_int_equal(*p, 1); /* L's value still, not K's */
				__atomic_fetch_add(p, 10, __ATOMIC_RELAXED);
				bpfmap_read_unlock();
				assert_int_equal(bpfmap_lookup_elem(j.map, &j.k, &out), 0);
				assert_int_equal(out, 2); /* K untouched by the increment */
				assert_errno(bpfmap_lookup_elem(j.map, &j.l, &out), ENOENT);
				bpfmap_free(j.map);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT_TESTS(test_update_flags),
		VARIANT_TESTS(test_full_map),
		VARIANT_TESTS(test_lookup_delete),
		VARIANT_TESTS(test_lookup_delete_flags),
		VARIANT_TESTS(test_null_arguments),
		VARIANT_TESTS(test_access_flags),
		VARIANT_TESTS(test_program_view),
		VARIANT_TESTS(test_lookup_func),
		VARIANT_TESTS(test_lookup_bulk_full),
		VARIANT_TESTS(test_key_value_sizes),
		VARIANT_TESTS(test_zero_seed_deterministic),
		VARIANT_TESTS(test_mem_usage),
		VARIANT_TESTS(test_reclaim_backlog_bounded),
		VARIANT_TESTS(test_reclaim_completes),
		VARIANT_TESTS(test_lookup_bulk),
		VARIANT_TESTS(test_pointer_after_flipped_key),
	};
	return run_test_group(tests);
}
