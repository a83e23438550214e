/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The chained table's eviction: the LRU lists of an evicting map and the
 * choice of a victim.  The design is in tables/chain_lru.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "sync/count.h"
#include "sync/spin_lock.h"
#include "tables/chain_lru.h"
#include "util/clock.h"
#include "util/cpu.h"
#include "util/test_hook.h"

/* At most this many lists: beyond, CPUs share them. */
#define CHAIN_LRU_LISTS_MAX 1024U

int chain_lru_init(struct chain *c, bool per_cpu)
{
	int cpus = bpfmap_num_possible_cpus();
	uint32_t n = cpus > 0 ? (uint32_t)cpus : 1;

	if (n > CHAIN_LRU_LISTS_MAX)
		n = CHAIN_LRU_LISTS_MAX;
	c->lru = calloc(n, sizeof(*c->lru));
	if (!c->lru)
		return -ENOMEM;
	c->n_lru = n;
	if (per_cpu) {
		c->lru_cap = c->map.max_entries / n;
		if (!c->lru_cap)
			c->lru_cap = 1;
	}
	return 0;
}

void chain_lru_destroy(struct chain *c)
{
	free(c->lru);
	c->lru = NULL;
}

/* List operations, under the list's lock. */
static void lru_append(struct chain_lru_list *l, struct chain_elem *e)
{
	struct chain_elem *h = l->head;

	if (!h) {
		e->lru.prev = e->lru.next = e;
		__atomic_store_n(&l->head, e, __ATOMIC_RELEASE);
	} else {
		e->lru.next = h;
		e->lru.prev = h->lru.prev;
		h->lru.prev->lru.next = e;
		h->lru.prev = e;
	}
	__atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELAXED);
}

static void lru_remove(struct chain_lru_list *l, struct chain_elem *e)
{
	if (e->lru.next == e) {
		__atomic_store_n(&l->head, NULL, __ATOMIC_RELAXED);
	} else {
		e->lru.prev->lru.next = e->lru.next;
		e->lru.next->lru.prev = e->lru.prev;
		if (l->head == e)
			__atomic_store_n(&l->head, e->lru.next, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&l->n, l->n - 1, __ATOMIC_RELAXED);
}

void chain_lru_add(struct chain *c, struct chain_elem *e, uint32_t i)
{
	struct chain_lru_tag *t = chain_lru_tag(c, e);
	struct chain_lru_list *l = &c->lru[i];

	t->list = (uint16_t)i;
	__atomic_store_n(&t->ref, 0, __ATOMIC_RELAXED);
	spin_lock_word(&l->lock);
	__atomic_store_n(&t->stamp, clock_ticks(), __ATOMIC_RELAXED);
	lru_append(l, e);
	spin_unlock_word(&l->lock);
}

void chain_unlink_elem(struct chain *c, struct chain_elem **link, struct chain_elem *e)
{
	if (c->evict) {
		struct chain_lru_list *l = &c->lru[chain_lru_tag(c, e)->list];

		spin_lock_word(&l->lock);
		lru_remove(l, e);
		spin_unlock_word(&l->lock);
	}
	chain_unlink_locked(c, link, e);
}

/* The link that points at @e in bucket @b, which is locked and holds it. */
static struct chain_elem **link_to(struct chain_bucket *b, const struct chain_elem *e)
{
	struct chain_elem **link = &b->head;

	while (*link != e)
		link = &(*link)->next;
	return link;
}

/* Whether list @a's oldest element is older than @b's (a tie: @a is the
 * longer), for choosing where to evict: read without the lists' locks (a
 * stale answer only picks the other list). */
static bool lru_older(const struct chain *c, const struct chain_lru_list *a,
		      const struct chain_lru_list *b)
{
	const struct chain_elem *ha = __atomic_load_n(&a->head, __ATOMIC_ACQUIRE);
	const struct chain_elem *hb = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
	uint64_t sa, sb;

	if (!ha || !hb)
		return ha != NULL;
	sa = __atomic_load_n(&chain_lru_tag(c, ha)->stamp, __ATOMIC_RELAXED);
	sb = __atomic_load_n(&chain_lru_tag(c, hb)->stamp, __ATOMIC_RELAXED);
	if (sa != sb)
		return sa < sb;
	return __atomic_load_n(&a->n, __ATOMIC_RELAXED) > __atomic_load_n(&b->n, __ATOMIC_RELAXED);
}

/* Evict one element of list @l (see chain_lru.h); true if one went.
 * @force: the oldest whose bucket can be locked, whatever its count. */
static bool lru_evict_from(struct chain *c, struct chain_lru_list *l, struct chain_bucket *held,
			   bool force)
{
	struct chain_elem *e;
	uint32_t scan;

	spin_lock_word(&l->lock);
	scan = l->n < CHAIN_LRU_SCAN ? l->n : CHAIN_LRU_SCAN;
	for (uint32_t i = 0; i < scan && (e = l->head); i++) {
		struct chain_lru_tag *t = chain_lru_tag(c, e);
		uint8_t ref = __atomic_load_n(&t->ref, __ATOMIC_RELAXED);
		struct chain_bucket *b;

		if (ref && !force) {
			__atomic_store_n(&t->ref, (uint8_t)(ref - 1), __ATOMIC_RELAXED);
			goto back;
		}
		/* On a list, so linked: its hash is its bucket's. */
		b = chain_bucket(c, e->hash);
		if (b != held && !seq_spin_trylock(&b->lock))
			goto back;
		lru_remove(l, e);
		spin_unlock_word(&l->lock);
		TEST_HOOK(HOOK_LRU_VICTIM, e);
		chain_unlink_locked(c, link_to(b, e), e);
		if (b != held)
			chain_bucket_unlock(b);
		return true;
back:
		__atomic_store_n(&t->stamp, clock_ticks(), __ATOMIC_RELAXED);
		__atomic_store_n(&l->head, e->lru.next, __ATOMIC_RELEASE);
	}
	spin_unlock_word(&l->lock);
	return false;
}

/* One eviction: the older of the caller's CPU's list (@own) and another's
 * (per-CPU lists: the own list only), then every list in turn, then the
 * same forced (see chain_lru.h). */
static bool lru_evict(struct chain *c, struct chain_bucket *held, uint32_t own)
{
	uint32_t n = c->n_lru;
	struct chain_lru_list *l = &c->lru[own];

	if (n > 1 && !c->lru_cap) {
		uint32_t rr = __atomic_fetch_add(&c->lru_rr, 1, __ATOMIC_RELAXED);
		uint32_t other = (own + 1 + rr % (n - 1)) % n;

		if (lru_older(c, &c->lru[other], l))
			l = &c->lru[other];
	}
	for (int force = 0; force < 2; force++) {
		if (lru_evict_from(c, l, held, force))
			return true;
		for (uint32_t i = 0; i < n; i++) {
			struct chain_lru_list *o = &c->lru[i];

			if (o != l && __atomic_load_n(&o->head, __ATOMIC_RELAXED) &&
			    lru_evict_from(c, o, held, force))
				return true;
		}
	}
	return false;
}

/* Evictions per attempt before the caller drops its bucket lock: other
 * inserts may take the room each one makes. */
#define CHAIN_LRU_TRIES 8

uint32_t chain_lru_reserve(struct chain *c, struct chain_bucket *held, uint32_t *list)
{
	uint32_t own = cpu_current() % c->n_lru, ticket;

	*list = own;
	/* Per-CPU lists: a full own list evicts, whatever the others hold. */
	if (c->lru_cap) {
		struct chain_lru_list *l = &c->lru[own];

		for (uint32_t i = 0; __atomic_load_n(&l->n, __ATOMIC_RELAXED) >= c->lru_cap; i++)
			if (i == CHAIN_LRU_TRIES ||
			    (!lru_evict_from(c, l, held, false) && !lru_evict_from(c, l, held, true)))
				return COUNT_FULL;
	}
	ticket = count_insert_begin(&c->count);
	for (uint32_t i = 0; ticket == COUNT_FULL && i < CHAIN_LRU_TRIES; i++) {
		if (!lru_evict(c, held, own))
			break;
		ticket = count_insert_begin(&c->count);
	}
	return ticket;
}
