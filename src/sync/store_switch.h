/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A map's lock-free overwrites, on until the first operation that needs every
 * store ordered before it (a lookup-and-delete returns the value it removes;
 * an immediate reuse hands a slot to another key) turns them off for good.
 * The table says what "every store in flight has landed" takes: a grace
 * period (stores inside read-side sections) or store windows.
 */
#ifndef BPFMAP_SYNC_STORE_SWITCH_H
#define BPFMAP_SYNC_STORE_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/rcu.h"
#include "sync/store_window.h"
#include "util/compiler.h"

#define STORES_ON 0
#define STORES_STOPPING 1 /* off, but stores may be in flight */
#define STORES_OFF 2

/* May a store decided now go ahead without the lock? */
static ALWAYS_INLINE bool stores_on(const uint32_t *state)
{
	return __atomic_load_n(state, __ATOMIC_RELAXED) == STORES_ON;
}

/*
 * For a store that a signal handler may make: a window
 * (store_window_enter_or_inside) of @owner's in which the switch @state was read ON,
 * or NULL, nothing held, without a record or with the switch not ON (the
 * caller takes its lock instead).  stores_close() ends what it opened.
 */
static ALWAYS_INLINE struct store_window *stores_open_on(const uint32_t *state, bool *inside,
							 uint32_t owner)
{
	struct store_window *win = store_window_enter_or_inside(inside, owner);

	if (likely(win) && likely(__atomic_load_n(state, STORE_WINDOW_ORDER) == STORES_ON))
		return win;
	if (win && !*inside)
		store_window_leave(win);
	return NULL;
}

static ALWAYS_INLINE void stores_close(struct store_window *win, bool inside)
{
	if (!inside)
		store_window_leave(win);
}

/* Start turning them off: false if they are off already and nothing is in
 * flight.  Every caller that gets true waits for the stores in flight, not
 * just the first one, then calls stores_stop_end. */
static inline bool stores_stop_begin(uint32_t *state)
{
	if (likely(__atomic_load_n(state, __ATOMIC_ACQUIRE) == STORES_OFF))
		return false;
	__atomic_store_n(state, STORES_STOPPING, __ATOMIC_SEQ_CST);
	return true;
}

static inline void stores_stop_end(uint32_t *state)
{
	__atomic_store_n(state, STORES_OFF, __ATOMIC_RELEASE);
}

/* Turn them off for a table whose stores decide and land inside one
 * read-side section: a grace period then covers every store in flight.
 * Inside a read-side section it cannot wait: it turns them off, and only
 * stores already in flight stay unordered. */
static inline void stores_stop_rcu(uint32_t *state)
{
	if (!stores_stop_begin(state) || !rcu_may_wait())
		return;
	rcu_synchronize();
	stores_stop_end(state);
}

/* Turn them off for a table whose stores decide and land inside one store
 * window (sync/store_window.h) of @owner's: windows wait for nothing, so
 * this may run inside a read-side section or under a lock. */
static inline void stores_stop_windows(uint32_t *state, uint32_t owner)
{
	if (!stores_stop_begin(state))
		return;
	store_windows_wait(owner);
	stores_stop_end(state);
}

/* Are stores that saw them on possibly still in flight? */
static inline bool stores_may_fly(const uint32_t *state)
{
	return __atomic_load_n(state, __ATOMIC_ACQUIRE) != STORES_OFF;
}

#endif
