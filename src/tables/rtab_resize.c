/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's resizes: when to start one, and the moving of lock
 * groups from a table into its next, shared out among the inserts and
 * deletes that come by (tables/rtab.h has the invariants).
 *
 * A table grows to twice its buckets when it holds more elements than
 * buckets (load 1: a chain of about one element, and 4 + 24 bytes an
 * element of 8 + 8 at the most crowded, tables/rtab.h), and shrinks to half
 * below a quarter, so that a shrink lands at load 1/2, away from the next
 * grow.  Each insert or delete that finds a resize in progress moves
 * RTAB_HELP_GROUPS groups of eight buckets: a resize of n buckets is done
 * after n / 32 of them, long before the count can ask for the next one.
 */
#include "tables/rtab.h"
#include "util/test_hook.h"

#define RTAB_HELP_GROUPS 4
/* Inserts and deletes per thread between two looks at the element count
 * (a look sums the count's shards). */
#define RTAB_CHECK_EVERY 16

static __thread uint32_t rtab_tick;

static void rtab_table_free_cb(struct rcu_head *head)
{
	rcu_deferred_enter();
	rtab_table_free(caa_container_of(head, struct rtab_table, rcu));
	rcu_deferred_exit();
}

/* Old bucket @b's chain into new buckets 2b and 2b + 1: the chain is in
 * hash order, so the second begins at its first element with the next hash
 * bit set, and the first ends just before it.  The cut comes before the
 * MOVED mark: once a writer can reach the new buckets, only it edits them;
 * a reader still in the old chain may miss a key past the cut, and then
 * fails its validation (the group's word changed) and retries. */
static void rtab_split(struct rtab *r, struct rtab_table *t, struct rtab_table *nt, uint32_t b)
{
	uint32_t head = __atomic_load_n(&t->heads[b], __ATOMIC_RELAXED);
	uint32_t hi = head;
	struct rtab_elem *last_lo = NULL;

	while (hi != RTAB_NONE) {
		struct rtab_elem *e = rtab_link_elem(r, hi);

		if (rtab_bucket(nt, e->hash) != 2 * b)
			break;
		last_lo = e;
		hi = __atomic_load_n(&e->next, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&nt->heads[2 * b], last_lo ? head : RTAB_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&nt->heads[2 * b + 1], hi, __ATOMIC_RELAXED);
	if (last_lo)
		__atomic_store_n(&last_lo->next, RTAB_NONE, __ATOMIC_RELEASE);
	__atomic_store_n(&t->heads[b], RTAB_MOVED, __ATOMIC_RELEASE);
}

/* Old buckets 2b and 2b + 1 into new bucket b: the first chain's tail links
 * to the second's head (still in order, so a reader of the first chain only
 * walks further before it stops). */
static void rtab_merge(struct rtab *r, struct rtab_table *t, struct rtab_table *nt, uint32_t b)
{
	uint32_t h0 = __atomic_load_n(&t->heads[2 * b], __ATOMIC_RELAXED);
	uint32_t h1 = __atomic_load_n(&t->heads[2 * b + 1], __ATOMIC_RELAXED);

	if (h0 != RTAB_NONE && h1 != RTAB_NONE) {
		struct rtab_elem *tail = rtab_link_elem(r, h0);
		uint32_t l;

		while ((l = __atomic_load_n(&tail->next, __ATOMIC_RELAXED)) != RTAB_NONE)
			tail = rtab_link_elem(r, l);
		__atomic_store_n(&tail->next, h1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&nt->heads[b], h0 != RTAB_NONE ? h0 : h1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->heads[2 * b], RTAB_MOVED, __ATOMIC_RELEASE);
	__atomic_store_n(&t->heads[2 * b + 1], RTAB_MOVED, __ATOMIC_RELEASE);
}

static void rtab_move_group(struct rtab *r, struct rtab_table *t, struct rtab_table *nt,
			    uint32_t g)
{
	uint32_t *lock = &t->locks[g];
	uint32_t first = g << RTAB_STRIPE_SHIFT;

	seq_spin_lock(lock);
	TEST_HOOK(HOOK_RTAB_MOVE, t);
	if (nt->n > t->n)
		for (uint32_t b = first; b < first + RTAB_STRIPE; b++)
			rtab_split(r, t, nt, b);
	else
		for (uint32_t b = first / 2; b < (first + RTAB_STRIPE) / 2; b++)
			rtab_merge(r, t, nt, b);
	seq_spin_unlock(lock);
}

/* The last group moved: @nt becomes the map's table, and @t goes once no
 * reader can be in it. */
static void rtab_finish(struct rtab *r, struct rtab_table *t, struct rtab_table *nt)
{
	__atomic_store_n(&r->table, rtab_table_word(nt), __ATOMIC_RELEASE);
	rcu_defer(&t->rcu, rtab_table_free_cb);
}

static void rtab_resize_help(struct rtab *r, struct rtab_table *t, struct rtab_table *nt)
{
	uint32_t groups = t->n >> RTAB_STRIPE_SHIFT;

	for (int i = 0; i < RTAB_HELP_GROUPS; i++) {
		uint32_t g = __atomic_fetch_add(&t->claimed, 1, __ATOMIC_RELAXED);

		if (g >= groups)
			return;
		rtab_move_group(r, t, nt, g);
		if (__atomic_add_fetch(&t->moved, 1, __ATOMIC_ACQ_REL) == groups) {
			rtab_finish(r, t, nt);
			return;
		}
	}
}

/* A table of 2^@bits buckets to move @t into, unless another thread has
 * started a resize or finished one meanwhile.  Without memory the table
 * keeps its size: slower chains, nothing lost. */
static void rtab_resize_start(struct rtab *r, struct rtab_table *t, uint32_t bits)
{
	uint32_t idle = 0;
	struct rtab_table *nt;

	if (!__atomic_compare_exchange_n(&r->resize_lock, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (rtab_table_of(r) == t && !__atomic_load_n(&t->next, __ATOMIC_ACQUIRE)) {
		nt = rtab_table_alloc(bits);
		if (nt) {
			__atomic_store_n(&t->next, nt, __ATOMIC_RELEASE);
			__atomic_fetch_add(&r->resizes, 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&r->resize_lock, 0, __ATOMIC_RELEASE);
}

void rtab_resize_check(struct rtab *r, bool long_chain)
{
	struct rtab_table *t = rtab_table_of(r);
	struct rtab_table *nt = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	uint32_t bits, n;

	if (nt) {
		rtab_resize_help(r, t, nt);
		return;
	}
	if (!long_chain && ++rtab_tick % RTAB_CHECK_EVERY)
		return;
	bits = 32 - t->shift;
	n = count_elements(&r->count);
	if (n > t->n && bits < r->max_bits)
		rtab_resize_start(r, t, bits + 1);
	else if (n < t->n / 4 && bits > r->min_bits)
		rtab_resize_start(r, t, bits - 1);
	else
		return;
	nt = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	if (nt)
		rtab_resize_help(r, t, nt);
}
