/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Locks that fork() must never copy held.  A child of fork() has one thread
 * and one call_rcu worker, and that worker runs the deferred callbacks of
 * every map.  The callbacks take a few of their map's locks (the chained
 * table's pending and spare locks, RHASH's retire and stash locks and its
 * arenas'), which writers also hold, for a few stores.  Copied held, such a
 * lock was held for ever in the child: the worker spun on it, and every
 * wait for the worker stopped too, on whichever map: a child forked beside
 * a thread writing another map could hang (docs/CONCURRENCY.md, "fork()").
 *
 * So each map that has such locks registers a guard, and fork()'s prepare
 * handler takes every guard's locks, after liburcu's call_rcu handler has
 * paused the worker (sync/rcu.c orders the handlers), and gives them back in
 * the parent and in the child, as glibc's malloc does with its arenas.  No
 * holder of these locks waits for another thread while it holds one (the
 * longest hold is a malloc, whose fork locks glibc takes after the
 * handlers), so the prepare handler waits a moment at most.
 */
#ifndef BPFMAP_SYNC_FORK_GUARD_H
#define BPFMAP_SYNC_FORK_GUARD_H

struct fork_guard {
	struct fork_guard *prev, *next; /* the registry's, under its mutex */
	void (*hold)(struct fork_guard *g);    /* take the locks */
	void (*release)(struct fork_guard *g); /* give them back */
};

/* Register @g (hold and release set) while its map lives; remove it before
 * the map's locks go (a zeroed guard never added may be removed: nothing
 * happens).  Outside fork(), from any thread. */
void fork_guard_add(struct fork_guard *g);
void fork_guard_remove(struct fork_guard *g);

/* fork()'s handlers (sync/rcu.c registers them). */
void fork_guard_prepare(void);
void fork_guard_parent(void);
void fork_guard_child(void);

#endif
