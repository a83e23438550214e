/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waiting for another thread's few stores (a lock holder, an operation or
 * an insert in flight, a store window): spin a while, then yield the CPU.
 * In user space the thread waited for may have been preempted there, even
 * by the waiter on its own CPU, and a waiter that only spun would then spin
 * for its whole time slice.
 */
#ifndef BPFMAP_SYNC_BACKOFF_H
#define BPFMAP_SYNC_BACKOFF_H

#include <sched.h>

#include "util/compiler.h"

#define BACKOFF_SPINS 128

/* One step of a wait; *@spins starts at 0.  Not for lookups' retries: a
 * call inlined into a lookup slowed its hit path (the commit that brought
 * this in has the figures), so they keep cpu_relax alone. */
static inline void backoff(unsigned int *spins)
{
	if (*spins < BACKOFF_SPINS) {
		++*spins;
		cpu_relax();
	} else {
		sched_yield();
	}
}

#endif
