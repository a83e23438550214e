/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's walks: get_next_key and the batches, in the map's
 * order (hash, key bytes), which no resize changes (tables/rtab.h).  Each
 * step answers "the first element after this place" from one consistent
 * state of the group it looks in, so a walk returns every element present
 * throughout it exactly once, in increasing order, whatever grows, shrinks
 * or is deleted meanwhile, the place it resumes from included.
 *
 * A step that only reads takes no lock: it reads the bucket as a copy-out
 * does, and keeps what it read only if the bucket's lock word was even and
 * unchanged around it.  A walk that locked each bucket stalled the writers
 * there, and a fork() while another thread walked left a bucket locked for
 * ever in the child.  Lookup-and-delete batches lock, as every delete does.
 */
#include <errno.h>

#include "tables/rtab.h"
#include "tables/value.h"

/* Where (hash, key) falls against element @e of hash @eh: < 0 before it,
 * 0 the same key, > 0 after it. */
static int rtab_order(const struct rtab *r, uint32_t eh, const char *e, uint32_t hash,
		      const void *key)
{
	if (hash != eh)
		return hash < eh ? -1 : 1;
	return memcmp(key, e, r->map.key_size);
}

/*
 * The first element after @c among the bucket's groups from @g: its slot,
 * or false.  Locked or not: a lock-free caller keeps the answer only if the
 * bucket's word is unchanged after, so what it reads in between may be
 * stale (a group freed under it and reused, whose next leads elsewhere),
 * but always mapped, and never read past a first group's RTAB_MOVED.
 * Elements it reaches stay unused until its read-side section ends.
 */
static bool rtab_first_after(const struct rtab *r, struct rtab_group *g,
			     const struct rtab_cursor *c, struct rtab_slot *out)
{
	bool found = false;
	uint32_t best_hash = 0;
	const char *best = NULL;

	for (;;) {
		uint32_t next;

		for (int i = 0; i < RTAB_SLOTS; i++) {
			uint32_t link = rtab_load(&g->link[i]);
			uint32_t hash = rtab_load(&g->hash[i]);
			const char *e;

			if (link == RTAB_NONE)
				continue;
			e = rtab_elem(r, link);
			if (c->key ? rtab_order(r, hash, e, c->hash, c->key) >= 0 : hash < c->hash)
				continue;
			if (found && rtab_order(r, hash, e, best_hash, best) < 0)
				continue; /* the best so far comes before it */
			found = true;
			best = e;
			best_hash = hash;
			out->g = g;
			out->i = i;
		}
		TEST_HOOK(HOOK_RTAB_WALK, g);
		next = rtab_load(&g->next);
		if (next == RTAB_NONE || next == RTAB_MOVED)
			return found;
		g = rtab_ogroup(r, next);
	}
}

/* The bucket of @hash in the table that holds it now, and its lock word,
 * even, before any read of it (seq_spin_read_begin); NULL when a writer
 * holds it. */
static struct rtab_group *rtab_read_bucket(struct rtab *r, uint32_t hash, struct rtab_table **t_out,
					   uint32_t *seq)
{
	struct rtab_table *t = rtab_table_of(r);

	for (;;) {
		struct rtab_group *g = &t->groups[rtab_bucket(t, hash)];

		*seq = seq_spin_read_begin(&g->lock);
		if (unlikely(*seq & 1))
			return NULL;
		if (unlikely(rtab_load(&g->next) == RTAB_MOVED)) {
			t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
			continue;
		}
		*t_out = t;
		return g;
	}
}

/*
 * Copy out the first element after @c (its key to @key_out, its value to
 * @value_out when given; deleted when asked) and move @c to it: 0, or
 * -ENOENT past the last.  Buckets that hold nothing after @c are passed by
 * their hash range, which means the same in every table.
 */
static int rtab_next(struct rtab *r, struct rtab_cursor *c, void *key_out, void *value_out,
		     bool lockf, bool do_delete)
{
	struct rtab_cursor at = *c;
	unsigned int tries = 0;

	rcu_lock();
	for (;;) {
		struct rtab_table *t;
		struct rtab_group *g;
		struct rtab_slot s;
		uint32_t b, shift, seq = 0, idx = RTAB_NONE, hash = 0;
		bool locked = do_delete || tries >= RTAB_WALK_TRIES, found;

		if (locked) {
			g = rtab_lock_bucket(r, at.hash, &t, !do_delete);
		} else {
			g = rtab_read_bucket(r, at.hash, &t, &seq);
			if (unlikely(!g)) {
				tries++;
				cpu_relax();
				continue;
			}
		}
		found = rtab_first_after(r, g, &at, &s);
		if (found) {
			char *e;

			idx = rtab_load(&s.g->link[s.i]);
			hash = rtab_load(&s.g->hash[s.i]);
			e = rtab_elem(r, idx);
			/* False only with the bucket locked: a program holds
			 * the value's lock, waited for with the bucket
			 * unlocked. */
			if (value_out && !rtab_copy_value(r, e, value_out, lockf, locked, false)) {
				rtab_unlock_bucket(g);
				/* Outside the section (the arena stays
				 * mapped): the holder may be waiting for a
				 * grace period.  The cursor is the caller's. */
				rcu_unlock();
				value_lock_wait_free(&value_lock(&r->map, rtab_value(r, e))->val);
				rcu_lock();
				continue;
			}
		}
		if (!locked && !seq_spin_read_valid(&g->lock, seq)) {
			tries++;
			cpu_relax();
			continue;
		}
		if (found) {
			/* Only now: @key_out may be the cursor's key (get_next_key
			 * with one buffer), which a step read again must still
			 * have.  The element's key cannot change before the
			 * section ends. */
			memcpy(key_out, rtab_elem(r, idx), r->map.key_size);
			c->hash = hash;
			c->key = key_out;
			if (do_delete)
				rtab_delete_locked(r, g, s);
			if (locked)
				rtab_unlock_bucket(g);
			if (do_delete) {
				rtab_elem_retire(r, idx);
				rtab_resize_check(r, false);
			}
			rcu_unlock();
			/* A delete's duty only: a read-only step that took the
			 * retired elements back waited for a grace period, up to
			 * liburcu's 10 ms sleeps, and walks beside a churn inside
			 * sections nearly stopped (an adversarial probe). */
			if (do_delete)
				rtab_retire_settle(r);
			return 0;
		}
		shift = t->shift;
		b = (uint32_t)(g - t->groups);
		if (locked)
			rtab_unlock_bucket(g);
		tries = 0;
		if (b + 1 == t->n) {
			rcu_unlock();
			return -ENOENT;
		}
		at.hash = (uint32_t)((uint64_t)(b + 1) << shift);
		at.key = NULL;
	}
}

static struct rtab_cursor rtab_cursor_at(struct rtab *r, const void *key)
{
	struct rtab_cursor c = { 0, NULL };

	if (key) {
		c.hash = rtab_hash(r, key, r->map.key_size, r->hash_kind);
		c.key = key;
	}
	return c;
}

/* An absent key resumes from its place in the order, not from the first
 * key as the kernel's HASH does: a walk whose last key was deleted under it
 * then neither repeats nor skips anything (docs/RHASH.md). */
int rtab_get_next_key(struct bpfmap *map, const void *key, void *next_key)
{
	struct rtab *r = to_rtab(map);
	struct rtab_cursor c = rtab_cursor_at(r, key);

	return rtab_next(r, &c, next_key, NULL, false, false);
}

/* Element-granular: the cursor is the last key returned, so any count makes
 * progress and none is too small (no -ENOSPC). */
int rtab_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch, void *keys,
		      void *values, uint32_t *count, uint64_t elem_flags, bool do_delete)
{
	struct rtab *r = to_rtab(map);
	struct rtab_cursor c = rtab_cursor_at(r, in_batch);
	uint32_t ks = map->key_size, vs = map->value_size, want = *count, n = 0;
	bool lockf = elem_flags & BPFMAP_F_LOCK;

	if (do_delete) /* returns removed values: see rtab_stop_lockfree_stores */
		rtab_stop_lockfree_stores(r);
	while (n < want && !rtab_next(r, &c, (char *)keys + (size_t)n * ks,
				      (char *)values + (size_t)n * vs, lockf, do_delete))
		n++;
	*count = n;
	if (n)
		memcpy(out_batch, (char *)keys + (size_t)(n - 1) * ks, ks);
	return n < want ? -ENOENT : 0;
}
