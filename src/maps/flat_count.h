/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat layout's element count and dead-slot count, sharded per CPU in
 * large maps (flat_count.c).
 *
 * Every insert and delete changes both counts.  With one word each, two
 * threads inserting and deleting on two cores passed that cache line back
 * and forth several times per operation: htab-mem's batch_add_batch_del
 * with two producers ran each at a fraction of one producer's rate.  In maps
 * large enough (f->sharded: max_entries >= FLAT_SHARDED_MIN per shard), each
 * CPU's shard keeps, on its own line:
 *  - credits: element slots reserved from f->count in chunks of
 *    FLAT_CREDIT_CHUNK and not used yet, plus the slots of its deletes.
 *    f->count is then the elements plus every shard's credits, so it still
 *    never exceeds max_entries.  An insert that finds f->count at
 *    max_entries with no credit of its own takes back every shard's credits
 *    (flat_count_steal) before it answers -E2BIG, so the answer stays exact.
 *    f->credits_out tells the lock-free full check (flat_count_full) whether
 *    any shard may hold credits: set after a shard gains some, cleared by the
 *    steal before it takes them (seq_cst on both sides: a credit the steal
 *    misses was added after the clear by a thread that then sets it again).
 *    A chunk on its way between f->count and a shard (taken, or given back
 *    when a shard holds more than two) is room neither can see: it counts in
 *    f->credits_moving meanwhile, and neither the full check nor -E2BIG
 *    answers while one moves.
 *  - dead: deletes minus reuses counted here and not yet added to f->dead,
 *    which takes them when they reach +-FLAT_DEAD_FLUSH.  f->dead only starts
 *    reclamation (kick_at) and is approximate by that much per shard; the
 *    slots themselves are counted exactly by their tags.
 * Smaller maps keep both counts in f->count and f->dead alone, exact.
 */
#ifndef BPFMAP_MAPS_FLAT_COUNT_H
#define BPFMAP_MAPS_FLAT_COUNT_H

#include <stdbool.h>
#include <stdint.h>

struct flat;

struct flat_shard {
	int32_t credits; /* atomic: reserved from f->count, not used yet (>= 0) */
	int32_t dead;	 /* atomic: dead-slot delta not yet in f->dead */
} __attribute__((aligned(64)));

#define FLAT_CREDIT_CHUNK 16 /* credits a shard takes from f->count at once */
#define FLAT_DEAD_FLUSH 16   /* dead slots a shard counts before f->dead hears */
/* Shard a map from this many entries per shard on: the credits shards may
 * hold (two chunks each) stay a small part of max_entries. */
#define FLAT_SHARDED_MIN (64u * FLAT_CREDIT_CHUNK)

/* Shards for a map of max_entries: a power of two (0: not sharded). */
uint32_t flat_shards_for(uint32_t max_entries);

/* The out-of-line parts of the inline functions (maps/flat.h). */
uint32_t flat_cpu_slow(void);
bool flat_count_reserve_slow(struct flat *f, struct flat_shard *s); /* sharded maps */
void flat_count_trim(struct flat *f, struct flat_shard *s, int32_t c);
int32_t flat_dead_flush(struct flat *f, struct flat_shard *s);

/* The exact figures, for tests and single-threaded checks: elements, and
 * dead slots as the counters see them. */
uint32_t flat_count_elements(const struct flat *f);
int32_t flat_dead_total(const struct flat *f);

#endif
