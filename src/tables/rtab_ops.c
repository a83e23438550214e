/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's per-key operations: program-view lookups and
 * copy-outs specialised per key size at creation, and the updates and
 * deletes, which lock one group of buckets (tables/rtab.h).
 */
#include <errno.h>

#include "hash/sized_hash.h"
#include "sync/seqcount.h"
#include "sync/store_switch.h"
#include "sync/store_window.h"
#include "tables/rtab.h"
#include "tables/value.h"
#include "util/shared_copy.h"

/* The hash of a key whose size and kind are constants of the caller;
 * sized: the common longer sizes with the hash inlined (hash/sized_hash.h). */
static ALWAYS_INLINE uint32_t rtab_hash_of(const struct rtab *r, const void *key,
					   uint32_t key_size, enum hash_kind kind, bool sized)
{
	if (sized)
		return (uint32_t)(hash_sized(key, key_size, &r->hp) >> 32);
	return rtab_hash(r, key, key_size, kind);
}

static ALWAYS_INLINE void *rtab_lookup_view(struct bpfmap *map, const void *key,
					    uint32_t key_size, enum hash_kind kind, bool sized,
					    void *(*slow)(struct bpfmap *, uint32_t, const void *))
{
	struct rtab *r = to_rtab(map);
	uint32_t hash = rtab_hash_of(r, key, key_size, kind, sized);
	char *e = rtab_find_hit(r, hash, key, key_size, kind);

	if (likely(e))
		return rtab_value(r, e);
	return slow(map, hash, key);
}

/* A program-view lookup that rtab_find_hit did not settle: a miss, or a
 * bucket being moved. */
static ALWAYS_INLINE void *rtab_lookup_slow(struct bpfmap *map, uint32_t hash, const void *key,
					    uint32_t key_size, enum hash_kind kind)
{
	struct rtab *r = to_rtab(map);
	char *e = rtab_find_sectioned(r, hash, key, key_size, kind);

	if (unlikely(e == RTAB_BUSY))
		return map_lookup_busy();
	return e ? rtab_value(r, e) : map_lookup_miss();
}

/*
 * A copy-out outside any read-side section (rtab.h, rtab_bare_find): its
 * answer, or RTAB_UNSURE.  Updates probe the same way (rtab_update_bare).
 */
#define RTAB_UNSURE 3

static ALWAYS_INLINE int rtab_copy_bare(struct rtab *r, uint32_t hash, const void *key,
					void *value, uint32_t key_size, enum hash_kind kind)
{
	struct rtab_bare b;
	char *e;

	e = rtab_bare_find(r, hash, key, key_size, kind, &b);
	if (!b.g)
		return RTAB_UNSURE;
	if (e) {
		shared_copy_out(value, rtab_value(r, e), r->map.value_size);
		TEST_HOOK(HOOK_RTAB_COPY, e);
	}
	if (!rtab_bare_valid(r, &b))
		return RTAB_UNSURE;
	if (!e)
		return -ENOENT;
	value_clear_lock(&r->map, value);
	return 0;
}

/* Under @key's bucket lock: its value copied to @value if not NULL (@lockf:
 * under the value's spin lock too), then the key deleted unless @keep.  0,
 * or -ENOENT.  With @keep, the copy-out that no stream of in-place writes
 * can hold off (SEQ_READ_PATIENCE): they all hold that lock, or store one word
 * at once. */
static int rtab_take(struct rtab *r, const void *key, void *value, bool lockf, bool keep);

/* The copy of rtab_copy_key that rtab_copy_bare did not settle, or that
 * F_LOCK asks for: in a section, the group's word unchanged around it,
 * else, after SEQ_READ_PATIENCE of lost rounds, the bucket's lock. */
static ALWAYS_INLINE int rtab_copy_sectioned(struct rtab *r, uint32_t hash, const void *key,
					     void *value, uint64_t flags, uint32_t key_size,
					     enum hash_kind kind)
{
	uint64_t patience = 0;
	int ret;

	rcu_lock();
	for (;;) {
		uint32_t *lock, seq;
		char *e = rtab_find_checked(r, hash, key, key_size, kind, &lock, &seq);

		/* A copy that failed its check and then finds the key gone
		 * answers -ENOENT, never the bytes it copied. */
		ret = -ENOENT;
		if (!e)
			break;
		ret = -EBUSY; /* instead of waiting on this thread (sync/reentry.h) */
		if (e == RTAB_BUSY)
			break;
		if (flags & BPFMAP_F_LOCK) {
			if (rtab_copy_value(r, e, value, true, false, true))
				ret = 0;
			break;
		}
		shared_copy_out(value, rtab_value(r, e), r->map.value_size);
		TEST_HOOK(HOOK_RTAB_COPY, e);
		if (likely(seq_spin_read_valid(lock, seq))) {
			value_clear_lock(&r->map, value);
			ret = 0;
			break;
		}
		if (reentry_busy())
			break;
		if (seq_read_give_up(&patience)) {
			ret = RTAB_UNSURE;
			break;
		}
		cpu_relax();
	}
	rcu_unlock();
	if (unlikely(ret == RTAB_UNSURE)) /* marked: flat_copy_locked says why */
		return REENTRY_GUARDED(rtab_take(r, key, value, false, true));
	return ret;
}

/* A consistent copy of the value: first without a section (rtab_copy_bare),
 * then with @slow, which the specialised copies keep out of line so that
 * the first saves no registers. */
static ALWAYS_INLINE int rtab_copy_key(struct rtab *r, const void *key, void *value,
				       uint64_t flags, uint32_t key_size, enum hash_kind kind,
				       bool sized,
				       int (*slow)(struct bpfmap *, uint32_t, const void *, void *))
{
	uint32_t hash = rtab_hash_of(r, key, key_size, kind, sized);
	int ret;

	if (!(flags & BPFMAP_F_LOCK)) {
		ret = rtab_copy_bare(r, hash, key, value, key_size, kind);
		if (likely(ret != RTAB_UNSURE))
			return ret;
	}
	if (slow)
		return slow(&r->map, hash, key, value);
	return rtab_copy_sectioned(r, hash, key, value, flags, key_size, kind);
}

#define RTAB_SPECIALISED(name, key_size, kind, sized)                                        \
	static __attribute__((noinline, cold)) void *                                         \
	rtab_lookup_slow_##name(struct bpfmap *map, uint32_t hash, const void *key)           \
	{                                                                                     \
		return rtab_lookup_slow(map, hash, key, key_size, kind);                      \
	}                                                                                     \
	static void *rtab_lookup_##name(struct bpfmap *map, const void *key)                  \
	{                                                                                     \
		return rtab_lookup_view(map, key, key_size, kind, sized,                      \
					rtab_lookup_slow_##name);                             \
	}                                                                                     \
	static __attribute__((noinline, cold)) int                                            \
	rtab_copy_slow_##name(struct bpfmap *map, uint32_t hash, const void *key, void *value) \
	{                                                                                     \
		return rtab_copy_sectioned(to_rtab(map), hash, key, value, 0, key_size, kind); \
	}                                                                                     \
	static int rtab_copy_##name(struct bpfmap *map, const void *key, void *value)         \
	{                                                                                     \
		/* Its retries read the key again (map_value_overlaps_key). */              \
		if (unlikely(map_value_overlaps_key(map, key, value)))                        \
			return map_copy_key_apart(map, key, value);                           \
		return map_result(rtab_copy_key(to_rtab(map), key, value, 0, key_size, kind,  \
						sized, rtab_copy_slow_##name));               \
	}
RTAB_SPECIALISED(any, map->key_size, RTAB_GENERIC, false)
RTAB_SPECIALISED(u32, 4, HASH_U32, false)
RTAB_SPECIALISED(u64, 8, HASH_U64, false)
RTAB_SPECIALISED(k16, 16, HASH_WORDS, true)
RTAB_SPECIALISED(k32, 32, HASH_WORDS, true)
RTAB_SPECIALISED(k64, 64, HASH_NH, true)
RTAB_SPECIALISED(k128, 128, HASH_NH, true)
RTAB_SPECIALISED(k256, 256, HASH_NH, true)

static unsigned int rtab_specialised_index(enum hash_kind kind, uint32_t key_size)
{
	if (kind == HASH_U32)
		return 1;
	if (kind == HASH_U64)
		return 2;
	if (!hash_sized_covers(kind))
		return 0;
	switch (key_size) {
	case 16: return 3;
	case 32: return 4;
	case 64: return 5;
	case 128: return 6;
	case 256: return 7;
	default: return 0;
	}
}

map_lookup_fn rtab_lookup_for(enum hash_kind kind, uint32_t key_size)
{
	static const map_lookup_fn fns[] = {
		rtab_lookup_any, rtab_lookup_u32, rtab_lookup_u64, rtab_lookup_k16,
		rtab_lookup_k32, rtab_lookup_k64, rtab_lookup_k128, rtab_lookup_k256,
	};

	return fns[rtab_specialised_index(kind, key_size)];
}

map_copy_fn rtab_copy_for(enum hash_kind kind, uint32_t key_size)
{
	static const map_copy_fn fns[] = {
		rtab_copy_any, rtab_copy_u32, rtab_copy_u64, rtab_copy_k16,
		rtab_copy_k32, rtab_copy_k64, rtab_copy_k128, rtab_copy_k256,
	};

	return fns[rtab_specialised_index(kind, key_size)];
}

int rtab_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags)
{
	return rtab_copy_key(to_rtab(map), key, value, flags, map->key_size, RTAB_GENERIC, false,
			     NULL);
}

/* An overwrite found the value's spin lock held and unlocked the bucket
 * (rtab_store_value_locked): the update waits for that lock outside its
 * read-side section and starts again. */
#define RTAB_VALUE_BUSY 4

/* A value_word map's value: one atomic store, so readers never see it torn
 * and overwrites never mix. */
static ALWAYS_INLINE void rtab_store_word(struct rtab *r, char *e, const void *value)
{
	__atomic_store_n((uint64_t *)(void *)rtab_value(r, e), map_value_word(&r->map, value),
			 __ATOMIC_RELEASE);
}

/*
 * A present key's value with a spin lock, in place (its bucket locked):
 * under that lock too, with or without F_LOCK, so that programs and F_LOCK
 * copy-outs, which read under it alone, never see half a store; 0, or
 * RTAB_VALUE_BUSY with the bucket unlocked and *@busy the lock's word.
 * The kernel stores an F_LOCK update under the value's lock alone, and one
 * without F_LOCK under neither: both tear its plain copy-outs.  Out of
 * line: rare, and the updates it would be inlined into are the hot path.
 */
static __attribute__((noinline, cold)) int rtab_store_value_locked(struct rtab *r,
									 struct rtab_group *g,
									 char *e, const void *value,
									 uint32_t **busy)
{
	char *v = rtab_value(r, e);
	struct bpfmap_spin_lock *l = value_lock(&r->map, v);

	/* Only if free (sync/spin_lock.h): a program may hold it for long,
	 * and waiting here would stall the whole bucket.  The caller waits
	 * outside its section (the arena stays mapped). */
	if (!value_lock_try(&l->val)) {
		rtab_unlock_bucket(g);
		*busy = &l->val;
		return RTAB_VALUE_BUSY;
	}
	value_store(&r->map, v, value);
	value_lock_drop(&l->val);
	return 0;
}

/* An insert found the element arena exhausted for now (what waits in it
 * for a grace period comes back once that ends). */
#define RTAB_RETRY 1

/* Where a lock-free scan found the key: its bucket's first group and its
 * slot, which the locked update checks instead of scanning again. */
struct rtab_hint {
	struct rtab_group *first;
	struct rtab_slot s;
	uint32_t link;
};

/* The update under the bucket's lock, in the caller's read-side section;
 * inline, so that a key of a constant size is copied without a call. */
static ALWAYS_INLINE int rtab_update_locked(struct rtab *r, uint32_t hash, const void *key,
					    const void *value, uint64_t mode,
					    const struct rtab_hint *hint, uint32_t key_size,
					    uint32_t **busy)
{
	struct rtab_group *g = rtab_lock_bucket(r, hash, NULL, false);
	struct rtab_slot s;
	uint32_t ticket, idx;
	char *e;
	int ret;

	/* The slot the scan found still names the same element (reused only
	 * after a grace period, so still the key's): the key is there. */
	if ((hint && hint->first == g &&
	     __atomic_load_n(&hint->s.g->link[hint->s.i], __ATOMIC_RELAXED) == hint->link &&
	     (s = hint->s, true)) ||
	    rtab_find_locked(r, g, hash, key, &s)) {
		ret = -EEXIST;
		if (mode != BPFMAP_NOEXIST) {
			e = rtab_elem(r, s.g->link[s.i]);
			ret = 0;
			if (unlikely(map_has_lock(&r->map))) {
				ret = rtab_store_value_locked(r, g, e, value, busy);
				if (ret)
					return ret; /* the bucket is unlocked */
			} else if (r->value_word) {
				/* As the lock-free overwrites store: one of them
				 * landing between this one's bytes would leave a mix
				 * of the two values. */
				rtab_store_word(r, e, value);
			} else {
				value_store(&r->map, rtab_value(r, e), value);
			}
		}
		goto unlock;
	}
	ret = -ENOENT;
	if (mode == BPFMAP_EXIST)
		goto unlock;
	ticket = count_insert_begin(&r->count);
	ret = r->full_err;
	if (ticket == COUNT_FULL)
		goto unlock;
	idx = rtab_elem_alloc(r);
	if (likely(idx != RTAB_NONE)) {
		e = rtab_elem(r, idx);
		memcpy(e, key, key_size);
		if (map_has_lock(&r->map))
			memset(rtab_value(r, e), 0, r->map.value_size);
		value_store(&r->map, rtab_value(r, e), value);
		if (likely(rtab_add_locked(r, g, hash, idx, NULL))) {
			bool crowded = g->next != RTAB_NONE;

			count_insert_end(&r->count, ticket, true);
			rtab_unlock_bucket(g);
			rtab_resize_check(r, crowded);
			return 0;
		}
		/* No overflow group: groups are reused at once, so none comes
		 * back with a grace period, and packed chains need a third of
		 * the arena at most (rtab_remove_locked).  Never wait for one. */
		rtab_elem_unused(r, idx);
		ret = -ENOMEM;
	} else {
		ret = RTAB_RETRY;
	}
	count_insert_end(&r->count, ticket, false);
unlock:
	rtab_unlock_bucket(g);
	return ret;
}

/*
 * A lookup-and-delete returns the value it removes, so it must not miss a
 * lock-free store ordered before it: such a store may land after the delete
 * copied the value, since the writer found the element just before.  The
 * first lookup-and-delete on a map turns lock-free stores off for good and
 * waits for those in flight: they decide and store in one store window
 * (rtab_update_bare), or in ThreadSanitizer builds in one read-side section,
 * which a grace period covers.  The map stores under the bucket lock from
 * then on.
 */
void rtab_stop_lockfree_stores(struct rtab *r)
{
	if (!stores_stop_begin(&r->lockfree_store))
		return;
	store_windows_wait(store_window_owner(&r->map)); /* rtab_update_bare's stores */
	if (!RTAB_BARE_PROBES) { /* rtab_update_lockfree's, in sections */
		if (!rcu_may_wait())
			return; /* inside one: they stay unordered */
		rcu_synchronize();
	}
	stores_stop_end(&r->lockfree_store);
}

/*
 * The answers one lock-free scan can give linearizably, as the other
 * tables give them: -EEXIST (NOEXIST on a key seen present), -ENOENT
 * (EXIST on a key seen absent) and -E2BIG (a key absent while the count is
 * full with nothing in flight, both within one unchanged even lock word);
 * and the overwrite of a present key's one-word value, as one atomic store
 * (copy-outs read the word at once, so they see it old or new; a delete
 * after the scan orders the store just before it; the element is reused
 * only after this read-side section).  RTAB_TAKE_LOCK for everything else.
 * The path of ThreadSanitizer builds, which have no bare probes (rtab.h).
 */
#define RTAB_TAKE_LOCK 2

static ALWAYS_INLINE int rtab_update_lockfree(struct rtab *r, uint32_t hash, const void *key,
						const void *value, uint64_t mode, uint32_t key_size,
						enum hash_kind kind, struct rtab_hint *hint)
{
	struct rtab_table *t = rtab_table_of(r);
	struct rtab_group *g = &t->groups[rtab_bucket(t, hash)];
	uint32_t seq = seq_spin_read_begin(&g->lock);
	char *e;

	if ((seq & 1) || rtab_load(&g->next) == RTAB_MOVED)
		return RTAB_TAKE_LOCK;
	e = rtab_scan_at(r, g, hash, key, key_size, kind, &hint->s);
	if (e) {
		if (mode == BPFMAP_NOEXIST)
			return -EEXIST;
		if (r->value_word && stores_on(&r->lockfree_store)) {
			TEST_HOOK(HOOK_RTAB_STORE, e);
			rtab_store_word(r, e, value);
			return 0;
		}
		hint->first = g;
		hint->link = rtab_index_of(r, e);
		return RTAB_TAKE_LOCK;
	}
	if (mode == BPFMAP_EXIST)
		return seq_spin_read_valid(&g->lock, seq) ? -ENOENT : RTAB_TAKE_LOCK;
	if (count_full_quiescent(&r->count) && seq_spin_read_valid(&g->lock, seq))
		return r->full_err;
	return RTAB_TAKE_LOCK;
}

/*
 * The same answers outside any read-side section, for a probe that may read
 * a table that is no longer the map's (rtab_bare_find): each counts only
 * if the bucket's lock word and the map's resize generation did not move
 * (rtab_bare_valid), and the store goes in a store window
 * (sync/store_window.h) opened before that check: an element is reused
 * only after its grace period and the windows open then (rtab_release), so
 * the element the check vouched for is the key's until the store lands.  A
 * delete after the check orders the store just before it, as above.
 * RTAB_UNSURE for everything else, which the locked path decides.
 */
static ALWAYS_INLINE int rtab_update_bare(struct rtab *r, uint32_t hash, const void *key,
					  const void *value, uint64_t mode, uint32_t key_size,
					  enum hash_kind kind)
{
	struct store_window *win;
	struct rtab_bare b;
	bool done = false;
	char *e;

	e = rtab_bare_find(r, hash, key, key_size, kind, &b);
	if (!b.g)
		return RTAB_UNSURE;
	if (!e) {
		if (mode != BPFMAP_EXIST && !count_full_quiescent(&r->count))
			return RTAB_UNSURE;
		if (!rtab_bare_valid(r, &b))
			return RTAB_UNSURE;
		return mode == BPFMAP_EXIST ? -ENOENT : r->full_err;
	}
	if (mode == BPFMAP_NOEXIST)
		return rtab_bare_valid(r, &b) ? -EEXIST : RTAB_UNSURE;
	if (!r->value_word || !stores_on(&r->lockfree_store))
		return RTAB_UNSURE;
	/* registered by rtab_update_slow_sized */
	win = store_window_enter(false, store_window_owner(&r->map));
	if (unlikely(!win))
		return RTAB_UNSURE;
	if (likely(__atomic_load_n(&r->lockfree_store, STORE_WINDOW_ORDER) == STORES_ON) &&
	    likely(rtab_bare_valid(r, &b))) {
		TEST_HOOK(HOOK_RTAB_STORE, e);
		rtab_store_word(r, e, value);
		done = true;
	}
	store_window_leave(win);
	return done ? 0 : RTAB_UNSURE;
}

/* The hash of a key, its kind read from the map (the paths that do not
 * specialise). */
static ALWAYS_INLINE uint32_t rtab_hash_inline(struct rtab *r, const void *key)
{
	switch (r->hash_kind) {
	case HASH_U32:
		return rtab_hash(r, key, 4, HASH_U32);
	case HASH_U64:
		return rtab_hash(r, key, 8, HASH_U64);
	default:
		return rtab_hash(r, key, r->map.key_size, RTAB_GENERIC);
	}
}

/* What the bare probe left undecided, in a read-side section and then
 * under the lock; @kind's compare and key copy inline. */
static ALWAYS_INLINE int rtab_update_slow_sized(struct rtab *r, uint32_t hash, const void *key,
						const void *value, uint64_t flags,
						uint32_t key_size, enum hash_kind kind)
{
	uint64_t mode = flags & (BPFMAP_NOEXIST | BPFMAP_EXIST);
	bool lockf = flags & BPFMAP_F_LOCK;
	struct rtab_hint hint = { NULL, { NULL, 0 }, RTAB_NONE };
	uint32_t *busy = NULL;
	int ret;

	if (r->value_word)
		store_window_ensure(); /* lock-free from the next one on */
	rcu_lock();
	/* After a bare probe, whatever it could not decide goes to the lock. */
	ret = lockf || RTAB_BARE_PROBES
		      ? RTAB_TAKE_LOCK
		      : rtab_update_lockfree(r, hash, key, value, mode, key_size, kind, &hint);
	if (ret == RTAB_TAKE_LOCK)
		ret = rtab_update_locked(r, hash, key, value, mode, hint.first ? &hint : NULL,
					 key_size, &busy);
	rcu_unlock();
	/* Every free element waits for its grace period: wait for them, where
	 * waiting is allowed, for as long as it takes.  Once was not enough:
	 * another thread's inserts may take what the wait gave back, and the
	 * count (at most max_entries) proves that room exists.  An overwrite
	 * that waited for its value's spin lock starts again too. */
	while (unlikely(ret == RTAB_RETRY || ret == RTAB_VALUE_BUSY)) {
		if (ret == RTAB_RETRY) {
			/* A chunk another thread is giving back holds free
			 * slots, room again in a system call's time: waiting
			 * for it needs no grace period, so sections wait too
			 * (else -ENOMEM with the map far from full). */
			if (!slot_arena_wait_given(&r->elems)) {
				if (!rcu_may_wait())
					return -ENOMEM;
				rtab_reclaim_now(r);
			}
		} else {
			value_lock_wait_free(busy);
		}
		rcu_lock();
		ret = rtab_update_locked(r, hash, key, value, mode, NULL, key_size, &busy);
		rcu_unlock();
	}
	return ret;
}

/* Out of line, per kind, so that the bare probe's path (full-update
 * -E2BIG answers, word overwrites) keeps a small frame: the section, the
 * hint and the retry loop live here.  (Its one call left, the memcpy of a
 * value shorter than 8 bytes, keeps some frame; a call-free
 * map_value_word() removed it but slowed HASH's updates, whose code it
 * moved: c54f4b2's message.) */
#define RTAB_UPDATE_SLOW(name, ks, kind)                                                           \
	static __attribute__((noinline)) int rtab_update_slow_##name(                              \
		struct rtab *r, uint32_t hash, const void *key, const void *value, uint64_t flags) \
	{                                                                                          \
		return rtab_update_slow_sized(r, hash, key, value, flags, ks, kind);               \
	}
RTAB_UPDATE_SLOW(u32, 4, HASH_U32)
RTAB_UPDATE_SLOW(u64, 8, HASH_U64)
RTAB_UPDATE_SLOW(any, r->map.key_size, RTAB_GENERIC)

/* An update with the hash, compare and lock-free try of @kind inline. */
static ALWAYS_INLINE int rtab_update_sized(struct bpfmap *map, const void *key,
					   const void *value, uint64_t flags, uint32_t key_size,
					   enum hash_kind kind)
{
	struct rtab *r = to_rtab(map);
	uint32_t hash = rtab_hash(r, key, key_size, kind);
	int ret = flags & BPFMAP_F_LOCK
			  ? RTAB_UNSURE
			  : rtab_update_bare(r, hash, key, value,
					     flags & (BPFMAP_NOEXIST | BPFMAP_EXIST), key_size, kind);

	if (ret != RTAB_UNSURE)
		return ret;
	/* The locked path, with the thread marked (sync/reentry.h). */
	if (kind == HASH_U32)
		return REENTRY_GUARDED(rtab_update_slow_u32(r, hash, key, value, flags));
	if (kind == HASH_U64)
		return REENTRY_GUARDED(rtab_update_slow_u64(r, hash, key, value, flags));
	return REENTRY_GUARDED(rtab_update_slow_any(r, hash, key, value, flags));
}

HASH_KIND_UPDATES(rtab_update, rtab_update_sized, struct bpfmap *, map, map->key_size,
		  RTAB_GENERIC)

int rtab_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags)
{
	return rtab_update_kind(to_rtab(map)->hash_kind, map, key, value, flags);
}

static int rtab_take(struct rtab *r, const void *key, void *value, bool lockf, bool keep)
{
	uint32_t hash = rtab_hash_inline(r, key);
	struct rtab_group *g;
	struct rtab_slot s;
	uint32_t idx;

retry:
	idx = RTAB_NONE;
	rcu_lock();
	g = rtab_lock_bucket(r, hash, NULL, keep);
	if (rtab_find_locked(r, g, hash, key, &s)) {
		idx = s.g->link[s.i];
		char *e = rtab_elem(r, idx);
		uint32_t *busy = NULL;

		if (value && lockf)
			busy = value_copy_out_or_busy(&r->map, value, rtab_value(r, e));
		else if (value)
			(void)rtab_copy_value(r, e, value, false, true, false);
		if (unlikely(busy)) {
			/* A program holds the value's lock: the arena stays
			 * mapped while the map lives, so wait on the word
			 * outside the section, the bucket unlocked. */
			rtab_unlock_bucket(g);
			rcu_unlock();
			value_lock_wait_free(busy);
			goto retry;
		}
		if (!keep)
			rtab_delete_locked(r, g, s);
	}
	rtab_unlock_bucket(g);
	if (keep) {
		rcu_unlock();
		return idx != RTAB_NONE ? 0 : -ENOENT;
	}
	if (idx != RTAB_NONE) {
		rtab_elem_retire(r, idx);
		rtab_resize_check(r, false);
	}
	rcu_unlock();
	rtab_retire_settle(r);
	return idx != RTAB_NONE ? 0 : -ENOENT;
}

int rtab_delete_elem(struct bpfmap *map, const void *key)
{
	return rtab_take(to_rtab(map), key, NULL, false, false);
}

int rtab_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value,
				uint64_t flags)
{
	rtab_stop_lockfree_stores(to_rtab(map));
	return rtab_take(to_rtab(map), key, value, flags & BPFMAP_F_LOCK, false);
}
