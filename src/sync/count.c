/* SPDX-License-Identifier: BSD-2-Clause */
/* A map's element count: design in sync/count.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include <bpfmap.h>

#include "sync/spin_lock.h"
#include "sync/count.h"
#include "sync/backoff.h"
#include "util/big_alloc.h"
#include "util/cpu.h"
#include "util/test_hook.h"

static uint32_t count_shards_for(uint32_t max_entries)
{
	uint32_t n = cpu_shards();

	return n && max_entries / n >= COUNT_SHARD_MIN ? n : 0;
}

int count_init(struct count *c, uint32_t max_entries)
{
	uint32_t n = count_shards_for(max_entries);

	memset(c, 0, sizeof(*c));
	c->max = max_entries;
	if (!n)
		return 0;
	c->shards = big_zalloc(n * sizeof(*c->shards));
	if (!c->shards)
		return -ENOMEM;
	c->shard_mask = n - 1;
	return 0;
}

void count_destroy(struct count *c)
{
	big_free(c->shards);
	c->shards = NULL;
}

size_t count_mem(const struct count *c)
{
	return c->shards ? (c->shard_mask + 1) * sizeof(*c->shards) : 0;
}

static uint32_t count_credits(uint64_t w)
{
	return (uint32_t)w & ~COUNT_FROZEN;
}

/* Freeze every shard and move its credits to the global word (lock held). */
static void count_freeze(struct count *c)
{
	for (uint32_t i = 0; i <= c->shard_mask; i++) {
		struct count_shard *s = &c->shards[i];
		uint64_t w = __atomic_load_n(&s->word, __ATOMIC_RELAXED), frozen;

		do
			frozen = (w & ~0xffffffffULL) | COUNT_FROZEN;
		while (!__atomic_compare_exchange_n(&s->word, &w, frozen, false, __ATOMIC_SEQ_CST,
						    __ATOMIC_RELAXED));
		TEST_HOOK(HOOK_COUNT_STEAL, c);
		if (count_credits(w))
			__atomic_fetch_sub(&c->word, count_credits(w), __ATOMIC_SEQ_CST);
	}
}

/* Unfreeze every shard; none holds credits (lock held). */
static void count_thaw(struct count *c)
{
	for (uint32_t i = 0; i <= c->shard_mask; i++)
		__atomic_fetch_and(&c->shards[i].word, ~(uint64_t)COUNT_FROZEN, __ATOMIC_SEQ_CST);
}

/* The shards' words and the global word, read as one pass. */
static bool count_collect(const struct count *c, uint64_t *words, bool *busy)
{
	bool changed = false;

	*busy = false;
	for (uint32_t i = 0; i <= c->shard_mask; i++) {
		uint64_t w = __atomic_load_n(&c->shards[i].word, __ATOMIC_SEQ_CST);

		changed |= w != words[i];
		words[i] = w;
		*busy |= (w >> 32) != 0;
	}
	uint64_t g = __atomic_load_n(&c->word, __ATOMIC_SEQ_CST);

	changed |= g != words[c->shard_mask + 1];
	words[c->shard_mask + 1] = g;
	return changed;
}

/* Take one element from the global word if it has room (lock held). */
static bool count_take_one(struct count *c, uint32_t idx)
{
	uint64_t g = __atomic_load_n(&c->word, __ATOMIC_SEQ_CST);

	while ((uint32_t)g < c->max)
		if (__atomic_compare_exchange_n(&c->word, &g, g + 1, true, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_add(&c->shards[idx].word, COUNT_BUSY, __ATOMIC_SEQ_CST);
			return true;
		}
	return false;
}

static uint32_t count_insert_sharded(struct count *c, uint32_t idx)
{
	uint64_t words[64 + 1];
	unsigned int spins = 0;
	uint32_t ret = COUNT_FULL;
	bool busy;

	spin_lock_word(&c->lock);
	/* A chunk: one for this insert, the rest this shard's credits. */
	uint64_t g = __atomic_load_n(&c->word, __ATOMIC_SEQ_CST);

	while ((uint32_t)g + COUNT_CHUNK <= c->max) {
		if (__atomic_compare_exchange_n(&c->word, &g, g + COUNT_CHUNK, true,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			__atomic_fetch_add(&c->shards[idx].word, COUNT_CHUNK - 1 + COUNT_BUSY,
					   __ATOMIC_SEQ_CST);
			ret = idx;
			goto out;
		}
	}
	if (count_take_one(c, idx)) {
		ret = idx;
		goto out;
	}
	/* Near max_entries: every shard's credits back, and one of them. */
	count_freeze(c);
	memset(words, 0xff, sizeof(words));
	for (;;) {
		if (count_take_one(c, idx)) {
			ret = idx;
			break;
		}
		if (!count_collect(c, words, &busy) && !busy) {
			/* Two passes agreed, nothing busy: full at one instant.
			 * Say so tentatively, look once more, and only then
			 * make it count: a delete that began before the flag
			 * was visible did not see it to clear it, and may have
			 * given its room back meanwhile (the flag stayed set
			 * over free room until the next delete; set at once,
			 * it was seen over that room until the look).  A
			 * delete that begins later clears either state. */
			uint32_t tentative = COUNT_TENTATIVE;

			TEST_HOOK(HOOK_COUNT_FULL, c);
			__atomic_store_n(&c->exhausted, COUNT_TENTATIVE, __ATOMIC_SEQ_CST);
			if (!count_collect(c, words, &busy) && !busy &&
			    __atomic_compare_exchange_n(&c->exhausted, &tentative, COUNT_EXHAUSTED,
							false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
				break;
			__atomic_store_n(&c->exhausted, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		if (busy)
			backoff(&spins); /* an operation in flight */
	}
	count_thaw(c);
out:
	spin_unlock_word(&c->lock);
	return ret;
}

uint32_t count_insert_slow(struct count *c, uint32_t idx)
{
	unsigned int spins = 0;

	if (c->shards)
		return count_insert_sharded(c, idx);
	for (;;) {
		uint64_t w = __atomic_load_n(&c->word, __ATOMIC_SEQ_CST);

		if ((uint32_t)w < c->max) {
			if (__atomic_compare_exchange_n(&c->word, &w, w + 1 + COUNT_BUSY, true,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				return COUNT_GLOBAL;
			continue;
		}
		if (!(w >> 32))
			return COUNT_FULL; /* full, nothing in flight: exact */
		backoff(&spins); /* an operation in flight */
	}
}

/* A shard with more than two chunks of credits gives one back, busy on the
 * way (room neither the shard nor the global word shows). */
static void count_trim(struct count *c, struct count_shard *s, uint64_t w)
{
	if (!__atomic_compare_exchange_n(&s->word, &w, w - COUNT_CHUNK + COUNT_BUSY, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return; /* changed meanwhile: another time */
	__atomic_fetch_sub(&c->word, COUNT_CHUNK, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&s->word, COUNT_BUSY, __ATOMIC_SEQ_CST);
}

void count_give_back(struct count *c, uint32_t ticket)
{
	struct count_shard *s;
	uint64_t w;

	if (ticket == COUNT_GLOBAL) {
		__atomic_fetch_sub(&c->word, 1 + COUNT_BUSY, __ATOMIC_SEQ_CST);
		return;
	}
	s = &c->shards[ticket];
	w = __atomic_load_n(&s->word, __ATOMIC_RELAXED);
	for (;;) {
		if ((uint32_t)w & COUNT_FROZEN) {
			/* The room to the global word first: a collect that sees
			 * this operation done sees its room too. */
			__atomic_fetch_sub(&c->word, 1, __ATOMIC_SEQ_CST);
			__atomic_fetch_sub(&s->word, COUNT_BUSY, __ATOMIC_SEQ_CST);
			return;
		}
		if (__atomic_compare_exchange_n(&s->word, &w, w + 1 - COUNT_BUSY, true,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			break;
	}
	w += 1 - COUNT_BUSY;
	if (unlikely(count_credits(w) > 2 * COUNT_CHUNK))
		count_trim(c, s, w);
}

uint32_t count_elements(const struct count *c)
{
	int64_t n = (uint32_t)__atomic_load_n(&c->word, __ATOMIC_SEQ_CST);

	for (uint32_t i = 0; c->shards && i <= c->shard_mask; i++)
		n -= count_credits(__atomic_load_n(&c->shards[i].word, __ATOMIC_SEQ_CST));
	return (uint32_t)n;
}
