/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Store windows: lets a writer store without a lock and without a read-side
 * section, provided that whoever later needs every such store to have landed
 * (to reuse a slot, or to return a value it removes) can wait for them.
 *
 * Each thread has a record whose counter is odd while the thread is in a
 * window: set before the window reads the state it checks, back to even after
 * the store.  A waiter, having changed that state first, runs
 * membarrier(PRIVATE_EXPEDITED), which makes every thread of the process
 * execute a full barrier, then waits for every record it reads odd to change.
 * A window whose odd counter the scan did not see read the state after that
 * barrier, so it saw the change.  A window names the map it stores into (its
 * owner, beside the counter in one word), and a waiter waits only for its
 * own map's windows: a thread stopped or preempted inside an overwrite of
 * one map held up the reclamations of every other (an adversarial probe:
 * 3 s, and for ever for a real-time waiter before waits slept).  A signal
 * handler's store inside the window it interrupted makes that window
 * everybody's (owner 0).  Windows wait for nothing, so a waiter may
 * wait inside a read-side section or under a lock.  The window is two plain
 * stores to its own line (no fence: membarrier is the barrier, on the rare
 * side).  Without membarrier there are no windows (store_window_enter returns
 * NULL) and writers take their locks.  ThreadSanitizer, which cannot see
 * membarrier's ordering, gets seq_cst accesses on the window's side as well.
 */
#ifndef BPFMAP_SYNC_STORE_WINDOW_H
#define BPFMAP_SYNC_STORE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

struct store_window {
	/* atomic: the counter (low 32 bits), odd while its thread is in a
	 * window, and that window's owner (high 32 bits; 0: any map) */
	uint64_t word;
	uint32_t used; /* atomic: 1 while a thread owns the record */
	struct store_window *next;
} __attribute__((aligned(64))); /* one thread's line */

#define STORE_WINDOW_SEQ(w) ((uint32_t)(w))
#define STORE_WINDOW_OWNER(w) ((uint32_t)((w) >> 32))
/* The word of counter @seq (its low 32 bits) in a window of @owner. */
#define STORE_WINDOW_WORD(owner, seq) ((uint64_t)(owner) << 32 | STORE_WINDOW_SEQ(seq))

/* The owner that names @map in windows: never 0, and distinct for maps
 * apart by 128 bytes or more below 256 GiB of each other (two maps that
 * share one only wait for each other's windows, as all maps used to). */
static ALWAYS_INLINE uint32_t store_window_owner(const void *map)
{
	return (uint32_t)((uintptr_t)map >> 6) | 1;
}

/* The calling thread's record, NULL until its first registration. */
extern __thread struct store_window *store_window_mine
	__attribute__((tls_model("initial-exec")));

/* The window's opening store and the state load after it. */
#ifdef BPFMAP_TSAN
#define STORE_WINDOW_ORDER __ATOMIC_SEQ_CST
#else
#define STORE_WINDOW_ORDER __ATOMIC_RELAXED
#endif

/* The registry's one-time setup (membarrier, the thread-exit key), done by
 * every map's creation, so that no signal handler's call does it. */
void store_window_prepare(void);

/* Register the calling thread's record; NULL without membarrier (or
 * memory).  Out of line: the lock-free fast path never calls it. */
struct store_window *store_window_register(void);

/* Register the calling thread's record if it has none yet.  Writers call
 * it on their locked path, so that their lock-free path opens its window
 * with store_window_enter(false) and calls nothing: a thread's first
 * word overwrite takes the lock, the next ones store lock-free. */
static ALWAYS_INLINE void store_window_ensure(void)
{
	if (unlikely(!store_window_mine))
		(void)store_window_register();
}

/* Wait until no window of @owner's (store_window_owner) that began before
 * the call is still open (the caller changed the state those windows check
 * before calling). */
void store_windows_wait(uint32_t owner);

/* Open the calling thread's window: NULL if it has no record yet (@reg:
 * register it then) or windows are unavailable, or if it is open already:
 * a signal handler's store inside the window it interrupted would close it
 * early (the caller takes its locked path, which refuses: sync/reentry.h).
 * Read the state to check with STORE_WINDOW_ORDER after this. */
static ALWAYS_INLINE struct store_window *store_window_enter(bool reg, uint32_t owner)
{
	struct store_window *win = store_window_mine;
	uint64_t w;

	if (unlikely(!win) && (!reg || !(win = store_window_register())))
		return NULL;
	w = __atomic_load_n(&win->word, __ATOMIC_RELAXED); /* only this thread writes it */
	if (unlikely(w & 1))
		return NULL;
	__atomic_store_n(&win->word, STORE_WINDOW_WORD(owner, w + 1), STORE_WINDOW_ORDER);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the state is read after: see above */
	return win;
}

/*
 * For a store that a signal handler may make: a window as store_window_enter
 * opens, or, when the handler interrupted its thread inside one, that
 * window (*@inside true), which stays open until the handler has returned
 * and so covers the handler's store too: leave it alone.  That window may
 * be another map's: it becomes any map's (owner 0), before the state is
 * read, as a window's opening store.  NULL without a record.
 */
static ALWAYS_INLINE struct store_window *store_window_enter_or_inside(bool *inside,
								       uint32_t owner)
{
	struct store_window *win = store_window_mine;
	uint64_t w = win ? __atomic_load_n(&win->word, __ATOMIC_RELAXED) : 0;

	*inside = w & 1;
	if (*inside) {
		if (STORE_WINDOW_OWNER(w) != owner)
			__atomic_store_n(&win->word, STORE_WINDOW_WORD(0, w), STORE_WINDOW_ORDER);
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the state is read after */
		return win;
	}
	return store_window_enter(false, owner);
}

static ALWAYS_INLINE void store_window_leave(struct store_window *win)
{
	uint64_t w = __atomic_load_n(&win->word, __ATOMIC_RELAXED);

	__atomic_store_n(&win->word, STORE_WINDOW_WORD(STORE_WINDOW_OWNER(w), w + 1),
			 __ATOMIC_RELEASE);
}

#endif
