/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The writers' lock: a test-and-test-and-set spin lock on one 32-bit word.
 * Bucket locks are held for a few hundred nanoseconds at most, so spinning
 * beats sleeping; after a while the waiter yields the CPU, because in user
 * space the holder can be preempted (2 cores, more threads).
 */
#ifndef BPFMAP_SYNC_SPIN_LOCK_H
#define BPFMAP_SYNC_SPIN_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

void spin_lock_slow(uint32_t *word);

static ALWAYS_INLINE void spin_lock_word(uint32_t *word)
{
	if (likely(!__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE)))
		return;
	spin_lock_slow(word);
}

static ALWAYS_INLINE void spin_unlock_word(uint32_t *word)
{
	__atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

/*
 * The bucket lock of both tables (the chained table's buckets, the flat
 * table's homes): the same spin lock, but its word also versions what it
 * protects.  It is odd while held and grows by 2 with every critical section,
 * so a lock-free reader can check that nothing it read changed under it:
 * seq_spin_read_begin() (an even word: not held), the reads (acquire loads),
 * then seq_spin_read_valid() with the same word.  A
 * lock holder's stores that such a reader may see must be release stores;
 * then a reader that saw one also sees the word changed.  32 bits wrap after
 * 2^31 critical sections, far more than can fit in one validated read.
 */
void seq_spin_lock_slow(uint32_t *word);

/* Setting bit 0 of an even word adds 1; of an odd one, changes nothing
 * (one `lock bts`, no compare-and-swap loop).  No likely() on the test:
 * GCC 12 then emits a compare-and-swap loop instead of the `lock bts`. */
static ALWAYS_INLINE void seq_spin_lock(uint32_t *word)
{
	if (__atomic_fetch_or(word, 1, __ATOMIC_ACQUIRE) & 1)
		seq_spin_lock_slow(word);
}

/* The lock for a waiter that a holder taking it again at once must not
 * keep out (a copy-out that writers starved: SEQ_READ_PATIENCE).  Each try is
 * a read-modify-write, pending when the holder lets go, which a waiter
 * that reads first would see too late; then the usual wait. */
void seq_spin_lock_eager(uint32_t *word);

/* seq_spin_lock_eager() for such a waiter (@eager), else seq_spin_lock(). */
static ALWAYS_INLINE void seq_spin_lock_as(uint32_t *word, bool eager)
{
	if (eager)
		seq_spin_lock_eager(word);
	else
		seq_spin_lock(word);
}

/* The lock if it is free, without waiting: true when taken. */
static ALWAYS_INLINE bool seq_spin_trylock(uint32_t *word)
{
	return !(__atomic_fetch_or(word, 1, __ATOMIC_ACQUIRE) & 1);
}

static ALWAYS_INLINE void seq_spin_unlock(uint32_t *word)
{
	/* Only the holder writes the word while it is odd. */
	__atomic_store_n(word, __atomic_load_n(word, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

/* The word before a lock-free read: odd means held (the read cannot be
 * validated; take the lock instead). */
static ALWAYS_INLINE uint32_t seq_spin_read_begin(const uint32_t *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/* True when no critical section ran since seq_spin_read_begin() returned
 * @start: the reads in between saw one consistent state. */
static ALWAYS_INLINE bool seq_spin_read_valid(const uint32_t *word, uint32_t start)
{
	return !(start & 1) && __atomic_load_n(word, __ATOMIC_ACQUIRE) == start;
}

/* The same where the reads in between include plain ones (a key compare,
 * a value's copy): the fence keeps them before the reload (TSan, which
 * has no fences, sees the lock holders' release stores instead). */
static ALWAYS_INLINE bool seq_spin_read_valid_plain(const uint32_t *word, uint32_t start)
{
#ifndef BPFMAP_TSAN
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
	return seq_spin_read_valid(word, start);
}

/*
 * A value's spin lock (struct bpfmap_spin_lock, BPFMAP_F_LOCK) is versioned
 * like the bucket lock, so that a BPFMAP_F_LOCK copy-out reads the value
 * without taking it (tables/value.h): such copies write nothing, never
 * contend with one another, and are never copied held by fork().  Programs
 * (bpfmap_spin_lock), F_LOCK updates, batches and every store into a value
 * that holds one take it.  A writer that holds a bucket lock takes it only
 * if it is free now (value_lock_try): a program may hold it for as long as
 * it likes, and waiting with the bucket held would stall the bucket.
 */
static ALWAYS_INLINE void value_lock_take(uint32_t *word)
{
	seq_spin_lock(word);
}

static ALWAYS_INLINE bool value_lock_try(uint32_t *word)
{
	return !(__atomic_load_n(word, __ATOMIC_RELAXED) & 1) && seq_spin_trylock(word);
}

/* Even again, and new.  Only its holder releases it: an element reused at
 * once keeps its word, held or not (flat_fill). */
static ALWAYS_INLINE void value_lock_drop(uint32_t *word)
{
	__atomic_store_n(word, (__atomic_load_n(word, __ATOMIC_RELAXED) | 1) + 1,
			 __ATOMIC_RELEASE);
}

/* Wait until @word is free, without taking it (after a failed
 * value_lock_try, with the bucket lock dropped).  Outside read-side
 * sections where the word's memory stays mapped: its holder may be a
 * program that holds it for long, or one that waits for a grace period. */
void value_lock_wait_free(const uint32_t *word);

/* The same for @spins spins at most: false if still held. */
static ALWAYS_INLINE bool value_lock_wait_free_for(const uint32_t *word, unsigned int spins)
{
	while (__atomic_load_n(word, __ATOMIC_RELAXED) & 1) {
		if (!spins--)
			return false;
		cpu_relax();
	}
	return true;
}

#endif
