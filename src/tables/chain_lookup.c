// SPDX-License-Identifier: BSD-2-Clause
/*
 * The chained table's program-view lookups (bpfmap_lookup and
 * bpfmap_lookup_bulk) and copy-outs (map->copy): specialised per key size at
 * creation, so that the hot path has the hash inlined and the key compare
 * reduced to loads.
 */
#include <errno.h>

#include "sync/rcu.h"
#include "tables/chain.h"

#include "hash/fast_hash.h"
#include "hash/sized_hash.h"

static void *chain_lookup(struct bpfmap *map, const void *key)
{
	struct chain *c = to_chain(map);
	uint32_t hash = chain_hash(c, key);
	struct chain_elem *e = chain_find(c, chain_bucket(c, hash), hash, key);

	return e ? elem_value(c, e) : map_lookup_miss();
}

/* Program-view lookups for word-sized keys (chain_key_of: the hash inlined,
 * the key compared as one word).  Chosen at creation by chain_lookup_for(). */
static ALWAYS_INLINE void *chain_lookup_word(struct bpfmap *map, const void *key,
					    uint32_t key_size, enum hash_kind kind)
{
	struct chain *c = to_chain(map);
	struct chain_key k = chain_key_of(c, key, kind);
	struct chain_elem *e = chain_walk(chain_bucket(c, k.hash), &k, key_size, kind, NULL);

	return e ? elem_value(c, e) : map_lookup_miss();
}

static void *chain_lookup_u32(struct bpfmap *map, const void *key)
{
	return chain_lookup_word(map, key, 4, HASH_U32);
}

static void *chain_lookup_u64(struct bpfmap *map, const void *key)
{
	return chain_lookup_word(map, key, 8, HASH_U64);
}

/*
 * Bulk lookups in chunks: hash every key and prefetch its bucket, then load
 * every bucket head and prefetch the first element, then walk the chains.
 * The cache misses of a chunk overlap instead of following one another.
 * key_size and kind are constants in each caller, so the hash and the
 * compare are specialised as in the single lookups.
 */
#define CHAIN_BULK_CHUNK 16

static ALWAYS_INLINE int chain_lookup_bulk_sized(struct chain *c, const char *keys, uint32_t n,
						void **values, uint32_t key_size,
						enum hash_kind kind)
{
	struct chain_key key[CHAIN_BULK_CHUNK];
	struct chain_bucket *bucket[CHAIN_BULK_CHUNK];
	int found = 0;

	for (uint32_t base = 0; base < n; base += CHAIN_BULK_CHUNK) {
		uint32_t m = n - base < CHAIN_BULK_CHUNK ? n - base : CHAIN_BULK_CHUNK;
		const char *k = keys + (size_t)base * key_size;

		for (uint32_t i = 0; i < m; i++) {
			key[i] = chain_key_of(c, k + (size_t)i * key_size, kind);
			bucket[i] = chain_bucket(c, key[i].hash);
			__builtin_prefetch(bucket[i]);
		}
		for (uint32_t i = 0; i < m; i++)
			__builtin_prefetch(bucket_first(bucket[i]));
		for (uint32_t i = 0; i < m; i++) {
			struct chain_elem *e = chain_walk(bucket[i], &key[i], key_size, kind, NULL);

			values[base + i] = e ? elem_value(c, e) : NULL;
			found += e != NULL;
		}
	}
	return found;
}

int chain_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	struct chain *c = to_chain(map);

	switch (c->hash_kind) {
	case HASH_U32:
		return chain_lookup_bulk_sized(c, keys, n, values, 4, HASH_U32);
	case HASH_U64:
		return chain_lookup_bulk_sized(c, keys, n, values, 8, HASH_U64);
	default:
		return chain_lookup_bulk_sized(c, keys, n, values, map->key_size, CHAIN_GENERIC);
	}
}

/* Common longer key sizes: the hash (hash/sized_hash.h, the map's own
 * coefficients) and the compare inline (loads instead of calls); chosen only
 * for maps whose hash that is. */
#define CHAIN_LOOKUP_SIZED(n)                                                                      \
	static void *chain_lookup_k##n(struct bpfmap *map, const void *key)                        \
	{                                                                                          \
		struct chain *c = to_chain(map);                                                   \
		uint32_t hash = chain_top(hash_sized(key, n, &c->hp));                             \
		struct chain_elem *e = chain_find_sized(chain_bucket(c, hash), hash, key, n);      \
                                                                                                   \
		return e ? elem_value(c, e) : map_lookup_miss();                                   \
	}
CHAIN_LOOKUP_SIZED(16)
CHAIN_LOOKUP_SIZED(32)
CHAIN_LOOKUP_SIZED(64)
CHAIN_LOOKUP_SIZED(128)
CHAIN_LOOKUP_SIZED(256)

map_lookup_fn chain_lookup_for(enum hash_kind kind, uint32_t key_size)
{
	switch (kind) {
	case HASH_U32:
		return chain_lookup_u32;
	case HASH_U64:
		return chain_lookup_u64;
	default:
		break;
	}
	if (!hash_sized_covers(kind))
		return chain_lookup;
	switch (key_size) {
	case 16:
		return chain_lookup_k16;
	case 32:
		return chain_lookup_k32;
	case 64:
		return chain_lookup_k64;
	case 128:
		return chain_lookup_k128;
	case 256:
		return chain_lookup_k256;
	default:
		return chain_lookup;
	}
}

/* The copy-out of key @k (its hash computed): in a read-side section, as
 * chain_lookup_elem's; errno set as map->copy sets it. */
static ALWAYS_INLINE int chain_copy_key(struct chain *c, const struct chain_key *k, void *value,
					uint32_t key_size, enum hash_kind kind)
{
	struct chain_elem *e;
	int ret = -ENOENT;

	rcu_lock();
	e = chain_walk(chain_bucket(c, k->hash), k, key_size, kind, NULL);
	if (e)
		ret = chain_copy_value_out(c, e, value, false);
	rcu_unlock();
	return map_result(ret);
}

static int chain_copy_u32(struct bpfmap *map, const void *key, void *value)
{
	struct chain *c = to_chain(map);
	struct chain_key k = chain_key_of(c, key, HASH_U32);

	return chain_copy_key(c, &k, value, 4, HASH_U32);
}

static int chain_copy_u64(struct bpfmap *map, const void *key, void *value)
{
	struct chain *c = to_chain(map);
	struct chain_key k = chain_key_of(c, key, HASH_U64);

	return chain_copy_key(c, &k, value, 8, HASH_U64);
}

#define CHAIN_COPY_SIZED(n)                                                                        \
	static int chain_copy_k##n(struct bpfmap *map, const void *key, void *value)               \
	{                                                                                          \
		struct chain *c = to_chain(map);                                                   \
		struct chain_key k = { .key = key,                                                 \
				       .hash = chain_top(hash_sized(key, n, &c->hp)) };            \
                                                                                                   \
		return chain_copy_key(c, &k, value, n, CHAIN_GENERIC);                             \
	}
CHAIN_COPY_SIZED(16)
CHAIN_COPY_SIZED(32)
CHAIN_COPY_SIZED(64)
CHAIN_COPY_SIZED(128)
CHAIN_COPY_SIZED(256)

map_copy_fn chain_copy_for(enum hash_kind kind, uint32_t key_size)
{
	if (kind == HASH_U32)
		return chain_copy_u32;
	if (kind == HASH_U64)
		return chain_copy_u64;
	if (!hash_sized_covers(kind))
		return NULL;
	switch (key_size) {
	case 16:
		return chain_copy_k16;
	case 32:
		return chain_copy_k32;
	case 64:
		return chain_copy_k64;
	case 128:
		return chain_copy_k128;
	case 256:
		return chain_copy_k256;
	default:
		return NULL;
	}
}
