/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH, preallocated: creation, the per-key operations, and the
 * reclamation of deleted slots.  Design notes in maps/flat.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/spin_lock.h"
#include "hash/word_hash.h"
#include "maps/flat.h"
#include "util/shared_copy.h"

/* The exported (out-of-line) liburcu call: core/rcu.h maps the name to the
 * inline one, which UBSan builds must not inline here (see core/rcu.h). */
#undef urcu_bp_read_ongoing
int urcu_bp_read_ongoing(void);

void flat_lock_slow(uint32_t *word)
{
	unsigned int spins = 0;

	for (;;) {
		while (__atomic_load_n(word, __ATOMIC_RELAXED) & FLAT_LOCK_BIT) {
			if (++spins < 128)
				cpu_relax();
			else
				sched_yield();
		}
		if (!(__atomic_fetch_or(word, FLAT_LOCK_BIT, __ATOMIC_ACQUIRE) & FLAT_LOCK_BIT))
			return;
	}
}

/* Replace tag byte i of bucket b's tag word (CAS: other homes' writers change
 * other bytes of it at the same time). */
static void flat_set_tag(struct flat_bucket *bk, uint32_t i, uint32_t tag)
{
	uint64_t old = __atomic_load_n(&bk->tags, __ATOMIC_RELAXED), new;
	uint64_t mask = 0xffULL << (8 * i);

	do {
		new = (old & ~mask) | ((uint64_t)tag << (8 * i));
	} while (!__atomic_compare_exchange_n(&bk->tags, &old, new, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* ---- values ------------------------------------------------------------- */

void flat_copy_value_locked_out(const struct flat *f, uint32_t pos, void *dst, bool with_lock)
{
	const struct bpfmap *map = &f->map;
	char *src = flat_value_at(f, pos);

	if (with_lock) {
		struct bpfmap_spin_lock *l = (void *)(src + map->lock_off);

		spin_lock_word(&l->val);
		shared_copy_out(dst, src, map->value_size);
		spin_unlock_word(&l->val);
	} else {
		shared_copy_out(dst, src, map->value_size);
	}
	if (map_has_lock(map))
		memset((char *)dst + map->lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

/* Store @value in the slot's value, never touching the spin lock word. */
static void flat_store_value(const struct flat *f, uint32_t pos, const void *value)
{
	const struct bpfmap *map = &f->map;
	char *dst = flat_value_at(f, pos);

	if (map_has_lock(map)) {
		uint32_t tail = (uint32_t)map->lock_off + sizeof(struct bpfmap_spin_lock);

		shared_copy_in(dst, 0, value, (size_t)map->lock_off);
		shared_copy_in(dst, tail, (const char *)value + tail, map->value_size - tail);
	} else {
		shared_copy_in(dst, 0, value, map->value_size);
	}
}

/* Overwrite a live element's value in place; home lock held.  The value's
 * spin lock (if any) is taken before the seq, so no writer ever waits while
 * it counts as busy on the bucket. */
static ALWAYS_INLINE void flat_write_value(struct flat *f, uint32_t pos, const void *value)
{
	const struct bpfmap *map = &f->map;
	struct bpfmap_spin_lock *l = NULL;
	uint32_t b = pos / FLAT_SLOTS;

	if (map->value_size <= 8 && !map_has_lock(map)) {
		/* One atomic store cannot tear: no seq needed (copy-outs load
		 * the word at once too). */
		uint64_t w = 0;

		memcpy(&w, value, map->value_size);
		__atomic_store_n((uint64_t *)(void *)flat_value_at(f, pos), w, __ATOMIC_RELEASE);
		return;
	}
	if (map_has_lock(map)) {
		l = (void *)(flat_value_at(f, pos) + map->lock_off);
		spin_lock_word(&l->val);
	}
	flat_seq_enter(&f->buckets[b].seq);
	flat_store_value(f, pos, value);
	flat_seq_leave(&f->buckets[b].seq);
	if (l)
		spin_unlock_word(&l->val);
}

/* Fill claimed (BUSY) slot i of bucket b and publish it with @tag. */
static void flat_fill_slot(struct flat *f, uint32_t b, uint32_t i, uint32_t tag,
			   const void *key, uint64_t small, const void *value)
{
	const struct bpfmap *map = &f->map;
	struct flat_bucket *bk = &f->buckets[b];
	uint32_t pos = b * FLAT_SLOTS + i;
	char *s = flat_key_at(f, pos);
	uint64_t *kw = (uint64_t *)(void *)s;

	flat_seq_enter(&bk->seq);
	if (map->key_size <= 4) {
		__atomic_store_n((uint32_t *)(void *)s, (uint32_t)small, __ATOMIC_RELEASE);
	} else if (map->key_size <= 8) {
		__atomic_store_n(kw, small, __ATOMIC_RELEASE);
	} else {
		/* Whole words, the tail zero-padded: compares read words. */
		uint32_t ks = map->key_size, i8 = 0;

		for (; i8 + 8 <= ks; i8 += 8) {
			uint64_t w;

			memcpy(&w, (const char *)key + i8, 8);
			__atomic_store_n(kw++, w, __ATOMIC_RELEASE);
		}
		if (i8 < ks) {
			uint64_t w = 0;

			memcpy(&w, (const char *)key + i8, ks - i8);
			__atomic_store_n(kw, w, __ATOMIC_RELEASE);
		}
	}
	flat_store_value(f, pos, value);
	if (map_has_lock(map))
		__atomic_store_n((uint32_t *)(void *)(flat_value_at(f, pos) + map->lock_off), 0,
				 __ATOMIC_RELEASE);
	flat_set_tag(bk, i, tag);
	flat_seq_leave(&bk->seq);
}

/* ---- reclamation -------------------------------------------------------- */

/* Turn every byte equal to @from in bucket b's tags into @to; returns how many. */
static uint32_t flat_retag_all(struct flat_bucket *bk, uint32_t from, uint32_t to)
{
	uint64_t old = __atomic_load_n(&bk->tags, __ATOMIC_RELAXED), new, m;

	do {
		m = flat_match(old, from * FLAT_BYTES_LO);
		if (!m)
			return 0;
		/* 0x80 -> 0xff per matching byte, then swap the values there. */
		uint64_t bytes = (m >> 7) * 0xff;

		new = (old & ~bytes) | ((to * FLAT_BYTES_LO) & bytes);
	} while (!__atomic_compare_exchange_n(&bk->tags, &old, new, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return (uint32_t)__builtin_popcountll(m);
}

/* rq owner: WAIT -> QUEUED in every bucket flagged in wait_bits.  Returns the
 * number of slots moved. */
static uint32_t flat_queue_waiting(struct flat *f)
{
	uint32_t moved = 0;

	for (uint32_t w = 0; w < f->bits_words; w++) {
		uint64_t bits;

		if (!__atomic_load_n(&f->wait_bits[w], __ATOMIC_RELAXED))
			continue;
		bits = __atomic_exchange_n(&f->wait_bits[w], 0, __ATOMIC_ACQ_REL);
		while (bits) {
			uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);
			uint32_t n = flat_retag_all(&f->buckets[b], FLAT_WAIT, FLAT_QUEUED);

			if (n) {
				__atomic_fetch_or(&f->queued_bits[w], 1ULL << (b % 64),
						  __ATOMIC_RELAXED);
				moved += n;
			}
			bits &= bits - 1;
		}
	}
	return moved;
}

/* rq owner, after a grace period: QUEUED -> EMPTY.  Returns the number freed. */
static uint32_t flat_free_queued(struct flat *f)
{
	uint32_t freed = 0;

	for (uint32_t w = 0; w < f->bits_words; w++) {
		uint64_t bits = __atomic_exchange_n(&f->queued_bits[w], 0, __ATOMIC_RELAXED);

		while (bits) {
			uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);

			freed += flat_retag_all(&f->buckets[b], FLAT_QUEUED, FLAT_EMPTY);
			bits &= bits - 1;
		}
	}
	return freed;
}

static void flat_reclaim_cb(struct rcu_head *head)
{
	struct flat *f = container_of(head, struct flat, rcu);
	uint32_t freed, dead;

	rcu_deferred_enter();
	freed = flat_free_queued(f);
	dead = __atomic_sub_fetch(&f->dead, freed, __ATOMIC_RELAXED);
	if (dead >= f->kick_at && flat_queue_waiting(f)) {
		/* Still owner (rq stays 1): go round again.  f may be touched
		 * by the next callback from here on, not by this one. */
		rcu_defer(&f->rcu, flat_reclaim_cb);
		rcu_deferred_exit();
		return;
	}
	rcu_deferred_exit();
	/* The last access to f: bpfmap_free waits for rq == 0. */
	__atomic_store_n(&f->rq, 0, __ATOMIC_RELEASE);
}

/*
 * Reclaim every deleted slot now, from an inserter outside any read-side
 * section that found no EMPTY slot.  One thread at a time; the others wait
 * for it and retry (its grace period served them too).
 */
static void flat_reclaim_sync(struct flat *f)
{
	uint32_t idle = 0, n = 0, freed = 0;

	if (!__atomic_compare_exchange_n(&f->sync_busy, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		while (__atomic_load_n(&f->sync_busy, __ATOMIC_ACQUIRE))
			sched_yield();
		return;
	}
	/* Take WAIT and QUEUED slots (the latter from the callback, which then
	 * finds fewer to free); sync_bits marks their buckets. */
	for (uint32_t w = 0; w < f->bits_words; w++) {
		uint64_t bits = __atomic_exchange_n(&f->wait_bits[w], 0, __ATOMIC_ACQ_REL) |
				__atomic_exchange_n(&f->queued_bits[w], 0, __ATOMIC_ACQ_REL);

		for (; bits; bits &= bits - 1) {
			uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);
			uint32_t c = flat_retag_all(&f->buckets[b], FLAT_WAIT, FLAT_SYNCQ) +
				     flat_retag_all(&f->buckets[b], FLAT_QUEUED, FLAT_SYNCQ);

			if (c) {
				f->sync_bits[w] |= 1ULL << (b % 64);
				n += c;
			}
		}
	}
	if (n) {
		urcu_bp_synchronize_rcu();
		rcu_deferred_enter(); /* TSan: after the readers it waited for */
		for (uint32_t w = 0; w < f->bits_words; w++) {
			uint64_t bits = f->sync_bits[w];

			f->sync_bits[w] = 0;
			for (; bits; bits &= bits - 1) {
				uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);

				freed += flat_retag_all(&f->buckets[b], FLAT_SYNCQ, FLAT_EMPTY);
			}
		}
		/* What it frees, not what it took: an insert inside a read-side
		 * section may have reused some meanwhile (flat_reuse_dead). */
		__atomic_fetch_sub(&f->dead, freed, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&f->sync_busy, 0, __ATOMIC_RELEASE);
}

void flat_kick(struct flat *f)
{
	uint32_t idle = 0;

	if (__atomic_load_n(&f->rq, __ATOMIC_RELAXED) ||
	    !__atomic_compare_exchange_n(&f->rq, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (flat_queue_waiting(f))
		rcu_defer(&f->rcu, flat_reclaim_cb);
	else
		__atomic_store_n(&f->rq, 0, __ATOMIC_RELEASE);
}

/* The home of the key in live slot pos.  Keys of at most 8 bytes are read in
 * one atomic load; longer ones need the caller in a read-side section. */
static uint32_t flat_home_of(const struct flat *f, uint32_t pos)
{
	uint32_t ks = f->map.key_size;

	if (ks <= 8) {
		uint64_t w = flat_small_at(f, pos, ks); /* little-endian: the key's bytes */

		return flat_home(f, flat_hash(f, &w));
	}
	return flat_home(f, f->hash(flat_key_at(f, pos), ks, f->seed));
}

/* Home h (locked) lost its element at distance d: if that was its farthest,
 * lower max_dist to the farthest left, so lookups do not keep scanning
 * buckets a burst of inserts once reached. */
static void flat_shrink_dist(struct flat *f, uint32_t h, uint32_t d)
{
	struct flat_bucket *bk = f->buckets;
	uint32_t lw = __atomic_load_n(&f->locks[h], __ATOMIC_RELAXED);
	uint32_t md = lw >> FLAT_DIST_SHIFT;

	if (d == 0 || d != md) /* FLAT_DIST_ANY stays: the scan would be long */
		return;
	for (; md; md--) { /* bucket h + d too: it may hold more of h's keys */
		uint32_t b = h + md >= f->n_buckets ? h + md - f->n_buckets : h + md;
		uint64_t live = flat_live(__atomic_load_n(&bk[b].tags, __ATOMIC_ACQUIRE));
		bool found = false;

		for (; live && !found; live &= live - 1)
			found = flat_home_of(f, b * FLAT_SLOTS + flat_first(live)) == h;
		if (found)
			break;
	}
	__atomic_store_n(&f->locks[h], (md << FLAT_DIST_SHIFT) | FLAT_LOCK_BIT, __ATOMIC_RELEASE);
}

bool flat_kill_locked(struct flat *f, uint32_t h, uint32_t b, uint32_t i)
{
	flat_set_tag(&f->buckets[b], i, FLAT_WAIT);
	flat_shrink_dist(f, h, b >= h ? b - h : b + f->n_buckets - h);
	__atomic_fetch_sub(&f->count, 1, __ATOMIC_RELAXED);
	__atomic_fetch_or(&f->wait_bits[b / 64], 1ULL << (b % 64), __ATOMIC_RELEASE);
	return __atomic_add_fetch(&f->dead, 1, __ATOMIC_RELAXED) >= f->kick_at &&
	       !__atomic_load_n(&f->rq, __ATOMIC_RELAXED);
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

/* Home h (locked) gets a key at distance d: raise its max displacement. */
static void flat_raise_dist_locked(struct flat *f, uint32_t h, uint32_t d)
{
	uint32_t cur = __atomic_load_n(&f->locks[h], __ATOMIC_RELAXED) >> FLAT_DIST_SHIFT;

	if (d > cur && cur != FLAT_DIST_ANY)
		flat_set_dist_locked(&f->locks[h], d >= FLAT_DIST_ANY ? FLAT_DIST_ANY : d);
}

/*
 * The same key deleted and not reclaimed yet (WAIT) within home h's reach
 * (locked): take its slot back, as an update in place of that slot.  A reader
 * still holding the old slot sees the key's value change in place, as for any
 * update, and the value's spin lock keeps its state.  Without this, a key
 * deleted and inserted over and over would leave a trail of slots awaiting a
 * grace period around its home.  Returns 0, or -ENOENT.
 */
static int flat_revive_locked(struct flat *f, uint32_t h, uint32_t tag, const void *key,
			      uint64_t small, const void *value)
{
	struct flat_bucket *bk = f->buckets;
	uint32_t ks = f->map.key_size, b = h;
	uint32_t md = flat_dist_of(f, __atomic_load_n(&f->locks[h], __ATOMIC_RELAXED));

	if (!__atomic_load_n(&f->dead, __ATOMIC_RELAXED))
		return -ENOENT;
	for (uint32_t d = 0; d <= md; d++, b = flat_next_bucket(f, b)) {
		uint64_t m = flat_match(__atomic_load_n(&bk[b].tags, __ATOMIC_ACQUIRE),
					FLAT_WAIT * FLAT_BYTES_LO);

		for (; m; m &= m - 1) {
			uint32_t i = flat_first(m), pos = b * FLAT_SLOTS + i;

			if (!flat_key_eq(f, pos, key, ks, small) ||
			    !flat_cas_tag(&bk[b], i, FLAT_WAIT, FLAT_BUSY))
				continue;
			if (!flat_key_eq(f, pos, key, ks, small)) {
				/* Reclaimed and reused meanwhile: not ours. */
				flat_set_tag(&bk[b], i, FLAT_WAIT);
				__atomic_fetch_or(&f->wait_bits[b / 64], 1ULL << (b % 64),
						  __ATOMIC_RELEASE);
				continue;
			}
			__atomic_fetch_sub(&f->dead, 1, __ATOMIC_RELAXED);
			flat_write_value(f, pos, value);
			flat_set_tag(&bk[b], i, tag);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * An insert inside a read-side section found no EMPTY slot: every spare slot
 * awaits readers, the caller among them, so waiting for them cannot work.
 * Reuse a deleted slot at once instead, as the kernel reuses preallocated
 * elements: the key and value are rewritten inside the bucket's seq, which
 * copy-out lookups and long-key compares validate against; a program-view
 * pointer to the old element may see the new key's value (see flat.h).
 * Home h is locked and the count reserved.  Returns 0, or -EAGAIN if every
 * free slot is claimed by an insert in progress (momentarily).
 */
static int flat_reuse_dead(struct flat *f, uint32_t h, uint32_t tag, const void *key,
			   uint64_t small, const void *value)
{
	static const uint8_t dead_states[] = { FLAT_WAIT, FLAT_QUEUED, FLAT_SYNCQ };
	struct flat_bucket *bk = f->buckets;
	uint32_t b = h;

	for (uint32_t d = 0; d < f->n_buckets; d++, b = flat_next_bucket(f, b)) {
		uint64_t tags = __atomic_load_n(&bk[b].tags, __ATOMIC_RELAXED);

		if (!(~tags & FLAT_BYTES_HI))
			continue; /* all live */
		for (size_t k = 0; k < ARRAY_SIZE(dead_states); k++) {
			uint64_t m = flat_match(tags, dead_states[k] * FLAT_BYTES_LO);

			for (; m; m &= m - 1) {
				uint32_t i = flat_first(m);

				if (!flat_cas_tag(&bk[b], i, dead_states[k], FLAT_BUSY))
					continue;
				/* The reclaimers count what they free by tag, so this
				 * slot is ours to uncount. */
				__atomic_fetch_sub(&f->dead, 1, __ATOMIC_RELAXED);
				flat_raise_dist_locked(f, h, d);
				flat_fill_slot(f, b, i, tag, key, small, value);
				return 0;
			}
		}
	}
	return -EAGAIN;
}

/*
 * Insert a new element from home h (locked, count reserved): revive its own
 * deleted slot, or claim the first EMPTY slot from h on, raise h's max
 * displacement, fill and publish.  Without an EMPTY slot, @reuse takes a
 * deleted one (flat_reuse_dead).  Returns 0, or -EAGAIN when every free slot
 * still awaits reclamation.
 */
static int flat_insert_locked(struct flat *f, uint32_t h, uint32_t tag, const void *key,
			      uint64_t small, const void *value, bool reuse)
{
	struct flat_bucket *bk = f->buckets;
	uint32_t b = h;

	if (!flat_revive_locked(f, h, tag, key, small, value))
		return 0;

	for (uint32_t d = 0; d < f->n_buckets; d++, b = flat_next_bucket(f, b)) {
		uint64_t tags = __atomic_load_n(&bk[b].tags, __ATOMIC_RELAXED);
		uint64_t m;

		while ((m = flat_match(tags, 0))) {
			uint32_t i = flat_first(m);

			if (!__atomic_compare_exchange_n(&bk[b].tags, &tags,
							 tags | ((uint64_t)FLAT_BUSY << (8 * i)),
							 true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				continue;
			flat_raise_dist_locked(f, h, d);
			flat_fill_slot(f, b, i, tag, key, small, value);
			return 0;
		}
	}
	return reuse ? flat_reuse_dead(f, h, tag, key, small, value) : -EAGAIN;
}

/*
 * A small key's lock-free probe before an update: where the key is
 * (*hint, FLAT_NONE if absent), and whether -E2BIG is already decided.
 *
 * -E2BIG for an insert into a full map is decided without the home's lock
 * when the key is absent and the map full at one instant.  The home's lock
 * word, read unlocked before and the same after (flat_unlock counts unlocks),
 * proves that no writer of the home ran in between, and only those add or
 * remove this key: its absence seen in between held throughout, including
 * when the count was read >= max_entries.  Every load is acquire, so they
 * happen in this order.  Keys of at most 8 bytes: compared in one load,
 * outside any read-side section.
 *
 * The hint spares the locked path its search: under the lock, a slot that
 * still holds the key live is the key's one slot.
 */
static ALWAYS_INLINE bool flat_probe_full(const struct flat *f, uint32_t h, uint32_t tag,
					  uint32_t ks, uint64_t small, bool may_insert,
					  uint32_t *hint)
{
	const uint32_t *lock = &f->locks[h];
	uint32_t lw = __atomic_load_n(lock, __ATOMIC_ACQUIRE), md, b = h;
	uint64_t bcast = tag * FLAT_BYTES_LO;

	for (uint32_t d = 0;; d++, b = flat_next_bucket(f, b)) {
		uint64_t m = flat_match(__atomic_load_n(&f->buckets[b].tags, __ATOMIC_ACQUIRE),
					bcast);

		for (; m; m &= m - 1) {
			uint32_t pos = b * FLAT_SLOTS + flat_first(m);

			if (flat_small_at(f, pos, ks) == small) {
				*hint = pos;
				return false;
			}
		}
		md = flat_dist_of(f, lw);
		if (d >= md)
			break;
	}
	*hint = FLAT_NONE;
	if (!may_insert || (lw & FLAT_LOCK_BIT) ||
	    __atomic_load_n(&f->count, __ATOMIC_ACQUIRE) < f->map.max_entries)
		return false;
	return __atomic_load_n(lock, __ATOMIC_ACQUIRE) == lw;
}

/* Under home h's lock: slot @hint still holds the key, live? */
static ALWAYS_INLINE bool flat_hint_ok(const struct flat *f, uint32_t hint, uint32_t tag,
				       uint32_t ks, uint64_t small)
{
	uint64_t tags = __atomic_load_n(&f->buckets[hint / FLAT_SLOTS].tags, __ATOMIC_ACQUIRE);

	return ((tags >> (8 * (hint % FLAT_SLOTS))) & 0xff) == tag &&
	       flat_small_at(f, hint, ks) == small;
}

/* The update, for a key size and hash that are constants in the word-key
 * cases (flat_update_elem). */
static ALWAYS_INLINE int flat_update_sized(struct bpfmap *map, const void *key,
					   const void *value, uint64_t flags, uint32_t ks,
					   enum hash_kind kind)
{
	struct flat *f = to_flat(map);
	uint32_t hash = flat_hash_kind(f, key, kind);
	uint32_t h = flat_home(f, hash), tag = flat_tag(hash), pos, hint = FLAT_NONE;
	uint64_t small = ks <= 8 ? flat_small_key(key, ks) : 0;
	uint64_t mode = flags & ~BPFMAP_F_LOCK;
	bool section = ks > 8; /* long keys: compares need stable slots */
	bool reuse = false;
	uint32_t *lock = &f->locks[h];
	int ret;

	if (ks <= 8 && flat_probe_full(f, h, tag, ks, small, mode != BPFMAP_EXIST, &hint))
		return -E2BIG;
	if (hint != FLAT_NONE && mode != BPFMAP_NOEXIST && map->value_size <= 8 &&
	    !map_has_lock(map)) {
		/* Overwrite of a word-sized value where the probe found the
		 * key: the lock, one check, one store. */
		uint64_t w = 0;

		memcpy(&w, value, map->value_size);
		flat_lock(lock);
		if (likely(flat_hint_ok(f, hint, tag, ks, small))) {
			__atomic_store_n((uint64_t *)(void *)flat_value_at(f, hint), w,
					 __ATOMIC_RELEASE);
			flat_unlock(lock);
			return 0;
		}
		flat_unlock(lock);
	}
retry:
	ret = 0;
	if (section)
		rcu_lock();
	flat_lock(lock);
	if (hint != FLAT_NONE && flat_hint_ok(f, hint, tag, ks, small))
		pos = hint;
	else
		pos = flat_find(f, h, tag, key, ks, small);
	hint = FLAT_NONE;
	if (pos != FLAT_NONE) {
		if (mode == BPFMAP_NOEXIST)
			ret = -EEXIST;
		else
			flat_write_value(f, pos, value);
		goto out;
	}
	if (mode == BPFMAP_EXIST) {
		ret = -ENOENT;
		goto out;
	}
	if (!map_count_reserve(&f->count, map->max_entries)) {
		ret = -E2BIG;
		goto out;
	}
	ret = flat_insert_locked(f, h, tag, key, small, value, reuse);
	if (ret)
		__atomic_fetch_sub(&f->count, 1, __ATOMIC_RELAXED);
out:
	flat_unlock(lock);
	if (section)
		rcu_unlock();
	if (ret == -EAGAIN) {
		/* Every free slot awaits readers: reclaim, wait, retry; inside
		 * a read-side section waiting would wait for ourselves, so
		 * reuse a deleted slot at once. */
		if (reuse || urcu_bp_read_ongoing()) {
			if (reuse)
				cpu_relax(); /* free slots claimed by inserts in flight */
			reuse = true;
			flat_kick(f);
		} else {
			flat_reclaim_sync(f);
		}
		goto retry;
	}
	return ret;
}

static int flat_update_elem(struct bpfmap *map, const void *key, const void *value,
			    uint64_t flags)
{
	switch (to_flat(map)->hash_kind) {
	case HASH_U32:
		return flat_update_sized(map, key, value, flags, 4, HASH_U32);
	case HASH_U64:
		return flat_update_sized(map, key, value, flags, 8, HASH_U64);
	default:
		return flat_update_sized(map, key, value, flags, map->key_size,
					 to_flat(map)->hash_kind);
	}
}

static int flat_remove(struct bpfmap *map, const void *key, void *value)
{
	struct flat *f = to_flat(map);
	uint32_t ks = map->key_size, hash = flat_hash(f, key);
	uint32_t h = flat_home(f, hash), pos;
	uint64_t small = ks <= 8 ? flat_small_key(key, ks) : 0;
	bool section = ks > 8, kick = false;
	uint32_t *lock = &f->locks[h];

	if (section)
		rcu_lock();
	flat_lock(lock);
	pos = flat_find(f, h, flat_tag(hash), key, ks, small);
	if (pos != FLAT_NONE) {
		if (value)
			flat_copy_value_locked_out(f, pos, value, false);
		kick = flat_kill_locked(f, h, pos / FLAT_SLOTS, pos % FLAT_SLOTS);
	}
	flat_unlock(lock);
	if (section)
		rcu_unlock();
	if (kick)
		flat_kick(f);
	return pos != FLAT_NONE ? 0 : -ENOENT;
}

static int flat_delete_elem(struct bpfmap *map, const void *key)
{
	return flat_remove(map, key, NULL);
}

static int flat_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value)
{
	return flat_remove(map, key, value);
}

static ALWAYS_INLINE void flat_clear_lock_field(const struct flat *f, void *value)
{
	if (map_has_lock(&f->map))
		memset((char *)value + f->map.lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

/*
 * Copy-out lookup without lock or read-side section: a match and the value
 * copied from it count only if the slot's bucket had no writer busy before
 * and its seq is unchanged after (a slot may be reused meanwhile: the reuse
 * is a write under that seq).  A key present throughout is always found: its
 * slot and key do not change while it lives.
 */
static ALWAYS_INLINE int flat_lookup_copy(const struct flat *f, const void *key, void *value,
					  uint32_t ks, enum hash_kind kind)
{
	const struct flat_bucket *bk = f->buckets;
	uint32_t hash = flat_hash_kind(f, key, kind), h = flat_home(f, hash);
	uint64_t bcast = flat_tag(hash) * FLAT_BYTES_LO;
	uint64_t small = flat_small_key(key, ks);
	uint32_t md = flat_max_dist(f, h), b = h, d = 0;

	for (;;) {
		uint32_t s1 = __atomic_load_n(&bk[b].seq, __ATOMIC_ACQUIRE);
		uint64_t m = flat_match(__atomic_load_n(&bk[b].tags, __ATOMIC_ACQUIRE), bcast);
		bool again = false;

		for (; m; m &= m - 1) {
			uint32_t pos = b * FLAT_SLOTS + flat_first(m);

			if (flat_small_at(f, pos, ks) != small)
				continue;
			if (unlikely(s1 & FLAT_SEQ_WRITERS)) {
				again = true;
				break;
			}
			shared_copy_out(value, flat_value_at(f, pos), f->map.value_size);
			if (unlikely(__atomic_load_n(&bk[b].seq, __ATOMIC_RELAXED) != s1)) {
				again = true;
				break;
			}
			flat_clear_lock_field(f, value);
			return 0;
		}
		if (again) {
			cpu_relax();
			continue; /* the same bucket again */
		}
		if (d++ >= md)
			return -ENOENT;
		b = flat_next_bucket(f, b);
	}
}

/*
 * Copy-out lookup of a key longer than 8 bytes, or under the value's spin
 * lock: in a read-side section, the slot found, then its key checked again
 * and its value copied inside one seq window of its bucket (in-place updates
 * and an immediate reuse of the slot both write under that seq).
 */
static int flat_lookup_copy_section(const struct flat *f, const void *key, void *value,
				    bool with_lock)
{
	uint32_t ks = f->map.key_size, hash = flat_hash(f, key), h = flat_home(f, hash);
	uint64_t small = ks <= 8 ? flat_small_key(key, ks) : 0;
	int ret = -ENOENT;

	rcu_lock();
	for (;;) {
		uint32_t pos = flat_find(f, h, flat_tag(hash), key, ks, small), s1;
		const uint32_t *seq;

		if (pos == FLAT_NONE)
			break;
		seq = &f->buckets[pos / FLAT_SLOTS].seq;
		s1 = flat_seq_begin(seq);
		if (!flat_key_eq(f, pos, key, ks, small))
			continue; /* reused meanwhile: look again */
		if (with_lock)
			flat_copy_value_locked_out(f, pos, value, true);
		else
			shared_copy_out(value, flat_value_at(f, pos), f->map.value_size);
		if (flat_seq_same(seq, s1)) {
			flat_clear_lock_field(f, value);
			ret = 0;
			break;
		}
	}
	rcu_unlock();
	return ret;
}

static int flat_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags)
{
	struct flat *f = to_flat(map);
	uint32_t ks = map->key_size;

	if (flags & BPFMAP_F_LOCK)
		return flat_lookup_copy_section(f, key, value, true);
	if (f->hash_kind == HASH_U64)
		return flat_lookup_copy(f, key, value, 8, HASH_U64);
	if (f->hash_kind == HASH_U32)
		return flat_lookup_copy(f, key, value, 4, HASH_U32);
	if (ks <= 8)
		return flat_lookup_copy(f, key, value, ks, f->hash_kind);
	return flat_lookup_copy_section(f, key, value, false);
}

/* ---- program view -------------------------------------------------------- */

/*
 * The caller is in a read-side section, so a slot seen live keeps its key
 * until the section ends (unless reused at once, which long-key compares
 * validate).  Specialised per key size at creation (flat_lookup_for): the
 * hash inlines for 4- and 8-byte keys and the compare for 16, 32 and 64.
 */
static ALWAYS_INLINE void *flat_lookup_ptr(struct bpfmap *map, const void *key, uint32_t ks,
					    enum hash_kind kind)
{
	struct flat *f = to_flat(map);
	uint32_t hash = flat_hash_kind(f, key, kind);
	uint32_t pos = flat_find(f, flat_home(f, hash), flat_tag(hash), key, ks,
				 ks <= 8 ? flat_small_key(key, ks) : 0);

	return pos != FLAT_NONE ? flat_value_at(f, pos) : map_lookup_miss();
}

/* The general path of the specialised lookups below, out of line so that
 * theirs stays short: a key away from home, or absent. */
static __attribute__((noinline)) void *flat_lookup_far(struct flat *f, uint32_t hash,
						       const void *key, uint32_t ks,
						       uint64_t small)
{
	uint32_t pos = flat_find(f, flat_home(f, hash), flat_tag(hash), key, ks, small);

	return pos != FLAT_NONE ? flat_value_at(f, pos) : map_lookup_miss();
}

#if FLAT_SIMD
/*
 * 4-byte keys: the home bucket's eight keys (32 bytes) compared with the key
 * at once, masked by the live tags: no tag compare, and the keys' load does
 * not wait for the tags'.
 */
static ALWAYS_INLINE void *flat_lookup_k4_in(struct flat *f, const void *key)
{
	uint32_t k = load_u32(key), hash = fast_hash_u32(k, f->seed), h = flat_home(f, hash);
	uint64_t tags = __atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE);
	uint32_t m = flat_simd_eq4(f->keys + (size_t)h * 32, k) & flat_live_bits(tags);

	if (likely(m))
		return f->values + ((size_t)h * FLAT_SLOTS + (uint32_t)__builtin_ctz(m)) *
					   f->value_stride;
	return flat_lookup_far(f, hash, key, 4, k);
}

/* 8-byte keys, the same way (64 bytes of keys), read as two halves. */
static ALWAYS_INLINE void *flat_lookup_k8_in(struct flat *f, const void *key)
{
	uint32_t lo, hi, hash, h, m;

	load_u32_halves(key, &lo, &hi);
	hash = fast_hash_u64_halves(lo, hi, f->seed);
	h = flat_home(f, hash);
	m = flat_simd_eq8_live(f->keys + (size_t)h * 64, lo, hi,
			       __atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE));
	if (likely(m))
		return f->values + ((size_t)h * FLAT_SLOTS + (uint32_t)__builtin_ctz(m) / 2) *
					   f->value_stride;
	return flat_lookup_far(f, hash, key, 8, (uint64_t)hi << 32 | lo);
}

static void *flat_lookup_k4(struct bpfmap *map, const void *key)
{
	return flat_lookup_k4_in(to_flat(map), key);
}

static void *flat_lookup_k8(struct bpfmap *map, const void *key)
{
	return flat_lookup_k8_in(to_flat(map), key);
}
#else
static void *flat_lookup_k4(struct bpfmap *map, const void *key)
{
	return flat_lookup_ptr(map, key, 4, HASH_U32);
}

static void *flat_lookup_k8(struct bpfmap *map, const void *key)
{
	return flat_lookup_ptr(map, key, 8, HASH_U64);
}
#endif

/*
 * Longer keys: the home bucket's tags matched, the candidate's key compared
 * in place (inline for the sizes specialised below), and the match validated
 * by the bucket's seq (see flat_find); anything else takes the general path.
 */
static ALWAYS_INLINE void *flat_lookup_long(struct bpfmap *map, const void *key, uint32_t ks)
{
	struct flat *f = to_flat(map);
	/* The word hash inline for the sizes that use it (every size of the
	 * specialised lookups, today; the test of hash_kind is for safety). */
	uint32_t hash = f->hash_kind == HASH_WORDS ? word_hash(key, ks, f->seed)
						   : f->hash(key, ks, f->seed);
	uint32_t h = flat_home(f, hash);
	const struct flat_bucket *bk = &f->buckets[h];
	uint32_t s1 = __atomic_load_n(&bk->seq, __ATOMIC_ACQUIRE);
	uint64_t tags = __atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE);
#if FLAT_SIMD
	uint32_t m = flat_simd_tag_bits(tags, flat_tag(hash)); /* bit i: slot i */
	uint32_t i = m ? (uint32_t)__builtin_ctz(m) : 0;
#else
	uint64_t m = flat_match(tags, flat_tag(hash) * FLAT_BYTES_LO);
	uint32_t i = m ? flat_first(m) : 0;
#endif

	if (likely(m && !(s1 & FLAT_SEQ_WRITERS))) {
		uint32_t pos = h * FLAT_SLOTS + i;

		if (likely(key_equal_long(f->keys + (size_t)pos * ROUND_UP(ks, 8), key, ks) &&
			   flat_seq_same(&bk->seq, s1)))
			return flat_value_at(f, pos);
	}
	return flat_lookup_far(f, hash, key, ks, 0);
}

#define FLAT_LOOKUP_SIZED(n)                                                        \
	static void *flat_lookup_k##n(struct bpfmap *map, const void *key)          \
	{                                                                           \
		return flat_lookup_long(map, key, n);                               \
	}
FLAT_LOOKUP_SIZED(16)
FLAT_LOOKUP_SIZED(32)
FLAT_LOOKUP_SIZED(64)

static void *flat_lookup_any(struct bpfmap *map, const void *key)
{
	return flat_lookup_ptr(map, key, map->key_size, to_flat(map)->hash_kind);
}

static map_lookup_fn flat_lookup_for(enum hash_kind kind, uint32_t key_size)
{
	if (kind == HASH_U32)
		return flat_lookup_k4;
	if (kind == HASH_U64)
		return flat_lookup_k8;
	switch (key_size) {
	case 16:
		return flat_lookup_k16;
	case 32:
		return flat_lookup_k32;
	case 64:
		return flat_lookup_k64;
	default:
		return flat_lookup_any;
	}
}

/*
 * Program-view lookups of many keys, their cache misses overlapped: hash a
 * chunk and prefetch the home buckets' metadata and keys, then look each up.
 */
#define FLAT_BULK_CHUNK 16

static ALWAYS_INLINE int flat_lookup_bulk_sized(struct flat *f, const char *keys, uint32_t n,
						void **values, uint32_t ks, enum hash_kind kind)
{
	uint32_t hash[FLAT_BULK_CHUNK];
	int found = 0;

	for (uint32_t base = 0; base < n; base += FLAT_BULK_CHUNK) {
		uint32_t m = n - base < FLAT_BULK_CHUNK ? n - base : FLAT_BULK_CHUNK;
		const char *k = keys + (size_t)base * ks;

		for (uint32_t i = 0; i < m; i++) {
			uint32_t h;

			hash[i] = flat_hash_kind(f, k + (size_t)i * ks, kind);
			h = flat_home(f, hash[i]);
			__builtin_prefetch(&f->buckets[h]);
			__builtin_prefetch(flat_key_at(f, h * FLAT_SLOTS));
			if (ks <= 8 && ks > 4)
				__builtin_prefetch(flat_key_at(f, h * FLAT_SLOTS) + 63);
		}
		if (ks > 8) {
			/* Long keys: the candidate's key once the tags are in. */
			for (uint32_t i = 0; i < m; i++) {
				uint32_t h = flat_home(f, hash[i]);
				uint64_t mt = flat_match(__atomic_load_n(&f->buckets[h].tags,
									 __ATOMIC_RELAXED),
							 flat_tag(hash[i]) * FLAT_BYTES_LO);

				if (mt)
					__builtin_prefetch(flat_key_at(f, h * FLAT_SLOTS +
									      flat_first(mt)));
			}
		}
#if FLAT_SIMD
		if (kind == HASH_U32 || kind == HASH_U64) {
			/* The single lookups' bucket-wide compares (hashing again
			 * is cheaper than keeping the homes). */
			for (uint32_t i = 0; i < m; i++) {
				const char *key = k + (size_t)i * ks;
				void *v = kind == HASH_U32 ? flat_lookup_k4_in(f, key)
							   : flat_lookup_k8_in(f, key);

				values[base + i] = v;
				found += v != NULL;
			}
			continue;
		}
#endif
		for (uint32_t i = 0; i < m; i++) {
			const char *key = k + (size_t)i * ks;
			uint32_t pos = flat_find(f, flat_home(f, hash[i]), flat_tag(hash[i]), key,
						 ks, ks <= 8 ? flat_small_key(key, ks) : 0);

			values[base + i] = pos != FLAT_NONE ? flat_value_at(f, pos) : NULL;
			found += pos != FLAT_NONE;
		}
	}
	return found;
}

static int flat_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	struct flat *f = to_flat(map);

	switch (f->hash_kind) {
	case HASH_U32:
		return flat_lookup_bulk_sized(f, keys, n, values, 4, HASH_U32);
	case HASH_U64:
		return flat_lookup_bulk_sized(f, keys, n, values, 8, HASH_U64);
	default:
		return flat_lookup_bulk_sized(f, keys, n, values, map->key_size, f->hash_kind);
	}
}

/* ---- creation ----------------------------------------------------------- */

static size_t flat_mem_usage(const struct bpfmap *map)
{
	return to_flat(map)->mem_bytes;
}

static void flat_release(struct flat *f)
{
	free(f->wait_bits);
	free(f->values_mem);
	free(f->keys_mem);
	free(f->buckets_mem);
	free(f);
}

static void flat_free(struct bpfmap *map)
{
	struct flat *f = to_flat(map);

	/* A reclamation callback may be queued or running: it touches f
	 * until it stores rq = 0, its last access. */
	while (__atomic_load_n(&f->rq, __ATOMIC_ACQUIRE))
		rcu_wait_deferred();
	flat_release(f);
}

static void *align64(void *p)
{
	return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Ask for transparent huge pages on the 2 MiB-aligned interior of a large
 * array: lookups land anywhere in it, and TLB misses would double their cost.
 * Advice only: failure changes nothing. */
static void advise_huge(void *p, size_t len)
{
	const uintptr_t huge = 2u << 20;
	uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(huge - 1);

	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

/*
 * Home slots for max_entries elements of slot_size bytes: about 8/7 of them,
 * so a full map leaves a slot free per seven, but no more than keeps the bytes
 * per element within slot_size + 16 (large elements), and always at least
 * one more than max_entries.
 */
static uint64_t flat_home_slots(uint32_t max_entries, uint32_t slot_size)
{
	uint64_t by_load = ((uint64_t)max_entries * 8 + 6) / 7;
	/* 2 bytes of bucket metadata per slot; 1 byte per element kept for
	 * the fixed part and the bitmaps. */
	uint64_t by_budget = (uint64_t)max_entries * (slot_size + 15) / (slot_size + 2);
	uint64_t n = by_load < by_budget ? by_load : by_budget;

	return n > max_entries ? n : (uint64_t)max_entries + 1;
}

/* Spare slots (beyond max_entries) every map gets, bounded in bytes: deleted
 * slots wait for a grace period before reuse, and these let deletes and
 * inserts go on meanwhile. */
#define FLAT_SPARE_MIN 1024
#define FLAT_SPARE_MAX_BYTES (256 << 10)

static uint64_t flat_spare_min(uint32_t slot_size)
{
	uint64_t n = FLAT_SPARE_MAX_BYTES / slot_size;

	return n < FLAT_SPARE_MIN ? n : FLAT_SPARE_MIN;
}

struct bpfmap *flat_alloc(const struct map_params *p, int *err)
{
	struct flat *f = calloc(1, sizeof(*f));
	uint64_t key_stride = p->key_size <= 4 ? 4 : ROUND_UP((uint64_t)p->key_size, 8);
	uint64_t value_stride = ROUND_UP((uint64_t)p->value_size, 8);
	uint64_t slot_size = key_stride + value_stride;
	uint64_t home_slots, n_slots, n_buckets;
	size_t bucket_bytes, key_bytes, value_bytes;

	if (!f || slot_size > UINT32_MAX)
		goto nomem;
	home_slots = flat_home_slots(p->max_entries, (uint32_t)slot_size);
	n_slots = (uint64_t)p->max_entries + flat_spare_min((uint32_t)slot_size);
	if (n_slots < home_slots)
		n_slots = home_slots;
	n_buckets = (n_slots + FLAT_SLOTS - 1) / FLAT_SLOTS;
	if (n_buckets > UINT32_MAX / FLAT_SLOTS || slot_size * n_slots > SIZE_MAX / 4)
		goto nomem;
	f->n_slots = (uint32_t)n_slots;
	f->n_buckets = (uint32_t)n_buckets;
	f->n_homes = (uint32_t)((home_slots + FLAT_SLOTS - 1) / FLAT_SLOTS);
	f->key_stride = (uint32_t)key_stride;
	f->value_stride = (uint32_t)value_stride;
	f->bits_words = (f->n_buckets + 63) / 64;
	f->cursor_end = roundup_pow_of_two_u32(p->max_entries);
	/* Reclaim once half the homes' spare slots are dead (not the overflow
	 * buckets': they are for when reclamation lags). */
	f->kick_at = (uint32_t)((f->n_homes * (uint64_t)FLAT_SLOTS - p->max_entries) / 2);
	if (!f->kick_at)
		f->kick_at = 1;
	/* The buckets, then the locks from the next cache line on. */
	bucket_bytes = ROUND_UP((size_t)n_buckets * sizeof(struct flat_bucket), 64) +
		       (size_t)n_buckets * sizeof(uint32_t) + 63;
	/* Keys for whole buckets, the short last one's too: lookups load a
	 * bucket's keys at once. */
	key_bytes = (size_t)(n_buckets * FLAT_SLOTS * key_stride) + 63;
	value_bytes = (size_t)(n_slots * value_stride) + 63;
	f->buckets_mem = calloc(1, bucket_bytes);
	if (!f->buckets_mem)
		goto nomem;
	f->keys_mem = calloc(1, key_bytes);
	if (!f->keys_mem)
		goto nomem;
	f->values_mem = calloc(1, value_bytes);
	if (!f->values_mem)
		goto nomem;
	f->wait_bits = calloc(3 * (size_t)f->bits_words, sizeof(uint64_t));
	if (!f->wait_bits)
		goto nomem;
	f->queued_bits = f->wait_bits + f->bits_words;
	f->sync_bits = f->queued_bits + f->bits_words;
	f->buckets = align64(f->buckets_mem);
	f->locks = (uint32_t *)(void *)((char *)f->buckets +
					ROUND_UP((size_t)n_buckets * sizeof(struct flat_bucket), 64));
	f->keys = align64(f->keys_mem);
	f->values = align64(f->values_mem);
	advise_huge(f->buckets_mem, bucket_bytes);
	advise_huge(f->keys_mem, key_bytes);
	advise_huge(f->values_mem, value_bytes);
	/* A short last bucket: its missing slots stay BUSY for ever. */
	for (uint64_t i = n_slots - (n_buckets - 1) * FLAT_SLOTS; i < FLAT_SLOTS; i++)
		f->buckets[n_buckets - 1].tags |= (uint64_t)FLAT_BUSY << (8 * i);
	f->mem_bytes = sizeof(*f) + bucket_bytes + key_bytes + value_bytes +
		       3 * (size_t)f->bits_words * sizeof(uint64_t);

	f->seed = hash_seed_new(p->map_flags & BPFMAP_F_ZERO_SEED);
	f->hash_kind = hash_kind_for_key_size(p->key_size);
	f->hash = hash_fn_for_kind(f->hash_kind);
	map_init_common(&f->map, p, &flat_ops, flat_lookup_for(f->hash_kind, p->key_size));
	return &f->map;

nomem:
	if (f)
		flat_release(f);
	*err = -ENOMEM;
	return NULL;
}

const struct map_ops flat_ops = {
	.alloc = flat_alloc,
	.free = flat_free,
	.lookup_elem = flat_lookup_elem,
	.update_elem = flat_update_elem,
	.delete_elem = flat_delete_elem,
	.lookup_and_delete_elem = flat_lookup_and_delete_elem,
	.get_next_key = flat_get_next_key,
	.lookup_batch = flat_lookup_batch,
	.mem_usage = flat_mem_usage,
	.lookup_bulk = flat_lookup_bulk,
};
