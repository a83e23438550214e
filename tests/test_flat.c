/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * White-box tests of the flat layout of preallocated HASH maps (maps/flat.h):
 * the tag arithmetic, geometry and the memory figure, probing past a full
 * home bucket (displacement, wrap-around, max_dist), a short last bucket,
 * deferred reuse of deleted slots (inside and outside read-side sections),
 * batch cursors by home, a small concurrent run where many homes share
 * buckets, the lock-free overwrites of word values (when they are used,
 * what turns them off, and a race with slots changing keys), element
 * indices of long keys, and bpfmap_free with reclamation queued or running.  Maps are made with flat_alloc() directly, so these
 * tests do not depend on how bpfmap_create() routes preallocated maps,
 * except test_routing, which checks that.
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_rng.h"
#include "test_util.h"
#include "hash/hash_select.h"
#include "hash/word_hash.h"
#include "maps/flat.h"

static struct bpfmap *flat_make(uint32_t ks, uint32_t vs, uint32_t me, uint32_t flags,
				int32_t lock_off)
{
	struct map_params p = {
		.type = BPFMAP_TYPE_HASH,
		.key_size = ks,
		.value_size = vs,
		.max_entries = me,
		.map_flags = flags,
		.lock_off = lock_off,
	};
	int err = 0;
	struct bpfmap *m = flat_alloc(&p, &err);

	assert_non_null(m);
	assert_ptr_equal(m->ops, &flat_ops);
	return m;
}

/* The map's hash of a u32 key (in a wider buffer: the compiler sees the
 * 8-byte hash path too, dead for 4-byte keys). */
static uint64_t hash_u32_key(const struct flat *f, uint32_t k)
{
	uint64_t buf = k;

	return flat_hash(f, &buf);
}

/* The next u32 key from *next on whose home bucket is h. */
static uint32_t key_with_home(const struct flat *f, uint32_t h, uint32_t *next)
{
	for (;; (*next)++)
		if (flat_home(f, hash_u32_key(f, *next)) == h)
			return (*next)++;
}

/* Where key k (u32) is stored: its slot index, or UINT32_MAX. */
static uint32_t pos_of(const struct flat *f, uint32_t k)
{
	uint64_t hash = hash_u32_key(f, k);

	return flat_find(f, flat_home(f, hash), flat_place_of(f, hash).tag, &k, 4, k); /* FLAT_NONE: absent */
}

static uint64_t tag_byte(const struct flat *f, uint32_t pos)
{
	return (__atomic_load_n(&f->buckets[pos / 8].tags, __ATOMIC_RELAXED) >> (8 * (pos % 8))) &
	       0xff;
}

static void test_swar(void **state)
{
	(void)state;
	uint64_t x = 0x243f6a8885a308d3ULL;

	for (int n = 0; n < 200000; n++) {
		uint64_t tags = rng_next(&x);
		unsigned t = (unsigned)(x >> 40) & 0xff;

		/* Sprinkle the special values in. */
		if (n & 1)
			tags &= 0x03ff03ff03ff03ffULL | (n & 2 ? 0xff00ff00ff00ff00ULL : 0);
		if (n & 4)
			t |= FLAT_TAG_MIN;
		uint64_t m = flat_match(tags, t * FLAT_BYTES_LO), live = flat_live(tags);

		for (int i = 0; i < 8; i++) {
			unsigned byte = (unsigned)(tags >> (8 * i)) & 0xff;

			assert_int_equal(!!(m & (0x80ULL << (8 * i))), byte == t);
			assert_int_equal(!!(live & (0x80ULL << (8 * i))), byte >= FLAT_TAG_MIN);
			assert_int_equal(m & ~FLAT_BYTES_HI, 0);
		}
	}
	/* Tags are live tags, and home and tag are the fastrange of the hash
	 * onto 128 cells per home. */
	struct flat f;

	memset(&f, 0, sizeof(f));
	for (uint32_t n = 1; n < 5000; n += n < 64 ? 1 : 97) {
		f.n_homes = n;
		for (uint32_t i = 0; i < 4096; i++) {
			uint64_t h = rng_next(&x);
			uint32_t t = flat_place_of(&f, h).tag;
			uint64_t cell = (uint64_t)(((unsigned __int128)h * (128ULL * n)) >> 64);

			assert_true(t >= FLAT_TAG_MIN && t <= 255);
			assert_true(flat_home(&f, h) < n);
			assert_true(cell == (uint64_t)flat_home(&f, h) * 128 + (t - FLAT_TAG_MIN));
		}
	}
}

static void test_geometry(void **state)
{
	(void)state;
	static const uint32_t sizes[][2] = { { 8, 8 }, { 4, 8 }, { 4, 4 }, { 1, 1 }, { 16, 8 },
					     { 16, 16 }, { 32, 8 }, { 64, 8 }, { 4, 100 },
					     { 100, 4 }, { 128, 128 }, { 1024, 8 }, { 8, 1000 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t ks = sizes[i][0], vs = sizes[i][1], me = 20000;
		struct bpfmap *m = flat_make(ks, vs, me, 0, -1);
		struct flat *f = to_flat(m);
		size_t kv = ROUND_UP(ks, 8) + ROUND_UP(vs, 8);
		uint32_t kstride = ks <= 4 ? 4 : ROUND_UP(ks, 8);
		double per = (double)bpfmap_mem_usage(m) / me;

		assert_true(f->n_slots > me);
		assert_true(f->n_slots <= (uint64_t)me * 8 / 7 + 1);
		assert_int_equal(f->n_buckets, (f->n_slots + 7) / 8);
		assert_int_equal(f->key_stride, kstride);
		assert_int_equal(f->value_stride, ROUND_UP(vs, 8));
		assert_int_equal(f->cursor_end, 32768);
		assert_true(per <= (double)kv + 16);
		if (ks == 8 && vs == 8)
			assert_true(per <= 24.0);
		print_message("  key %4u value %4u: %u slots (%.3f x max_entries), %.2f B/elem "
			      "(budget %zu)\n", ks, vs, f->n_slots, (double)f->n_slots / me, per,
			      ks == 8 && vs == 8 ? (size_t)24 : kv + 16);
		/* The exact figure: everything allocated. */
		size_t want = sizeof(*f) + ROUND_UP((size_t)f->n_buckets * 16, 64) +
			      (size_t)f->n_buckets * 4 + 63 + (size_t)f->n_buckets * 8 * kstride +
			      63 + (size_t)f->n_slots * ROUND_UP(vs, 8) + 63 +
			      3 * 8 * (size_t)f->bits_words +
			      (ks > 8 ? (size_t)f->n_buckets * 8 * 4 : 0) + /* element indices */
			      sizeof(struct hash_params) + /* the hash's parameters */
			      count_mem(&f->count);
		assert_int_equal(bpfmap_mem_usage(m), want);
		bpfmap_free(m);
	}
	/* 1M entries of 8 + 8 bytes, the memory target. */
	struct bpfmap *m = flat_make(8, 8, 1000000, 0, -1);
	double per = (double)bpfmap_mem_usage(m) / 1000000;
	print_message("  1M x (8 + 8): %.2f B/elem\n", per);
	assert_true(per <= 24.0);
	bpfmap_free(m);
}

/* Tiny maps: a short last bucket whose missing slots are never used. */
static void test_short_bucket(void **state)
{
	(void)state;
	for (uint32_t me = 1; me <= 20; me++) {
		struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
		struct flat *f = to_flat(m);
		uint64_t v;

		assert_true(f->n_slots >= me + 1);
		for (uint32_t k = 0; k < me; k++) {
			v = k * 10;
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		}
		uint32_t k = me;
		assert_errno(bpfmap_update_elem(m, &k, &v, BPFMAP_ANY), E2BIG);
		assert_int_equal(walk_count(m, 4), me);
		for (k = 0; k < me; k++) {
			uint32_t pos = pos_of(f, k);

			assert_true(pos < f->n_slots);
			assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
			assert_int_equal(v, k * 10);
		}
		/* The reserved tail of the last bucket stays BUSY. */
		for (uint32_t pos = f->n_slots; pos < f->n_buckets * 8; pos++)
			assert_int_equal(tag_byte(f, pos), FLAT_BUSY);
		bpfmap_free(m);
	}
}

/* Fill home 0 past its bucket: later keys go to bucket 1, 2, ... and
 * max_dist(0) follows; all of them are found, walked and batched. */
static void test_displacement(void **state)
{
	(void)state;
	const uint32_t me = 200;
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t next = 0, keys[20];
	uint64_t v;

	for (int i = 0; i < 20; i++) {
		keys[i] = key_with_home(f, 0, &next);
		v = keys[i] + 1;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		uint32_t pos = pos_of(f, keys[i]);
		assert_int_equal(pos / 8, (uint32_t)i / 8); /* first EMPTY from home on */
		assert_int_equal(flat_max_dist(f, 0), (uint32_t)i / 8);
	}
	for (int i = 0; i < 20; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, keys[i] + 1);
	}
	/* Other homes' keys share bucket 1 and 2 with home 0's. */
	uint32_t k1 = key_with_home(f, 1, &next), k2 = key_with_home(f, 2, &next);
	v = 7;
	assert_int_equal(bpfmap_update_elem(m, &k1, &v, 0), 0);
	assert_int_equal(bpfmap_update_elem(m, &k2, &v, 0), 0);
	assert_int_equal(pos_of(f, k1) / 8, 2); /* bucket 1 is full of home 0 */
	assert_int_equal(pos_of(f, k2) / 8, 2);
	assert_int_equal(flat_max_dist(f, 1), 1);
	assert_int_equal(flat_max_dist(f, 2), 0);
	assert_int_equal(walk_count(m, 4), 22);

	/* Batch by home: home 0's 20 elements come in one call or not at all. */
	uint32_t bk[32], cursor = 0, count = 19;
	uint64_t bv[32];
	assert_errno(bpfmap_lookup_batch(m, NULL, &cursor, bk, bv, &count, NULL), ENOSPC);
	assert_int_equal(count, 0);
	assert_int_equal(cursor, 0);
	count = 20;
	assert_int_equal(bpfmap_lookup_batch(m, NULL, &cursor, bk, bv, &count, NULL), 0);
	assert_int_equal(count, 20);
	assert_int_equal(cursor, 1);
	for (int i = 0; i < 20; i++)
		assert_int_equal(bv[i], bk[i] + 1);
	count = 1;
	assert_int_equal(bpfmap_lookup_batch(m, &cursor, &cursor, bk, bv, &count, NULL), 0);
	assert_int_equal(count, 1);
	assert_int_equal(bk[0], k1);
	assert_int_equal(cursor, 2);

	/* Deleting a displaced key: its slot waits for a grace period. */
	uint32_t pos = pos_of(f, keys[12]);
	assert_int_equal(bpfmap_delete_elem(m, &keys[12]), 0);
	uint64_t t = tag_byte(f, pos);
	assert_true(t == FLAT_WAIT || t == FLAT_QUEUED);
	assert_errno(bpfmap_lookup_elem(m, &keys[12], &v), ENOENT);
	rcu_wait_deferred();
	flat_kick(f);
	rcu_wait_deferred();
	assert_int_equal(tag_byte(f, pos), FLAT_EMPTY);
	assert_int_equal(flat_dead_total(f), 0);
	/* Re-inserted, it takes the first EMPTY slot from home: the same one. */
	assert_int_equal(bpfmap_update_elem(m, &keys[12], &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(pos_of(f, keys[12]), pos);
	bpfmap_free(m);
}

/* The last home spills into bucket 0 (the table is cyclic).  A map with
 * enough entries that homes and buckets coincide (no overflow buckets). */
static void test_wraparound(void **state)
{
	(void)state;
	const uint32_t me = 8000;
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t last = f->n_buckets - 1, next = 0, keys[24], room;
	uint64_t v = 1;

	assert_int_equal(f->n_homes, f->n_buckets);
	room = f->n_slots - last * 8; /* real slots in the last bucket */
	assert_true(room < 8);
	for (uint32_t i = 0; i < room + 3; i++) {
		keys[i] = key_with_home(f, last, &next);
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = room; i < room + 3; i++)
		assert_int_equal(pos_of(f, keys[i]) / 8, 0);
	assert_int_equal(flat_max_dist(f, last), 1);
	for (uint32_t i = 0; i < room + 3; i++)
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
	/* The walk finds the wrapped keys in bucket 0, first. */
	uint32_t first;
	assert_int_equal(bpfmap_get_next_key(m, NULL, &first), 0);
	assert_int_equal(first, keys[room]);
	assert_int_equal(walk_count(m, 4), room + 3);
	/* The batch of the last home holds them all. */
	uint32_t bk[32], cursor = last, count = 32;
	uint64_t bv[32];
	assert_errno(bpfmap_lookup_batch(m, &cursor, &cursor, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, room + 3);
	assert_int_equal(cursor, f->cursor_end);
	bpfmap_free(m);
}

/* A small map: a few homes, then overflow buckets, where a home's keys go
 * once the homes after it are full. */
static void test_overflow_buckets(void **state)
{
	(void)state;
	const uint32_t me = 20;
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t next = 0, keys[20], lasth = f->n_homes - 1;
	uint64_t v = 1;

	assert_true(f->n_homes < f->n_buckets);
	assert_true(f->n_slots - me >= 1024);
	for (uint32_t i = 0; i < me; i++) {
		keys[i] = key_with_home(f, lasth, &next);
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(pos_of(f, keys[i]) / 8, lasth + i / 8);
	}
	assert_int_equal(flat_max_dist(f, lasth), (me - 1) / 8);
	assert_int_equal(walk_count(m, 4), me);
	uint32_t bk[20], cursor = lasth, count = 20;
	uint64_t bv[20];
	assert_errno(bpfmap_lookup_batch(m, &cursor, &cursor, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, me);
	assert_int_equal(cursor, 32);
	bpfmap_free(m);
}

/* Every key in one home: max_dist spans the table; E2BIG at max_entries. */
static void test_one_home(void **state)
{
	(void)state;
	const uint32_t me = 40;
	struct bpfmap *m = flat_make(4, 4, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t next = 0, keys[40], v;

	for (uint32_t i = 0; i < me; i++) {
		keys[i] = key_with_home(f, 3, &next);
		v = i;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	}
	uint32_t extra = key_with_home(f, 3, &next);
	assert_errno(bpfmap_update_elem(m, &extra, &v, BPFMAP_NOEXIST), E2BIG);
	assert_int_equal(flat_max_dist(f, 3), me / 8 - 1); /* buckets 3 .. 7 */
	for (uint32_t i = 0; i < me; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, i);
	}
	/* Delete and re-insert, alternating, many times: no spurious E2BIG
	 * (outside a section, an insert waits for reclamation if it must). */
	for (uint32_t r = 0; r < 400; r++) {
		uint32_t i = r % me;

		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
		v = r;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		assert_errno(bpfmap_update_elem(m, &extra, &v, BPFMAP_NOEXIST), E2BIG);
	}
	assert_int_equal(walk_count(m, 4), me);
	/* Every element of home 3 in one batch. */
	uint32_t bk[40], bv[40], cursor = 3, count = 40;
	assert_errno(bpfmap_lookup_and_delete_batch(m, &cursor, &cursor, bk, bv, &count, NULL),
		     ENOENT);
	assert_int_equal(count, me);
	assert_int_equal(walk_count(m, 4), 0);
	bpfmap_free(m);
}

/* Inside a read-side section a deleted slot is not reused while spare slots
 * are EMPTY: a pointer keeps its key's value.  Once the spare slots all
 * await readers (the section itself), an insert reuses a deleted slot at
 * once rather than fail: the map has room.  Large values: few spare slots. */
#define BIG_VALUE 8184

static void test_reuse_in_section(void **state)
{
	(void)state;
	const uint32_t me = 16;
	struct bpfmap *m = flat_make(4, BIG_VALUE, me, 0, -1);
	struct flat *f = to_flat(m);
	uint32_t spare = f->n_slots - me, k;
	uint64_t *v = calloc(1, BIG_VALUE), *ptr[64];

	assert_true(spare >= 8 && spare <= 64);
	for (k = 0; k < me; k++) {
		v[0] = k;
		assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), 0);
	}
	/* Step i deletes key i and inserts key i + me. */
	bpfmap_read_lock();
	for (uint32_t i = 0; i < spare; i++) {
		uint32_t old = i, new = i + me;

		ptr[i] = bpfmap_lookup(m, &old);
		assert_non_null(ptr[i]);
		assert_int_equal(bpfmap_delete_elem(m, &old), 0);
		v[0] = new;
		assert_int_equal(bpfmap_update_elem(m, &new, v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < spare; i++)
		assert_int_equal(*ptr[i], i); /* still the deleted keys' values */
	/* Spare slots exhausted by slots awaiting this very section: the
	 * next inserts reuse deleted slots, and a full map still says E2BIG. */
	for (uint32_t i = spare; i < spare + 4; i++) {
		k = i;
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		k = i + me;
		v[0] = k;
		assert_int_equal(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), 0);
		assert_int_equal(*(uint64_t *)bpfmap_lookup(m, &k), k);
		k = i + 2 * me;
		assert_errno(bpfmap_update_elem(m, &k, v, BPFMAP_NOEXIST), E2BIG);
	}
	bpfmap_read_unlock();
	assert_int_equal(walk_count(m, 4), me);
	/* A sliding window: keys spare + 4 .. spare + 3 + me are left. */
	for (k = 0; k < spare + 4 + me; k++) {
		if (k < spare + 4) {
			assert_errno(bpfmap_lookup_elem(m, &k, v), ENOENT);
			continue;
		}
		assert_int_equal(bpfmap_lookup_elem(m, &k, v), 0);
		assert_int_equal(v[0], k);
	}
	free(v);
	bpfmap_free(m);
}

/*
 * A deleted slot changes key only after a grace period, even for the key it
 * held: a key deleted and inserted again while its slot awaits reclamation
 * takes another slot, and a program-view pointer taken before the delete
 * keeps the deleted value.  Also for the key whose word a delete from the
 * home bucket leaves behind (issue 14, first defect: a key L deleted from
 * its home, then K = the word L's slot then held, inserted: L's pointer
 * showed K's value, and atomics through it changed K).
 */
static void test_no_reuse_under_pointer(void **state)
{
	(void)state;
	struct bpfmap *m = flat_make(4, 8, 100, 0, -1);
	struct flat *f = to_flat(m);
	uint32_t k = 42;
	uint64_t v = 1, *p;

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	uint32_t pos = pos_of(f, k);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, &k);
	assert_non_null(p);
	for (uint64_t r = 2; r < 40; r++) {
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		v = r;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		assert_int_not_equal(pos_of(f, k), pos);
		assert_int_equal(*p, 1); /* the deleted element's value, unchanged */
		assert_int_equal(*(uint64_t *)bpfmap_lookup(m, &k), r);
	}
	bpfmap_read_unlock();
	assert_int_equal(walk_count(m, 4), 1);
	bpfmap_free(m);

	/* Word keys whose home slots take a dead word on delete, the dead
	 * words themselves as keys (a slot left holding them must not be taken
	 * for theirs). */
	for (uint32_t ks = 4; ks <= 8; ks += 4) {
		m = flat_make(ks, 8, 1000, 0, -1);
		f = to_flat(m);
		assert_true(f->match_by_key);
		for (int round = 0; round < 2; round++) {
			uint64_t dead = f->dead_word[round], other = rnd() & (ks == 4 ? ~0U : ~0ULL);
			uint64_t keys[2] = { other, dead }, *ptr[2];

			for (int i = 0; i < 2; i++) {
				v = 100 + i;
				assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_ANY), 0);
			}
			bpfmap_read_lock();
			for (int i = 0; i < 2; i++) {
				ptr[i] = bpfmap_lookup(m, &keys[i]);
				assert_non_null(ptr[i]);
				assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
			}
			/* Insert both again, and every word a delete may have left. */
			uint64_t again[4] = { keys[0], keys[1], f->dead_word[0], f->dead_word[1] };
			for (int i = 0; i < 4; i++) {
				v = 200 + i;
				int ret = bpfmap_update_elem(m, &again[i], &v, BPFMAP_NOEXIST);

				assert_true(ret == 0 || (i >= 2 && ret == -EEXIST));
			}
			for (int i = 0; i < 2; i++) {
				__atomic_fetch_add(ptr[i], 1000, __ATOMIC_RELAXED);
				assert_int_equal(*ptr[i], 1100 + i);
			}
			bpfmap_read_unlock();
			for (int i = 0; i < 4; i++) {
				uint64_t out;
				bool dup = false;

				for (int j = 0; j < i; j++)
					dup |= again[j] == again[i];
				if (dup)
					continue;
				assert_int_equal(bpfmap_lookup_elem(m, &again[i], &out), 0);
				assert_true(out >= 200 && out < 204);
				assert_int_equal(bpfmap_delete_elem(m, &again[i]), 0);
			}
		}
		bpfmap_free(m);
	}
}

/*
 * The dead words of a map that matches by key: dead_word[0]'s home is
 * dead_home, dead_word[1]'s another, and every home slot holds its bucket's
 * dead word at creation; for home counts from the smallest that matches by
 * key on, random parameters and zero-seed ones.
 */
static void test_dead_words(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 7, 8, 9, 15, 16, 17, 100, 1000, 5000, 70000 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (uint32_t ks = 4; ks <= 8; ks += 4) {
			for (int rep = 0; rep < 6; rep++) {
				struct bpfmap *m =
				    flat_make(ks, 8, sizes[i], rep ? 0 : BPFMAP_F_ZERO_SEED, -1);
				struct flat *f = to_flat(m);

				assert_int_equal(f->match_by_key, f->n_homes >= FLAT_MATCH_BY_KEY_MIN);
				if (f->match_by_key) {
					assert_int_equal(
					    flat_home(f, flat_hash(f, &f->dead_word[0])), f->dead_home);
					assert_int_not_equal(
					    flat_home(f, flat_hash(f, &f->dead_word[1])), f->dead_home);
					for (uint32_t pos = 0; pos < f->n_homes * FLAT_SLOTS; pos++)
						assert_true(flat_small_at(f, pos, ks) ==
							    flat_dead_word(f, pos / FLAT_SLOTS));
				}
				bpfmap_free(m);
			}
		}
	}
}

/* Program view and copy-out of word key k (little-endian: its low bytes are
 * the key): present with value v, or absent (v == 0). */
static void check_word(struct bpfmap *m, uint64_t k, uint64_t v)
{
	uint64_t *p, got = 0, out = 0;
	int err;

	/* The section closed before asserting: a failure must not leave it
	 * open for the next test's grace periods to wait on. */
	bpfmap_read_lock();
	errno = 0;
	p = bpfmap_lookup(m, &k);
	err = errno;
	if (p)
		got = *p;
	bpfmap_read_unlock();
	if (!v) {
		assert_null(p);
		assert_int_equal(err, ENOENT);
		assert_int_equal(bpfmap_lookup_elem(m, &k, &out), -ENOENT);
		return;
	}
	assert_non_null(p);
	assert_int_equal(got, v);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, v);
}

/*
 * Matching by key: deleted keys and never-used slots must not match.  Keys,
 * the dead words among them, in the map, deleted (a slot of a key's home
 * gets the bucket's dead word, other slots keep the key), inserted again,
 * deleted again, before and after reclamation; maps too small to match by
 * key.
 */
static void check_match_by_key(uint32_t ks, uint32_t max_entries, uint64_t flags)
{
	struct bpfmap *m = flat_make(ks, 8, max_entries, (uint32_t)flags, -1);
	struct flat *f = to_flat(m);
	uint64_t mask = ks == 4 ? 0xffffffffULL : ~0ULL;
	uint32_t n = max_entries / 2;
	uint64_t keys[64], v;

	assert_int_equal(f->match_by_key, f->n_homes >= FLAT_MATCH_BY_KEY_MIN);
	check_word(m, 0, 0);
	if (f->match_by_key)
		check_word(m, f->dead_word[1], 0);
	if (n < 2)
		n = 2;
	if (n > ARRAY_SIZE(keys))
		n = ARRAY_SIZE(keys);
	for (uint32_t i = 0; i < n; i++) {
		keys[i] = i == 0 ? 0 : i == 1 && f->match_by_key ? f->dead_word[1] : rnd() & mask;
		for (uint32_t j = 0; j < i; j++)
			if (keys[j] == keys[i])
				keys[i] = rnd() & mask, j = UINT32_MAX;
		v = i + 1;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], i + 1);
	/* Delete every other key. */
	for (uint32_t i = 0; i < n; i += 2) {
		uint64_t hash = flat_hash(f, &keys[i]);
		uint32_t h = flat_home(f, hash);
		uint32_t pos = flat_find(f, h, flat_place_of(f, hash).tag, &keys[i], ks, keys[i]);

		assert_int_not_equal(pos, FLAT_NONE);
		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
		if (f->match_by_key && pos / FLAT_SLOTS == h)
			assert_true(flat_small_at(f, pos, ks) == flat_dead_word(f, h));
		else
			assert_true(flat_small_at(f, pos, ks) == keys[i]);
	}
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], i % 2 ? i + 1 : 0);
	/* Back again, with new values. */
	for (uint32_t i = 0; i < n; i += 2) {
		v = 1000 + i;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], i % 2 ? i + 1 : 1000 + i);
	assert_int_equal(walk_count(m, ks), n);
	/* Everything out: nothing matches, before and after reclamation. */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], 0);
	flat_reclaim_sync(f);
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], 0);
	assert_int_equal(walk_count(m, ks), 0);
	bpfmap_free(m);
}

static void test_match_by_key(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 4, 30, 64, 1000 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		for (int rep = 0; rep < 4; rep++) {
			check_match_by_key(4, sizes[i], rep ? 0 : BPFMAP_F_ZERO_SEED);
			check_match_by_key(8, sizes[i], rep ? 0 : BPFMAP_F_ZERO_SEED);
		}
}

/* Cursors: homes, then the kernel's bucket count at the end. */
static void test_cursor(void **state)
{
	(void)state;
	struct bpfmap *m = flat_make(4, 8, 100, 0, -1);
	struct flat *f = to_flat(m);
	uint32_t k = 1, bk[4], cursor, count;
	uint64_t v = 1, bv[4];

	assert_int_equal(f->cursor_end, 128);
	assert_true(f->n_homes < f->cursor_end);
	assert_int_equal(bpfmap_update_elem(m, &k, &v, 0), 0);
	/* Between the last home and the end: nothing, out = end. */
	cursor = f->n_homes;
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, &cursor, &cursor, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, 0);
	assert_int_equal(cursor, 128);
	/* At or past the end: ENOENT, out untouched. */
	cursor = 128;
	uint32_t out = 77;
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, &cursor, &out, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(out, 77);
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, NULL, &out, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, 1);
	assert_int_equal(out, 128);
	bpfmap_free(m);
}

/* Long keys (compares word by word) and a spin-locked value. */
struct lval {
	uint64_t a;
	struct bpfmap_spin_lock lock;
	uint32_t b;
};

static void test_long_keys_locked(void **state)
{
	(void)state;
	const uint32_t ks = 20, me = 300;
	struct bpfmap *m = flat_make(ks, sizeof(struct lval), me, 0, offsetof(struct lval, lock));
	unsigned char key[20];
	struct lval v, out;

	for (uint32_t i = 0; i < me; i++) {
		memset(key, (int)i, ks);
		memcpy(key, &i, 4);
		v = (struct lval){ .a = i, .lock = { 0xffffffff }, .b = i * 3 };
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < me; i++) {
		memset(key, (int)i, ks);
		memcpy(key, &i, 4);
		assert_int_equal(bpfmap_lookup_elem_flags(m, key, &out, BPFMAP_F_LOCK), 0);
		assert_int_equal(out.a, i);
		assert_int_equal(out.b, i * 3);
		assert_int_equal(out.lock.val, 0);
		key[ks - 1] ^= 1; /* differs in the last (padded) word only */
		assert_errno(bpfmap_lookup_elem(m, key, &out), ENOENT);
	}
	assert_int_equal(walk_count(m, ks), me);
	bpfmap_free(m);
}

/* ---- element indices (keys over 8 bytes) -------------------------------- */

/* Key i of test_elements: 16 bytes, i in word 0. */
static void elem_key(unsigned char key[16], uint32_t i)
{
	memset(key, 0x5a, 16);
	memcpy(key, &i, 4);
}

/* The element of key i's slot (in a read-side section: the key is long). */
static uint32_t elem_of_key(const struct flat *f, uint32_t i)
{
	unsigned char key[16];
	uint64_t hash;
	uint32_t pos;

	elem_key(key, i);
	hash = flat_hash(f, key);
	bpfmap_read_lock();
	pos = flat_find(f, flat_home(f, hash), flat_place_of(f, hash).tag, key, 16, 0);
	bpfmap_read_unlock();
	assert_int_not_equal(pos, FLAT_NONE);
	assert_memory_equal(flat_key_at(f, pos), key, 16);
	return flat_elem_of(f, pos);
}

/*
 * Keys inserted in order get elements in that order (the point of the
 * index); deleted slots keep theirs, and reused ones hand the same element
 * to the next key, so live keys' elements stay distinct and below n_slots.
 */
static void test_elements(void **state)
{
	(void)state;
	const uint32_t me = 1000;
	struct bpfmap *m = flat_make(16, 8, me, 0, -1);
	struct flat *f = to_flat(m);
	unsigned char key[16];
	uint8_t *seen = calloc(f->n_slots, 1);
	uint64_t v = 0;

	assert_non_null(f->elems);
	assert_non_null(seen);
	for (uint32_t i = 0; i < me; i++) {
		elem_key(key, i);
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < me; i++)
		assert_int_equal(elem_of_key(f, i), i);
	/* Churn: replace every key, half after a reclamation, half one by one. */
	for (uint32_t round = 1; round <= 4; round++) {
		for (uint32_t i = 0; i < me; i += 2) {
			elem_key(key, i + (round - 1) * me * 2);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
		}
		flat_reclaim_sync(f);
		for (uint32_t i = 0; i < me; i += 2) {
			elem_key(key, i + round * me * 2);
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		for (uint32_t i = 1; i < me; i += 2) { /* one by one, without reclaiming */
			elem_key(key, i + (round - 1) * me * 2);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
			elem_key(key, i + round * me * 2);
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		flat_reclaim_sync(f);
		memset(seen, 0, f->n_slots);
		for (uint32_t i = 0; i < me; i++) {
			uint32_t e = elem_of_key(f, i + round * me * 2);

			assert_true(e < f->n_slots);
			assert_false(seen[e]);
			seen[e] = 1;
		}
	}
	assert_true(__atomic_load_n(&f->next_elem, __ATOMIC_RELAXED) <= f->n_slots);
	free(seen);
	bpfmap_free(m);
}

/* Key i of test_long_lookups: two words set by 4-byte stores, as the
 * benchmark's; the second scatters keys that a sequence in word 0 alone would
 * spread evenly over the homes. */
static void flat_test_key(unsigned char *key, uint32_t i)
{
	uint32_t w1 = i * 0x9e3779b9u;

	memcpy(key, &i, 4);
	memcpy(key + 4, &w1, 4);
}

/*
 * The long-key program-view lookups (specialised for 16, 32, 64, 128 and 256
 * bytes, generic otherwise), their copy-out and bulk forms: hits give the
 * key's own value, absent keys and keys that differ only in their last byte
 * miss, in a full map where twelve keys share home bucket 0 (some past it:
 * the out-of-line path).
 */
static void test_long_lookups(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 12, 16, 24, 32, 64, 100, 128, 256, 600, 1024 };
	const uint32_t me = 600, crowd = 12; /* keys whose home is bucket 0 */
	uint32_t ids[600];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t ks = sizes[s], next = 1u << 20;
		struct bpfmap *m = flat_make(ks, 8, me, 0, -1);
		struct flat *f = to_flat(m);
		unsigned char *key = malloc(ks);
		uint64_t v, out;

		assert_non_null(key);
		memset(key, 0x33, ks);
		for (uint32_t i = 0; i < me; i++) {
			if (i < me - crowd) {
				ids[i] = i;
			} else {
				do
					flat_test_key(key, next++);
				while (flat_home(f, flat_hash(f, key)) != 0);
				ids[i] = next - 1;
			}
			flat_test_key(key, ids[i]);
			v = (uint64_t)ids[i] * 7 + ks;
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		assert_true(flat_max_dist(f, 0) > 0); /* more than 8 homed at 0 */
		bpfmap_read_lock();
		for (uint32_t i = 0; i < me + 50; i++) {
			uint32_t id = i < me ? ids[i] : i - crowd; /* then absent ones */
			uint64_t *p;
			void *vp;

			flat_test_key(key, id);
			p = bpfmap_lookup(m, key);
			if (i >= me) {
				assert_null(p);
				continue;
			}
			assert_non_null(p);
			assert_int_equal(*p, (uint64_t)id * 7 + ks);
			assert_int_equal(bpfmap_lookup_elem(m, key, &out), 0);
			assert_int_equal(out, *p);
			assert_int_equal(bpfmap_lookup_bulk(m, key, 1, &vp), 1);
			assert_ptr_equal(vp, p);
			key[ks - 1] ^= 1; /* the last byte only */
			assert_null(bpfmap_lookup(m, key));
			key[ks - 1] ^= 1;
		}
		bpfmap_read_unlock();
		free(key);
		bpfmap_free(m);
	}
}

/* bpfmap_create(): keys over 8 bytes get the flat table from
 * FLAT_LONG_MIN_ENTRIES (16384) elements on, word keys always, and
 * NO_PREALLOC maps never. */
static void test_routing(void **state)
{
	(void)state;
	static const struct {
		uint32_t ks, me, flags;
		bool flat;
	} cases[] = {
		{ 4, 512, 0, true },
		{ 8, 10000, 0, true },
		{ 16, 16383, 0, false },
		{ 16, 16384, 0, true },
		{ 1024, 20000, 0, true },
		{ 64, 512, 0, false },
		{ 8, 512, BPFMAP_F_NO_PREALLOC, false },
		{ 16, 100000, BPFMAP_F_NO_PREALLOC, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .map_flags = cases[i].flags);
		struct bpfmap *m =
		    bpfmap_create(BPFMAP_TYPE_HASH, "route", cases[i].ks, 8, cases[i].me, &opts);

		assert_non_null(m);
		assert_int_equal(m->ops == &flat_ops, cases[i].flat);
		bpfmap_free(m);
	}
}

/* ---- concurrency: many homes in few buckets ------------------------------ */

#define C_ME 64
#define C_STABLE 24
#define C_THREADS 4

struct cval {
	uint64_t key, seq, check;
};

struct crun {
	struct bpfmap *m;
	uint32_t stable[C_STABLE]; /* never deleted; values overwritten */
	uint32_t churn[96];        /* inserted and deleted */
	uint32_t nchurn;
	int stop;
	uint64_t bad;
};

static uint64_t cval_check(const struct cval *v)
{
	return (v->key * 0x9e3779b97f4a7c15ULL) ^ v->seq;
}

static void *c_writer(void *arg)
{
	struct crun *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x | 1, seq = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		rng_next(&x);
		if (x & 1) {
			uint32_t k = r->stable[(x >> 8) % C_STABLE];
			struct cval v = { k, ++seq, 0 };

			v.check = cval_check(&v);
			if (bpfmap_update_elem(r->m, &k, &v, BPFMAP_EXIST))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		} else {
			uint32_t k = r->churn[(x >> 8) % r->nchurn];
			struct cval v = { k, ++seq, 0 };

			v.check = cval_check(&v);
			if (x & 2) {
				int rc = bpfmap_update_elem(r->m, &k, &v, BPFMAP_NOEXIST);
				if (rc && rc != -EEXIST && rc != -E2BIG)
					__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			} else {
				int rc = bpfmap_delete_elem(r->m, &k);
				if (rc && rc != -ENOENT)
					__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
		}
	}
	return NULL;
}

static void *c_reader(void *arg)
{
	struct crun *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x | 1;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		rng_next(&x);
		uint32_t k = r->stable[(x >> 8) % C_STABLE];
		struct cval v;

		if (x & 1) {
			if (bpfmap_lookup_elem(r->m, &k, &v) || v.key != k || v.check != cval_check(&v))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		} else {
			bpfmap_read_lock();
			struct cval *p = bpfmap_lookup(r->m, &k);
			if (!p || __atomic_load_n(&p->key, __ATOMIC_RELAXED) != k)
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			/* A churn key, then delete it, in the section: the
			 * pointer keeps the key's value to the end. */
			uint32_t c = r->churn[(x >> 8) % r->nchurn];
			p = bpfmap_lookup(r->m, &c);
			if (p) {
				bpfmap_delete_elem(r->m, &c);
				for (int i = 0; i < 50; i++)
					if (__atomic_load_n(&p->key, __ATOMIC_RELAXED) != c)
						__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
			bpfmap_read_unlock();
		}
	}
	return NULL;
}

static void test_concurrent_shared_buckets(void **state)
{
	(void)state;
	struct crun r = { .m = flat_make(4, sizeof(struct cval), C_ME, BPFMAP_F_ZERO_SEED, -1) };
	struct flat *f = to_flat(r.m);
	uint32_t next = 0;
	pthread_t th[C_THREADS];

	/* Stable keys from homes 0 and 1 only: they overflow into 2, 3, ...
	 * where the churn keys (homes 1..4) live too. */
	for (int i = 0; i < C_STABLE; i++) {
		uint32_t k = key_with_home(f, (uint32_t)i % 2, &next);
		struct cval v = { k, 0, 0 };

		v.check = cval_check(&v);
		r.stable[i] = k;
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	for (r.nchurn = 0; r.nchurn < 96; r.nchurn++)
		r.churn[r.nchurn] = key_with_home(f, 1 + r.nchurn % 4, &next);
	for (int i = 0; i < C_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, i < 2 ? c_writer : c_reader, &r), 0);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < C_THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(r.bad, 0);
	/* At rest: every stable key present, the count right. */
	uint32_t n = walk_count(r.m, 4);
	assert_true(n >= C_STABLE && n <= C_ME);
	assert_int_equal(count_elements(&f->count), n);
	bpfmap_free(r.m);
}

/* Run the calling thread on @cpu only; false if it cannot. */
static bool run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

/*
 * Sharded counts (sync/count.h): a full map whose deletes left their
 * credits in another CPU's shard still takes exactly that many inserts from
 * this CPU, then -E2BIG; the lock-free full check says "not full" while
 * credits are out, and the element count stays exact throughout.
 */
static void test_sharded_counts(void **state)
{
	(void)state;
	int cpus = bpfmap_num_possible_cpus();
	uint32_t shards = 1, freed = 3 * COUNT_CHUNK + 5;

	while (shards < (uint32_t)cpus && shards < 64)
		shards *= 2;
	uint32_t me = shards * COUNT_SHARD_MIN;
	cpu_set_t saved;

	if (cpus < 2)
		skip(); /* one CPU: counts are never sharded */
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	if (!run_on_cpu(0) || !CPU_ISSET(1, &saved)) {
		print_message("skipped: needs CPUs 0 and 1 to pin to\n");
		assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
		skip();
	}
	struct bpfmap *m = flat_make(8, 8, me, 0, -1);
	struct flat *f = to_flat(m);
	uint64_t k, v = 1;
	int fails = 0;

	assert_non_null(f->count.shards);
	for (k = 0; k < me; k++)
		fails += bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) != 0;
	k = me;
	fails += bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) != -E2BIG;
	fails += !count_full_quiescent(&f->count);
	/* Deletes on CPU 1: their slots become CPU 1's credits. */
	fails += !run_on_cpu(1);
	for (k = 0; k < freed; k++)
		fails += bpfmap_delete_elem(m, &k) != 0;
	fails += count_elements(&f->count) != me - freed;
	fails += count_full_quiescent(&f->count); /* credits are out */
	/* Inserts on CPU 0 take them back, exactly. */
	fails += !run_on_cpu(0);
	for (k = me; k < me + freed; k++)
		fails += bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) != 0;
	fails += bpfmap_update_elem(m, &k, &v, BPFMAP_ANY) != -E2BIG;
	fails += count_elements(&f->count) != me;
	fails += !count_full_quiescent(&f->count); /* the steal left no credit out */
	fails += flat_dead_total(f) < 0;
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
	assert_int_equal(fails, 0);
	assert_int_equal(walk_count(m, 8), me);
	bpfmap_free(m);
}

/* Updates into a full map: E2BIG for absent keys (decided without the lock
 * for word keys), while present keys are overwritten and NOEXIST/EXIST stay
 * exact; room made by a delete is seen at once. */
static void test_full_map(void **state)
{
	(void)state;
	static const uint32_t key_sizes[] = { 4, 8, 20 };

	for (size_t n = 0; n < ARRAY_SIZE(key_sizes); n++) {
		const uint32_t ks = key_sizes[n], me = 1000;
		struct bpfmap *m = flat_make(ks, 8, me, 0, -1);
		unsigned char key[20] = { 0 };
		uint64_t v, out;

		for (uint32_t i = 0; i < me; i++) {
			memcpy(key, &i, 4);
			v = i;
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		for (uint32_t i = me; i < 2 * me; i++) {
			memcpy(key, &i, 4);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), E2BIG);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), E2BIG);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_EXIST), ENOENT);
		}
		for (uint32_t i = 0; i < me; i++) {
			memcpy(key, &i, 4);
			v = i + 7;
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), 0);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), EEXIST);
			assert_int_equal(bpfmap_lookup_elem(m, key, &out), 0);
			assert_int_equal(out, i + 7);
		}
		for (uint32_t i = 0; i < 100; i++) {
			uint32_t gone = i, fresh = me + i;

			memcpy(key, &gone, 4);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
			memcpy(key, &fresh, 4);
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
			fresh += me;
			memcpy(key, &fresh, 4);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), E2BIG);
		}
		assert_int_equal(walk_count(m, ks), me);
		bpfmap_free(m);
	}
}

/* A full map where one thread deletes and re-inserts key X over and over:
 * another thread's BPF_ANY updates of X must never see E2BIG (X is either
 * present, or absent with room for it), whatever the lock-free probe saw. */
struct frun {
	struct bpfmap *m;
	uint32_t x;
	int stop;
	uint64_t e2big, done;
};

static void *full_churn(void *arg)
{
	struct frun *r = arg;
	uint64_t v = 1;

	for (int i = 0; i < 200000; i++) {
		bpfmap_delete_elem(r->m, &r->x);
		bpfmap_update_elem(r->m, &r->x, &v, BPFMAP_ANY);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *full_updater(void *arg)
{
	struct frun *r = arg;
	uint64_t v = 2;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (bpfmap_update_elem(r->m, &r->x, &v, BPFMAP_ANY) == -E2BIG)
			r->e2big++;
		r->done++;
	}
	return NULL;
}

static void test_full_map_concurrent(void **state)
{
	(void)state;
	const uint32_t me = 64;
	struct frun r = { .m = flat_make(4, 8, me, 0, -1), .x = 5 };
	pthread_t a, b;
	uint64_t v = 0;

	for (uint32_t k = 0; k < me; k++)
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(pthread_create(&a, NULL, full_churn, &r), 0);
	assert_int_equal(pthread_create(&b, NULL, full_updater, &r), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	print_message("  %llu updates of a churned key in a full map\n",
		      (unsigned long long)r.done);
	assert_int_equal(r.e2big, 0);
	bpfmap_free(r.m);
}

/* ---- lock-free overwrites (flat_update.c) ------------------------------- */

static uint32_t stores_state(const struct flat *f)
{
	return __atomic_load_n(&f->stores, __ATOMIC_ACQUIRE);
}

/* Can this process use membarrier as the library does?  Without it every
 * overwrite takes the lock. */
static bool membarrier_usable(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/* A u32 -> u64 map of keys 0 .. n - 1, value k + 1000. */
static struct bpfmap *filled_u64_map(uint32_t me, uint32_t n)
{
	struct bpfmap *m = flat_make(4, 8, me, 0, -1);

	for (uint32_t k = 0; k < n; k++) {
		uint64_t v = k + 1000;

		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	return m;
}

struct held_update {
	struct bpfmap *m;
	uint32_t key;
	uint64_t value;
	int ret;
	int ready; /* atomic */
	int go;    /* atomic */
	int done;  /* atomic */
};

static void *held_update_thread(void *arg)
{
	struct held_update *u = arg;
	uint32_t other = u->key + 1;
	uint64_t v = 1;

	/* A thread's first overwrite takes the lock (and opens its window
	 * record for the next ones). */
	u->ret = bpfmap_update_elem(u->m, &other, &v, BPFMAP_EXIST);
	__atomic_store_n(&u->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&u->go, __ATOMIC_ACQUIRE))
		sched_yield();
	if (!u->ret)
		u->ret = bpfmap_update_elem(u->m, &u->key, &u->value, BPFMAP_EXIST);
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* An overwrite of a present key with a word value does not take the home's
 * lock: it completes while the test holds that lock. */
static void test_lockfree_overwrite(void **state)
{
	(void)state;
	struct bpfmap *m = filled_u64_map(100, 100);
	struct flat *f = to_flat(m);
	uint32_t k = 7, h = flat_home(f, hash_u32_key(f, k));
	struct held_update u = { .m = m, .key = k, .value = 77 };
	uint64_t v;
	pthread_t th;

	assert_int_equal(stores_state(f), FLAT_STORES_ON);
	if (!membarrier_usable()) {
		print_message("  no membarrier: overwrites take the lock\n");
		bpfmap_free(m);
		skip();
	}
	assert_int_equal(pthread_create(&th, NULL, held_update_thread, &u), 0);
	while (!__atomic_load_n(&u.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	flat_lock(&f->locks[h]);
	__atomic_store_n(&u.go, 1, __ATOMIC_RELEASE);
	int done = 0;
	for (int i = 0; i < 5000 && !(done = __atomic_load_n(&u.done, __ATOMIC_ACQUIRE)); i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	flat_unlock(&f->locks[h]);
	pthread_join(th, NULL);
	assert_int_equal(done, 1); /* it did not wait for the lock */
	assert_int_equal(u.ret, 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 77);
	/* Deletes, fresh inserts and their reclamation leave them on. */
	for (k = 0; k < 50; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	flat_reclaim_sync(f);
	for (k = 1000; k < 1050; k++) {
		v = k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(stores_state(f), FLAT_STORES_ON);
	for (k = 1000; k < 1050; k++) {
		v = 2 * k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_ANY), 0);
		assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
		assert_int_equal(v, 2 * k);
	}
	bpfmap_free(m);
}

/* What rewrites or returns a deleted slot's value before every lock-free
 * store that checked it could have landed turns them off for good:
 * lookup-and-delete (single and batch), and the reuse of a deleted slot
 * inside a read-side section.  A key deleted and inserted again takes a new
 * slot, which leaves them on. */
static void test_lockfree_stores_off(void **state)
{
	(void)state;
	struct bpfmap *m = filled_u64_map(100, 100);
	struct flat *f = to_flat(m);
	uint32_t k = 42, keys[100], cursor;
	uint64_t v = 5, values[100];

	/* Delete and insert again. */
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	assert_int_equal(stores_state(f), FLAT_STORES_ON);
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(stores_state(f), FLAT_STORES_ON);
	v = 6;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0); /* lock-free */
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 6);
	bpfmap_free(m);

	/* Lookup-and-delete. */
	m = filled_u64_map(100, 100);
	f = to_flat(m);
	assert_int_equal(bpfmap_lookup_and_delete_elem(m, &k, &v), 0);
	assert_int_equal(v, k + 1000);
	assert_int_equal(stores_state(f), FLAT_STORES_OFF);
	bpfmap_free(m);

	/* Its batch form. */
	m = filled_u64_map(100, 100);
	f = to_flat(m);
	uint32_t count = 100;
	int ret = bpfmap_lookup_and_delete_batch(m, NULL, &cursor, keys, values, &count, NULL);
	assert_true(ret == 0 || (ret < 0 && errno == ENOENT));
	assert_int_equal(count, 100);
	assert_int_equal(stores_state(f), FLAT_STORES_OFF);
	bpfmap_free(m);

	/* The in-section reuse: all spare slots await this very section. */
	const uint32_t me = 16;
	m = filled_u64_map(me, me);
	f = to_flat(m);
	uint32_t spare = f->n_slots - me;
	bpfmap_read_lock();
	for (uint32_t i = 0; i < spare; i++) {
		k = i;
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		k = i + me;
		v = k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(stores_state(f), FLAT_STORES_ON); /* EMPTY slots so far */
	k = spare;
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	k = spare + me;
	v = k;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(stores_state(f), FLAT_STORES_OFF);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, k);
	bpfmap_free(m);
}

struct window_waiter {
	struct bpfmap *m;
	bool lookup_and_delete; /* else delete and reclaim */
	int done;               /* atomic */
};

static void *window_waiter_thread(void *arg)
{
	struct window_waiter *w = arg;
	uint32_t k = 3;
	uint64_t v;

	if (w->lookup_and_delete) {
		assert_int_equal(bpfmap_lookup_and_delete_elem(w->m, &k, &v), 0);
	} else {
		assert_int_equal(bpfmap_delete_elem(w->m, &k), 0);
		flat_reclaim_sync(to_flat(w->m)); /* the deleted slot turns EMPTY */
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A lock-free store's window, held open as if its thread were preempted
 * between its check and its store: neither reclamation nor turning the
 * stores off gets past it. */
static void test_lockfree_window_waited(void **state)
{
	(void)state;
	if (!membarrier_usable())
		skip();
	for (int i = 0; i < 2; i++) {
		struct window_waiter w = { .m = filled_u64_map(100, 100),
					   .lookup_and_delete = i == 1 };
		struct flat_window *win = flat_window_open();
		pthread_t th;

		assert_non_null(win);
		assert_int_equal(pthread_create(&th, NULL, window_waiter_thread, &w), 0);
		for (int n = 0; n < 200; n++) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
			assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
		}
		flat_window_close(win);
		pthread_join(th, NULL);
		assert_int_equal(w.done, 1);
		assert_int_equal(stores_state(to_flat(w.m)),
				 i == 1 ? FLAT_STORES_OFF : FLAT_STORES_ON);
		bpfmap_free(w.m);
	}
}

struct window_holder {
	int opened; /* atomic */
	int release; /* atomic */
};

static void *window_holder_thread(void *arg)
{
	struct window_holder *h = arg;
	struct flat_window *win = flat_window_open();

	assert_non_null(win);
	__atomic_store_n(&h->opened, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE))
		sched_yield();
	flat_window_close(win);
	return NULL;
}

/* A child of fork() does not wait for a window another thread of its parent
 * held at the fork: that thread does not exist in the child. */
static void test_lockfree_window_fork(void **state)
{
	(void)state;
	struct window_holder h = { 0 };
	struct bpfmap *m;
	pthread_t th;
	int status;

	if (!membarrier_usable())
		skip();
#ifdef BPFMAP_TSAN
	/* The child starts a thread (liburcu's fork handler restarts its
	 * call_rcu worker there), which TSan refuses after a multi-threaded
	 * fork; the release and ASan builds run this. */
	print_message("skipped under ThreadSanitizer: it cannot follow a child of a "
		      "multi-threaded fork that starts threads\n");
	skip();
#endif
	m = filled_u64_map(100, 100);
	assert_int_equal(pthread_create(&th, NULL, window_holder_thread, &h), 0);
	while (!__atomic_load_n(&h.opened, __ATOMIC_ACQUIRE))
		sched_yield();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint32_t k = 3;
		uint64_t v;

		/* Turning the stores off waits for windows: not for that one. */
		_exit(bpfmap_lookup_and_delete_elem(m, &k, &v) == 0 && v == 1003 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	bpfmap_free(m);
}

/*
 * Lock-free overwrites racing deletes whose slots are reclaimed and refilled
 * with other keys: every value stays its own key's.  Values carry their key
 * in the low 32 bits; the overwriters write keys near the inserter's front,
 * which it deletes behind itself, so slots change keys under them all the
 * time (reclaimed after grace periods and refilled, never revived).  A store
 * landing in a slot that changed keys shows up as a value whose low bits name
 * another key.
 */
#define LF_WINDOW 200
#define LF_ME 256
#define LF_WRITERS 2

struct lf_run {
	struct bpfmap *m;
	uint32_t front; /* atomic: keys front - LF_WINDOW .. front - 1 are present */
	int stop;       /* atomic */
	uint64_t bad;   /* atomic */
};

static void *lf_overwriter(void *arg)
{
	struct lf_run *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x, n = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		uint32_t front = __atomic_load_n(&r->front, __ATOMIC_ACQUIRE);
		uint32_t k = front - 1 - (uint32_t)(rng_next(&x) % LF_WINDOW);
		uint64_t v = (++n << 32) | k;

		int ret = bpfmap_update_elem(r->m, &k, &v, BPFMAP_EXIST);
		if (ret && ret != -ENOENT)
			__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_lockfree_overwrite_race(void **state)
{
	(void)state;
	struct lf_run r = { .m = flat_make(4, 8, LF_ME, 0, -1) };
	struct flat *f = to_flat(r.m);
	pthread_t th[LF_WRITERS];
	uint32_t k;
	uint64_t v;

	for (k = 0; k < LF_WINDOW; k++) {
		v = k;
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	r.front = LF_WINDOW;
	for (int i = 0; i < LF_WRITERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, lf_overwriter, &r), 0);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t front = LF_WINDOW;; front++) {
		uint32_t old = front - LF_WINDOW;

		k = front;
		v = k;
		assert_int_equal(bpfmap_delete_elem(r.m, &old), 0);
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
		__atomic_store_n(&r.front, front + 1, __ATOMIC_RELEASE);
		/* The oldest key left: its value must be its own. */
		old++;
		assert_int_equal(bpfmap_lookup_elem(r.m, &old, &v), 0);
		if ((uint32_t)v != old)
			__atomic_fetch_add(&r.bad, 1, __ATOMIC_RELAXED);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= 1)
			break;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < LF_WRITERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(__atomic_load_n(&r.bad, __ATOMIC_RELAXED), 0);
	assert_int_equal(stores_state(f), FLAT_STORES_ON); /* nothing turned them off */
	k = __atomic_load_n(&r.front, __ATOMIC_RELAXED);
	for (uint32_t i = k - LF_WINDOW; i < k; i++) {
		assert_int_equal(bpfmap_lookup_elem(r.m, &i, &v), 0);
		assert_int_equal((uint32_t)v, i);
	}
	print_message("  %u keys through %u slots\n", k, f->n_slots);
	bpfmap_free(r.m);
}

/* ---- bpfmap_free with reclamation queued -------------------------------- */

/* Fill a map of @ks-byte keys (key i: i in the first 4 bytes) to @me and
 * delete them all: the deletes queue a reclamation callback. */
static struct bpfmap *filled_then_emptied(uint32_t ks, uint32_t me)
{
	struct bpfmap *m = flat_make(ks, 8, me, 0, -1);
	unsigned char key[32] = { 0 };
	uint64_t v = 1;

	for (uint32_t i = 0; i < me; i++) {
		memcpy(key, &i, 4);
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < me; i++) {
		memcpy(key, &i, 4);
		assert_int_equal(bpfmap_delete_elem(m, key), 0);
	}
	return m;
}

/* Free right after a delete-heavy phase, the callback queued (the deletes
 * ran in a read-side section, so its grace period had not ended): the
 * callback, not free, releases the map.  ASan/Valgrind see any access to
 * it after the release, and a map never released as a leak at exit. */
static void test_free_queued(void **state)
{
	(void)state;
	static const uint32_t key_sizes[] = { 4, 8, 20 }; /* 20: element indices */

	for (size_t n = 0; n < ARRAY_SIZE(key_sizes); n++) {
		struct bpfmap *m;

		bpfmap_read_lock();
		m = filled_then_emptied(key_sizes[n], 2000);
		assert_int_not_equal(__atomic_load_n(&to_flat(m)->rq, __ATOMIC_ACQUIRE), 0);
		bpfmap_read_unlock();
		bpfmap_free(m); /* may race the callback, which may be running now */
	}
	rcu_wait_deferred(); /* every callback ran: each map released */
}

/* Another thread is in a read-side section (of no map) while a map with a
 * queued callback is freed: free does not wait for that section (it used to
 * wait for the callback, which waits for the section: with the reader
 * waiting for free in turn, a deadlock).  The reader gives up after
 * FREE_WATCHDOG_S, unlocks, and the test fails; it is a deadlock detector,
 * not a timing. */
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
	(void)state;
	struct free_reader r = { 0 };
	struct bpfmap *m;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, free_reader_thread, &r), 0);
	while (!__atomic_load_n(&r.in_section, __ATOMIC_ACQUIRE))
		sched_yield();
	m = filled_then_emptied(8, 2000);
	/* Queued, and it cannot run before the reader leaves its section. */
	assert_int_not_equal(__atomic_load_n(&to_flat(m)->rq, __ATOMIC_ACQUIRE), 0);
	bpfmap_free(m);
	__atomic_store_n(&r.freed, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(r.gave_up, 0);
	rcu_wait_deferred(); /* the callback released the map */
}

/* The lowest bucket holding QUEUED slots, or UINT32_MAX. */
static uint32_t first_queued_bucket(const struct flat *f)
{
	for (uint32_t b = 0; b < f->n_buckets; b++)
		if (flat_match(__atomic_load_n(&f->buckets[b].tags, __ATOMIC_ACQUIRE),
			       FLAT_QUEUED * FLAT_BYTES_LO))
			return b;
	return UINT32_MAX;
}

/* Free racing the callback: at once (usually still queued), or as soon as
 * the callback has begun freeing slots (usually while it runs, or its next
 * round is queued).  ASan/TSan see an access after the release or a race
 * on the release, LSan a map neither released. */
static void test_free_racing_callback(void **state)
{
	(void)state;
	for (int round = 0; round < 40; round++) {
		struct bpfmap *m = filled_then_emptied(8, 4096);
		struct flat *f = to_flat(m);

		if (round % 2) {
			uint32_t b = first_queued_bucket(f);

			while (b != UINT32_MAX &&
			       flat_match(__atomic_load_n(&f->buckets[b].tags, __ATOMIC_ACQUIRE),
					  FLAT_QUEUED * FLAT_BYTES_LO))
				sched_yield();
		}
		bpfmap_free(m);
	}
	rcu_wait_deferred();
}

/* Free while the callback runs: held in its wait for lock-free stores'
 * windows (flat_stores_settle) by a window this thread keeps open across the
 * free.  With kick_at deletes (and what the shards may hold back) its one
 * round ends clearing rq, where it finds
 * the map handed over; with all deleted it queues itself again, and the next
 * round finds it at its start.  The sleep lets the callback start (if it has
 * not, free hands the map over at its start: as safe, less covered). */
static void test_free_in_running_callback(void **state)
{
	(void)state;
	if (!membarrier_usable())
		skip();
	for (int round = 0; round < 2; round++) {
		const uint32_t me = 4096;
		struct bpfmap *m = flat_make(8, 8, me, 0, -1);
		struct flat *f = to_flat(m);
		/* Sharded counts reach f->dead a flush per shard late. */
		uint32_t n = round ? me
				   : f->kick_at + (f->count.shards ? (f->count.shard_mask + 1) * FLAT_DEAD_FLUSH : 0);
		struct timespec ts = { 0, 50 * 1000000 };
		struct flat_window *win;
		uint64_t k, v = 1;

		for (k = 0; k < me; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		win = flat_window_open();
		assert_non_null(win);
		for (k = 0; k < n; k++)
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		assert_int_not_equal(__atomic_load_n(&f->rq, __ATOMIC_ACQUIRE), 0);
		nanosleep(&ts, NULL);
		bpfmap_free(m);
		flat_window_close(win);
	}
	rcu_wait_deferred();
}

/*
 * Two groups: the single-threaded cases (the test's own thread only; the
 * library's reclamation thread may run beside it), which Valgrind also runs
 * (`test_flat --single-threaded`, tests/CMakeLists.txt), and the cases that
 * start threads or race the reclamation thread on purpose.
 */
int main(int argc, char **argv)
{
	const struct CMUnitTest single_threaded[] = {
		test_entry(test_swar),
		test_entry(test_geometry),
		test_entry(test_short_bucket),
		test_entry(test_displacement),
		test_entry(test_wraparound),
		test_entry(test_overflow_buckets),
		test_entry(test_one_home),
		test_entry(test_reuse_in_section),
		test_entry(test_no_reuse_under_pointer),
		test_entry(test_dead_words),
		test_entry(test_match_by_key),
		test_entry(test_cursor),
		test_entry(test_long_keys_locked),
		test_entry(test_elements),
		test_entry(test_routing),
		test_entry(test_long_lookups),
		test_entry(test_full_map),
		test_entry(test_sharded_counts),
		test_entry(test_lockfree_stores_off),
		test_entry(test_free_queued),
	};
	const struct CMUnitTest threaded[] = {
		test_entry(test_concurrent_shared_buckets),
		test_entry(test_full_map_concurrent),
		test_entry(test_lockfree_overwrite),
		test_entry(test_lockfree_window_waited),
		test_entry(test_lockfree_window_fork),
		test_entry(test_lockfree_overwrite_race),
		test_entry(test_free_during_reader),
		test_entry(test_free_racing_callback),
		test_entry(test_free_in_running_callback),
	};
	bool only_single = argc > 1 && !strcmp(argv[1], "--single-threaded");
	int failed;

	if (argc > 2 || (argc == 2 && !only_single)) {
		fprintf(stderr, "usage: %s [--single-threaded]\n", argv[0]);
		return 2;
	}
	failed = run_test_group(single_threaded);
	if (!only_single)
		failed += run_test_group(threaded);
	return failed;
}
