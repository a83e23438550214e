/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH: a chained hash table with RCU readers.
 *
 * Buckets (a power of two, >= max_entries, as in the kernel) hold a singly
 * linked chain and a versioned spin lock (odd while held).  Readers walk
 * chains with acquire loads and no lock; writers that change a chain lock
 * one bucket.  An element's key and hash never change while it is reachable,
 * so readers compare them directly; its value may be updated in place, under
 * a per-element seqcount that copy-out readers retry on, or (values of at
 * most 8 bytes) by one atomic store.  Updates whose outcome one walk can
 * decide linearizably (-E2BIG, -EEXIST, -ENOENT, and stores of such values
 * into present keys) take no lock: see chain_update_lockfree() in chain.c.
 * An element is retired (seqcount bit) just before it is unlinked, which
 * orders lock-free stores and copy-out reads against its deletion.
 * Unlinked elements are reclaimed in batches after an RCU grace period: back
 * to the preallocated pool, or to the heap (BPFMAP_F_NO_PREALLOC); except
 * that a preallocated map's insert inside a read-side section may reuse a
 * deleted element still pending, or an evicting map's its victim, at once
 * (chain_reuses, below).
 * bpfmap_free never waits for reclamation callbacks: the last one to finish
 * releases the map (chain_free in chain.c).
 */
#ifndef BPFMAP_TABLES_CHAIN_H
#define BPFMAP_TABLES_CHAIN_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/map.h"
#include "sync/rcu.h"
#include "sync/spin_lock.h"
#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "sync/count.h"
#include "sync/fork_guard.h"
#include "sync/reentry.h"
#include "sync/seqcount.h"
#include "sync/handoff.h"
#include "sync/store_switch.h"
#include "util/compiler.h"
#include "util/freelist.h"
#include "tables/slot_arena.h"
#include "tables/value.h"
#include "util/key_equal.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

struct chain_elem {
	struct chain_elem *next; /* atomic: readers follow it without the lock */
	uint32_t hash;          /* the top 32 bits of the key's hash */
	uint32_t seq;           /* sync/seqcount.h: value updates; retired when unlinked */
	struct chain *owner;     /* for reclamation callbacks */
	union {
		/* While linked, in an evicting map: its place in an LRU list
		 * (tables/chain_lru.h; readers never look here). */
		struct {
			struct chain_elem *prev, *next;
		} lru;
		/* Once unlinked: */
		struct rcu_head rcu;                /* a reclamation callback's */
		struct chain_elem *reclaim_next;     /* or a reclamation batch's link */
	};
	uint64_t data[];        /* key, padded to 8; then value, padded to 8 */
};

struct chain_lru_list;

struct chain_bucket {
	struct chain_elem *head; /* atomic */
	uint32_t lock;          /* sync/spin_lock.h seq_spin_*: odd while held */
};

#define CHAIN_PENDING_SHARDS 4
/* pending[CHAIN_FLUSHING]: what the flush callback took, while it waits for
 * the grace period (chain_flush_pending); dealt to no thread. */
#define CHAIN_FLUSHING CHAIN_PENDING_SHARDS
#define CHAIN_PENDING_STACKS (CHAIN_PENDING_SHARDS + 1)

/* 128 bytes: the hot first 16 never share a cache line with another
 * shard's, whatever the (16-byte) alignment of the map. */
struct chain_pending {
	uint32_t lock;
	uint32_t n;              /* atomic: read without the lock */
	struct chain_elem *head;
	struct chain_elem *tail; /* the last of head's list: moved whole in O(1) */
	char pad_[104];
};

struct chain {
	struct bpfmap map;
	struct chain_bucket *buckets;
	uint32_t n_buckets; /* power of two */
	uint32_t shift;     /* 32 - log2(n_buckets): a hash's bucket is its top bits */
	uint64_t mul, fin;  /* the hash's parameters for word keys (hp's) */
	hash_fn hash;
	/* Per-CPU maps: the slots live apart from the elements, one region per
	 * CPU (CPU c's slot of an element at c * pcpu_region + its offset), so
	 * that two CPUs' counters never share a line; an element's value area
	 * holds the offset: i * cpu_stride for pool element i, and for a heap
	 * element its slot of pcpu_heap, past the pool's on a page boundary
	 * (chain_reclaim.c, chain_pcpu_init).  Beside the lookups' other
	 * fields. */
	char *pcpu;
	size_t pcpu_region;  /* bytes from one CPU's slot to the next's */
	uint32_t elem_size;  /* header + padded key + padded value (+ LRU tag) */
	uint32_t value_off;  /* offset of the value in data[] */
	uint32_t lru_off;    /* evicting maps: offset of the LRU tag in data[] */
	bool prealloc;
	bool evict;          /* LRU: a full map evicts (tables/chain_lru.h) */
	bool reuse;          /* elements may be reused at once: chain_reuses */
	/* Non-evicting preallocated maps: an mwseq (sync/seqcount.h) held by
	 * an insert that relinks a deleted element at once, which their walks
	 * check (chain_check_of).  Written only then: rarely. */
	uint32_t moved;
	/* BPFMAP_F_NO_PREALLOC maps: the lookup that chain_lookup_sectioned
	 * runs in a read-side section of its own. */
	map_lookup_fn lookup_walk;
	/* Values of at most 8 bytes and no spin lock: written with one atomic
	 * store, so never torn and without the seqcount. */
	bool value_word;
	/* STORES_* (sync/store_switch.h): whether such stores of a present key
	 * may also skip the bucket lock (see chain_stop_lockfree_stores). */
	uint32_t lockfree_store;
	enum hash_kind hash_kind;
	/* Preallocated maps: the element pool and its free slots. */
	char *pool;
	uint32_t pool_size;  /* elements in the pool */
	struct freelist free_slots;
	uint32_t deferred_limit;
	uint32_t reclaim_batch;  /* unlinked elements reclaimed together */
	/* Written by every insert and delete: away from the fields above, which
	 * every operation reads (padding: the map is calloc'ed, so no alignment
	 * beyond 16 bytes can be relied on). */
	char pad_[64];
	struct count count;  /* sync/count.h: live elements */
	bool flush_queued;   /* atomic: flush_rcu is queued (chain_flush_pending) */
	bool flushing;	     /* atomic: a flush uses pending[CHAIN_FLUSHING] */
	struct rcu_head flush_rcu;
	uint32_t reclaiming; /* atomic: taken from pending, not yet released */
	uint32_t releasing;  /* atomic: chain_release_batch calls under way */
	/* Preallocated maps: elements malloc'ed because the pool ran dry while
	 * reclamation lagged, for bpfmap_mem_usage().  They stay the map's
	 * until it is freed: reclaimed ones wait on the spare stack for reuse,
	 * so that every element of such a map remains one of its elements
	 * while the map lives (the copy-outs walk chains without a read-side
	 * section, see chain_copy_stable in chain_lookup.c). */
	size_t heap_elems;   /* atomic */
	/* Preallocated maps: heap elements borrowed before an insert reuses
	 * a deleted one (chain_may_reuse), or, in an evicting map outside a
	 * section, waits for them first (chain_may_borrow). */
	size_t borrow_cap;
	uint32_t spare_lock;
	struct chain_elem *spare; /* atomic; linked by reclaim_next */
	/* Unlinked elements queued one by one for reclamation (atomic), and the
	 * backlog past which deleting threads wait for it (chain_reclaim_throttle). */
	uint32_t deferred;
	/* sync/handoff.h: reclamation callbacks queued or running that still
	 * touch the map (chain_elem_reclaim, chain_flush_pending), and the free. */
	uint64_t callbacks;
	/* Unlinked elements awaiting one grace period together, in stacks
	 * that deleting threads share out (see chain_unlink_locked). */
	struct chain_pending pending[CHAIN_PENDING_STACKS];
	struct fork_guard guard; /* the two above and spare_lock (sync/fork_guard.h) */
	/* Per-CPU maps: the heap elements' slots, handed out by chunks whose
	 * pages go back once all their slots are free (in every CPU's
	 * region: the arena's mirrors). */
	struct slot_arena pcpu_heap;
	size_t pcpu_heap_off; /* its slot 0's offset in a CPU's region */
	struct chain_lru_list *lru;  /* evicting maps: n_lru lists */
	uint32_t n_lru;
	uint32_t lru_cap;            /* per-CPU lists (NO_COMMON_LRU): each one's most */
	uint32_t lru_rr;             /* atomic: which other list an eviction looks at */
	struct hash_params hp; /* last: 1 KiB, its coefficients at a constant offset */
};

/* An element's header: what precedes its key. */
static ALWAYS_INLINE size_t chain_header_size(void)
{
	return offsetof(struct chain_elem, data);
}

static ALWAYS_INLINE struct chain *to_chain(const struct bpfmap *map)
{
	return container_of(map, struct chain, map);
}

static ALWAYS_INLINE void *elem_key(const struct chain_elem *e)
{
	return (void *)e->data;
}

static ALWAYS_INLINE void *elem_value(const struct chain *c, const struct chain_elem *e)
{
	return (char *)e->data + c->value_off;
}

/* A per-CPU map's element's slots (see struct chain): kept in its value
 * area as the byte offset of CPU 0's slot (no multiply in the lookups). */
static ALWAYS_INLINE void chain_pcpu_set_offset(const struct chain *c, struct chain_elem *e,
						size_t off)
{
	*(uint64_t *)elem_value(c, e) = off;
}

/* A heap element's slot of pcpu_heap. */
static ALWAYS_INLINE uint32_t chain_pcpu_heap_slot(const struct chain *c,
						   const struct chain_elem *e)
{
	return (uint32_t)((*(const uint64_t *)elem_value(c, e) - c->pcpu_heap_off) /
			  c->map.cpu_stride);
}

/* CPU @cpu's slot of element @e of a per-CPU map. */
static ALWAYS_INLINE void *chain_pcpu_slot(const struct chain *c, const struct chain_elem *e,
					   uint32_t cpu)
{
	return c->pcpu + *(const uint64_t *)elem_value(c, e) + cpu * c->pcpu_region;
}

/* A hash's bucket: the top bits of its top half, where every hash here is
 * universal (hash/hash_finish.h; a 64-bit shift, so that one bucket takes
 * 32).  The chained table keeps those 32 bits as its hash. */
static ALWAYS_INLINE uint32_t chain_top(uint64_t hash)
{
	return (uint32_t)(hash >> 32);
}

static ALWAYS_INLINE struct chain_bucket *chain_bucket(const struct chain *c, uint32_t hash)
{
	return &c->buckets[(uint64_t)hash >> c->shift];
}

static ALWAYS_INLINE struct chain_elem *elem_next(const struct chain_elem *e)
{
	return __atomic_load_n(&e->next, __ATOMIC_ACQUIRE);
}

static ALWAYS_INLINE struct chain_elem *bucket_first(const struct chain_bucket *b)
{
	return __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
}

static ALWAYS_INLINE uint32_t chain_hash(const struct chain *c, const void *key)
{
	return chain_top(c->hash(key, c->map.key_size, &c->hp));
}

/*
 * Keys of 8 to 63 bytes are compared without the store-forwarding stall
 * (util/key_equal.h); longer keys of a size known at compile time compare
 * with the compiler's memcmp, and there the hash of the key takes long
 * enough for the caller's stores to have landed, and key_equal_long
 * gained nothing.
 */
static ALWAYS_INLINE bool chain_key_equal(const void *stored, const void *key, uint32_t key_size)
{
	if (key_size >= 8 && (!__builtin_constant_p(key_size) || key_size < 64))
		return key_equal_long(stored, key, key_size);
	return !memcmp(stored, key, key_size);
}

/*
 * A key as the walks compare it, specialised by (key_size, kind), constants
 * in every caller (the lookups in chain_lookup.c, the per-key operations in
 * chain.c): for 4- and 8-byte keys the hash is inlined and the key compared
 * as one word without the stored hash (the 8-byte key read as two 32-bit
 * halves, see load_u32_halves: a 64-bit load of a key whose head was just
 * written by a 32-bit store would stall on store-to-load forwarding);
 * CHAIN_GENERIC stands for every other kind (the stored hash, then
 * chain_key_equal).
 */
#define CHAIN_GENERIC HASH_NH_LONG

struct chain_key {
	const void *key;
	uint64_t word; /* HASH_U32 and HASH_U64: the key itself */
	uint32_t hash;
};

static ALWAYS_INLINE struct chain_key chain_key_of(const struct chain *c, const void *key,
						 enum hash_kind kind)
{
	struct chain_key k = { .key = key };

	if (kind == HASH_U32) {
		uint32_t w = load_u32(key);

		k.word = w;
		k.hash = chain_top(fast_hash_u32(w, c->mul, c->fin));
	} else if (kind == HASH_U64) {
		k.word = load_u64_by_halves(key);
		k.hash = chain_top(fast_hash_u64(k.word, c->mul, c->fin));
	} else {
		k.hash = chain_hash(c, key);
	}
	return k;
}

static ALWAYS_INLINE bool chain_key_match(const struct chain_elem *e, const struct chain_key *k,
					 uint32_t key_size, enum hash_kind kind)
{
	if (kind == HASH_U32)
		return load_u32(elem_key(e)) == (uint32_t)k->word;
	if (kind == HASH_U64)
		return e->data[0] == k->word; /* the key, padded to 8 */
	return e->hash == k->hash && chain_key_equal(elem_key(e), k->key, key_size);
}

/* The element holding @k in bucket @b, or NULL; *link_out (when asked for)
 * is the link that points at it.  Under the bucket lock, or in a read-side
 * section (then the link is only a hint). */
static ALWAYS_INLINE struct chain_elem *chain_walk(struct chain_bucket *b,
						   const struct chain_key *k, uint32_t key_size,
						   enum hash_kind kind,
						   struct chain_elem ***link_out)
{
	struct chain_elem **link = &b->head, *e;

	while ((e = __atomic_load_n(link, __ATOMIC_ACQUIRE))) {
		TEST_HOOK(HOOK_CHAIN_STEP, e);
		if (chain_key_match(e, k, key_size, kind))
			break;
		link = &e->next;
	}
	if (link_out)
		*link_out = link;
	return e;
}

/*
 * Preallocated maps reuse elements at once (chain_may_reuse): an insert
 * made inside a read-side section (in a map that does not evict, any
 * insert past its slack), when the pool has no free element, takes a
 * deleted element not yet taken for reclamation
 * (chain_pending_steal), or in a full evicting map the element it evicted,
 * instead of borrowing one from the heap, which it could not give back
 * before the section ends: programs on two CPUs inserting and deleting in
 * sections grew a 64-entry HASH by 2.4M heap elements, 290 MB, in 3 s, as
 * reclamation lagged.  An evicting map's pool keeps a slack for that
 * (chain_prealloc); the others borrow up to as much first (borrow_cap), so
 * that either reuses under a reader only past the flat table's slack, the
 * README's one exception.  Such an element moves to another
 * chain with no grace period, so a walk without the bucket lock that was on
 * it may go on in the other chain, and a key compare may read it half
 * rewritten.  Their walks (chain_walk_once) therefore validate (a lookup's
 * hit needs no check: see there), each kind of map by its own word
 * (chain_check_of).  An evicting map reuses elements all the time, each
 * one unlinked under its bucket's lock: its walks check that lock's
 * version, even and the same before and after, so that nothing was
 * unlinked from the chain meanwhile and every element reached was in it
 * throughout, with its key.  The others reuse rarely, and their walks
 * check the map's moved seq (an mwseq, sync/seqcount.h), which an insert
 * holds while it relinks a deleted element, so that they wait for no
 * writer but that one (a bucket's lock version held misses and copy-outs
 * up behind every insert and delete of the bucket).  The kernel's
 * preallocated maps reuse their elements at once too.
 */
static ALWAYS_INLINE bool chain_reuses(const struct chain *c)
{
	return c->reuse;
}

enum chain_check {
	CHAIN_CHECK_NONE,   /* the map never reuses an element at once */
	CHAIN_CHECK_BUCKET, /* an evicting map: the bucket lock's version */
	CHAIN_CHECK_MOVED,  /* another preallocated map: the moved seq */
};

static ALWAYS_INLINE enum chain_check chain_check_of(const struct chain *c)
{
	if (!c->reuse)
		return CHAIN_CHECK_NONE;
	return c->evict ? CHAIN_CHECK_BUCKET : CHAIN_CHECK_MOVED;
}

/* The version a walk of bucket @b starts at, to check @how.  Waits for
 * nothing: a version that cannot validate (a writer inside) fails the
 * check, so that the caller's loop decides whether to wait. */
static ALWAYS_INLINE uint32_t chain_check_begin(const struct chain *c,
						const struct chain_bucket *b,
						enum chain_check how)
{
	if (how == CHAIN_CHECK_BUCKET)
		return seq_spin_read_begin(&b->lock);
	if (how == CHAIN_CHECK_MOVED)
		return __atomic_load_n(&c->moved, __ATOMIC_ACQUIRE);
	return 0;
}

/* Did the walk's reads (plain ones too) see one state since @v? */
static ALWAYS_INLINE bool chain_check_valid(const struct chain *c, const struct chain_bucket *b,
					    enum chain_check how, uint32_t v)
{
	if (how == CHAIN_CHECK_BUCKET)
		return seq_spin_read_valid_plain(&b->lock, v);
	if (how == CHAIN_CHECK_MOVED)
		return !(v & MWSEQ_WRITERS) && mwseq_read_same(&c->moved, v);
	return true;
}

/* chain_walk_once's answer when its walk was not valid. */
#define CHAIN_WALK_AGAIN ((struct chain_elem *)1)
/* chain_walk_valid's when it must not walk again: the thread is marked
 * (sync/reentry.h), and the writer it waits out may be its own. */
#define CHAIN_WALK_BUSY ((struct chain_elem *)2)

/*
 * chain_walk without the bucket lock, in a read-side section, in a map that
 * may reuse elements (@how: chain_check_of(c)): CHAIN_WALK_AGAIN when the
 * walk was not valid.  Without @version a hit needs no validation: the
 * key's element is in no other chain, so a walk that strayed cannot find
 * it there, and what a hit returns is the element its key was in while the
 * walk compared it (a pointer to it is then as a pointer to an element
 * reused after the lookup: README, "Pointers").  A key compared while the
 * element was rewritten could match only if it were a mix of the old and
 * the new key's bytes and (keys over 8 bytes; word keys are one store)
 * the hash read matched it too: a 32-bit collision of the map's keyed
 * hash on top of that mix, left unchecked (reading the hash again after
 * the compare cost the 32-byte lookups 8-10%).  *@version (when asked for):
 * the version that the whole walk was valid at, for a caller that reads on
 * and validates again (chain_check_valid).
 */
static ALWAYS_INLINE struct chain_elem *chain_walk_once(const struct chain *c,
							struct chain_bucket *b,
							const struct chain_key *k,
							uint32_t key_size, enum hash_kind kind,
							enum chain_check how, uint32_t *version)
{
	uint32_t v;
	struct chain_elem *e;

	if (how == CHAIN_CHECK_NONE)
		return chain_walk(b, k, key_size, kind, NULL);
	v = chain_check_begin(c, b, how);
	e = chain_walk(b, k, key_size, kind, NULL);
	if (e && !version)
		return e;
	if (unlikely(!chain_check_valid(c, b, how, v)))
		return CHAIN_WALK_AGAIN;
	if (version)
		*version = v;
	return e;
}

/* The same, walking again until a walk is valid. */
static ALWAYS_INLINE struct chain_elem *chain_walk_valid(const struct chain *c,
							 struct chain_bucket *b,
							 const struct chain_key *k,
							 uint32_t key_size, enum hash_kind kind,
							 enum chain_check how, uint32_t *version)
{
	struct chain_elem *e;
	unsigned int spins = 0;

	while ((e = chain_walk_once(c, b, k, key_size, kind, how, version)) == CHAIN_WALK_AGAIN) {
		if (reentry_busy())
			return CHAIN_WALK_BUSY;
		retry_relax(&spins);
	}
	return e;
}

/* The element holding @key, whose hash is @hash, in bucket @b, or NULL (a
 * generic-kind walk); in a read-side section or with the bucket locked. */
static ALWAYS_INLINE struct chain_elem *chain_find_sized(struct chain_bucket *b, uint32_t hash,
						       const void *key, uint32_t key_size)
{
	struct chain_key k = { .key = key, .hash = hash };

	return chain_walk(b, &k, key_size, CHAIN_GENERIC, NULL);
}

static ALWAYS_INLINE struct chain_elem *chain_find(const struct chain *c, struct chain_bucket *b,
						 uint32_t hash, const void *key)
{
	return chain_find_sized(b, hash, key, c->map.key_size);
}

/* A copy-out lost rounds to writers for SEQ_READ_PATIENCE: the bucket lock
 * decides (chain_take). */
#define CHAIN_COPY_STARVED 2

/* Copy @e's value out (value_size bytes): under the value's spin lock when
 * with_lock, and in either case retrying on the element's seqcount, which
 * also tells an element unlinked, and maybe reused at once for another key
 * whose fill takes no value lock (chain_elem_fill): the lock field reads as
 * zero.  Returns 0, or -ENOENT when (without the bucket lock) @e turned out
 * to be already unlinked: its key was absent at that instant.  A @lookup
 * answers -EBUSY instead of waiting when its thread is marked
 * (sync/reentry.h), and CHAIN_COPY_STARVED once it has lost rounds to
 * writers for longer than SEQ_READ_PATIENCE (*@patience: seq_read_give_up's).
 * @patience NULL: the caller holds the bucket lock, so no writer can come. */
static ALWAYS_INLINE int chain_copy_value_out(const struct chain *c, struct chain_elem *e,
					       void *dst, bool with_lock, uint64_t *patience)
{
	const void *src = elem_value(c, e);
	const struct bpfmap *map = &c->map;
	bool lookup = patience;
	uint32_t s;

	for (;;) {
		s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (!(s & SEQCOUNT_WRITING)) {
			/* Unlinked before the copy: whatever it holds now
			 * may have been written after the key left. */
			if (unlikely(seqcount_is_retired(s)))
				return -ENOENT;
			if (lookup)
				TEST_HOOK(HOOK_VALUE_COPYING, dst);
			if (with_lock) {
				if (!value_copy_out_locked(map, dst, elem_value(c, e), lookup))
					return -EBUSY;
			} else if (c->pcpu) { /* the slots, gathered in the syscall layout */
				value_pcpu_out(map, dst, chain_pcpu_slot(c, e, 0), c->pcpu_region);
			} else {
				shared_copy_out(dst, src, map->value_size);
			}
			if (!seqcount_read_retry(&e->seq, s))
				break;
		} else if (lookup && reentry_busy()) {
			return -EBUSY;
		}
		if (lookup && seq_read_give_up(patience))
			return CHAIN_COPY_STARVED;
		cpu_relax();
	}
	value_clear_lock(map, dst);
	return 0;
}

/* The copy-out of key @k's value, in a read-side section: 0, -ENOENT,
 * -EBUSY, or CHAIN_COPY_STARVED.  In a map that reuses elements the walk
 * and the copy are validated together by the bucket's version: an element
 * reused between the two would give another key's value. */
static ALWAYS_INLINE int chain_copy_walked(struct chain *c, const struct chain_key *k, void *value,
					   bool with_lock, uint32_t key_size, enum hash_kind kind)
{
	struct chain_bucket *b = chain_bucket(c, k->hash);
	enum chain_check how = chain_check_of(c);
	uint64_t patience = 0; /* one for the walk's checks and the copy's rounds */

	for (;;) {
		uint32_t version = 0;
		struct chain_elem *e = chain_walk_valid(c, b, k, key_size, kind, how, &version);
		int ret;

		if (!e)
			return -ENOENT;
		if (e == CHAIN_WALK_BUSY)
			return -EBUSY;
		ret = chain_copy_value_out(c, e, value, with_lock, &patience);
		if (ret == -EBUSY || ret == CHAIN_COPY_STARVED ||
		    chain_check_valid(c, b, how, version))
			return ret;
		if (seq_read_give_up(&patience))
			return CHAIN_COPY_STARVED;
	}
}

/* Take @key's bucket lock: its value copied to @value if not NULL (@lockf:
 * under the value's spin lock too), then the key deleted unless @keep.  0,
 * or -ENOENT.  With @keep, the copy-out that no stream of in-place writes
 * can hold off (CHAIN_COPY_STARVED): they all hold that lock.  Outside
 * read-side sections (an F_LOCK copy may wait for a program). */
int chain_take(struct chain *c, const void *key, void *value, bool lockf, bool keep);

/* chain_copy_walked in a read-side section, then chain_take if it starved. */
static ALWAYS_INLINE int chain_copy_section(struct chain *c, const struct chain_key *k,
					    void *value, bool with_lock, uint32_t key_size,
					    enum hash_kind kind)
{
	int ret;

	rcu_lock();
	ret = chain_copy_walked(c, k, value, with_lock, key_size, kind);
	rcu_unlock();
	if (unlikely(ret == CHAIN_COPY_STARVED))
		ret = REENTRY_GUARDED(chain_take(c, k->key, value, with_lock, true));
	return ret;
}

/* The bucket lock (see seq_spin_lock): writers hold it to change the chain,
 * and lock-free writers validate what they read against it. */
static ALWAYS_INLINE void chain_bucket_lock(struct chain_bucket *b)
{
	seq_spin_lock(&b->lock);
}

static ALWAYS_INLINE void chain_bucket_unlock(struct chain_bucket *b)
{
	seq_spin_unlock(&b->lock);
}

/* Unlink @e, whose predecessor link is @link, from its locked bucket, and
 * add it to the map's pending reclamation batch. */
void chain_unlink_locked(struct chain *c, struct chain_elem **link, struct chain_elem *e);
/* The same, the count left alone: an eviction hands the victim's room to
 * the insert it makes room for (tables/chain_lru.h). */
void chain_unlink_keep_count(struct chain *c, struct chain_elem **link, struct chain_elem *e);
/* Its two halves: retire and unlink @e, but keep it (an eviction that
 * hands its victim to the insert, to reuse at once: chain_reuses); and
 * queue an unlinked element for reclamation. */
void chain_unlink_only(struct chain *c, struct chain_elem **link, struct chain_elem *e);
void chain_retire_unlinked(struct chain *c, struct chain_elem *e);
/* The reverse of the latter: an element of a pending stack, not yet taken
 * for reclamation, for an insert to reuse at once (chain_reuses); NULL if
 * every stack is empty. */
struct chain_elem *chain_pending_steal(struct chain *c);
/* An element for an insert inside a section that must not borrow one from
 * the heap: a free one, else a deleted one off a pending stack (*@stolen
 * set); while a release after a grace period is under way, it waits for
 * either, which takes a few stores, never a grace period, so an insert
 * inside a section may.  NULL when there is none and no release runs. */
struct chain_elem *chain_elem_reusable(struct chain *c, bool *stolen);

/* Called by the lookup-and-delete paths before they take a bucket lock. */
void chain_stop_lockfree_stores(struct chain *c);

/* Wait for a value's spin lock found held, bucket @b locked (unlocked on
 * return), outside any read-side section (chain.c). */
void chain_value_wait(struct chain *c, struct chain_bucket *b, uint32_t *busy,
		      unsigned int *spins);

/* Called by deleting paths after they dropped their bucket lock: reclaims
 * the pending batch once it is full, and waits when the backlog queued one
 * by one exceeds its limit; never waits inside a read-side section (it
 * would wait for itself). */
void chain_reclaim_throttle(struct chain *c);
/* Release every deleted element now, waiting for the grace periods they
 * need (outside read-side sections only: false, at once, inside one).  A
 * preallocated map whose pool ran dry and whose malloc failed takes its
 * elements back this way rather than answer -ENOMEM. */
bool chain_reclaim_now(struct chain *c);
/* The pending stacks alone: one grace period, no wait for liburcu's
 * worker (10 ms apart) and what its flushes or the one-by-one queue hold. */
bool chain_reclaim_pending_now(struct chain *c);
/* Wait while a per-CPU map's slots are on their way back: a chunk of its
 * heap being given back, or (where waiting is allowed) a release of
 * reclaimed elements by another thread.  Whether it waited. */
bool chain_slots_landing(struct chain *c);

/* The program-view lookup for a map of @kind and @key_size (@this_cpu: a
 * per-CPU map's, returning the calling CPU's slot, by rseq's CPU number
 * unchecked where cpu_rseq_usable(); else the value or CPU 0's slot; @lru:
 * marking the element used; @reuse: its walks validated, chain_reuses),
 * and its copy-out (map->copy; NULL: the general one). */
map_lookup_fn chain_lookup_for(enum hash_kind kind, uint32_t key_size, bool this_cpu, bool lru,
			       bool reuse);
map_copy_fn chain_copy_for(const struct chain *c);
/* A BPFMAP_F_NO_PREALLOC map's program-view lookup (c->lookup_walk's) in
 * a read-side section of its own: its elements go back to malloc, and a
 * walk outside any section may step on one another thread frees. */
void *chain_lookup_sectioned(struct bpfmap *map, const void *key);
int chain_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values);
void *chain_lookup_percpu(struct bpfmap *map, const void *key, uint32_t cpu);
int chain_percpu_add(struct bpfmap *map, const void *key, uint64_t delta);

int chain_get_next_key(struct bpfmap *map, const void *key, void *next_key);
int chain_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch,
		      void *keys, void *values, uint32_t *count, uint64_t elem_flags,
		      bool do_delete);

/* The per-key operations (chain.c). */
int chain_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags);
int chain_update_part(struct bpfmap *map, const void *key, const void *src, uint32_t len,
		      uint32_t off, uint32_t step, uint32_t n, uint64_t mode);
int chain_delete_elem(struct bpfmap *map, const void *key);
int chain_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value,
				 uint64_t flags);
int chain_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags);

/* The elements' lifetime (chain_reclaim.c): a fresh element (NULL when out
 * of memory, *no_slot set when a per-CPU map's slots ran out, not malloc;
 * the count enforces capacity), the pool of a preallocated map,
 * the reclamation limits for a map of @max_entries, the fork guard of a map
 * made, and the free. */
struct chain_elem *chain_elem_alloc(struct chain *c, bool *no_slot, bool may_borrow);
int chain_prealloc(struct chain *c);
int chain_pcpu_init(struct chain *c);
void chain_pcpu_free(struct chain *c);
/* The per-CPU slots' bytes: every CPU's region. */
static inline size_t chain_pcpu_bytes(const struct chain *c)
{
	return c->pcpu_region * c->map.cpus;
}
uint32_t chain_reclaim_batch(const struct chain *c);
uint32_t chain_deferred_limit(uint32_t max_entries);
void chain_guard_fork(struct chain *c);
void chain_free(struct bpfmap *map);

/* A map on the chained table; NULL with *err = -errno (the map type has
 * checked p). */
struct bpfmap *chain_create(const struct map_params *p, int *err);

extern const struct map_ops chain_ops;

#endif
