/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A map's element count against max_entries, with an exact -E2BIG, shared by
 * both tables.
 *
 * Exactness: an insert answers "full" only at an instant when the map holds
 * max_entries elements and no insert or delete is half done.  Every insert
 * and delete is bracketed: count_insert_begin() reserves room and counts the
 * insert busy until its key is visible (count_insert_end); a delete counts
 * busy from before its key disappears (count_delete_begin) until its room is
 * back (count_delete_end).  So a thread that has seen a delete's effect (the
 * key gone) never gets -E2BIG for want of that room, and one that got -E2BIG
 * never finds a key missing that an insert in flight had counted.
 *
 * Small maps: one 64-bit word, elements (reserved or live) in the low half,
 * busy operations in the high half.  "Full" is one load: elements >=
 * max_entries with none busy; otherwise an insert that finds no room waits
 * for the busy ones to end (they are a few instructions under a bucket lock).
 *
 * Large maps (max_entries / shards >= COUNT_SHARD_MIN): each CPU's shard, on
 * a line of its own, holds credits -- room taken from the global word in
 * chunks of COUNT_CHUNK, and the room of its deletes -- and its own busy
 * count, so inserts and deletes on different CPUs do not pass one line back
 * and forth.  The global word then counts elements plus every shard's
 * credits.  The slow path (no credit here) runs under the count's lock:
 * take a chunk, else one element, else freeze every shard (no credit can
 * be taken or added while frozen; deletes then give their room to the global
 * word), gather the credits, and take one if any; with none, read every
 * shard and the global word twice until both reads agree with no operation
 * busy: then the map was full at one instant in between, and "exhausted"
 * records it, tentatively until one more read agrees.  While exhausted,
 * inserts answer -E2BIG without the lock (a delete clears it before its key
 * goes); the full-update benchmark's failed inserts stay one load.
 */
#ifndef BPFMAP_SYNC_COUNT_H
#define BPFMAP_SYNC_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/compiler.h"
#include "util/cpu.h"

#define COUNT_CHUNK 16	       /* credits a shard takes at once */
#define COUNT_SHARD_MIN 1024u  /* entries per shard from which a count is sharded */
#define COUNT_BUSY (1ULL << 32) /* one busy operation, in a word's high half */
#define COUNT_FROZEN 0x80000000u /* a shard's credits are frozen (bit 31) */
#define COUNT_FULL UINT32_MAX	 /* count_insert_begin: no room */
#define COUNT_GLOBAL (UINT32_MAX - 1) /* the ticket of an unsharded count */
#define COUNT_TENTATIVE 1u /* count.exhausted: being checked, not to be trusted */
#define COUNT_EXHAUSTED 2u /* count.exhausted: full (a delete clears it first) */

struct count_shard {
	uint64_t word; /* atomic: credits | COUNT_FROZEN (low half), busy (high half) */
	int32_t aux;   /* atomic: the table's own per-CPU counter (flat: dead slots) */
} __attribute__((aligned(64)));

struct count {
	uint64_t word; /* atomic: elements (+ shards' credits) low, busy (unsharded) high */
	uint32_t max;
	uint32_t exhausted; /* atomic, sharded: COUNT_EXHAUSTED when the slow path saw the
			     * map full and quiescent, COUNT_TENTATIVE while it checks */
	uint32_t lock;	    /* sharded: the slow path's */
	uint32_t shard_mask;
	struct count_shard *shards; /* NULL: unsharded */
};

/* 0, or -ENOMEM (the shards). */
int count_init(struct count *c, uint32_t max_entries);
void count_destroy(struct count *c);
size_t count_mem(const struct count *c);

uint32_t count_insert_slow(struct count *c, uint32_t idx);

/*
 * Room for one more element: a ticket for count_insert_end(), or COUNT_FULL
 * (-E2BIG, exact).  May wait for inserts and deletes in flight.
 */
static ALWAYS_INLINE uint32_t count_insert_begin(struct count *c)
{
	if (!c->shards) {
		uint64_t w = __atomic_load_n(&c->word, __ATOMIC_RELAXED);

		while ((uint32_t)w < c->max)
			if (__atomic_compare_exchange_n(&c->word, &w, w + 1 + COUNT_BUSY, true,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				return COUNT_GLOBAL;
		return count_insert_slow(c, COUNT_GLOBAL);
	}
	if (__atomic_load_n(&c->exhausted, __ATOMIC_SEQ_CST) == COUNT_EXHAUSTED)
		return COUNT_FULL;
	uint32_t idx = cpu_current() & c->shard_mask;
	struct count_shard *s = &c->shards[idx];
	uint64_t w = __atomic_load_n(&s->word, __ATOMIC_RELAXED);

	while ((uint32_t)w && !((uint32_t)w & COUNT_FROZEN))
		if (__atomic_compare_exchange_n(&s->word, &w, w - 1 + COUNT_BUSY, true,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return idx;
	return count_insert_slow(c, idx);
}

void count_give_back(struct count *c, uint32_t ticket);

/* The insert of @ticket is visible (@inserted), or gave up (its room back). */
static ALWAYS_INLINE void count_insert_end(struct count *c, uint32_t ticket, bool inserted)
{
	if (!inserted) {
		count_give_back(c, ticket);
		return;
	}
	__atomic_fetch_sub(ticket == COUNT_GLOBAL ? &c->word : &c->shards[ticket].word,
			   COUNT_BUSY, __ATOMIC_SEQ_CST);
}

/* Before a delete makes its key disappear: a ticket for count_delete_end(). */
static ALWAYS_INLINE uint32_t count_delete_begin(struct count *c)
{
	uint32_t idx;

	if (!c->shards) {
		__atomic_fetch_add(&c->word, COUNT_BUSY, __ATOMIC_SEQ_CST);
		return COUNT_GLOBAL;
	}
	idx = cpu_current() & c->shard_mask;
	__atomic_fetch_add(&c->shards[idx].word, COUNT_BUSY, __ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&c->exhausted, __ATOMIC_SEQ_CST)))
		__atomic_store_n(&c->exhausted, 0, __ATOMIC_SEQ_CST);
	return idx;
}

/* The delete's key is gone: its room back. */
static ALWAYS_INLINE void count_delete_end(struct count *c, uint32_t ticket)
{
	count_give_back(c, ticket);
}

/*
 * Lock-free: is the map full, with no insert or delete in flight, at the
 * instant of the call?  May say false when it is (the caller then takes the
 * slow path); never true otherwise.
 */
static ALWAYS_INLINE bool count_full_quiescent(const struct count *c)
{
	if (!c->shards) {
		uint64_t w = __atomic_load_n(&c->word, __ATOMIC_SEQ_CST);

		return (uint32_t)w >= c->max && !(w >> 32);
	}
	return __atomic_load_n(&c->exhausted, __ATOMIC_SEQ_CST) == COUNT_EXHAUSTED;
}

/*
 * An evicting map's room, handed from an eviction to the insert it makes
 * room for: the victim left without a delete's ticket, so the count still
 * counts it, and the insert takes no ticket and ends none (COUNT_CREDIT
 * stands for its ticket).  No other insert can take the room meanwhile.
 */
#define COUNT_CREDIT (COUNT_GLOBAL - 1)

/* A credit that its insert did not use (the key turned up meanwhile): the
 * victim's room back. */
static ALWAYS_INLINE void count_credit_give_back(struct count *c)
{
	count_delete_end(c, count_delete_begin(c));
}

/* Elements, for mem_usage and tests: exact when no operation is in flight. */
uint32_t count_elements(const struct count *c);

#endif
