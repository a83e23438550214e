/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's walks: get_next_key and the batches, in the map's
 * order (hash, key bytes), which no resize changes (tables/rtab.h).  Each
 * step answers "the first element after this place" under the lock of the
 * group it looks in, so a walk returns every element present throughout it
 * exactly once, in increasing order, whatever grows, shrinks or is deleted
 * meanwhile, the place it resumes from included.
 */
#include <errno.h>

#include "tables/rtab.h"

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

	rcu_lock();
	for (;;) {
		struct rtab_table *t;
		struct rtab_group *g = rtab_lock_bucket(r, at.hash, &t);
		struct rtab_slot s;
		uint32_t b, shift;

		if (rtab_first_after_locked(r, g, &at, &s)) {
			uint32_t idx = s.g->link[s.i];
			char *e = rtab_elem(r, idx);

			memcpy(key_out, e, r->map.key_size);
			if (value_out)
				rtab_copy_value_locked(r, e, value_out, lockf);
			c->hash = s.g->hash[s.i];
			c->key = key_out;
			if (do_delete)
				rtab_delete_locked(r, g, s);
			rtab_unlock_bucket(g);
			if (do_delete) {
				rtab_elem_retire(r, idx);
				rtab_resize_check(r, false);
			}
			rcu_unlock();
			return 0;
		}
		shift = t->shift;
		b = (uint32_t)(g - t->groups);
		rtab_unlock_bucket(g);
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
