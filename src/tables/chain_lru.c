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

/* Queue operations, under the list's lock.  Each queue is circular through
 * lru.prev/next, its head the oldest. */
static void lru_append(struct chain_lru_list *l, struct chain_elem *e, unsigned int q)
{
	struct chain_elem *h = l->head[q];

	if (!h) {
		e->lru.prev = e->lru.next = e;
		__atomic_store_n(&l->head[q], e, __ATOMIC_RELEASE);
	} else {
		e->lru.next = h;
		e->lru.prev = h->lru.prev;
		h->lru.prev->lru.next = e;
		h->lru.prev = e;
	}
	__atomic_store_n(&l->n[q], l->n[q] + 1, __ATOMIC_RELAXED);
}

static void lru_remove(struct chain_lru_list *l, struct chain_elem *e, unsigned int q)
{
	if (e->lru.next == e) {
		__atomic_store_n(&l->head[q], NULL, __ATOMIC_RELAXED);
	} else {
		e->lru.prev->lru.next = e->lru.next;
		e->lru.next->lru.prev = e->lru.prev;
		if (l->head[q] == e)
			__atomic_store_n(&l->head[q], e->lru.next, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&l->n[q], l->n[q] - 1, __ATOMIC_RELAXED);
}

static uint32_t lru_len(const struct chain_lru_list *l)
{
	return __atomic_load_n(&l->n[CHAIN_LRU_NEW], __ATOMIC_RELAXED) +
	       __atomic_load_n(&l->n[CHAIN_LRU_MAIN], __ATOMIC_RELAXED);
}

/* A list's elements and the inserts admitted to it (per-CPU lists). */
static uint32_t lru_taken(const struct chain_lru_list *l)
{
	return lru_len(l) + __atomic_load_n(&l->reserved, __ATOMIC_ACQUIRE);
}

/* The queue an eviction of list @l takes from: the new elements' while
 * they are more than CHAIN_LRU_NEW_PERCENT of the list (or the main queue
 * is empty), else the main one. */
static unsigned int lru_victim_queue(const struct chain_lru_list *l)
{
	uint32_t fresh = __atomic_load_n(&l->n[CHAIN_LRU_NEW], __ATOMIC_RELAXED);

	if (!__atomic_load_n(&l->head[CHAIN_LRU_MAIN], __ATOMIC_RELAXED))
		return CHAIN_LRU_NEW;
	return (uint64_t)fresh * 100 > (uint64_t)lru_len(l) * CHAIN_LRU_NEW_PERCENT
		       ? CHAIN_LRU_NEW
		       : CHAIN_LRU_MAIN;
}

void chain_lru_add(struct chain *c, struct chain_elem *e, uint32_t i)
{
	struct chain_lru_tag *t = chain_lru_tag(c, e);
	struct chain_lru_list *l = &c->lru[i];

	t->list = (uint16_t)i;
	t->queue = CHAIN_LRU_NEW;
	__atomic_store_n(&t->ref, 0, __ATOMIC_RELAXED);
	spin_lock_word(&l->lock);
	__atomic_store_n(&t->stamp, clock_ticks(), __ATOMIC_RELAXED);
	lru_append(l, e, CHAIN_LRU_NEW);
	spin_unlock_word(&l->lock);
	chain_lru_unreserve(c, i); /* on the list now: n counts it */
}

void chain_lru_unreserve(struct chain *c, uint32_t list)
{
	if (c->lru_cap)
		__atomic_fetch_sub(&c->lru[list].reserved, 1, __ATOMIC_RELEASE);
}

void chain_unlink_elem(struct chain *c, struct chain_elem **link, struct chain_elem *e)
{
	if (c->evict) {
		struct chain_lru_tag *t = chain_lru_tag(c, e);
		struct chain_lru_list *l = &c->lru[t->list];

		spin_lock_word(&l->lock);
		lru_remove(l, e, t->queue);
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

/* Which other list an eviction compares with its own: round robin per
 * thread (a shared counter would be one more line every evicting thread
 * writes). */
static uint32_t lru_next_other(void)
{
	static __thread uint32_t rr;

	return rr++;
}

/* The time of the oldest element list @l would evict from, UINT64_MAX for
 * an empty list: read without the list's lock (a stale answer only picks the
 * other list). */
static uint64_t lru_head_stamp(const struct chain *c, const struct chain_lru_list *l)
{
	const struct chain_elem *h = __atomic_load_n(&l->head[lru_victim_queue(l)],
						     __ATOMIC_ACQUIRE);

	return h ? __atomic_load_n(&chain_lru_tag(c, h)->stamp, __ATOMIC_RELAXED) : UINT64_MAX;
}

/* What room, found with the victim's bucket locked, calls an eviction
 * off: the insert takes it instead (docs/MAPS.md). */
enum lru_room {
	LRU_ROOM_IGNORED, /* no memory inside a section: evict all the same */
	LRU_ROOM_MAP,	  /* the map's (the common LRU; a list over its cap) */
	LRU_ROOM_LIST,	  /* the own list's, and the map's (per-CPU lists) */
};

/* Evict one element of list @l (see chain_lru.h); true if one went.  The
 * walk stops at an element younger than @limit, the other list's oldest:
 * the two lists are one queue merged by age.  @force: the oldest whose
 * bucket can be locked, whatever its count or age. */
static bool lru_evict_from(struct chain *c, struct chain_lru_list *l, uint64_t limit, bool force,
			   struct chain_elem **take, enum lru_room room)
{
	uint32_t scan;

	uint32_t left[2];
	unsigned int q;

	spin_lock_word(&l->lock);
	scan = lru_len(l) < CHAIN_LRU_SCAN ? lru_len(l) : CHAIN_LRU_SCAN;
	left[CHAIN_LRU_NEW] = l->n[CHAIN_LRU_NEW];
	left[CHAIN_LRU_MAIN] = l->n[CHAIN_LRU_MAIN];
	/* Forced: the new elements' queue first, whose heads were not used. */
	q = force && l->head[CHAIN_LRU_NEW] ? CHAIN_LRU_NEW : lru_victim_queue(l);
	for (uint32_t i = 0; i < scan; i++) {
		struct chain_elem *e;
		struct chain_lru_tag *t;
		struct chain_bucket *b;
		uint8_t ref;

		/* Each element once per walk, counted against the queue it was
		 * in when the walk began: a queue gone round goes on in the
		 * other (a main queue of hot keys must not be turned over until
		 * their counts run out while new ones wait in probation). */
		if (!left[q]) {
			q ^= 1;
			if (!left[q])
				break;
		}
		left[q]--;
		e = l->head[q];
		t = chain_lru_tag(c, e);
		ref = __atomic_load_n(&t->ref, __ATOMIC_RELAXED);
		if (!force && __atomic_load_n(&t->stamp, __ATOMIC_RELAXED) > limit)
			break;
		if (ref && !force) {
			/* Used: a new element joins the main queue, a main one
			 * goes round again; either spends one count. */
			__atomic_store_n(&t->ref, (uint8_t)(ref - 1), __ATOMIC_RELAXED);
			__atomic_store_n(&t->stamp, clock_ticks(), __ATOMIC_RELAXED);
			if (q == CHAIN_LRU_NEW) {
				lru_remove(l, e, q);
				t->queue = CHAIN_LRU_MAIN;
				lru_append(l, e, CHAIN_LRU_MAIN);
			} else {
				__atomic_store_n(&l->head[q], e->lru.next, __ATOMIC_RELEASE);
			}
			continue;
		}
		/* On a list, so linked: its hash is its bucket's. */
		b = chain_bucket(c, e->hash);
		if (!seq_spin_trylock(&b->lock)) {
			__atomic_store_n(&t->stamp, clock_ticks(), __ATOMIC_RELAXED);
			__atomic_store_n(&l->head[q], e->lru.next, __ATOMIC_RELEASE);
			continue;
		}
		/* Room made since the insert found the map full (a delete):
		 * the insert takes it, and nothing is evicted (docs/MAPS.md).
		 * A list's length is exact under its lock, as a delete takes
		 * the lock to leave it. */
		if (room != LRU_ROOM_IGNORED &&
		    (room == LRU_ROOM_MAP || lru_taken(l) < c->lru_cap) &&
		    !count_full_quiescent(&c->count)) {
			chain_bucket_unlock(b);
			break;
		}
		lru_remove(l, e, q);
		spin_unlock_word(&l->lock);
		TEST_HOOK(HOOK_LRU_VICTIM, e);
		if (take) {
			chain_unlink_only(c, link_to(b, e), e);
			*take = e;
		} else {
			chain_unlink_keep_count(c, link_to(b, e), e);
		}
		chain_bucket_unlock(b);
		return true;
	}
	spin_unlock_word(&l->lock);
	return false;
}

/* Evict from list @l, forced if nothing goes otherwise. */
static bool lru_evict_any(struct chain *c, struct chain_lru_list *l, struct chain_elem **take,
			  enum lru_room room)
{
	return lru_evict_from(c, l, UINT64_MAX, false, take, room) ||
	       lru_evict_from(c, l, UINT64_MAX, true, take, room);
}

/* How often an eviction compares its CPU's list with another's: every
 * CHAIN_LRU_LOOK_EVERY-th.  Reading another list's head on every eviction
 * passes its lines between the CPUs as fast as they insert.  But after a
 * comparison that took from the other list, at every eviction until one
 * does not: that eviction read the other list's lines anyway, and a CPU
 * whose own list is young (another CPU filled the map, or its list ran
 * low while its thread was preempted) otherwise took 7 of 8 victims from
 * its newest elements while older ones waited on the other list. */
#define CHAIN_LRU_LOOK_EVERY 8

/* One eviction: from the caller's CPU's list (@own), unless it is empty or,
 * every CHAIN_LRU_LOOK_EVERY-th time, another list's oldest element is half
 * as old again as this one's: then from that one, walked as one queue with
 * the own list (per-CPU lists: the own list only, and then, @anywhere, the
 * next step too).  Then every list in turn, then the same forced (see
 * chain_lru.h). */
bool chain_lru_evict(struct chain *c, struct chain_elem **take, bool anywhere, bool if_full)
{
	uint32_t n = c->n_lru, own = cpu_current() % n;
	struct chain_lru_list *l = &c->lru[own], *o = NULL;
	uint64_t limit = UINT64_MAX;
	enum lru_room room = !if_full ? LRU_ROOM_IGNORED : c->lru_cap ? LRU_ROOM_LIST : LRU_ROOM_MAP;

	if (c->lru_cap) { /* per-CPU lists: a full own list evicts from itself */
		/* The map full while the own list has room: another list went
		 * over its cap (two evictions' rooms given to it at once), so
		 * from that one, else the insert that found the map full
		 * waited for ever. */
		if (if_full && lru_taken(l) < c->lru_cap) {
			for (uint32_t i = 0; i < n; i++) {
				struct chain_lru_list *x = &c->lru[i];

				if (lru_len(x) > c->lru_cap && lru_evict_any(c, x, take, LRU_ROOM_MAP))
					return true;
			}
			return false;
		}
		if (lru_evict_any(c, l, take, room))
			return true;
		if (!anywhere)
			return false;
	} else if (n > 1) {
		uint32_t rr = lru_next_other();
		bool steal = __atomic_load_n(&l->steal, __ATOMIC_RELAXED);

		o = &c->lru[(own + 1 + rr / CHAIN_LRU_LOOK_EVERY % (n - 1)) % n];
		if (!lru_len(l) || steal || rr % CHAIN_LRU_LOOK_EVERY == 0) {
			uint64_t sl = lru_head_stamp(c, l), so = lru_head_stamp(c, o);
			uint64_t now = clock_ticks();
			/* ages now - so > 1.5 x (now - sl); an empty list's stamp is
			 * UINT64_MAX, never older */
			bool older = so != UINT64_MAX &&
				     (sl == UINT64_MAX || (sl > so && (now - so) / 3 > (now - sl) / 2));

			if (older != steal)
				__atomic_store_n(&l->steal, older, __ATOMIC_RELAXED);
			if (older) {
				l = o;
				o = &c->lru[own];
				limit = sl;
			}
		}
		if (lru_evict_from(c, l, limit, false, take, room))
			return true;
		if (lru_evict_from(c, o, UINT64_MAX, false, take, room))
			return true;
	}
	/* Every list, twice (the first walks lowered the counts), and only
	 * then forced. */
	for (int pass = 0; pass < 3; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			struct chain_lru_list *x = &c->lru[i];

			if (lru_len(x) && lru_evict_from(c, x, UINT64_MAX, pass == 2, take, room))
				return true;
		}
	}
	return false;
}

/* The list with the fewest elements and admitted inserts. */
static uint32_t lru_shortest(const struct chain *c)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < c->n_lru; i++)
		if (lru_taken(&c->lru[i]) < lru_taken(&c->lru[best]))
			best = i;
	return best;
}

/* Admit an insert to per-CPU list @l: false when the list is full with
 * those on it and those admitted.  Admitted inserts count, or every insert
 * on a CPU that passed the check before the others had added took the list
 * one further over its cap (an adversarial probe: 8 with a cap of 4). */
static bool lru_admit(struct chain *c, struct chain_lru_list *l)
{
	uint32_t r = __atomic_load_n(&l->reserved, __ATOMIC_RELAXED);

	do {
		if (lru_len(l) + r >= c->lru_cap)
			return false;
	} while (!__atomic_compare_exchange_n(&l->reserved, &r, r + 1, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return true;
}

uint32_t chain_lru_reserve(struct chain *c, bool *credit, uint32_t *list)
{
	uint32_t own = cpu_current() % c->n_lru;

	*list = own;
	if (*credit) { /* an eviction's room, counted still */
		*credit = false;
		/* A thread that moved to another CPU since it evicted finds
		 * that CPU's list full: the room is on another, the shortest,
		 * the victim's unless an insert took its place (on the full
		 * list it went over the cap, and an insert on a CPU whose list
		 * had room then found the map full and waited for ever). */
		if (c->lru_cap) {
			if (lru_taken(&c->lru[own]) >= c->lru_cap)
				*list = lru_shortest(c);
			__atomic_fetch_add(&c->lru[*list].reserved, 1, __ATOMIC_ACQ_REL);
		}
		return COUNT_CREDIT;
	}
	if (c->lru_cap) {
		uint32_t ticket;

		if (!lru_admit(c, &c->lru[own]))
			return COUNT_FULL;
		ticket = count_insert_begin(&c->count);
		if (ticket == COUNT_FULL)
			chain_lru_unreserve(c, own);
		return ticket;
	}
	return count_insert_begin(&c->count);
}
