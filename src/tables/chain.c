/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH: creation, element lifetime, and the per-key operations.
 * Design notes in tables/chain.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync/spin_lock.h"
#include "hash/fast_hash.h"
#include "hash/sized_hash.h"
#include "util/big_alloc.h"
#include "tables/chain.h"
#include "sync/seqcount.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

/* Pool elements beyond max_entries, so that deletes followed at once by
 * inserts rarely wait on reclamation; past them the pool falls back to the
 * heap (see chain_elem_alloc). */
#define CHAIN_POOL_SLACK_PER_CPU 16

/* Backlog of elements queued one by one for reclamation (only by deleters
 * inside a read-side section, see chain_reclaim_pending) tolerated before
 * deleters wait (chain_reclaim_throttle): CHAIN_DEFERRED_PER_MAX x max_entries,
 * at least CHAIN_DEFERRED_MIN.  Waiting costs milliseconds (the worker's grace
 * period), so the limit is generous. */
#define CHAIN_DEFERRED_MIN 16384U
#define CHAIN_DEFERRED_PER_MAX 4U

static size_t chain_header_size(void)
{
	return offsetof(struct chain_elem, data);
}

static bool elem_in_pool(const struct chain *c, const struct chain_elem *e)
{
	const char *p = (const char *)e;

	return c->pool && p >= c->pool && p < c->pool + (size_t)c->pool_size * c->elem_size;
}

static struct chain_elem *pool_elem(const struct chain *c, uint32_t index)
{
	return (struct chain_elem *)(void *)(c->pool + (size_t)index * c->elem_size);
}

static uint32_t pool_index(const struct chain *c, const struct chain_elem *e)
{
	return (uint32_t)(((const char *)e - c->pool) / c->elem_size);
}

/* A fresh element, or NULL on allocation failure.  Capacity (max_entries) is
 * enforced by the caller through c->count, so the pool's emptiness only means
 * that reclamation lags behind; the heap covers that gap. */
static struct chain_elem *chain_elem_alloc(struct chain *c)
{
	struct chain_elem *e;

	if (c->prealloc) {
		uint32_t i = freelist_pop(&c->free_slots);

		if (i != FREELIST_EMPTY)
			return pool_elem(c, i);
	}
	e = malloc(c->elem_size);
	if (!e)
		return NULL;
	e->owner = c;
	if (c->prealloc) /* NO_PREALLOC maps count theirs from count (mem_usage) */
		__atomic_fetch_add(&c->heap_elems, 1, __ATOMIC_RELAXED);
	return e;
}

/* Return an element no reader can see any more. */
static void chain_elem_release(struct chain *c, struct chain_elem *e)
{
	if (elem_in_pool(c, e)) {
		freelist_push(&c->free_slots, pool_index(c, e));
		return;
	}
	if (c->prealloc)
		__atomic_fetch_sub(&c->heap_elems, 1, __ATOMIC_RELAXED);
	free(e);
}

/* Release a taken stack of n elements after a grace period. */
static void chain_release_batch(struct chain *c, struct chain_elem *list, uint32_t n)
{
	while (list) {
		struct chain_elem *next = list->reclaim_next;

		chain_elem_release(c, list);
		list = next;
	}
	__atomic_fetch_sub(&c->reclaiming, n, __ATOMIC_RELAXED);
}

/* Release the map and every element it still holds.  No one uses the map
 * and no callback touches it any more, so what is still pending needs no
 * grace period. */
static void chain_teardown(struct chain *c)
{
	for (uint32_t i = 0; i < CHAIN_PENDING_SHARDS; i++)
		chain_release_batch(c, c->pending[i].head, 0);
	for (uint32_t i = 0; i < c->n_buckets; i++) {
		struct chain_elem *e = c->buckets[i].head;

		while (e) {
			struct chain_elem *next = e->next;

			if (!elem_in_pool(c, e))
				free(e);
			e = next;
		}
	}
	freelist_destroy(&c->free_slots);
	count_destroy(&c->count);
	big_free(c->pool);
	big_free(c->buckets);
	free(c);
}

/* Count n callbacks that will touch c, before queueing them (see chain_free). */
static void chain_callbacks_get(struct chain *c, uint32_t n)
{
	__atomic_fetch_add(&c->callbacks, n, __ATOMIC_RELAXED);
}

/* A callback's last access to c: after it, the map may be released, by this
 * callback if bpfmap_free came first and this was the last one.  Acquire and
 * release: the teardown comes after every other callback's accesses (each
 * decrement continues the release sequence of the ones before). */
static void chain_callback_done(struct chain *c)
{
	if (__atomic_sub_fetch(&c->callbacks, 1, __ATOMIC_ACQ_REL) == CHAIN_CB_FREE)
		chain_teardown(c);
}

static void chain_elem_reclaim(struct rcu_head *head)
{
	struct chain_elem *e = container_of(head, struct chain_elem, rcu);

	struct chain *c;

	rcu_deferred_enter(); /* first: it orders this thread after the writer */
	c = e->owner;
	chain_elem_release(c, e);
	__atomic_fetch_sub(&c->deferred, 1, __ATOMIC_RELAXED);
	rcu_deferred_exit();
	chain_callback_done(c);
}

/*
 * Reclamation in batches.  liburcu's call_rcu() runs callbacks in one worker
 * thread that sleeps 10 ms between rounds, with a queue operation and a
 * callback per element; writers that delete faster (two producers on two
 * cores) grow its backlog, and the memory of a NO_PREALLOC map, until they
 * have to wait for it.  Instead, unlinked elements gather on a pending
 * stack of the map (one of CHAIN_PENDING_SHARDS, by thread), and the deleter
 * that fills it to reclaim_batch takes the whole stack, waits for one grace
 * period (microseconds when readers are short) and releases every element
 * itself: one wait per batch, memory bounded by a batch per shard (and per
 * thread in a grace period), and for NO_PREALLOC maps free() in the thread
 * that usually malloc'ed.  A deleter inside a read-side section cannot
 * wait: it queues the batch element by element (the backlog counted in
 * deferred).  Elements left pending when deletes stop are taken by a flush
 * callback that the first element of an empty stack queues.
 */
#define CHAIN_RECLAIM_BATCH_MIN 2048U
#define CHAIN_RECLAIM_BATCH_MAX 8192U

static uint32_t chain_reclaim_batch(uint32_t max_entries)
{
	uint32_t n = max_entries / 4;

	if (n < CHAIN_RECLAIM_BATCH_MIN)
		return CHAIN_RECLAIM_BATCH_MIN;
	return n > CHAIN_RECLAIM_BATCH_MAX ? CHAIN_RECLAIM_BATCH_MAX : n;
}

/* The pending stack of the calling thread: threads are dealt the shards
 * round robin on their first delete, so two deleting threads rarely share
 * one (its lock and cache line). */
static __thread uint32_t chain_thread_shard; /* 1 + shard; 0: not dealt yet */
static uint32_t chain_shards_dealt;

static ALWAYS_INLINE struct chain_pending *chain_my_pending(struct chain *c)
{
	uint32_t s = chain_thread_shard;

	if (unlikely(!s)) {
		s = 1 + __atomic_fetch_add(&chain_shards_dealt, 1, __ATOMIC_RELAXED) %
				CHAIN_PENDING_SHARDS;
		chain_thread_shard = s;
	}
	return &c->pending[s - 1];
}

/* Take a whole pending stack; *n: its length, counted in reclaiming until
 * released. */
static struct chain_elem *chain_pending_take(struct chain *c, struct chain_pending *p, uint32_t *n)
{
	struct chain_elem *list;

	spin_lock_word(&p->lock);
	list = p->head;
	p->head = NULL;
	*n = __atomic_load_n(&p->n, __ATOMIC_RELAXED);
	/* Counted as reclaiming before no longer pending: mem_usage never
	 * misses them. */
	__atomic_fetch_add(&c->reclaiming, *n, __ATOMIC_RELAXED);
	__atomic_store_n(&p->n, 0, __ATOMIC_RELAXED);
	spin_unlock_word(&p->lock);
	return list;
}

/* Queue a taken stack of n elements one by one (no waiting allowed). */
static void chain_defer_batch(struct chain *c, struct chain_elem *list, uint32_t n)
{
	__atomic_fetch_add(&c->deferred, n, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&c->reclaiming, n, __ATOMIC_RELAXED);
	chain_callbacks_get(c, n);
	while (list) {
		struct chain_elem *next = list->reclaim_next; /* rcu overlays it */

		rcu_defer(&list->rcu, chain_elem_reclaim);
		list = next;
	}
}

/*
 * Queued whenever an element lands on an empty stack and no flush is queued:
 * so every pending element is reclaimed within a round of the worker, even
 * if deletes stop.  The flag drops before the stacks are taken, so that an
 * element pushed after its stack was taken queues the next flush.
 */
static void chain_flush_pending(struct rcu_head *head)
{
	struct chain *c = container_of(head, struct chain, flush_rcu);

	rcu_deferred_enter();
	/* Once bpfmap_free has run, the teardown releases the stacks without
	 * a grace period: no need to wait for one here. */
	if (!(__atomic_load_n(&c->callbacks, __ATOMIC_RELAXED) & CHAIN_CB_FREE)) {
		__atomic_store_n(&c->flush_queued, false, __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < CHAIN_PENDING_SHARDS; i++) {
			uint32_t n;
			struct chain_elem *list = chain_pending_take(c, &c->pending[i], &n);

			if (list) {
				/* Some were pushed after this callback was queued. */
				rcu_synchronize();
				chain_release_batch(c, list, n);
			}
		}
	}
	rcu_deferred_exit();
	chain_callback_done(c);
}

void chain_unlink_locked(struct chain *c, struct chain_elem **link, struct chain_elem *e)
{
	struct chain_pending *p = chain_my_pending(c);
	uint32_t n, ticket = count_delete_begin(&c->count); /* busy before the key goes */

	/* Retired before unlinked: lock-free writers and copy-out readers that
	 * still hold @e see that the key left the map (chain_update_lockfree). */
	seqcount_retire(&e->seq);
	__atomic_store_n(link, elem_next(e), __ATOMIC_RELEASE);
	TEST_HOOK(HOOK_DELETE_HIDDEN, c);
	count_delete_end(&c->count, ticket);

	spin_lock_word(&p->lock);
	e->reclaim_next = p->head;
	p->head = e;
	n = __atomic_load_n(&p->n, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&p->n, n, __ATOMIC_RELAXED);
	spin_unlock_word(&p->lock);
	if (unlikely(n == 1) && !__atomic_load_n(&c->flush_queued, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&c->flush_queued, true, __ATOMIC_ACQ_REL)) {
		chain_callbacks_get(c, 1);
		rcu_defer(&c->flush_rcu, chain_flush_pending);
	}
}

/* The backlog of elements queued one by one, past which deleters wait. */
static uint32_t chain_deferred_limit(uint32_t max_entries)
{
	uint64_t limit = (uint64_t)max_entries * CHAIN_DEFERRED_PER_MAX;

	return limit < CHAIN_DEFERRED_MIN ? CHAIN_DEFERRED_MIN : (uint32_t)limit;
}

static __attribute__((noinline)) void chain_reclaim_pending(struct chain *c,
							  struct chain_pending *p)
{
	uint32_t n;
	struct chain_elem *list = chain_pending_take(c, p, &n);

	if (!list)
		return; /* another deleter took it */
	if (rcu_may_wait()) {
		rcu_synchronize();
		chain_release_batch(c, list, n);
	} else {
		chain_defer_batch(c, list, n);
	}
}

void chain_reclaim_throttle(struct chain *c)
{
	struct chain_pending *p = chain_my_pending(c);

	if (unlikely(__atomic_load_n(&p->n, __ATOMIC_RELAXED) >= c->reclaim_batch))
		chain_reclaim_pending(c, p);
	if (likely(__atomic_load_n(&c->deferred, __ATOMIC_RELAXED) <= c->deferred_limit))
		return;
	if (rcu_may_wait())
		rcu_wait_deferred();
}

int chain_copy_value_out(const struct chain *c, struct chain_elem *e, void *dst, bool with_lock)
{
	const void *src = elem_value(c, e);
	const struct bpfmap *map = &c->map;

	if (with_lock) {
		struct bpfmap_spin_lock *l = (void *)((char *)elem_value(c, e) + map->lock_off);

		spin_lock_word(&l->val);
		shared_copy_out(dst, src, map->value_size);
		spin_unlock_word(&l->val);
	} else {
		uint32_t s;

		do {
			s = seqcount_read_begin(&e->seq);
			/* Unlinked before the copy: whatever it holds now may
			 * have been written after the key left the map. */
			if (unlikely(seqcount_is_retired(s)))
				return -ENOENT;
			shared_copy_out(dst, src, map->value_size);
		} while (seqcount_read_retry(&e->seq, s));
	}
	if (map_has_lock(map))
		memset((char *)dst + map->lock_off, 0, sizeof(struct bpfmap_spin_lock));
	return 0;
}

/* A value_word map's value: one atomic store, so readers never see it torn
 * and no seqcount is needed. */
static ALWAYS_INLINE void chain_store_value_word(const struct chain *c, struct chain_elem *e,
						const void *value)
{
	__atomic_store_n((uint64_t *)elem_value(c, e), map_value_word(&c->map, value),
			 __ATOMIC_RELEASE);
}

/* Overwrite a reachable element's value in place; bucket lock held.  The spin
 * lock word is skipped: other threads may hold it. */
static void chain_write_value_locked(struct chain *c, struct chain_elem *e, const void *value)
{
	const struct bpfmap *map = &c->map;
	void *dst = elem_value(c, e);

	if (c->value_word) {
		chain_store_value_word(c, e, value);
		return;
	}
	seqcount_write_begin(&e->seq);
	if (map_has_lock(map)) {
		struct bpfmap_spin_lock *l = (void *)((char *)dst + map->lock_off);
		uint32_t tail = map->lock_off + sizeof(*l);

		/* Hold the value's lock so BPFMAP_F_LOCK readers never see a mix. */
		spin_lock_word(&l->val);
		shared_copy_in(dst, 0, value, map->lock_off);
		shared_copy_in(dst, tail, (const char *)value + tail, map->value_size - tail);
		spin_unlock_word(&l->val);
	} else {
		shared_copy_in(dst, 0, value, map->value_size);
	}
	seqcount_write_end(&e->seq);
}

/* Fill an unpublished element. */
static void chain_elem_init(struct chain *c, struct chain_elem *e, uint32_t hash,
			   const void *key, const void *value)
{
	const struct bpfmap *map = &c->map;
	char *v = elem_value(c, e);

	e->hash = hash;
	e->seq = 0;
	e->owner = c;
	memcpy(elem_key(e), key, map->key_size);
	memcpy(v, value, map->value_size);
	if (map_has_lock(map))
		memset(v + map->lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

/*
 * The per-key operations are specialised like the program-view lookups, on
 * chain.h's chain_key_of/chain_walk: each is written once as an always-inline
 * function of (key_size, kind) and instantiated with constants by a switch
 * on the map's hash kind.
 */

/* Insert an absent key into its locked bucket. */
static int chain_insert_locked(struct chain *c, struct chain_bucket *b, uint32_t hash,
			      const void *key, const void *value)
{
	uint32_t ticket = count_insert_begin(&c->count);
	struct chain_elem *e;

	if (ticket == COUNT_FULL)
		return -E2BIG;
	TEST_HOOK(HOOK_INSERT_RESERVED, c);
	e = chain_elem_alloc(c);
	if (!e) {
		count_insert_end(&c->count, ticket, false);
		return -ENOMEM;
	}
	chain_elem_init(c, e, hash, key, value);
	e->next = b->head;
	__atomic_store_n(&b->head, e, __ATOMIC_RELEASE);
	count_insert_end(&c->count, ticket, true);
	return 0;
}

/* The lock-free attempt's answer when only the bucket lock can decide. */
#define CHAIN_TAKE_LOCK 1

/*
 * An update decided without the bucket lock, in a read-side section, when
 * the decision can be made linearizable from what one walk sees:
 *  - present key (found, not yet retired: it was in the map when its seq was
 *    read): NOEXIST fails with -EEXIST there; ANY and EXIST of a value_word
 *    map store the value.  If a delete retires the element after the check,
 *    the store is ordered just before that delete: copy-out readers never
 *    return a value read from a retired element (chain_copy_value_out), and
 *    nothing returns the deleted value (see chain_stop_lockfree_stores);
 *  - absent key (a walk that misses the key saw it absent at some instant,
 *    because a reachable element stays reachable from every element after
 *    it): EXIST fails with -ENOENT;
 *  - absent key and a full map: -E2BIG needs both at one instant, so the
 *    count (full, nothing in flight: count_full_quiescent) is read between
 *    two reads of the bucket lock's version: an unchanged even version
 *    means the chain did not change meanwhile.
 * Everything else (an insert, a wider value, a retired element, a bucket
 * held or changed) takes the lock.
 */
static ALWAYS_INLINE int chain_update_lockfree(struct chain *c, struct chain_bucket *b,
					      const struct chain_key *k, const void *value,
					      uint64_t mode, uint32_t key_size, enum hash_kind kind)
{
	uint32_t version = seq_spin_read_begin(&b->lock);
	struct chain_elem *e = chain_walk(b, k, key_size, kind, NULL);

	if (e) {
		if (seqcount_is_retired(__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE)))
			return CHAIN_TAKE_LOCK;
		if (mode == BPFMAP_NOEXIST)
			return -EEXIST;
		if (__atomic_load_n(&c->lockfree_store, __ATOMIC_RELAXED) !=
		    CHAIN_LOCKFREE_STORE_ON)
			return CHAIN_TAKE_LOCK;
		chain_store_value_word(c, e, value);
		return 0;
	}
	if (mode == BPFMAP_EXIST)
		return -ENOENT;
	if (count_full_quiescent(&c->count) && seq_spin_read_valid(&b->lock, version))
		return -E2BIG;
	return CHAIN_TAKE_LOCK;
}

/*
 * A lookup-and-delete returns the value it removes, so it must not miss a
 * lock-free store that is ordered before the delete, and such a store can
 * land after the element was retired, copied and unlinked: the writer
 * checked the element just before.  Rather than make every such store pay
 * for an atomic read-modify-write, the first lookup-and-delete on a map turns
 * lock-free stores off for good and waits for a grace period, after which no
 * store that saw them on is still in flight (writers decide in a read-side
 * section).  Maps used that way store under the bucket lock from then on.
 * Called inside a read-side section it cannot wait: it still turns them off,
 * and only stores already in flight at that first call are left unordered.
 */
void chain_stop_lockfree_stores(struct chain *c)
{
	uint8_t state = __atomic_load_n(&c->lockfree_store, __ATOMIC_ACQUIRE);

	if (likely(state == CHAIN_LOCKFREE_STORE_OFF))
		return;
	__atomic_store_n(&c->lockfree_store, CHAIN_LOCKFREE_STORE_STOPPING, __ATOMIC_RELAXED);
	if (!rcu_may_wait())
		return;
	/* Every caller that saw STOPPING waits, not just the first one. */
	rcu_synchronize();
	__atomic_store_n(&c->lockfree_store, CHAIN_LOCKFREE_STORE_OFF, __ATOMIC_RELEASE);
}

static ALWAYS_INLINE int chain_update_locked(struct chain *c, struct chain_bucket *b,
					    const struct chain_key *k, const void *value,
					    uint64_t mode, uint32_t key_size, enum hash_kind kind)
{
	struct chain_elem *e;
	int ret = 0;

	chain_bucket_lock(b);
	e = chain_walk(b, k, key_size, kind, NULL);
	if (e) {
		if (mode == BPFMAP_NOEXIST)
			ret = -EEXIST;
		else
			chain_write_value_locked(c, e, value);
	} else if (mode == BPFMAP_EXIST) {
		ret = -ENOENT;
	} else {
		ret = chain_insert_locked(c, b, k->hash, k->key, value);
	}
	chain_bucket_unlock(b);
	return ret;
}

/* The locked paths out of line, so that the lock-free ones stay small. */
static __attribute__((noinline)) int chain_update_locked_u32(struct chain *c, struct chain_bucket *b,
							     const struct chain_key *k,
							     const void *value, uint64_t mode)
{
	return chain_update_locked(c, b, k, value, mode, 4, HASH_U32);
}

static __attribute__((noinline)) int chain_update_locked_u64(struct chain *c, struct chain_bucket *b,
							     const struct chain_key *k,
							     const void *value, uint64_t mode)
{
	return chain_update_locked(c, b, k, value, mode, 8, HASH_U64);
}

static __attribute__((noinline)) int chain_update_locked_any(struct chain *c, struct chain_bucket *b,
							     const struct chain_key *k,
							     const void *value, uint64_t mode)
{
	return chain_update_locked(c, b, k, value, mode, c->map.key_size, CHAIN_GENERIC);
}

static ALWAYS_INLINE int chain_update_sized(struct chain *c, const void *key, const void *value,
					   uint64_t flags, uint32_t key_size, enum hash_kind kind)
{
	struct chain_key k = chain_key_of(c, key, kind);
	struct chain_bucket *b = chain_bucket(c, k.hash);
	uint64_t mode = flags & ~BPFMAP_F_LOCK;
	int ret;

	rcu_lock();
	ret = chain_update_lockfree(c, b, &k, value, mode, key_size, kind);
	rcu_unlock();
	if (likely(ret != CHAIN_TAKE_LOCK))
		return ret;
	if (kind == HASH_U32)
		return chain_update_locked_u32(c, b, &k, value, mode);
	if (kind == HASH_U64)
		return chain_update_locked_u64(c, b, &k, value, mode);
	return chain_update_locked_any(c, b, &k, value, mode);
}

/* One function per kind (tail-called), each with only the registers it needs. */
static __attribute__((noinline)) int chain_update_u32(struct chain *c, const void *key,
						      const void *value, uint64_t flags)
{
	return chain_update_sized(c, key, value, flags, 4, HASH_U32);
}

static __attribute__((noinline)) int chain_update_u64(struct chain *c, const void *key,
						      const void *value, uint64_t flags)
{
	return chain_update_sized(c, key, value, flags, 8, HASH_U64);
}

static __attribute__((noinline)) int chain_update_any(struct chain *c, const void *key,
						      const void *value, uint64_t flags)
{
	return chain_update_sized(c, key, value, flags, c->map.key_size, CHAIN_GENERIC);
}

static int chain_update_elem(struct bpfmap *map, const void *key, const void *value,
			    uint64_t flags)
{
	struct chain *c = to_chain(map);

	if (c->hash_kind == HASH_U32)
		return chain_update_u32(c, key, value, flags);
	if (c->hash_kind == HASH_U64)
		return chain_update_u64(c, key, value, flags);
	return chain_update_any(c, key, value, flags);
}

static ALWAYS_INLINE int chain_remove_sized(struct chain *c, const void *key, void *value,
					   uint32_t key_size, enum hash_kind kind)
{
	struct chain_key k = chain_key_of(c, key, kind);
	struct chain_bucket *b = chain_bucket(c, k.hash);
	struct chain_elem **link, *e;

	chain_bucket_lock(b);
	e = chain_walk(b, &k, key_size, kind, &link);
	if (e) {
		if (value)
			chain_copy_value_out(c, e, value, false);
		chain_unlink_locked(c, link, e);
	}
	chain_bucket_unlock(b);
	if (!e)
		return -ENOENT;
	chain_reclaim_throttle(c);
	return 0;
}

static int chain_remove(struct bpfmap *map, const void *key, void *value)
{
	struct chain *c = to_chain(map);

	switch (c->hash_kind) {
	case HASH_U32:
		return chain_remove_sized(c, key, value, 4, HASH_U32);
	case HASH_U64:
		return chain_remove_sized(c, key, value, 8, HASH_U64);
	default:
		return chain_remove_sized(c, key, value, map->key_size, CHAIN_GENERIC);
	}
}

static int chain_delete_elem(struct bpfmap *map, const void *key)
{
	return chain_remove(map, key, NULL);
}

static int chain_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value)
{
	chain_stop_lockfree_stores(to_chain(map));
	return chain_remove(map, key, value);
}

static ALWAYS_INLINE int chain_lookup_sized(struct chain *c, const void *key, void *value,
					   uint64_t flags, uint32_t key_size, enum hash_kind kind)
{
	struct chain_key k = chain_key_of(c, key, kind);
	struct chain_elem *e;
	int ret = -ENOENT;

	rcu_lock();
	e = chain_walk(chain_bucket(c, k.hash), &k, key_size, kind, NULL);
	if (e)
		ret = chain_copy_value_out(c, e, value, flags & BPFMAP_F_LOCK);
	rcu_unlock();
	return ret;
}

static int chain_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags)
{
	struct chain *c = to_chain(map);

	switch (c->hash_kind) {
	case HASH_U32:
		return chain_lookup_sized(c, key, value, flags, 4, HASH_U32);
	case HASH_U64:
		return chain_lookup_sized(c, key, value, flags, 8, HASH_U64);
	default:
		return chain_lookup_sized(c, key, value, flags, map->key_size, CHAIN_GENERIC);
	}
}

static size_t chain_mem_usage(const struct bpfmap *map)
{
	const struct chain *c = to_chain(map);
	size_t bytes = sizeof(*c) + (size_t)c->n_buckets * sizeof(*c->buckets) +
		       count_mem(&c->count);

	size_t heap;

	if (c->prealloc) {
		bytes += (size_t)c->pool_size * c->elem_size + freelist_mem_usage(&c->free_slots);
		heap = __atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED);
	} else {
		/* Every element is on the heap: live (or being inserted),
		 * pending, being reclaimed, or queued one by one. */
		heap = (size_t)count_elements(&c->count) +
		       __atomic_load_n(&c->reclaiming, __ATOMIC_RELAXED) +
		       __atomic_load_n(&c->deferred, __ATOMIC_RELAXED);
		for (uint32_t i = 0; i < CHAIN_PENDING_SHARDS; i++)
			heap += __atomic_load_n(&c->pending[i].n, __ATOMIC_RELAXED);
	}
	bytes += heap * c->elem_size;
	return bytes;
}

/*
 * Reclamation callbacks may be queued or running (counted in c->callbacks):
 * they touch c until their count drops.  Rather than wait for them (liburcu
 * runs callbacks in batches ~10 ms apart, and its barrier also waits for
 * every read-side section in the process, so a reader waiting for this
 * thread would never let it return), hand c over: whichever of free and the
 * last callback comes second tears the map down.  No callback is queued
 * after this: no other thread uses the map now.
 */
static void chain_free(struct bpfmap *map)
{
	struct chain *c = to_chain(map);

	if (!__atomic_fetch_or(&c->callbacks, CHAIN_CB_FREE, __ATOMIC_ACQ_REL))
		chain_teardown(c);
}

static int chain_prealloc(struct chain *c)
{
	uint32_t cpus = (uint32_t)bpfmap_num_possible_cpus();
	uint64_t slack = (uint64_t)(cpus > 0 ? cpus : 1) * CHAIN_POOL_SLACK_PER_CPU;
	uint64_t size = (uint64_t)c->map.max_entries + slack;

	c->pool_size = (uint32_t)(size > UINT32_MAX - 1 ? UINT32_MAX - 1 : size);
	c->pool = big_zalloc((size_t)c->pool_size * c->elem_size);
	if (!c->pool)
		return -ENOMEM;
	if (freelist_init(&c->free_slots, c->pool_size))
		return -ENOMEM;
	for (uint32_t i = c->pool_size; i-- > 0;) {
		pool_elem(c, i)->owner = c;
		freelist_push(&c->free_slots, i);
	}
	return 0;
}

static struct bpfmap *chain_alloc(const struct map_params *p, int *err)
{
	struct chain *c = calloc(1, sizeof(*c));
	size_t key_pad = ROUND_UP((size_t)p->key_size, 8);
	size_t elem_size = chain_header_size() + key_pad + ROUND_UP((size_t)p->value_size, 8);

	if (!c || elem_size > UINT32_MAX)
		goto nomem;
	c->hash_kind = hash_kind_for_key_size(p->key_size);
	map_init_common(&c->map, p, &chain_ops, chain_lookup_for(c->hash_kind, p->key_size));
	c->n_buckets = roundup_pow_of_two_u32(p->max_entries);
	c->shift = 32 - (uint32_t)__builtin_ctz(c->n_buckets);
	c->hash = hash_fn_for_kind(c->hash_kind);
	hash_params_init(&c->hp, p->map_flags & BPFMAP_F_ZERO_SEED);
	c->mul = c->hp.mul;
	c->fin = c->hp.fin;
	c->elem_size = (uint32_t)elem_size;
	c->value_off = (uint32_t)key_pad;
	c->prealloc = !(p->map_flags & BPFMAP_F_NO_PREALLOC);
	c->value_word = p->value_size <= 8 && p->lock_off < 0;
	c->lockfree_store = c->value_word ? CHAIN_LOCKFREE_STORE_ON : CHAIN_LOCKFREE_STORE_OFF;
	c->deferred_limit = chain_deferred_limit(p->max_entries);
	if (count_init(&c->count, p->max_entries))
		goto nomem;
	c->reclaim_batch = chain_reclaim_batch(p->max_entries);
	c->buckets = big_zalloc((size_t)c->n_buckets * sizeof(*c->buckets));
	if (!c->buckets)
		goto nomem;
	if (c->prealloc && chain_prealloc(c))
		goto nomem;
	return &c->map;

nomem:
	if (c) {
		freelist_destroy(&c->free_slots);
		count_destroy(&c->count);
		big_free(c->pool);
		big_free(c->buckets);
			free(c);
	}
	*err = -ENOMEM;
	return NULL;
}

const struct map_ops chain_ops = {
	.alloc = chain_alloc,
	.free = chain_free,
	.lookup_elem = chain_lookup_elem,
	.update_elem = chain_update_elem,
	.delete_elem = chain_delete_elem,
	.lookup_and_delete_elem = chain_lookup_and_delete_elem,
	.get_next_key = chain_get_next_key,
	.lookup_batch = chain_lookup_batch,
	.mem_usage = chain_mem_usage,
	.lookup_bulk = chain_lookup_bulk,
};
