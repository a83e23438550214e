/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH, preallocated (tables/flat.h): iteration.
 *
 * get_next_key walks home by home, each home's keys (its bucket's and its
 * chain's) in byte order, inside a read-side section.  Keys are copied out
 * as flat_copy_live_key() does.
 *
 * Batch operations use the kernel's protocol with an eighth of a home as the
 * unit (flat_batch_sub): the cursor is (home << batch_sub_bits) + unit; a call takes all the
 * elements of a unit, its bucket's and its chain's, under the home's lock (a
 * consistent snapshot of membership: word values may be overwritten without
 * it; lookup_and_delete_batch deletes them under it too), or none if they do
 * not fit (-ENOSPC when nothing was copied yet).  Since a key always has the
 * same unit, a key deleted and re-inserted during a pass never comes back in
 * that pass.  The walk ends with the cursor at roundup_pow_of_two(max_entries),
 * the kernel's bucket count, so cursors past the units behave as the
 * kernel's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tables/flat.h"
#include "tables/flat_find.h"
#include "util/shared_copy.h"

/*
 * Copy the key of slot i of bucket b out if the slot is live, and say so.
 * A read-side section keeps a live slot from being refilled, but the key
 * may still change under the copy:
 *  - a delete in a map that matches by key replaces the word with its
 *    bucket's dead word after it turned the tag to WAIT: the tag is read
 *    again after the key, and a tag changed meanwhile means gone;
 *  - the in-section reuse rewrites a slot (word key or long) inside the
 *    bucket's seq, so a copy counts only if the seq did not move around it.
 */
static bool flat_copy_live_key(const struct flat *f, uint32_t b, uint32_t i, void *dst)
{
	const struct flat_bucket *bk = &f->buckets[b];

	for (;;) {
		uint32_t s1 = mwseq_read_begin(&bk->seq);
		uint32_t tag = __atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE) >> (8 * i) & 0xff;

		if (tag < FLAT_TAG_MIN)
			return false;
		flat_copy_key_out(f, b * FLAT_SLOTS + i, dst);
		if ((__atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE) >> (8 * i) & 0xff) != tag)
			return false;
		if (mwseq_read_same(&bk->seq, s1))
			return true;
	}
}

/* Key @k, if it comes after @after (when given) and before the best so
 * far (@best, when *@have), becomes the best. */
static void flat_next_consider(const struct flat *f, const char *k, const void *after,
			       char *best, bool *have)
{
	uint32_t ks = f->map.key_size;

	if (after && memcmp(k, after, ks) <= 0)
		return;
	if (*have && memcmp(k, best, ks) >= 0)
		return;
	memcpy(best, k, ks);
	*have = true;
}

/* Home @h's smallest key (in byte order) after @after, or any when NULL,
 * into @best: its bucket's live slots and its chain's nodes.  An in-section
 * reuse may relink a node the chain walk stands on into another home's
 * chain, which the walk would then follow, missing the rest of its own
 * and taking the other's keys: the reuse holds the map's moved seq around
 * the relinking (as for flat_chain_find), and the home is walked again if
 * it moved.  A home seen without a chain walks none, so it neither waits
 * for a reuse in progress nor walks again after one: a key that joined
 * its chain since then was not present throughout.  The walk is bounded
 * too, since a diverted one may loop. */
static bool flat_home_next(const struct flat *f, uint32_t h, const void *after, char *best,
			   char *tmp)
{
	for (;;) {
		bool chained = flat_chain(f, h) != FLAT_NONE;
		/* Before the head is read again: a node relinked after that read
		 * must move it. */
		uint32_t moved = chained ? mwseq_read_begin(&f->moved) : 0, steps = 0;
		uint64_t live = flat_live(__atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE));
		bool have = false;

		for (; live; live &= live - 1)
			if (flat_copy_live_key(f, h, flat_first(live), tmp))
				flat_next_consider(f, tmp, after, best, &have);
		for (uint32_t n = chained ? flat_chain(f, h) : FLAT_NONE;
		     n != FLAT_NONE && steps++ <= f->n_nodes; n = flat_node_next(f, n)) {
			TEST_HOOK(HOOK_CHAIN_STEP, f);
			if (flat_copy_live_key(f, n / FLAT_SLOTS, n % FLAT_SLOTS, tmp))
				flat_next_consider(f, tmp, after, best, &have);
		}
		if (!chained || mwseq_read_same(&f->moved, moved))
			return have;
	}
}

/*
 * The walk goes home by home, and within a home by key bytes, so that a
 * key's place in it does not depend on where the key sits: a key deleted
 * and inserted again (in another slot, or a node) resumes the walk where
 * it left off, and no key present throughout is skipped.  An absent key
 * restarts the walk, as in the kernel.
 */
int flat_get_next_key(struct bpfmap *map, const void *key, void *next_key)
{
	struct flat *f = to_flat(map);
	uint32_t ks = map->key_size, h0 = 0;
	char stack[2 * 256], *best = ks <= 256 ? stack : malloc(2 * (size_t)ks);
	const void *after = NULL;
	int ret = -ENOENT;

	if (!best)
		return -ENOMEM;
	rcu_lock();
	if (key) {
		uint64_t hash = flat_hash(f, key);
		struct flat_place pl = flat_place_of(f, hash);

		if (flat_find(f, pl.home, pl.tag, key, ks, ks <= 8 ? flat_small_key(key, ks) : 0,
			      false) !=
		    FLAT_NONE) {
			h0 = pl.home;
			after = key;
		}
	}
	for (uint32_t h = h0; h < f->n_homes; h++) {
		if (flat_home_next(f, h, h == h0 ? after : NULL, best, best + ks)) {
			memcpy(next_key, best, ks);
			ret = 0;
			break;
		}
	}
	rcu_unlock();
	if (best != stack)
		free(best);
	return ret;
}

/*
 * Batch units: a home's elements split by the top batch_sub_bits bits of
 * their tags (the bits of the hash right below the home's, so a key's unit
 * never changes): FLAT_BATCH_SUB_BITS, fewer where the units would
 * outnumber the kernel's buckets, so that the cursor ends where the
 * kernel's does (flat.c).  The kernel's batches take a bucket of its
 * roundup_pow_of_two(max_entries) at a time, 0.5 to 1 element on average in
 * a full map; a whole home (eight slots and a chain) made -ENOSPC answer
 * counts the kernel serves (issue 15: a 10-entry map is two homes).  An
 * eighth of a home holds about one element in a full map, as a kernel
 * bucket does.
 */
#define FLAT_BATCH_SUBS (1u << FLAT_BATCH_SUB_BITS)

static ALWAYS_INLINE uint32_t flat_batch_sub(const struct flat *f, uint32_t tag)
{
	return (tag & 0x7f) >> (7 - f->batch_sub_bits);
}

/*
 * A pass reads the homes, their buckets, keys and values in order, which the
 * hardware prefetcher follows; the chains' nodes are scattered over the pool,
 * and each costs four misses in a map the caches do not hold (its next, its
 * bucket's tags, its key, its value).  After churn a quarter of the keys are
 * chained, two nodes a home on average (docs/ARCHITECTURE.md).  So at the
 * start of each block of FLAT_BATCH_BLOCK homes the pass asks for the
 * block's nodes, breadth first: every chain's first node, then every
 * second, so that a block waits about one miss per level, not one per node.
 * Unlocked reads, a hint only.  The pass is in a read-side section, so no
 * node it reaches goes back to the free list before it is done; a node
 * unlinked or relinked meanwhile (the in-section reuse) leads elsewhere and
 * wastes a prefetch.  The bound keeps the walk inside node_next whatever it
 * reads.
 */
#define FLAT_BATCH_BLOCK 16
#define FLAT_BATCH_DEPTH 6

static ALWAYS_INLINE bool flat_batch_node(const struct flat *f, uint32_t pos)
{
	return pos - f->pool_base < f->n_nodes;
}

/* Inline: GCC takes a call that only loads and prefetches for a pure one
 * and drops it. */
static ALWAYS_INLINE void flat_batch_prefetch(const struct flat *f, uint32_t h)
{
	uint32_t pos[FLAT_BATCH_BLOCK], n = f->n_homes - h;

	if (n > FLAT_BATCH_BLOCK)
		n = FLAT_BATCH_BLOCK;
	for (uint32_t i = 0; i < n; i++)
		pos[i] = flat_chain(f, h + i);
	for (uint32_t d = 0; d < FLAT_BATCH_DEPTH; d++) {
		bool more = false;

		for (uint32_t i = 0; i < n; i++) {
			if (!flat_batch_node(f, pos[i]))
				continue;
			__builtin_prefetch(&f->buckets[pos[i] / FLAT_SLOTS]);
			if (f->elems) { /* the key and value are the element's */
				__builtin_prefetch(&f->elems[pos[i]]);
			} else { /* element == position: no load to find them */
				__builtin_prefetch(flat_key_at(f, pos[i]));
				__builtin_prefetch(flat_value_at(f, pos[i]));
			}
			pos[i] = flat_node_next(f, pos[i]);
			more = true;
		}
		if (!more)
			break;
	}
}

/*
 * Whether the pass prefetches: only in maps of more than
 * FLAT_BATCH_PREFETCH_BYTES of keys and values, which the caches do not
 * hold; in smaller ones the extra walk costs a pass 10-15% (16384 entries)
 * and saves nothing.
 */
#define FLAT_BATCH_PREFETCH_BYTES (8u << 20)

static bool flat_batch_prefetches(const struct flat *f)
{
	uint64_t positions = (uint64_t)f->n_buckets * FLAT_SLOTS;

	return positions * (f->key_stride + f->value_stride) > FLAT_BATCH_PREFETCH_BYTES;
}

/* The elements of each unit of home h (h locked), into @n. */
static void flat_unit_counts(const struct flat *f, uint32_t h, uint32_t n[FLAT_BATCH_SUBS])
{
	uint64_t tags = __atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE);

	memset(n, 0, FLAT_BATCH_SUBS * sizeof(n[0]));
	for (uint64_t live = flat_live(tags); live; live &= live - 1)
		n[flat_batch_sub(f, (uint32_t)(tags >> (8 * flat_first(live))) & 0xff)]++;
	for (uint32_t pos = flat_chain(f, h); pos != FLAT_NONE; pos = flat_node_next(f, pos))
		n[flat_batch_sub(f, flat_tag_at(f, pos))]++;
}

/* What flat_units_do does to each element of the units it walks. */
enum flat_units_act {
	UNITS_TRYLOCK, /* take its value's spin lock if free, else stop (busy) */
	UNITS_UNLOCK,  /* release the spin locks of the first @locked */
	UNITS_TAKE,    /* copy it out (F_LOCK: under the lock taken, released
			* here) and delete it if asked */
};

struct flat_units {
	char *keys, *values;
	bool with_lock, do_delete;
	bool kick;	 /* out: start a reclamation after unlocking */
	uint32_t locked; /* UNITS_UNLOCK: how many UNITS_TRYLOCK took */
	uint32_t *busy;	 /* out of UNITS_TRYLOCK: the held lock word that stopped it */
};

static uint32_t *flat_value_lock_word(struct flat *f, uint32_t pos)
{
	return &value_lock(&f->map, flat_value_at(f, pos))->val;
}

/* Do @act to the element at @pos, the @n-th (chain node @prev before
 * it); false stops the walk. */
static ALWAYS_INLINE bool flat_unit_act(struct flat *f, uint32_t h, uint32_t pos, uint32_t prev,
					uint32_t n, struct flat_units *u, enum flat_units_act act)
{
	const struct bpfmap *map = &f->map;
	char *value;

	switch (act) {
	case UNITS_TRYLOCK:
		if (value_lock_try(flat_value_lock_word(f, pos)))
			return true;
		u->busy = flat_value_lock_word(f, pos);
		return false;
	case UNITS_UNLOCK:
		if (n == u->locked)
			return false;
		value_lock_drop(flat_value_lock_word(f, pos));
		return true;
	case UNITS_TAKE:
		break;
	}
	value = u->values + (size_t)n * map->value_size;
	flat_copy_key_out(f, pos, u->keys + (size_t)n * map->key_size);
	if (u->with_lock) {
		value_copy_out_held(map, value, flat_value_at(f, pos));
		value_clear_lock(map, value);
	} else {
		flat_copy_value_locked_out(f, pos, value, false);
	}
	if (u->do_delete && flat_kill_locked(f, h, pos, prev, NULL))
		u->kick = true;
	return true;
}

/*
 * Walk the elements of units [from, to) of home h, whose lock is held,
 * inside a read-side section, doing @act to each: the bucket's, then the
 * chain's, in chain order so that a deleted node's predecessor is known.
 * Under the lock the home's live slots and linked nodes are its elements
 * and stay so, and every walk visits them in the same order.  Returns how
 * many it did.  Inline, so that each act gets its own loop (a switch per
 * element made a batch pass 13-15% slower).
 */
static ALWAYS_INLINE uint32_t flat_units_do(struct flat *f, uint32_t h, uint32_t from,
					    uint32_t to, struct flat_units *u,
					    enum flat_units_act act)
{
	uint64_t tags = __atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE);
	bool deletes = act == UNITS_TAKE && u->do_delete;
	uint32_t n = 0, prev = FLAT_NONE;

	for (uint64_t live = flat_live(tags); live; live &= live - 1) {
		uint32_t i = flat_first(live), pos = h * FLAT_SLOTS + i;
		uint32_t b = flat_batch_sub(f, (uint32_t)(tags >> (8 * i)) & 0xff);

		if (b < from || b >= to)
			continue;
		if (!flat_unit_act(f, h, pos, FLAT_NONE, n, u, act))
			return n;
		n++;
	}
	for (uint32_t pos = flat_chain(f, h), next; pos != FLAT_NONE; pos = next) {
		uint32_t b = flat_batch_sub(f, flat_tag_at(f, pos));

		next = flat_node_next(f, pos);
		if (b < from || b >= to) {
			prev = pos;
			continue;
		}
		if (!flat_unit_act(f, h, pos, prev, n, u, act))
			return n;
		n++;
		if (!deletes)
			prev = pos;
	}
	return n;
}

/*
 * Take units [from, to) of home h (locked) into u->keys and u->values.
 * With F_LOCK every value's spin lock is taken first, or none: one that a
 * program holds leaves the units untouched, its word in u->busy, to be
 * waited for with the home unlocked (a program may hold it for long, and
 * meanwhile the home's other writers must go on).  Returns how many.
 */
static uint32_t flat_units_take(struct flat *f, uint32_t h, uint32_t from, uint32_t to,
				struct flat_units *u)
{
	if (u->with_lock) {
		u->locked = flat_units_do(f, h, from, to, u, UNITS_TRYLOCK);
		if (u->busy) {
			flat_units_do(f, h, from, to, u, UNITS_UNLOCK);
			return 0;
		}
	}
	return flat_units_do(f, h, from, to, u, UNITS_TAKE);
}

int flat_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch,
		      void *keys, void *values, uint32_t *count, uint64_t elem_flags,
		      bool do_delete)
{
	struct flat *f = to_flat(map);
	struct flat_units u = { .with_lock = elem_flags & BPFMAP_F_LOCK, .do_delete = do_delete };
	uint32_t ks = map->key_size, vs = map->value_size;
	uint32_t max_count = *count, total = 0, batch = 0, first;
	bool full = false, ahead;
	int ret = -ENOENT;

	*count = 0;
	if (in_batch)
		memcpy(&batch, in_batch, sizeof(batch));
	if (batch >= f->cursor_end)
		return -ENOENT;
	if (do_delete) /* returns deleted values: see flat_stores_off */
		flat_stores_off(f);

	first = batch >> f->batch_sub_bits;
	ahead = flat_batch_prefetches(f);
	rcu_lock();
	while (!full && batch >> f->batch_sub_bits < f->n_homes) {
		uint32_t h = batch >> f->batch_sub_bits, n[FLAT_BATCH_SUBS];
		uint32_t subs = 1u << f->batch_sub_bits, *lock = &f->homes[h].lock;
		uint32_t from = batch & (subs - 1), sub, room = max_count - total;

		if (ahead && (h % FLAT_BATCH_BLOCK == 0 || h == first))
			flat_batch_prefetch(f, h);
		seq_spin_lock(lock);
		flat_unit_counts(f, h, n);
		/* The whole units from the cursor's on that fit. */
		for (sub = from; sub < subs; sub++, batch++) {
			if (n[sub] > room) {
				full = true;
				break;
			}
			room -= n[sub];
		}
		if (room < max_count - total) {
			u.keys = (char *)keys + (size_t)total * ks;
			u.values = (char *)values + (size_t)total * vs;
			total += flat_units_take(f, h, from, sub, &u);
		}
		seq_spin_unlock(lock);
		if (unlikely(u.busy)) {
			/* The table's memory stays while the map lives: the
			 * word may be waited for outside the section. */
			rcu_unlock();
			value_lock_wait_free(u.busy);
			rcu_lock();
			u.busy = NULL;
			batch -= sub - from;
			full = false;
			continue;
		}
		if (full)
			ret = total ? 0 : -ENOSPC;
	}
	if (batch >> f->batch_sub_bits >= f->n_homes)
		batch = f->cursor_end;
	rcu_unlock();
	if (u.kick)
		flat_kick(f);
	memcpy(out_batch, &batch, sizeof(batch));
	*count = total;
	return ret;
}
