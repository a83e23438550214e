/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Calls from a signal handler.  A handler runs on the thread it interrupted,
 * and that thread cannot go on until the handler returns.  If it was inside
 * a map operation that holds a lock (or makes a seq odd, or waits its turn
 * in a queue), a handler's operation that waits for that lock waits for
 * ever.  The kernel meets the same case when a BPF program in NMI context
 * re-enters a bucket lock its CPU holds, and answers -EBUSY.
 *
 * So every operation that may hold or wait marks its thread for its
 * duration (REENTRY_GUARDED), and an operation that finds its thread
 * already marked, or inside its store window (sync/store_window.h: a
 * lock-free store, which marks nothing), answers -EBUSY at once, touching
 * nothing.  Updates mark only their locked paths, so their lock-free
 * overwrites and -E2BIG answers pay nothing; a store window refuses to
 * open inside the thread's own (store_window_enter), so a handler's update
 * takes the locked path and its refusal.  Lookups, which hold nothing,
 * never mark; they check the mark only where they would wait (their slow
 * paths), so their fast paths pay nothing.
 *
 * The mark is a per-thread word in the initial-exec TLS model: reading it
 * is one load, with no call into the dynamic linker (whose lazy TLS
 * allocation is not async-signal-safe).  Only the thread itself and its
 * own signal handlers touch it, so compiler ordering (signal fences) is
 * all it needs.
 */
#ifndef BPFMAP_SYNC_REENTRY_H
#define BPFMAP_SYNC_REENTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/spin_lock.h"
#include "sync/store_window.h"
#include "util/compiler.h"

extern __thread uint32_t reentry_mark __attribute__((tls_model("initial-exec")));

/* Is this thread inside an operation that may hold a lock?  True only in
 * a signal handler that interrupted one (an operation never calls another
 * through the public entry points). */
static ALWAYS_INLINE bool reentry_busy(void)
{
	return unlikely(__atomic_load_n(&reentry_mark, __ATOMIC_RELAXED) != 0);
}

/* Mark the thread, or false (nothing marked) when it already is, or is
 * inside its store window. */
static ALWAYS_INLINE bool reentry_begin(void)
{
	const struct store_window *win = store_window_mine;

	if (reentry_busy() || (win && (__atomic_load_n(&win->word, __ATOMIC_RELAXED) & 1)))
		return false;
	__atomic_store_n(&reentry_mark, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return true;
}

static ALWAYS_INLINE void reentry_end(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&reentry_mark, 0, __ATOMIC_RELAXED);
}

/*
 * A lock for an operation that a signal handler may make and that holds
 * nothing else: taken with the thread marked, or, in a handler whose
 * thread is marked or inside its store window, only if free (the holder
 * may be the interrupted code): false then, for -EBUSY.  *@marked says
 * whether to reentry_end() after the unlock.
 */
static ALWAYS_INLINE bool reentry_lock_or_busy(uint32_t *lock, bool *marked)
{
	*marked = reentry_begin();
	if (*marked) {
		seq_spin_lock(lock);
		return true;
	}
	return seq_spin_trylock(lock);
}

/* @op, an operation that may hold a lock or wait for one, run with the
 * thread marked; -EBUSY, nothing touched, when reentry_begin() refuses. */
#define REENTRY_GUARDED(op)             \
	({                              \
		int ret_ = -EBUSY;      \
		if (reentry_begin()) {  \
			ret_ = (op);    \
			reentry_end();  \
		}                       \
		ret_;                   \
	})

#endif
