/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The chained table's per-key operations: update, delete, lookup-and-delete
 * and the copy-out lookup.  The design is in tables/chain.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync/backoff.h"
#include "sync/spin_lock.h"
#include "hash/fast_hash.h"
#include "hash/sized_hash.h"
#include "util/big_alloc.h"
#include "tables/chain.h"
#include "tables/chain_lru.h"
#include "tables/value.h"
#include "sync/seqcount.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

/* A value_word map's value: one atomic store, so readers never see it torn
 * and no seqcount is needed. */
static ALWAYS_INLINE void chain_store_value_word(const struct chain *c, struct chain_elem *e,
						const void *value)
{
	__atomic_store_n((uint64_t *)elem_value(c, e), map_value_word(&c->map, value),
			 __ATOMIC_RELEASE);
}

/* A per-CPU value's bytes into its slots (tables/value.h).  Only per-CPU
 * maps store parts of a value (core/percpu.c), as in the flat table. */
static void chain_pcpu_copy_in(const struct chain *c, const struct chain_elem *e,
			       const void *value, const struct value_part *part, bool fresh)
{
	value_pcpu_in(&c->map, chain_pcpu_slot(c, e, 0), c->pcpu_region, value, part, fresh);
}

/* Overwrite a reachable element's value in place (@part of it, or all of
 * @value); bucket lock held.  The spin lock word is skipped: other threads
 * may hold it.  A value with a spin lock is stored under it, so that
 * programs and BPFMAP_F_LOCK readers never see a mix, taken before the
 * seqcount and only if it is free: false, nothing written, when it is held
 * (the caller waits for it with the bucket unlocked). */
static bool chain_write_value_locked(struct chain *c, struct chain_elem *e, const void *value,
				     const struct value_part *part)
{
	const struct bpfmap *map = &c->map;
	void *dst = elem_value(c, e);
	struct bpfmap_spin_lock *l = NULL;

	if (c->value_word) { /* never with parts: per-CPU maps are not value_word */
		chain_store_value_word(c, e, value);
		return true;
	}
	if (!c->pcpu && map_has_lock(map)) {
		l = value_lock(map, dst);
		if (!value_lock_try(&l->val))
			return false;
	}
	seqcount_write_begin(&e->seq);
	if (c->pcpu)
		chain_pcpu_copy_in(c, e, value, part, false);
	else
		value_store(map, dst, value);
	seqcount_write_end(&e->seq);
	if (l)
		value_lock_drop(&l->val);
	return true;
}

/* Fill an unpublished element's value: @value, or (per-CPU) zeros and
 * @part.  @reused: an element unlinked (retired) and taken at once, which
 * readers may still be on, and whose spin lock the deleted key's holder may
 * still hold: its lock word is left as it is (it is free once that holder lets
 * it go, as in the flat table). */
static void chain_elem_fill(struct chain *c, struct chain_elem *e, const void *value,
			    const struct value_part *part, bool reused)
{
	const struct bpfmap *map = &c->map;
	char *v = elem_value(c, e);

	if (c->pcpu) { /* v holds the slots' index, set when @e was made */
		chain_pcpu_copy_in(c, e, value, part, true);
	} else if (reused) {
		value_store(map, v, value);
	} else {
		value_fill(map, v, value);
	}
}

/* Name a filled element: its hash and key.  A reused one's count goes on
 * from where it was, past any a reader read, and becomes unretired once
 * the element holds its new key and value.  Its value went in first
 * (chain_elem_fill, a release fence between): a walker still on it that
 * matches the new key, a hit that nothing validates, finds the new key's
 * value (it found the deleted key's, or a per-CPU add into the new key
 * was lost to the fill). */
static void chain_elem_name(struct chain *c, struct chain_elem *e, uint32_t hash,
			    const void *key, bool reused)
{
	uint32_t seq = 0;

	if (reused) {
		seq = (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) &
		       ~(SEQCOUNT_RETIRED | SEQCOUNT_WRITING)) + 4;
#ifndef BPFMAP_TSAN /* which never reuses at once (chain_may_reuse) */
		__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
	} else {
		e->seq = 0;
	}
	e->hash = hash;
	e->owner = c;
	memcpy(elem_key(e), key, c->map.key_size);
	TEST_HOOK(HOOK_CHAIN_NAMED, e);
	if (reused)
		__atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
}

/*
 * Whether an insert should take a deleted element, or one it evicts, for
 * itself (chain_reuses) when the pool has no free element, so that it would
 * otherwise borrow one from the heap (a map whose programs insert at a
 * high rate held tens of MB, or, per-CPU, answered -ENOMEM once its slot
 * indices ran out): an insert inside a read-side section, where it cannot
 * wait for reclamation, an evicting map's at once and another map's once
 * it has borrowed its slack.  Outside sections an insert waits for the
 * deleted elements instead (chain_may_borrow), as the flat table's do, so
 * that a program's pointer shows its own key's value until its section
 * ends: reusing there as well (inserts outside sections beside deletes
 * inside them had grown a 64-entry HASH by 183K heap elements in 40 s)
 * changed values under pointers in test_stress whenever reclamation
 * lagged.  Not in TSan builds: the readers' key compares race with the
 * reuse's stores by design, validated afterwards (chain_walk_valid).
 */
static bool chain_may_reuse(const struct chain *c)
{
#ifdef BPFMAP_TSAN
	(void)c;
	return false;
#else
	if (c->evict)
		return !rcu_may_wait();
	return chain_reuses(c) && !rcu_may_wait() &&
	       __atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED) >= c->borrow_cap;
#endif
}

/*
 * Whether an insert whose pool is dry may borrow from the heap now.  A
 * preallocated map's insert outside a section, past the slack it has
 * borrowed, first takes its deleted elements back, one grace period (its
 * caller's chain_reclaim_now; an evicting map's, its pending stacks only):
 * it borrowed every time, and beside deletes inside sections, whose
 * elements wait for a grace period, a 64-entry LRU_HASH of 16-byte keys
 * grew to 38 MB in 25 s.  Reusing one at once instead changed the value
 * under programs' pointers hundreds of times in test_stress's 2.5 s (an
 * evicting map borrows its slack within a few thousand inserts whenever
 * reclamation lags), and under BPFMAP_TABLE=chain in its HASH runs too.
 */
static bool chain_may_borrow(const struct chain *c, bool waited)
{
	return !c->prealloc || waited || !rcu_may_wait() ||
	       __atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED) < c->borrow_cap;
}

static bool chain_reuse_wanted(const struct chain *c)
{
	return freelist_looks_empty(&c->free_slots) && !__atomic_load_n(&c->spare, __ATOMIC_RELAXED) &&
	       chain_may_reuse(c);
}

/*
 * The per-key operations are specialised like the program-view lookups, on
 * chain.h's chain_key_of/chain_walk: each is written once as an always-inline
 * function of (key_size, kind) and instantiated with constants by a switch
 * on the map's hash kind.
 */

/* chain_insert_locked's answer in a full evicting map: drop the bucket
 * lock, evict, and try again. */
#define CHAIN_EVICT 2

/* Allocations an insert inside a section tries again when the pool that
 * ran dry has elements again: others may take them first. */
#define CHAIN_ENOMEM_RETRIES 8
/* Waits for deleted elements an insert outside any section makes before
 * it answers -ENOMEM (below). */
#define CHAIN_ENOMEM_WAITS 8

/* A free or deleted element for an insert that may reuse one at once; a
 * deleted one is also left in *@victim. */
static struct chain_elem *chain_take_reusable(struct chain *c, struct chain_elem **victim)
{
	bool stolen = false;
	struct chain_elem *e = chain_elem_reusable(c, &stolen);

	if (stolen) {
		*victim = e;
		/* A lock-free store that found the element's old key may still
		 * be on its way to it: stores off for good, once those in
		 * flight have landed. */
		if (!c->evict)
			stores_stop_windows(&c->lockfree_store, store_window_owner(&c->map));
	}
	return e;
}

/* Insert an absent key into its locked bucket (a full evicting map:
 * CHAIN_EVICT; -ENOMEM, with *no_slot when a per-CPU map's slots, not
 * malloc, ran out, or when it should wait before it borrows and has not:
 * !@waited, chain_may_borrow). */
static int chain_insert_locked(struct chain *c, struct chain_bucket *b, uint32_t hash,
			      const void *key, const void *value, const struct value_part *part,
			      bool *credit, struct chain_elem **victim, bool *no_slot,
			      bool waited)
{
	uint32_t ticket, list = 0;
	struct chain_elem *e;
	bool reused, relink;

	if (c->evict) {
		ticket = chain_lru_reserve(c, credit, &list);
		if (ticket == COUNT_FULL)
			return CHAIN_EVICT;
	} else {
		ticket = count_insert_begin(&c->count);
		if (ticket == COUNT_FULL)
			return -E2BIG;
	}
	TEST_HOOK(HOOK_INSERT_RESERVED, c);
	/* Inside a section with the pool dry, spare included, a deleted
	 * element before the heap's (the bucket's lock, then the stack's: a
	 * delete's order): borrowed ones are kept for the map's life, and a
	 * churn of in-section inserts and deletes borrowed hundreds of
	 * thousands while reclamation lagged.  A full map reuses its victim.
	 * None to steal or free while a flush moves its elements from its
	 * stack to the free list: the first to land, rather than a heap
	 * element, even if another thread takes that one (a churn on two CPUs
	 * borrowed a few a second there, for good). */
	e = *victim;
	if (!e && chain_may_reuse(c))
		e = chain_take_reusable(c, victim);
	if (!e)
		e = chain_elem_alloc(c, no_slot, chain_may_borrow(c, waited));
	if (!e) {
		if (ticket == COUNT_CREDIT)
			count_credit_give_back(&c->count);
		else
			count_insert_end(&c->count, ticket, false);
		if (c->evict)
			chain_lru_unreserve(c, list);
		return -ENOMEM;
	}
	reused = e == *victim;
	chain_elem_fill(c, e, value, part, reused);
	/* Walks that may stand on @e check its relink (chain_check_of), which
	 * holds them up for a few stores: the value is in already. */
	relink = reused && !c->evict;
	if (relink) {
		TEST_HOOK(HOOK_CHAIN_FILLED, e);
		mwseq_write_begin(&c->moved);
	}
	chain_elem_name(c, e, hash, key, reused);
	*victim = NULL;
	/* Atomic: a section-free copy-out may still walk through @e, reused. */
	__atomic_store_n(&e->next, b->head, __ATOMIC_RELAXED);
	__atomic_store_n(&b->head, e, __ATOMIC_RELEASE);
	if (relink) {
		TEST_HOOK(HOOK_CHAIN_RELINKED, e);
		mwseq_write_end(&c->moved);
	}
	if (c->evict)
		chain_lru_add(c, e, list);
	if (ticket != COUNT_CREDIT)
		count_insert_end(&c->count, ticket, true);
	return 0;
}

/* The lock-free attempt's answer when only the bucket lock can decide. */
#define CHAIN_TAKE_LOCK 1

/*
 * Store word @value into @e without the bucket lock, in a store window
 * (sync/store_window.h) as well as the caller's read-side section: false
 * when the lock must decide (stores off, no window).  The window is what a
 * reuse of a deleted element at once, or a lookup-and-delete, waits for
 * when it turns the stores off (chain_insert_locked,
 * chain_stop_lockfree_stores); a grace period cannot cover the stores of a
 * section that is still open.  A thread's first overwrite registers its
 * window on the locked path (chain_update_locked), so this calls nothing.
 */
static ALWAYS_INLINE bool chain_store_lockfree(struct chain *c, struct chain_elem *e,
					       const void *value)
{
	struct store_window *win;
	bool done = false;

	/* A per-CPU map's switch is on for its adds, not for its values. */
	if (!c->value_word || !stores_on(&c->lockfree_store))
		return false;
	win = store_window_enter(false, store_window_owner(&c->map));
	if (unlikely(!win))
		return false;
	if (likely(__atomic_load_n(&c->lockfree_store, STORE_WINDOW_ORDER) == STORES_ON)) {
		TEST_HOOK(HOOK_CHAIN_STORE, e);
		chain_store_value_word(c, e, value);
		done = true;
	}
	store_window_leave(win);
	return done;
}

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
 * held or changed) takes the lock.  In a map that reuses elements
 * (chain_reuses) every answer needs the bucket unchanged across the walk.
 */
static ALWAYS_INLINE int chain_update_lockfree(struct chain *c, struct chain_bucket *b,
					      const struct chain_key *k, const void *value,
					      uint64_t mode, uint32_t key_size, enum hash_kind kind)
{
	enum chain_check how = chain_check_of(c);
	uint32_t walk = chain_check_begin(c, b, how), version = seq_spin_read_begin(&b->lock);
	struct chain_elem *e = chain_walk(b, k, key_size, kind, NULL);

	/* A map that reuses elements at once decides only on a walk that
	 * its check validates. */
	if (!chain_check_valid(c, b, how, walk))
		return CHAIN_TAKE_LOCK;
	if (e) {
		if (seqcount_is_retired(__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE)))
			return CHAIN_TAKE_LOCK;
		if (mode == BPFMAP_NOEXIST)
			return -EEXIST;
		return chain_store_lockfree(c, e, value) ? 0 : CHAIN_TAKE_LOCK;
	}
	if (mode == BPFMAP_EXIST)
		return -ENOENT;
	if (count_full_quiescent(&c->count) && !c->evict &&
	    seq_spin_read_valid(&b->lock, version))
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
	stores_stop_windows(&c->lockfree_store, store_window_owner(&c->map));
}

/*
 * Wait for a value's spin lock that an update (or a batch) found held,
 * bucket @b locked (unlocked on return), outside any read-side section: the
 * holder may be a program waiting for a grace period.  A preallocated map's
 * elements stay mapped while it lives; a NO_PREALLOC map's may be freed, so
 * it spins a while in a section and then backs off outside (sync/backoff.h:
 * *@spins, the caller's, 0 at its first wait), and the caller starts again
 * either way.
 */
void chain_value_wait(struct chain *c, struct chain_bucket *b, uint32_t *busy,
		      unsigned int *spins)
{
	bool free_now;

	if (c->prealloc) {
		chain_bucket_unlock(b);
		value_lock_wait_free(busy);
		return;
	}
	rcu_lock();
	chain_bucket_unlock(b);
	free_now = value_lock_wait_free_for(busy, 128);
	rcu_unlock();
	if (!free_now)
		backoff(spins);
}

static ALWAYS_INLINE int chain_update_locked(struct chain *c, struct chain_bucket *b,
					    const struct chain_key *k, const void *value,
					    const struct value_part *part, uint64_t mode,
					    uint32_t key_size, enum hash_kind kind)
{
	struct chain_elem *e, *victim = NULL;
	bool evicted = false, credit = false, no_slot;
	unsigned int retries = 0, waits = 0, spins = 0;
	int ret;

	if (c->value_word)
		store_window_ensure(); /* lock-free from the next one on */
	for (;;) {
		ret = 0;
		no_slot = false;
		chain_bucket_lock(b);
		e = chain_walk(b, k, key_size, kind, NULL);
		if (e) {
			if (mode == BPFMAP_NOEXIST) {
				ret = -EEXIST;
			} else if (!chain_write_value_locked(c, e, value, part)) {
				chain_value_wait(c, b, &value_lock(&c->map, elem_value(c, e))->val,
						 &spins);
				continue;
			} else if (c->evict) {
				chain_lru_touch(c, e); /* an update is a use, as in the kernel */
			}
		} else if (mode == BPFMAP_EXIST) {
			ret = -ENOENT;
		} else {
			ret = chain_insert_locked(c, b, k->hash, k->key, value, part, &credit,
						  &victim, &no_slot, waits > 0);
		}
		chain_bucket_unlock(b);
		if (unlikely(ret == CHAIN_EVICT)) {
			TEST_HOOK(HOOK_LRU_FULL, c);
			if (chain_lru_evict(c, !victim && chain_reuse_wanted(c) ? &victim : NULL,
					    false, true)) {
				evicted = credit = true;
				TEST_HOOK(HOOK_LRU_EVICTED, c);
			} else {
				backoff(&spins); /* a victim's bucket holder may be preempted */
			}
			continue;
		}
		/* No memory inside a read-side section, which cannot wait for
		 * deleted elements: an evicting map reuses one of them at once,
		 * as the kernel's LRU does (a reader that stood on it is told
		 * as for a victim: chain_walk_once).  The map has room here, so
		 * a deleted element first, which costs no key; else it evicts
		 * one anyway and reuses it, as a full map's insert does, rather
		 * than fail.  With per-CPU lists a thread moved to another CPU
		 * finds room on that CPU's list while its old list's victims
		 * still wait. */
		if (unlikely(ret == -ENOMEM) && c->evict && !victim && !rcu_may_wait()) {
			if (chain_reuse_wanted(c)) {
				if ((victim = chain_pending_steal(c)))
					continue;
				if (chain_lru_evict(c, &victim, true, false)) {
					evicted = credit = true;
					continue;
				}
			} else if (retries++ < CHAIN_ENOMEM_RETRIES) {
				continue; /* a flush gave elements back since */
			}
		}
		/* A per-CPU map's slots ran out (a section that deleted many
		 * elements has just ended, say): take those freed since the
		 * allocation failed, else wait for the deleted elements where
		 * waiting is allowed, a few times, as deletes inside other
		 * threads' sections may take what one wait gave back (one wait
		 * left 0-3 inserts a run answering -ENOMEM beside a thread
		 * deleting 64 keys a section).  A preallocated map's pool is
		 * dry only while its deleted elements wait for a grace period,
		 * and malloc failed to bridge that: wait for them, a few times
		 * (deletes inside other threads' sections may refill the
		 * pending stacks meanwhile).  A NO_PREALLOC map's failed malloc
		 * is its answer.  A map past its borrowed slack waits for its
		 * deleted elements before it borrows (chain_may_borrow), one
		 * grace period (an evicting map: its pending stacks only, then
		 * it borrows whatever that found, and waits for every deleted
		 * element only if malloc failed).  Slots on
		 * their way back (chain_slots_landing) are waited for first:
		 * else the waits passed in microseconds beside a chunk being
		 * given back, or another thread's release, and the insert
		 * answered -ENOMEM outside any section. */
		if (unlikely(ret == -ENOMEM) && no_slot && waits < CHAIN_ENOMEM_WAITS &&
		    (chain_slots_landing(c) || slot_arena_room(&c->pcpu_heap) ||
		     chain_reclaim_now(c))) {
			waits++;
			continue;
		}
		if (unlikely(ret == -ENOMEM) && !no_slot && c->prealloc &&
		    (!waits || (!c->evict && waits < CHAIN_ENOMEM_WAITS))) {
			TEST_HOOK(HOOK_CHAIN_WAITS, c);
			if (c->evict ? chain_reclaim_pending_now(c) : chain_reclaim_now(c)) {
				waits++;
				continue;
			}
		}
		if (unlikely(ret == -ENOMEM) && !no_slot && c->prealloc && c->evict && waits == 1 &&
		    chain_reclaim_now(c)) {
			waits++;
			continue;
		}
		break;
	}
	if (unlikely(credit)) /* the key turned up while this evicted */
		count_credit_give_back(&c->count);
	if (unlikely(victim)) /* taken for reuse, and not needed after all */
		chain_retire_unlinked(c, victim);
	if (evicted)
		chain_reclaim_throttle(c); /* the victims */
	return ret;
}

/* The locked paths out of line, so that the lock-free ones stay small. */
static __attribute__((noinline)) int chain_update_locked_u32(struct chain *c,
							     struct chain_bucket *b,
							     const struct chain_key *k,
							     const void *value, uint64_t mode)
{
	return chain_update_locked(c, b, k, value, NULL, mode, 4, HASH_U32);
}

static __attribute__((noinline)) int chain_update_locked_u64(struct chain *c,
							     struct chain_bucket *b,
							     const struct chain_key *k,
							     const void *value, uint64_t mode)
{
	return chain_update_locked(c, b, k, value, NULL, mode, 8, HASH_U64);
}

static __attribute__((noinline)) int chain_update_locked_any(struct chain *c,
							     struct chain_bucket *b,
							     const struct chain_key *k,
							     const void *value, uint64_t mode)
{
	return chain_update_locked(c, b, k, value, NULL, mode, c->map.key_size,
				   CHAIN_GENERIC);
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

HASH_KIND_UPDATES(chain_update, chain_update_sized, struct chain *, c, c->map.key_size,
		  CHAIN_GENERIC)

/* Parts of a value are rare (per-CPU maps' program view and F_CPU updates):
 * always under the lock, with the generic key compare. */
int chain_update_part(struct bpfmap *map, const void *key, const void *src, uint32_t len,
		      uint32_t off, uint32_t step, uint32_t n, uint64_t mode)
{
	struct chain *c = to_chain(map);
	struct chain_key k = chain_key_of(c, key, CHAIN_GENERIC);
	struct value_part part = { .src = src, .len = len, .off = off, .step = step, .n = n };

	return REENTRY_GUARDED(chain_update_locked(c, chain_bucket(c, k.hash), &k, NULL, &part,
						   mode, map->key_size, CHAIN_GENERIC));
}

int chain_update_elem(struct bpfmap *map, const void *key, const void *value,
			    uint64_t flags)
{
	struct chain *c = to_chain(map);

	/* Marked throughout (sync/reentry.h): the lock-free stores open no
	 * store window that a handler's delete could see. */
	return REENTRY_GUARDED(chain_update_kind(c->hash_kind, c, key, value, flags));
}

static ALWAYS_INLINE int chain_take_sized(struct chain *c, const void *key, void *value,
					 bool lockf, bool keep, uint32_t key_size,
					 enum hash_kind kind)
{
	struct chain_key k = chain_key_of(c, key, kind);
	struct chain_bucket *b = chain_bucket(c, k.hash);
	struct chain_elem **link, *e;
	unsigned int spins = 0;

retry:
	/* @keep: a copy-out that writers kept out (chain_copy_section) */
	seq_spin_lock_as(&b->lock, keep);
	e = chain_walk(b, &k, key_size, kind, &link);
	if (e) {
		if (value && lockf) {
			uint32_t *busy = value_copy_out_or_busy(&c->map, value, elem_value(c, e));

			if (unlikely(busy)) {
				chain_value_wait(c, b, busy, &spins); /* unlocks b */
				goto retry;
			}
		} else if (value) {
			chain_copy_value_out(c, e, value, false, NULL);
		}
		if (!keep)
			chain_unlink_elem(c, link, e);
	}
	chain_bucket_unlock(b);
	if (!e)
		return -ENOENT;
	if (!keep)
		chain_reclaim_throttle(c);
	return 0;
}

int chain_take(struct chain *c, const void *key, void *value, bool lockf, bool keep)
{
	switch (c->hash_kind) {
	case HASH_U32:
		return chain_take_sized(c, key, value, lockf, keep, 4, HASH_U32);
	case HASH_U64:
		return chain_take_sized(c, key, value, lockf, keep, 8, HASH_U64);
	default:
		return chain_take_sized(c, key, value, lockf, keep, c->map.key_size,
					CHAIN_GENERIC);
	}
}

int chain_delete_elem(struct bpfmap *map, const void *key)
{
	return chain_take(to_chain(map), key, NULL, false, false);
}

int chain_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value,
				 uint64_t flags)
{
	chain_stop_lockfree_stores(to_chain(map));
	return chain_take(to_chain(map), key, value, flags & BPFMAP_F_LOCK, false);
}

static ALWAYS_INLINE int chain_lookup_sized(struct chain *c, const void *key, void *value,
					   uint64_t flags, uint32_t key_size, enum hash_kind kind)
{
	struct chain_key k = chain_key_of(c, key, kind);

	return chain_copy_section(c, &k, value, flags & BPFMAP_F_LOCK, key_size, kind);
}

int chain_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags)
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

