/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat layout's per-key operations: update (insert into a home slot or
 * a node, overwrite, or reuse of a deleted position), delete and
 * lookup_and_delete.  Design notes in
 * tables/flat.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sync/backoff.h"
#include "sync/spin_lock.h"
#include "sync/store_window.h"
#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/flat_lru.h"
#include "tables/value.h"
#include "util/big_alloc.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

/* Overwrite a live element's value in place; home lock held, so its version
 * (flat_value_version) has one writer.  The value's spin lock (if any) is
 * taken before the version, so no writer ever waits while it counts as busy
 * on the value, and only if it is free: false, nothing written, when a
 * program or an F_LOCK copy holds it (the caller waits for it with the home
 * unlocked). */
static ALWAYS_INLINE bool flat_write_value(struct flat *f, uint32_t pos, const void *value,
					    const struct value_part *part)
{
	const struct bpfmap *map = &f->map;
	struct bpfmap_spin_lock *l = NULL;
	uint32_t b = pos / FLAT_SLOTS;

	if (!part && map->value_size <= 8 && !map_has_lock(map)) {
		/* One atomic store cannot tear: no seq needed (copy-outs load
		 * the word at once too). */
		__atomic_store_n((uint64_t *)(void *)flat_value_at(f, pos),
				 map_value_word(map, value), __ATOMIC_RELEASE);
		return true;
	}
	if (map_has_lock(map)) {
		l = value_lock(map, flat_value_at(f, pos));
		if (!value_lock_try(&l->val))
			return false;
	}
	if (flat_versioned(f)) {
		uint32_t e = flat_elem_of(f, pos);
		uint32_t *ver = flat_value_version(f, e);

		seqcount_write_begin(ver);
		TEST_HOOK(HOOK_VALUE_WRITING, flat_value_elem(f, e, 0));
		flat_store_value(f, pos, value, part, false);
		seqcount_write_end(ver);
	} else {
		mwseq_write_begin(&f->buckets[b].seq);
		flat_store_value(f, pos, value, part, false);
		mwseq_write_end(&f->buckets[b].seq);
	}
	if (l)
		value_lock_drop(&l->val);
	return true;
}

/* ---- lock-free overwrites ------------------------------------------------ */

/* Slot @hint still holds the key, live?  (Under home h's lock, or in a
 * window for a lock-free store.) */
static ALWAYS_INLINE bool flat_hint_ok(const struct flat *f, uint32_t hint, uint32_t tag,
				       uint32_t ks, uint64_t small)
{
	uint64_t tags = __atomic_load_n(&f->buckets[hint / FLAT_SLOTS].tags, __ATOMIC_ACQUIRE);

	return ((tags >> (8 * (hint % FLAT_SLOTS))) & 0xff) == tag &&
	       flat_small_at(f, hint, ks) == small;
}

/*
 * An overwrite of a word-sized value whose key the probe found stores the
 * value without the home's lock: it checks that the slot still holds the key
 * live and stores the word.  The lock's atomic read-modify-write was most of
 * an overwrite's cost.
 *
 * What could go wrong is a store landing in a slot that no longer holds the
 * key: the key may be deleted between the check and the store.  A store
 * into a deleted slot is harmless by itself (lookups skip it; the overwrite
 * is ordered just before the delete), but three things give a deleted slot
 * to someone else before every store that checked it could have landed:
 *  - the reclaimers, which turn deleted slots EMPTY for any key after a
 *    grace period (flat.c), and the in-section reuse (flat_reuse_dead),
 *    without one: a late store would overwrite another key's value;
 *  - a lookup-and-delete, single or batch: the value it returns would miss a
 *    store ordered before its delete.
 * So the stores run in store windows (sync/store_window.h) that those wait
 * for, having made the slots they care about dead or the map's stores not ON.
 * A window is no read-side section: a grace period does not cover it, hence
 * the reclaimers' wait (flat_stores_settle, once per reclamation batch, about
 * what the grace period's own membarrier costs).  The in-section reuse and
 * lookup-and-delete turn the map's lock-free stores off for good and wait
 * once (flat_stores_off); the map then behaves as it did before they existed.
 * Maps that never do those (counters, tables updated in place) keep them.
 */

/*
 * Store word @w as the value of slot @hint if it still holds the key live,
 * without the home's lock (see above).  Returns false when the lock must
 * decide: stores off, no window, or the slot changed.  A thread's first
 * overwrite registers its window in the locked path, so that this one calls
 * nothing (and saves no registers).
 */
static ALWAYS_INLINE bool flat_store_lockfree(const struct flat *f, uint32_t hint, uint32_t tag,
					      uint32_t ks, uint64_t small, uint64_t w)
{
	const uint32_t *state = &f->buckets[hint / FLAT_SLOTS].stores;
	struct store_window *win;
	bool done = false;

	if (!stores_on(state))
		return false;
	win = store_window_enter(false, store_window_owner(&f->map));
	if (unlikely(!win))
		return false;
	if (likely(__atomic_load_n(state, STORE_WINDOW_ORDER) == STORES_ON) &&
	    likely(flat_hint_ok(f, hint, tag, ks, small))) {
		__atomic_store_n((uint64_t *)(void *)flat_value_at(f, hint), w, __ATOMIC_RELEASE);
		flat_lru_touch_pos(f, hint);
		done = true;
	}
	store_window_leave(win);
	return done;
}

/* ---- per-key operations ------------------------------------------------- */

/* Byte i of bucket bk's tags from @from to @to, if it still is @from. */
static bool flat_cas_tag(struct flat_bucket *bk, uint32_t i, uint32_t from, uint32_t to)
{
	uint64_t old = __atomic_load_n(&bk->tags, __ATOMIC_RELAXED), new;
	uint64_t mask = 0xffULL << (8 * i);

	do {
		if (((old & mask) >> (8 * i)) != from)
			return false;
		new = (old & ~mask) | ((uint64_t)to << (8 * i));
	} while (!__atomic_compare_exchange_n(&bk->tags, &old, new, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return true;
}

/* Deletes piled up past sync_at, and one of home h's slots among them? */
static bool flat_home_reclaims(const struct flat *f, uint32_t h)
{
	if (__atomic_load_n(&f->dead, __ATOMIC_RELAXED) < (int32_t)f->sync_at)
		return false;
	uint64_t tags = __atomic_load_n(&f->buckets[h].tags, __ATOMIC_RELAXED);

	return flat_match(tags, FLAT_WAIT * FLAT_BYTES_LO) |
	       flat_match(tags, FLAT_QUEUED * FLAT_BYTES_LO) |
	       flat_match(tags, FLAT_SYNCQ * FLAT_BYTES_LO);
}

/* Claim an EMPTY slot of home bucket h (locked): its position, or FLAT_NONE.
 * Only inserts into h, under its lock, take its EMPTY slots (the reclaimers
 * make slots EMPTY, the claims of deleted ones take other states), so the
 * slot is ours with one byte store (flat_set_tag). */
static uint32_t flat_claim_home(struct flat *f, uint32_t h)
{
	struct flat_bucket *bk = &f->buckets[h];
	uint64_t m = flat_match(__atomic_load_n(&bk->tags, __ATOMIC_RELAXED), FLAT_EMPTY);

	if (!m)
		return FLAT_NONE;
	flat_set_tag(bk, flat_first(m), FLAT_BUSY);
	return h * FLAT_SLOTS + flat_first(m);
}

/* A free node, claimed (BUSY): the free list's, else the next never used
 * one below @cap.  Its position, or FLAT_NONE. */
static uint32_t flat_claim_node(struct flat *f, uint32_t cap)
{
	uint32_t n = freelist_pop(&f->node_free), pos;

	if (n == FREELIST_EMPTY) {
		n = __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
		do {
			if (n >= cap)
				return FLAT_NONE;
		} while (!__atomic_compare_exchange_n(&f->node_hwm, &n, n + 1, true,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	}
	pos = f->pool_base + n;
	flat_set_tag(&f->buckets[pos / FLAT_SLOTS], pos % FLAT_SLOTS, FLAT_BUSY);
	return pos;
}

/* Link filled node @pos at the head of home h's chain (locked), its filter
 * bit set first, then make it live: from the tag's store on, walks match it
 * (flat_chain_find). */
static void flat_link_node(struct flat *f, uint32_t h, uint32_t pos, uint32_t tag)
{
	uint64_t *filter = &f->homes[h].filter;

	__atomic_store_n(filter, __atomic_load_n(filter, __ATOMIC_RELAXED) | flat_filter_bit(tag),
			 __ATOMIC_RELEASE);
	/* Release: a walk that reads the new next sees the moved seq's entry
	 * before it (flat_reuse_dead). */
	__atomic_store_n(&f->node_next[pos - f->pool_base], flat_chain(f, h), __ATOMIC_RELEASE);
	__atomic_store_n(&f->homes[h].chain, pos, __ATOMIC_RELEASE);
	flat_set_tag(&f->buckets[pos / FLAT_SLOTS], pos % FLAT_SLOTS, tag);
}

/* A new element of an evicting map joins its small queue's ring (its state
 * was set by flat_fill); @carried: it takes over an evicted small
 * element's count (FLAT_EVICT_SMALL). */
static ALWAYS_INLINE void flat_queue_new(struct flat *f, uint32_t pos, bool carried)
{
	if (f->lru)
		flat_lru_queue(f, pos, carried);
}

/* Claim a deleted position of bucket b (any of the dead states): its
 * position, or FLAT_NONE. */
static uint32_t flat_claim_dead(struct flat *f, uint32_t b)
{
	static const uint8_t dead_states[] = { FLAT_WAIT, FLAT_QUEUED, FLAT_SYNCQ };
	struct flat_bucket *bk = &f->buckets[b];
	uint64_t tags = __atomic_load_n(&bk->tags, __ATOMIC_RELAXED);

	if (!(~tags & FLAT_BYTES_HI))
		return FLAT_NONE; /* all live */
	for (size_t k = 0; k < ARRAY_SIZE(dead_states); k++)
		for (uint64_t m = flat_match(tags, dead_states[k] * FLAT_BYTES_LO); m; m &= m - 1)
			if (flat_cas_tag(bk, flat_first(m), dead_states[k], FLAT_BUSY))
				return b * FLAT_SLOTS + flat_first(m);
	return FLAT_NONE;
}

/*
 * An insert inside a read-side section found no free position: the deleted
 * ones await readers, the caller among them, so waiting for them cannot
 * work.  Reuse one at once instead, as the kernel reuses preallocated
 * elements: a dead slot of the home bucket, else a dead node of any chain's.
 * The rewrite runs inside the position's bucket seq, which copy-out lookups
 * and chain walks validate against; a program-view pointer to the deleted
 * element may then read the new key's value (see flat.h).  The map's moved
 * seq is held around a node's relinking, so that walks of its old chain
 * which reached the node before are told (flat_chain_find).  Home h is
 * locked and the count reserved.  Returns 0, or -EAGAIN if every deleted
 * position is claimed by an insert in progress (momentarily).
 */
static int flat_reuse_dead(struct flat *f, uint32_t h, uint32_t tag, const void *key,
			   uint64_t small, const void *value, const struct value_part *part,
			   bool carried)
{
	uint32_t pos = flat_claim_dead(f, h);

	for (uint32_t b = f->n_homes; pos == FLAT_NONE && b < f->n_buckets; b++)
		pos = flat_claim_dead(f, b);
	if (pos == FLAT_NONE)
		return -EAGAIN;
	/* Nor land in another key's value. */
	flat_stores_off(f);
	/* The reclaimers count what they free by tag, so this one is ours
	 * to uncount. */
	flat_dead_dec(f);
	if (!flat_is_node(f, pos)) {
		flat_fill(f, pos, tag, key, small, value, part, false);
		flat_queue_new(f, pos, carried);
		return 0;
	}
	/* Only the relinking diverts walks; the fill (a value of up to 64
	 * KiB) runs before it, in the bucket's seq alone, so that the moved
	 * seq, which every chain walk of the map checks, is held for a few
	 * stores.  A walk standing on the node that compares the new key
	 * with its own finds a key of this home, which its own is not, or
	 * the key inserted now. */
	flat_fill(f, pos, FLAT_BUSY, key, small, value, part, false);
	mwseq_write_begin(&f->moved);
	TEST_HOOK(HOOK_NODE_RELINKING, f);
	flat_link_node(f, h, pos, tag);
	mwseq_write_end(&f->moved);
	flat_queue_new(f, pos, carried);
	return 0;
}

/* How an insert may get its position (flat_insert_locked). */
enum flat_insert_mode {
	FLAT_INSERT_FIRST,	/* -EAGAIN where a reclamation should come first */
	FLAT_INSERT_RECLAIMED,	/* after one: take what there is */
	FLAT_INSERT_IN_SECTION, /* the caller cannot wait for readers: reuse */
};

/* Insert a new element into home h (locked, count reserved): the home
 * bucket's first EMPTY slot, else a node linked at the chain's head.  A
 * first try prefers a reclamation (-EAGAIN: the caller runs one, outside
 * any read-side section, and tries again) when the bucket itself has
 * deleted slots and deletes have piled up far beyond the asynchronous
 * reclamation's threshold (sync_at), or when the pool's soft cap is
 * reached with deleted positions about: keys then stay in their home
 * buckets, and chains and touched memory short; maps of large elements
 * even with a free home slot (docs/MAPS.md).  Returns 0, or -EAGAIN. */
static int flat_insert_locked(struct flat *f, uint32_t h, uint32_t tag, const void *key,
			      uint64_t small, const void *value, const struct value_part *part,
			      enum flat_insert_mode mode, bool carried)
{
	bool first = mode == FLAT_INSERT_FIRST;
	uint32_t pos;

	if (unlikely(f->reclaim_first) && first && flat_home_reclaims(f, h))
		return -EAGAIN;
	pos = flat_claim_home(f, h);
	if (pos != FLAT_NONE) {
		flat_fill(f, pos, tag, key, small, value, part, false);
		flat_queue_new(f, pos, carried);
		return 0;
	}
	if (first && flat_home_reclaims(f, h))
		return -EAGAIN;
	pos = flat_claim_node(f, f->node_soft_cap);
	if (pos == FLAT_NONE) {
		if (first && __atomic_load_n(&f->dead, __ATOMIC_RELAXED) > 0)
			return -EAGAIN;
		pos = flat_claim_node(f, f->n_nodes);
	}
	if (pos == FLAT_NONE)
		return mode == FLAT_INSERT_IN_SECTION
			       ? flat_reuse_dead(f, h, tag, key, small, value, part, carried)
			       : -EAGAIN;
	flat_fill(f, pos, FLAT_BUSY, key, small, value, part, true);
	flat_link_node(f, h, pos, tag);
	flat_queue_new(f, pos, carried);
	return 0;
}

/*
 * A small key's lock-free probe before an update: where the key is
 * (*hint, FLAT_NONE if absent), and whether -E2BIG is already decided.
 *
 * -E2BIG for an insert into a full map is decided without the home's lock
 * when the key is absent and the map full at one instant.  The home's lock
 * word, read unlocked before and the same after (seq_spin_read_valid: it
 * versions every critical section), proves that no writer of the home ran
 * in between, and only those add or remove this key: its absence seen in
 * between held throughout, including when the count said full with nothing
 * in flight (count_full_quiescent).  Every load is acquire, so they happen
 * in this order.  Keys of at most 8 bytes: the home bucket's compared in one
 * load each, outside any read-side section; a chain is walked inside one.
 *
 * The hint spares the locked path its search: under the lock, a position
 * that still holds the key live is the key's one position.
 */
static ALWAYS_INLINE bool flat_probe_full(const struct flat *f, uint32_t h, uint32_t tag,
					  uint32_t ks, uint64_t small, bool may_insert,
					  uint32_t *hint, bool *evict)
{
	const struct flat_home *home = &f->homes[h];
	uint32_t lw = seq_spin_read_begin(&home->lock), pos;
	/* Inside the window the lock word validates, as every read here;
	 * read at once, so that the home's address is computed once. */
	bool chained = __atomic_load_n(&home->filter, __ATOMIC_ACQUIRE) & flat_filter_bit(tag);
	uint64_t m = flat_match(__atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE),
				tag * FLAT_BYTES_LO);

	for (; m; m &= m - 1) {
		pos = h * FLAT_SLOTS + flat_first(m);
		if (flat_small_at(f, pos, ks) == small) {
			*hint = pos;
			return false;
		}
	}
	*hint = FLAT_NONE;
	if (chained) {
		/* Checked (lookup): a signal handler's update that interrupted
		 * its thread's relink (flat_reuse_dead holds moved) or fill
		 * would wait for it for ever; it goes to the locked path,
		 * which answers -EBUSY. */
		rcu_lock();
		pos = flat_chain_find(f, h, tag, NULL, ks, small, f->match_by_key, true);
		rcu_unlock();
		if (pos == FLAT_WAIT_SELF)
			return false;
		if (pos != FLAT_NONE) {
			*hint = pos;
			return false;
		}
	}
	if (!may_insert || (lw & 1))
		return false;
	if (f->lru) {
		/* Evicting maps are never full.  Absent and full at one
		 * instant, the key's insert evicts before it takes the home's
		 * lock, rather than find the map full under it. */
		*evict = count_full_quiescent(&f->count) && seq_spin_read_valid(&home->lock, lw);
		return false;
	}
	TEST_HOOK(HOOK_PROBE_FULL_SCANNED, f);
	if (!count_full_quiescent(&f->count))
		return false;
	return seq_spin_read_valid(&home->lock, lw);
}

/* The update under the home's lock, for a key size and hash that are
 * constants in the word-key cases; @hint as flat_probe_full left it; @part:
 * the part of a per-CPU value to store (flat_update_part), NULL for all of
 * @value. */
static ALWAYS_INLINE int flat_update_locked(struct flat *f, const void *key, const void *value,
					    uint64_t flags, uint64_t hash, uint32_t hint,
					    uint32_t ks, const struct value_part *part, uint32_t credit)
{
	struct bpfmap *map = &f->map;
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t h = pl.home, tag = pl.tag, pos;
	uint64_t small = ks <= 8 ? flat_small_key(key, ks) : 0;
	uint64_t mode = flags & ~BPFMAP_F_LOCK;
	bool section = ks > 8; /* long keys: compares need stable positions */
	enum flat_insert_mode how = FLAT_INSERT_FIRST;
	uint32_t *lock = &f->homes[h].lock, ticket, *busy = NULL;
	unsigned int spins = 0;
	int ret;

	if (hint != FLAT_NONE && mode != BPFMAP_NOEXIST && !part && map->value_size <= 8 &&
	    !map_has_lock(map)) {
		/* Overwrite of a word-sized value where the probe found the
		 * key and lock-free stores are off: the lock, one check, one
		 * store. */
		uint64_t w = map_value_word(map, value);

		store_window_ensure(); /* lock-free from the next one on */
		seq_spin_lock(lock);
		if (likely(flat_hint_ok(f, hint, tag, ks, small))) {
			__atomic_store_n((uint64_t *)(void *)flat_value_at(f, hint), w,
					 __ATOMIC_RELEASE);
			flat_lru_touch_pos(f, hint);
			seq_spin_unlock(lock);
			return 0;
		}
		seq_spin_unlock(lock);
	}
retry:
	ret = 0;
	if (section)
		rcu_lock();
	seq_spin_lock(lock);
	if (hint != FLAT_NONE && flat_hint_ok(f, hint, tag, ks, small))
		pos = hint;
	else
		pos = flat_find(f, h, tag, key, ks, small, false);
	hint = FLAT_NONE;
	if (pos != FLAT_NONE) {
		if (mode == BPFMAP_NOEXIST)
			ret = -EEXIST;
		else if (flat_write_value(f, pos, value, part))
			flat_lru_touch_pos(f, pos);
		else
			busy = &value_lock(&f->map, flat_value_at(f, pos))->val;
		goto out;
	}
	if (mode == BPFMAP_EXIST) {
		ret = -ENOENT;
		goto out;
	}
	ticket = credit ? COUNT_CREDIT : count_insert_begin(&f->count);
	if (ticket == COUNT_FULL) {
		/* An evicting map makes room (below); ENOSPC says so here. */
		ret = f->lru ? -ENOSPC : -E2BIG;
		goto out;
	}
	TEST_HOOK(HOOK_INSERT_RESERVED, f);
	ret = flat_insert_locked(f, h, tag, key, small, value, part, how,
				 credit & FLAT_EVICT_SMALL);
	if (ticket != COUNT_CREDIT)
		count_insert_end(&f->count, ticket, ret == 0);
	else if (ret == 0)
		credit = 0;
out:
	seq_spin_unlock(lock);
	if (unlikely(busy)) {
		/* Positions stay mapped while the map lives: wait on one's
		 * lock word outside the section, which its holder may be
		 * waiting to see end. */
		if (section)
			rcu_unlock();
		value_lock_wait_free(busy);
		busy = NULL;
		goto retry;
	}
	if (section)
		rcu_unlock();
	if (unlikely(ret == -ENOSPC)) {
		/* Full, and evicting: one element goes, its room is ours.  None
		 * could (every element in an insert or delete right now): let
		 * those finish. */
		credit = flat_lru_evict(f);
		if (!credit)
			backoff(&spins);
		goto retry;
	}
	if (ret == -EAGAIN) {
		/* A reclamation first, or no free position at all: reclaim
		 * and retry; inside a read-side section waiting would wait for
		 * ourselves, so reuse a deleted position at once.  An evicted
		 * element's room goes back before any wait: an insert inside a
		 * section, finding the map full and nothing left to evict,
		 * would keep its section open until it got that room, and the
		 * wait here would wait for that section (a map of one element
		 * hung for ever so, one thread inserting in sections and one
		 * outside). */
		if (credit && rcu_may_wait()) {
			count_credit_give_back(&f->count);
			if (credit & FLAT_EVICT_SMALL)
				flat_lru_small_give_back(f);
			credit = 0;
		}
		if (how == FLAT_INSERT_FIRST && !rcu_may_wait()) {
			how = FLAT_INSERT_IN_SECTION;
			flat_kick(f);
		} else if (how == FLAT_INSERT_FIRST) {
			(void)flat_reclaim_try(f);
			how = FLAT_INSERT_RECLAIMED;
		} else {
			/* another thread's reclamation frees them, or inserts in
			 * flight claimed the free positions */
			backoff(&spins);
		}
		goto retry;
	}
	if (unlikely(credit)) { /* the key turned up while this evicted */
		count_credit_give_back(&f->count);
		if (credit & FLAT_EVICT_SMALL)
			flat_lru_small_give_back(f);
	}
	return ret;
}

/* The locked paths out of line, so that the lock-free ones stay small. */
static __attribute__((noinline)) int flat_update_locked_u32(struct flat *f, const void *key,
							     const void *value, uint64_t flags,
							     uint64_t hash, uint32_t hint, uint32_t credit)
{
	return flat_update_locked(f, key, value, flags, hash, hint, 4, NULL, credit);
}

static __attribute__((noinline)) int flat_update_locked_u64(struct flat *f, const void *key,
							     const void *value, uint64_t flags,
							     uint64_t hash, uint32_t hint, uint32_t credit)
{
	return flat_update_locked(f, key, value, flags, hash, hint, 8, NULL, credit);
}

static __attribute__((noinline)) int flat_update_locked_any(struct flat *f, const void *key,
							     const void *value, uint64_t flags,
							     uint64_t hash, uint32_t hint, uint32_t credit)
{
	return flat_update_locked(f, key, value, flags, hash, hint, f->map.key_size, NULL, credit);
}

/* The locked update of @kind's instance (a constant where inlined). */
static ALWAYS_INLINE int flat_update_locked_kind(struct flat *f, const void *key,
						 const void *value, uint64_t flags, uint64_t hash,
						 uint32_t hint, uint32_t credit, enum hash_kind kind)
{
	if (kind == HASH_U32)
		return flat_update_locked_u32(f, key, value, flags, hash, hint, credit);
	if (kind == HASH_U64)
		return flat_update_locked_u64(f, key, value, flags, hash, hint, credit);
	return flat_update_locked_any(f, key, value, flags, hash, hint, credit);
}

/* An insert into a full evicting map whose probe found the key absent:
 * a victim's room first, handed to the locked insert (the thread marked). */
static ALWAYS_INLINE int flat_update_evicting(struct flat *f, const void *key,
					      const void *value, uint64_t flags, uint64_t hash,
					      enum hash_kind kind)
{
	uint32_t credit = flat_lru_evict(f);

	TEST_HOOK(HOOK_LRU_EVICTED, f);
	return flat_update_locked_kind(f, key, value, flags, hash, FLAT_NONE, credit, kind);
}

/*
 * The update, for a key size and hash that are constants in the word-key
 * cases (flat_update_elem).  Keys of at most 8 bytes are probed without the
 * lock first: a full map's refusal (flat_probe_full) and an overwrite of a
 * word value (flat_store_lockfree) end there; the rest takes the lock,
 * with the thread marked (sync/reentry.h), as does an eviction.
 */
static ALWAYS_INLINE int flat_update_sized(struct bpfmap *map, const void *key,
					   const void *value, uint64_t flags, uint32_t ks,
					   enum hash_kind kind)
{
	struct flat *f = to_flat(map);
	uint64_t hash = flat_hash_kind(f, key, kind);
	uint32_t hint = FLAT_NONE;

	if (ks <= 8) {
		struct flat_place pl = flat_place_of(f, hash);
		uint32_t tag = pl.tag;
		uint64_t small = flat_small_key(key, ks);
		uint64_t mode = flags & ~BPFMAP_F_LOCK;
		bool evict = false;

		if (flat_probe_full(f, pl.home, tag, ks, small, mode != BPFMAP_EXIST,
				    &hint, &evict))
			return -E2BIG;
		/* The eviction and the insert it makes room for under one mark:
		 * a signal handler's insert between the two waited for ever in
		 * a 1-entry map for the room its own thread held. */
		if (unlikely(evict))
			return REENTRY_GUARDED(flat_update_evicting(f, key, value, flags, hash, kind));
		if (hint != FLAT_NONE && mode != BPFMAP_NOEXIST && map->value_size <= 8 &&
		    !map_has_lock(map)) {
			uint64_t w = map_value_word(map, value);

			if (likely(flat_store_lockfree(f, hint, tag, ks, small, w)))
				return 0;
		}
	}
	return REENTRY_GUARDED(flat_update_locked_kind(f, key, value, flags, hash, hint, 0, kind));
}

HASH_KIND_UPDATES(flat_update, flat_update_sized, struct bpfmap *, map, map->key_size,
		  to_flat(map)->hash_kind)

int flat_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags)
{
	return flat_update_kind(to_flat(map)->hash_kind, map, key, value, flags);
}

/* Part of a per-CPU value (core/percpu.c, the program view's update): always
 * under the home's lock (a part is not one word), every key size in one
 * instance. */
int flat_update_part(struct bpfmap *map, const void *key, const void *src, uint32_t len,
		     uint32_t off, uint32_t step, uint32_t n, uint64_t mode)
{
	struct flat *f = to_flat(map);
	struct value_part part = { .src = src, .len = len, .off = off, .step = step, .n = n };

	return REENTRY_GUARDED(flat_update_locked(f, key, src, mode, flat_hash(f, key), FLAT_NONE,
						  map->key_size, &part, 0));
}

int flat_take(struct flat *f, const void *key, void *value, bool lockf, bool keep)
{
	struct bpfmap *map = &f->map;
	uint32_t ks = map->key_size;
	uint64_t hash = flat_hash(f, key);
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t h = pl.home, pos, *busy;
	uint64_t small = ks <= 8 ? flat_small_key(key, ks) : 0;
	bool section = ks > 8, kick;
	uint32_t *lock = &f->homes[h].lock;

	if (value && !keep) /* the value returned must not miss a store before the delete */
		flat_stores_off(f);
retry:
	busy = NULL;
	kick = false;
	if (section)
		rcu_lock();
	seq_spin_lock_as(lock, keep);
	pos = flat_find(f, h, pl.tag, key, ks, small, false);
	if (pos != FLAT_NONE) {
		if (value && lockf)
			busy = value_copy_out_or_busy(map, value, flat_value_at(f, pos));
		else if (value)
			flat_copy_value_locked_out(f, pos, value, false);
		if (!busy && !keep)
			kick = flat_kill_locked(f, h, pos,
						flat_is_node(f, pos) ? flat_chain_prev(f, h, pos)
								     : FLAT_NONE,
						NULL);
	}
	seq_spin_unlock(lock);
	if (section)
		rcu_unlock();
	if (unlikely(busy)) {
		/* A program holds the value's lock: positions stay mapped
		 * while the map lives, so wait on the word outside the
		 * section, with the home unlocked, as updates do. */
		value_lock_wait_free(busy);
		goto retry;
	}
	if (kick)
		flat_kick(f);
	return pos != FLAT_NONE ? 0 : -ENOENT;
}

int flat_delete_elem(struct bpfmap *map, const void *key)
{
	return flat_take(to_flat(map), key, NULL, false, false);
}

int flat_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value,
				uint64_t flags)
{
	return flat_take(to_flat(map), key, value, flags & BPFMAP_F_LOCK, false);
}
