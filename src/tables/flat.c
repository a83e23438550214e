/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat table's positions: their locks, tags, keys and values, the unlink
 * of a deleted one, and the chain walk the word-key lookups share.  The
 * invariants are in tables/flat.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sync/spin_lock.h"
#include "hash/sized_hash.h"
#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/flat_lru.h"
#include "tables/value.h"
#include "util/big_alloc.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

int32_t flat_dead_flush(struct flat *f, struct count_shard *s)
{
	int32_t d = __atomic_exchange_n(&s->aux, 0, __ATOMIC_RELAXED);

	return __atomic_add_fetch(&f->dead, d, __ATOMIC_RELAXED);
}

int32_t flat_dead_total(const struct flat *f)
{
	int64_t d = __atomic_load_n(&f->dead, __ATOMIC_RELAXED);

	for (uint32_t i = 0; f->dead_shards && i <= f->dead_mask; i++)
		d += __atomic_load_n(&f->dead_shards[i].aux, __ATOMIC_RELAXED);
	return (int32_t)d;
}

/* ---- values ------------------------------------------------------------- */

bool flat_copy_value_locked_out(const struct flat *f, uint32_t pos, void *dst, bool with_lock)
{
	const struct bpfmap *map = &f->map;

	if (!with_lock)
		flat_value_out(f, flat_elem_of(f, pos), dst);
	else if (!value_copy_out_locked(map, dst, flat_value_at(f, pos), true))
		return false;
	value_clear_lock(map, dst);
	return true;
}

/* Store @value in the slot's value, never touching the spin lock word. */
void flat_store_value(const struct flat *f, uint32_t pos, const void *value,
		      const struct value_part *part, bool fresh)
{
	if (f->cpu_region)
		value_pcpu_in(&f->map, flat_value_at(f, pos), f->cpu_region, value, part, fresh);
	else
		value_store(&f->map, flat_value_at(f, pos), value);
}

void flat_fill(struct flat *f, uint32_t pos, uint32_t tag, const void *key, uint64_t small,
	       const void *value, const struct value_part *part, bool unseen)
{
	const struct bpfmap *map = &f->map;
	struct flat_bucket *bk = &f->buckets[pos / FLAT_SLOTS];
	char *s;
	uint64_t *kw;

	/* A position's first fill takes the next element (long keys, big
	 * values): a map
	 * filled in some order lays its keys out in that order.  The tag's
	 * release (or the chain's link) publishes the index with the key. */
	if (f->elems && !__atomic_load_n(&f->elems[pos], __ATOMIC_RELAXED))
		__atomic_store_n(&f->elems[pos],
				 __atomic_fetch_add(&f->next_elem, 1, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
	s = flat_key_at(f, pos);
	kw = (uint64_t *)(void *)s;
	if (!unseen)
		mwseq_write_begin(&bk->seq);
	/* The value before the key: lookups matching by key take a word key
	 * they see as live (flat.h, "Readers").  Its spin lock word stays as
	 * it was: even, unless the deleted key's holder (a program, or an
	 * F_LOCK copy-out, which checks its key after) still holds it as
	 * flat_reuse_dead fills the position at once.  Zeroed, it let the new
	 * key's first holder in beside that one, whose release then freed the
	 * new holder's hold. */
	flat_store_value(f, pos, value, part, true);
	if (map->key_size <= 8) {
		flat_store_small(f, pos, map->key_size, small);
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
	if (f->lru)
		flat_lru_insert(f, pos);
	if (tag != FLAT_BUSY)
		flat_set_tag(bk, pos % FLAT_SLOTS, tag);
	if (!unseen)
		mwseq_write_end(&bk->seq);
}

uint32_t flat_chain_prev(const struct flat *f, uint32_t h, uint32_t pos)
{
	uint32_t prev = FLAT_NONE;

	for (uint32_t n = flat_chain(f, h); n != pos; n = flat_node_next(f, n))
		prev = n;
	return prev;
}

/*
 * The delete.  A home slot turns WAIT at once.  A node is hidden first
 * (BUSY: no walk matches it, and neither the reclaimers nor the in-section
 * reuse take it), then unlinked, and only then WAIT: the reuse of a WAIT
 * node relinks it elsewhere, which must not race with this unlink.  It
 * keeps its next, so that a walk standing on it goes on along the chain.
 */
bool flat_kill_locked(struct flat *f, uint32_t h, uint32_t pos, uint32_t prev,
		      uint32_t *evicted)
{
	struct flat_bucket *bk = &f->buckets[pos / FLAT_SLOTS];
	uint32_t i = pos % FLAT_SLOTS, b = pos / FLAT_SLOTS;
	/* busy before the key goes */
	uint32_t ticket = evicted ? COUNT_CREDIT : count_delete_begin(&f->count);

	/* Out of the queues while the position is still live: once dead, an
	 * in-section reuse under another home's lock (or a reclamation) may
	 * fill it, and the state cleared then would be the new element's. */
	if (f->lru && flat_lru_delete(f, pos, evicted != NULL))
		*evicted |= FLAT_EVICT_SMALL;
	if (!flat_is_node(f, pos)) {
		flat_set_tag(bk, i, FLAT_WAIT);
		if (f->match_by_key)
			/* Out of reach of the lookups that match by key (flat.h).
			 * No seq: the walks that copy keys out check the tag
			 * again after the key (flat_iter.c), and a bucket seq
			 * here cost 13% of htab-mem's batch_add_batch_del. */
			flat_store_small(f, pos, f->map.key_size, flat_dead_word(f, b));
		TEST_HOOK(HOOK_DELETE_HIDDEN, f);
	} else {
		uint32_t next = __atomic_load_n(&f->node_next[pos - f->pool_base], __ATOMIC_RELAXED);

		flat_set_tag(bk, i, FLAT_BUSY);
		if (f->match_by_key) /* out of reach of the walks that match by key */
			flat_store_small(f, pos, f->map.key_size, flat_dead_word(f, h));
		TEST_HOOK(HOOK_DELETE_HIDDEN, f);
		uint64_t filter = 0;

		if (prev == FLAT_NONE)
			__atomic_store_n(&f->homes[h].chain, next, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&f->node_next[prev - f->pool_base], next, __ATOMIC_RELEASE);
		flat_set_tag(bk, i, FLAT_WAIT);
		for (uint32_t n = flat_chain(f, h); n != FLAT_NONE; n = flat_node_next(f, n))
			filter |= flat_filter_bit(flat_tag_at(f, n));
		__atomic_store_n(&f->homes[h].filter, filter, __ATOMIC_RELEASE);
	}
	TEST_HOOK(HOOK_DELETE_DEAD, &pos);
	if (ticket != COUNT_CREDIT)
		count_delete_end(&f->count, ticket);
	/* After the WAIT tag: flat_take_mark says why no mark is lost. */
	__atomic_store_n(&f->wait_marks[b / FLAT_MARK_SPAN], 1, __ATOMIC_RELEASE);
	return flat_dead_inc(f) >= (int32_t)f->kick_at && !handoff_busy(&f->rq);
}

/* A word key's lookup past its home bucket (flat_words.h). */
__attribute__((noinline)) void *flat_lookup_word_far(struct flat *f, uint64_t hash, uint32_t ks,
						     uint64_t small)
{
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t pos = flat_chain_find(f, pl.home, pl.tag, NULL, ks, small, true, true);

	if (unlikely(pos == FLAT_WAIT_SELF))
		return map_lookup_busy();
	return pos != FLAT_NONE ? flat_value_at(f, pos) : map_lookup_miss();
}

/* The same for an evicting map's lookups, which mark what they find. */
__attribute__((noinline)) void *flat_lookup_word_far_lru(struct flat *f, uint64_t hash,
							 uint32_t ks, uint64_t small)
{
	void *v = flat_lookup_word_far(f, hash, ks, small);

	if (v)
		flat_lru_touch(f->lru, v);
	return v;
}

/* The same for a per-CPU map: the calling CPU's slot (flat_percpu.c). */
__attribute__((noinline)) void *flat_lookup_word_far_pcpu(struct flat *f, uint64_t hash,
							  uint32_t ks, uint64_t small, bool lru)
{
	char *v = lru ? flat_lookup_word_far_lru(f, hash, ks, small)
		      : flat_lookup_word_far(f, hash, ks, small);

	return v ? flat_pcpu_here(f, v, false) : NULL;
}
