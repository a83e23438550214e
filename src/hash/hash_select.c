/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-map hash choice and seeding. */
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "hash/jhash.h"
#include "hash/nh_hash.h"
#include "hash/word_hash.h"

_Static_assert(NH_HASH_MIN_KEY <= WORD_HASH_MAX_KEY + 1, "a word-hashed key size lacks coefficients");
_Static_assert(HASH_XXH3_MIN_KEY <= NH_HASH_MAX_KEY + 1, "an NH-hashed key size lacks coefficients");

/* The word hash's K_i: random odd 64-bit constants (splitmix64 outputs from
 * state 0x6d756c74696c696e, bit 0 set). */
const uint64_t word_hash_coef[WORD_HASH_COEFS] = {
	0xb97736dfa92c75bbULL, 0xf95277753f556181ULL, 0x68dd5f3690ee7c97ULL,
	0x2694d906bd629189ULL, 0x5c3c21e0f0654fadULL, 0xb0d2a028d06aad2fULL,
	0x6c3ca174c865fa09ULL, 0x97f8fcb0fb566645ULL, 0xb82a45fcadcaa1f3ULL,
	0x3df365a1a5a86031ULL, 0x6258c99d9d42f1c1ULL, 0x9d432795d37249b9ULL,
	0xa8cdb289dda33967ULL, 0x7e3ee5adccd9bcbbULL, 0x20c353fa51c07b2dULL,
	0xd9aebd666a3126e3ULL, 0xbb07765deab6c059ULL, 0xd691a4b0fff9652dULL,
	0x81e9cf28ec7c7b8dULL, 0x9bea1b44e85a9f67ULL, 0xc49761d5b1076ab7ULL,
	0xec01d4603599322dULL, 0xbc8a733e5de8547dULL, 0xdcca629e4221f17fULL,
	0xfdd11255bb15d8b1ULL, 0x4b78c008cebf653dULL, 0x586d96075fe97b29ULL,
	0x37df65c4d1c56c65ULL, 0xc80761d2c5ee5839ULL, 0xee96a2fd5a117c07ULL,
	0xc1facce1f325d759ULL, 0x685a979e106f3851ULL, 0xce5f42c2401629b7ULL,
	0xdb344f13070722d7ULL, 0xcd10683f07d3a5f3ULL, 0x85239d20484886f5ULL,
	0x273261b1fdfac3a1ULL, 0x53fd4906c6358897ULL, 0x199f460c9d9dfc97ULL,
	0xd41122653aa6953fULL, 0x6edc6ebfca9825c7ULL, 0x27af0ee0fa2fd04bULL,
	0x2feab134ba1ca7d9ULL, 0xf463e7e120f91241ULL, 0x244f4df5bfe60929ULL,
	0xcc29ee73387ae6afULL, 0x881586d92b9d6f1bULL, 0x83562b5b78aba263ULL,
	0xaddcdaf83d3d2fadULL, 0xbd0c239a841c3ac7ULL, 0x3d21b909d50348bdULL,
	0xa3931ae6e48ab10fULL, 0xfa0d794f7b057467ULL, 0xd00dacc57d994d03ULL,
	0x3a864c4d8104ac75ULL, 0x586ff0c3aaebbec9ULL, 0xec65ea13238b4aadULL,
	0x2b7260f25123ccd9ULL, 0x158dc21b0870b73dULL, 0xadf0c54df907e6b7ULL,
	0xba3c56c9cfcc4cf1ULL, 0x43f8f5dc0de6606bULL, 0x943fabb5bb81d5afULL,
	0xe7511212b09221dfULL, 0xfe1cacdc3830848fULL, 0xf2e0be61d6672d0dULL,
	0xdfd437e998022acdULL, 0xec493929fa8be2dfULL, 0x1d237ffa6eb20cc1ULL,
	0x5c03af9b08f6a955ULL, 0x2d412e8ce7157aedULL, 0x2bcd90e7be56bc03ULL,
	0x3013b428c21bd977ULL, 0x019a9e020a3a5ddbULL, 0xe50ccda3600be473ULL,
	0xbcef98cbbeb920d5ULL, 0x55498bb7539b223fULL, 0x094430a620acce3dULL,
	0xf63da0baa6f6df95ULL, 0xd376e1afc81cf3dfULL, 0x32b06b138e563b13ULL,
	0x56a6b3ec00331009ULL, 0xaaf1bf58701244a7ULL, 0x5dbc8011a111d69dULL,
	0xe7046293031442a7ULL, 0x927116fc97323a2bULL, 0xd09e89c76bd0b8d3ULL,
	0xdd54feb8b5b27855ULL, 0x61dbf12b72d97365ULL, 0x6f201d000f8fddc9ULL,
	0x9f55850f77b22895ULL, 0x1d43b4f1949545a7ULL, 0x0bd56dea5d3c6071ULL,
	0xb3d734b6bbd633f9ULL, 0x74d40370e8be4bbbULL, 0xa31b19855f8bd1d3ULL,
	0xdff0287d673be51bULL, 0x86ec8e3e6fa0f4cfULL, 0xc647bc14ad541521ULL,
	0x7319aa3f38978b97ULL, 0x4ad372b68512b07fULL, 0x346913d6b443de99ULL,
	0xb3fdc6bf5de291b9ULL, 0x767c290b70fd9f67ULL, 0xfb378fc75270d46dULL,
	0x9d72908f97079e01ULL, 0xa1d844489ca1e803ULL, 0x5402d416d2a0432bULL,
	0x5fe2f47b38859483ULL, 0x490f0a1e511d8fe1ULL, 0xb3824f4949021aedULL,
	0x1660132ec10fcbb1ULL, 0x10dc75c969eaeaf1ULL, 0x98ecf408f64b0605ULL,
	0x7ea2cb40b027b573ULL, 0xc1431059037a81d9ULL, 0x22e7f2c7ba1decf5ULL,
	0x677c3573c5ff8503ULL, 0x98af35c1d08db8fbULL, 0x91d34c6c2f411cbbULL,
	0x6c7a1c9489c2ae23ULL, 0xf4d70b41a9cc41ddULL, 0x5fc0b0830a6efbabULL,
	0x5acd79bbd69439f7ULL, 0x2fd796eea74e6de9ULL, 0x531d32e0aeb1d59fULL,
	0x17dd396da6afa5f9ULL, 0xfac9b0986892f909ULL, 0xd465b9916f6d3ffbULL,
};

static uint32_t hash_u32(const void *key, uint32_t key_size, uint64_t seed)
{
	(void)key_size;
	return fast_hash_u32(load_u32(key), seed);
}

static uint32_t hash_u64(const void *key, uint32_t key_size, uint64_t seed)
{
	(void)key_size;
	return fast_hash_u64_mem(key, seed);
}

static uint32_t hash_u64_folded(const void *key, uint32_t key_size, uint64_t seed)
{
	uint32_t lo, hi;

	(void)key_size;
	load_u32_halves(key, &lo, &hi);
	return fast_hash_u64_folded_halves(lo, hi, seed);
}

static uint32_t hash_jhash(const void *key, uint32_t key_size, uint64_t seed)
{
	return jhash_bytes(key, key_size, (uint32_t)seed);
}

static uint32_t hash_jhash2(const void *key, uint32_t key_size, uint64_t seed)
{
	return jhash_words(key, key_size / 4, (uint32_t)seed);
}

/*
 * The word hash with the common key sizes as constants, so their loops
 * unroll; the switch costs one predicted branch (a map's key size is fixed).
 */
static uint32_t hash_words(const void *key, uint32_t key_size, uint64_t seed)
{
	switch (key_size) {
	case 12: return word_hash(key, 12, seed);
	case 13: return word_hash(key, 13, seed);
	case 16: return word_hash(key, 16, seed);
	case 20: return word_hash(key, 20, seed);
	case 24: return word_hash(key, 24, seed);
	case 28: return word_hash(key, 28, seed);
	case 32: return word_hash(key, 32, seed);
	case 36: return word_hash(key, 36, seed);
	case 37: return word_hash(key, 37, seed);
	case 40: return word_hash(key, 40, seed);
	case 48: return word_hash(key, 48, seed);
	case 56: return word_hash(key, 56, seed);
	case 64: return word_hash(key, 64, seed);
	case 128: return word_hash(key, 128, seed);
	case 256: return word_hash(key, 256, seed);
	default: return word_hash(key, key_size, seed);
	}
}

/* NH (hash/nh_hash.h), common key sizes as constants as above. */
static uint32_t hash_nh(const void *key, uint32_t key_size, uint64_t seed)
{
	switch (key_size) {
	case 32: return nh_hash(key, 32, seed);
	case 40: return nh_hash(key, 40, seed);
	case 48: return nh_hash(key, 48, seed);
	case 64: return nh_hash(key, 64, seed);
	case 128: return nh_hash(key, 128, seed);
	case 256: return nh_hash(key, 256, seed);
	case 512: return nh_hash(key, 512, seed);
	case 1024: return nh_hash(key, 1024, seed);
	default: return nh_hash(key, key_size, seed);
	}
}

static uint32_t hash_xxh3(const void *key, uint32_t key_size, uint64_t seed)
{
	uint64_t h = XXH3_64bits_withSeed(key, key_size, seed);

	return (uint32_t)(h ^ (h >> 32));
}

enum hash_kind hash_kind_for_key_size(uint32_t key_size)
{
	if (key_size == 4)
		return HASH_U32;
	if (key_size == 8)
		return HASH_U64;
	if (key_size >= HASH_XXH3_MIN_KEY)
		return HASH_XXH3;
	if (key_size >= NH_HASH_MIN_KEY)
		return HASH_NH;
	return HASH_WORDS;
}

hash_fn hash_fn_for_kind(enum hash_kind kind)
{
	switch (kind) {
	case HASH_U32:
		return hash_u32;
	case HASH_U64:
		return hash_u64;
	case HASH_JHASH2:
		return hash_jhash2;
	case HASH_XXH3:
		return hash_xxh3;
	case HASH_WORDS:
		return hash_words;
	case HASH_NH:
		return hash_nh;
	case HASH_JHASH:
	default:
		return hash_jhash;
	}
}

hash_fn hash_fn_low_bits(enum hash_kind kind)
{
	return kind == HASH_U64 ? hash_u64_folded : hash_fn_for_kind(kind);
}

const char *hash_kind_name(enum hash_kind kind)
{
	static const char *const names[] = {
		[HASH_U32] = "u32", [HASH_U64] = "u64", [HASH_JHASH] = "jhash",
		[HASH_JHASH2] = "jhash2", [HASH_XXH3] = "xxh3",
		[HASH_WORDS] = "words", [HASH_NH] = "nh",
	};
	return names[kind];
}

uint64_t *hash_coef_new(uint64_t seed)
{
	uint64_t *c = malloc(sizeof(word_hash_coef));

	for (size_t i = 0; c && i < WORD_HASH_COEFS; i++)
		c[i] = word_hash_coef[i] ^ (seed & ~1ULL);
	return c;
}

uint64_t hash_seed_new(int zero_seed)
{
	uint64_t seed;

	if (zero_seed)
		return 0;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return seed;
	/* No entropy yet (early boot): a varying seed still beats a fixed one. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_nsec << 32 | (uint64_t)ts.tv_sec) ^ (uint64_t)(uintptr_t)&seed;
}
