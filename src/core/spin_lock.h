/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The writers' lock: a test-and-test-and-set spin lock on one 32-bit word.
 * Bucket locks are held for a few hundred nanoseconds at most, so spinning
 * beats sleeping; after a while the waiter yields the CPU, because in user
 * space the holder can be preempted (2 cores, more threads).
 */
#ifndef BPFMAP_CORE_SPIN_LOCK_H
#define BPFMAP_CORE_SPIN_LOCK_H

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

#endif
