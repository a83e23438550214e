/* SPDX-License-Identifier: BSD-2-Clause */
/* Known answers for the hash functions a map may choose. */
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "hash/jhash.h"

static void test_jhash_known_answers(void **state)
{
	(void)state;
	/* lookup3's published vectors (hashlittle == the kernel's jhash). */
	static const char four[] = "Four score and seven years ago";
	assert_int_equal(jhash_bytes("", 0, 0), 0xdeadbeefU);
	assert_int_equal(jhash_bytes("", 0, 0xdeadbeef), 0xbd5b7ddeU);
	assert_int_equal(jhash_bytes(four, 30, 0), 0x17770551U);
	assert_int_equal(jhash_bytes(four, 30, 1), 0xcd628161U);
}

/* jhash2 over n words equals jhash over their 4n bytes (little endian). */
static void test_jhash2_matches_jhash(void **state)
{
	(void)state;
	unsigned char buf[256];

	srand(1);
	for (int trial = 0; trial < 200; trial++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)rand();
		uint32_t words = (uint32_t)(rand() % 64), seed = (uint32_t)rand();
		assert_int_equal(jhash_words(buf, words, seed), jhash_bytes(buf, words * 4, seed));
		/* Unaligned input gives the same result. */
		memmove(buf + 1, buf, words * 4);
		assert_int_equal(jhash_words(buf + 1, words, seed),
				 jhash_bytes(buf + 1, words * 4, seed));
	}
}

/* Known answers for the word-key hashes (computed independently). */
static void test_fast_hash_known_answers(void **state)
{
	(void)state;
	assert_int_equal(fast_hash_u32(0, 0), 0);
	assert_int_equal(fast_hash_u32(1, 0), 0x9e3779b9U);
	assert_int_equal(fast_hash_u32(0xdeadbeef, 0x0123456789abcdefULL), 0x2692358bU);
	assert_int_equal(fast_hash_u64(1ULL << 32, 0), 0xc2b2ae3bU);
	assert_int_equal(fast_hash_u64(0x1122334455667788ULL, 0x0123456789abcdefULL), 0xab72c01eU);
}

/* Regular key sets (sequential, strided, varying only in the high half)
 * spread evenly: 2^16 keys over 2^10 buckets stay near the mean of 64,
 * whichever bits a table takes (low bits with a mask, high bits with a
 * multiply-shift). */
static void check_spread(const char *what, uint32_t (*h)(uint32_t i))
{
	enum { KEYS = 1 << 16, BUCKETS = 1 << 10 };
	static uint32_t low[BUCKETS], high[BUCKETS];

	memset(low, 0, sizeof(low));
	memset(high, 0, sizeof(high));
	for (uint32_t i = 0; i < KEYS; i++) {
		uint32_t v = h(i);

		low[v % BUCKETS]++;
		high[v >> 22]++;
	}
	for (int b = 0; b < BUCKETS; b++) {
		if (low[b] < 40 || low[b] > 90 || high[b] < 40 || high[b] > 90)
			fail_msg("%s: bucket %d holds %u (low bits) / %u (high bits), mean 64",
				 what, b, low[b], high[b]);
	}
}

static uint32_t u32_seq(uint32_t i) { return fast_hash_u32(i + 1, 0); }
static uint32_t u32_stride(uint32_t i) { return fast_hash_u32((i + 1) * 4096, 0); }
static uint32_t u32_ipv4(uint32_t i) { return fast_hash_u32(0x0a000000 + i * 256, 0); }
static uint32_t u64_seq(uint32_t i) { return fast_hash_u64(i + 1, 0); }
static uint32_t u64_high(uint32_t i) { return fast_hash_u64((uint64_t)(i + 1) << 32, 0); }
static uint32_t u64_stride(uint32_t i) { return fast_hash_u64((uint64_t)(i + 1) * 4096, 7); }

static void test_fast_hash_spread(void **state)
{
	(void)state;
	check_spread("u32 sequential", u32_seq);
	check_spread("u32 stride 4096", u32_stride);
	check_spread("u32 IPv4 /24s", u32_ipv4);
	check_spread("u64 sequential", u64_seq);
	check_spread("u64 high half", u64_high);
	check_spread("u64 stride 4096", u64_stride);
}

static void test_selection(void **state)
{
	(void)state;
	assert_int_equal(hash_kind_for_key_size(1), HASH_JHASH);
	assert_int_equal(hash_kind_for_key_size(4), HASH_U32);
	assert_int_equal(hash_kind_for_key_size(8), HASH_U64);
	assert_int_equal(hash_kind_for_key_size(12), HASH_JHASH2);
	assert_int_equal(hash_kind_for_key_size(10), HASH_JHASH);
	assert_int_equal(hash_kind_for_key_size(60), HASH_JHASH2);
	assert_int_equal(hash_kind_for_key_size(HASH_XXH3_MIN_KEY), HASH_XXH3);
	assert_int_equal(hash_kind_for_key_size(1024), HASH_XXH3);

	unsigned char key[100];
	memset(key, 0xab, sizeof(key));
	assert_int_equal(hash_fn_for_kind(HASH_JHASH)(key, 13, 7), jhash_bytes(key, 13, 7));
	assert_int_equal(hash_fn_for_kind(HASH_JHASH2)(key, 12, 7), jhash_words(key, 3, 7));
	uint64_t x = XXH3_64bits_withSeed(key, 100, 7);
	assert_int_equal(hash_fn_for_kind(HASH_XXH3)(key, 100, 7), (uint32_t)(x ^ (x >> 32)));
	uint32_t k32 = 0xdeadbeef;
	uint64_t k64 = 0x1122334455667788ULL;
	assert_int_equal(hash_fn_for_kind(HASH_U32)(&k32, 4, 5), fast_hash_u32(k32, 5));
	assert_int_equal(hash_fn_for_kind(HASH_U64)(&k64, 8, 5), fast_hash_u64(k64, 5));
	assert_int_equal(fast_hash_u64_mem(&k64, 5), fast_hash_u64(k64, 5));
	assert_int_equal(hash_seed_new(1), 0);
	assert_string_equal(hash_kind_name(HASH_XXH3), "xxh3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jhash_known_answers),
		cmocka_unit_test(test_jhash2_matches_jhash),
		cmocka_unit_test(test_fast_hash_known_answers),
		cmocka_unit_test(test_fast_hash_spread),
		cmocka_unit_test(test_selection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
