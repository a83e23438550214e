/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Eviction for the flat table (LRU_HASH with the common LRU): which element
 * a full map gives up for a new key.  The policy is the chained table's
 * (tables/chain_lru.h): S3-FIFO (Yang et al., SOSP 2023), two queues.  New
 * elements join the small probation queue, in insertion order; an eviction
 * takes from it while it holds more than FLAT_LRU_SMALL_PERCENT of the map,
 * else from the main queue.  At the head of the small queue an element that
 * a program-view lookup or an update used since its insert (the kernel's
 * marks: its syscall lookups mark nothing) moves to the main queue, one
 * that was not used is the victim, so keys used once (a scan, a one-off
 * flow) go before they can push out the keys in use.  The main queue is a
 * CLOCK over the table's positions: a used element loses its mark and stays,
 * an unused one is the victim.
 *
 * What it costs per element, since a flat map's element is 16 bytes of key
 * and value plus about 6 of table: a byte of state, and half a byte of
 * ring.
 *  - State, per value index (the position, or its element where the table
 *    has elements): the mark (REF, set by program-view lookups and by
 *    updates of a present key: one load
 *    and, when clear, one atomic or), SMALL (in the small queue), and a
 *    2-bit generation, raised at each insert into the position.  A byte, not
 *    four bits: the mark is then one compare with memory in the lookups,
 *    which four bits made a fifth slower than HASH's (eight instructions
 *    more on a path of about thirty).
 *  - The ring holds (position, generation) in insertion order.  A position
 *    deleted and filled again is in the ring twice; the generation tells the
 *    stale entry, which an eviction drops.  The ring holds an eighth of
 *    max_entries and 4096 more: in a full map evictions keep the small queue
 *    at its 10%.  When the ring is full, its stale entries are squeezed out,
 *    the order of the others kept; if more than 7/8 of it is still live (a
 *    map filling up, or one with room, gathers more new elements than
 *    that), its oldest elements move on to the main queue, with their
 *    marks.  A squeeze frees an eighth of the ring at least, so it costs a
 *    few entries per insert.
 *
 * Per CPU (struct flat_lru_cpu), so that two CPUs inserting do not pass
 * the LRU's lock and ring to and fro at every insert: new ring entries wait
 * in a buffer (FLAT_LRU_PEND) and join the ring a buffer at a time, and an
 * eviction picks FLAT_LRU_CAND victims at once and takes them one at a
 * time.  The LRU's lock is then taken about once per eight inserts, not
 * twice per insert.  A victim picked unused but used by the time its turn
 * comes is not taken: it moves on to the main queue as a pick would have
 * done.  An element in a buffer, or a CPU's small victim, is not in the
 * ring.  A pick that finds no victim first flushes every CPU's buffer and
 * puts its small victims back, so a map never stalls on them; and each
 * CPU's pick of victims does the same to one other CPU if that one has
 * picked none for FLAT_LRU_IDLE picks, so that what an idle CPU holds ages
 * like the rest.  Maps of
 * fewer than FLAT_LRU_PEND_MIN elements per CPU keep none of this (their
 * order is then the exact insertion order).
 *
 * Locks: the home's lock, then the CPU's, then the LRU's; the LRU's holder
 * only tries CPUs' locks.  An insert evicts (flat_lru_evict)
 * holding no home lock: before it takes its own when its lock-free probe saw
 * the key absent and the map full, else after finding the map full under
 * it, as the chained table's inserts do.  The eviction picks a victim under
 * the LRU's lock, drops it, and takes the victim's home lock to delete it,
 * after checking that the position still holds the element it picked.
 * Each pick looks at FLAT_LRU_SCAN entries at most before it takes the
 * oldest whatever its mark, so a victim is found in bounded time.  The
 * victim's room passes to the insert as a credit (sync/count.h:
 * COUNT_CREDIT), and a small victim's count among the small elements with
 * it (FLAT_EVICT_SMALL): the insert's element is small too.
 */
#ifndef BPFMAP_TABLES_FLAT_LRU_H
#define BPFMAP_TABLES_FLAT_LRU_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/spin_lock.h"
#include "tables/flat.h"
#include "util/big_alloc.h"

#define FLAT_LRU_REF 1u
#define FLAT_LRU_SMALL 2u
#define FLAT_LRU_GEN_SHIFT 2
#define FLAT_LRU_GEN_MASK (3u << FLAT_LRU_GEN_SHIFT)
/* In the main queue without having been used in the small one: moved on
 * when the ring overflowed (flat_lru.c, ring_squeeze), in an epoch (3 bits)
 * of about max_entries / 8 such elements.  Evictions take the oldest
 * epoch's while any are left, as they are older than every small one. */
#define FLAT_LRU_DEMOTED 16u
#define FLAT_LRU_EPOCH_SHIFT 5
#define FLAT_LRU_EPOCHS 8
#define FLAT_LRU_SMALL_PERCENT 10
#define FLAT_LRU_SCAN 256
#define FLAT_LRU_SCAN_DEMOTED 4096
/* Ring entries: a position below 2^30 and its generation. */
#define FLAT_LRU_POS_BITS 30
#define FLAT_LRU_POS_MAX (1u << FLAT_LRU_POS_BITS)

/* Ring entries a CPU's buffer holds before they join the ring. */
#define FLAT_LRU_PEND 14
/* Victims a CPU picks at once, to evict one at a time. */
#define FLAT_LRU_CAND 8
/* Other CPUs' picks of victims after which a CPU's are given back. */
#define FLAT_LRU_IDLE 16
/* Elements per CPU below which a map keeps no buffers or candidates. */
#define FLAT_LRU_PEND_MIN 256

/* A CPU's buffer of new ring entries, and its picked victims (each with
 * what take() checks: the small element's generation, or PICK_MAIN, with
 * PICK_FORCED when picked used; the oldest last). */
struct flat_lru_cpu {
	uint32_t lock; /* sync/spin_lock.h */
	uint32_t n;    /* entries in e */
	uint32_t e[FLAT_LRU_PEND];
	uint32_t nc __attribute__((aligned(64))); /* victims in cand */
	uint32_t stamp; /* under the LRU's lock: its refills when this CPU's last */
	uint32_t cand[FLAT_LRU_CAND];
	uint8_t cexp[FLAT_LRU_CAND];
} __attribute__((aligned(64)));

struct flat_lru {
	/* What program-view lookups read. */
	map_lookup_fn lookup; /* the table's own lookup, which flat_lru_lookup wraps */
	uint8_t *state;       /* atomic: per value index, FLAT_LRU_* bits */
	const char *values;   /* f->values */
	uint64_t stride_inv;  /* the inverse of the value stride's odd part, mod 2^64 */
	uint32_t stride_shift; /* the value stride's trailing zeros */
	/* What evictions and inserts write, on lines of their own. */
	uint32_t lock __attribute__((aligned(64))); /* sync/spin_lock.h: the ring and hand */
	uint32_t head;	     /* the ring's oldest entry */
	uint32_t len;	     /* entries in the ring */
	uint32_t cap;	     /* the ring's entries */
	uint32_t hand;	     /* the main queue's clock hand: a position */
	uint32_t small_max;  /* small elements beyond which evictions take from them */
	uint32_t *ring;
	uint32_t demote_epoch; /* the epoch demotions join */
	uint32_t evict_epoch;  /* the oldest epoch with demoted elements */
	uint32_t epoch_size;   /* demotions an epoch takes before the next one */
	bool evicted;	       /* an eviction since the last demotion */
	struct flat_lru_cpu *cpu; /* per CPU, NULL in small maps */
	uint32_t cpu_mask;	  /* cpu has cpu_mask + 1 */
	uint32_t refills;	  /* CPUs' picks of victims, for stamp */
	uint32_t sweep;		  /* the CPU whose idleness the next refill checks */
	uint32_t small __attribute__((aligned(64))); /* atomic: elements with SMALL */
	uint32_t demoted; /* atomic: elements with DEMOTED */
	uint32_t epoch_count[FLAT_LRU_EPOCHS]; /* atomic: DEMOTED elements per epoch */
};

static ALWAYS_INLINE uint32_t flat_lru_state(const struct flat_lru *l, size_t vi)
{
	return __atomic_load_n(&l->state[vi], __ATOMIC_RELAXED);
}

/* A program-view lookup's mark on value index @vi: one load, and an atomic
 * or only when the mark is clear (hot keys' bytes stay shared, unwritten). */
static ALWAYS_INLINE void flat_lru_touch_index(uint8_t *state, size_t vi)
{
	if (!(__atomic_load_n(&state[vi], __ATOMIC_RELAXED) & FLAT_LRU_REF))
		__atomic_fetch_or(&state[vi], FLAT_LRU_REF, __ATOMIC_RELAXED);
}

/* The same for a home slot, @i of bucket @h, as the word-key lookups find
 * it: its byte read with its bucket's seven others, one 8-byte load whose
 * address needs the bucket only, so that it issues beside the key compare
 * instead of after it.  x86 builds without ThreadSanitizer only (the load
 * spans bytes that other threads change one at a time). */
static ALWAYS_INLINE void flat_lru_touch_home(uint8_t *state, size_t h, size_t i)
{
	uint64_t st = __atomic_load_n((uint64_t *)(void *)(state + h * FLAT_SLOTS),
				      __ATOMIC_RELAXED);

	if (!((st >> (8 * i)) & FLAT_LRU_REF))
		__atomic_fetch_or(&state[h * FLAT_SLOTS + i], FLAT_LRU_REF, __ATOMIC_RELAXED);
}

/* An update's mark on position @pos, whose key it found: the kernel's LRU
 * maps count an update of a present key as a use, as a program's lookup.
 * Nothing for a map that does not evict. */
static ALWAYS_INLINE void flat_lru_touch_pos(const struct flat *f, uint32_t pos)
{
	if (f->lru_state)
		flat_lru_touch_index(f->lru_state, flat_elem_of(f, pos));
}

/* The mark on the value at @v: its value index from the address by an exact
 * division (a shift and a multiply). */
static ALWAYS_INLINE void flat_lru_touch(const struct flat_lru *l, const void *v)
{
	flat_lru_touch_index(l->state, (size_t)((((uint64_t)((const char *)v - l->values)) >>
						 l->stride_shift) * l->stride_inv));
}

/* Clear @bits of value index @vi's state; its state before. */
static ALWAYS_INLINE uint32_t flat_lru_clear(struct flat_lru *l, size_t vi, uint32_t bits)
{
	return __atomic_fetch_and(&l->state[vi], (uint8_t)~bits, __ATOMIC_RELAXED);
}

/* What leaves a state that was @old when @bits of it were cleared: whoever
 * clears SMALL or DEMOTED counts it. */
static ALWAYS_INLINE void flat_lru_count_out(struct flat_lru *l, uint32_t old, uint32_t bits)
{
	if (old & bits & FLAT_LRU_SMALL)
		__atomic_fetch_sub(&l->small, 1, __ATOMIC_RELAXED);
	if (old & bits & FLAT_LRU_DEMOTED) {
		__atomic_fetch_sub(&l->epoch_count[old >> FLAT_LRU_EPOCH_SHIFT], 1,
				   __ATOMIC_RELAXED);
		__atomic_fetch_sub(&l->demoted, 1, __ATOMIC_RELAXED);
	}
}

/* Clear @bits of value index @vi's state, counting what leaves. */
static ALWAYS_INLINE void flat_lru_leave(struct flat_lru *l, size_t vi, uint32_t bits)
{
	flat_lru_count_out(l, flat_lru_clear(l, vi, bits), bits);
}

/*
 * A filled position's element joins the small queue (home lock held, in
 * flat_fill, before it is published): SMALL, unmarked, the next generation.
 * It joins the ring after flat_fill (flat_lru_queue); until then no
 * eviction picks it (the main queue's hand passes small elements by).
 *
 * One store, no CAS.  The generation changes only here, under the home's
 * lock.  The other writers of a state byte read-modify-write it atomically
 * and count by the value they replaced: a mark (REF) from a lookup that
 * raced the fill may be lost, which only ages the element sooner; an
 * eviction that read the position live before its delete clears REF or
 * DEMOTED, which the killed state no longer holds and the new one does not
 * hold yet, so no count moves twice.
 */
static ALWAYS_INLINE void flat_lru_insert(struct flat *f, uint32_t pos)
{
	struct flat_lru *l = f->lru;
	size_t vi = flat_elem_of(f, pos);
	uint32_t old = __atomic_load_n(&l->state[vi], __ATOMIC_RELAXED);
	uint32_t gen = (((old & FLAT_LRU_GEN_MASK) >> FLAT_LRU_GEN_SHIFT) + 1) & 3;

	__atomic_store_n(&l->state[vi], (uint8_t)(gen << FLAT_LRU_GEN_SHIFT | FLAT_LRU_SMALL),
			 __ATOMIC_RELAXED);
}

/* Its ring entry, at the tail, and its count among the small elements
 * unless it takes over an evicted small one's (@carried: FLAT_EVICT_SMALL);
 * the home's lock still held. */
void flat_lru_queue(struct flat *f, uint32_t pos, bool carried);

/* An evicted small element's count that no insert took over. */
static ALWAYS_INLINE void flat_lru_small_give_back(struct flat *f)
{
	__atomic_fetch_sub(&f->lru->small, 1, __ATOMIC_RELAXED);
}

/* A deleted position leaves the queues (home lock held, flat_kill_locked):
 * everything but its generation goes, which only this lock's holders
 * change, so one exchange does it (a fetch-and is a CAS loop), and the
 * counts follow the value it replaced.  @carry (an eviction): a small
 * victim's count stays, for its insert to take over; true if it did. */
static ALWAYS_INLINE bool flat_lru_delete(struct flat *f, uint32_t pos, bool carry)
{
	struct flat_lru *l = f->lru;
	uint8_t *st = &l->state[flat_elem_of(f, pos)];
	uint8_t gen = __atomic_load_n(st, __ATOMIC_RELAXED) & FLAT_LRU_GEN_MASK;
	uint32_t old = __atomic_exchange_n(st, gen, __ATOMIC_RELAXED);
	bool carried = carry && (old & FLAT_LRU_SMALL);

	flat_lru_count_out(l, old,
			   (carried ? 0 : FLAT_LRU_SMALL) | FLAT_LRU_REF | FLAT_LRU_DEMOTED);
	return carried;
}

/* The queues of an evicting map of @max_entries; 0, -ENOMEM, or -E2BIG
 * when the table has more positions than ring entries can name.  @lookup:
 * the map's own program-view lookup, which flat_lru_lookup wraps. */
int flat_lru_init(struct flat *f, uint32_t max_entries, map_lookup_fn lookup);

/* The program view of an evicting map: the table's lookup, and the mark. */
void *flat_lru_lookup(struct bpfmap *map, const void *key);

/* What the LRU adds to the map's memory. */
size_t flat_lru_mem(const struct flat *f);

/* Evict one element, no home lock held: 0 when none could be taken (the
 * map's elements all being inserted or deleted right now), else
 * FLAT_EVICT_ROOM (the caller holds the victim's room as a credit,
 * COUNT_CREDIT), with FLAT_EVICT_SMALL when the victim was small (the
 * caller holds its count among the small elements too: flat_lru_queue, or
 * flat_lru_small_give_back). */
uint32_t flat_lru_evict(struct flat *f);

/* Free what flat_lru_init allocated (inline: the table's release calls it,
 * and this file's evictions call the table). */
static inline void flat_lru_destroy(struct flat *f)
{
	if (f->lru) {
		big_free(f->lru->state);
		big_free(f->lru->ring);
		big_free(f->lru->cpu);
		big_free(f->lru);
		f->lru = NULL;
	}
}

#endif
