/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Eviction for the chained table (LRU_HASH, LRU_PERCPU_HASH): which element
 * a full map gives up for a new key.
 *
 * Every linked element of an evicting map is on one LRU list: a FIFO, in
 * the order its elements were inserted, one list per CPU (the inserting
 * thread's), each with its own lock, so that inserts on different CPUs
 * never share a lock or a line.  A program-view lookup raises the
 * element's reference count (saturating at CHAIN_LRU_REF_MAX, one relaxed
 * store, and none once saturated); syscall lookups leave it alone, as the
 * kernel's do.
 *
 * An insert into a full map (the exact count says so, sync/count.h; a map
 * with room never evicts) evicts one element: it takes the list whose
 * oldest element is older, of its own CPU's and one other (round robin),
 * and walks that list from its oldest: an element with a reference count
 * goes to the back with its count lowered by one (a second chance, and a
 * third for one referenced often: CLOCK with a counter), the first without
 * one is the victim.  One walk looks at each element once at most (a short
 * list of hot keys must not be turned over until their counts run out) and
 * at CHAIN_LRU_SCAN elements; a walk that finds nothing tries the other
 * lists, and only when every list is hot does a last walk take the oldest
 * element whatever its count.  So a victim is found in bounded time
 * whatever the map holds.  That is an LRU
 * that stays LRU across CPUs: the lists' heads are compared by the time of
 * their last insert or second chance (util/clock.h; a tie goes to the
 * longer list), so one CPU's stale
 * entries do not outlive another's fresh ones, and no CPU holds free room
 * the others cannot use (the kernel's per-CPU free lists evict early).
 *
 * BPFMAP_F_NO_COMMON_LRU asks for the kernel's per-CPU lists: each CPU's
 * list then holds at most max_entries / CPUs elements, and an insert whose
 * CPU's list is full evicts from that list, as the kernel's do, even while
 * other CPUs' lists have room.
 *
 * Locks: bucket lock, then list lock.  An insert that finds the map full
 * drops its bucket's lock and evicts before it tries again (the kernel too
 * takes its node before the bucket lock); the eviction holds the list's
 * lock, so it only tries the victim's bucket lock, and a victim whose
 * bucket is busy goes to the back, as a referenced one does.
 */
#ifndef BPFMAP_TABLES_CHAIN_LRU_H
#define BPFMAP_TABLES_CHAIN_LRU_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/chain.h"

#define CHAIN_LRU_REF_MAX 3
#define CHAIN_LRU_SCAN 256

/* An evicting map's per-element record, after the value. */
struct chain_lru_tag {
	uint64_t stamp; /* atomic: clock_ticks() of its insert or last second chance */
	uint16_t list;  /* the LRU list it is on */
	uint8_t ref;    /* atomic: raised by program-view lookups */
	uint8_t pad_[5];
};

struct chain_lru_list {
	uint32_t lock;
	uint32_t n;
	struct chain_elem *head; /* the oldest; circular through lru.prev/next */
	char pad_[48];
};

static ALWAYS_INLINE struct chain_lru_tag *chain_lru_tag(const struct chain *c,
							 const struct chain_elem *e)
{
	return (struct chain_lru_tag *)(void *)((char *)e->data + c->lru_off);
}

/* A program-view lookup's mark. */
static ALWAYS_INLINE void chain_lru_touch(const struct chain *c, const struct chain_elem *e)
{
	struct chain_lru_tag *t = chain_lru_tag(c, e);
	uint8_t r = __atomic_load_n(&t->ref, __ATOMIC_RELAXED);

	if (r < CHAIN_LRU_REF_MAX)
		__atomic_store_n(&t->ref, (uint8_t)(r + 1), __ATOMIC_RELAXED);
}

/* The lists of an evicting map (@per_cpu: BPFMAP_F_NO_COMMON_LRU, each
 * CPU's list holding at most max_entries / CPUs); 0 or -ENOMEM. */
int chain_lru_init(struct chain *c, bool per_cpu);
void chain_lru_destroy(struct chain *c);

/* A freshly linked element joins list @list, the one chain_lru_reserve
 * chose (bucket lock held). */
void chain_lru_add(struct chain *c, struct chain_elem *e, uint32_t list);

/* Unlink @e (predecessor link @link) from its locked bucket: off its LRU
 * list first in an evicting map, then chain_unlink_locked. */
void chain_unlink_elem(struct chain *c, struct chain_elem **link, struct chain_elem *e);

/* An insert's ticket (count_insert_begin) in an evicting map, its bucket
 * locked, and in *@list the list the element will join (the calling CPU's);
 * COUNT_FULL when the map (per-CPU lists: that list) is full: the caller
 * drops its lock, evicts (chain_lru_evict) and tries again. */
uint32_t chain_lru_reserve(struct chain *c, uint32_t *list);

/* Evict one element, no bucket lock held (the victim's is only tried: the
 * list lock is held then); false when none could be taken (every
 * candidate's bucket busy, or the lists empty while inserts are in flight). */
bool chain_lru_evict(struct chain *c);

#endif
