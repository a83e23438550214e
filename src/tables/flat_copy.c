/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat table's general copy-out paths: a small key's home bucket slot by
 * slot, and a read-side section for long keys, spin-locked copies and
 * chains.  Below the specialised copy-outs (flat_lookup.c, flat_words_x86.c),
 * which fall back on them.
 */
#include <errno.h>

#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/flat_words.h"
#include "tables/value.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

/* The copy-out of last resort, under the key's home lock (flat_take).
 * Out of line: the optimistic paths stay short. */
static __attribute__((noinline)) int flat_copy_locked(const struct flat *f, const void *key,
						      void *value, bool with_lock)
{
	/* Marked as writers are while it holds their lock: a signal handler
	 * that interrupts it must not wait for it (sync/reentry.h).  The
	 * lock is a writer's, but this writes nothing but @value. */
	return REENTRY_GUARDED(flat_take((struct flat *)f, key, value, with_lock, true));
}

/*
 * Copy-out lookup of a key of at most 8 bytes: its home bucket without lock
 * or read-side section; a match and the value copied from it count only if
 * the bucket had no writer busy before and its seq is unchanged after (a
 * slot may be reused meanwhile: the reuse is a write under that seq), and
 * the value's version held still (flat_value_copy).  A key
 * present throughout is always found: its slot and key do not change while
 * it lives.  In a map that matches by key (flat.h), the bucket's keys are
 * compared without the tags, as the program view does: both then see an
 * insert from the same moment (the key's store; the tag comes after it).
 * A home with a chain then has it walked, in a read-side section.  After
 * losing rounds to writers for SEQ_READ_PATIENCE, the home's lock decides.
 */
static ALWAYS_INLINE int flat_lookup_copy(const struct flat *f, const void *key, void *value,
					  uint32_t ks, enum hash_kind kind)
{
	const struct flat_bucket *bk;
	uint64_t hash = flat_hash_kind(f, key, kind);
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t h = pl.home;
	uint64_t bcast = pl.tag * FLAT_BYTES_LO;
	uint64_t small = flat_small_key(key, ks), kept, patience = 0;
	bool starved = false;

	bk = &f->buckets[h];
	for (;;) {
		uint32_t s1 = __atomic_load_n(&bk->seq, __ATOMIC_ACQUIRE);
		uint64_t m = f->match_by_key
				 ? FLAT_BYTES_HI /* every slot a candidate */
				 : flat_match(__atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE), bcast);
		bool again = false;

		for (; m; m &= m - 1) {
			uint32_t pos = h * FLAT_SLOTS + flat_first(m);

			if (flat_small_at(f, pos, ks) != small)
				continue;
			if (unlikely(s1 & MWSEQ_WRITERS)) {
				again = true;
				break;
			}
			TEST_HOOK(HOOK_FLAT_COPY_MATCHED, &pos);
			if (unlikely(!flat_value_copy(f, flat_elem_of(f, pos), value) ||
				     __atomic_load_n(&bk->seq, __ATOMIC_RELAXED) != s1)) {
				again = true;
				break;
			}
			value_clear_lock(&f->map, value);
			return 0;
		}
		if (!again)
			break;
		if (reentry_busy()) /* the writer may be this thread's (sync/reentry.h) */
			return -EBUSY;
		if (seq_read_give_up(&patience)) {
			starved = true;
			break;
		}
		cpu_relax(); /* the bucket again */
	}
	if (!starved && !flat_chain_may_hold(f, h, pl.tag))
		return -ENOENT;
	/* The key as read before any value byte was written (@value may
	 * overlap @key: map_value_overlaps_key). */
	flat_small_key_put(small, &kept, ks);
	if (unlikely(starved))
		return flat_copy_locked(f, &kept, value, false);
	return flat_copy_section(f, &kept, value, false);
}

int flat_copy_small(const struct flat *f, const void *key, void *value, uint32_t ks,
		    enum hash_kind kind)
{
	return flat_lookup_copy(f, key, value, ks, kind);
}

__attribute__((noinline)) int flat_copy_word_far(const struct flat *f, uint64_t k, void *value,
						  uint32_t ks)
{
	uint64_t key;

	flat_small_key_put(k, &key, ks);
	return map_result(flat_lookup_copy(f, &key, value, ks, ks == 4 ? HASH_U32 : HASH_U64));
}

/* flat_copy_section lost rounds to writers for SEQ_READ_PATIENCE. */
#define FLAT_COPY_STARVED 1

/*
 * Copy-out lookup of a key longer than 8 bytes, under the value's spin lock,
 * or in a chain: in a read-side section, the position found, then its key
 * checked again and its value copied inside one seq window of its bucket
 * (an immediate reuse of the position writes under that seq) and its
 * version (in-place updates), else the home's lock after SEQ_READ_PATIENCE.
 * -EBUSY where it would wait on its own thread (sync/reentry.h).
 */
int flat_copy_section(const struct flat *f, const void *key, void *value, bool with_lock)
{
	uint32_t ks = f->map.key_size;
	uint64_t hash = flat_hash(f, key);
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t h = pl.home;
	uint64_t small = ks <= 8 ? flat_small_key(key, ks) : 0;
	uint64_t patience = 0;
	int ret;

	rcu_lock();
	for (;;) {
		uint32_t pos = flat_find(f, h, pl.tag, key, ks, small, true), s1;
		const uint32_t *seq;

		ret = -ENOENT;
		if (pos == FLAT_NONE)
			break;
		ret = -EBUSY; /* instead of waiting on this thread (sync/reentry.h) */
		if (pos == FLAT_WAIT_SELF)
			break;
		seq = &f->buckets[pos / FLAT_SLOTS].seq;
		s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
		if (s1 & MWSEQ_WRITERS) { /* a round lost */
			if (reentry_busy())
				break;
			cpu_relax();
			goto lost;
		}
		ret = -ENOENT;
		if (!flat_key_eq(f, pos, key, ks, small))
			goto lost; /* reused meanwhile: look again */
		if (with_lock) {
			if (!flat_copy_value_locked_out(f, pos, value, true)) {
				ret = -EBUSY;
				break;
			}
		} else {
			TEST_HOOK(HOOK_VALUE_COPYING, value);
			if (!flat_value_copy(f, flat_elem_of(f, pos), value)) {
				ret = -EBUSY; /* an overwrite, maybe this thread's */
				if (reentry_busy())
					break;
				cpu_relax();
				goto lost;
			}
		}
		if (mwseq_read_same(seq, s1)) {
			value_clear_lock(&f->map, value);
			ret = 0;
			break;
		}
lost:
		if (seq_read_give_up(&patience)) {
			ret = FLAT_COPY_STARVED;
			break;
		}
	}
	rcu_unlock();
	if (unlikely(ret == FLAT_COPY_STARVED))
		return flat_copy_locked(f, key, value, with_lock);
	return ret;
}

