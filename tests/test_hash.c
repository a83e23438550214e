/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash functions a map may choose: known answers from an independent
 * reference (tests/tools/hash_reference.py, written from the papers'
 * definitions), every code path against a plain C reference, parameters,
 * and spread over regular key sets.  Chosen keys are tests/test_flooding.c's.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hash/fast_hash.h"
#include "hash/hash_params.h"
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
		memmove(buf + 1, buf, words * 4);
		assert_int_equal(jhash_words(buf + 1, words, seed),
				 jhash_bytes(buf + 1, words * 4, seed));
	}
}

/* The seeded expansion is splitmix64 in struct order; random parameters keep
 * each family's constraints and differ from map to map. */
static void test_params(void **state)
{
	(void)state;
	struct hash_params p, q;

	hash_params_seeded(&p, 0);
	assert_true(p.mul == 0xe220a8397b1dcdafULL && p.fin == 0x6e789e6aa1b965f5ULL);
	assert_true(p.poly == 0x06c45d188009454fULL);
	assert_true(p.coef[0] == 0xf88bb8a8724c81ecULL && p.coef[128] == 0xe809acafa23864a4ULL);
	hash_params_seeded(&p, 0x0123456789abcdefULL);
	assert_true(p.mul == 0x157a3807a48faa9dULL && p.coef[128] == 0x43856098c604fda6ULL);

	struct hash_params *z = hash_params_new(true);

	assert_non_null(z);
	hash_params_seeded(&p, 0);
	assert_memory_equal(z, &p, sizeof(p));
	free(z);
	for (int i = 0; i < 64; i++) {
		hash_params_random(&p);
		hash_params_random(&q);
		assert_true(p.mul & 1);
		assert_true(p.poly < NH_POLY_PRIME);
		assert_memory_not_equal(&p, &q, sizeof(p));
	}
}

/* tests/tools/hash_reference.py kat */
struct kat {
	uint64_t seed;
	const char *src;
	uint32_t ks;
	uint64_t hash;
};

static const char four[] = "Four score and seven years ago";
static unsigned char seq[3000];

static void test_known_answers(void **state)
{
	(void)state;
	static const struct kat kats[] = {
		{ 0x0ULL, four, 1, 0xd061fec6a9dec1e0ULL },
		{ 0x0ULL, four, 3, 0x047ac9770e28a3f0ULL },
		{ 0x0ULL, four, 4, 0x91f42657a1f59964ULL },
		{ 0x0ULL, four, 6, 0xef4dba62e7a92d36ULL },
		{ 0x0ULL, four, 8, 0xe7e4aab709c338ddULL },
		{ 0x0ULL, four, 12, 0x8f9603d786af5041ULL },
		{ 0x0ULL, four, 13, 0x46f73928329cb433ULL },
		{ 0x0ULL, four, 16, 0x1af32ac217c3a4ecULL },
		{ 0x0ULL, four, 30, 0xa4196bc3b337d2bfULL },
		{ 0x0ULL, NULL, 24, 0x90a94cd13351442aULL },
		{ 0x0ULL, NULL, 37, 0x64c4ac2c27841eb2ULL },
		{ 0x0ULL, NULL, 63, 0xf47d199c8280b00bULL },
		{ 0x0ULL, NULL, 64, 0xa744db2e7c036dbaULL },
		{ 0x0ULL, NULL, 100, 0xeee94623ec8b87d0ULL },
		{ 0x0ULL, NULL, 256, 0xec725fbe366f11eaULL },
		{ 0x0ULL, NULL, 1024, 0xedc1b43c4dd66a1dULL },
		{ 0x0ULL, NULL, 1025, 0x6678271bdd1c3b27ULL },
		{ 0x0ULL, NULL, 2048, 0xfeb22601c0650aeeULL },
		{ 0x0ULL, NULL, 2500, 0x22b49edbc846ea15ULL },
		{ 0x123456789abcdefULL, four, 1, 0xd1e16d875759a38dULL },
		{ 0x123456789abcdefULL, four, 3, 0xdf7c966cccda2b6aULL },
		{ 0x123456789abcdefULL, four, 4, 0xe60a7907ef40c8a0ULL },
		{ 0x123456789abcdefULL, four, 6, 0x3d13426088ff1c54ULL },
		{ 0x123456789abcdefULL, four, 8, 0x49b64315d9554e93ULL },
		{ 0x123456789abcdefULL, four, 12, 0xb554edd940f29ff6ULL },
		{ 0x123456789abcdefULL, four, 13, 0x6fff3582fa1e4449ULL },
		{ 0x123456789abcdefULL, four, 16, 0xa01a225627867820ULL },
		{ 0x123456789abcdefULL, four, 30, 0xc5373eacae18c687ULL },
		{ 0x123456789abcdefULL, NULL, 24, 0xf49a7c6e14eda2f9ULL },
		{ 0x123456789abcdefULL, NULL, 37, 0x4b7ad69257c4dd81ULL },
		{ 0x123456789abcdefULL, NULL, 63, 0x85e3ba954a5b9146ULL },
		{ 0x123456789abcdefULL, NULL, 64, 0xdb3ca72989cdd06bULL },
		{ 0x123456789abcdefULL, NULL, 100, 0x73d7a1c43b0e07caULL },
		{ 0x123456789abcdefULL, NULL, 256, 0x81ceebafe4f55266ULL },
		{ 0x123456789abcdefULL, NULL, 1024, 0x483e1a5086b1b428ULL },
		{ 0x123456789abcdefULL, NULL, 1025, 0x2967be3bee77c7d6ULL },
		{ 0x123456789abcdefULL, NULL, 2048, 0xad0a44b4c2551c8aULL },
		{ 0x123456789abcdefULL, NULL, 2500, 0xc35d51a96088262cULL },
	};
	struct hash_params p;

	for (size_t i = 0; i < ARRAY_SIZE(kats); i++) {
		const struct kat *k = &kats[i];
		const void *src = k->src ? (const void *)k->src : (const void *)seq;

		hash_params_seeded(&p, k->seed);
		if (hash_fn_for_kind(hash_kind_for_key_size(k->ks))(src, k->ks, &p) != k->hash)
			fail_msg("%u-byte key, seed %#llx: %#llx, the reference says %#llx", k->ks,
				 (unsigned long long)k->seed,
				 (unsigned long long)hash_fn_for_kind(hash_kind_for_key_size(k->ks))(
					 src, k->ks, &p),
				 (unsigned long long)k->hash);
	}
	hash_params_seeded(&p, 0);
	assert_true(hash_fn_for_kind(HASH_NH)(seq, 32, &p) == 0xd9d67f4b4b814156ULL);
	assert_true(hash_fn_for_kind(HASH_WORDS)(seq, 100, &p) == 0xbf07dd0f20d73763ULL);
	hash_params_seeded(&p, 0x0123456789abcdefULL);
	assert_true(hash_fn_for_kind(HASH_NH)(seq, 32, &p) == 0x785c39ba87b7bb80ULL);
	assert_true(hash_fn_for_kind(HASH_WORDS)(seq, 100, &p) == 0x17691d0459707903ULL);
}

/* ---- plain references, from the definitions in the headers ---- */

static uint32_t le32(const unsigned char *k, uint32_t off)
{
	return (uint32_t)k[off] | (uint32_t)k[off + 1] << 8 | (uint32_t)k[off + 2] << 16 |
	       (uint32_t)k[off + 3] << 24;
}

static uint64_t ref_finish(uint64_t s, const struct hash_params *p)
{
	uint64_t x = (s ^ (s >> 32)) * 0xff51afd7ed558ccdULL;

	return (x ^ (x >> 32)) * p->fin;
}

static uint64_t ref_word_key(uint64_t x, uint32_t ks, const struct hash_params *p)
{
	if (ks == 8)
		x = (x >> 32) << 32 | ((uint32_t)x ^ (uint32_t)(x >> 32));
	return ref_finish(x * p->mul, p);
}

static uint64_t ref_words(const void *key, uint32_t ks, const struct hash_params *p)
{
	const unsigned char *k = key;
	const uint64_t *c = p->coef;
	uint32_t n = ks / 4, i = 0;
	uint64_t s = c[0];

	for (; i + 2 <= n; i += 2)
		s += (le32(k, 4 * i) + c[i + 1]) * (le32(k, 4 * i + 4) + c[i + 2]);
	if (i < n)
		s += (uint64_t)le32(k, 4 * i) * c[i + 1];
	if (ks % 4) {
		uint32_t off = n * 4, r = ks - off, t;

		t = ks >= 8 ? le32(k, ks - 4)
			    : (uint32_t)k[off] | (uint32_t)k[off + r / 2] << 8 |
				      (uint32_t)k[ks - 1] << 16;
		s += (uint64_t)t * c[n + 1];
	}
	return ref_finish(s, p);
}

static uint64_t ref_nh_sum(const unsigned char *k, uint32_t ks, const uint64_t *c)
{
	uint64_t s = 0;
	uint32_t lane = 0;

	for (uint32_t off = 0; off < ks; off += 8, lane++) {
		uint32_t at = off + 8 <= ks ? off : ks - 8;
		uint32_t lo = le32(k, at) + (uint32_t)c[lane];
		uint32_t hi = le32(k, at + 4) + (uint32_t)(c[lane] >> 32);

		s += (uint64_t)lo * hi;
	}
	return s;
}

static uint64_t ref_nh(const void *key, uint32_t ks, const struct hash_params *p)
{
	return ref_finish(ref_nh_sum(key, ks, p->coef), p);
}

static uint64_t ref_mod61(unsigned __int128 x)
{
	return (uint64_t)(x % NH_POLY_PRIME);
}

static uint64_t ref_nh_long(const void *key, uint32_t ks, const struct hash_params *p)
{
	const unsigned char *k = key;
	uint64_t acc = 0;

	for (uint32_t off = 0;; off += NH_BLOCK) {
		uint32_t at = off + NH_BLOCK < ks ? off : ks - NH_BLOCK;
		uint64_t s = ref_nh_sum(k + at, NH_BLOCK, p->coef);

		acc = ref_mod61((unsigned __int128)acc * p->poly + (uint32_t)s);
		acc = ref_mod61((unsigned __int128)acc * p->poly + (s >> 32));
		if (at == ks - NH_BLOCK)
			break;
	}
	return ref_finish(acc, p);
}

/* The inline forms with a run-time size: the generic paths. */
static uint64_t words_rt(const void *key, uint32_t key_size, const struct hash_params *p)
{
	volatile uint32_t ks = key_size;

	return word_hash(key, ks, p);
}

static uint64_t nh_rt(const void *key, uint32_t key_size, const struct hash_params *p)
{
	volatile uint32_t ks = key_size;

	return nh_hash(key, ks, p);
}

/*
 * Every implementation in @impls equals @ref for every key size in
 * min_ks..max_ks (by @step), aligned or not, and reads only the key: each key
 * sits at the end of its own heap block, so ASan reports any read past it.
 * Every byte counts.
 */
static void check_hash_paths(const hash_fn *impls, size_t n_impls, hash_fn ref, uint32_t min_ks,
			     uint32_t max_ks, uint32_t step, unsigned rng_seed)
{
	struct hash_params p;

	srand(rng_seed);
	for (uint32_t ks = min_ks; ks <= max_ks; ks += step) {
		unsigned char *buf = malloc(ks + 1);

		assert_non_null(buf);
		hash_params_seeded(&p, (uint64_t)rand() << 33 ^ (uint64_t)rand());
		for (uint32_t i = 0; i <= ks; i++)
			buf[i] = (unsigned char)rand();
		uint64_t h = ref(buf, ks, &p), h1 = ref(buf + 1, ks, &p);

		for (size_t f = 0; f < n_impls; f++) {
			assert_true(impls[f](buf, ks, &p) == h);
			assert_true(impls[f](buf + 1, ks, &p) == h1);
		}
		for (uint32_t i = 0; i < ks; i++) {
			buf[i] ^= 0x10;
			assert_true(impls[0](buf, ks, &p) != h);
			buf[i] ^= 0x10;
		}
		free(buf);
	}
}

static void test_paths(void **state)
{
	(void)state;
	const hash_fn words[] = { hash_fn_for_kind(HASH_WORDS), words_rt };
	const hash_fn nh[] = { hash_fn_for_kind(HASH_NH), nh_rt };
	const hash_fn nh_long = hash_fn_for_kind(HASH_NH_LONG);

	check_hash_paths(words, ARRAY_SIZE(words), ref_words, 1, WORD_HASH_MAX_KEY, 1, 2);
	check_hash_paths(nh, ARRAY_SIZE(nh), ref_nh, 24, NH_BLOCK, 1, 3);
	check_hash_paths(&nh_long, 1, ref_nh_long, NH_BLOCK + 1, 3 * NH_BLOCK + 9, 37, 4);
	check_hash_paths(&nh_long, 1, ref_nh_long, 2 * NH_BLOCK - 2, 2 * NH_BLOCK + 2, 1, 5);
	/* The word keys' hashes, and the inline form the specialised lookups use. */
	struct hash_params p;
	uint32_t k32 = 0xdeadbeef;
	uint64_t k64 = 0x1122334455667788ULL;

	hash_params_seeded(&p, 9);
	assert_true(hash_fn_for_kind(HASH_U32)(&k32, 4, &p) == ref_word_key(k32, 4, &p));
	assert_true(hash_fn_for_kind(HASH_U64)(&k64, 8, &p) == ref_word_key(k64, 8, &p));
	assert_true(fast_hash_u64_mem(&k64, p.mul, p.fin) == ref_word_key(k64, 8, &p));
	assert_true(fast_hash_u64(k64, p.mul, p.fin) == ref_word_key(k64, 8, &p));
	static const uint32_t sizes[] = { 12, 16, 32, 48, 63, 64, 100, 128, 256, 512, 1024 };
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t n = sizes[i];

		assert_true(hash_sized_covers(hash_kind_for_key_size(n)));
		assert_true(hash_sized(seq, n, &p) ==
			    hash_fn_for_kind(hash_kind_for_key_size(n))(seq, n, &p));
	}
	/* Every parameter a size uses changes its hash. */
	struct hash_params q = p;

	q.mul += 2;
	assert_true(hash_fn_for_kind(HASH_U32)(&k32, 4, &q) !=
		    hash_fn_for_kind(HASH_U32)(&k32, 4, &p));
	q = p;
	q.fin += 2;
	assert_true(hash_fn_for_kind(HASH_U64)(&k64, 8, &q) !=
		    hash_fn_for_kind(HASH_U64)(&k64, 8, &p));
	q = p;
	q.coef[1] ^= 1ULL << 40;
	assert_true(hash_fn_for_kind(HASH_WORDS)(seq, 16, &q) !=
		    hash_fn_for_kind(HASH_WORDS)(seq, 16, &p));
	q = p;
	q.coef[127] ^= 1ULL << 40;
	assert_true(hash_fn_for_kind(HASH_NH)(seq, 1024, &q) !=
		    hash_fn_for_kind(HASH_NH)(seq, 1024, &p));
	q = p;
	q.poly ^= 1ULL << 20;
	assert_true(hash_fn_for_kind(HASH_NH_LONG)(seq, 2048, &q) !=
		    hash_fn_for_kind(HASH_NH_LONG)(seq, 2048, &p));
}

/*
 * Spread over regular key sets: 2^16 keys onto 2^10 homes by the hash's top
 * bits (how both tables place a hash), for several parameter sets.  A random
 * function gives chi-square 1023 +- 45 and loads 64 +- 8.  A hash linear in
 * the key maps these sets, arithmetic progressions and lattices, evenly for
 * most parameters and badly for a few (the word hash alone, 16-byte
 * sequential keys: chi-square 38000 at the 99th percentile of 200 maps;
 * hash/hash_finish.h); with the fold and the second multiply they spread as
 * random keys do (over 400 maps: median ~1020, 99th percentile ~1250, worst
 * 1720).  Bounds: each parameter set's chi-square within 2048 (twice a
 * random function's collisions) and loads within 16..112, the median over
 * the sets within 1150.  A hash that loses a word, or that some regular set
 * defeats, lands far beyond.
 */
enum { SPREAD_KEYS = 1 << 16, SPREAD_BUCKETS = 1 << 10 };

typedef void (*key_gen)(unsigned char *key, uint32_t ks, uint32_t i);

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

/* Only the high half of word 0 varies. */
static void gen_high(unsigned char *key, uint32_t ks, uint32_t i)
{
	(void)ks;
	put32(key, 0, (i + 1) << 16);
}

/* Strided: i * 4096 in word 0. */
static void gen_stride(unsigned char *key, uint32_t ks, uint32_t i)
{
	(void)ks;
	put32(key, 0, (i + 1) * 4096);
}

/* Only the top 16 bits of an 8-byte key vary (a counter in the high bits). */
static void gen_top(unsigned char *key, uint32_t ks, uint32_t i)
{
	put32(key, ks >= 8 ? 4 : 0, (i + 1) << 16);
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

/* The chi-square of @gen's keys; with @each, every load checked too. */
static double spread_chi(const char *what, uint32_t ks, uint64_t seed, key_gen gen, bool each)
{
	static uint32_t load[SPREAD_BUCKETS];
	unsigned char key[4096];
	struct hash_params p;
	hash_fn fn = hash_fn_for_kind(hash_kind_for_key_size(ks));
	double chi = 0, expect = (double)SPREAD_KEYS / SPREAD_BUCKETS;

	hash_params_seeded(&p, seed);
	memset(load, 0, sizeof(load));
	for (uint32_t j = 0; j < ks / 4; j++)
		put32(key, 4 * j, 2654435761u * j);
	memset(key + ks / 4 * 4, 0x5a, ks % 4);
	for (uint32_t i = 0; i < SPREAD_KEYS; i++) {
		gen(key, ks, i);
		load[fn(key, ks, &p) >> 54]++;
	}
	for (int b = 0; b < SPREAD_BUCKETS; b++) {
		chi += (load[b] - expect) * (load[b] - expect) / expect;
		if (each && (load[b] < 16 || load[b] > 112))
			fail_msg("%s, %u-byte keys, seed %#llx: bucket %d holds %u, mean 64", what,
				 ks, (unsigned long long)seed, b, load[b]);
	}
	return chi;
}

#define SPREAD_SEEDS 6

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void check_spread(const char *what, uint32_t ks, key_gen gen)
{
	double chi[SPREAD_SEEDS];

	for (uint64_t seed = 0; seed < SPREAD_SEEDS; seed++) {
		chi[seed] = spread_chi(what, ks, seed, gen, true);
		if (chi[seed] > 2048)
			fail_msg("%s, %u-byte keys, seed %#llx: chi-square %.0f, at most 2048", what,
				 ks, (unsigned long long)seed, chi[seed]);
	}
	qsort(chi, SPREAD_SEEDS, sizeof(chi[0]), cmp_double);
	if (chi[SPREAD_SEEDS / 2] > 1150)
		fail_msg("%s, %u-byte keys: median chi-square %.0f over %d seeds, at most 1150", what,
			 ks, chi[SPREAD_SEEDS / 2], SPREAD_SEEDS);
}

/* Valgrind runs `test_hash --small` (tests/CMakeLists.txt): test_spread on
 * one key size of each kind up to NH (u32, u64, words, NH), not 20: under
 * memcheck the statistics took 150 s, and long NH's paths are checked
 * byte by byte in test_paths. */
static bool small;

static void test_spread(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 4,  6,  8,  12,  13,  16,  20,   24,   32,   37,  48,
					  61, 64, 128, 256, 512, 1000, 1024, 1500, 2048 };
	static const uint32_t few[] = { 4, 8, 13, 64 };
	const uint32_t *use = small ? few : sizes;
	size_t n = small ? ARRAY_SIZE(few) : ARRAY_SIZE(sizes);

	for (size_t i = 0; i < n; i++) {
		uint32_t ks = use[i];

		check_spread("sequential word 0", ks, gen_bench);
		check_spread("high half of word 0", ks, gen_high);
		check_spread("stride 4096", ks, gen_stride);
		check_spread("last word", ks, gen_last);
		if (ks >= 8) {
			check_spread("top bits", ks, gen_top);
			check_spread("two-word grid", ks, gen_grid);
		}
		if (ks >= 13)
			check_spread("IPv4 5-tuple", ks, gen_tuple);
	}
}

static void test_selection(void **state)
{
	(void)state;
	assert_int_equal(hash_kind_for_key_size(1), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(4), HASH_U32);
	assert_int_equal(hash_kind_for_key_size(8), HASH_U64);
	assert_int_equal(hash_kind_for_key_size(10), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(NH_HASH_MIN_KEY - 1), HASH_WORDS);
	assert_int_equal(hash_kind_for_key_size(NH_HASH_MIN_KEY), HASH_NH);
	assert_int_equal(hash_kind_for_key_size(NH_BLOCK), HASH_NH);
	assert_int_equal(hash_kind_for_key_size(NH_BLOCK + 1), HASH_NH_LONG);
	assert_true(NH_HASH_MIN_KEY - 1 <= WORD_HASH_MAX_KEY);
	assert_string_equal(hash_kind_name(HASH_U32), "u32");
	assert_string_equal(hash_kind_name(HASH_WORDS), "words");
	assert_string_equal(hash_kind_name(HASH_NH), "nh");
	assert_string_equal(hash_kind_name(HASH_NH_LONG), "nh-long");
}

static int setup_seq(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(seq); i++)
		seq[i] = (unsigned char)i;
	return 0;
}

int main(int argc, char **argv)
{
	small = argc > 1 && !strcmp(argv[1], "--small");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jhash_known_answers),
		cmocka_unit_test(test_jhash2_matches_jhash),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_selection),
	};
	return cmocka_run_group_tests(tests, setup_seq, NULL);
}
