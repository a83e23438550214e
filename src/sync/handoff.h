/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Freeing a map that deferred callbacks still touch.  Rather than wait for
 * them (liburcu runs callbacks in batches ~10 ms apart, and its barrier also
 * waits for every read-side section in the process, so a reader waiting for
 * the freeing thread would never let it return), bpfmap_free hands the map
 * over: one word counts the callbacks queued or running, and HANDOFF_FREE
 * marks the free.  Whichever of the free and the last callback comes second
 * tears the map down.  No callback is queued after the free: no other thread
 * uses the map then.
 */
#ifndef BPFMAP_SYNC_HANDOFF_H
#define BPFMAP_SYNC_HANDOFF_H

#include <stdbool.h>
#include <stdint.h>

#define HANDOFF_FREE (1ULL << 63)

/* Count n callbacks that will touch the map, before queueing them. */
static inline void handoff_get(uint64_t *word, uint64_t n)
{
	__atomic_fetch_add(word, n, __ATOMIC_RELAXED);
}

/* Become the map's only callback: false if one is queued or running. */
static inline bool handoff_get_first(uint64_t *word)
{
	uint64_t idle = 0;

	return __atomic_compare_exchange_n(word, &idle, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/* Is a callback queued or running? */
static inline bool handoff_busy(const uint64_t *word)
{
	return __atomic_load_n(word, __ATOMIC_RELAXED) != 0;
}

/*
 * A callback queued at most once at a time (a flush of deferred work),
 * its flag @queued: true if the caller set the flag and must queue the
 * callback now, which is then counted (handoff_get).  The callback clears
 * the flag, with release, before it takes the work, so that work added
 * after that queues the next one.
 */
static inline bool handoff_get_once(uint64_t *word, bool *queued)
{
	if (__atomic_load_n(queued, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(queued, true, __ATOMIC_ACQ_REL))
		return false;
	handoff_get(word, 1);
	return true;
}

/* Has bpfmap_free run?  (A callback that sees it does no more work.) */
static inline bool handoff_freed(const uint64_t *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE) & HANDOFF_FREE;
}

/* A callback's last access to the map: true if the caller must tear it
 * down now (the free came first and this was the last callback).  Acquire
 * and release: the teardown comes after every other callback's accesses
 * (each decrement continues the release sequence of the ones before). */
static inline bool handoff_put(uint64_t *word)
{
	return __atomic_sub_fetch(word, 1, __ATOMIC_ACQ_REL) == HANDOFF_FREE;
}

/* bpfmap_free's side: true if the caller must tear the map down now. */
static inline bool handoff_free(uint64_t *word)
{
	return !__atomic_fetch_or(word, HANDOFF_FREE, __ATOMIC_ACQ_REL);
}

#endif
