/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat table's eviction: the small queue's ring, the main queue's hand
 * and the choice of a victim.  The design is in tables/flat_lru.h.
 */
#include <errno.h>
#include <sched.h>

#include "sync/rcu.h"
#include "sync/spin_lock.h"
#include "tables/flat_lru.h"
#include "util/big_alloc.h"
#include "util/cpu.h"
#include "util/test_hook.h"

/* Ring entries: an eighth of max_entries (the small queue's share, 10%,
 * and room for the stale entries of deleted elements), and this many more. */
#define FLAT_LRU_RING_MIN 4096

int flat_lru_init(struct flat *f, uint32_t max, map_lookup_fn lookup)
{
	uint64_t n_pos = (uint64_t)f->n_buckets * FLAT_SLOTS;
	uint32_t stride = f->value_stride;
	uint64_t inv, odd;
	uint32_t n_cpu = cpu_shards();
	struct flat_lru *l;

	if (n_pos > FLAT_LRU_POS_MAX)
		return -E2BIG;
	l = big_zalloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	f->lru = l;
	l->cap = max / 8 + FLAT_LRU_RING_MIN;
	l->ring = big_zalloc((size_t)l->cap * sizeof(uint32_t));
	l->state = big_zalloc((size_t)n_pos);
	if (!l->ring || !l->state)
		return -ENOMEM; /* the caller's release frees what there is */
	f->lru_state = l->state;
	l->lookup = lookup;
	l->values = f->values;
	/* value_stride = odd << shift: an offset's index is (offset >> shift)
	 * times odd's inverse mod 2^64 (Newton's iteration doubles the bits
	 * that are right: 5 steps from 3 bits to 64 and beyond). */
	l->stride_shift = (uint32_t)__builtin_ctz(stride);
	odd = stride >> l->stride_shift;
	inv = odd;
	for (int i = 0; i < 5; i++)
		inv *= 2 - odd * inv;
	l->stride_inv = inv;
	if (n_cpu && max / n_cpu >= FLAT_LRU_PEND_MIN) {
		l->cpu = big_zalloc((size_t)n_cpu * sizeof(*l->cpu));
		if (!l->cpu)
			return -ENOMEM;
		l->cpu_mask = n_cpu - 1;
	}
	l->small_max = (uint32_t)((uint64_t)max * FLAT_LRU_SMALL_PERCENT / 100);
	l->epoch_size = max / FLAT_LRU_EPOCHS + 1;
	return 0;
}

/* The slot after ring slot @i. */
static uint32_t ring_next(const struct flat_lru *l, uint32_t i)
{
	return i + 1 == l->cap ? 0 : i + 1;
}

/* The ring's oldest entry, taken off (under the LRU's lock): its position,
 * and in *@gen its generation. */
static uint32_t ring_pop(struct flat_lru *l, uint32_t *gen)
{
	uint32_t e = l->ring[l->head];

	l->head = ring_next(l, l->head);
	l->len--;
	*gen = e >> FLAT_LRU_POS_BITS;
	return e & (FLAT_LRU_POS_MAX - 1);
}

/* Does state @st still hold the small element of generation @gen that a
 * ring entry was made for? */
static bool entry_live(uint32_t st, uint32_t gen)
{
	return (st & FLAT_LRU_SMALL) && ((st & FLAT_LRU_GEN_MASK) >> FLAT_LRU_GEN_SHIFT) == gen;
}

/* Small element @vi moves on to the main queue as DEMOTED, in the current
 * epoch (unless it left the small queue meanwhile: a delete).  The next
 * epoch starts when this one is full, or when evictions ran since the last
 * demotion (a map that filled up and now evicts: its older demoted elements
 * go first, apart from the newer), if no older elements are left in it. */
static void demote(struct flat_lru *l, size_t vi)
{
	uint32_t e = l->demote_epoch, next = (e + 1) % FLAT_LRU_EPOCHS;
	uint32_t n = __atomic_load_n(&l->epoch_count[e], __ATOMIC_RELAXED);
	uint8_t old = __atomic_load_n(&l->state[vi], __ATOMIC_RELAXED), new;

	if (n && (n >= l->epoch_size || l->evicted) &&
	    !__atomic_load_n(&l->epoch_count[next], __ATOMIC_RELAXED) && next != l->evict_epoch)
		l->demote_epoch = e = next;
	l->evicted = false;
	do {
		if (!(old & FLAT_LRU_SMALL))
			return;
		new = (uint8_t)((old & (FLAT_LRU_REF | FLAT_LRU_GEN_MASK)) | FLAT_LRU_DEMOTED |
				e << FLAT_LRU_EPOCH_SHIFT);
	} while (!__atomic_compare_exchange_n(&l->state[vi], &old, new, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	__atomic_fetch_add(&l->epoch_count[e], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->demoted, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&l->small, 1, __ATOMIC_RELAXED);
}

/* A full ring: its stale entries out, the others moved up in their order
 * (the write cursor never passes the read one).  Should that leave it more
 * than 7/8 full (a map not yet full, or with room, gathers more small
 * elements than the ring holds), the oldest leave it, their elements going
 * to the main queue with their marks: a squeeze then frees an eighth of
 * the ring at least, so its cost per insert is bounded. */
static void ring_squeeze(struct flat *f)
{
	struct flat_lru *l = f->lru;
	uint32_t r = l->head, w = l->head, kept = 0, gen, pos;

	for (uint32_t i = 0; i < l->len; i++, r = ring_next(l, r)) {
		uint32_t e = l->ring[r];

		if (entry_live(flat_lru_state(l, flat_elem_of(f, e & (FLAT_LRU_POS_MAX - 1))),
			       e >> FLAT_LRU_POS_BITS)) {
			l->ring[w] = e;
			w = ring_next(l, w);
			kept++;
		}
	}
	l->len = kept;
	while (l->len > l->cap - l->cap / 8) {
		pos = ring_pop(l, &gen);
		demote(l, flat_elem_of(f, pos));
	}
}

/* Entry @e at the ring's tail (under the LRU's lock). */
static void ring_push(struct flat *f, uint32_t e)
{
	struct flat_lru *l = f->lru;
	uint32_t i;

	if (l->len == l->cap)
		ring_squeeze(f);
	i = l->head + l->len;
	l->ring[i >= l->cap ? i - l->cap : i] = e;
	l->len++;
}

/* CPU @c's buffered entries into the ring (under the LRU's lock and
 * @c's). */
static void pend_flush(struct flat *f, struct flat_lru_cpu *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		ring_push(f, c->e[i]);
	c->n = 0;
}

void flat_lru_queue(struct flat *f, uint32_t pos, bool carried)
{
	struct flat_lru *l = f->lru;
	uint32_t e = pos | (flat_lru_state(l, flat_elem_of(f, pos)) >> FLAT_LRU_GEN_SHIFT)
				   << FLAT_LRU_POS_BITS;
	struct flat_lru_cpu *c;

	if (!carried)
		__atomic_fetch_add(&l->small, 1, __ATOMIC_RELAXED);
	if (!l->cpu) {
		spin_lock_word(&l->lock);
		ring_push(f, e);
		spin_unlock_word(&l->lock);
		return;
	}
	c = &l->cpu[cpu_current() & l->cpu_mask];
	spin_lock_word(&c->lock);
	if (c->n == FLAT_LRU_PEND) {
		spin_lock_word(&l->lock);
		pend_flush(f, c);
		c->stamp = l->refills; /* not idle */
		spin_unlock_word(&l->lock);
	}
	c->e[c->n++] = e;
	spin_unlock_word(&c->lock);
}

void *flat_lru_lookup(struct bpfmap *map, const void *key)
{
	const struct flat_lru *l = to_flat(map)->lru;
	void *v = l->lookup(map, key);

	if (v)
		flat_lru_touch(l, v);
	return v;
}

size_t flat_lru_mem(const struct flat *f)
{
	const struct flat_lru *l = f->lru;
	/* A byte a slot: those touched, or all of them from the heap (as
	 * flat_count_pool). */
	uint64_t used = big_is_mapped(l->state)
				? f->pool_base + (uint64_t)__atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED)
				: (uint64_t)f->n_buckets * FLAT_SLOTS;

	return sizeof(*l) + (size_t)l->cap * sizeof(uint32_t) + (size_t)used +
	       (l->cpu ? (l->cpu_mask + 1) * sizeof(*l->cpu) : 0);
}

/* What a pick expects the victim's state to be, checked again under its
 * home's lock: a small element of generation gen, or a main one; and
 * whether it was picked used (a forced pick), or is to be passed by if a
 * lookup uses it meanwhile. */
#define PICK_MAIN 0x40u
#define PICK_FORCED 0x80u

/*
 * The small queue's victim: the oldest element that was not used; the
 * used ones met on the way move to the main queue.  @force: the oldest,
 * used or not.  FLAT_NONE after FLAT_LRU_SCAN entries, or an empty ring.
 * Under the LRU's lock.
 */
static uint32_t pick_small(struct flat *f, bool force, uint32_t *expect)
{
	struct flat_lru *l = f->lru;

	for (uint32_t i = 0; i < FLAT_LRU_SCAN && l->len; i++) {
		uint32_t gen, pos = ring_pop(l, &gen);
		size_t vi = flat_elem_of(f, pos);
		uint32_t st = flat_lru_state(l, vi);

		if (!entry_live(st, gen))
			continue; /* deleted since, or aged out */
		if ((st & FLAT_LRU_REF) && !force) {
			flat_lru_leave(l, vi, FLAT_LRU_SMALL | FLAT_LRU_REF);
			continue;
		}
		*expect = gen;
		return pos;
	}
	return FLAT_NONE;
}

/* Main element @vi picked: a demoted one leaves its epoch now, not when
 * it goes, so that the next picks of a CPU's batch look for the epoch's
 * other elements, or the next epoch's. */
static void pos_picked_main(struct flat_lru *l, size_t vi, uint32_t *expect)
{
	if (flat_lru_state(l, vi) & FLAT_LRU_DEMOTED)
		flat_lru_leave(l, vi, FLAT_LRU_DEMOTED);
	*expect = PICK_MAIN;
}

/*
 * The main queue's victim: the next live main element from the hand on that
 * was not used since the hand last passed it (its mark is cleared on the
 * way).  While demoted elements are left, only those count, the oldest
 * epoch's first: the scan ends at one of that epoch, else it takes the
 * oldest-epoch one it passed.  @force: the same, used or not.  FLAT_NONE
 * after FLAT_LRU_SCAN positions, FLAT_LRU_SCAN_DEMOTED while demoted ones
 * are left (runs of positions without any, such as the nodes taken since
 * they were demoted, are longer), or two turns of a smaller table.  Under
 * the LRU's lock.
 */
static uint32_t pick_main(struct flat *f, bool force, uint32_t *expect)
{
	struct flat_lru *l = f->lru;
	uint32_t end = f->pool_base + __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
	bool demoted = __atomic_load_n(&l->demoted, __ATOMIC_RELAXED);
	uint32_t alt = FLAT_NONE, alt_age = FLAT_LRU_EPOCHS;
	/* Two turns of the hand at most: the first clears the marks, the
	 * second meets every position unmarked, so a longer scan of a small
	 * table only repeats itself, under the LRU's lock, while an insert
	 * holding the only element's room waits for that lock. */
	uint32_t scan = demoted ? FLAT_LRU_SCAN_DEMOTED : FLAT_LRU_SCAN;

	if (scan > 2 * end)
		scan = 2 * end;

	for (int i = 0; demoted && i < FLAT_LRU_EPOCHS && l->evict_epoch != l->demote_epoch &&
			!__atomic_load_n(&l->epoch_count[l->evict_epoch], __ATOMIC_RELAXED);
	     i++)
		l->evict_epoch = (l->evict_epoch + 1) % FLAT_LRU_EPOCHS;
	for (uint32_t i = 0; i < scan; i++) {
		uint32_t pos = l->hand, st, age, next;
		uint64_t live = flat_live(__atomic_load_n(&f->buckets[pos / FLAT_SLOTS].tags,
							  __ATOMIC_ACQUIRE)) >>
				(8 * (pos % FLAT_SLOTS));
		size_t vi;

		/* No live tag from here to the bucket's end: past it in one
		 * step (the pool's unused nodes are most of a small map). */
		next = live ? pos + 1 : (pos | (FLAT_SLOTS - 1)) + 1;
		i += next - pos - 1;
		l->hand = next >= end ? 0 : next;
		if (!(live & 0xff))
			continue;
		vi = flat_elem_of(f, pos);
		st = flat_lru_state(l, vi);
		if ((st & FLAT_LRU_SMALL) || (demoted && !(st & FLAT_LRU_DEMOTED)))
			continue;
		if ((st & FLAT_LRU_REF) && !force) {
			/* used: another round, and a demoted one has earned
			 * its place */
			flat_lru_leave(l, vi, FLAT_LRU_REF | FLAT_LRU_DEMOTED);
			continue;
		}
		age = ((st >> FLAT_LRU_EPOCH_SHIFT) - l->evict_epoch) % FLAT_LRU_EPOCHS;
		if (demoted && age) {
			if (age < alt_age) {
				alt = pos;
				alt_age = age;
			}
			continue;
		}
		pos_picked_main(l, vi, expect);
		return pos;
	}
	if (alt != FLAT_NONE)
		pos_picked_main(l, flat_elem_of(f, alt), expect);
	return alt;
}

/* A victim: from the small queue while it holds more than its share and no
 * demoted elements (older than it) are left (or the main queue finds none),
 * else from the main queue; then the same forced.  Under the LRU's lock. */
static uint32_t pick(struct flat *f, uint32_t *expect)
{
	struct flat_lru *l = f->lru;
	bool small_first = __atomic_load_n(&l->small, __ATOMIC_RELAXED) > l->small_max &&
			   !__atomic_load_n(&l->demoted, __ATOMIC_RELAXED);
	uint32_t pos;

	for (int force = 0; force < 2; force++) {
		pos = small_first ? pick_small(f, force, expect) : pick_main(f, force, expect);
		if (pos == FLAT_NONE)
			pos = small_first ? pick_main(f, force, expect)
					  : pick_small(f, force, expect);
		if (pos != FLAT_NONE) {
			l->evicted = true;
			if (force)
				*expect |= PICK_FORCED;
			return pos;
		}
	}
	return FLAT_NONE;
}

/*
 * Delete the element at @pos if it still is the one picked (@expect): its
 * home is found from its key, read in a read-side section (a live tag
 * seen, the key's bytes are stable there), and under that home's lock the
 * position must still be live in that home with the same tag and state.
 * The section ends before the lock: the checks under it need none (the
 * home's chain is stable under its lock), and a section that waits for a
 * contended lock makes grace periods wait too (liburcu's sleeps 10 ms when
 * a reader stays in one past its first hundred looks).  Should the
 * position be deleted and refilled in between by a key of the same home
 * and tag, a small pick's generation tells it; a main pick may then evict
 * that key instead, which is an eviction all the same.
 */
static uint32_t take(struct flat *f, uint32_t pos, uint32_t expect)
{
	struct flat_lru *l = f->lru;
	uint32_t tag, h, prev = FLAT_NONE, st;
	struct flat_place pl;
	bool ok = false, kick = false;
	uint32_t got = FLAT_EVICT_ROOM;

	rcu_lock();
	tag = flat_tag_at(f, pos);
	if (tag < FLAT_TAG_MIN) {
		rcu_unlock();
		return 0;
	}
	if (f->map.key_size <= 8) {
		uint64_t k = 0;

		flat_copy_key_out(f, pos, &k);
		rcu_unlock();
		pl = flat_place_of(f, flat_hash(f, &k));
	} else {
		pl = flat_place_of(f, flat_hash(f, flat_key_at(f, pos)));
		rcu_unlock();
	}
	TEST_HOOK(HOOK_LRU_KEYED, &pos);
	h = pl.home;
	seq_spin_lock(&f->homes[h].lock);
	if (flat_tag_at(f, pos) == pl.tag && pl.tag == tag) {
		if (!flat_is_node(f, pos)) {
			ok = pos / FLAT_SLOTS == h;
		} else {
			for (uint32_t n = flat_chain(f, h); n != FLAT_NONE; n = flat_node_next(f, n)) {
				if (n == pos) {
					ok = true;
					break;
				}
				prev = n;
			}
		}
	}
	if (ok) {
		uint32_t want = expect & ~PICK_FORCED;
		size_t vi = flat_elem_of(f, pos);

		st = flat_lru_state(l, vi);
		ok = want == PICK_MAIN ? !(st & FLAT_LRU_SMALL) : entry_live(st, want);
		if (ok && !(expect & PICK_FORCED) && (st & FLAT_LRU_REF)) {
			/* used since its pick: what the pick would then do */
			flat_lru_leave(l, vi,
				       FLAT_LRU_REF | (want == PICK_MAIN ? FLAT_LRU_DEMOTED
									 : FLAT_LRU_SMALL));
			ok = false;
		} else if (ok && !count_full_quiescent(&f->count)) {
			/* Room made since the map was found full (a delete, of
			 * this victim's neighbour or any key): the insert takes
			 * it, and nothing is evicted (docs/MAPS.md).  A small
			 * victim, whose ring entry the pick took, goes on in
			 * the main queue, which its hand walks. */
			if (want != PICK_MAIN)
				flat_lru_leave(l, vi, FLAT_LRU_SMALL);
			ok = false;
		}
	}
	if (ok)
		kick = flat_kill_locked(f, h, pos, prev, &got);
	seq_spin_unlock(&f->homes[h].lock);
	if (kick)
		flat_kick(f);
	return ok ? got : 0;
}

/* CPU @c's buffer into the ring and its small victims back (its main ones
 * the hand finds again), if its lock is free.  Under the LRU's lock. */
static void cpu_give_back(struct flat *f, struct flat_lru_cpu *c)
{
	if (__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE))
		return;
	pend_flush(f, c);
	while (c->nc) { /* the oldest last */
		c->nc--;
		if (!(c->cexp[c->nc] & PICK_MAIN))
			ring_push(f, c->cand[c->nc] | (uint32_t)c->cexp[c->nc] << FLAT_LRU_POS_BITS);
	}
	c->stamp = f->lru->refills;
	spin_unlock_word(&c->lock);
}

/* CPU @c's next victims, picked under the LRU's lock (@c's held): its
 * buffer goes into the ring first, then up to FLAT_LRU_CAND picks, the
 * oldest last.  One other CPU a time, if idle, gives back what it holds;
 * all of them do when no victim is found. */
static void cpu_refill(struct flat *f, struct flat_lru_cpu *c)
{
	struct flat_lru *l = f->lru;
	struct flat_lru_cpu *o;
	uint32_t n = 0, expect;

	spin_lock_word(&l->lock);
	c->stamp = ++l->refills;
	pend_flush(f, c);
	o = &l->cpu[l->sweep++ & l->cpu_mask];
	if (o != c && l->refills - o->stamp > FLAT_LRU_IDLE)
		cpu_give_back(f, o);
	for (int round = 0; round < 2 && !n; round++) {
		for (uint32_t i = 0; round && i <= l->cpu_mask; i++)
			if (&l->cpu[i] != c)
				cpu_give_back(f, &l->cpu[i]);
		while (n < FLAT_LRU_CAND) {
			uint32_t pos = pick(f, &expect);

			if (pos == FLAT_NONE)
				break;
			c->cand[n] = pos;
			c->cexp[n++] = (uint8_t)expect;
		}
	}
	spin_unlock_word(&l->lock);
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t p = c->cand[i];
		uint8_t x = c->cexp[i];

		c->cand[i] = c->cand[n - 1 - i];
		c->cexp[i] = c->cexp[n - 1 - i];
		c->cand[n - 1 - i] = p;
		c->cexp[n - 1 - i] = x;
	}
	c->nc = n;
}

/* The next victim and what take() checks of it; FLAT_NONE when none. */
static uint32_t next_victim(struct flat *f, uint32_t *expect)
{
	struct flat_lru *l = f->lru;
	struct flat_lru_cpu *c;
	uint32_t pos = FLAT_NONE;

	if (!l->cpu) {
		spin_lock_word(&l->lock);
		pos = pick(f, expect);
		spin_unlock_word(&l->lock);
		return pos;
	}
	c = &l->cpu[cpu_current() & l->cpu_mask];
	spin_lock_word(&c->lock);
	if (!c->nc)
		cpu_refill(f, c);
	if (c->nc) {
		c->nc--;
		pos = c->cand[c->nc];
		*expect = c->cexp[c->nc];
	}
	spin_unlock_word(&c->lock);
	return pos;
}

uint32_t flat_lru_evict(struct flat *f)
{
	/* A pick fails the check only when its element went meanwhile (a
	 * delete, or another eviction) or was used since: try again, a
	 * bounded number of times, while the map is full.  A map with room
	 * evicts nothing (docs/MAPS.md): the caller's insert takes it. */
	for (int tries = 0; tries < 16 && count_full_quiescent(&f->count); tries++) {
		uint32_t expect = PICK_MAIN, pos, got;

		pos = next_victim(f, &expect);
		if (pos == FLAT_NONE)
			return 0;
		TEST_HOOK(HOOK_LRU_VICTIM, &pos);
		got = take(f, pos, expect);
		if (got)
			return got;
	}
	return 0;
}
