/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finding a key's position in the flat table (tables/flat.h), in its home
 * bucket or its chain: for writers under the home's lock, for lookups in a
 * read-side section or validated by the buckets' seqs.  A lookup (@lookup,
 * a constant) that would wait for a writer while its thread is marked
 * (sync/reentry.h) answers FLAT_WAIT_SELF instead: the writer may be the
 * operation its signal handler interrupted.
 */
#ifndef BPFMAP_TABLES_FLAT_FIND_H
#define BPFMAP_TABLES_FLAT_FIND_H

#include "tables/flat.h"

/* A lookup's answer instead of waiting on its own thread (above). */
#define FLAT_WAIT_SELF (FLAT_NONE - 1)

/*
 * The live node holding @key (tag @tag) in home h's chain, or FLAT_NONE.  In
 * a read-side section or under h's lock.  The filter first.  @by_key (word
 * keys in maps that match by key): a node's key word alone decides, as in
 * the home bucket, since a delete replaces a node's key with its home's
 * dead word before it unlinks it.  Otherwise each node's key, tag and next
 * are read inside its bucket's seq, and a match must be live.
 *
 * A node deleted and unlinked keeps its next (the rest of the chain it
 * left) until a grace period, so a walk standing on it goes on; but the
 * in-section reuse may relink a dead node into another chain at once.  A
 * walk that followed a link to it before and read it after would walk the
 * other chain and miss keys of its own: the reuse holds the map's moved seq
 * around the relinking (flat_update.c), and a walk that ends without a match
 * starts over if it moved.  So does one that matches by key word: another
 * home's chain holds that home's dead word in its deleted nodes, and the
 * dead word of every home but the dead home is key 0, the dead home's
 * (test_dead_word_hit).  In its own chain a walk never meets its own home's
 * dead word: no key of that home has it.  @lookup: see above.
 */
static ALWAYS_INLINE uint32_t flat_chain_find(const struct flat *f, uint32_t h, uint32_t tag,
					      const void *key, uint32_t ks, uint64_t small,
					      bool by_key, bool lookup)
{
	const struct flat_bucket *bk = f->buckets;
	uint32_t pos, moved;

restart:
	if (!flat_chain_may_hold(f, h, tag))
		return FLAT_NONE;
	if (!mwseq_read_begin_checked(&f->moved, &moved, lookup))
		return FLAT_WAIT_SELF;
	pos = flat_chain(f, h);
	while (pos != FLAT_NONE) {
		const uint32_t *seq = &bk[pos / FLAT_SLOTS].seq;
		uint32_t s1, next;
		bool eq;

		TEST_HOOK(HOOK_CHAIN_STEP, f);
		if (by_key) {
			if (flat_small_at(f, pos, ks) == small) {
				if (!mwseq_read_same(&f->moved, moved))
					goto restart;
				return pos;
			}
			pos = flat_node_next(f, pos);
			continue;
		}
		if (!mwseq_read_begin_checked(seq, &s1, lookup))
			return FLAT_WAIT_SELF;
		eq = flat_key_eq(f, pos, key, ks, small) && flat_tag_at(f, pos) == tag;
		next = flat_node_next(f, pos);
		if (!mwseq_read_same(seq, s1))
			goto restart;
		if (eq)
			return pos;
		pos = next;
	}
	if (!mwseq_read_same(&f->moved, moved))
		goto restart;
	return FLAT_NONE;
}

/*
 * The position (bucket * 8 + index) holding @key in home h, bucket or
 * chain, or FLAT_NONE.  Exact when the caller holds h's lock or is in a
 * read-side section (or the key fits a word, for the bucket); otherwise a
 * match must be validated by the seq.  Long keys are compared in place, and
 * a deleted slot may be reused at once (flat_reuse_dead) while the compare
 * reads it: a match counts only if no writer touched its bucket meanwhile.
 * @lookup: see above.
 */
static ALWAYS_INLINE uint32_t flat_find(const struct flat *f, uint32_t h, uint32_t tag,
					const void *key, uint32_t ks, uint64_t small, bool lookup)
{
	const struct flat_bucket *bk = &f->buckets[h];
	uint64_t bcast = tag * FLAT_BYTES_LO;

	for (;;) {
		uint32_t s1 = 0;
		uint64_t m;
		bool again = false;

		if (ks > 8 && !mwseq_read_begin_checked(&bk->seq, &s1, lookup))
			return FLAT_WAIT_SELF;
		m = flat_match(__atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE), bcast);

		for (; m; m &= m - 1) {
			uint32_t pos = h * FLAT_SLOTS + flat_first(m);

			if (!flat_key_eq(f, pos, key, ks, small))
				continue;
			if (ks <= 8 || mwseq_read_same(&bk->seq, s1))
				return pos;
			again = true; /* rewritten during the compare */
			break;
		}
		if (!again)
			break;
	}
	return flat_chain_find(f, h, tag, key, ks, small, ks <= 8 && f->match_by_key, lookup);
}

#endif
