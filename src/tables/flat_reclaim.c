/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat table's reclamation of deleted positions: WAIT -> QUEUED -> EMPTY
 * through one deferred callback at a time (f->rq, sync/handoff.h), or all at
 * once by an inserter that found no free position (flat_reclaim_sync).
 */
#include <stdlib.h>

#include "sync/backoff.h"
#include "tables/flat.h"
#include "tables/flat_lru.h"
#include "util/big_alloc.h"

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

/* Positions @m of bucket b turned EMPTY: a pool bucket's join @chain, for
 * the nodes' free list (one CAS for a whole reclamation, not one a node).
 * Returns how many. */
static uint32_t flat_freed(struct flat *f, uint32_t b, uint64_t m, struct freelist_chain *chain)
{
	uint32_t n = flat_count_of(m);

	if (b * FLAT_SLOTS >= f->pool_base)
		for (; m; m &= m - 1)
			freelist_chain_add(&f->node_free, chain,
					   b * FLAT_SLOTS + flat_first(m) - f->pool_base);
	return n;
}

/*
 * Wait mark g taken (cleared), if set: buckets g * FLAT_MARK_SPAN on may
 * hold WAIT slots.  A delete marks its bucket's group with a release store
 * after the slot's WAIT tag, and no locked instruction: this exchange
 * either reads that store, and then sees the tag, or comes before it in the
 * mark's order, and then the mark stays set for the next reclamation.  A
 * mark is never lost, though a delete may store it over a set one (a test
 * first would be: its load may pass its own tag store, see a mark about to
 * be taken, and skip).
 */
static bool flat_take_mark(struct flat *f, uint32_t g)
{
	return __atomic_load_n(&f->wait_marks[g], __ATOMIC_RELAXED) &&
	       __atomic_exchange_n(&f->wait_marks[g], 0, __ATOMIC_ACQ_REL);
}

/* The buckets of mark g: [*first, return). */
static uint32_t flat_mark_span(const struct flat *f, uint32_t g, uint32_t *first)
{
	uint32_t end = (g + 1) * FLAT_MARK_SPAN;

	*first = g * FLAT_MARK_SPAN;
	return end < f->n_buckets ? end : f->n_buckets;
}

/* rq owner: WAIT -> QUEUED in every marked bucket.  Returns the number of
 * slots moved. */
static uint32_t flat_queue_waiting(struct flat *f)
{
	uint32_t moved = 0, b, end;

	for (uint32_t g = 0; g * FLAT_MARK_SPAN < f->n_buckets; g++) {
		if (!flat_take_mark(f, g))
			continue;
		for (end = flat_mark_span(f, g, &b); b < end; b++) {
			uint32_t n = flat_count_of(
			    flat_retag_all(&f->buckets[b], FLAT_WAIT, FLAT_QUEUED));

			if (n) {
				__atomic_fetch_or(&f->queued_bits[b / 64], 1ULL << (b % 64),
						  __ATOMIC_RELAXED);
				moved += n;
			}
		}
	}
	return moved;
}

/* rq owner, after a grace period: QUEUED -> EMPTY.  Returns the number freed. */
static uint32_t flat_free_queued(struct flat *f)
{
	struct freelist_chain chain = FREELIST_CHAIN_EMPTY;
	uint32_t freed = 0;

	for (uint32_t w = 0; w < f->bits_words; w++) {
		uint64_t bits = __atomic_exchange_n(&f->queued_bits[w], 0, __ATOMIC_RELAXED);

		while (bits) {
			uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);

			freed += flat_freed(f, b,
					    flat_retag_all(&f->buckets[b], FLAT_QUEUED, FLAT_EMPTY),
					    &chain);
			bits &= bits - 1;
		}
	}
	freelist_push_chain(&f->node_free, &chain);
	return freed;
}

void flat_release(struct flat *f)
{
	freelist_destroy(&f->node_free);
	big_free(f->node_next);
	big_free(f->homes);
	free(f->queued_bits);
	free(f->wait_marks);
	if (f->dead_shards != f->count.shards)
		big_free(f->dead_shards);
	count_destroy(&f->count);
	flat_lru_destroy(f);
	big_free(f->elems);
	big_free(f->values_mem);
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
	if (handoff_freed(&f->rq)) {
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
	if (handoff_put(&f->rq))
		flat_release(f);
}

/*
 * Reclaim every deleted slot now, from an inserter outside any read-side
 * section that found no EMPTY slot.  One thread at a time: an inserter
 * that finds another at it goes on with what free positions are left (the
 * spare nodes) rather than wait out its grace period, which liburcu can
 * stretch to 10 ms and more (a reader seen in a section a hundred times
 * running makes it sleep 10 ms between looks).
 */
bool flat_reclaim_try(struct flat *f)
{
	uint32_t idle = 0, n = 0, freed = 0;

	if (!__atomic_compare_exchange_n(&f->sync_busy, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return false;
	/* Take WAIT and QUEUED slots (the latter from the callback, which then
	 * finds fewer to free); sync_bits marks their buckets. */
	for (uint32_t w = 0; w < f->bits_words; w++) {
		uint64_t queued = __atomic_exchange_n(&f->queued_bits[w], 0, __ATOMIC_ACQ_REL);
		uint64_t waiting = 0;
		uint32_t b, end;

		for (uint32_t g = w * (64 / FLAT_MARK_SPAN);
		     g < (w + 1) * (64 / FLAT_MARK_SPAN) && g * FLAT_MARK_SPAN < f->n_buckets; g++)
			if (flat_take_mark(f, g))
				for (end = flat_mark_span(f, g, &b); b < end; b++)
					waiting |= 1ULL << (b % 64);
		for (uint64_t bits = waiting | queued; bits; bits &= bits - 1) {
			uint32_t c = 0;

			b = w * 64 + (uint32_t)__builtin_ctzll(bits);
			if (waiting >> (b % 64) & 1)
				c += flat_count_of(
				    flat_retag_all(&f->buckets[b], FLAT_WAIT, FLAT_SYNCQ));
			if (queued >> (b % 64) & 1)
				c += flat_count_of(
				    flat_retag_all(&f->buckets[b], FLAT_QUEUED, FLAT_SYNCQ));
			if (c) {
				f->sync_bits[w] |= 1ULL << (b % 64);
				n += c;
			}
		}
	}
	if (n) {
		struct freelist_chain chain = FREELIST_CHAIN_EMPTY;

		rcu_synchronize();
		flat_stores_settle(f); /* lock-free overwrites: see flat_update.c */
		for (uint32_t w = 0; w < f->bits_words; w++) {
			uint64_t bits = f->sync_bits[w];

			f->sync_bits[w] = 0;
			for (; bits; bits &= bits - 1) {
				uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);

				freed += flat_freed(f, b,
						    flat_retag_all(&f->buckets[b], FLAT_SYNCQ,
								   FLAT_EMPTY),
						    &chain);
			}
		}
		freelist_push_chain(&f->node_free, &chain);
		/* What it frees, not what it took: an insert inside a read-side
		 * section may have reused some meanwhile (flat_reuse_dead). */
		__atomic_fetch_sub(&f->dead, (int32_t)freed, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&f->sync_busy, 0, __ATOMIC_RELEASE);
	return true;
}

void flat_reclaim_sync(struct flat *f)
{
	unsigned int spins = 0;

	if (flat_reclaim_try(f))
		return;
	/* Another thread's grace period serves this one too. */
	while (__atomic_load_n(&f->sync_busy, __ATOMIC_ACQUIRE))
		backoff(&spins);
}

void flat_kick(struct flat *f)
{
	if (handoff_busy(&f->rq) || !handoff_get_first(&f->rq))
		return;
	if (flat_queue_waiting(f))
		rcu_defer(&f->rcu, flat_reclaim_cb);
	else
		(void)handoff_put(&f->rq); /* no free meanwhile: the map is in use */
}
