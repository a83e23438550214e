/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every specialised program-view lookup (chosen per key size at creation)
 * against a plain model: hits give the key's own value, misses NULL with
 * errno ENOENT, on preallocated and BPFMAP_F_NO_PREALLOC maps.  Keys are
 * built to defeat shortcuts: pairs that differ only in their last byte, only
 * in the high half of an 8-byte key, keys that collide in small tables, and
 * keys written with 4-byte stores right before the lookup (as the
 * benchmark does), so that a compare reading the wrong width or the wrong
 * half shows up as a wrong hit or a miss.  The word-key lookups of the flat
 * table exist per instruction set and value stride: each one that this CPU
 * runs is tested, installed by hand, and so is the choice at creation.
 * The copy-outs (bpfmap_lookup_elem), specialised the same way, are checked
 * beside each lookup, and into buffers that overlap their keys.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tables/flat_words.h"

static const uint32_t key_sizes[] = {1,  2,  3,  4,  5,	 8,   12,  13,  16,	20,
				     24, 32, 48, 64, 65, 128, 256, 512, 1024, 1025};

#define KEYS 96 /* inserted: even indices; odd indices stay absent */

/* Key @i of @ks bytes: little-endian i in bytes 0..3 (as far as they
 * fit), a fixed pattern after; odd i differ from i - 1 only in their
 * last byte (or, for 8-byte keys, only in the high half too). */
static void key_make(uint8_t *key, uint32_t ks, uint32_t i)
{
	uint32_t base = i / 2 + 1;

	for (uint32_t b = 0; b < ks; b++)
		key[b] = (uint8_t)(0x5a ^ (b * 37));
	memcpy(key, &base, ks < 4 ? ks : 4);
	if (i & 1)
		key[ks - 1] ^= 0x80;
}

/* The copy-out of @key: @want (UINT64_MAX: -ENOENT with errno ENOENT),
 * through both entry points; the buffer's bytes past the value untouched. */
static void check_copy(struct bpfmap *map, const void *key, uint64_t want)
{
	uint64_t got[2];

	for (int flags_call = 0; flags_call < 2; flags_call++) {
		int ret;

		got[0] = got[1] = 0xa5a5a5a5a5a5a5a5ULL;
		errno = 0;
		ret = flags_call ? bpfmap_lookup_elem_flags(map, key, got, 0)
				 : bpfmap_lookup_elem(map, key, got);
		if (want == UINT64_MAX) {
			assert_int_equal(ret, -ENOENT);
			assert_int_equal(errno, ENOENT);
		} else {
			assert_int_equal(ret, 0);
			assert_int_equal(got[0], want);
		}
		assert_int_equal(got[1], 0xa5a5a5a5a5a5a5a5ULL);
	}
}

static void check_lookups(struct bpfmap *map, uint32_t ks)
{
	uint8_t *key = malloc(ks);

	assert_non_null(key);
	bpfmap_read_lock();
	for (uint32_t i = 0; i < KEYS; i++) {
		uint64_t *p;

		key_make(key, ks, i);
		errno = 0;
		p = bpfmap_lookup(map, key);
		if (i & 1) {
			assert_null(p);
			assert_int_equal(errno, ENOENT);
		} else {
			assert_non_null(p);
			assert_int_equal(*p, i / 2 * 1000 + ks);
		}
		check_copy(map, key, i & 1 ? UINT64_MAX : i / 2 * 1000 + ks);
		/* The 4-byte patch of the head the benchmark does. */
		if (ks >= 4) {
			uint32_t absent = 0xfffffff0u - i;

			memcpy(key, &absent, 4);
			errno = 0;
			assert_null(bpfmap_lookup(map, key));
			assert_int_equal(errno, ENOENT);
		}
	}
	bpfmap_read_unlock();
	free(key);
}

static void test_lookup_every_key_size(void **state)
{
	for (size_t s = 0; s < sizeof(key_sizes) / sizeof(key_sizes[0]); s++) {
		uint32_t ks = key_sizes[s];
		/* Small tables (8 entries per bucket) and roomy ones (chains of
		 * one) exercise collision walks and direct hits; from 16384
		 * entries on, long keys get the flat table too (maps/hash.c). */
		static const uint32_t max_entries[] = {KEYS, 4 * KEYS, 16384};

		for (size_t m = 0; m < ARRAY_SIZE(max_entries); m++) {
			struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, 8, max_entries[m],
							 variant_flags(state));
			uint8_t *key = malloc(ks);

			assert_non_null(key);
			for (uint32_t i = 0; i < KEYS; i += 2) {
				uint64_t v = i / 2 * 1000 + ks;

				key_make(key, ks, i);
				/* 1- and 2-byte keys: only 256/65536 distinct keys. */
				assert_int_equal(bpfmap_update_elem(map, key, &v, BPFMAP_NOEXIST),
						 0);
			}
			check_lookups(map, ks);
			/* After deleting every other key, the rest still hit. */
			for (uint32_t i = 0; i < KEYS; i += 4) {
				key_make(key, ks, i);
				assert_int_equal(bpfmap_delete_elem(map, key), 0);
				errno = 0;
				assert_null(bpfmap_lookup(map, key));
				assert_int_equal(errno, ENOENT);
				key_make(key, ks, i + 2);
				assert_non_null(bpfmap_lookup(map, key));
			}
			free(key);
			bpfmap_free(map);
		}
	}
}

/*
 * The same for the other four types, whose lookups are specialised per key
 * size too, with a view of their own (the LRU's mark, the calling CPU's
 * slot, both; RHASH's table), on the chained table, the flat one (word keys,
 * and long keys from 16384 entries on) and RHASH's, under each instruction
 * set the word-key lookups have.  Every entry point of the program view
 * answers as the model does: bpfmap_lookup(), the function that
 * bpfmap_lookup_func() hands a JIT, bpfmap_lookup_bulk(), and for per-CPU
 * maps bpfmap_lookup_percpu() for every CPU; copy-outs beside them.  Each
 * CPU's slot holds its own value, so that a slot taken from the wrong CPU's
 * region shows.  No map is full, so no LRU map evicts.
 */
struct type_case {
	enum bpfmap_type type;
	uint32_t flags;
};

static const struct type_case type_cases[] = {
	{BPFMAP_TYPE_PERCPU_HASH, 0},
	{BPFMAP_TYPE_PERCPU_HASH, BPFMAP_F_NO_PREALLOC},
	{BPFMAP_TYPE_LRU_HASH, 0},
	{BPFMAP_TYPE_LRU_HASH, BPFMAP_F_NO_COMMON_LRU},
	{BPFMAP_TYPE_LRU_PERCPU_HASH, 0},
	{BPFMAP_TYPE_LRU_PERCPU_HASH, BPFMAP_F_NO_COMMON_LRU},
	{BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC},
};

static bool type_percpu(enum bpfmap_type type)
{
	return type == BPFMAP_TYPE_PERCPU_HASH || type == BPFMAP_TYPE_LRU_PERCPU_HASH;
}

/* Key i's value in CPU c's slot (c = 0 for a shared value). */
static uint64_t slot_value(uint32_t ks, uint32_t i, uint32_t c)
{
	return (uint64_t)i / 2 * 1000 + ks + ((uint64_t)c << 32);
}

/* A program-view pointer to key i's value: the value itself, or in a
 * per-CPU map some CPU's slot (the thread may move after the lookup); the
 * bytes after the first 8 as check_type_map stores them. */
static void check_type_ptr(const void *p, uint32_t ks, uint32_t vs, uint32_t i, bool percpu,
			   uint32_t cpus)
{
	uint64_t got;

	assert_non_null(p);
	memcpy(&got, p, 8);
	if (!percpu) {
		assert_int_equal(got, slot_value(ks, i, 0));
	} else {
		assert_int_equal((uint32_t)got, (uint32_t)slot_value(ks, i, 0));
		assert_true((got >> 32) < cpus);
	}
	for (uint32_t b = 8; b < vs; b++)
		assert_int_equal(((const uint8_t *)p)[b], (uint8_t)(i + b));
}

/* Key i's value in the syscall view's layout, into @buf. */
static void type_value(uint8_t *buf, uint32_t ks, uint32_t vs, uint32_t i, uint32_t cpus)
{
	uint32_t stride = (vs + 7) & ~7u;

	memset(buf, 0, (size_t)cpus * stride);
	for (uint32_t c = 0; c < cpus; c++) {
		uint64_t v = slot_value(ks, i, c);

		memcpy(buf + (size_t)c * stride, &v, 8);
		for (uint32_t b = 8; b < vs; b++)
			buf[(size_t)c * stride + b] = (uint8_t)(i + b);
	}
}

static void check_type_key(struct bpfmap *map, enum bpfmap_type type, uint32_t ks, uint32_t vs,
			   const uint8_t *key, uint32_t i, bool present, uint8_t *bufs)
{
	bool percpu = type_percpu(type);
	uint32_t cpus = percpu ? (uint32_t)bpfmap_num_possible_cpus() : 1;
	size_t bytes = (size_t)cpus * ((vs + 7) & ~7u);
	uint8_t *want = bufs, *got = bufs + bytes + 8;
	bpfmap_lookup_fn fn = bpfmap_lookup_func(map);
	void *bulk[1] = {(void *)1};
	const void *p;

	assert_non_null(fn);
	for (int way = 0; way < 2; way++) {
		errno = 0;
		p = way ? fn(map, key) : bpfmap_lookup(map, key);
		if (present) {
			check_type_ptr(p, ks, vs, i, percpu, cpus);
		} else {
			assert_null(p);
			assert_int_equal(errno, ENOENT);
		}
	}
	assert_int_equal(bpfmap_lookup_bulk(map, key, 1, bulk), present);
	if (present)
		check_type_ptr(bulk[0], ks, vs, i, percpu, cpus);
	else
		assert_null(bulk[0]);
	for (uint32_t c = 0; percpu && c <= cpus; c++) {
		errno = 0;
		p = bpfmap_lookup_percpu(map, key, c);
		if (c == cpus) {
			assert_null(p);
			assert_int_equal(errno, ERANGE);
		} else if (present) {
			uint64_t v;

			assert_non_null(p);
			memcpy(&v, p, 8);
			assert_int_equal(v, slot_value(ks, i, c));
		} else {
			assert_null(p);
			assert_int_equal(errno, ENOENT);
		}
	}
	type_value(want, ks, vs, i, cpus);
	memset(got, 0xa5, bytes + 8);
	assert_int_equal(bpfmap_lookup_elem(map, key, got), present ? 0 : -ENOENT);
	if (present) /* a per-CPU slot's padding copies out as zeros */
		assert_memory_equal(got, want, percpu ? bytes : vs);
	for (size_t b = percpu ? bytes : vs; b < bytes + 8; b++)
		assert_int_equal(got[b], 0xa5);
}

static void check_type_map(const struct type_case *tc, uint32_t ks, uint32_t vs,
			   uint32_t max_entries)
{
	bool percpu = type_percpu(tc->type);
	uint32_t cpus = percpu ? (uint32_t)bpfmap_num_possible_cpus() : 1;
	struct bpfmap *map = must_create(tc->type, ks, vs, max_entries, tc->flags);
	uint8_t *key = malloc(ks);
	/* the value stored, then a copy-out's buffer and its guard */
	uint8_t *bufs = malloc(2 * ((size_t)cpus * ((vs + 7) & ~7u) + 8));

	assert_non_null(key);
	assert_non_null(bufs);
	for (uint32_t i = 0; i < KEYS; i += 2) {
		type_value(bufs, ks, vs, i, cpus);
		key_make(key, ks, i);
		assert_int_equal(bpfmap_update_elem(map, key, bufs, BPFMAP_NOEXIST), 0);
	}
	for (int round = 0; round < 2; round++) {
		bpfmap_read_lock();
		for (uint32_t i = 0; i < KEYS; i++) {
			bool gone = round && i % 4 == 0;

			key_make(key, ks, i);
			check_type_key(map, tc->type, ks, vs, key, i, !(i & 1) && !gone, bufs);
			if (ks >= 4) { /* the benchmark's 4-byte patch of the head */
				uint32_t absent = 0xfffffff0u - i;

				memcpy(key, &absent, 4);
				check_type_key(map, tc->type, ks, vs, key, i, false, bufs);
			}
		}
		bpfmap_read_unlock();
		/* Then without every other key: the rest still hit. */
		for (uint32_t i = 0; !round && i < KEYS; i += 4) {
			key_make(key, ks, i);
			assert_int_equal(bpfmap_delete_elem(map, key), 0);
		}
	}
	free(bufs);
	free(key);
	bpfmap_free(map);
}

static void test_lookup_every_type(void **state)
{
	static const char *const isa_names[FLAT_ISA_COUNT] = {"base", "avx2", "avx512"};
	/* As for HASH; 16384: long keys on the flat table. */
	static const uint32_t max_entries[] = {KEYS, 4 * KEYS, 16384};

	/* 8 bytes, and a value of 12 (a slot stride of 16) for the
	 * lookups specialised to 8-byte values and those that are not. */
	static const uint32_t value_sizes[] = {8, 12};

	(void)state;
	for (size_t t = 0; t < ARRAY_SIZE(type_cases); t++)
		for (size_t s = 0; s < ARRAY_SIZE(key_sizes); s++)
			for (size_t m = 0; m < ARRAY_SIZE(max_entries); m++)
				for (size_t v = 0; v < ARRAY_SIZE(value_sizes); v++)
					check_type_map(&type_cases[t], key_sizes[s],
						       value_sizes[v], max_entries[m]);
	/* The word-key lookups of each instruction set, chosen at creation. */
	for (int isa = 0; isa < FLAT_ISA_COUNT; isa++) {
		if (!flat_isa_runs((enum flat_isa)isa))
			continue;
		setenv("BPFMAP_FLAT_ISA", isa_names[isa], 1);
		for (size_t t = 0; t < ARRAY_SIZE(type_cases); t++)
			for (uint32_t ks = 4; ks <= 8; ks += 4)
				for (size_t m = 0; m < ARRAY_SIZE(max_entries); m++)
					for (size_t v = 0; v < ARRAY_SIZE(value_sizes); v++)
						check_type_map(&type_cases[t], ks, value_sizes[v],
							       max_entries[m]);
		unsetenv("BPFMAP_FLAT_ISA");
	}
}

/* 8-byte keys that share their low half and differ only in the high one. */
static void test_lookup_u64_halves(void **state)
{
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, 8, 8, 64, variant_flags(state));

	for (uint64_t hi = 0; hi < 32; hi++) {
		uint64_t k = hi << 32 | 7, v = hi;

		assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
	}
	bpfmap_read_lock();
	for (uint64_t hi = 0; hi < 64; hi++) {
		uint64_t k = hi << 32 | 7, *p = bpfmap_lookup(map, &k);

		if (hi < 32) {
			assert_non_null(p);
			assert_int_equal(*p, hi);
		} else {
			assert_null(p);
		}
	}
	bpfmap_read_unlock();
	bpfmap_free(map);
}

/* BPFMAP_F_WRONLY_PROG refuses every key size's lookup with EPERM. */
static void test_lookup_refused(void **state)
{
	for (size_t s = 0; s < sizeof(key_sizes) / sizeof(key_sizes[0]); s++) {
		uint32_t ks = key_sizes[s];
		struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, 8, 8,
						 variant_flags(state) | BPFMAP_F_WRONLY_PROG);
		uint8_t *key = calloc(1, ks);
		uint64_t v = 1;

		assert_non_null(key);
		assert_int_equal(bpfmap_update_elem(map, key, &v, BPFMAP_ANY), 0);
		errno = 0;
		assert_null(bpfmap_lookup(map, key));
		assert_int_equal(errno, EPERM);
		free(key);
		bpfmap_free(map);
	}
}

/* ---- flat word-key lookups, per instruction set --------------------------- */

#define WORD_KEYS 200 /* ids 0..199; even ids inserted, odd ones absent */

/* Word key @id of @ks (4 or 8) bytes: ids differ in the low word, in the
 * high half only (8-byte keys) or bit 30, and in the top bit only. */
static uint64_t word_key(uint32_t ks, uint32_t id)
{
	uint64_t k = (uint64_t)(id >> 2) * (ks == 8 ? 0x9e3779b1u : 1);

	if (id & 2)
		k ^= ks == 8 ? (uint64_t)0x1234u << 32 : 1ULL << 30;
	if (id & 1)
		k ^= ks == 8 ? 1ULL << 63 : 1ULL << 31;
	return k;
}

/* Look every id up through map->lookup, as the caller patches the key's
 * head with a 4-byte store (the benchmark's pattern). */
static void check_word_lookups(struct bpfmap *map, uint32_t ks, uint32_t vs, const bool *present)
{
	uint8_t key[8];

	bpfmap_read_lock();
	for (uint32_t id = 0; id < WORD_KEYS; id++) {
		uint64_t k = word_key(ks, id), *p;
		uint32_t head = (uint32_t)k;

		memcpy(key, &k, ks);
		memcpy(key, &head, 4);
		errno = 0;
		p = bpfmap_lookup(map, key);
		if (!present[id]) {
			assert_null(p);
			assert_int_equal(errno, ENOENT);
			continue;
		}
		assert_non_null(p);
		assert_int_equal(p[0], id);
		assert_int_equal(p[vs / 8 - 1], id); /* the value's last word: its stride */
	}
	bpfmap_read_unlock();
	/* The copy-outs, outside any read-side section as a C program calls
	 * them: the first and the last word of the value, and nothing past it. */
	for (uint32_t id = 0; id < WORD_KEYS; id++) {
		uint64_t k = word_key(ks, id), got[4], want[4] = {0};
		int ret;

		memset(got, 0xa5, sizeof(got));
		memcpy(key, &k, ks);
		errno = 0;
		ret = bpfmap_lookup_elem(map, key, got);
		if (!present[id]) {
			assert_int_equal(ret, -ENOENT);
			assert_int_equal(errno, ENOENT);
			continue;
		}
		assert_int_equal(ret, 0);
		/* As inserted: the id in the first and the last 8-byte word of
		 * the stride, the value's bytes only; the rest as it was. */
		want[0] = want[vs / 8 - 1] = id;
		memset((char *)want + map->value_size, 0xa5, sizeof(want) - map->value_size);
		assert_memory_equal(got, want, sizeof(got));
	}
}

static void check_word_isa(uint32_t ks, uint32_t value_size, enum flat_isa isa, bool far)
{
	/* 64 entries, 100 inserts minus deletes: full buckets push keys away
	 * from home (the far path), deletes leave dead slots holding keys. */
	struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, value_size, 64, 0);
	uint32_t vs = (value_size + 7) / 8 * 8;
	uint64_t *v = calloc(1, vs);
	bool present[WORD_KEYS] = {0};
	uint32_t n = 0;

	assert_non_null(v);
	assert_ptr_equal(map->ops, &flat_ops);
	map_copy_fn copy = flat_copy_word(ks == 4 ? HASH_U32 : HASH_U64, value_size == 8, far,
					 value_size > 8, isa);

	map->lookup = flat_lookup_word(ks == 4 ? HASH_U32 : HASH_U64, vs, isa, 0);
	if (copy) /* TSan builds have none: the general copy-out */
		map->copy = copy;
	for (uint32_t id = 0; id < WORD_KEYS; id += 2) {
		uint64_t k = word_key(ks, id);

		if (n == 64) { /* full: delete an earlier key first */
			uint64_t old = word_key(ks, id - 100);

			assert_int_equal(bpfmap_delete_elem(map, &old), 0);
			present[id - 100] = false;
			n--;
		}
		v[0] = v[vs / 8 - 1] = id;
		assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST), 0);
		present[id] = true;
		n++;
		if (id % 16 == 0)
			check_word_lookups(map, ks, vs, present);
	}
	check_word_lookups(map, ks, vs, present);
	free(v);
	bpfmap_free(map);
}

static void test_lookup_word_isas(void **state)
{
	static const uint32_t value_sizes[] = {8, 4, 12, 24};

	(void)state;
	skip_if_chain_forced("the flat table's word lookups");
	for (int isa = 0; isa < FLAT_ISA_COUNT; isa++) {
		if (!flat_isa_runs((enum flat_isa)isa))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(value_sizes); i++)
			for (int far = 0; far < 2; far++) { /* the prefetching copy-out too */
				check_word_isa(4, value_sizes[i], (enum flat_isa)isa, far);
				check_word_isa(8, value_sizes[i], (enum flat_isa)isa, far);
			}
	}
}

/* The choice at creation: the best that runs, or the lower one asked for
 * with BPFMAP_FLAT_ISA (AVX2 instead of AVX-512 on Skylake-SP, whose clock
 * drops for 512-bit work). */
static void check_word_choice(enum flat_isa expect)
{
	/* TSan builds specialise no copy-out (flat_copy_word gives NULL). */
	bool copies = flat_copy_word(HASH_U32, true, false, false, FLAT_ISA_BASE) != NULL;

	for (uint32_t ks = 4; ks <= 8; ks += 4) {
		enum hash_kind kind = ks == 4 ? HASH_U32 : HASH_U64;

		for (uint32_t value_size = 8; value_size <= 16; value_size += 8) {
			struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, value_size, 64, 0);
			map_lookup_fn fn = flat_lookup_word(kind, value_size, expect, 0);

			assert_true(to_flat(map)->match_by_key);
			if (copies && map->copy != flat_copy_word(kind, value_size == 8, false,
								 value_size > 8, expect))
				assert_true(expect == FLAT_ISA_AVX512 &&
					    map->copy == flat_copy_word(kind, value_size == 8, false,
									value_size > 8, FLAT_ISA_AVX2));
			if (map->lookup != fn)
				assert_true(expect == FLAT_ISA_AVX512 &&
					    map->lookup ==
						flat_lookup_word(kind, value_size, FLAT_ISA_AVX2, 0));
			bpfmap_free(map);
			/* Home values past FLAT_COPY_FAR_BYTES: the prefetching
			 * copy-out, for 8-byte values only. */
			map = must_create(BPFMAP_TYPE_HASH, ks, value_size, 1u << 17, 0);
			assert_true((uint64_t)to_flat(map)->n_homes * FLAT_SLOTS * 8 >=
				    FLAT_COPY_FAR_BYTES);
			if (copies && map->copy != flat_copy_word(kind, value_size == 8,
								  value_size == 8, value_size > 8,
								  expect))
				assert_true(expect == FLAT_ISA_AVX512 &&
					    map->copy == flat_copy_word(kind, value_size == 8,
									value_size == 8, value_size > 8,
									FLAT_ISA_AVX2));
			if (value_size == 8)
				for (int isa = 0; isa < FLAT_ISA_COUNT; isa++)
					assert_ptr_not_equal(map->copy,
							     flat_copy_word(kind, true, false, false,
									    (enum flat_isa)isa));
			bpfmap_free(map);
			/* One home, too few to match by key: the general
			 * lookup.  From two elements on, two homes. */
			map = must_create(BPFMAP_TYPE_HASH, ks, value_size, 2, 0);
			assert_true(to_flat(map)->match_by_key);
			bpfmap_free(map);
			map = must_create(BPFMAP_TYPE_HASH, ks, value_size, 1, 0);
			assert_false(to_flat(map)->match_by_key);
			for (int isa = 0; isa < FLAT_ISA_COUNT; isa++)
				assert_ptr_not_equal(map->lookup, flat_lookup_word(kind, value_size,
										   (enum flat_isa)isa,
										   0));
			bpfmap_free(map);
		}
	}
}

static void test_lookup_word_choice(void **state)
{
	static const char *const names[FLAT_ISA_COUNT] = {"base", "avx2", "avx512"};
	enum flat_isa best = FLAT_ISA_BASE;

	(void)state;
	skip_if_chain_forced("the flat table's word lookups");
	for (int isa = FLAT_ISA_COUNT - 1; isa > FLAT_ISA_BASE && best == FLAT_ISA_BASE; isa--)
		if (flat_isa_runs((enum flat_isa)isa))
			best = (enum flat_isa)isa;
	check_word_choice(best);
	for (int want = 0; want < FLAT_ISA_COUNT; want++) {
		setenv("BPFMAP_FLAT_ISA", names[want], 1);
		check_word_choice(want < (int)best ? (enum flat_isa)want : best);
		unsetenv("BPFMAP_FLAT_ISA");
	}
}

/*
 * Copy-outs of every value size up to past the section-free chained
 * copy-out's limit (64 bytes), for each key size it specialises: exactly
 * value_size bytes of the key's own value, nothing written past them, and
 * -ENOENT for absent and deleted keys.  Maps of fewer than 16384 entries,
 * so longer keys take the chained table; the variants cover NO_PREALLOC
 * (the general copy-out) too.
 */
static void test_copy_every_value_size(void **state)
{
	static const uint32_t kss[] = {4, 8, 16, 32, 64, 128, 256};
	static const uint32_t vss[] = {1, 3, 8, 12, 16, 20, 32, 60, 64, 72};
	enum { N = 48 };

	for (size_t a = 0; a < ARRAY_SIZE(kss); a++)
		for (size_t b = 0; b < ARRAY_SIZE(vss); b++) {
			uint32_t ks = kss[a], vs = vss[b];
			struct bpfmap *map = must_create(BPFMAP_TYPE_HASH, ks, vs, 64,
							 variant_flags(state));
			uint8_t key[256], val[80], got[96];

			for (uint32_t i = 0; i < N; i++) {
				key_make(key, ks, i);
				for (uint32_t j = 0; j < vs; j++)
					val[j] = (uint8_t)(i * 7 + j + 1);
				assert_int_equal(bpfmap_update_elem(map, key, val, BPFMAP_NOEXIST), 0);
			}
			for (uint32_t i = 0; i < N; i += 3) {
				key_make(key, ks, i);
				assert_int_equal(bpfmap_delete_elem(map, key), 0);
			}
			for (uint32_t i = 0; i < N + 8; i++) {
				bool present = i < N && i % 3;

				key_make(key, ks, i);
				memset(got, 0x5a, sizeof(got));
				assert_int_equal(bpfmap_lookup_elem(map, key, got), present ? 0 : -ENOENT);
				for (uint32_t j = 0; j < vs && present; j++)
					assert_int_equal(got[j], (uint8_t)(i * 7 + j + 1));
				for (uint32_t j = present ? vs : 0; j < sizeof(got); j++)
					assert_int_equal(got[j], 0x5a);
			}
			bpfmap_free(map);
		}
}

/*
 * Copy-outs into a buffer that overlaps the key: the kernel copies the key
 * in before it writes the value out, so a caller may pass one buffer for
 * both.  Every table's copy-out, the flagged ones (F_LOCK, F_CPU) and keys
 * longer than the 512 bytes copied on the stack, with the value starting
 * anywhere from its size - 1 bytes before the key to the key's last byte.
 * Alone, no copy retries; test_races stops copies whose check fails.
 */
static void check_copy_overlap(enum bpfmap_type type, uint32_t ks, uint32_t max_entries,
			       uint32_t flags, bool with_lock)
{
	enum { VS = 16, N = 6 };
	BPFMAP_CREATE_OPTS(opts, .map_flags = flags, .lock_off = with_lock ? 12 : -1);
	bool percpu = type == BPFMAP_TYPE_PERCPU_HASH || type == BPFMAP_TYPE_LRU_PERCPU_HASH;
	uint32_t cpus = percpu ? (uint32_t)bpfmap_num_possible_cpus() : 1, out = VS * cpus;
	struct bpfmap *map = bpfmap_create(type, NULL, ks, VS, max_entries, &opts);
	uint8_t *val = calloc(1, out), *want = calloc(1, out), *buf = calloc(1, ks + 3 * out);
	const int64_t offs[] = {-(int64_t)out + 1, -(int64_t)out / 2, -1, 0, 1, ks / 2, ks - 1};

	assert_non_null(map);
	assert_true(val && want && buf);
	/* Value bytes 12..15 stay 0: the spin lock's place in a lock map. */
	for (uint32_t i = 0; i < N; i++) {
		key_make(buf, ks, i);
		for (uint32_t j = 0; j < out; j++)
			val[j] = j % VS < 12 ? (uint8_t)(i * 13 + j + 1) : 0;
		assert_int_equal(bpfmap_update_elem(map, buf, val, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < N + 2; i++)
		for (size_t o = 0; o < ARRAY_SIZE(offs); o++)
			for (int call = 0; call < 3; call++) {
				uint8_t *key = buf + out, *value = key + offs[o];
				uint64_t f = call == 1 ? (with_lock ? BPFMAP_F_LOCK : 0)
					   : call == 2 ? BPFMAP_F_CPU | (uint64_t)(cpus - 1) << 32
						       : 0;
				uint32_t len = call == 2 ? VS : out, from = call == 2 ? (cpus - 1) * VS : 0;
				int ret;

				if (call == 2 && !percpu)
					continue;
				for (uint32_t j = 0; j < out; j++)
					want[j] = j % VS < 12 ? (uint8_t)(i * 13 + j + 1) : 0;
				key_make(key, ks, i);
				ret = call ? bpfmap_lookup_elem_flags(map, key, value, f)
					   : bpfmap_lookup_elem(map, key, value);
				if (i >= N) {
					assert_int_equal(ret, -ENOENT);
					continue;
				}
				assert_int_equal(ret, 0);
				assert_memory_equal(value, want + from, len);
			}
	/* Lookup-and-delete too. */
	for (uint32_t i = 0; i < N; i++) {
		uint8_t *key = buf + out, *value = key + offs[i % ARRAY_SIZE(offs)];

		for (uint32_t j = 0; j < out; j++)
			want[j] = j % VS < 12 ? (uint8_t)(i * 13 + j + 1) : 0;
		key_make(key, ks, i);
		assert_int_equal(bpfmap_lookup_and_delete_elem(map, key, value), 0);
		assert_memory_equal(value, want, out);
		key_make(key, ks, i);
		assert_errno(bpfmap_lookup_elem(map, key, val), ENOENT);
	}
	free(val);
	free(want);
	free(buf);
	bpfmap_free(map);
}

static void test_copy_overlapping_buffers(void **state)
{
	static const uint32_t kss[] = {4, 8, 16, 64, 600};

	(void)state;
	for (size_t a = 0; a < ARRAY_SIZE(kss); a++) {
		uint32_t ks = kss[a];

		check_copy_overlap(BPFMAP_TYPE_HASH, ks, 64, 0, false);
		check_copy_overlap(BPFMAP_TYPE_HASH, ks, 16384, 0, false); /* flat, long keys */
		check_copy_overlap(BPFMAP_TYPE_HASH, ks, 64, BPFMAP_F_NO_PREALLOC, false);
		check_copy_overlap(BPFMAP_TYPE_HASH, ks, 64, 0, true);
		check_copy_overlap(BPFMAP_TYPE_HASH, ks, 16384, 0, true);
		check_copy_overlap(BPFMAP_TYPE_PERCPU_HASH, ks, 64, 0, false);
		check_copy_overlap(BPFMAP_TYPE_PERCPU_HASH, ks, 64, BPFMAP_F_NO_PREALLOC, false);
		check_copy_overlap(BPFMAP_TYPE_LRU_HASH, ks, 64, 0, false);
		check_copy_overlap(BPFMAP_TYPE_LRU_HASH, ks, 64, BPFMAP_F_NO_COMMON_LRU, false);
		check_copy_overlap(BPFMAP_TYPE_LRU_PERCPU_HASH, ks, 64, 0, false);
		check_copy_overlap(BPFMAP_TYPE_RHASH, ks, 64, BPFMAP_F_NO_PREALLOC, false);
		check_copy_overlap(BPFMAP_TYPE_RHASH, ks, 64, BPFMAP_F_NO_PREALLOC, true);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    VARIANT_TESTS(test_lookup_every_key_size),
	    test_entry(test_lookup_every_type),
	    VARIANT_TESTS(test_lookup_u64_halves),
	    VARIANT_TESTS(test_lookup_refused),
	    test_entry(test_lookup_word_isas),
	    test_entry(test_lookup_word_choice),
	    VARIANT_TESTS(test_copy_every_value_size),
	    test_entry(test_copy_overlapping_buffers),
	};

	return run_test_group(tests);
}
