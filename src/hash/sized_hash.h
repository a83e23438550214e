/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hash that hash_kind_for_key_size() picks for keys of 9 to NH_BLOCK
 * bytes, inline, for lookups specialised to one key size (a compile-time
 * constant @n: the choice folds away and the hash's code is straight-line).
 * Equal to hash_fn_for_kind(hash_kind_for_key_size(n))(key, n, p)
 * (tests/test_hash.c checks it).
 */
#ifndef BPFMAP_HASH_SIZED_HASH_H
#define BPFMAP_HASH_SIZED_HASH_H

#include "hash/hash_select.h"
#include "hash/nh_hash.h"
#include "hash/word_hash.h"

static ALWAYS_INLINE uint64_t hash_sized(const void *key, uint32_t n, const struct hash_params *p)
{
	return n >= NH_HASH_MIN_KEY ? nh_hash(key, n, p) : word_hash(key, n, p);
}

/* Does hash_sized() stand for the map's hash at this key size? */
static ALWAYS_INLINE int hash_sized_covers(enum hash_kind kind)
{
	return kind == HASH_WORDS || kind == HASH_NH;
}

#endif
