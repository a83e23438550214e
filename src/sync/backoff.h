/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waiting for another thread's few stores (a lock holder, an operation or
 * an insert in flight, a store window): spin a while, then yield the CPU,
 * then sleep.  In user space the thread waited for may have been preempted
 * there, even by the waiter on its own CPU, and a waiter that only spun
 * would then spin for its whole time slice.  Yielding is not enough either:
 * sched_yield() never lets a thread of lower priority run (a SCHED_FIFO
 * waiter behind a SCHED_OTHER or lower SCHED_FIFO holder on its CPU spun
 * for ever; a SCHED_OTHER one behind a SCHED_IDLE holder, for seconds),
 * where the kernel's holders cannot be preempted.  A sleep lets every
 * thread run, so a wait sleeps once (BACKOFF_SLEEP_US, which the kernel's
 * timer slack makes 70-100 us for a SCHED_OTHER thread) every BACKOFF_YIELDS
 * yields, about a millisecond of them.  Not sooner: a waiter that slept as
 * soon as a 64 KiB value's lock outlasted its yields saw the lock free
 * every 70-250 us only, and against a holder that took the lock again and
 * again its BPFMAP_F_LOCK copy-outs fell from ~10k a second to ~1k (an
 * adversarial probe).
 */
#ifndef BPFMAP_SYNC_BACKOFF_H
#define BPFMAP_SYNC_BACKOFF_H

#include <sched.h>

#include "util/compiler.h"

#define BACKOFF_SPINS 128
#define BACKOFF_YIELDS 1024
#define BACKOFF_SLEEP_US 50

/* The sleep of backoff(): out of line, as it is rare. */
void backoff_sleep(void);
/* backoff() out of line. */
void backoff_wait(unsigned int *spins);

/* One step of a wait; *@spins starts at 0.  Not for lookups' retries: a
 * call inlined into a lookup slowed its hit path (the commit that brought
 * this in has the figures); they take retry_relax. */
static inline void backoff(unsigned int *spins)
{
	if (*spins < BACKOFF_SPINS) {
		++*spins;
		cpu_relax();
	} else if (*spins < BACKOFF_SPINS + BACKOFF_YIELDS) {
		++*spins;
		sched_yield();
	} else {
		*spins = BACKOFF_SPINS; /* the yields again after it */
		backoff_sleep();
	}
}

/* A lookup's retry while a writer is busy (a bucket's seq, a walk to
 * validate): a pause, and past BACKOFF_SPINS of them backoff()'s yields and
 * sleeps, out of line, so that a lookup of a thread of higher priority
 * lets the writer it waits for run. */
static ALWAYS_INLINE void retry_relax(unsigned int *spins)
{
	if (likely(*spins < BACKOFF_SPINS)) {
		++*spins;
		cpu_relax();
	} else {
		backoff_wait(spins);
	}
}

#endif
