/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH: creation, element lifetime, and the per-key operations.
 * Design notes in maps/htab.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/spin_lock.h"
#include "hash/fast_hash.h"
#include "hash/sized_hash.h"
#include "util/big_alloc.h"
#include "maps/htab.h"
#include "util/seqcount.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

/* Pool elements beyond max_entries, so that deletes followed at once by
 * inserts rarely wait on reclamation; past them the pool falls back to the
 * heap (see htab_elem_alloc). */
#define HTAB_POOL_SLACK_PER_CPU 16

/* Backlog of elements queued one by one for reclamation (only by deleters
 * inside a read-side section, see htab_reclaim_pending) tolerated before
 * deleters wait (htab_reclaim_throttle): HTAB_DEFERRED_PER_MAX x max_entries,
 * at least HTAB_DEFERRED_MIN.  Waiting costs milliseconds (the worker's grace
 * period), so the limit is generous. */
#define HTAB_DEFERRED_MIN 16384U
#define HTAB_DEFERRED_PER_MAX 4U

static size_t htab_header_size(void)
{
	return offsetof(struct htab_elem, data);
}

static bool elem_in_pool(const struct htab *h, const struct htab_elem *e)
{
	const char *p = (const char *)e;

	return h->pool && p >= h->pool && p < h->pool + (size_t)h->pool_size * h->elem_size;
}

static struct htab_elem *pool_elem(const struct htab *h, uint32_t index)
{
	return (struct htab_elem *)(void *)(h->pool + (size_t)index * h->elem_size);
}

static uint32_t pool_index(const struct htab *h, const struct htab_elem *e)
{
	return (uint32_t)(((const char *)e - h->pool) / h->elem_size);
}

/* A fresh element, or NULL on allocation failure.  Capacity (max_entries) is
 * enforced by the caller through h->count, so the pool's emptiness only means
 * that reclamation lags behind; the heap covers that gap. */
static struct htab_elem *htab_elem_alloc(struct htab *h)
{
	struct htab_elem *e;

	if (h->prealloc) {
		uint32_t i = freelist_pop(&h->free_slots);

		if (i != FREELIST_EMPTY)
			return pool_elem(h, i);
	}
	e = malloc(h->elem_size);
	if (!e)
		return NULL;
	e->owner = h;
	if (h->prealloc) /* NO_PREALLOC maps count theirs from count (mem_usage) */
		__atomic_fetch_add(&h->heap_elems, 1, __ATOMIC_RELAXED);
	return e;
}

/* Return an element no reader can see any more. */
static void htab_elem_release(struct htab *h, struct htab_elem *e)
{
	if (elem_in_pool(h, e)) {
		freelist_push(&h->free_slots, pool_index(h, e));
		return;
	}
	if (h->prealloc)
		__atomic_fetch_sub(&h->heap_elems, 1, __ATOMIC_RELAXED);
	free(e);
}

/* Release a taken stack of n elements after a grace period. */
static void htab_release_batch(struct htab *h, struct htab_elem *list, uint32_t n)
{
	while (list) {
		struct htab_elem *next = list->reclaim_next;

		htab_elem_release(h, list);
		list = next;
	}
	__atomic_fetch_sub(&h->reclaiming, n, __ATOMIC_RELAXED);
}

/* Release the map and every element it still holds.  No one uses the map
 * and no callback touches it any more, so what is still pending needs no
 * grace period. */
static void htab_teardown(struct htab *h)
{
	for (uint32_t i = 0; i < HTAB_PENDING_SHARDS; i++)
		htab_release_batch(h, h->pending[i].head, 0);
	for (uint32_t i = 0; i < h->n_buckets; i++) {
		struct htab_elem *e = h->buckets[i].head;

		while (e) {
			struct htab_elem *next = e->next;

			if (!elem_in_pool(h, e))
				free(e);
			e = next;
		}
	}
	freelist_destroy(&h->free_slots);
	count_destroy(&h->count);
	big_free(h->pool);
	big_free(h->buckets);
	free(h);
}

/* Count n callbacks that will touch h, before queueing them (see htab_free). */
static void htab_callbacks_get(struct htab *h, uint32_t n)
{
	__atomic_fetch_add(&h->callbacks, n, __ATOMIC_RELAXED);
}

/* A callback's last access to h: after it, the map may be released, by this
 * callback if bpfmap_free came first and this was the last one.  Acquire and
 * release: the teardown comes after every other callback's accesses (each
 * decrement continues the release sequence of the ones before). */
static void htab_callback_done(struct htab *h)
{
	if (__atomic_sub_fetch(&h->callbacks, 1, __ATOMIC_ACQ_REL) == HTAB_CB_FREE)
		htab_teardown(h);
}

static void htab_elem_reclaim(struct rcu_head *head)
{
	struct htab_elem *e = container_of(head, struct htab_elem, rcu);

	struct htab *h;

	rcu_deferred_enter(); /* first: it orders this thread after the writer */
	h = e->owner;
	htab_elem_release(h, e);
	__atomic_fetch_sub(&h->deferred, 1, __ATOMIC_RELAXED);
	rcu_deferred_exit();
	htab_callback_done(h);
}

/*
 * Reclamation in batches.  liburcu's call_rcu() runs callbacks in one worker
 * thread that sleeps 10 ms between rounds, with a queue operation and a
 * callback per element; writers that delete faster (two producers on two
 * cores) grow its backlog, and the memory of a NO_PREALLOC map, until they
 * have to wait for it.  Instead, unlinked elements gather on a pending
 * stack of the map (one of HTAB_PENDING_SHARDS, by thread), and the deleter
 * that fills it to reclaim_batch takes the whole stack, waits for one grace
 * period (microseconds when readers are short) and releases every element
 * itself: one wait per batch, memory bounded by a batch per shard (and per
 * thread in a grace period), and for NO_PREALLOC maps free() in the thread
 * that usually malloc'ed.  A deleter inside a read-side section cannot
 * wait: it queues the batch element by element (the backlog counted in
 * deferred).  Elements left pending when deletes stop are taken by a flush
 * callback that the first element of an empty stack queues.
 */
#define HTAB_RECLAIM_BATCH_MIN 2048U
#define HTAB_RECLAIM_BATCH_MAX 8192U

static uint32_t htab_reclaim_batch(uint32_t max_entries)
{
	uint32_t n = max_entries / 4;

	if (n < HTAB_RECLAIM_BATCH_MIN)
		return HTAB_RECLAIM_BATCH_MIN;
	return n > HTAB_RECLAIM_BATCH_MAX ? HTAB_RECLAIM_BATCH_MAX : n;
}

/* The pending stack of the calling thread: threads are dealt the shards
 * round robin on their first delete, so two deleting threads rarely share
 * one (its lock and cache line). */
static __thread uint32_t htab_thread_shard; /* 1 + shard; 0: not dealt yet */
static uint32_t htab_shards_dealt;

static ALWAYS_INLINE struct htab_pending *htab_my_pending(struct htab *h)
{
	uint32_t s = htab_thread_shard;

	if (unlikely(!s)) {
		s = 1 + __atomic_fetch_add(&htab_shards_dealt, 1, __ATOMIC_RELAXED) %
				HTAB_PENDING_SHARDS;
		htab_thread_shard = s;
	}
	return &h->pending[s - 1];
}

/* Take a whole pending stack; *n: its length, counted in reclaiming until
 * released. */
static struct htab_elem *htab_pending_take(struct htab *h, struct htab_pending *p, uint32_t *n)
{
	struct htab_elem *list;

	spin_lock_word(&p->lock);
	list = p->head;
	p->head = NULL;
	*n = __atomic_load_n(&p->n, __ATOMIC_RELAXED);
	/* Counted as reclaiming before no longer pending: mem_usage never
	 * misses them. */
	__atomic_fetch_add(&h->reclaiming, *n, __ATOMIC_RELAXED);
	__atomic_store_n(&p->n, 0, __ATOMIC_RELAXED);
	spin_unlock_word(&p->lock);
	return list;
}

/* Queue a taken stack of n elements one by one (no waiting allowed). */
static void htab_defer_batch(struct htab *h, struct htab_elem *list, uint32_t n)
{
	__atomic_fetch_add(&h->deferred, n, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&h->reclaiming, n, __ATOMIC_RELAXED);
	htab_callbacks_get(h, n);
	while (list) {
		struct htab_elem *next = list->reclaim_next; /* rcu overlays it */

		rcu_defer(&list->rcu, htab_elem_reclaim);
		list = next;
	}
}

/*
 * Queued whenever an element lands on an empty stack and no flush is queued:
 * so every pending element is reclaimed within a round of the worker, even
 * if deletes stop.  The flag drops before the stacks are taken, so that an
 * element pushed after its stack was taken queues the next flush.
 */
static void htab_flush_pending(struct rcu_head *head)
{
	struct htab *h = container_of(head, struct htab, flush_rcu);

	rcu_deferred_enter();
	/* Once bpfmap_free has run, the teardown releases the stacks without
	 * a grace period: no need to wait for one here. */
	if (!(__atomic_load_n(&h->callbacks, __ATOMIC_RELAXED) & HTAB_CB_FREE)) {
		__atomic_store_n(&h->flush_queued, false, __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < HTAB_PENDING_SHARDS; i++) {
			uint32_t n;
			struct htab_elem *list = htab_pending_take(h, &h->pending[i], &n);

			if (list) {
				/* Some were pushed after this callback was queued. */
				rcu_synchronize();
				htab_release_batch(h, list, n);
			}
		}
	}
	rcu_deferred_exit();
	htab_callback_done(h);
}

void htab_unlink_locked(struct htab *h, struct htab_elem **link, struct htab_elem *e)
{
	struct htab_pending *p = htab_my_pending(h);
	uint32_t n, ticket = count_delete_begin(&h->count); /* busy before the key goes */

	/* Retired before unlinked: lock-free writers and copy-out readers that
	 * still hold @e see that the key left the map (htab_update_lockfree). */
	seqcount_retire(&e->seq);
	__atomic_store_n(link, elem_next(e), __ATOMIC_RELEASE);
	TEST_HOOK(HOOK_DELETE_HIDDEN, h);
	count_delete_end(&h->count, ticket);

	spin_lock_word(&p->lock);
	e->reclaim_next = p->head;
	p->head = e;
	n = __atomic_load_n(&p->n, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&p->n, n, __ATOMIC_RELAXED);
	spin_unlock_word(&p->lock);
	if (unlikely(n == 1) && !__atomic_load_n(&h->flush_queued, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&h->flush_queued, true, __ATOMIC_ACQ_REL)) {
		htab_callbacks_get(h, 1);
		rcu_defer(&h->flush_rcu, htab_flush_pending);
	}
}

/* The backlog of elements queued one by one, past which deleters wait. */
static uint32_t htab_deferred_limit(uint32_t max_entries)
{
	uint64_t limit = (uint64_t)max_entries * HTAB_DEFERRED_PER_MAX;

	return limit < HTAB_DEFERRED_MIN ? HTAB_DEFERRED_MIN : (uint32_t)limit;
}

static __attribute__((noinline)) void htab_reclaim_pending(struct htab *h,
							  struct htab_pending *p)
{
	uint32_t n;
	struct htab_elem *list = htab_pending_take(h, p, &n);

	if (!list)
		return; /* another deleter took it */
	if (rcu_may_wait()) {
		rcu_synchronize();
		htab_release_batch(h, list, n);
	} else {
		htab_defer_batch(h, list, n);
	}
}

void htab_reclaim_throttle(struct htab *h)
{
	struct htab_pending *p = htab_my_pending(h);

	if (unlikely(__atomic_load_n(&p->n, __ATOMIC_RELAXED) >= h->reclaim_batch))
		htab_reclaim_pending(h, p);
	if (likely(__atomic_load_n(&h->deferred, __ATOMIC_RELAXED) <= h->deferred_limit))
		return;
	if (rcu_may_wait())
		rcu_wait_deferred();
}

int htab_copy_value_out(const struct htab *h, struct htab_elem *e, void *dst, bool with_lock)
{
	const void *src = elem_value(h, e);
	const struct bpfmap *map = &h->map;

	if (with_lock) {
		struct bpfmap_spin_lock *l = (void *)((char *)elem_value(h, e) + map->lock_off);

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
static ALWAYS_INLINE void htab_store_value_word(const struct htab *h, struct htab_elem *e,
						const void *value)
{
	__atomic_store_n((uint64_t *)elem_value(h, e), map_value_word(&h->map, value),
			 __ATOMIC_RELEASE);
}

/* Overwrite a reachable element's value in place; bucket lock held.  The spin
 * lock word is skipped: other threads may hold it. */
static void htab_write_value_locked(struct htab *h, struct htab_elem *e, const void *value)
{
	const struct bpfmap *map = &h->map;
	void *dst = elem_value(h, e);

	if (h->value_word) {
		htab_store_value_word(h, e, value);
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
static void htab_elem_init(struct htab *h, struct htab_elem *e, uint32_t hash,
			   const void *key, const void *value)
{
	const struct bpfmap *map = &h->map;
	char *v = elem_value(h, e);

	e->hash = hash;
	e->seq = 0;
	e->owner = h;
	memcpy(elem_key(e), key, map->key_size);
	memcpy(v, value, map->value_size);
	if (map_has_lock(map))
		memset(v + map->lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

/*
 * The per-key operations are specialised like the program-view lookups, on
 * htab.h's htab_key_of/htab_walk: each is written once as an always-inline
 * function of (key_size, kind) and instantiated with constants by a switch
 * on the map's hash kind.
 */

/* Insert an absent key into its locked bucket. */
static int htab_insert_locked(struct htab *h, struct htab_bucket *b, uint32_t hash,
			      const void *key, const void *value)
{
	uint32_t ticket = count_insert_begin(&h->count);
	struct htab_elem *e;

	if (ticket == COUNT_FULL)
		return -E2BIG;
	TEST_HOOK(HOOK_INSERT_RESERVED, h);
	e = htab_elem_alloc(h);
	if (!e) {
		count_insert_end(&h->count, ticket, false);
		return -ENOMEM;
	}
	htab_elem_init(h, e, hash, key, value);
	e->next = b->head;
	__atomic_store_n(&b->head, e, __ATOMIC_RELEASE);
	count_insert_end(&h->count, ticket, true);
	return 0;
}

/* The lock-free attempt's answer when only the bucket lock can decide. */
#define HTAB_TAKE_LOCK 1

/*
 * An update decided without the bucket lock, in a read-side section, when
 * the decision can be made linearizable from what one walk sees:
 *  - present key (found, not yet retired: it was in the map when its seq was
 *    read): NOEXIST fails with -EEXIST there; ANY and EXIST of a value_word
 *    map store the value.  If a delete retires the element after the check,
 *    the store is ordered just before that delete: copy-out readers never
 *    return a value read from a retired element (htab_copy_value_out), and
 *    nothing returns the deleted value (see htab_stop_lockfree_stores);
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
static ALWAYS_INLINE int htab_update_lockfree(struct htab *h, struct htab_bucket *b,
					      const struct htab_key *k, const void *value,
					      uint64_t mode, uint32_t key_size, enum hash_kind kind)
{
	uint32_t version = seq_spin_read_begin(&b->lock);
	struct htab_elem *e = htab_walk(b, k, key_size, kind, NULL);

	if (e) {
		if (seqcount_is_retired(__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE)))
			return HTAB_TAKE_LOCK;
		if (mode == BPFMAP_NOEXIST)
			return -EEXIST;
		if (__atomic_load_n(&h->lockfree_store, __ATOMIC_RELAXED) !=
		    HTAB_LOCKFREE_STORE_ON)
			return HTAB_TAKE_LOCK;
		htab_store_value_word(h, e, value);
		return 0;
	}
	if (mode == BPFMAP_EXIST)
		return -ENOENT;
	if (count_full_quiescent(&h->count) && seq_spin_read_valid(&b->lock, version))
		return -E2BIG;
	return HTAB_TAKE_LOCK;
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
void htab_stop_lockfree_stores(struct htab *h)
{
	uint8_t state = __atomic_load_n(&h->lockfree_store, __ATOMIC_ACQUIRE);

	if (likely(state == HTAB_LOCKFREE_STORE_OFF))
		return;
	__atomic_store_n(&h->lockfree_store, HTAB_LOCKFREE_STORE_STOPPING, __ATOMIC_RELAXED);
	if (!rcu_may_wait())
		return;
	/* Every caller that saw STOPPING waits, not just the first one. */
	rcu_synchronize();
	__atomic_store_n(&h->lockfree_store, HTAB_LOCKFREE_STORE_OFF, __ATOMIC_RELEASE);
}

static ALWAYS_INLINE int htab_update_locked(struct htab *h, struct htab_bucket *b,
					    const struct htab_key *k, const void *value,
					    uint64_t mode, uint32_t key_size, enum hash_kind kind)
{
	struct htab_elem *e;
	int ret = 0;

	htab_bucket_lock(b);
	e = htab_walk(b, k, key_size, kind, NULL);
	if (e) {
		if (mode == BPFMAP_NOEXIST)
			ret = -EEXIST;
		else
			htab_write_value_locked(h, e, value);
	} else if (mode == BPFMAP_EXIST) {
		ret = -ENOENT;
	} else {
		ret = htab_insert_locked(h, b, k->hash, k->key, value);
	}
	htab_bucket_unlock(b);
	return ret;
}

/* The locked paths out of line, so that the lock-free ones stay small. */
static __attribute__((noinline)) int htab_update_locked_u32(struct htab *h, struct htab_bucket *b,
							     const struct htab_key *k,
							     const void *value, uint64_t mode)
{
	return htab_update_locked(h, b, k, value, mode, 4, HASH_U32);
}

static __attribute__((noinline)) int htab_update_locked_u64(struct htab *h, struct htab_bucket *b,
							     const struct htab_key *k,
							     const void *value, uint64_t mode)
{
	return htab_update_locked(h, b, k, value, mode, 8, HASH_U64);
}

static __attribute__((noinline)) int htab_update_locked_any(struct htab *h, struct htab_bucket *b,
							     const struct htab_key *k,
							     const void *value, uint64_t mode)
{
	return htab_update_locked(h, b, k, value, mode, h->map.key_size, HTAB_GENERIC);
}

static ALWAYS_INLINE int htab_update_sized(struct htab *h, const void *key, const void *value,
					   uint64_t flags, uint32_t key_size, enum hash_kind kind)
{
	struct htab_key k = htab_key_of(h, key, kind);
	struct htab_bucket *b = htab_bucket(h, k.hash);
	uint64_t mode = flags & ~BPFMAP_F_LOCK;
	int ret;

	rcu_lock();
	ret = htab_update_lockfree(h, b, &k, value, mode, key_size, kind);
	rcu_unlock();
	if (likely(ret != HTAB_TAKE_LOCK))
		return ret;
	if (kind == HASH_U32)
		return htab_update_locked_u32(h, b, &k, value, mode);
	if (kind == HASH_U64)
		return htab_update_locked_u64(h, b, &k, value, mode);
	return htab_update_locked_any(h, b, &k, value, mode);
}

/* One function per kind (tail-called), each with only the registers it needs. */
static __attribute__((noinline)) int htab_update_u32(struct htab *h, const void *key,
						      const void *value, uint64_t flags)
{
	return htab_update_sized(h, key, value, flags, 4, HASH_U32);
}

static __attribute__((noinline)) int htab_update_u64(struct htab *h, const void *key,
						      const void *value, uint64_t flags)
{
	return htab_update_sized(h, key, value, flags, 8, HASH_U64);
}

static __attribute__((noinline)) int htab_update_any(struct htab *h, const void *key,
						      const void *value, uint64_t flags)
{
	return htab_update_sized(h, key, value, flags, h->map.key_size, HTAB_GENERIC);
}

static int htab_update_elem(struct bpfmap *map, const void *key, const void *value,
			    uint64_t flags)
{
	struct htab *h = to_htab(map);

	if (h->hash_kind == HASH_U32)
		return htab_update_u32(h, key, value, flags);
	if (h->hash_kind == HASH_U64)
		return htab_update_u64(h, key, value, flags);
	return htab_update_any(h, key, value, flags);
}

static ALWAYS_INLINE int htab_remove_sized(struct htab *h, const void *key, void *value,
					   uint32_t key_size, enum hash_kind kind)
{
	struct htab_key k = htab_key_of(h, key, kind);
	struct htab_bucket *b = htab_bucket(h, k.hash);
	struct htab_elem **link, *e;

	htab_bucket_lock(b);
	e = htab_walk(b, &k, key_size, kind, &link);
	if (e) {
		if (value)
			htab_copy_value_out(h, e, value, false);
		htab_unlink_locked(h, link, e);
	}
	htab_bucket_unlock(b);
	if (!e)
		return -ENOENT;
	htab_reclaim_throttle(h);
	return 0;
}

static int htab_remove(struct bpfmap *map, const void *key, void *value)
{
	struct htab *h = to_htab(map);

	switch (h->hash_kind) {
	case HASH_U32:
		return htab_remove_sized(h, key, value, 4, HASH_U32);
	case HASH_U64:
		return htab_remove_sized(h, key, value, 8, HASH_U64);
	default:
		return htab_remove_sized(h, key, value, map->key_size, HTAB_GENERIC);
	}
}

static int htab_delete_elem(struct bpfmap *map, const void *key)
{
	return htab_remove(map, key, NULL);
}

static int htab_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value)
{
	htab_stop_lockfree_stores(to_htab(map));
	return htab_remove(map, key, value);
}

static ALWAYS_INLINE int htab_lookup_sized(struct htab *h, const void *key, void *value,
					   uint64_t flags, uint32_t key_size, enum hash_kind kind)
{
	struct htab_key k = htab_key_of(h, key, kind);
	struct htab_elem *e;
	int ret = -ENOENT;

	rcu_lock();
	e = htab_walk(htab_bucket(h, k.hash), &k, key_size, kind, NULL);
	if (e)
		ret = htab_copy_value_out(h, e, value, flags & BPFMAP_F_LOCK);
	rcu_unlock();
	return ret;
}

static int htab_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags)
{
	struct htab *h = to_htab(map);

	switch (h->hash_kind) {
	case HASH_U32:
		return htab_lookup_sized(h, key, value, flags, 4, HASH_U32);
	case HASH_U64:
		return htab_lookup_sized(h, key, value, flags, 8, HASH_U64);
	default:
		return htab_lookup_sized(h, key, value, flags, map->key_size, HTAB_GENERIC);
	}
}

static size_t htab_mem_usage(const struct bpfmap *map)
{
	const struct htab *h = to_htab(map);
	size_t bytes = sizeof(*h) + (size_t)h->n_buckets * sizeof(*h->buckets) +
		       count_mem(&h->count);

	size_t heap;

	if (h->prealloc) {
		bytes += (size_t)h->pool_size * h->elem_size + freelist_mem_usage(&h->free_slots);
		heap = __atomic_load_n(&h->heap_elems, __ATOMIC_RELAXED);
	} else {
		/* Every element is on the heap: live (or being inserted),
		 * pending, being reclaimed, or queued one by one. */
		heap = (size_t)count_elements(&h->count) +
		       __atomic_load_n(&h->reclaiming, __ATOMIC_RELAXED) +
		       __atomic_load_n(&h->deferred, __ATOMIC_RELAXED);
		for (uint32_t i = 0; i < HTAB_PENDING_SHARDS; i++)
			heap += __atomic_load_n(&h->pending[i].n, __ATOMIC_RELAXED);
	}
	bytes += heap * h->elem_size;
	return bytes;
}

/*
 * Reclamation callbacks may be queued or running (counted in h->callbacks):
 * they touch h until their count drops.  Rather than wait for them (liburcu
 * runs callbacks in batches ~10 ms apart, and its barrier also waits for
 * every read-side section in the process, so a reader waiting for this
 * thread would never let it return), hand h over: whichever of free and the
 * last callback comes second tears the map down.  No callback is queued
 * after this: no other thread uses the map now.
 */
static void htab_free(struct bpfmap *map)
{
	struct htab *h = to_htab(map);

	if (!__atomic_fetch_or(&h->callbacks, HTAB_CB_FREE, __ATOMIC_ACQ_REL))
		htab_teardown(h);
}

static int htab_prealloc(struct htab *h)
{
	uint32_t cpus = (uint32_t)bpfmap_num_possible_cpus();
	uint64_t slack = (uint64_t)(cpus > 0 ? cpus : 1) * HTAB_POOL_SLACK_PER_CPU;
	uint64_t size = (uint64_t)h->map.max_entries + slack;

	h->pool_size = (uint32_t)(size > UINT32_MAX - 1 ? UINT32_MAX - 1 : size);
	h->pool = big_zalloc((size_t)h->pool_size * h->elem_size);
	if (!h->pool)
		return -ENOMEM;
	if (freelist_init(&h->free_slots, h->pool_size))
		return -ENOMEM;
	for (uint32_t i = h->pool_size; i-- > 0;) {
		pool_elem(h, i)->owner = h;
		freelist_push(&h->free_slots, i);
	}
	return 0;
}

static struct bpfmap *htab_alloc(const struct map_params *p, int *err)
{
	struct htab *h = calloc(1, sizeof(*h));
	size_t key_pad = ROUND_UP((size_t)p->key_size, 8);
	size_t elem_size = htab_header_size() + key_pad + ROUND_UP((size_t)p->value_size, 8);

	if (!h || elem_size > UINT32_MAX)
		goto nomem;
	h->hash_kind = hash_kind_for_key_size(p->key_size);
	map_init_common(&h->map, p, &htab_ops, htab_lookup_for(h->hash_kind, p->key_size));
	h->n_buckets = roundup_pow_of_two_u32(p->max_entries);
	h->shift = 32 - (uint32_t)__builtin_ctz(h->n_buckets);
	h->hash = hash_fn_for_kind(h->hash_kind);
	hash_params_init(&h->hp, p->map_flags & BPFMAP_F_ZERO_SEED);
	h->mul = h->hp.mul;
	h->fin = h->hp.fin;
	h->elem_size = (uint32_t)elem_size;
	h->value_off = (uint32_t)key_pad;
	h->prealloc = !(p->map_flags & BPFMAP_F_NO_PREALLOC);
	h->value_word = p->value_size <= 8 && p->lock_off < 0;
	h->lockfree_store = h->value_word ? HTAB_LOCKFREE_STORE_ON : HTAB_LOCKFREE_STORE_OFF;
	h->deferred_limit = htab_deferred_limit(p->max_entries);
	if (count_init(&h->count, p->max_entries))
		goto nomem;
	h->reclaim_batch = htab_reclaim_batch(p->max_entries);
	h->buckets = big_zalloc((size_t)h->n_buckets * sizeof(*h->buckets));
	if (!h->buckets)
		goto nomem;
	if (h->prealloc && htab_prealloc(h))
		goto nomem;
	return &h->map;

nomem:
	if (h) {
		freelist_destroy(&h->free_slots);
		count_destroy(&h->count);
		big_free(h->pool);
		big_free(h->buckets);
			free(h);
	}
	*err = -ENOMEM;
	return NULL;
}

const struct map_ops htab_ops = {
	.alloc = htab_alloc,
	.free = htab_free,
	.lookup_elem = htab_lookup_elem,
	.update_elem = htab_update_elem,
	.delete_elem = htab_delete_elem,
	.lookup_and_delete_elem = htab_lookup_and_delete_elem,
	.get_next_key = htab_get_next_key,
	.lookup_batch = htab_lookup_batch,
	.mem_usage = htab_mem_usage,
	.lookup_bulk = htab_lookup_bulk,
};
