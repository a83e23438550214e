/* SPDX-License-Identifier: BSD-2-Clause */
/* Known answers and spread for the hash functions a map may choose. */
#include <stdbool.h>
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
#include "hash/nh_hash.h"
#include "hash/sized_hash.h"
#include "hash/word_hash.h"

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
	assert_int_equal(fast_hash_u64(1ULL << 32, 0), 0x7f4a7c15U);
	assert_int_equal(fast_hash_u64(0x1122334455667788ULL, 0x0123456789abcdefULL), 0x62275644U);
}

/* Regular key sets (sequential, strided, varying only in the high half)
 * spread evenly: 2^16 keys over 2^10 buckets stay near the mean of 64, in
 * the high bits (the flat table's multiply-shift) and, where @low_too, in
 * the low bits (the chained table's mask).  The u64 hash's low bits see only
 * the low bits of the key's high half (one multiply: see hash/fast_hash.h),
 * so for it only the high bits count; the chained table folds them
 * (fast_hash_u64_folded_halves), and that must spread in the low bits. */
enum spread_low { LOW_SKIP, LOW_EVEN, LOW_RANDOM };

/* @low: the low bits not checked, checked as evenly as the high bits (the
 * multiplicative hashes are near-bijections there), or as a random hash
 * spreads (a Poisson(64) load: 28..105 holds every bucket but with odds of
 * about 1e-4 over 1024 buckets; a degenerate hash leaves buckets empty). */
static void check_spread_bits(const char *what, uint32_t (*h)(uint32_t i),
			      enum spread_low low_check)
{
	enum { KEYS = 1 << 16, BUCKETS = 1 << 10 };
	static uint32_t low[BUCKETS], high[BUCKETS];
	uint32_t lo_min = low_check == LOW_RANDOM ? 28 : 40, lo_max = low_check == LOW_RANDOM ? 105 : 90;

	memset(low, 0, sizeof(low));
	memset(high, 0, sizeof(high));
	for (uint32_t i = 0; i < KEYS; i++) {
		uint32_t v = h(i);

		low[v % BUCKETS]++;
		high[v >> 22]++;
	}
	for (int b = 0; b < BUCKETS; b++) {
		if (high[b] < 40 || high[b] > 90 ||
		    (low_check != LOW_SKIP && (low[b] < lo_min || low[b] > lo_max)))
			fail_msg("%s: bucket %d holds %u (low bits) / %u (high bits), mean 64",
				 what, b, low[b], high[b]);
	}
}

static void check_spread(const char *what, uint32_t (*h)(uint32_t i))
{
	check_spread_bits(what, h, LOW_EVEN);
}

static uint32_t u32_seq(uint32_t i) { return fast_hash_u32(i + 1, 0); }
static uint32_t u32_stride(uint32_t i) { return fast_hash_u32((i + 1) * 4096, 0); }
static uint32_t u32_ipv4(uint32_t i) { return fast_hash_u32(0x0a000000 + i * 256, 0); }
static uint64_t u64_seq(uint32_t i) { return i + 1; }
static uint64_t u64_high(uint32_t i) { return (uint64_t)(i + 1) << 32; }
static uint64_t u64_stride(uint32_t i) { return (uint64_t)(i + 1) * 4096; }
/* Only the high half varies, and not in its low bits: a struct of a fixed
 * port and an IPv4 /24, or a counter in the top bits. */
static uint64_t u64_high_ipv4(uint32_t i) { return (uint64_t)(0x0a000000 + i * 256) << 32 | 80; }
static uint64_t u64_high_stride(uint32_t i) { return (uint64_t)(i + 1) << 44; }

static uint64_t (*u64_keys)(uint32_t i); /* the key set being checked */

static uint32_t u64_flat(uint32_t i) { return fast_hash_u64(u64_keys(i), 7); }
static uint32_t u64_chained(uint32_t i)
{
	uint64_t k = u64_keys(i);

	return fast_hash_u64_folded_halves((uint32_t)k, (uint32_t)(k >> 32), 7);
}

static void check_u64_spread(const char *what, uint64_t (*keys)(uint32_t i))
{
	u64_keys = keys;
	check_spread_bits(what, u64_flat, LOW_SKIP);
	check_spread_bits(what, u64_chained, LOW_RANDOM);
}

static void test_fast_hash_spread(void **state)
{
	(void)state;
	check_spread("u32 sequential", u32_seq);
	check_spread("u32 stride 4096", u32_stride);
	check_spread("u32 IPv4 /24s", u32_ipv4);
	check_u64_spread("u64 sequential", u64_seq);
	check_u64_spread("u64 high half", u64_high);
	check_u64_spread("u64 stride 4096", u64_stride);
	check_u64_spread("u64 high half, IPv4 /24s", u64_high_ipv4);
	check_u64_spread("u64 high half, stride 4096", u64_high_stride);
}

/* Known answers for the word hash (computed independently from the
 * definition in hash/word_hash.h and the coefficient generator). */
static void test_word_hash_known_answers(void **state)
{
	(void)state;
	static const char four[] = "Four score and seven years ago";
	unsigned char seq[256];

	for (int i = 0; i < 256; i++)
		seq[i] = (unsigned char)i;
	assert_int_equal(word_hash("a", 1, 0), 0xb466e6a5U);
	assert_int_equal(word_hash("abc", 3, 0), 0xf5c8da90U);
	assert_int_equal(word_hash(four, 6, 0), 0xc98e33e5U);
	assert_int_equal(word_hash(four, 12, 0), 0xdd88c51aU);
	assert_int_equal(word_hash(four, 13, 0), 0x4304df85U);
	assert_int_equal(word_hash(four, 16, 0x0123456789abcdefULL), 0x7079ed41U);
	assert_int_equal(word_hash(four, 20, 0xdeadbeef), 0x857bd993U);
	assert_int_equal(word_hash(four, 30, 0), 0x27cb62f1U);
	/* The seed's bit 0 is dropped (odd coefficients). */
	assert_int_equal(word_hash(four, 30, 1), 0x27cb62f1U);
	assert_int_equal(word_hash(seq, 64, 0), 0xe8a61418U);
	assert_int_equal(word_hash(seq, 64, 0xfedcba9876543210ULL), 0x2b31bd08U);
	assert_int_equal(word_hash(seq, 256, 7), 0xdfbf6ebdU);
}

/*
 * The out-of-line word hash (constant-size cases and the generic loop)
 * equals the inline one for every size, aligned or not, and reads only the
 * key: each key sits at the end of its own heap block, so ASan reports any
 * read past it.
 */
static uint32_t word_hash_rt(const void *key, uint32_t key_size, uint64_t seed)
{
	/* A run-time size: the generic path, whatever the compiler sees. */
	volatile uint32_t ks = key_size;

	return word_hash(key, ks, seed);
}

/*
 * Every implementation in @impls equals @ref for every key size in
 * min_ks..max_ks, aligned or not, and reads only the key: each key sits at the
 * end of its own heap block, so ASan reports any read past it.  Every byte
 * counts.
 */
static void check_hash_paths(const hash_fn *impls, size_t n_impls, hash_fn ref, uint32_t min_ks,
			     uint32_t max_ks, unsigned rng_seed)
{
	srand(rng_seed);
	for (uint32_t ks = min_ks; ks <= max_ks; ks++) {
		unsigned char *buf = malloc(ks + 1);
		uint64_t seed = (uint64_t)rand() << 33 ^ (uint64_t)rand() << 11 ^ (uint64_t)rand();

		assert_non_null(buf);
		for (uint32_t i = 0; i <= ks; i++)
			buf[i] = (unsigned char)rand();
		uint32_t h = ref(buf, ks, seed), h1 = ref(buf + 1, ks, seed);

		for (size_t f = 0; f < n_impls; f++) {
			assert_int_equal(impls[f](buf, ks, seed), h);
			assert_int_equal(impls[f](buf + 1, ks, seed), h1);
		}
		for (uint32_t i = 0; i < ks; i++) {
			buf[i] ^= 0x10;
			assert_int_not_equal(impls[0](buf, ks, seed), h);
			buf[i] ^= 0x10;
		}
		free(buf);
	}
}

static void test_word_hash_paths(void **state)
{
	(void)state;
	hash_fn fn = hash_fn_for_kind(HASH_WORDS);

	check_hash_paths(&fn, 1, word_hash_rt, 1, WORD_HASH_MAX_KEY, 2);
	unsigned char k16[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	/* Seeds other than bit 0 change the function. */
	assert_int_not_equal(fn(k16, 16, 2), fn(k16, 16, 0));
	assert_int_not_equal(fn(k16, 16, 1ULL << 63), fn(k16, 16, 0));
}

/*
 * Spread of the word hash over regular key sets of one size: 2^16 keys
 * over 2^10 buckets, by low bits (a mask) and high bits (a multiply-shift).
 * A random function gives chi-square 1023 +- 45 and bucket loads 64 +- 8;
 * on keys varying in one word the word hash does better (a multiplicative
 * hash spreads an arithmetic sequence evenly), so those sets must stay within
 * ~6 sigma of random: chi-square <= 1300, loads 16..112.  Keys varying in two
 * words at once form a 2-D lattice, and a linear hash maps some lattices
 * unevenly onto the low bits (seed 0, 64-byte keys, bytes 0 and 35: chi-square
 * ~3900, loads up to 99, so ~4% longer chains than random): those sets are
 * held to chi-square <= 4096 and the same loads.  A hash that loses a word or
 * gets a degenerate coefficient lands far beyond either bound.
 */
enum { SPREAD_KEYS = 1 << 16, SPREAD_BUCKETS = 1 << 10 };

typedef void (*key_gen)(unsigned char *key, uint32_t ks, uint32_t i);

static double chi_square(const uint32_t *load)
{
	double expect = (double)SPREAD_KEYS / SPREAD_BUCKETS, chi = 0;

	for (int b = 0; b < SPREAD_BUCKETS; b++)
		chi += (load[b] - expect) * (load[b] - expect) / expect;
	return chi;
}

static void check_kind_spread(enum hash_kind kind, const char *what, uint32_t ks, uint64_t seed,
			      key_gen gen, double max_chi)
{
	static uint32_t low[SPREAD_BUCKETS], high[SPREAD_BUCKETS];
	unsigned char key[WORD_HASH_MAX_KEY];
	hash_fn fn = hash_fn_for_kind(kind);

	memset(low, 0, sizeof(low));
	memset(high, 0, sizeof(high));
	for (uint32_t j = 0; j < ks / 4; j++) {
		uint32_t w = 2654435761u * j;

		memcpy(key + 4 * j, &w, 4);
	}
	memset(key + ks / 4 * 4, 0x5a, ks % 4);
	for (uint32_t i = 0; i < SPREAD_KEYS; i++) {
		gen(key, ks, i);
		uint32_t v = fn(key, ks, seed);

		low[v % SPREAD_BUCKETS]++;
		high[v >> 22]++;
	}
	double chi_low = chi_square(low), chi_high = chi_square(high);

	if (chi_low > max_chi || chi_high > max_chi)
		fail_msg("%s: %s, %u-byte keys, seed %#llx: chi-square %.0f (low bits) / %.0f "
			 "(high bits), at most %.0f allowed", hash_kind_name(kind), what, ks,
			 (unsigned long long)seed, chi_low, chi_high, max_chi);
	for (int b = 0; b < SPREAD_BUCKETS; b++)
		if (low[b] < 16 || low[b] > 112 || high[b] < 16 || high[b] > 112)
			fail_msg("%s: %s, %u-byte keys, seed %#llx: bucket %d holds %u (low bits) / "
				 "%u (high bits), mean 64", hash_kind_name(kind), what, ks,
				 (unsigned long long)seed, b, low[b], high[b]);
}

/* The word hash at every size; NH too where it can hash (24 bytes on). */
static void check_word_spread(const char *what, uint32_t ks, uint64_t seed, key_gen gen,
			      double max_chi)
{
	check_kind_spread(HASH_WORDS, what, ks, seed, gen, max_chi);
	if (ks >= 24)
		check_kind_spread(HASH_NH, what, ks, seed, gen, max_chi);
}

static void put32(unsigned char *key, uint32_t off, uint32_t v)
{
	memcpy(key + off, &v, 4);
}

/* The lookup benchmark's keys: word 0 = i + 1, the rest fixed. */
static void gen_bench(unsigned char *key, uint32_t ks, uint32_t i)
{
	(void)ks;
	put32(key, 0, i + 1);
}

/* Only the last 4 bytes vary (overlapping the previous word if ks % 4). */
static void gen_last(unsigned char *key, uint32_t ks, uint32_t i)
{
	put32(key, ks - 4, i * 8);
}

/* Two words vary together, a byte each: a 256 x 256 grid. */
static void gen_grid(unsigned char *key, uint32_t ks, uint32_t i)
{
	put32(key, 0, i & 255);
	put32(key, ks / 8 * 4, (i >> 8) << 24);
}

/* Only the high halves of word 0 vary. */
static void gen_high(unsigned char *key, uint32_t ks, uint32_t i)
{
	(void)ks;
	put32(key, 0, (i + 1) << 16);
}

/* An IPv4 5-tuple: source 10.0.x.y, source port 1024 + x, fixed rest. */
static void gen_tuple(unsigned char *key, uint32_t ks, uint32_t i)
{
	uint16_t sport = (uint16_t)(1024 + (i >> 8));

	(void)ks;
	put32(key, 0, 0x0a000000u | (i & 0xffff));
	put32(key, 4, 0xc0a80101u);
	memcpy(key + 8, &sport, 2);
	key[10] = 0;
	key[11] = 80;
	key[12] = 6;
}

static void test_word_hash_spread(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 2,  6,  12, 13, 16,  20,  24, 32,
					  37, 48, 61, 64, 128, 256, 512 };
	static const uint64_t seeds[] = { 0, 0x9c2d1b6e5f4a3870ULL };

	for (size_t s = 0; s < ARRAY_SIZE(seeds); s++) {
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			uint32_t ks = sizes[i];

			if (ks >= 4) {
				check_word_spread("sequential word 0", ks, seeds[s], gen_bench, 1300);
				check_word_spread("high half of word 0", ks, seeds[s], gen_high, 1300);
				check_word_spread("last word", ks, seeds[s], gen_last, 1300);
			}
			if (ks >= 8)
				check_word_spread("two-word grid", ks, seeds[s], gen_grid, 4096);
			if (ks >= 13)
				check_word_spread("IPv4 5-tuple", ks, seeds[s], gen_tuple, 4096);
		}
	}
}

/*
 * NH from its definition (hash/nh_hash.h), written plainly: the 64-bit lanes
 * are bytes 0-7, 8-15, ..., a partial last one taken as the key's last 8
 * bytes; lane i's term is ((lo + c_lo) mod 2^32) * ((hi + c_hi) mod
 * 2^32) with c = word_hash_coef[i] ^ (seed & ~1); the sum of the terms is finished
 * by multiply, xorshift, multiply, and the hash is the top half.
 */
static uint32_t nh_reference(const void *key, uint32_t ks, uint64_t seed)
{
	const unsigned char *k = key;
	uint32_t starts[WORD_HASH_COEFS], n = 0;
	uint64_t sum = 0;

	for (uint32_t off = 0; off < ks; off += 8)
		starts[n++] = off + 8 <= ks ? off : ks - 8;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t lo, hi;
		uint64_t c = word_hash_coef[i] ^ (seed & ~1ULL);

		memcpy(&lo, k + starts[i], 4);
		memcpy(&hi, k + starts[i] + 4, 4);
		sum += (uint64_t)(uint32_t)(lo + (uint32_t)c) * (uint32_t)(hi + (uint32_t)(c >> 32));
	}
	sum *= FAST_HASH_MUL;
	sum ^= sum >> 32;
	return (uint32_t)((sum * 0xc2b2ae3d27d4eb4fULL) >> 32);
}

static uint32_t nh_hash_rt(const void *key, uint32_t key_size, uint64_t seed)
{
	volatile uint32_t ks = key_size; /* the generic path */

	return nh_hash(key, ks, seed);
}

/*
 * NH, inline (SIMD where built) and out of line, equals its definition for
 * every size it hashes, aligned or not, reads only the key (each key ends
 * its heap block: ASan sees any read past it), and every byte counts.
 */
static void test_nh_hash_paths(void **state)
{
	(void)state;
	hash_fn fn = hash_fn_for_kind(HASH_NH);
	const hash_fn impls[] = { fn, nh_hash_rt };

	assert_true(nh_hash_lanes(NH_HASH_MAX_KEY) <= WORD_HASH_COEFS);
	check_hash_paths(impls, ARRAY_SIZE(impls), nh_reference, 24, NH_HASH_MAX_KEY, 3);
	unsigned char k[256];
	for (uint32_t i = 0; i < sizeof(k); i++)
		k[i] = (unsigned char)(i * 7 + 1);
	/* The inline form the specialised lookups use, per size. */
	uint64_t *coef9 = hash_coef_new(9);

	assert_non_null(coef9);
	assert_int_equal(hash_sized_coef(k, 16, coef9), word_hash(k, 16, 9));
	assert_int_equal(hash_sized_coef(k, 32, coef9), word_hash(k, 32, 9));
	assert_int_equal(nh_hash(k, 32, 9), nh_reference(k, 32, 9));
	assert_int_equal(hash_sized_coef(k, 64, coef9), nh_reference(k, 64, 9));
	assert_int_equal(hash_sized_coef(k, 128, coef9), nh_reference(k, 128, 9));
	assert_int_equal(hash_sized_coef(k, 256, coef9), nh_reference(k, 256, 9));
	free(coef9);
	/* Every seed bit but bit 0 (dropped, as in the word hash) changes it. */
	for (int b = 1; b < 64; b++)
		assert_int_not_equal(fn(k, 64, 1ULL << b), fn(k, 64, 0));
	assert_int_equal(fn(k, 64, 1), fn(k, 64, 0));
	/* A map's own coefficients give the seeded hash, word hash and NH. */
	uint64_t seed = 0x0123456789abcdefULL, *coef = hash_coef_new(seed);

	assert_non_null(coef);
	static const uint32_t sizes[] = { 12, 16, 32, 48, 64, 100, 128, 256, 512, 1024 };
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t n = sizes[i];
		unsigned char *key = malloc(n);

		assert_non_null(key);
		for (uint32_t j = 0; j < n; j++)
			key[j] = (unsigned char)(j * 13 + n);
		assert_int_equal(hash_sized_coef(key, n, coef),
				 hash_fn_for_kind(hash_kind_for_key_size(n))(key, n, seed));
		if (n <= WORD_HASH_MAX_KEY)
			assert_int_equal(word_hash_with(key, n, coef, 0), word_hash(key, n, seed));
		free(key);
	}
	free(coef);
}

static void test_selection(void **state)
{
	(void)state;
	assert_int_equal(hash_kind_for_key_size(1), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(4), HASH_U32);
	assert_int_equal(hash_kind_for_key_size(8), HASH_U64);
	assert_int_equal(hash_kind_for_key_size(12), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(10), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(NH_HASH_MIN_KEY - 1), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(NH_HASH_MIN_KEY), HASH_NH);
	assert_int_equal(hash_kind_for_key_size(100), HASH_NH);
	assert_int_equal(hash_kind_for_key_size(HASH_XXH3_MIN_KEY - 1), HASH_NH);
	assert_true(HASH_XXH3_MIN_KEY - 1 <= NH_HASH_MAX_KEY);
	assert_true(NH_HASH_MIN_KEY - 1 <= WORD_HASH_MAX_KEY);
	assert_int_equal(hash_kind_for_key_size(HASH_XXH3_MIN_KEY), HASH_XXH3);
	assert_int_equal(hash_kind_for_key_size(1024), HASH_NH);
	assert_int_equal(hash_kind_for_key_size(4096), HASH_XXH3);

	unsigned char key[100];
	memset(key, 0xab, sizeof(key));
	assert_int_equal(hash_fn_for_kind(HASH_JHASH)(key, 13, 7), jhash_bytes(key, 13, 7));
	assert_int_equal(hash_fn_for_kind(HASH_JHASH2)(key, 12, 7), jhash_words(key, 3, 7));
	assert_int_equal(hash_fn_for_kind(HASH_WORDS)(key, 13, 7), word_hash(key, 13, 7));
	uint64_t x = XXH3_64bits_withSeed(key, 100, 7);
	assert_int_equal(hash_fn_for_kind(HASH_XXH3)(key, 100, 7), (uint32_t)(x ^ (x >> 32)));
	uint32_t k32 = 0xdeadbeef;
	uint64_t k64 = 0x1122334455667788ULL;
	assert_int_equal(hash_fn_for_kind(HASH_U32)(&k32, 4, 5), fast_hash_u32(k32, 5));
	assert_int_equal(hash_fn_for_kind(HASH_U64)(&k64, 8, 5), fast_hash_u64(k64, 5));
	assert_int_equal(fast_hash_u64_mem(&k64, 5), fast_hash_u64(k64, 5));
	assert_int_equal(hash_seed_new(1), 0);
	assert_string_equal(hash_kind_name(HASH_XXH3), "xxh3");
	assert_string_equal(hash_kind_name(HASH_WORDS), "words");
	assert_string_equal(hash_kind_name(HASH_NH), "nh");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jhash_known_answers),
		cmocka_unit_test(test_jhash2_matches_jhash),
		cmocka_unit_test(test_fast_hash_known_answers),
		cmocka_unit_test(test_fast_hash_spread),
		cmocka_unit_test(test_word_hash_known_answers),
		cmocka_unit_test(test_word_hash_paths),
		cmocka_unit_test(test_word_hash_spread),
		cmocka_unit_test(test_nh_hash_paths),
		cmocka_unit_test(test_selection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
