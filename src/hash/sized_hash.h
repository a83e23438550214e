/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash that hash_kind_for_key_size() picks for keys of 9 to
 * HASH_XXH3_MIN_KEY - 1 bytes, inline, for lookups specialised to one key
 * size (a compile-time constant @n: the choice folds away and the hash's
 * code is straight-line), with the map's own coefficients
 * (hash_coef_new(seed)), so no seed is mixed in per coefficient.  Equal to
 * hash_fn_for_kind(hash_kind_for_key_size(n))(key, n, seed)
 * (tests/test_jhash.c checks it).
 */
#ifndef BPFMAP_HASH_SIZED_HASH_H
#define BPFMAP_HASH_SIZED_HASH_H

#include "hash/hash_select.h"
#include "hash/nh_hash.h"
#include "hash/word_hash.h"

static ALWAYS_INLINE uint32_t hash_sized_coef(const void *key, uint32_t n, const uint64_t *coef)
{
	return n >= NH_HASH_MIN_KEY ? nh_hash_with(key, n, coef, 0) : word_hash_with(key, n, coef, 0);
}

/* Does hash_sized_coef() stand for the map's hash at this key size? */
static ALWAYS_INLINE int hash_sized_covers(enum hash_kind kind)
{
	return kind == HASH_WORDS || kind == HASH_NH;
}

#endif
