/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every specialised program-view lookup (chosen per key size at creation)
 * against a plain model: hits give the key's own value, misses NULL with
 * errno ENOENT, on preallocated and BPFMAP_F_NO_PREALLOC maps.  Keys are
 * built to defeat shortcuts: pairs that differ only in their last byte, only
 * in the high half of an 8-byte key, keys that collide in small tables, and
 * keys written with 4-byte stores right before the lookup (as the
 * benchmark does), so that a compare reading the wrong width or the wrong
 * half shows up as a wrong hit or a miss.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const uint32_t key_sizes[] = {1,	 2,  3,	 4,  5,	 8,  12,  13, 16,
				     20, 24, 32, 48, 64, 65, 128, 256};

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
		 * one) exercise collision walks and direct hits. */
		static const uint32_t max_entries[] = {KEYS, 4 * KEYS};

		for (size_t m = 0; m < 2; m++) {
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    VARIANT_TESTS(test_lookup_every_key_size),
	    VARIANT_TESTS(test_lookup_u64_halves),
	    VARIANT_TESTS(test_lookup_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
