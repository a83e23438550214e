/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_RHASH: a chained table that grows and shrinks online, whose
 * chains are kept in hash order so that iteration never skips or repeats.
 * docs/RHASH.md has the design at length; the invariants:
 *
 * Order.  Every element has a place in one total order, (hash, key bytes),
 * where hash is the top 32 bits of the key's 64-bit keyed hash.  A table of
 * 2^bits buckets puts a hash in bucket hash >> (32 - bits): bucket b holds
 * one contiguous range of that order at every size, and a chain is sorted in
 * it.  So growing splits a chain into two chains at one point, shrinking
 * concatenates two, and a walk that resumes "after (hash, key)" finds its
 * place in whichever table is current.
 *
 * Elements never move.  They live in one arena of fixed-stride slots reserved
 * at creation (virtual memory, touched as it is used), named by a 32-bit
 * index: next link, hash, key, value.  A program-view pointer stays with its
 * key for as long as the key is in the map; values change in place.
 *
 * Locks.  Each group of RTAB_STRIPE buckets of a table has one seq_spin_lock
 * word (sync/spin_lock.h), odd while a writer holds it.  Writers (insert,
 * delete, in-place value store, a resize moving the group) hold it; readers
 * take no lock: a miss, and a copy-out, count only if the group's word was
 * even and unchanged around them.  A hit needs no check: keys never change
 * while linked, and unlinked elements are reused only after a grace period.
 *
 * Resize.  A table's `next` is the table a resize moves into.  The moving
 * is shared out: each insert and delete that sees one in progress moves a
 * few groups (rtab_resize_help), under the old group's lock, and leaves the
 * old heads RTAB_MOVED, so that readers and writers there go on to `next`.
 * A new bucket is reachable only through a moved old one, so nothing else
 * writes it before the move.  When the last group has moved, `next` becomes
 * the map's table and the old one is freed after a grace period.  Nobody
 * waits for a resize: a lookup at worst retries one group.
 */
#ifndef BPFMAP_TABLES_RTAB_H
#define BPFMAP_TABLES_RTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/map.h"
#include "hash/fast_hash.h"
#include "hash/hash_params.h"
#include "hash/hash_select.h"
#include "sync/count.h"
#include "sync/rcu.h"
#include "sync/spin_lock.h"
#include "util/compiler.h"
#include "util/key_equal.h"
#include "util/load.h"
#include "util/test_hook.h"

#define RTAB_NONE 0u          /* a link or head: the end of the chain */
#define RTAB_MOVED UINT32_MAX /* a head: the bucket's chain is in the next table */
#define RTAB_STRIPE_SHIFT 3   /* buckets per lock word: 8 */
#define RTAB_STRIPE (1u << RTAB_STRIPE_SHIFT)
#define RTAB_MIN_BITS 3       /* the smallest table: one group */
#define RTAB_MAX_BITS 31

struct rtab_table {
	uint32_t shift;   /* 32 - bits */
	uint32_t n;       /* buckets: 1 << bits */
	uint32_t *locks;  /* n / RTAB_STRIPE seq_spin_lock words */
	struct rtab_table *next; /* atomic: the table a resize moves into */
	uint32_t claimed; /* atomic: groups handed to movers */
	uint32_t moved;   /* atomic: groups moved */
	struct rcu_head rcu;
	uint32_t heads[]; /* atomic: an element index, RTAB_NONE or RTAB_MOVED */
};

struct rtab_elem {
	uint32_t next; /* atomic: the next element's index (RTAB_NONE: none) */
	uint32_t hash; /* the key's top 32 hash bits */
	uint64_t data[]; /* key padded to 8, then the value */
};

struct rtab {
	struct bpfmap map;
	/* Hot: what lookups read. */
	uintptr_t table;    /* atomic: the current table | its shift (rtab_table_word) */
	char *arena;        /* element i at i * stride; 0 is a sentinel, never used */
	uint32_t stride;    /* bytes per element */
	uint32_t value_off; /* offset of the value from the element */
	uint64_t mul, fin;  /* the hash's parameters for word keys (hp's) */
	hash_fn hash;
	enum hash_kind hash_kind;
	struct hash_params hp;
	/* The arena: elements 1 .. cap reserved; those below `fresh` used. */
	uint32_t cap;
	char pad_[64];
	uint32_t fresh;      /* atomic */
	uint32_t free_lock;  /* spin_lock_word: the free stack */
	uint32_t free_head;  /* index + 1 of the top of the free stack */
	uint32_t free_n;
	struct count count;  /* sync/count.h: exact -E2BIG */
	/* Deleted elements waiting to be queued for their grace period, linked
	 * through their hash words (tables/rtab.c says why that is safe). */
	uint32_t retire_lock;
	uint32_t retiring;   /* the last one retired */
	uint32_t retiring_n;
	uint32_t retire_batch;
	uint32_t retired_n;  /* atomic: retired, not yet free again */
	uint64_t callbacks;  /* sync/handoff.h: retire batches and old tables in flight */
	uint32_t resize_lock; /* trylock only: starting a resize */
	uint64_t resizes;     /* atomic: resizes started (tests, the bench) */
	uint32_t min_bits;
	uint32_t max_bits;
};

static ALWAYS_INLINE struct rtab *to_rtab(struct bpfmap *map)
{
	return (struct rtab *)map;
}

static ALWAYS_INLINE const struct rtab *to_rtab_const(const struct bpfmap *map)
{
	return (const struct rtab *)map;
}

static ALWAYS_INLINE struct rtab_elem *rtab_elem(const struct rtab *r, uint32_t idx)
{
	return (struct rtab_elem *)(void *)(r->arena + (size_t)idx * r->stride);
}

/* The element a link or head names: a link is the element's index, and
 * RTAB_NONE names the sentinel, element 0, whose zero bytes a walk may
 * read without a branch (it matches nothing: see rtab_find). */
static ALWAYS_INLINE struct rtab_elem *rtab_link_elem(const struct rtab *r, uint32_t link)
{
	return rtab_elem(r, link);
}

static ALWAYS_INLINE char *rtab_key(struct rtab_elem *e)
{
	return (char *)e->data;
}

static ALWAYS_INLINE char *rtab_value(const struct rtab *r, struct rtab_elem *e)
{
	return (char *)e + r->value_off;
}

static ALWAYS_INLINE uint32_t rtab_load_link(const uint32_t *link)
{
	return __atomic_load_n(link, __ATOMIC_ACQUIRE);
}

/* The map's table and its shift in one word (tables are 64-byte aligned,
 * a shift is below 64): a lookup's bucket then takes one load less. */
static ALWAYS_INLINE uintptr_t rtab_table_word(const struct rtab_table *t)
{
	return (uintptr_t)t | t->shift;
}

static ALWAYS_INLINE struct rtab_table *rtab_word_table(uintptr_t w)
{
	return (struct rtab_table *)(w & ~(uintptr_t)63);
}

static ALWAYS_INLINE struct rtab_table *rtab_table_of(struct rtab *r)
{
	return rtab_word_table(__atomic_load_n(&r->table, __ATOMIC_ACQUIRE));
}

static ALWAYS_INLINE uint32_t rtab_bucket(const struct rtab_table *t, uint32_t hash)
{
	return (uint32_t)((uint64_t)hash >> t->shift);
}

static ALWAYS_INLINE uint32_t *rtab_lock_of(const struct rtab_table *t, uint32_t b)
{
	return &t->locks[b >> RTAB_STRIPE_SHIFT];
}

/*
 * The key's hash, specialised by kind (a constant in the callers that
 * specialise): every hash here is (almost) universal over its top bits with
 * the map's random parameters (hash/hash_select.h), and those are the bits
 * both the bucket and the order use.
 */
static ALWAYS_INLINE uint32_t rtab_hash(const struct rtab *r, const void *key, uint32_t key_size,
					enum hash_kind kind)
{
	if (kind == HASH_U32)
		return (uint32_t)(fast_hash_u32(load_u32(key), r->mul, r->fin) >> 32);
	if (kind == HASH_U64)
		return (uint32_t)(fast_hash_u64_mem(key, r->mul, r->fin) >> 32);
	return (uint32_t)(r->hash(key, key_size, &r->hp) >> 32);
}

static ALWAYS_INLINE bool rtab_key_equal(struct rtab_elem *e, const void *key, uint32_t key_size,
					 enum hash_kind kind)
{
	if (kind == HASH_U32)
		return load_u32(e->data) == load_u32(key);
	if (kind == HASH_U64)
		return e->data[0] == load_u64_by_halves(key);
	if (key_size >= 8 && (!__builtin_constant_p(key_size) || key_size < 64))
		return key_equal_long(rtab_key(e), key, key_size);
	return !memcmp(rtab_key(e), key, key_size);
}

/* Where (hash, key) falls against element @e in the map's order: < 0
 * before it, 0 the same key, > 0 after it. */
static ALWAYS_INLINE int rtab_order(struct rtab_elem *e, uint32_t hash, const void *key,
				    uint32_t key_size)
{
	if (hash != e->hash)
		return hash < e->hash ? -1 : 1;
	return memcmp(key, rtab_key(e), key_size);
}

/* A walk of one chain from @link for (hash, key): the element, or NULL. */
static ALWAYS_INLINE struct rtab_elem *rtab_walk(const struct rtab *r, uint32_t link,
						 uint32_t hash, const void *key,
						 uint32_t key_size, enum hash_kind kind)
{
	while (link != RTAB_NONE) {
		struct rtab_elem *e = rtab_link_elem(r, link);
		uint32_t eh;

		TEST_HOOK(HOOK_RTAB_STEP, e);
		/* Word keys: the key first; the hash only for the order. */
		if ((kind == HASH_U32 || kind == HASH_U64) && rtab_key_equal(e, key, key_size, kind))
			return e;
		eh = __atomic_load_n(&e->hash, __ATOMIC_RELAXED);
		if (kind != HASH_U32 && kind != HASH_U64 && eh == hash &&
		    rtab_key_equal(e, key, key_size, kind))
			return e;
		if (eh > hash)
			break; /* sorted: it is not further on */
		link = rtab_load_link(&e->next);
	}
	return NULL;
}

/*
 * The element of (hash, key), lock-free, in a read-side section, with the
 * check a miss needs: NULL only when no writer changed the group meanwhile.
 * *lock_out and *seq_out (when asked for) say which group's word validates
 * a copy of the element's value, and its value before the walk.
 */
static ALWAYS_INLINE struct rtab_elem *rtab_find_checked(struct rtab *r, uint32_t hash,
							 const void *key, uint32_t key_size,
							 enum hash_kind kind, uint32_t **lock_out,
							 uint32_t *seq_out)
{
	struct rtab_table *t = rtab_table_of(r);

	for (;;) {
		uint32_t b = rtab_bucket(t, hash);
		uint32_t *lock = rtab_lock_of(t, b);
		uint32_t seq = seq_spin_read_begin(lock);
		uint32_t link = rtab_load_link(&t->heads[b]);
		struct rtab_elem *e;

		if (unlikely(link == RTAB_MOVED)) {
			t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
			continue;
		}
		e = rtab_walk(r, link, hash, key, key_size, kind);
		if (e) {
			if (lock_out) {
				*lock_out = lock;
				*seq_out = seq;
			}
			return e;
		}
		if (likely(seq_spin_read_valid(lock, seq)))
			return NULL;
		cpu_relax();
	}
}

/*
 * The same for the program view: a hit needs no check (keys never change
 * while linked, elements are reused only after a grace period), so the
 * first walk reads no lock word; only a miss, or a moved bucket, walks
 * again with the check.
 */
static ALWAYS_INLINE struct rtab_elem *rtab_find(struct rtab *r, uint32_t hash, const void *key,
						 uint32_t key_size, enum hash_kind kind)
{
	uintptr_t w = __atomic_load_n(&r->table, __ATOMIC_ACQUIRE);
	struct rtab_table *t = rtab_word_table(w);
	uint32_t link = rtab_load_link(&t->heads[(uint64_t)hash >> (w & 63)]);

	if (likely(link != RTAB_MOVED)) {
		struct rtab_elem *e = rtab_walk(r, link, hash, key, key_size, kind);

		if (likely(e))
			return e;
	}
	return rtab_find_checked(r, hash, key, key_size, kind, NULL, NULL);
}

/* tables/rtab.c: the bucket arrays, the arena, reclamation, chain edits. */
struct rtab_table *rtab_table_alloc(uint32_t bits);
void rtab_table_free(struct rtab_table *t);
size_t rtab_table_mem(const struct rtab_table *t);
int rtab_arena_init(struct rtab *r, uint32_t max_entries);
size_t rtab_arena_mem(const struct rtab *r);
uint32_t rtab_retire_batch_for(uint32_t max_entries);
/* An unused element's index, or UINT32_MAX when the arena is exhausted
 * for now (every free slot waits for its grace period). */
uint32_t rtab_elem_alloc(struct rtab *r);
/* An element that never became visible, back at once. */
void rtab_elem_unused(struct rtab *r, uint32_t idx);
/* An unlinked element, reused once no reader can hold it. */
void rtab_elem_retire(struct rtab *r, uint32_t idx);
/* Outside any read-side section: wait until retired elements are free. */
void rtab_reclaim_wait(struct rtab *r);
/* Lock the group of @hash's bucket in the table that holds it now. */
struct rtab_table *rtab_lock_bucket(struct rtab *r, uint32_t hash, uint32_t *b_out);
static ALWAYS_INLINE void rtab_unlock_bucket(struct rtab_table *t, uint32_t b)
{
	seq_spin_unlock(rtab_lock_of(t, b));
}
/* The element of @key in bucket @b of @t (its lock held), and the link that
 * points to it; or NULL and the link before which it would go. */
struct rtab_elem *rtab_chain_find_locked(struct rtab *r, struct rtab_table *t, uint32_t b,
					 uint32_t hash, const void *key, uint32_t **link_out);
/* Publish element @idx at @link; unlink @e from the @link that names it. */
void rtab_link_locked(uint32_t *link, struct rtab_elem *e, uint32_t idx);
void rtab_unlink_locked(uint32_t *link, struct rtab_elem *e);
/* Copy out @e's value (its group's lock held), the lock field zeroed. */
void rtab_copy_value_locked(struct rtab *r, struct rtab_elem *e, void *dst, bool lockf);
/* Unlink @e at @link, counted; the caller retires it once the lock
 * is dropped. */
void rtab_delete_locked(struct rtab *r, uint32_t *link, struct rtab_elem *e);
/* The last reference: free the map now or when its last callback ends. */
void rtab_destroy(struct rtab *r);

/* tables/rtab_resize.c.  After an insert (@long_chain: its chain was long)
 * or a delete, in a read-side section: start the resize the element count
 * asks for, and move a few groups of one in progress. */
void rtab_resize_check(struct rtab *r, bool long_chain);

/* tables/rtab_ops.c */
map_lookup_fn rtab_lookup_for(enum hash_kind kind, uint32_t key_size);
map_copy_fn rtab_copy_for(enum hash_kind kind, uint32_t key_size);
int rtab_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags);
int rtab_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags);
int rtab_delete_elem(struct bpfmap *map, const void *key);
int rtab_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value);

/* tables/rtab_iter.c */
int rtab_get_next_key(struct bpfmap *map, const void *key, void *next_key);
int rtab_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch, void *keys,
		      void *values, uint32_t *count, uint64_t elem_flags, bool do_delete);

/* tables/rtab_map.c */
struct bpfmap *rtab_create(const struct map_params *p, int *err);

#endif
