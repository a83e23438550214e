/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The chained table's elements: the pool, and their reclamation after a
 * delete (in batches, one grace period each), down to the map's teardown.
 */
#include <errno.h>
#include <stdlib.h>

#include "sync/backoff.h"
#include "sync/seqcount.h"
#include "sync/spin_lock.h"
#include "tables/chain.h"
#include "tables/pool_slack.h"
#include "util/big_alloc.h"
#include "util/test_hook.h"

/* Pool elements beyond max_entries (evicting maps: pool_slack's, if more),
 * so that deletes followed at once by inserts rarely wait on reclamation;
 * past them the pool falls back to the heap (see chain_elem_alloc). */
#define CHAIN_POOL_SLACK_PER_CPU 16

/* Backlog of elements queued one by one for reclamation (only by deleters
 * inside a read-side section, see chain_reclaim_pending) tolerated before
 * deleters wait (chain_reclaim_throttle): CHAIN_DEFERRED_PER_MAX x max_entries,
 * at least CHAIN_DEFERRED_MIN.  Waiting costs milliseconds (the worker's grace
 * period), so the limit is generous. */
#define CHAIN_DEFERRED_MIN 16384U
#define CHAIN_DEFERRED_PER_MAX 4U

static bool elem_in_pool(const struct chain *c, const struct chain_elem *e)
{
	const char *p = (const char *)e;

	return c->pool && p >= c->pool && p < c->pool + (size_t)c->pool_size * c->elem_size;
}

static struct chain_elem *pool_elem(const struct chain *c, uint32_t index)
{
	return (struct chain_elem *)(void *)(c->pool + (size_t)index * c->elem_size);
}

static uint32_t pool_index(const struct chain *c, const struct chain_elem *e)
{
	return (uint32_t)(((const char *)e - c->pool) / c->elem_size);
}

/*
 * The per-CPU slots of a per-CPU map, a region per CPU: the pool's
 * elements', then, from a page boundary, a slot arena's for heap elements
 * (the preallocated map's overflow while reclamation lags, bounded by the
 * deleters' throttle; every element of a NO_PREALLOC map), whose chunks
 * are given back in every region once all their slots are free.  All of
 * it address space, committed as elements touch it: allocated, a large
 * NO_PREALLOC map's was charged whole at creation, which refused (-ENOMEM)
 * maps the kernel creates (1M entries of 4 KiB values on two CPUs); and a
 * free list of slot indices kept a map's pages at its high-water mark
 * (16384 elements of 1 KiB on two CPUs, emptied: 33 MiB stayed).
 */
#define PCPU_PAGE 4096u

int chain_pcpu_init(struct chain *c)
{
	uint64_t heap = (uint64_t)chain_deferred_limit(c->map.max_entries) + 1024;
	uint64_t stride = c->map.cpu_stride, pool_bytes, region;

	if (!c->prealloc)
		heap += c->map.max_entries;
	pool_bytes = ROUND_UP((uint64_t)c->pool_size * stride, PCPU_PAGE);
	region = ROUND_UP(pool_bytes + (heap + 1) * stride, PCPU_PAGE);
	if (heap > UINT32_MAX - 1 || region * c->map.cpus > SIZE_MAX / 2)
		return -ENOMEM;
	c->pcpu_heap_off = (size_t)pool_bytes;
	c->pcpu_region = (size_t)region;
	c->pcpu = big_reserve(chain_pcpu_bytes(c));
	if (!c->pcpu)
		return -ENOMEM;
	return slot_arena_init_at(&c->pcpu_heap, (uint32_t)heap, (uint32_t)stride, 0,
				  c->pcpu + pool_bytes, c->map.cpus, (size_t)region);
}

void chain_pcpu_free(struct chain *c)
{
	slot_arena_destroy(&c->pcpu_heap);
	big_unreserve(c->pcpu, chain_pcpu_bytes(c));
	c->pcpu = NULL;
}

/* A preallocated map's free element: the pool's, else a heap element kept
 * on the spare stack; NULL if neither has one. */
static struct chain_elem *chain_elem_take_free(struct chain *c)
{
	uint32_t i = freelist_pop(&c->free_slots);
	struct chain_elem *e = NULL;

	if (i != FREELIST_EMPTY)
		return pool_elem(c, i);
	if (__atomic_load_n(&c->spare, __ATOMIC_RELAXED)) {
		spin_lock_word(&c->spare_lock);
		e = __atomic_load_n(&c->spare, __ATOMIC_RELAXED);
		if (e)
			__atomic_store_n(&c->spare, e->reclaim_next, __ATOMIC_RELAXED);
		spin_unlock_word(&c->spare_lock);
	}
	return e;
}

/* A fresh element, or NULL on allocation failure (or with the pool dry
 * when !@may_borrow).  Capacity (max_entries) is enforced by the caller
 * through c->count, so the pool's emptiness only means that reclamation
 * lags behind; the heap covers that gap. */
struct chain_elem *chain_elem_alloc(struct chain *c, bool *no_slot, bool may_borrow)
{
	struct chain_elem *e;

	if (c->prealloc && (e = chain_elem_take_free(c)))
		return e;
	if (!may_borrow)
		return NULL;
	e = malloc(c->elem_size);
	if (!e)
		return NULL;
	if (c->pcpu) { /* per-CPU slots: the heap's */
		uint32_t j = slot_arena_alloc(&c->pcpu_heap);

		if (!j) {
			free(e);
			*no_slot = true;
			return NULL;
		}
		chain_pcpu_set_offset(c, e, c->pcpu_heap_off + (size_t)j * c->map.cpu_stride);
	}
	e->owner = c;
	if (c->prealloc) /* NO_PREALLOC maps count theirs from count (mem_usage) */
		__atomic_fetch_add(&c->heap_elems, 1, __ATOMIC_RELAXED);
	return e;
}

/* Return an element that no read-side section can still see (section-free
 * copy-outs validate what they read instead: chain_copy_stable). */
static void chain_elem_release(struct chain *c, struct chain_elem *e)
{
	if (elem_in_pool(c, e)) {
		freelist_push(&c->free_slots, pool_index(c, e));
		return;
	}
	if (c->prealloc) { /* kept for reuse while the map lives (heap_elems) */
		spin_lock_word(&c->spare_lock);
		e->reclaim_next = __atomic_load_n(&c->spare, __ATOMIC_RELAXED);
		__atomic_store_n(&c->spare, e, __ATOMIC_RELAXED);
		spin_unlock_word(&c->spare_lock);
		return;
	}
	if (c->pcpu)
		slot_arena_free(&c->pcpu_heap, chain_pcpu_heap_slot(c, e));
	free(e);
}

/* Release a taken stack of n elements after a grace period. */
static void chain_release_batch(struct chain *c, struct chain_elem *list, uint32_t n)
{
	__atomic_fetch_add(&c->releasing, 1, __ATOMIC_RELAXED);
	TEST_HOOK(HOOK_RELEASING, c);
	while (list) {
		struct chain_elem *next = list->reclaim_next;

		chain_elem_release(c, list);
		list = next;
	}
	__atomic_fetch_sub(&c->reclaiming, n, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&c->releasing, 1, __ATOMIC_RELEASE);
}

struct chain_elem *chain_elem_reusable(struct chain *c, bool *stolen)
{
	unsigned int spins = 0;
	struct chain_elem *e;

	for (;;) {
		if ((e = chain_elem_take_free(c)))
			return e;
		if ((e = chain_pending_steal(c))) {
			*stolen = true;
			return e;
		}
		if (!__atomic_load_n(&c->releasing, __ATOMIC_ACQUIRE))
			return NULL;
		backoff(&spins);
	}
}

/* Release the map and every element it still holds.  No one uses the map
 * and no callback touches it any more, so what is still pending needs no
 * grace period. */
static void chain_teardown(struct chain *c)
{
	for (uint32_t i = 0; i < CHAIN_PENDING_STACKS; i++)
		chain_release_batch(c, c->pending[i].head, 0);
	for (uint32_t i = 0; i < c->n_buckets; i++) {
		struct chain_elem *e = c->buckets[i].head;

		while (e) {
			struct chain_elem *next = e->next;

			if (!elem_in_pool(c, e))
				free(e);
			e = next;
		}
	}
	while (c->spare) {
		struct chain_elem *next = c->spare->reclaim_next;

		free(c->spare);
		c->spare = next;
	}
	freelist_destroy(&c->free_slots);
	count_destroy(&c->count);
	big_free(c->pool);
	big_free(c->buckets);
	chain_pcpu_free(c);
	free(c->lru);
	free(c);
}

/* A callback's last access to c (sync/handoff.h). */
static void chain_callback_done(struct chain *c)
{
	if (handoff_put(&c->callbacks))
		chain_teardown(c);
}

static void chain_elem_reclaim(struct rcu_head *head)
{
	struct chain_elem *e = container_of(head, struct chain_elem, rcu);

	struct chain *c;

	rcu_deferred_enter(); /* first: it orders this thread after the writer */
	c = e->owner;
	chain_elem_release(c, e);
	__atomic_fetch_sub(&c->deferred, 1, __ATOMIC_RELAXED);
	rcu_deferred_exit();
	chain_callback_done(c);
}

/*
 * Reclamation in batches.  liburcu's call_rcu() runs callbacks in one worker
 * thread that sleeps 10 ms between rounds, with a queue operation and a
 * callback per element; writers that delete faster (two producers on two
 * cores) grow its backlog, and the memory of a NO_PREALLOC map, until they
 * have to wait for it.  Instead, unlinked elements gather on a pending
 * stack of the map (one of CHAIN_PENDING_SHARDS, by thread), and the deleter
 * that fills it to reclaim_batch takes the whole stack, waits for one grace
 * period (microseconds when readers are short) and releases every element
 * itself: one wait per batch, memory bounded by a batch per shard (and per
 * thread in a grace period), and for NO_PREALLOC maps free() in the thread
 * that usually malloc'ed.  A deleter inside a read-side section cannot
 * wait: it queues the batch element by element (the backlog counted in
 * deferred), or in a preallocated map leaves it on the stack for inserts to
 * reuse (chain_reclaim_throttle).  Elements left pending when deletes stop
 * are taken by a flush callback that the first element of an empty stack
 * queues.
 */
#define CHAIN_RECLAIM_BATCH_MIN 2048U
#define CHAIN_RECLAIM_BATCH_MAX 8192U

/* An element's bytes with its per-CPU slots. */
static uint64_t chain_elem_bytes(const struct chain *c)
{
	return c->elem_size + (uint64_t)c->map.cpus * c->map.cpu_stride;
}

uint32_t chain_reclaim_batch(const struct chain *c)
{
	uint32_t n = c->map.max_entries / 4;

	n = n < CHAIN_RECLAIM_BATCH_MIN	  ? CHAIN_RECLAIM_BATCH_MIN
	    : n > CHAIN_RECLAIM_BATCH_MAX ? CHAIN_RECLAIM_BATCH_MAX
					  : n;
	return (uint32_t)waiting_bounded(n, chain_elem_bytes(c), c->map.max_entries);
}

/* The pending stack of the calling thread: threads are dealt the shards
 * round robin on their first delete, so two deleting threads rarely share
 * one (its lock and cache line). */
static __thread uint32_t chain_thread_shard; /* 1 + shard; 0: not dealt yet */
static uint32_t chain_shards_dealt;

static ALWAYS_INLINE struct chain_pending *chain_my_pending(struct chain *c)
{
	uint32_t s = chain_thread_shard;

	if (unlikely(!s)) {
		s = 1 + __atomic_fetch_add(&chain_shards_dealt, 1, __ATOMIC_RELAXED) %
				CHAIN_PENDING_SHARDS;
		chain_thread_shard = s;
	}
	return &c->pending[s - 1];
}

/* Take a whole pending stack; *n: its length, counted in reclaiming until
 * released. */
static struct chain_elem *chain_pending_take(struct chain *c, struct chain_pending *p, uint32_t *n)
{
	struct chain_elem *list;

	spin_lock_word(&p->lock);
	list = p->head;
	p->head = p->tail = NULL;
	*n = __atomic_load_n(&p->n, __ATOMIC_RELAXED);
	/* Counted as reclaiming before no longer pending: mem_usage never
	 * misses them. */
	__atomic_fetch_add(&c->reclaiming, *n, __ATOMIC_RELAXED);
	__atomic_store_n(&p->n, 0, __ATOMIC_RELAXED);
	spin_unlock_word(&p->lock);
	return list;
}

/* Queue a taken stack of n elements one by one (no waiting allowed). */
static void chain_defer_batch(struct chain *c, struct chain_elem *list, uint32_t n)
{
	__atomic_fetch_add(&c->deferred, n, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&c->reclaiming, n, __ATOMIC_RELAXED);
	handoff_get(&c->callbacks, n);
	while (list) {
		struct chain_elem *next = list->reclaim_next; /* rcu overlays it */

		rcu_defer(&list->rcu, chain_elem_reclaim);
		list = next;
	}
}

/* Move every shard's stack onto pending[CHAIN_FLUSHING], still pending:
 * inserts that find no memory steal from it too (chain_pending_steal) while
 * the flush waits.  Each moves whole under both stacks' locks (the fork
 * guard's order), so that no deleted element is ever on neither: when the
 * flush walked a stack to its tail between the two, thousands of elements
 * at a time, inserts of an LRU_PERCPU_HASH with room found none to steal,
 * borrowed from the heap until its slot indices ran out, and then evicted
 * live keys.  False, nothing moved, if another flush uses it (call_rcu
 * workers of the application's may run two at once) or nothing was
 * pending. */
static bool chain_flush_gather(struct chain *c)
{
	struct chain_pending *to = &c->pending[CHAIN_FLUSHING];
	bool any = false;

	if (__atomic_exchange_n(&c->flushing, true, __ATOMIC_ACQUIRE))
		return false;
	for (uint32_t i = 0; i < CHAIN_PENDING_SHARDS; i++) {
		struct chain_pending *p = &c->pending[i];

		if (!__atomic_load_n(&p->n, __ATOMIC_RELAXED))
			continue;
		spin_lock_word(&p->lock);
		spin_lock_word(&to->lock);
		if (p->head) {
			p->tail->reclaim_next = to->head;
			if (!to->head)
				to->tail = p->tail;
			to->head = p->head;
			__atomic_store_n(&to->n, __atomic_load_n(&to->n, __ATOMIC_RELAXED) +
						 __atomic_load_n(&p->n, __ATOMIC_RELAXED),
					 __ATOMIC_RELAXED);
			p->head = p->tail = NULL;
			__atomic_store_n(&p->n, 0, __ATOMIC_RELAXED);
			any = true;
		}
		spin_unlock_word(&to->lock);
		spin_unlock_word(&p->lock);
	}
	if (!any)
		__atomic_store_n(&c->flushing, false, __ATOMIC_RELEASE);
	return any;
}

/*
 * Queued whenever an element lands on an empty stack and no flush is queued:
 * so every pending element is reclaimed within a round of the worker, even
 * if deletes stop.  The flag drops before the stacks are taken, so that an
 * element pushed after its stack was taken queues the next flush.  Some
 * were pushed after this callback was queued, so it waits for a grace
 * period, tens of milliseconds when readers are busy: when it held the
 * stacks apart meanwhile, inserts inside sections into an evicting map
 * with room found nothing to reuse and evicted live keys instead, all of
 * them in a churn of seconds.
 */
static void chain_flush_pending(struct rcu_head *head)
{
	struct chain *c = container_of(head, struct chain, flush_rcu);

	rcu_deferred_enter();
	/* Once bpfmap_free has run, the teardown releases the stacks without
	 * a grace period: no need to wait for one here. */
	if (!handoff_freed(&c->callbacks)) {
		__atomic_store_n(&c->flush_queued, false, __ATOMIC_RELEASE);
		if (chain_flush_gather(c)) {
			uint32_t n;
			struct chain_elem *list;

			TEST_HOOK(HOOK_FLUSH_WAITING, c);
			rcu_synchronize();
			/* Releasing before they leave the stack, on which inserts
			 * that find no memory look for them: such an insert waits
			 * for the first to land (chain_elem_reusable) rather than
			 * borrow one from the heap for good. */
			__atomic_fetch_add(&c->releasing, 1, __ATOMIC_RELAXED);
			list = chain_pending_take(c, &c->pending[CHAIN_FLUSHING], &n);
			__atomic_store_n(&c->flushing, false, __ATOMIC_RELEASE);
			chain_release_batch(c, list, n);
			__atomic_fetch_sub(&c->releasing, 1, __ATOMIC_RELEASE);
		} else {
			for (uint32_t i = 0; i < CHAIN_PENDING_SHARDS; i++) {
				uint32_t n;
				struct chain_elem *list = chain_pending_take(c, &c->pending[i], &n);

				if (list) {
					rcu_synchronize();
					chain_release_batch(c, list, n);
				}
			}
		}
	}
	rcu_deferred_exit();
	chain_callback_done(c);
}

void chain_unlink_locked(struct chain *c, struct chain_elem **link, struct chain_elem *e)
{
	uint32_t ticket = count_delete_begin(&c->count); /* busy before the key goes */

	chain_unlink_keep_count(c, link, e);
	count_delete_end(&c->count, ticket);
}

void chain_unlink_keep_count(struct chain *c, struct chain_elem **link, struct chain_elem *e)
{
	chain_unlink_only(c, link, e);
	chain_retire_unlinked(c, e);
}

void chain_unlink_only(struct chain *c, struct chain_elem **link, struct chain_elem *e)
{
	/* Retired before unlinked: lock-free writers and copy-out readers that
	 * still hold @e see that the key left the map (chain_update_lockfree). */
	seqcount_retire(&e->seq);
	__atomic_store_n(link, elem_next(e), __ATOMIC_RELEASE);
	TEST_HOOK(HOOK_DELETE_HIDDEN, c);
	(void)c;
}

void chain_retire_unlinked(struct chain *c, struct chain_elem *e)
{
	struct chain_pending *p = chain_my_pending(c);
	uint32_t n;

	spin_lock_word(&p->lock);
	TEST_HOOK(HOOK_RETIRE_LOCKED, &p->lock);
	if (!p->head)
		p->tail = e;
	e->reclaim_next = p->head;
	p->head = e;
	n = __atomic_load_n(&p->n, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&p->n, n, __ATOMIC_RELAXED);
	spin_unlock_word(&p->lock);
	if (unlikely(n == 1) && handoff_get_once(&c->callbacks, &c->flush_queued))
		rcu_defer(&c->flush_rcu, chain_flush_pending);
}

struct chain_elem *chain_pending_steal(struct chain *c)
{
	for (uint32_t i = 0; i < CHAIN_PENDING_STACKS; i++) {
		struct chain_pending *p = &c->pending[i];
		struct chain_elem *e;

		if (!__atomic_load_n(&p->n, __ATOMIC_RELAXED))
			continue;
		spin_lock_word(&p->lock);
		e = p->head;
		if (e) {
			p->head = e->reclaim_next;
			if (!p->head)
				p->tail = NULL;
			__atomic_store_n(&p->n, __atomic_load_n(&p->n, __ATOMIC_RELAXED) - 1,
					 __ATOMIC_RELAXED);
		}
		spin_unlock_word(&p->lock);
		if (e)
			return e;
	}
	return NULL;
}

/* The backlog of elements queued one by one, past which deleters wait. */
uint32_t chain_deferred_limit(uint32_t max_entries)
{
	uint64_t limit = (uint64_t)max_entries * CHAIN_DEFERRED_PER_MAX;

	return limit < CHAIN_DEFERRED_MIN ? CHAIN_DEFERRED_MIN : (uint32_t)limit;
}

static __attribute__((noinline)) void chain_reclaim_pending(struct chain *c,
							  struct chain_pending *p)
{
	uint32_t n;
	struct chain_elem *list = chain_pending_take(c, p, &n);

	if (!list)
		return; /* another deleter took it */
	if (rcu_may_wait()) {
		rcu_synchronize();
		chain_release_batch(c, list, n);
	} else {
		chain_defer_batch(c, list, n);
	}
}

bool chain_reclaim_pending_now(struct chain *c)
{
	if (!rcu_may_wait())
		return false;
	for (uint32_t i = 0; i < CHAIN_PENDING_SHARDS; i++)
		chain_reclaim_pending(c, &c->pending[i]);
	return true;
}

bool chain_reclaim_now(struct chain *c)
{
	if (!chain_reclaim_pending_now(c))
		return false;
	rcu_wait_deferred();
	return true;
}

bool chain_slots_landing(struct chain *c)
{
	unsigned int spins = 0;
	bool waited = false;

	/* Another thread's release can only be waited for where grace
	 * periods end: it may be waiting for one. */
	while (slot_arena_giving_elsewhere(&c->pcpu_heap) ||
	       (rcu_may_wait() && __atomic_load_n(&c->reclaiming, __ATOMIC_ACQUIRE))) {
		if (!waited)
			TEST_HOOK(HOOK_SLOTS_LANDING, c);
		waited = true;
		backoff(&spins);
	}
	return waited;
}

void chain_reclaim_throttle(struct chain *c)
{
	struct chain_pending *p = chain_my_pending(c);

	/* Inside a section a preallocated map leaves a full stack where it is:
	 * queued one by one, its elements would be out of reach of the
	 * inserts that find no memory there (chain_pending_steal), and the
	 * flush callback takes it after a grace period all the same. */
	if (unlikely(__atomic_load_n(&p->n, __ATOMIC_RELAXED) >= c->reclaim_batch) &&
	    (!chain_reuses(c) || rcu_may_wait()))
		chain_reclaim_pending(c, p);
	if (likely(__atomic_load_n(&c->deferred, __ATOMIC_RELAXED) <= c->deferred_limit))
		return;
	if (rcu_may_wait())
		rcu_wait_deferred();
}

/* fork(): the locks that the callbacks take (sync/fork_guard.h). */
static void chain_fork_hold(struct fork_guard *g)
{
	struct chain *c = container_of(g, struct chain, guard);

	spin_lock_word(&c->spare_lock);
	for (uint32_t i = 0; i < CHAIN_PENDING_STACKS; i++)
		spin_lock_word(&c->pending[i].lock);
	if (c->pcpu) /* the callbacks give heap slots back */
		slot_arena_hold(&c->pcpu_heap);
}

static void chain_fork_release(struct fork_guard *g)
{
	struct chain *c = container_of(g, struct chain, guard);

	if (c->pcpu)
		slot_arena_release(&c->pcpu_heap);
	for (uint32_t i = 0; i < CHAIN_PENDING_STACKS; i++)
		spin_unlock_word(&c->pending[i].lock);
	spin_unlock_word(&c->spare_lock);
}

void chain_guard_fork(struct chain *c)
{
	c->guard.hold = chain_fork_hold;
	c->guard.release = chain_fork_release;
	fork_guard_add(&c->guard);
}

/* Hand c to its last reclamation callback, if one still runs (sync/handoff.h).
 * No other thread holds c's locks from here on, so fork() need not wait
 * for them. */
void chain_free(struct bpfmap *map)
{
	struct chain *c = to_chain(map);

	fork_guard_remove(&c->guard);
	if (handoff_free(&c->callbacks))
		chain_teardown(c);
}

int chain_prealloc(struct chain *c)
{
	uint32_t cpus = (uint32_t)bpfmap_num_possible_cpus();
	uint64_t slack = (uint64_t)(cpus > 0 ? cpus : 1) * CHAIN_POOL_SLACK_PER_CPU;
	uint64_t size;

	/* Inserts inside a section reuse a deleted element at once when the
	 * pool is dry (chain_may_reuse), which the flat table's slack makes
	 * as rare as there: an evicting map keeps it in its pool (its inserts
	 * into a full map reuse at once too), the others borrow it from the
	 * heap first, when reclamation lags, so that their pool stays small.
	 * Their deleters outside sections reclaim a batch at a time, which
	 * must come before inserts have used that slack up: else a map churned
	 * outside sections alone reused deleted elements under its readers
	 * every batch (a 64-entry map: a batch of 2048, a slack of 1026).
	 * Each deleting thread fills a stack of its own (one of
	 * CHAIN_PENDING_SHARDS), so a batch is a share of the slack: with a
	 * whole slack each, two deleters kept up to twice that pending, and
	 * half their inserts reused deleted elements. */
	uint64_t bytes = chain_elem_bytes(c);
	uint64_t flat = pool_slack(c->map.max_entries, bytes);

	if (c->evict)
		slack = flat > slack ? flat : slack;
	/* An evicting map's inserts outside sections borrow as much as that
	 * too, on top of the slack its pool keeps, before they wait for
	 * deleted elements (chain_may_borrow): they borrowed without bound.
	 * Large elements: both bounded in bytes, as the pool is touched whole
	 * at creation and what is borrowed is kept for the map's life. */
	slack = waiting_bounded(slack, bytes, c->map.max_entries);
	c->borrow_cap = (size_t)waiting_bounded(flat, bytes, c->map.max_entries);
	if (!c->evict) {
		if (c->reclaim_batch > flat / CHAIN_PENDING_SHARDS)
			c->reclaim_batch = (uint32_t)(flat / CHAIN_PENDING_SHARDS);
	}
	size = (uint64_t)c->map.max_entries + slack;

	c->pool_size = (uint32_t)(size > UINT32_MAX - 1 ? UINT32_MAX - 1 : size);
	c->pool = big_zalloc((size_t)c->pool_size * c->elem_size);
	if (!c->pool)
		return -ENOMEM;
	if (freelist_init(&c->free_slots, c->pool_size))
		return -ENOMEM;
	for (uint32_t i = c->pool_size; i-- > 0;) {
		pool_elem(c, i)->owner = c;
		if (c->map.cpus) /* per-CPU slots: the pool's indices first */
			chain_pcpu_set_offset(c, pool_elem(c, i), (size_t)i * c->map.cpu_stride);
		freelist_push(&c->free_slots, i);
	}
	return 0;
}
