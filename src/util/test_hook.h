/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test-only hooks at the critical points of races, so that a test can stop a
 * thread exactly there, run another operation, and let it go on: each race a
 * reviewer can name becomes a fixed, fast test instead of a lottery
 * (tests/test_races.c).  Only the bpfmap_hooked library that those tests
 * link is built with BPFMAP_TEST_HOOKS; in every other build TEST_HOOK()
 * is nothing.
 */
#ifndef BPFMAP_UTIL_TEST_HOOK_H
#define BPFMAP_UTIL_TEST_HOOK_H

enum test_hook_point {
	HOOK_PROBE_FULL_SCANNED, /* flat_probe_full: key absent, lock word read */
	HOOK_COUNT_STEAL,	 /* count: a shard's credits taken, not yet counted */
	HOOK_COUNT_FULL,	 /* count: full and quiescent seen twice, not yet recorded */
	HOOK_DELETE_HIDDEN,	 /* a delete: the key gone from lookups, count not yet */
	HOOK_INSERT_RESERVED,	 /* an insert: room reserved, key not yet visible */
	HOOK_CHAIN_STEP,	 /* a chain walk: about to read the node it reached (obj) */
	HOOK_CHAIN_COPY,	 /* a section-free copy-out: value read, not yet validated */
	HOOK_LRU_VICTIM,	 /* an eviction: victim chosen, not yet deleted (obj: chained
				  * table, the element, off its list; flat, its position) */
	HOOK_RTAB_STEP,		 /* an RHASH scan: a slot's hash matched, its link (obj) not read */
	HOOK_RTAB_COPY,		 /* an RHASH copy-out: value read, not yet validated */
	HOOK_RTAB_STORE,	 /* an RHASH lock-free overwrite: key found (obj), not stored */
	HOOK_RTAB_WALK,		 /* an RHASH walk step: a group's slots read, its next not
				  * yet (obj: the group) */
	HOOK_RTAB_BARE,		 /* an RHASH probe outside a read-side section: table read,
				  * its bucket (obj) not yet */
	HOOK_ARENA_GIVING,	 /* a slot arena: a chunk all free, off its lists, its pages
				  * not yet given back (obj: its first slot) */
	HOOK_LRU_KEYED,		 /* a flat eviction: the victim's key read, its read-side
				  * section over, its home not yet locked (obj: position) */
	HOOK_FLAT_COPY_MATCHED,	 /* a flat section-free copy-out: a slot's key matched,
				  * its value not yet read (obj: word keys, the position;
				  * longer keys, the element index) */
	HOOK_RETIRE_LOCKED,	 /* a delete: holding the lock under which the deferred
				  * callbacks take deleted elements (obj: the lock word) */
	HOOK_FLOCK_COPIED,	 /* a BPFMAP_F_LOCK copy-out: the value copied without its
				  * lock, the lock word not yet read again (obj: value) */
	HOOK_FLOCK_HELD,	 /* a BPFMAP_F_LOCK copy-out: the value's lock taken, the
				  * value not yet copied (obj: value) */
	HOOK_VALUE_WRITING,	 /* a flat overwrite: the value's version odd, its bytes not
				  * yet written (obj: the value) */
	HOOK_VALUE_COPYING,	 /* a copy-out in a read-side section (flat, chained): about to
				  * copy a value in its seq window (obj: the caller's buffer) */
	HOOK_DELETE_DEAD,	 /* a flat delete: the position dead (claimable by a reuse
				  * or the reclaimers), the home lock still held (obj:
				  * position) */
	HOOK_NODE_RELINKING,	 /* a flat reuse in a section: the map's moved seq odd, the
				  * node not yet relinked (obj: the flat map) */
	HOOK_FLUSH_WAITING,	 /* a chained map's flush callback: the pending stacks
				  * gathered, the grace period not yet waited for (obj:
				  * the chain) */
	HOOK_RELEASING,		 /* a chained map's release after a grace period: counted
				  * in c->releasing, no element given back yet (obj: the
				  * chain) */
	HOOK_RTAB_RUN_LOCKED,	 /* an RHASH resize: a run's old buckets locked, nothing
				  * moved yet (obj: the map's rtab) */
	HOOK_RTAB_RUN_UNLOCKING, /* an RHASH resize: a run moved (or given back), its
				  * buckets not yet unlocked (obj: the map's rtab) */
	HOOK_CHAIN_STORE,	 /* a chained lock-free overwrite: in its store window,
				  * not stored (obj: the element) */
	HOOK_CHAIN_RELINKED,	 /* a chained insert that reused a deleted element at
				  * once: linked, the map's moved seq still held (obj) */
	HOOK_CHAIN_NAMED,	 /* a chained insert: the element's value and key written,
				  * not yet published (obj: the element) */
	HOOK_CHAIN_FILLED,	 /* a chained insert that reuses a deleted element at
				  * once: its value written, the map's moved seq not
				  * yet taken (obj: the element) */
	HOOK_SLOTS_LANDING,	 /* a chained per-CPU insert with no slot begins to wait
				  * for slots on their way back (obj: the chain) */
	HOOK_LRU_EVICTED,	 /* an evicting map's insert: its eviction done, the
				  * insert not yet made (obj: the flat table or the
				  * chain) */
	HOOK_CHAIN_WAITS,	 /* a chained preallocated map's insert found no free
				  * element and may not borrow: it waits for the
				  * deleted ones next, where it may (obj: the chain) */
	HOOK_LRU_FULL,		 /* a chained evicting map's insert found it full, no
				  * victim picked yet (obj: the chain) */
	HOOK_PCPU_ADD,		 /* a lock-free bpfmap_percpu_add: in its store window,
				  * the key's element found, the delta not yet added
				  * (obj: the map) */
	HOOK_FORK_PREPARED,	 /* fork()'s prepare handler: the maps' reclamation
				  * locks taken (sync/fork_guard.h) */
};

#ifdef BPFMAP_TEST_HOOKS
extern void (*bpfmap_test_hook)(enum test_hook_point point, const void *obj);
/* One atomic load: hooks run in liburcu's worker too, while a test sets
 * the next one (tests store it atomically). */
#define TEST_HOOK(point, obj)                                                  \
	do {                                                                   \
		void (*hook_)(enum test_hook_point, const void *) =            \
			__atomic_load_n(&bpfmap_test_hook, __ATOMIC_ACQUIRE);  \
		if (hook_)                                                     \
			hook_(point, obj);                                     \
	} while (0)
#else
#define TEST_HOOK(point, obj) ((void)0)
#endif

#endif
