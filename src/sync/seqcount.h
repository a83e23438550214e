/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sequence counter for values updated in place.  Writers (already serialised
 * by a lock) make the count odd while they write; readers retry when they saw
 * an odd count or a different count afterwards.  The data itself must be
 * accessed through util/shared_copy.h, whose acquire loads keep the closing
 * count read after the data reads, and whose release stores keep the opening
 * count write before the data writes: a C11-correct seqlock with no fences.
 *
 * Bit 1 marks the counted object retired (a hash element being unlinked):
 * set once, under the same lock as the writers, it tells readers and
 * lock-free writers that the object left the structure at that instant.
 * Writes therefore step the count by 4, leaving the bit alone.
 */
#ifndef BPFMAP_SYNC_SEQCOUNT_H
#define BPFMAP_SYNC_SEQCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/backoff.h"
#include "sync/reentry.h"
#include "util/clock.h"
#include "util/compiler.h"

#define SEQCOUNT_WRITING 1U
#define SEQCOUNT_RETIRED 2U

/*
 * How long a copy-out goes on losing rounds to writers (a writer busy, or
 * the count moved under its copy) before it takes their lock for one copy,
 * in clock_ticks() (the TSC: 10-50 us; elsewhere 50 us).  A reader that
 * only retried could lose to a steady stream of in-place writes for as
 * long as it lasted: one writer of a 4 KiB value held its copy-outs off
 * for milliseconds.  So, as with the kernel's read_seqbegin_or_lock(), the
 * lock ends it; but only after a while, because writers that take their
 * lock again at once keep a waiting reader out of it too, and the rounds
 * of small values end well before that.
 */
#define SEQ_READ_PATIENCE 50000u

/* A round lost: true once the patience that started at the first lost
 * round (*@until 0 before it) has run out. */
static inline bool seq_read_give_up(uint64_t *until)
{
	uint64_t now = clock_ticks();

	if (!*until) {
		*until = now + SEQ_READ_PATIENCE;
		return false;
	}
	return now >= *until;
}

static ALWAYS_INLINE int seqcount_read_retry(const uint32_t *seq, uint32_t start)
{
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != start;
}

/* A count read by seqcount_read_begin() (or any acquire load) says retired. */
static ALWAYS_INLINE bool seqcount_is_retired(uint32_t s)
{
	return s & SEQCOUNT_RETIRED;
}

static ALWAYS_INLINE void seqcount_write_begin(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + SEQCOUNT_WRITING, __ATOMIC_RELAXED);
}

static ALWAYS_INLINE void seqcount_write_end(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s + 4 - SEQCOUNT_WRITING, __ATOMIC_RELEASE);
}

/* Mark retired; no write in progress (the caller holds the writers' lock).
 * Release: a reader that sees the mark sees everything before it. */
static ALWAYS_INLINE void seqcount_retire(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	__atomic_store_n(seq, s | SEQCOUNT_RETIRED, __ATOMIC_RELEASE);
}

/*
 * A bucket's seqcount that several writers may hold at once (the flat table:
 * writers of different homes share a pool bucket, and lock-free reuse writes
 * without the home lock): the low byte counts writers busy, and each writer
 * adds 0x100 in all when it ends.  Readers wait until no writer is busy and
 * retry when the count changed.
 */
#define MWSEQ_WRITERS 0xffu /* writers busy on the bucket */
#define MWSEQ_DONE 0xffu    /* added when a writer ends: +0x100 - 1 */

/* Reader side: a value with no writer busy, into *s (waits them out;
 * @lookup: as seqcount_read_begin_checked). */
static ALWAYS_INLINE bool mwseq_read_begin_checked(const uint32_t *seq, uint32_t *s,
						   bool lookup)
{
	unsigned int spins = 0;

	while (unlikely((*s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & MWSEQ_WRITERS)) {
		if (lookup && reentry_busy())
			return false;
		retry_relax(&spins);
	}
	return true;
}

static ALWAYS_INLINE uint32_t mwseq_read_begin(const uint32_t *seq)
{
	uint32_t s;

	(void)mwseq_read_begin_checked(seq, &s, false);
	return s;
}

/* Did no writer enter since mwseq_read_begin() returned s?  The
 * reads in between may be plain (memcmp of a long key): the fence orders
 * them before the seq's reload (TSan, which has no fences, sees the acquire
 * loads of the writers' release stores instead). */
static ALWAYS_INLINE bool mwseq_read_same(const uint32_t *seq, uint32_t s)
{
#ifndef BPFMAP_TSAN
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
	return __atomic_load_n(seq, __ATOMIC_ACQUIRE) == s;
}

/* Writer side: begin (waits while 255 writers are busy), end. */
static ALWAYS_INLINE void mwseq_write_begin(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	for (;;) {
		if (unlikely((s & MWSEQ_WRITERS) == MWSEQ_WRITERS)) {
			cpu_relax();
			s = __atomic_load_n(seq, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(seq, &s, s + 1, true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
}

static ALWAYS_INLINE void mwseq_write_end(uint32_t *seq)
{
	__atomic_fetch_add(seq, MWSEQ_DONE, __ATOMIC_RELEASE);
}

#endif
