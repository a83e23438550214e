/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's storage: its bucket arrays, its element arena, the
 * elements' reclamation after a grace period, and the chain operations that
 * a group's lock holder performs.  The design is in tables/rtab.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "sync/handoff.h"
#include "tables/rtab.h"
#include "tables/value.h"
#include "util/shared_copy.h"
#include "util/big_alloc.h"

/* Deleted elements wait for one grace period together, this many at most. */
#define RTAB_RETIRE_BATCH 256u

struct rtab_retired {
	struct rcu_head rcu;
	struct rtab *r;
	uint32_t first; /* index + 1, linked through the elements' hash words */
	uint32_t n;
};

static size_t rtab_table_bytes(uint32_t bits)
{
	size_t n = (size_t)1 << bits;

	return sizeof(struct rtab_table) + n * sizeof(uint32_t) + (n >> RTAB_STRIPE_SHIFT) * 4;
}

struct rtab_table *rtab_table_alloc(uint32_t bits)
{
	struct rtab_table *t = big_zalloc(rtab_table_bytes(bits));

	if (!t)
		return NULL;
	t->n = 1u << bits;
	t->shift = 32 - bits;
	t->locks = t->heads + t->n;
	return t;
}

void rtab_table_free(struct rtab_table *t)
{
	big_free(t);
}

size_t rtab_table_mem(const struct rtab_table *t)
{
	return rtab_table_bytes(32 - t->shift);
}

/*
 * The free stack and the retired lists are linked through the elements
 * themselves.  A free element is unreachable, so its link word is free to
 * use.  A retired one may still be walked by a reader that reached it
 * before its unlink, so only its hash word is reused: such a reader follows
 * its intact link, and whatever it concludes from the hash is checked,
 * since the unlink changed the group's word after the reader first read it
 * (a miss is validated, a copy-out too, and a program-view hit compares the
 * unchanged key as well).
 */
static ALWAYS_INLINE void rtab_set_retired_link(struct rtab_elem *e, uint32_t link)
{
	__atomic_store_n(&e->hash, link, __ATOMIC_RELAXED);
}

uint32_t rtab_elem_alloc(struct rtab *r)
{
	uint32_t top, fresh;

	if (__atomic_load_n(&r->free_n, __ATOMIC_RELAXED)) {
		spin_lock_word(&r->free_lock);
		top = r->free_head;
		if (top != RTAB_NONE) {
			r->free_head = rtab_link_elem(r, top)->next;
			__atomic_store_n(&r->free_n, r->free_n - 1, __ATOMIC_RELAXED);
		}
		spin_unlock_word(&r->free_lock);
		if (top != RTAB_NONE)
			return top;
	}
	fresh = __atomic_load_n(&r->fresh, __ATOMIC_RELAXED);
	do {
		if (fresh > r->cap)
			return UINT32_MAX;
	} while (!__atomic_compare_exchange_n(&r->fresh, &fresh, fresh + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return fresh;
}

/* Push the chain first..last (@n elements, linked by next) on the free stack. */
static void rtab_free_push(struct rtab *r, uint32_t first, struct rtab_elem *last, uint32_t n)
{
	spin_lock_word(&r->free_lock);
	last->next = r->free_head;
	r->free_head = first;
	__atomic_store_n(&r->free_n, r->free_n + n, __ATOMIC_RELAXED);
	spin_unlock_word(&r->free_lock);
}

void rtab_elem_unused(struct rtab *r, uint32_t idx)
{
	rtab_free_push(r, idx, rtab_elem(r, idx), 1);
}

static void rtab_teardown(struct rtab *r)
{
	struct rtab_table *t = rtab_word_table(r->table);

	if (t) {
		rtab_table_free(t->next);
		rtab_table_free(t);
	}
	if (r->arena)
		big_unreserve(r->arena, ((size_t)r->cap + 1) * r->stride);
	count_destroy(&r->count);
	free(r);
}

static void rtab_retired_cb(struct rcu_head *head)
{
	struct rtab_retired *batch = caa_container_of(head, struct rtab_retired, rcu);
	struct rtab *r = batch->r;

	rcu_deferred_enter();
	if (!handoff_freed(&r->callbacks)) {
		struct rtab_elem *e = rtab_link_elem(r, batch->first);

		/* Relink by next: readers are gone, so the link words are free. */
		for (uint32_t i = 1; i < batch->n; i++) {
			uint32_t link = e->hash;

			e->next = link;
			e = rtab_link_elem(r, link);
		}
		rtab_free_push(r, batch->first, e, batch->n);
		__atomic_fetch_sub(&r->retired_n, batch->n, __ATOMIC_RELAXED);
	}
	free(batch);
	if (handoff_put(&r->callbacks))
		rtab_teardown(r);
	rcu_deferred_exit();
}

/* Queue the retired list for its grace period; with the retire lock held.
 * Without memory for the batch the list stays, and the next retire tries
 * again: nothing is lost. */
static void rtab_retire_flush_locked(struct rtab *r)
{
	struct rtab_retired *batch;

	if (!r->retiring_n)
		return;
	batch = malloc(sizeof(*batch));
	if (!batch)
		return;
	batch->r = r;
	batch->first = r->retiring;
	batch->n = r->retiring_n;
	r->retiring = RTAB_NONE;
	r->retiring_n = 0;
	handoff_get(&r->callbacks, 1);
	rcu_defer(&batch->rcu, rtab_retired_cb);
}

void rtab_elem_retire(struct rtab *r, uint32_t idx)
{
	__atomic_fetch_add(&r->retired_n, 1, __ATOMIC_RELAXED);
	spin_lock_word(&r->retire_lock);
	rtab_set_retired_link(rtab_elem(r, idx), r->retiring);
	r->retiring = idx;
	if (++r->retiring_n >= r->retire_batch)
		rtab_retire_flush_locked(r);
	spin_unlock_word(&r->retire_lock);
}

void rtab_reclaim_wait(struct rtab *r)
{
	spin_lock_word(&r->retire_lock);
	rtab_retire_flush_locked(r);
	spin_unlock_word(&r->retire_lock);
	rcu_wait_deferred();
}

uint32_t rtab_retire_batch_for(uint32_t max_entries)
{
	uint32_t b = max_entries / 64;

	return b < 16 ? 16 : b > RTAB_RETIRE_BATCH ? RTAB_RETIRE_BATCH : b;
}

struct rtab_table *rtab_lock_bucket(struct rtab *r, uint32_t hash, uint32_t *b_out)
{
	struct rtab_table *t = rtab_table_of(r);

	for (;;) {
		uint32_t b = rtab_bucket(t, hash);
		uint32_t *lock = rtab_lock_of(t, b);

		seq_spin_lock(lock);
		if (likely(__atomic_load_n(&t->heads[b], __ATOMIC_RELAXED) != RTAB_MOVED)) {
			*b_out = b;
			return t;
		}
		seq_spin_unlock(lock);
		t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	}
}

struct rtab_elem *rtab_chain_find_locked(struct rtab *r, struct rtab_table *t, uint32_t b,
					 uint32_t hash, const void *key, uint32_t **link_out)
{
	uint32_t *link = &t->heads[b];
	uint32_t l;

	while ((l = __atomic_load_n(link, __ATOMIC_RELAXED)) != RTAB_NONE) {
		struct rtab_elem *e = rtab_link_elem(r, l);
		int c = rtab_order(e, hash, key, r->map.key_size);

		if (c <= 0) {
			*link_out = link;
			return c ? NULL : e;
		}
		link = &e->next;
	}
	*link_out = link;
	return NULL;
}

void rtab_link_locked(uint32_t *link, struct rtab_elem *e, uint32_t idx)
{
	e->next = __atomic_load_n(link, __ATOMIC_RELAXED);
	__atomic_store_n(link, idx, __ATOMIC_RELEASE);
}

void rtab_unlink_locked(uint32_t *link, struct rtab_elem *e)
{
	__atomic_store_n(link, __atomic_load_n(&e->next, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
}

int rtab_arena_init(struct rtab *r, uint32_t max_entries)
{
	/* Room beyond max_entries for deleted elements in their grace
	 * period: inserts go on meanwhile instead of waiting for one. */
	uint32_t spare = max_entries / 4;

	spare = spare < 1024 ? 1024 : spare > (1u << 20) ? 1u << 20 : spare;
	r->cap = (uint32_t)((uint64_t)max_entries + spare > UINT32_MAX - 2 ? UINT32_MAX - 2
									  : max_entries + spare);
	/* Reserved, not committed: pages cost memory once an element uses
	 * them, and they never move, so neither do the elements. */
	r->arena = big_reserve(((size_t)r->cap + 1) * r->stride);
	r->fresh = 1; /* element 0: the sentinel that link 0 names */
	return r->arena ? 0 : -ENOMEM;
}

size_t rtab_arena_mem(const struct rtab *r)
{
	size_t page = 4096;
	size_t used = (size_t)__atomic_load_n(&r->fresh, __ATOMIC_RELAXED) * r->stride;

	return (used + page - 1) & ~(page - 1);
}

void rtab_destroy(struct rtab *r)
{
	if (handoff_free(&r->callbacks))
		rtab_teardown(r);
}

void rtab_copy_value_locked(struct rtab *r, struct rtab_elem *e, void *dst, bool lockf)
{
	if (lockf)
		value_copy_out_locked(&r->map, dst, rtab_value(r, e));
	else
		shared_copy_out(dst, rtab_value(r, e), r->map.value_size);
	value_clear_lock(&r->map, dst);
}

void rtab_delete_locked(struct rtab *r, uint32_t *link, struct rtab_elem *e)
{
	uint32_t ticket = count_delete_begin(&r->count);

	rtab_unlink_locked(link, e);
	count_delete_end(&r->count, ticket);
}
