/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-map hash choice and seeding. */
#include <sys/random.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "hash/jhash.h"

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

static uint32_t hash_jhash(const void *key, uint32_t key_size, uint64_t seed)
{
	return jhash_bytes(key, key_size, (uint32_t)seed);
}

static uint32_t hash_jhash2(const void *key, uint32_t key_size, uint64_t seed)
{
	return jhash_words(key, key_size / 4, (uint32_t)seed);
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
	return key_size % 4 == 0 ? HASH_JHASH2 : HASH_JHASH;
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
	case HASH_JHASH:
	default:
		return hash_jhash;
	}
}

const char *hash_kind_name(enum hash_kind kind)
{
	static const char *const names[] = {
		[HASH_U32] = "u32", [HASH_U64] = "u64", [HASH_JHASH] = "jhash",
		[HASH_JHASH2] = "jhash2", [HASH_XXH3] = "xxh3",
	};
	return names[kind];
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
