/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Eviction for the chained table (LRU_HASH, LRU_PERCPU_HASH): which element
 * a full map gives up for a new key.
 *
 * Every linked element of an evicting map is on one LRU list, one list per
 * CPU (the inserting thread's), each with its own lock, so that inserts on
 * different CPUs never share a lock or a line.  A list is two FIFO queues,
 * as in S3-FIFO (Yang et al., SOSP 2023): new elements join the small
 * probation queue; an eviction takes from it while it holds more than
 * CHAIN_LRU_NEW_PERCENT of the list, else from the main queue.  A
 * program-view lookup, and an update of a present key, raise the element's
 * reference count (saturating at CHAIN_LRU_REF_MAX, one relaxed store, and
 * none once saturated); syscall lookups leave it alone, as the kernel's do.  At the head of the
 * probation queue, an element that was used moves to the main queue and
 * one that was not is the victim, so keys used once (a scan, a one-off
 * flow) go before they can push out the keys in use; at the head of the
 * main queue, a used element goes round again with its count lowered by
 * one (CLOCK with a counter), an unused one is the victim.  On the lru-hit
 * benchmark's Zipf stream, with and without a scan, that keeps more hits
 * than an exact LRU and than the kernel's LRU.
 *
 * An insert into a full map (the exact count says so, sync/count.h; a map
 * with room never evicts) evicts one element, from its own CPU's list:
 * evicting where it inserts keeps each list's lines on one CPU.  Every
 * CHAIN_LRU_LOOK_EVERY-th eviction (or when its own list is empty, or its
 * last comparison took from the other list) it compares with another list
 * (round robin) and takes from that one if its oldest element is half as
 * old again as its own list's; that walk stops
 * at an element younger than the own list's oldest, so the two behave as
 * one queue: entries inserted on an idle CPU age like the others, and no
 * CPU holds free room the others cannot use (the kernel's per-CPU free
 * lists evict early).  The ages come from one clock (util/clock.h).  A walk
 * looks at each element once, counted against the queue it was in when the
 * walk began, and at CHAIN_LRU_SCAN elements at most; a walk that finds
 * nothing goes on to the other lists, every list is walked twice, and only
 * then does a last walk take the oldest element (a new one first) whatever
 * its count.  So a victim is found in bounded time whatever the map holds.
 * The victim's room passes to the insert without touching the count.
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

#include "sync/count.h"
#include "tables/chain.h"

#define CHAIN_LRU_REF_MAX 3
#define CHAIN_LRU_SCAN 256

/* An evicting map's per-element record, after the value. */
/* A list's two queues, and the share of new elements past which an
 * eviction takes from the new ones. */
#define CHAIN_LRU_NEW 0
#define CHAIN_LRU_MAIN 1
#define CHAIN_LRU_NEW_PERCENT 10

struct chain_lru_tag {
	uint64_t stamp; /* atomic: clock_ticks() of its insert or last second chance */
	uint16_t list;  /* the LRU list it is on */
	uint8_t ref;    /* atomic: raised by program-view lookups and updates */
	uint8_t queue;  /* CHAIN_LRU_NEW or CHAIN_LRU_MAIN */
	uint8_t pad_[4];
};

struct chain_lru_list {
	uint32_t lock;
	uint32_t n[2];                /* atomic: each queue's elements */
	/* atomic, per-CPU lists: inserts admitted to the list (against its
	 * cap, with n) and not yet on it: chain_lru_reserve to chain_lru_add,
	 * or chain_lru_unreserve. */
	uint32_t reserved;
	struct chain_elem *head[2];  /* atomic: each queue's oldest */
	/* atomic: this list's CPU took its last victim from another list,
	 * older: it compares again at its next eviction (chain_lru_evict). */
	uint8_t steal;
	char pad_[35];
};

static ALWAYS_INLINE struct chain_lru_tag *chain_lru_tag(const struct chain *c,
							 const struct chain_elem *e)
{
	return (struct chain_lru_tag *)(void *)((char *)e->data + c->lru_off);
}

/* A program-view lookup's mark, or an update's. */
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
 * drops its lock, evicts (chain_lru_evict) and tries again.  With *@credit
 * (an eviction's room) COUNT_CREDIT (sync/count.h), *@credit cleared, and
 * with per-CPU lists the shortest list if the own one is full. */
uint32_t chain_lru_reserve(struct chain *c, bool *credit, uint32_t *list);

/* A reserved insert that failed (no memory): its place on list @list back. */
void chain_lru_unreserve(struct chain *c, uint32_t list);

/* Evict one element, no bucket lock held (the victim's is only tried: the
 * list lock is held then); true when one went, and the caller then holds
 * its room as a credit (the count was not decremented); false when none
 * could be taken (every candidate's bucket busy, or the lists empty while
 * inserts are in flight).  With @take the victim is retired and unlinked
 * but not queued for reclamation: *@take is the caller's to reuse
 * (chain_reuses) or to queue (chain_retire_unlinked).  Per-CPU lists
 * evict from the calling CPU's own list, and then, with @anywhere, from
 * the others too.  @if_full: only while the map (per-CPU lists: the own
 * list) is full, else false, the room a delete made meanwhile being the
 * insert's; without it, an insert that found no memory inside a section
 * makes some. */
bool chain_lru_evict(struct chain *c, struct chain_elem **take, bool anywhere, bool if_full);

#endif
