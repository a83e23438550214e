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

static void test_selection(void **state)
{
	(void)state;
	assert_int_equal(hash_kind_for_key_size(1), HASH_JHASH);
	assert_int_equal(hash_kind_for_key_size(4), HASH_JHASH2);
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
	assert_int_equal(hash_seed_new(1), 0);
	assert_string_equal(hash_kind_name(HASH_XXH3), "xxh3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jhash_known_answers),
		cmocka_unit_test(test_jhash2_matches_jhash),
		cmocka_unit_test(test_selection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
