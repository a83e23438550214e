/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-map hash choice (hash/hash_select.h). */
#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "hash/nh_hash.h"
#include "hash/word_hash.h"

_Static_assert(NH_HASH_MIN_KEY <= WORD_HASH_MAX_KEY + 1, "a word-hashed key size lacks coefficients");
_Static_assert((WORD_HASH_MAX_KEY - 1) / 4 + 2 <= HASH_COEFS, "the word hash lacks coefficients");

static uint64_t hash_u32(const void *key, uint32_t key_size, const struct hash_params *p)
{
	(void)key_size;
	return fast_hash_u32(load_u32(key), p->mul, p->fin);
}

static uint64_t hash_u64(const void *key, uint32_t key_size, const struct hash_params *p)
{
	(void)key_size;
	return fast_hash_u64_mem(key, p->mul, p->fin);
}

/*
 * The word hash with the common key sizes as constants, so their loops
 * unroll; the switch costs one predicted branch (a map's key size is fixed).
 */
static uint64_t hash_words(const void *key, uint32_t key_size, const struct hash_params *p)
{
	switch (key_size) {
	case 12: return word_hash(key, 12, p);
	case 16: return word_hash(key, 16, p);
	case 20: return word_hash(key, 20, p);
	case 24: return word_hash(key, 24, p);
	case 32: return word_hash(key, 32, p);
	case 36: return word_hash(key, 36, p);
	case 40: return word_hash(key, 40, p);
	case 48: return word_hash(key, 48, p);
	default: return word_hash(key, key_size, p);
	}
}

/* NH (hash/nh_hash.h), common key sizes as constants as above. */
static uint64_t hash_nh(const void *key, uint32_t key_size, const struct hash_params *p)
{
	switch (key_size) {
	case 64: return nh_hash(key, 64, p);
	case 128: return nh_hash(key, 128, p);
	case 256: return nh_hash(key, 256, p);
	case 512: return nh_hash(key, 512, p);
	case 1024: return nh_hash(key, 1024, p);
	default: return nh_hash(key, key_size, p);
	}
}

static uint64_t hash_nh_long(const void *key, uint32_t key_size, const struct hash_params *p)
{
	return nh_hash_long(key, key_size, p);
}

enum hash_kind hash_kind_for_key_size(uint32_t key_size)
{
	if (key_size == 4)
		return HASH_U32;
	if (key_size == 8)
		return HASH_U64;
	if (key_size > NH_BLOCK)
		return HASH_NH_LONG;
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
	case HASH_WORDS:
		return hash_words;
	case HASH_NH:
		return hash_nh;
	case HASH_NH_LONG:
	default:
		return hash_nh_long;
	}
}

const char *hash_kind_name(enum hash_kind kind)
{
	static const char *const names[] = {
		[HASH_U32] = "u32", [HASH_U64] = "u64", [HASH_WORDS] = "words",
		[HASH_NH] = "nh",   [HASH_NH_LONG] = "nh-long",
	};
	return names[kind];
}
