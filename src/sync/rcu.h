/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Safe memory reclamation, by liburcu's "bulletproof" flavour: threads are
 * registered on their first read-side section, so users never do it by hand.
 * Everything RCU goes through here so that ThreadSanitizer can be told about
 * the ordering liburcu provides (its library is not instrumented): a read-side
 * section's accesses happen before any reclamation that waited for it.
 */
#ifndef BPFMAP_CORE_RCU_H
#define BPFMAP_CORE_RCU_H

#include <stdbool.h>

#define _LGPL_SOURCE 1
#include <urcu-bp.h>

#include "util/compiler.h"

#ifdef BPFMAP_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char rcu_tsan_clock;
#define rcu_tsan_release() __tsan_release(&rcu_tsan_clock)
#define rcu_tsan_acquire() __tsan_acquire(&rcu_tsan_clock)
#else
#define rcu_tsan_release() ((void)0)
#define rcu_tsan_acquire() ((void)0)
#endif

/*
 * liburcu 0.13 (Debian 12) places its per-thread reader records at addresses
 * less aligned than their declared 128 bytes; harmless on x86, but UBSan's
 * alignment check fires inside the inlined read-side code.  Sanitizer builds
 * therefore call out-of-line copies in sync/rcu.c, which the build compiles
 * without that one check.
 */
#ifdef BPFMAP_UBSAN
void rcu_lock_outline(void);
void rcu_unlock_outline(void);
#define rcu_lock rcu_lock_outline
#define rcu_unlock rcu_unlock_outline
#else
static ALWAYS_INLINE void rcu_lock(void)
{
	urcu_bp_read_lock();
}

static ALWAYS_INLINE void rcu_unlock(void)
{
	rcu_tsan_release();
	urcu_bp_read_unlock();
}
#endif

/* Start liburcu's call_rcu worker, with every signal blocked (rcu.c):
 * every map's creation calls it, so that no signal handler's first
 * deferral in the process creates the thread (pthread_create allocates). */
void rcu_prepare(void);

/* Run fn(head) once no read-side section that began before now can run. */
void rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *head));

/* Called first by every deferred callback (pairs with rcu_defer()). */
static ALWAYS_INLINE void rcu_deferred_enter(void)
{
	rcu_tsan_acquire();
}

/* Called last by every deferred callback (pairs with rcu_wait_deferred()). */
static ALWAYS_INLINE void rcu_deferred_exit(void)
{
	rcu_tsan_release();
}

/* Wait until every callback rcu_defer() queued so far has run (on
 * liburcu's default worker, which returns at once: it cannot wait for its
 * own queue).  Never inside a read-side section (see rcu_may_wait()). */
void rcu_wait_deferred(void);

/* Wait until every read-side section in progress has ended.  Never inside a
 * read-side section (see rcu_may_wait()). */
void rcu_synchronize(void);

/* True when the calling thread is outside any read-side section, so that
 * waiting for reclamation cannot wait for itself. */
bool rcu_may_wait(void);

#endif
