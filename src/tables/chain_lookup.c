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
#include "tables/chain_lru.h"

#include "hash/fast_hash.h"
#include "hash/sized_hash.h"
#include "sync/reentry.h"
#include "sync/spin_lock.h"
#include "sync/store_switch.h"
#include "sync/store_window.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

/*
 * What a program-view lookup returns for element @e, by view (a constant in
 * each instantiation): its value; CPU 0's slot or the calling CPU's in a
 * per-CPU map (its number from rseq unchecked, with RSEQ: map_pcpu_here);
 * and in an evicting map the lookup marks @e as used.  VALID: the walk is
 * one of a map that reuses elements at once (chain_walk_once), as every
 * preallocated map's is.
 */
enum chain_view {
	CHAIN_VIEW_PLAIN = 0,
	CHAIN_VIEW_CPU = 1, /* the calling CPU's slot */
	CHAIN_VIEW_LRU = 2, /* mark the element used */
	CHAIN_VIEW_RSEQ = 4,
	CHAIN_VIEW_VALID = 8,
};

static ALWAYS_INLINE void *chain_view(struct chain *c, struct chain_elem *e, unsigned int view)
{
	char *v;

	if (!e)
		return map_lookup_miss();
	if (view & CHAIN_VIEW_LRU)
		chain_lru_touch(c, e);
	if (view & CHAIN_VIEW_CPU)
		return map_pcpu_here(&c->map, chain_pcpu_slot(c, e, 0), c->pcpu_region,
				     view & CHAIN_VIEW_RSEQ);
	v = elem_value(c, e);
	return v;
}

/* The check of a view's walks: chain_check_of's, as a constant. */
static ALWAYS_INLINE enum chain_check chain_view_check(unsigned int view)
{
	if (!(view & CHAIN_VIEW_VALID))
		return CHAIN_CHECK_NONE;
	return view & CHAIN_VIEW_LRU ? CHAIN_CHECK_BUCKET : CHAIN_CHECK_MOVED;
}

/* A lookup whose first walk was not valid (chain_walk_once): again until
 * one is, out of line, so that the lookups reach it by a tail call and
 * their fast path keeps no register across a call. */
static __attribute__((noinline)) void *chain_lookup_again(struct bpfmap *map, const void *key,
							  unsigned int view)
{
	struct chain *c = to_chain(map);
	struct chain_key k = { .key = key, .hash = chain_hash(c, key) };
	struct chain_elem *e = chain_walk_valid(c, chain_bucket(c, k.hash), &k, map->key_size,
						CHAIN_GENERIC, chain_view_check(view), NULL);

	return e == CHAIN_WALK_BUSY ? map_lookup_busy() : chain_view(c, e, view);
}

/* The walk of every lookup, @k's hash computed: a hit needs no check
 * (chain_walk_once), so that only a miss tests the walk's version, and
 * goes again out of line (chain_lookup_again) if it did not hold. */
static ALWAYS_INLINE void *chain_lookup_walk(struct bpfmap *map, const void *key,
					    const struct chain_key *k, uint32_t key_size,
					    enum hash_kind kind, unsigned int view)
{
	struct chain *c = to_chain(map);
	enum chain_check how = chain_view_check(view);
	struct chain_bucket *b = chain_bucket(c, k->hash);
	uint32_t v = chain_check_begin(c, b, how);
	struct chain_elem *e = chain_walk(b, k, key_size, kind, NULL);

	if (likely(e) || likely(chain_check_valid(c, b, how, v)))
		return chain_view(c, e, view);
	return chain_lookup_again(map, key, view);
}

static ALWAYS_INLINE void *chain_lookup_view(struct bpfmap *map, const void *key,
					    unsigned int view)
{
	struct chain_key k = { .key = key, .hash = chain_hash(to_chain(map), key) };

	return chain_lookup_walk(map, key, &k, map->key_size, CHAIN_GENERIC, view);
}

/* Program-view lookups for word-sized keys (chain_key_of: the hash inlined,
 * the key compared as one word).  Chosen at creation by chain_lookup_for(). */
static ALWAYS_INLINE void *chain_lookup_word(struct bpfmap *map, const void *key,
					    uint32_t key_size, enum hash_kind kind,
					    unsigned int view)
{
	struct chain_key k = chain_key_of(to_chain(map), key, kind);

	return chain_lookup_walk(map, key, &k, key_size, kind, view);
}

/* Common longer key sizes: the hash (hash/sized_hash.h, the map's own
 * coefficients) and the compare inline (loads instead of calls); chosen only
 * for maps whose hash that is. */
static ALWAYS_INLINE void *chain_lookup_sized(struct bpfmap *map, const void *key,
					     uint32_t key_size, unsigned int view)
{
	struct chain_key k = { .key = key,
			       .hash = chain_top(hash_sized(key, key_size, &to_chain(map)->hp)) };

	return chain_lookup_walk(map, key, &k, key_size, CHAIN_GENERIC, view);
}

#define CHAIN_LOOKUPS(suffix, view)                                                                \
	static void *chain_lookup_any##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		return chain_lookup_view(map, key, view);                                          \
	}                                                                                          \
	static void *chain_lookup_u32##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		return chain_lookup_word(map, key, 4, HASH_U32, view);                             \
	}                                                                                          \
	static void *chain_lookup_u64##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		return chain_lookup_word(map, key, 8, HASH_U64, view);                             \
	}                                                                                          \
	static void *chain_lookup_k16##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		return chain_lookup_sized(map, key, 16, view);                                     \
	}                                                                                          \
	static void *chain_lookup_k32##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		return chain_lookup_sized(map, key, 32, view);                                     \
	}                                                                                          \
	static void *chain_lookup_k64##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		return chain_lookup_sized(map, key, 64, view);                                     \
	}                                                                                          \
	static void *chain_lookup_k128##suffix(struct bpfmap *map, const void *key)                \
	{                                                                                          \
		return chain_lookup_sized(map, key, 128, view);                                    \
	}                                                                                          \
	static void *chain_lookup_k256##suffix(struct bpfmap *map, const void *key)                \
	{                                                                                          \
		return chain_lookup_sized(map, key, 256, view);                                    \
	}                                                                                          \
	static const map_lookup_fn chain_lookups##suffix[] = {                                     \
		chain_lookup_any##suffix, chain_lookup_u32##suffix, chain_lookup_u64##suffix,      \
		chain_lookup_k16##suffix, chain_lookup_k32##suffix, chain_lookup_k64##suffix,      \
		chain_lookup_k128##suffix, chain_lookup_k256##suffix,                              \
	};
/* NO_PREALLOC maps' (chain_lookup_sectioned runs them), then preallocated
 * ones', evicting ones' last (always preallocated). */
CHAIN_LOOKUPS(, CHAIN_VIEW_PLAIN)
CHAIN_LOOKUPS(_cpu, CHAIN_VIEW_CPU)
CHAIN_LOOKUPS(_cpu_rseq, CHAIN_VIEW_CPU | CHAIN_VIEW_RSEQ)
CHAIN_LOOKUPS(_v, CHAIN_VIEW_VALID)
CHAIN_LOOKUPS(_cpu_v, CHAIN_VIEW_VALID | CHAIN_VIEW_CPU)
CHAIN_LOOKUPS(_cpu_rseq_v, CHAIN_VIEW_VALID | CHAIN_VIEW_CPU | CHAIN_VIEW_RSEQ)
CHAIN_LOOKUPS(_lru, CHAIN_VIEW_VALID | CHAIN_VIEW_LRU)
CHAIN_LOOKUPS(_lru_cpu, CHAIN_VIEW_VALID | CHAIN_VIEW_LRU | CHAIN_VIEW_CPU)
CHAIN_LOOKUPS(_lru_cpu_rseq, CHAIN_VIEW_VALID | CHAIN_VIEW_LRU | CHAIN_VIEW_CPU | CHAIN_VIEW_RSEQ)

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
			struct chain_elem *e = chain_walk_valid(c, bucket[i], &key[i], key_size,
								kind, chain_check_of(c), NULL);

			if (unlikely(e == CHAIN_WALK_BUSY))
				e = NULL; /* a signal handler's, which must not wait */
			values[base + i] = e ? elem_value(c, e) : NULL;
			found += e != NULL;
		}
	}
	return found;
}

/* The walk sets errno on a miss; leaving a section does not touch it. */
void *chain_lookup_sectioned(struct bpfmap *map, const void *key)
{
	void *v;

	rcu_lock();
	v = to_chain(map)->lookup_walk(map, key);
	rcu_unlock();
	return v;
}

/* The program view's other walks take a section too, whatever the map: a
 * nested one costs little beside them. */
int chain_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	struct chain *c = to_chain(map);
	int found;

	rcu_lock();
	switch (c->hash_kind) {
	case HASH_U32:
		found = chain_lookup_bulk_sized(c, keys, n, values, 4, HASH_U32);
		break;
	case HASH_U64:
		found = chain_lookup_bulk_sized(c, keys, n, values, 8, HASH_U64);
		break;
	default:
		found = chain_lookup_bulk_sized(c, keys, n, values, map->key_size, CHAIN_GENERIC);
		break;
	}
	rcu_unlock();
	return found;
}

void *chain_lookup_percpu(struct bpfmap *map, const void *key, uint32_t cpu)
{
	struct chain *c = to_chain(map);
	struct chain_key k = { .key = key, .hash = chain_hash(c, key) };
	struct chain_elem *e;
	void *slot = NULL;

	rcu_lock();
	e = chain_walk_valid(c, chain_bucket(c, k.hash), &k, map->key_size, CHAIN_GENERIC,
			     chain_check_of(c), NULL);
	if (e && e != CHAIN_WALK_BUSY) {
		if (c->evict)
			chain_lru_touch(c, e);
		slot = chain_pcpu_slot(c, e, cpu);
	}
	rcu_unlock();
	if (slot)
		return slot;
	return e ? map_lookup_busy() : map_lookup_miss();
}

/* An add into the calling CPU's counter of element @e (read-side section
 * held): a restartable sequence where there is one, else an atomic add. */
static ALWAYS_INLINE void chain_pcpu_add(struct chain *c, struct chain_elem *e, uint64_t delta)
{
	if (c->evict)
		chain_lru_touch(c, e);
	map_pcpu_add(&c->map, chain_pcpu_slot(c, e, 0), c->pcpu_region, delta);
}

/* chain_percpu_add under the bucket lock, as chain_take copies and
 * unlinks: once the map's lock-free stores are off.  A signal handler's
 * answers -EBUSY only if that lock is held (reentry_lock_or_busy). */
static int chain_percpu_add_locked(struct chain *c, const struct chain_key *k, uint64_t delta,
				   uint32_t key_size, enum hash_kind kind)
{
	struct chain_bucket *b = chain_bucket(c, k->hash);
	struct chain_elem *e;
	bool marked;

	store_window_ensure(); /* lock-free from the next one on */
	if (!reentry_lock_or_busy(&b->lock, &marked))
		return -EBUSY;
	e = chain_walk(b, k, key_size, kind, NULL);
	if (e)
		chain_pcpu_add(c, e, delta);
	chain_bucket_unlock(b);
	if (marked)
		reentry_end();
	return e ? 0 : -ENOENT;
}

/*
 * As flat_percpu_add (tables/flat_percpu.c): in a store window that a
 * lookup_and_delete, or a deleted element's reuse at once, waits for when
 * it turns the map's lock-free stores off, so that no add lands in a value
 * already copied out or handed to another key; under the bucket lock once
 * they are off.  Evicting maps, which reuse their victims at once all the
 * time and keep those stores off, add without a window (the README says
 * what a lookup_and_delete may then miss).
 */
static ALWAYS_INLINE int chain_percpu_add_sized(struct chain *c, const void *key, uint64_t delta,
					       uint32_t key_size, enum hash_kind kind)
{
	struct chain_key k = chain_key_of(c, key, kind);
	struct store_window *win = NULL;
	bool inside = false;
	struct chain_elem *e;

	rcu_lock();
	if (!c->evict) {
		win = stores_open_on(&c->lockfree_store, &inside, store_window_owner(&c->map));
		if (unlikely(!win)) {
			rcu_unlock();
			return chain_percpu_add_locked(c, &k, delta, key_size, kind);
		}
	}
	e = chain_walk_valid(c, chain_bucket(c, k.hash), &k, key_size, kind, chain_check_of(c),
			     NULL);
	if (e != CHAIN_WALK_BUSY && e) {
		TEST_HOOK(HOOK_PCPU_ADD, &c->map);
		chain_pcpu_add(c, e, delta);
	}
	if (win)
		stores_close(win, inside);
	rcu_unlock();
	if (e == CHAIN_WALK_BUSY)
		return -EBUSY;
	return e ? 0 : -ENOENT;
}

int chain_percpu_add(struct bpfmap *map, const void *key, uint64_t delta)
{
	struct chain *c = to_chain(map);

	switch (c->hash_kind) {
	case HASH_U32:
		return chain_percpu_add_sized(c, key, delta, 4, HASH_U32);
	case HASH_U64:
		return chain_percpu_add_sized(c, key, delta, 8, HASH_U64);
	default:
		return chain_percpu_add_sized(c, key, delta, map->key_size, CHAIN_GENERIC);
	}
}

/* The index in chain_lookups* of a map's key kind and size. */
static unsigned int chain_lookup_index(enum hash_kind kind, uint32_t key_size)
{
	switch (kind) {
	case HASH_U32:
		return 1;
	case HASH_U64:
		return 2;
	default:
		break;
	}
	if (!hash_sized_covers(kind))
		return 0;
	switch (key_size) {
	case 16:
		return 3;
	case 32:
		return 4;
	case 64:
		return 5;
	case 128:
		return 6;
	case 256:
		return 7;
	default:
		return 0;
	}
}

map_lookup_fn chain_lookup_for(enum hash_kind kind, uint32_t key_size, bool this_cpu, bool lru,
			       bool reuse)
{
	unsigned int i = chain_lookup_index(kind, key_size);

	bool rseq = cpu_rseq_usable();

	if (this_cpu && lru)
		return rseq ? chain_lookups_lru_cpu_rseq[i] : chain_lookups_lru_cpu[i];
	if (lru)
		return chain_lookups_lru[i];
	if (this_cpu && reuse)
		return rseq ? chain_lookups_cpu_rseq_v[i] : chain_lookups_cpu_v[i];
	if (this_cpu)
		return rseq ? chain_lookups_cpu_rseq[i] : chain_lookups_cpu[i];
	return reuse ? chain_lookups_v[i] : chain_lookups[i];
}

/* The copy-out of key @k (its hash computed): in a read-side section, as
 * chain_lookup_elem's; errno set as map->copy sets it. */
static ALWAYS_INLINE int chain_copy_key(struct chain *c, const struct chain_key *k, void *value,
					uint32_t key_size, enum hash_kind kind)
{
	return map_result(chain_copy_section(c, k, value, false, key_size, kind));
}

/* The elements a section-free walk visits at most: with at least as many
 * buckets as keys and a universal hash, chains that long are rare, and
 * deeper keys take the general copy-out. */
#define CHAIN_STABLE_HOPS 8
/* chain_copy_stable's answer when only the general copy-out can decide. */
#define CHAIN_COPY_GENERAL 1

/* The largest value a section-free copy-out copies. */
#define CHAIN_STABLE_VALUE_MAX 64

/*
 * The copy-out of a key of a preallocated map whose values have no spin
 * lock and at most CHAIN_STABLE_VALUE_MAX bytes, without a read-side
 * section.  Every element of such a map remains one of its elements while
 * the map lives (the pool, and heap elements kept on the spare stack), so
 * a walk that goes through an element reused meanwhile still reads a chain
 * element's memory.  The bucket lock's version validates the walk: read
 * before it and again after the value's copy, the same even version means
 * that no critical section ran on the chain in between, so nothing was
 * unlinked (a delete retires and unlinks under that lock), every element
 * reached was in the chain throughout, and the value is one its key held
 * there: values are overwritten in place under that lock, or (value_word
 * maps) by one atomic store.  @word: the value is one word, loaded into a
 * uint64_t at @dst; else value_size bytes are copied to @dst, the caller's
 * buffer, before the check: when it fails, the general copy-out writes the
 * buffer again, or answers -ENOENT with it written, as it does itself when
 * its element is retired under its copy.  The walk is bounded
 * (CHAIN_STABLE_HOPS), so that a chain changing under it cannot hold it
 * forever.  A changed version, a held lock or a longer walk leave the
 * answer to the general copy-out (CHAIN_COPY_GENERAL).  TSan builds always
 * take that one: the plain key compare races with a reuse's stores.
 */
static ALWAYS_INLINE int chain_copy_stable(struct chain *c, const struct chain_key *k,
					   void *dst, bool word, uint32_t key_size,
					   enum hash_kind kind)
{
#ifndef BPFMAP_TSAN
	const struct chain_bucket *b = chain_bucket(c, k->hash);
	uint32_t version = seq_spin_read_begin(&b->lock), hop = 0;
	struct chain_elem *e = bucket_first(b);
	const uint64_t *v;

	TEST_HOOK(HOOK_CHAIN_STEP, e);
	/* The first element apart: most keys are there. */
	if (unlikely(!e || !chain_key_match(e, k, key_size, kind))) {
		do {
			if (!e) {
				/* The walk's loads before the reload. */
				return seq_spin_read_valid_plain(&b->lock, version)
					       ? -ENOENT
					       : CHAIN_COPY_GENERAL;
			}
			if (++hop == CHAIN_STABLE_HOPS)
				return CHAIN_COPY_GENERAL;
			e = elem_next(e);
			TEST_HOOK(HOOK_CHAIN_STEP, e);
		} while (!e || !chain_key_match(e, k, key_size, kind));
	}
	v = e->data + (key_size + 7) / 8; /* value_off, as a constant: the key padded to 8 */
	if (word)
		*(uint64_t *)dst = __atomic_load_n(v, __ATOMIC_ACQUIRE);
	else
		shared_copy_out(dst, v, c->map.value_size);
	TEST_HOOK(HOOK_CHAIN_COPY, e);
	/* The key compare's loads and the copy's before the reload. */
	if (likely(seq_spin_read_valid_plain(&b->lock, version)))
		return 0;
#else
	(void)c, (void)k, (void)dst, (void)word, (void)key_size, (void)kind;
#endif
	return CHAIN_COPY_GENERAL;
}

/* The copy-outs of a key kind: the general one, and chain_copy_stable's
 * for word values and for values of up to CHAIN_STABLE_VALUE_MAX bytes,
 * where chain_copy_for allows them.  In the word one everything but a
 * found 8-byte value (the general copy-out, a miss's errno, a shorter
 * value) is a tail call, so that its fast path needs no frame. */
#define CHAIN_COPY_KIND(name, key_size, kind, KEY_OF)                                              \
	static __attribute__((noinline)) int chain_copy_##name(struct bpfmap *map, const void *key, \
								void *value)                       \
	{                                                                                          \
		struct chain *c = to_chain(map);                                                   \
		struct chain_key k = KEY_OF;                                                       \
                                                                                                   \
		if (unlikely(map_value_overlaps_key(map, key, value)))                             \
			return map_copy_key_apart(map, key, value);                                \
		return chain_copy_key(c, &k, value, key_size, kind);                               \
	}                                                                                          \
	static int chain_copy_##name##_word(struct bpfmap *map, const void *key, void *value)      \
	{                                                                                          \
		struct chain *c = to_chain(map);                                                   \
		struct chain_key k = KEY_OF;                                                       \
		uint64_t w;                                                                        \
		int ret = chain_copy_stable(c, &k, &w, true, key_size, kind);                      \
                                                                                                   \
		if (likely(ret == 0)) {                                                            \
			if (likely(map->value_size == 8)) {                                        \
				memcpy(value, &w, 8);                                              \
				return 0;                                                          \
			}                                                                          \
			return map_value_word_out_short(map, value, w);                            \
		}                                                                                  \
		if (ret == -ENOENT)                                                                \
			return map_fail(-ENOENT);                                                  \
		return chain_copy_##name(map, key, value);                                         \
	}                                                                                          \
	static int chain_copy_##name##_small(struct bpfmap *map, const void *key, void *value)     \
	{                                                                                          \
		struct chain *c = to_chain(map);                                                   \
		struct chain_key k = KEY_OF;                                                       \
		int ret;                                                                           \
                                                                                                   \
		/* The general copy-out after it reads the key again. */                         \
		if (unlikely(map_value_overlaps_key(map, key, value)))                             \
			return map_copy_key_apart(map, key, value);                                \
		ret = chain_copy_stable(c, &k, value, false, key_size, kind);                      \
                                                                                                   \
		if (likely(ret == 0))                                                              \
			return 0;                                                                  \
		if (ret == -ENOENT)                                                                \
			return map_fail(-ENOENT);                                                  \
		return chain_copy_##name(map, key, value);                                         \
	}

#define CHAIN_KEY_SIZED(n) { .key = key, .hash = chain_top(hash_sized(key, n, &c->hp)) }
CHAIN_COPY_KIND(u32, 4, HASH_U32, chain_key_of(c, key, HASH_U32))
CHAIN_COPY_KIND(u64, 8, HASH_U64, chain_key_of(c, key, HASH_U64))
CHAIN_COPY_KIND(k16, 16, CHAIN_GENERIC, CHAIN_KEY_SIZED(16))
CHAIN_COPY_KIND(k32, 32, CHAIN_GENERIC, CHAIN_KEY_SIZED(32))
CHAIN_COPY_KIND(k64, 64, CHAIN_GENERIC, CHAIN_KEY_SIZED(64))
CHAIN_COPY_KIND(k128, 128, CHAIN_GENERIC, CHAIN_KEY_SIZED(128))
CHAIN_COPY_KIND(k256, 256, CHAIN_GENERIC, CHAIN_KEY_SIZED(256))

/* The copy-out of @c's keys, or NULL for the generic one: section-free
 * (chain_copy_stable) in preallocated maps of values without a spin lock
 * and of at most CHAIN_STABLE_VALUE_MAX bytes. */
map_copy_fn chain_copy_for(const struct chain *c)
{
	static const struct {
		uint32_t key_size;
		map_copy_fn general, word, small;
	} kinds[] = {
		{ 4, chain_copy_u32, chain_copy_u32_word, chain_copy_u32_small },
		{ 8, chain_copy_u64, chain_copy_u64_word, chain_copy_u64_small },
		{ 16, chain_copy_k16, chain_copy_k16_word, chain_copy_k16_small },
		{ 32, chain_copy_k32, chain_copy_k32_word, chain_copy_k32_small },
		{ 64, chain_copy_k64, chain_copy_k64_word, chain_copy_k64_small },
		{ 128, chain_copy_k128, chain_copy_k128_word, chain_copy_k128_small },
		{ 256, chain_copy_k256, chain_copy_k256_word, chain_copy_k256_small },
	};
	bool stable = c->prealloc && !map_has_lock(&c->map) &&
		      c->map.value_size <= CHAIN_STABLE_VALUE_MAX && !c->map.cpus;

	/* HASH_U32 and HASH_U64 are the 4- and 8-byte keys' kinds. */
	if (c->hash_kind != HASH_U32 && c->hash_kind != HASH_U64 &&
	    !hash_sized_covers(c->hash_kind))
		return NULL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (kinds[i].key_size != c->map.key_size)
			continue;
		if (!stable)
			return kinds[i].general;
		return c->value_word ? kinds[i].word : kinds[i].small;
	}
	return NULL;
}
