/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's storage: its bucket arrays, its two arenas
 * (elements and overflow groups), their reclamation after a grace period,
 * and the edits of one bucket that its lock holder makes.  The design is in
 * tables/rtab.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "sync/backoff.h"
#include "sync/handoff.h"
#include "sync/store_switch.h"
#include "sync/store_window.h"
#include "tables/pool_slack.h"
#include "tables/rtab.h"
#include "tables/value.h"
#include "util/big_alloc.h"
#include "util/shared_copy.h"

struct rtab_retired {
	struct rtab_retired *next; /* in r->ripe */
	uint32_t n;
	uint32_t idx[RTAB_RETIRE_BATCH];
};

/* The most elements an arena holds (indexes stay below RTAB_MOVED). */
#define RTAB_MAX_ELEMS 0x7fffffffu

static size_t rtab_table_bytes(uint32_t bits)
{
	size_t n = (size_t)1 << bits;

	return sizeof(struct rtab_table) + n * sizeof(struct rtab_group) + (n >> RTAB_RUN_SHIFT);
}

uint32_t rtab_elem_alloc(struct rtab *r)
{
	return slot_arena_alloc(&r->elems);
}

/* A free group's links are already empty (rtab_ogroup_free, or pages never
 * used or given back): only its free-list link needs clearing.  Readers
 * that wandered in may read it, hence the atomic store. */
uint32_t rtab_ogroup_alloc(struct rtab *r)
{
	uint32_t idx = slot_arena_alloc(&r->groups);

	if (idx != RTAB_NONE)
		__atomic_store_n(&rtab_ogroup(r, idx)->next, RTAB_NONE, __ATOMIC_RELAXED);
	return idx;
}

void rtab_elem_unused(struct rtab *r, uint32_t idx)
{
	slot_arena_free(&r->elems, idx);
}

static size_t rtab_orphan_bytes(const struct rtab *r)
{
	return ((size_t)r->elems.cap + 1) * sizeof(*r->orphan_next);
}

static void rtab_teardown(struct rtab *r)
{
	struct rtab_table *t = rtab_word_table(r->table);

	if (t) {
		big_free(t->next);
		big_free(t);
	}
	while (r->stash) {
		t = r->stash;
		r->stash = t->stash.next;
		big_free(t);
	}
	free(r->retiring);
	big_unreserve(r->orphan_next, rtab_orphan_bytes(r));
	while (r->ripe) {
		struct rtab_retired *next = r->ripe->next;

		free(r->ripe);
		r->ripe = next;
	}
	slot_arena_destroy(&r->elems);
	slot_arena_destroy(&r->groups);
	count_destroy(&r->count);
	free(r);
}

/* After the batch's grace period: the elements go back once no lock-free
 * store that found them can still land (rtab_update_bare's windows). */
static void rtab_release(struct rtab *r, const struct rtab_retired *batch)
{
	if (stores_may_fly(&r->lockfree_store))
		store_windows_wait(store_window_owner(&r->map));
	for (uint32_t i = 0; i < batch->n; i++)
		slot_arena_free(&r->elems, batch->idx[i]);
}

/* A deferred callback's last access to the map. */
static void rtab_callback_done(struct rtab *r)
{
	if (handoff_put(&r->callbacks))
		rtab_teardown(r);
	rcu_deferred_exit();
}

/* A stashed table of 2^@bits buckets, or NULL. */
static struct rtab_table *rtab_stash_take(struct rtab *r, uint32_t bits)
{
	struct rtab_table **pp, *t = NULL;

	spin_lock_word(&r->stash_lock);
	for (pp = &r->stash; *pp; pp = &(*pp)->stash.next) {
		if ((*pp)->n == 1u << bits) {
			t = *pp;
			*pp = t->stash.next;
			__atomic_fetch_sub(&r->stash_bytes, t->stash.resident, __ATOMIC_RELAXED);
			break;
		}
	}
	spin_unlock_word(&r->stash_lock);
	return t;
}

/* A table, zeroed: a stashed one of the size if any (cleared when it was
 * stashed), else new memory. */
struct rtab_table *rtab_table_alloc(struct rtab *r, uint32_t bits)
{
	struct rtab_table *t = rtab_stash_take(r, bits);

	if (t) {
		big_reuse(t, rtab_table_bytes(bits));
	} else {
		/* Mapped, so that a stashed one holds little memory. */
		t = big_zalloc_mapped(rtab_table_bytes(bits));
		if (!t)
			return NULL;
	}
	t->owner = r;
	t->n = 1u << bits;
	t->shift = 32 - bits;
	t->runs = (uint8_t *)&t->groups[t->n];
	return t;
}

static void rtab_table_stash(struct rtab *r, struct rtab_table *t)
{
	size_t bytes = rtab_table_bytes(32 - t->shift);
	uint32_t n = t->n;

	/* What rtab_bare_find may still read goes to zero atomically, after
	 * the retirement, which r->gen tells. */
	rtab_bare_publish();
	bytes = big_clear(t, bytes);
	t->n = n; /* the stash's key (no probe reads a table's header) */
	t->stash.resident = bytes;
	spin_lock_word(&r->stash_lock);
	t->stash.next = r->stash;
	r->stash = t;
	__atomic_fetch_add(&r->stash_bytes, bytes, __ATOMIC_RELAXED);
	spin_unlock_word(&r->stash_lock);
}

static void rtab_table_retired_cb(struct rcu_head *head)
{
	struct rtab_table *t = caa_container_of(head, struct rtab_table, rcu);
	struct rtab *r;

	rcu_deferred_enter(); /* first: it orders the read of t->owner */
	r = t->owner;
	if (!handoff_freed(&r->callbacks))
		rtab_table_stash(r, t);
	else
		big_free(t);
	rtab_callback_done(r);
}

void rtab_table_retire(struct rtab *r, struct rtab_table *t)
{
	handoff_get(&r->callbacks, 1);
	rcu_defer(&t->rcu, rtab_table_retired_cb);
}

size_t rtab_table_mem(struct rtab *r)
{
	size_t bytes = __atomic_load_n(&r->stash_bytes, __ATOMIC_RELAXED);
	struct rtab_table *t;

	rcu_lock();
	t = rtab_table_of(r);
	bytes += rtab_table_bytes(32 - t->shift);
	t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	if (t)
		bytes += rtab_table_bytes(32 - t->shift);
	rcu_unlock();
	return bytes;
}

/* Elements retired and not yet given back. */
struct rtab_waiting {
	struct rtab_retired *batches; /* linked by next */
	uint32_t orphans;             /* linked through r->orphan_next */
};

/* Every element retired so far: the full batches, the one filling, and
 * the orphans. */
static struct rtab_waiting rtab_take_retired(struct rtab *r)
{
	struct rtab_waiting w;

	spin_lock_word(&r->retire_lock);
	w.batches = r->ripe;
	r->ripe = NULL;
	if (r->retiring) {
		r->retiring->next = w.batches;
		w.batches = r->retiring;
		r->retiring = NULL;
	}
	w.orphans = r->orphans;
	r->orphans = RTAB_NONE;
	spin_unlock_word(&r->retire_lock);
	return w;
}

static bool rtab_waiting_any(struct rtab_waiting w)
{
	return w.batches || w.orphans != RTAB_NONE;
}

/* Outside any read-side section: @w's elements back to the arena after
 * one grace period from now. */
static void rtab_release_all(struct rtab *r, struct rtab_waiting w)
{
	struct rtab_retired *list = w.batches;
	uint32_t n = 0;

	if (!rtab_waiting_any(w))
		return;
	rcu_synchronize();
	while (list) {
		struct rtab_retired *next = list->next;

		rtab_release(r, list);
		n += list->n;
		free(list);
		list = next;
	}
	if (w.orphans != RTAB_NONE && stores_may_fly(&r->lockfree_store))
		store_windows_wait(store_window_owner(&r->map));
	for (uint32_t idx = w.orphans, next; idx != RTAB_NONE; idx = next) {
		/* Read first: once free, the element may be retired again. */
		next = r->orphan_next[idx];
		slot_arena_free(&r->elems, idx);
		n++;
	}
	spin_lock_word(&r->retire_lock);
	__atomic_store_n(&r->retired_out, r->retired_out - n, __ATOMIC_RELAXED);
	spin_unlock_word(&r->retire_lock);
}

/*
 * Queued when an element starts a batch (or the orphans), so that what is
 * retired goes back within a worker's round even if nobody inserts: a
 * batch that never filled would otherwise keep its elements from the arena
 * for good (a 48-entry map churned then emptied held 92 KiB where it
 * started with 10).  The flag drops before the batches are taken, so that
 * an element retired after it queues the next flush.  Full batches wait
 * for it too, rather than each for a callback of its own: an insert that
 * finds the arena dry then takes them back itself after one grace period,
 * instead of waiting for every callback queued (liburcu's worker runs them
 * about 10 ms apart, and a full map turning over stalled that long every
 * max(1024, max_entries / 4) deletes: 10 us a pair at 1024 entries, where
 * HASH takes 0.1).
 */
static void rtab_flush_retiring(struct rcu_head *head)
{
	struct rtab *r = caa_container_of(head, struct rtab, flush_rcu);

	rcu_deferred_enter();
	if (!handoff_freed(&r->callbacks)) {
		__atomic_store_n(&r->flush_queued, false, __ATOMIC_RELEASE);
		rtab_release_all(r, rtab_take_retired(r));
	}
	rtab_callback_done(r);
}

/*
 * Without memory for a batch (malloc fails), in the orphan list.  The
 * element's own bytes cannot hold the link: readers may still read them
 * until the grace period ends.  Such elements used to be dropped, and a
 * map whose deletes met as many failures as its capacity and spare had no
 * element left: inserts answered -ENOMEM inside a section and waited for
 * ever outside one (docs/RHASH.md).  True when the list was empty, so that
 * a flush is queued for it as for a batch just begun.
 */
static bool rtab_orphan_locked(struct rtab *r, uint32_t idx)
{
	bool first = r->orphans == RTAB_NONE;

	r->orphan_next[idx] = r->orphans;
	r->orphans = idx;
	if (idx > r->orphan_top)
		__atomic_store_n(&r->orphan_top, idx, __ATOMIC_RELAXED);
	return first;
}

void rtab_elem_retire(struct rtab *r, uint32_t idx)
{
	bool begun; /* the first element waiting since the last take */

	spin_lock_word(&r->retire_lock);
	__atomic_store_n(&r->retired_out, r->retired_out + 1, __ATOMIC_RELAXED);
	if (!r->retiring) {
		r->retiring = malloc(sizeof(*r->retiring));
		if (r->retiring)
			r->retiring->n = 0;
	}
	if (!r->retiring) {
		begun = rtab_orphan_locked(r, idx);
	} else {
		TEST_HOOK(HOOK_RETIRE_LOCKED, &r->retire_lock);
		r->retiring->idx[r->retiring->n++] = idx;
		begun = r->retiring->n == 1;
		if (r->retiring->n == RTAB_RETIRE_BATCH) {
			r->retiring->next = r->ripe;
			r->ripe = r->retiring;
			r->retiring = NULL;
		}
	}
	spin_unlock_word(&r->retire_lock);
	if (begun && handoff_get_once(&r->callbacks, &r->flush_queued))
		rcu_defer(&r->flush_rcu, rtab_flush_retiring);
}

/*
 * An unlinked overflow group is reused at once, with no grace period: a
 * reader still in it can at worst read links of its next owner (live
 * elements, whose keys it compares, so a hit is still its key's element),
 * or follow its next into another chain or the free list, and miss.  Every
 * path here unlinks under the lock of the bucket the reader came from, so
 * that reader's miss does not count (rtab_find_checked), and a moved
 * bucket's first group stops scans before its old overflow groups.  The
 * links are emptied first: a free group must name no element, or a reader
 * that walked the free list into it could reach an element freed and reused
 * before that reader began.
 */
void rtab_ogroup_free(struct rtab *r, uint32_t idx)
{
	struct rtab_group *g = rtab_ogroup(r, idx);

	for (int i = 0; i < RTAB_SLOTS; i++)
		__atomic_store_n(&g->link[i], RTAB_NONE, __ATOMIC_RELAXED);
	slot_arena_free(&r->groups, idx);
}

/*
 * One deleter at a time: the others wait for its grace period, and then
 * need none of their own if its release brought the room back.  A flag
 * raised for one deleter when a batch went ripe used to be all there was:
 * while that one waited out its grace period (long, with a reader
 * preempted in its section), the others went on, and their inserts inside
 * sections took the last of the room (-ENOMEM with three threads on two
 * CPUs, each deleting outside a section and inserting inside one).
 */
void rtab_settle_slow(struct rtab *r)
{
	unsigned int spins = 0;

	if (!rcu_may_wait())
		return;
	while (__atomic_exchange_n(&r->settling, 1, __ATOMIC_ACQUIRE))
		backoff(&spins);
	if (rtab_settle_due(r))
		rtab_release_all(r, rtab_take_retired(r));
	__atomic_store_n(&r->settling, 0, __ATOMIC_RELEASE);
}

void rtab_reclaim_now(struct rtab *r)
{
	struct rtab_waiting w = rtab_take_retired(r);

	if (rtab_waiting_any(w))
		rtab_release_all(r, w);
	else /* a flush in flight holds them */
		rcu_wait_deferred();
}

void rtab_reclaim_wait(struct rtab *r)
{
	rtab_release_all(r, rtab_take_retired(r));
	rcu_wait_deferred();
}

struct rtab_group *rtab_lock_bucket(struct rtab *r, uint32_t hash, struct rtab_table **t_out,
				    bool eager)
{
	struct rtab_table *t = rtab_table_of(r);

	for (;;) {
		struct rtab_group *g = &t->groups[rtab_bucket(t, hash)];

		seq_spin_lock_as(&g->lock, eager);
		if (likely(__atomic_load_n(&g->next, __ATOMIC_RELAXED) != RTAB_MOVED)) {
			if (t_out)
				*t_out = t;
			return g;
		}
		seq_spin_unlock(&g->lock);
		t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	}
}

static ALWAYS_INLINE struct rtab_group *rtab_next_group(struct rtab *r, struct rtab_group *g)
{
	uint32_t next = __atomic_load_n(&g->next, __ATOMIC_RELAXED);

	return next == RTAB_NONE ? NULL : rtab_ogroup(r, next);
}

bool rtab_find_locked(struct rtab *r, struct rtab_group *g, uint32_t hash, const void *key,
		      struct rtab_slot *out)
{
	for (; g; g = rtab_next_group(r, g)) {
		for (int i = 0; i < RTAB_SLOTS; i++) {
			uint32_t link = __atomic_load_n(&g->link[i], __ATOMIC_RELAXED);

			if (link != RTAB_NONE && g->hash[i] == hash &&
			    !memcmp(rtab_elem(r, link), key, r->map.key_size)) {
				out->g = g;
				out->i = i;
				return true;
			}
		}
	}
	return false;
}

bool rtab_add_locked(struct rtab *r, struct rtab_group *g, uint32_t hash, uint32_t idx,
		     struct rtab_spare *spare)
{
	struct rtab_group *last = g;
	uint32_t og;

	for (; g; last = g, g = rtab_next_group(r, g)) {
		for (int i = 0; i < RTAB_SLOTS; i++) {
			if (__atomic_load_n(&g->link[i], __ATOMIC_RELAXED) != RTAB_NONE)
				continue;
			/* The element, then the hash that lets readers find it. */
			__atomic_store_n(&g->link[i], idx, __ATOMIC_RELEASE);
			__atomic_store_n(&g->hash[i], hash, __ATOMIC_RELEASE);
			return true;
		}
	}
	og = spare && spare->n ? spare->og[--spare->n] : rtab_ogroup_alloc(r);
	if (og == RTAB_NONE)
		return false;
	/* Atomic: a reader may still be in the group from its last owner. */
	g = rtab_ogroup(r, og);
	__atomic_store_n(&g->link[0], idx, __ATOMIC_RELEASE);
	__atomic_store_n(&g->hash[0], hash, __ATOMIC_RELEASE);
	__atomic_store_n(&last->next, og, __ATOMIC_RELEASE);
	return true;
}

/*
 * Every group of a chain but its last stays full, so that a bucket of n
 * keys holds ceil(n / 7) groups whatever was deleted from it, and the
 * overflow arena, a group for every three elements, cannot run dry: a
 * table needs at most one for seven, and a resize holds two tables
 * (chains that kept a group for one key each did run it dry, and inserts
 * then waited for ever).  So a hole outside the last group takes the last
 * group's last key; its element does not move.  Readers: a hit needs no
 * check (the element stays its key's), and a miss that the move fooled
 * fails its lock-word check, as for any change to the bucket.
 */
void rtab_remove_locked(struct rtab *r, struct rtab_group *g, struct rtab_slot s)
{
	struct rtab_group *prev = NULL, *last = g;
	int j = RTAB_SLOTS - 1;

	for (struct rtab_group *n; (n = rtab_next_group(r, last)); last = n)
		prev = last;
	if (s.g != last) {
		while (__atomic_load_n(&last->link[j], __ATOMIC_RELAXED) == RTAB_NONE)
			j--; /* the last group holds a key: it would be gone otherwise */
		/* The element, then the hash, as an insert fills a slot. */
		__atomic_store_n(&s.g->link[s.i], last->link[j], __ATOMIC_RELEASE);
		__atomic_store_n(&s.g->hash[s.i], last->hash[j], __ATOMIC_RELEASE);
		s.g = last;
		s.i = j;
	}
	__atomic_store_n(&s.g->link[s.i], RTAB_NONE, __ATOMIC_RELEASE);
	if (!prev)
		return;
	for (int i = 0; i < RTAB_SLOTS; i++)
		if (__atomic_load_n(&last->link[i], __ATOMIC_RELAXED) != RTAB_NONE)
			return;
	/* An empty last group: unlinked, and reused at once. */
	__atomic_store_n(&prev->next, RTAB_NONE, __ATOMIC_RELEASE);
	rtab_ogroup_free(r, (uint32_t)(last - r->ogroups));
}

void rtab_delete_locked(struct rtab *r, struct rtab_group *g, struct rtab_slot s)
{
	uint32_t ticket = count_delete_begin(&r->count);

	rtab_remove_locked(r, g, s);
	count_delete_end(&r->count, ticket);
}

void rtab_free_ogroups(struct rtab *r, uint32_t og)
{
	while (og != RTAB_NONE) {
		uint32_t next = rtab_ogroup(r, og)->next;

		rtab_ogroup_free(r, og);
		og = next;
	}
}

bool rtab_copy_value(struct rtab *r, char *e, void *dst, bool lockf, bool bucket_locked,
		     bool lookup)
{
	if (lockf && bucket_locked)
		return !value_copy_out_or_busy(&r->map, dst, rtab_value(r, e));
	if (!lockf)
		shared_copy_out(dst, rtab_value(r, e), r->map.value_size);
	else if (!value_copy_out_locked(&r->map, dst, rtab_value(r, e), lookup))
		return false;
	value_clear_lock(&r->map, dst);
	return true;
}

#ifdef BPFMAP_TEST_HOOKS
uint64_t rtab_reserve_bytes = RTAB_RESERVE_BYTES;
#endif

uint32_t rtab_arenas_init(struct rtab *r, uint32_t max_entries)
{
	uint64_t fits = rtab_reserve_budget() / r->stride - 1; /* slot 0 is never used */

	for (;;) {
		/* Room beyond the elements for those waiting for their grace
		 * period, so that inserts go on meanwhile instead of waiting. */
		uint64_t spare = max_entries / 4, limit = max_entries;
		uint32_t cap, ocap;

		spare = spare < 1024 ? 1024 : spare > (1u << 20) ? 1u << 20 : spare;
		/* The arena is address space reserved up front, and a process
		 * has 128 TiB of it: a map declared for 2^31 elements of 64 KiB
		 * (a map meant as unbounded) would not be created at all.  Past
		 * the budget the map holds fewer elements than max_entries and
		 * answers -ENOMEM beyond them, as the kernel's does once its
		 * memory runs out. */
		if (limit + spare > fits) {
			spare = spare < fits / 4 ? spare : fits / 4;
			limit = fits - spare;
		}
		cap = (uint32_t)(limit + spare > RTAB_MAX_ELEMS ? RTAB_MAX_ELEMS : limit + spare);
		/* Overflow groups: a universal hash leaves about two buckets in
		 * three with one at the most crowded (RTAB_GROW_LOAD), 0.08 a
		 * key; a third of the elements is four times that, for both
		 * tables of a resize.  Running dry stalls a resize (its run is
		 * given back) and fails an insert with -ENOMEM, never more. */
		ocap = cap / 3 + 1024;
		/* Free elements link through their first word, free groups
		 * through next: nothing reads either then. */
		if (!slot_arena_init(&r->elems, cap, r->stride, 0)) {
			if (!slot_arena_init(&r->groups, ocap, sizeof(struct rtab_group),
					     offsetof(struct rtab_group, next))) {
				r->orphan_next = big_reserve(rtab_orphan_bytes(r));
				if (r->orphan_next) {
					/* cap is clamped below 2^31 + spare. */
					uint32_t left = cap > limit ? (uint32_t)(cap - limit) : 0;

					/* Outside sections, large elements wait
					 * fewer (tables/pool_slack.h). */
					left = (uint32_t)waiting_bounded(left, r->stride,
									 max_entries);
					r->settle_at = left > 2 * RTAB_LOW_ROOM ? left - RTAB_LOW_ROOM
										: left / 2;
					r->arena = r->elems.base;
					r->ogroups = (struct rtab_group *)(void *)r->groups.base;
					return (uint32_t)limit;
				}
				slot_arena_destroy(&r->groups);
			}
			slot_arena_destroy(&r->elems);
		}
		/* Address space refused (RLIMIT_AS, a sanitizer's layout, the
		 * process's mappings used up): half the room, down to a floor. */
		if (cap <= RTAB_RESERVE_MIN)
			return 0;
		fits = cap / 2;
	}
}

/* The orphans' links count up to the highest index linked: the pages
 * below it that no orphan touched are counted too. */
size_t rtab_arenas_mem(const struct rtab *r)
{
	uint32_t top = __atomic_load_n(&r->orphan_top, __ATOMIC_RELAXED);

	return slot_arena_mem(&r->elems) + slot_arena_mem(&r->groups) +
	       (top ? big_reserve_used(((size_t)top + 1) * sizeof(*r->orphan_next)) : 0);
}

/* fork(): the locks that the callbacks take (sync/fork_guard.h). */
static void rtab_fork_hold(struct fork_guard *g)
{
	struct rtab *r = caa_container_of(g, struct rtab, guard);

	spin_lock_word(&r->retire_lock);
	spin_lock_word(&r->stash_lock);
	slot_arena_hold(&r->elems);
	slot_arena_hold(&r->groups);
}

static void rtab_fork_release(struct fork_guard *g)
{
	struct rtab *r = caa_container_of(g, struct rtab, guard);

	slot_arena_release(&r->groups);
	slot_arena_release(&r->elems);
	spin_unlock_word(&r->stash_lock);
	spin_unlock_word(&r->retire_lock);
}

void rtab_guard_fork(struct rtab *r)
{
	r->guard.hold = rtab_fork_hold;
	r->guard.release = rtab_fork_release;
	fork_guard_add(&r->guard);
}

/* The free, or a creation that failed.  No other thread holds r's locks
 * from here on, so fork() need not wait for them. */
void rtab_destroy(struct rtab *r)
{
	fork_guard_remove(&r->guard);
	if (handoff_free(&r->callbacks))
		rtab_teardown(r);
}
