// SPDX-License-Identifier: BSD-2-Clause
/*
 * The chained table's program-view lookups (bpfmap_lookup and
 * bpfmap_lookup_bulk): specialised per key size at creation, so that the
 * hot path has the hash inlined and the key compare reduced to loads.
 */
#include "maps/htab.h"

#include "hash/fast_hash.h"
#include "hash/sized_hash.h"

static void *htab_lookup(struct bpfmap *map, const void *key)
{
	struct htab *h = to_htab(map);
	uint32_t hash = htab_hash(h, key);
	struct htab_elem *e = htab_find(h, htab_bucket(h, hash), hash, key);

	return e ? elem_value(h, e) : map_lookup_miss();
}

/* Program-view lookups for word-sized keys (htab_key_of: the hash inlined,
 * the key compared as one word).  Chosen at creation by htab_lookup_for(). */
static ALWAYS_INLINE void *htab_lookup_word(struct bpfmap *map, const void *key,
					    uint32_t key_size, enum hash_kind kind)
{
	struct htab *h = to_htab(map);
	struct htab_key k = htab_key_of(h, key, kind);
	struct htab_elem *e = htab_walk(htab_bucket(h, k.hash), &k, key_size, kind, NULL);

	return e ? elem_value(h, e) : map_lookup_miss();
}

static void *htab_lookup_u32(struct bpfmap *map, const void *key)
{
	return htab_lookup_word(map, key, 4, HASH_U32);
}

static void *htab_lookup_u64(struct bpfmap *map, const void *key)
{
	return htab_lookup_word(map, key, 8, HASH_U64);
}

/*
 * Bulk lookups in chunks: hash every key and prefetch its bucket, then load
 * every bucket head and prefetch the first element, then walk the chains.
 * The cache misses of a chunk overlap instead of following one another.
 * key_size and kind are constants in each caller, so the hash and the
 * compare are specialised as in the single lookups.
 */
#define HTAB_BULK_CHUNK 16

static ALWAYS_INLINE int htab_lookup_bulk_sized(struct htab *h, const char *keys, uint32_t n,
						void **values, uint32_t key_size,
						enum hash_kind kind)
{
	struct htab_key key[HTAB_BULK_CHUNK];
	struct htab_bucket *bucket[HTAB_BULK_CHUNK];
	int found = 0;

	for (uint32_t base = 0; base < n; base += HTAB_BULK_CHUNK) {
		uint32_t m = n - base < HTAB_BULK_CHUNK ? n - base : HTAB_BULK_CHUNK;
		const char *k = keys + (size_t)base * key_size;

		for (uint32_t i = 0; i < m; i++) {
			key[i] = htab_key_of(h, k + (size_t)i * key_size, kind);
			bucket[i] = htab_bucket(h, key[i].hash);
			__builtin_prefetch(bucket[i]);
		}
		for (uint32_t i = 0; i < m; i++)
			__builtin_prefetch(bucket_first(bucket[i]));
		for (uint32_t i = 0; i < m; i++) {
			struct htab_elem *e = htab_walk(bucket[i], &key[i], key_size, kind, NULL);

			values[base + i] = e ? elem_value(h, e) : NULL;
			found += e != NULL;
		}
	}
	return found;
}

int htab_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	struct htab *h = to_htab(map);

	switch (h->hash_kind) {
	case HASH_U32:
		return htab_lookup_bulk_sized(h, keys, n, values, 4, HASH_U32);
	case HASH_U64:
		return htab_lookup_bulk_sized(h, keys, n, values, 8, HASH_U64);
	default:
		return htab_lookup_bulk_sized(h, keys, n, values, map->key_size, HTAB_GENERIC);
	}
}

/* Common longer key sizes: the hash (hash/sized_hash.h, the map's own
 * coefficients) and the compare inline (loads instead of calls); chosen only
 * for maps whose hash that is. */
#define HTAB_LOOKUP_SIZED(n)                                                                       \
	static void *htab_lookup_k##n(struct bpfmap *map, const void *key)                         \
	{                                                                                          \
		struct htab *h = to_htab(map);                                                     \
		uint32_t hash = htab_top(hash_sized(key, n, &h->hp));                                \
		struct htab_elem *e = htab_find_sized(htab_bucket(h, hash), hash, key, n);         \
                                                                                                   \
		return e ? elem_value(h, e) : map_lookup_miss();                                   \
	}
HTAB_LOOKUP_SIZED(16)
HTAB_LOOKUP_SIZED(32)
HTAB_LOOKUP_SIZED(64)
HTAB_LOOKUP_SIZED(128)
HTAB_LOOKUP_SIZED(256)

map_lookup_fn htab_lookup_for(enum hash_kind kind, uint32_t key_size)
{
	switch (kind) {
	case HASH_U32:
		return htab_lookup_u32;
	case HASH_U64:
		return htab_lookup_u64;
	default:
		break;
	}
	if (!hash_sized_covers(kind))
		return htab_lookup;
	switch (key_size) {
	case 16:
		return htab_lookup_k16;
	case 32:
		return htab_lookup_k32;
	case 64:
		return htab_lookup_k64;
	case 128:
		return htab_lookup_k128;
	case 256:
		return htab_lookup_k256;
	default:
		return htab_lookup;
	}
}
