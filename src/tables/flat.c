/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH, preallocated (the flat layout): creation, position and
 * value writes, deletes, and the reclamation of deleted positions.  The per-key operations are
 * in flat_update.c, the lookups in flat_lookup.c; design notes in tables/flat.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sync/spin_lock.h"
#include "hash/sized_hash.h"
#include "tables/flat.h"
#include "util/big_alloc.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

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
void flat_set_tag(struct flat_bucket *bk, uint32_t i, uint32_t tag)
{
	uint64_t old = __atomic_load_n(&bk->tags, __ATOMIC_RELAXED), new;
	uint64_t mask = 0xffULL << (8 * i);

	do {
		new = (old & ~mask) | ((uint64_t)tag << (8 * i));
	} while (!__atomic_compare_exchange_n(&bk->tags, &old, new, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

int32_t flat_dead_flush(struct flat *f, struct count_shard *s)
{
	int32_t d = __atomic_exchange_n(&s->aux, 0, __ATOMIC_RELAXED);

	return __atomic_add_fetch(&f->dead, d, __ATOMIC_RELAXED);
}

int32_t flat_dead_total(const struct flat *f)
{
	int64_t d = __atomic_load_n(&f->dead, __ATOMIC_RELAXED);

	for (uint32_t i = 0; f->count.shards && i <= f->count.shard_mask; i++)
		d += __atomic_load_n(&f->count.shards[i].aux, __ATOMIC_RELAXED);
	return (int32_t)d;
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
void flat_store_value(const struct flat *f, uint32_t pos, const void *value)
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

void flat_fill(struct flat *f, uint32_t pos, uint32_t tag, const void *key, uint64_t small,
	       const void *value)
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
	flat_seq_enter(&bk->seq);
	/* The value before the key: lookups matching by key take a word key
	 * they see as live (flat.h, "Readers"). */
	flat_store_value(f, pos, value);
	if (map_has_lock(map))
		__atomic_store_n((uint32_t *)(void *)(flat_value_at(f, pos) + map->lock_off), 0,
				 __ATOMIC_RELEASE);
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
	if (tag != FLAT_BUSY)
		flat_set_tag(bk, pos % FLAT_SLOTS, tag);
	flat_seq_leave(&bk->seq);
}

/* ---- reclamation -------------------------------------------------------- */

/* f->rq: FLAT_RQ_OWNED while a reclamation callback is queued or runs (its
 * owner), plus FLAT_RQ_FREE once bpfmap_free has handed f to that callback. */
#define FLAT_RQ_OWNED 1u
#define FLAT_RQ_FREE 2u

/* Turn every byte equal to @from in bucket b's tags into @to; returns the
 * bytes turned, 0x80 in each (flat_match's form). */
static uint64_t flat_retag_all(struct flat_bucket *bk, uint32_t from, uint32_t to)
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
	return m;
}

static uint32_t flat_count_of(uint64_t m)
{
	return (uint32_t)__builtin_popcountll(m);
}

/* Positions @m of bucket b turned EMPTY: a pool bucket's go back to the
 * nodes' free list.  Returns how many. */
static uint32_t flat_freed(struct flat *f, uint32_t b, uint64_t m)
{
	uint32_t n = flat_count_of(m);

	if (b * FLAT_SLOTS >= f->pool_base)
		for (; m; m &= m - 1)
			freelist_push(&f->node_free, b * FLAT_SLOTS + flat_first(m) - f->pool_base);
	return n;
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
			uint32_t n = flat_count_of(flat_retag_all(&f->buckets[b], FLAT_WAIT,
								  FLAT_QUEUED));

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

			freed += flat_freed(f, b, flat_retag_all(&f->buckets[b], FLAT_QUEUED,
								  FLAT_EMPTY));
			bits &= bits - 1;
		}
	}
	return freed;
}

static void flat_release(struct flat *f)
{
	freelist_destroy(&f->node_free);
	big_free(f->node_next);
	big_free(f->homes);
	free(f->wait_bits);
	count_destroy(&f->count);
	big_free(f->elems);
	big_free(f->values);
	big_free(f->keys);
	big_free(f->buckets);
	big_free(f);
}

static void flat_reclaim_cb(struct rcu_head *head)
{
	struct flat *f = container_of(head, struct flat, rcu);
	uint32_t freed;
	int32_t dead;

	rcu_deferred_enter();
	if (__atomic_load_n(&f->rq, __ATOMIC_ACQUIRE) & FLAT_RQ_FREE) {
		/* bpfmap_free ran while this was queued and left f to us. */
		flat_release(f);
		rcu_deferred_exit();
		return;
	}
	flat_stores_settle(f); /* lock-free overwrites: see flat_update.c */
	freed = flat_free_queued(f);
	dead = __atomic_sub_fetch(&f->dead, (int32_t)freed, __ATOMIC_RELAXED);
	if (dead >= (int32_t)f->kick_at && flat_queue_waiting(f)) {
		/* Still owner (rq stays set): go round again.  f may be touched
		 * by the next callback from here on, not by this one. */
		rcu_defer(&f->rcu, flat_reclaim_cb);
		rcu_deferred_exit();
		return;
	}
	rcu_deferred_exit();
	/* The last access to f, unless bpfmap_free came meanwhile and handed
	 * f over (flat_free). */
	if (__atomic_exchange_n(&f->rq, 0, __ATOMIC_ACQ_REL) & FLAT_RQ_FREE)
		flat_release(f);
}

/*
 * Reclaim every deleted slot now, from an inserter outside any read-side
 * section that found no EMPTY slot.  One thread at a time; the others wait
 * for it and retry (its grace period served them too).
 */
void flat_reclaim_sync(struct flat *f)
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
			uint32_t c =
			    flat_count_of(flat_retag_all(&f->buckets[b], FLAT_WAIT, FLAT_SYNCQ)) +
			    flat_count_of(flat_retag_all(&f->buckets[b], FLAT_QUEUED, FLAT_SYNCQ));

			if (c) {
				f->sync_bits[w] |= 1ULL << (b % 64);
				n += c;
			}
		}
	}
	if (n) {
		urcu_bp_synchronize_rcu();
		rcu_deferred_enter(); /* TSan: after the readers it waited for */
		flat_stores_settle(f); /* lock-free overwrites: see flat_update.c */
		for (uint32_t w = 0; w < f->bits_words; w++) {
			uint64_t bits = f->sync_bits[w];

			f->sync_bits[w] = 0;
			for (; bits; bits &= bits - 1) {
				uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);

				freed += flat_freed(f, b, flat_retag_all(&f->buckets[b],
									  FLAT_SYNCQ, FLAT_EMPTY));
			}
		}
		/* What it frees, not what it took: an insert inside a read-side
		 * section may have reused some meanwhile (flat_reuse_dead). */
		__atomic_fetch_sub(&f->dead, (int32_t)freed, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&f->sync_busy, 0, __ATOMIC_RELEASE);
}

void flat_kick(struct flat *f)
{
	uint32_t idle = 0;

	if (__atomic_load_n(&f->rq, __ATOMIC_RELAXED) ||
	    !__atomic_compare_exchange_n(&f->rq, &idle, FLAT_RQ_OWNED, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (flat_queue_waiting(f))
		rcu_defer(&f->rcu, flat_reclaim_cb);
	else
		__atomic_store_n(&f->rq, 0, __ATOMIC_RELEASE);
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
bool flat_kill_locked(struct flat *f, uint32_t h, uint32_t pos, uint32_t prev)
{
	struct flat_bucket *bk = &f->buckets[pos / FLAT_SLOTS];
	uint32_t i = pos % FLAT_SLOTS, b = pos / FLAT_SLOTS;
	uint32_t ticket = count_delete_begin(&f->count); /* busy before the key goes */

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
	count_delete_end(&f->count, ticket);
	__atomic_fetch_or(&f->wait_bits[b / 64], 1ULL << (b % 64), __ATOMIC_RELEASE);
	return flat_dead_inc(f) >= (int32_t)f->kick_at &&
	       !__atomic_load_n(&f->rq, __ATOMIC_RELAXED);
}

/* ---- creation ----------------------------------------------------------- */

/*
 * A reclamation callback may be queued or running: it touches f until it
 * clears rq, its last access.  Rather than wait for it (liburcu runs
 * callbacks in batches ~10 ms apart, and waiting inside a read-side section
 * would never end), hand f over: whichever of the two sees the other's mark
 * releases f.  Nothing else changes rq now: no other thread uses the map.
 */
static void flat_free(struct bpfmap *map)
{
	struct flat *f = to_flat(map);

	if (!__atomic_fetch_or(&f->rq, FLAT_RQ_FREE, __ATOMIC_ACQ_REL))
		flat_release(f);
}

/*
 * Home buckets.  Keys of at most 8 bytes get one home slot per element: a
 * position holds a key and its value, and every one left empty costs them
 * (a full map's chains hold about 14% of its keys, from its buckets'
 * Poisson spread, so as many home slots stay empty); that keeps 8-byte keys
 * with 8-byte values within 24 bytes an element.  Longer keys' positions
 * are 6 bytes (an element index and the bucket's share), so they get 8/7 of
 * that, and fewer chains (about 9% of the keys).
 */
static uint64_t flat_homes_for(uint32_t max_entries, bool long_keys)
{
	uint64_t slots = long_keys ? ((uint64_t)max_entries * 8 + 6) / 7 : (uint64_t)max_entries;
	uint64_t n = (slots + FLAT_SLOTS - 1) / FLAT_SLOTS;

	return n ? n : 1;
}

/*
 * Word-key maps of two homes or more match by key (flat.h): pick the dead
 * words, 0 and a word of another home, and store them in every home slot
 * (calloc left 0 everywhere).  A second home is found in one or two tries
 * but for parameters that squeeze every 4-byte key into one home (a
 * multiplier below 2^32 / n_homes: odds of 2^-32 or so); such a map
 * matches by tags instead.
 */
static void flat_init_dead_words(struct flat *f, uint32_t ks)
{
	uint64_t mask = ks == 4 ? UINT32_MAX : UINT64_MAX;

	f->dead_word[0] = 0;
	f->dead_home = flat_home(f, flat_hash_kind(f, &f->dead_word[0], f->hash_kind));
	for (uint64_t i = 1; i <= 64; i++) {
		uint64_t w = (i * 0x9e3779b97f4a7c15ULL) & mask;

		if (flat_home(f, flat_hash_kind(f, &w, f->hash_kind)) != f->dead_home) {
			f->dead_word[1] = w;
			for (uint32_t s = 0; s < FLAT_SLOTS; s++)
				flat_store_small(f, f->dead_home * FLAT_SLOTS + s, ks, w);
			f->match_by_key = true;
			return;
		}
	}
}

static size_t flat_mem_usage(const struct bpfmap *map)
{
	const struct flat *f = to_flat(map);
	uint32_t hwm = __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
	uint32_t elems = __atomic_load_n(&f->next_elem, __ATOMIC_RELAXED);

	/* What the map has touched: the pool is address space until used. */
	return f->fixed_bytes + (size_t)ROUND_UP(hwm, FLAT_SLOTS) * f->node_bytes +
	       (size_t)elems * f->elem_bytes;
}

/*
 * Sizes.  Positions: n_homes * 8 home slots, then the pool's n_nodes (the
 * last pool bucket's slots past them stay BUSY for ever).  Keys of at most 8
 * bytes are stored per position, longer ones per element, of which there
 * are as many as positions; values per element too when keys are long or
 * values FLAT_VALUE_ELEM_MIN bytes and more, else per position.  The pool holds max_entries
 * nodes and spares, so that every element could be a node (a tiny map's
 * few homes); it is address space until used (big_zalloc maps it): nodes
 * are handed out from the free list, else in order.
 */
struct bpfmap *flat_alloc(const struct map_params *p, int *err)
{
	struct flat *f = big_zalloc(sizeof(*f)); /* 64-byte aligned: aligned members */
	uint64_t key_stride = p->key_size <= 4 ? 4 : ROUND_UP((uint64_t)p->key_size, 8);
	uint64_t value_stride = ROUND_UP((uint64_t)p->value_size, 8);
	uint64_t slot_size = key_stride + value_stride;
	bool long_keys = p->key_size > 8;
	/* Elements: positions (home slots, nodes) that no key uses then cost
	 * 4 bytes of index instead of a value slot each. */
	bool by_elem = long_keys || value_stride >= FLAT_VALUE_ELEM_MIN;
	uint64_t pos_bytes = long_keys ? sizeof(uint32_t)
				       : key_stride + (by_elem ? sizeof(uint32_t) : value_stride);
	uint64_t n_homes, n_nodes, n_buckets, n_pos, home_pos, spare;

	if (!f || slot_size > UINT32_MAX)
		goto nomem;
	n_homes = flat_homes_for(p->max_entries, long_keys);
	spare = FLAT_NODE_SPARE_BYTES / (slot_size + 12);
	spare = spare > FLAT_NODE_SPARE ? FLAT_NODE_SPARE : spare;
	spare = (spare < FLAT_NODE_SPARE_MIN ? FLAT_NODE_SPARE_MIN : spare) + p->max_entries / 32;
	n_nodes = (uint64_t)p->max_entries + spare;
	n_buckets = n_homes + (n_nodes + FLAT_SLOTS - 1) / FLAT_SLOTS;
	if (n_buckets >= UINT32_MAX / FLAT_SLOTS || slot_size * n_buckets > SIZE_MAX / 16)
		goto nomem;
	n_pos = n_buckets * FLAT_SLOTS;
	home_pos = n_homes * FLAT_SLOTS;
	f->n_homes = (uint32_t)n_homes;
	f->n_buckets = (uint32_t)n_buckets;
	f->pool_base = (uint32_t)home_pos;
	f->n_nodes = (uint32_t)n_nodes;
	f->node_soft_cap = (uint32_t)(p->max_entries / 4 + spare);
	f->key_stride = (uint32_t)key_stride;
	f->value_stride = (uint32_t)value_stride;
	f->bits_words = (f->n_buckets + 63) / 64;
	f->cursor_end = roundup_pow_of_two_u32(p->max_entries);
	/* Batch units (flat_iter.c): up to 8 a home, no more than the
	 * kernel's buckets. */
	f->batch_sub_bits = FLAT_BATCH_SUB_BITS;
	while (f->batch_sub_bits && (n_homes << f->batch_sub_bits) > f->cursor_end)
		f->batch_sub_bits--;
	/* Reclaim in batches: each costs a scan of the flagged buckets and a
	 * grace period, and what it waits for lengthens the chains. */
	f->kick_at = p->max_entries / 64 > 16 ? p->max_entries / 64 : 16;
	/* Far more than that: the reclamation lags (readers hold grace periods
	 * back), and inserts that would find room at home take it first. */
	f->sync_at = (uint32_t)(4 * (uint64_t)f->kick_at > spare ? 4 * (uint64_t)f->kick_at : spare);

	f->buckets = big_zalloc((size_t)n_buckets * sizeof(struct flat_bucket));
	f->homes = big_zalloc((size_t)n_homes * sizeof(struct flat_home));
	f->node_next = big_zalloc((size_t)n_nodes * sizeof(uint32_t));
	/* 63 bytes of slack: lookups load a bucket's keys a line at a time. */
	f->keys = big_zalloc((size_t)(n_pos * key_stride) + 63);
	f->values = big_zalloc((size_t)(n_pos * value_stride) + 63);
	if (!f->buckets || !f->homes || !f->node_next || !f->keys || !f->values)
		goto nomem;
	if (by_elem && !(f->elems = big_zalloc((size_t)n_pos * sizeof(uint32_t))))
		goto nomem;
	f->wait_bits = calloc(3 * (size_t)f->bits_words, sizeof(uint64_t));
	if (!f->wait_bits)
		goto nomem;
	freelist_init_on(&f->node_free, f->node_next, f->n_nodes);
	f->queued_bits = f->wait_bits + f->bits_words;
	f->sync_bits = f->queued_bits + f->bits_words;
	for (uint32_t h = 0; h < f->n_homes; h++)
		f->homes[h].chain = FLAT_NONE;
	for (uint64_t pos = home_pos + n_nodes; pos < n_pos; pos++)
		f->buckets[pos / FLAT_SLOTS].tags |= (uint64_t)FLAT_BUSY << (8 * (pos % FLAT_SLOTS));
	if (count_init(&f->count, p->max_entries))
		goto nomem;
	hash_params_init(&f->hp, p->map_flags & BPFMAP_F_ZERO_SEED);

	f->node_bytes = sizeof(struct flat_bucket) / FLAT_SLOTS + sizeof(uint32_t) +
			(uint32_t)pos_bytes;
	f->elem_bytes = long_keys ? (uint32_t)slot_size : by_elem ? (uint32_t)value_stride : 0;
	f->fixed_bytes = sizeof(*f) + (size_t)n_homes * (sizeof(struct flat_bucket) +
							 sizeof(struct flat_home)) +
			 (size_t)home_pos * pos_bytes +
			 3 * (size_t)f->bits_words * sizeof(uint64_t) + count_mem(&f->count);
	f->mul = f->hp.mul;
	f->fin = f->hp.fin;
	f->hash_kind = hash_kind_for_key_size(p->key_size);
	f->hash = hash_fn_for_kind(f->hash_kind);
	if ((f->hash_kind == HASH_U32 || f->hash_kind == HASH_U64) &&
	    f->n_homes >= FLAT_MATCH_BY_KEY_MIN)
		flat_init_dead_words(f, p->key_size);
	map_init_common(&f->map, p, &flat_ops,
			flat_lookup_for(f->hash_kind, p->key_size, f->value_stride,
					f->match_by_key && !f->elems));
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
