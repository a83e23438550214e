// SPDX-License-Identifier: BSD-2-Clause
/*
 * The chained table's program-view lookups (bpfmap_lookup and
 * bpfmap_lookup_bulk): specialised per key size at creation, so that the
 * hot path has the hash inlined and the key compare reduced to loads.
 */
#include "maps/htab.h"

#include "hash/fast_hash.h"
#include "hash/word_hash.h"

static void *htab_lookup(struct bpfmap *map, const void *key)
{
	struct htab *h = to_htab(map);
	uint32_t hash = htab_hash(h, key);
	struct htab_elem *e = htab_find(h, htab_bucket(h, hash), hash, key);

	return e ? elem_value(h, e) : map_lookup_miss();
}

/*
 * Program-view lookups for word-sized keys: the hash inlined, and the key
 * compared as one word without the stored hash (the key is cheaper to
 * compare than the hash is).  The 8-byte key is read as two 32-bit halves,
 * the way the hash reads it, and compared from registers: a 64-bit load of
 * a key whose head was just written by a 32-bit store would stall on
 * store-to-load forwarding.  Chosen at creation by htab_lookup_for().
 */
static ALWAYS_INLINE struct htab_elem *htab_find_u32(const struct htab_bucket *b, uint32_t k)
{
	for (struct htab_elem *e = bucket_first(b); e; e = elem_next(e))
		if (load_u32(elem_key(e)) == k)
			return e;
	return NULL;
}

static ALWAYS_INLINE struct htab_elem *htab_find_u64(const struct htab_bucket *b, uint64_t k)
{
	for (struct htab_elem *e = bucket_first(b); e; e = elem_next(e))
		if (e->data[0] == k) /* the key, padded to 8: one aligned load */
			return e;
	return NULL;
}

static void *htab_lookup_u32(struct bpfmap *map, const void *key)
{
	struct htab *h = to_htab(map);
	uint32_t k = load_u32(key);
	struct htab_elem *e = htab_find_u32(htab_bucket(h, fast_hash_u32(k, h->seed)), k);

	return e ? elem_value(h, e) : map_lookup_miss();
}

static void *htab_lookup_u64(struct bpfmap *map, const void *key)
{
	struct htab *h = to_htab(map);
	uint32_t lo, hi;
	struct htab_elem *e;

	load_u32_halves(key, &lo, &hi);
	e = htab_find_u64(htab_bucket(h, fast_hash_u64_halves(lo, hi, h->seed)),
			  (uint64_t)hi << 32 | lo);

	return e ? elem_value(h, e) : map_lookup_miss();
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
	uint32_t hash[HTAB_BULK_CHUNK];
	struct htab_bucket *bucket[HTAB_BULK_CHUNK];
	int found = 0;

	for (uint32_t base = 0; base < n; base += HTAB_BULK_CHUNK) {
		uint32_t m = n - base < HTAB_BULK_CHUNK ? n - base : HTAB_BULK_CHUNK;
		const char *k = keys + (size_t)base * key_size;

		for (uint32_t i = 0; i < m; i++) {
			const char *key = k + (size_t)i * key_size;

			if (kind == HASH_U32)
				hash[i] = fast_hash_u32(load_u32(key), h->seed);
			else if (kind == HASH_U64)
				hash[i] = fast_hash_u64_mem(key, h->seed);
			else
				hash[i] = htab_hash(h, key);
			bucket[i] = htab_bucket(h, hash[i]);
			__builtin_prefetch(bucket[i]);
		}
		for (uint32_t i = 0; i < m; i++)
			__builtin_prefetch(bucket_first(bucket[i]));
		for (uint32_t i = 0; i < m; i++) {
			const char *key = k + (size_t)i * key_size;
			struct htab_elem *e;

			if (kind == HASH_U32)
				e = htab_find_u32(bucket[i], load_u32(key));
			else if (kind == HASH_U64) {
				uint32_t lo, hi;

				load_u32_halves(key, &lo, &hi);
				e = htab_find_u64(bucket[i], (uint64_t)hi << 32 | lo);
			} else
				e = htab_find_sized(bucket[i], hash[i], key, key_size);

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
		return htab_lookup_bulk_sized(h, keys, n, values, map->key_size, h->hash_kind);
	}
}

/* Common longer key sizes: the word hash and the compare inline (loads
 * instead of calls). */
#define HTAB_LOOKUP_SIZED(n)                                                                       \
	static void *htab_lookup_k##n(struct bpfmap *map, const void *key)                         \
	{                                                                                          \
		struct htab *h = to_htab(map);                                                     \
		uint32_t hash = h->hash_kind == HASH_WORDS ? word_hash(key, n, h->seed)            \
							   : htab_hash(h, key);                    \
		struct htab_elem *e = htab_find_sized(htab_bucket(h, hash), hash, key, n);         \
                                                                                                   \
		return e ? elem_value(h, e) : map_lookup_miss();                                   \
	}
HTAB_LOOKUP_SIZED(16)
HTAB_LOOKUP_SIZED(32)
HTAB_LOOKUP_SIZED(64)

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
	switch (key_size) {
	case 16:
		return htab_lookup_k16;
	case 32:
		return htab_lookup_k32;
	case 64:
		return htab_lookup_k64;
	default:
		return htab_lookup;
	}
}
