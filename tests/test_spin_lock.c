/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Values with a struct bpfmap_spin_lock: BPFMAP_F_LOCK copies, the lock word
 * never copied in or out, and F_LOCK readers never see a half-done update
 * made under the lock from the program view.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "test_util.h"

struct locked_value {
	uint64_t a;
	struct bpfmap_spin_lock lock;
	uint32_t pad;
	uint64_t b;
};

static struct bpfmap *locked_map(void **state)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = variant_flags(state),
			   .lock_off = offsetof(struct locked_value, lock));
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, "locked", 4,
					   sizeof(struct locked_value), 16, &opts);
	assert_non_null(map);
	return map;
}

static void test_lock_copies(void **state)
{
	struct bpfmap *map = locked_map(state);
	uint32_t k = 1;
	struct locked_value v = { .a = 1, .lock = { 0xffffffff }, .pad = 7, .b = 2 }, out;

	/* A new element's lock starts unlocked whatever the caller passed. */
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_F_LOCK), 0);
	bpfmap_read_lock();
	struct locked_value *p = bpfmap_lookup(map, &k);
	assert_non_null(p);
	assert_int_equal(p->lock.val, 0);
	bpfmap_read_unlock();

	memset(&out, 0xee, sizeof(out));
	assert_int_equal(bpfmap_lookup_elem_flags(map, &k, &out, BPFMAP_F_LOCK), 0);
	assert_int_equal(out.a, 1);
	assert_int_equal(out.b, 2);
	assert_int_equal(out.pad, 7);
	assert_int_equal(out.lock.val, 0); /* copies show the lock as zero */

	/* Update of an existing element: in place, under the lock, which is
	 * free after (even: the word is a version, sync/spin_lock.h), and
	 * not the caller's word. */
	v.a = 3;
	v.b = 4;
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_EXIST | BPFMAP_F_LOCK), 0);
	assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_ANY), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(map, &k);
	assert_int_equal(p->lock.val & 1, 0);
	assert_int_equal(p->a, 3);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(p->lock.val & 1, 1);
	bpfmap_spin_unlock(&p->lock);
	/* An F_LOCK copy-out reads without the lock: it writes nothing (TSan
	 * builds copy under the lock, tables/value.h). */
	uint32_t word = p->lock.val;
	assert_int_equal(bpfmap_lookup_elem_flags(map, &k, &out, BPFMAP_F_LOCK), 0);
#ifndef __SANITIZE_THREAD__
	assert_int_equal(p->lock.val, word);
#else
	(void)word;
#endif
	assert_int_equal(p->lock.val & 1, 0);
	bpfmap_read_unlock();

	/* Plain lookups also zero the lock field in the copy. */
	memset(&out, 0xee, sizeof(out));
	assert_int_equal(bpfmap_lookup_elem(map, &k, &out), 0);
	assert_int_equal(out.lock.val, 0);
	assert_int_equal(out.b, 4);

	/* Batch lookups honour F_LOCK. */
	BPFMAP_BATCH_OPTS(lock, .elem_flags = BPFMAP_F_LOCK);
	uint32_t keys[16], count = 16, cursor;
	struct locked_value vals[16];
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, keys, vals, &count, &lock), ENOENT);
	assert_int_equal(count, 1);
	assert_int_equal(vals[0].a, 3);
	assert_int_equal(vals[0].lock.val, 0);
	count = 1;
	assert_int_equal(bpfmap_update_batch(map, keys, vals, &count, &lock), 0);
	count = 1;
	assert_int_equal(bpfmap_delete_batch(map, keys, &count, &lock), 0);
	bpfmap_free(map);
}

/* Writers bump a and b together under the value's lock (program view);
 * F_LOCK readers must always see a == b. */
struct race {
	struct bpfmap *map;
	bool stop;
	uint64_t reads;
};

static void *locked_writer(void *arg)
{
	struct race *r = arg;
	uint32_t k = 1;

	for (int i = 0; i < 20000; i++) {
		bpfmap_read_lock();
		struct locked_value *p = bpfmap_lookup(r->map, &k);
		bpfmap_spin_lock(&p->lock);
		__atomic_store_n(&p->a, __atomic_load_n(&p->a, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&p->b, __atomic_load_n(&p->b, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		bpfmap_spin_unlock(&p->lock);
		bpfmap_read_unlock();
	}
	return NULL;
}

static void *locked_reader(void *arg)
{
	struct race *r = arg;
	uint32_t k = 1;
	struct locked_value out;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		assert_int_equal(bpfmap_lookup_elem_flags(r->map, &k, &out, BPFMAP_F_LOCK), 0);
		assert_int_equal(out.a, out.b);
		r->reads++;
	}
	return NULL;
}

static void test_lock_consistency(void **state)
{
	struct race r = { .map = locked_map(state) };
	struct locked_value v = { 0 };
	uint32_t k = 1;
	pthread_t w[2], rd;

	assert_int_equal(bpfmap_update_elem(r.map, &k, &v, 0), 0);
	assert_int_equal(pthread_create(&rd, NULL, locked_reader, &r), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i], NULL, locked_writer, &r), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(rd, NULL);
	assert_int_equal(bpfmap_lookup_elem_flags(r.map, &k, &v, BPFMAP_F_LOCK), 0);
	assert_int_equal(v.a, 40000);
	assert_int_equal(v.b, 40000);
	bpfmap_free(r.map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		VARIANT_TESTS(test_lock_copies),
		VARIANT_TESTS(test_lock_consistency),
	};
	return run_test_group(tests);
}
