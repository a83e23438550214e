/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH batch lookup (and lookup-and-delete): the kernel's protocol.
 * The cursor is a 4-byte bucket index.  Whole buckets only: a bucket that does
 * not fit in what is left of *count ends the call (-ENOSPC if nothing was
 * copied yet); reaching the last bucket ends it with -ENOENT.  Each bucket is
 * copied under its lock, so its membership is a consistent snapshot (values
 * of at most 8 bytes may be stored without the lock: each is read whole);
 * with BPFMAP_F_LOCK each value under its spin lock too.
 */
#include <errno.h>
#include <string.h>

#include "tables/chain.h"
#include "tables/chain_lru.h"

static uint32_t bucket_len_locked(const struct chain_bucket *b)
{
	uint32_t n = 0;

	for (const struct chain_elem *e = b->head; e; e = e->next)
		n++;
	return n;
}

/*
 * Take the spin locks of the values of locked bucket b's first @n elements
 * (F_LOCK), all or none: NULL, or the word of one a program holds, with
 * none taken.  That one is waited for with the bucket unlocked, since a
 * program may hold it for long and the bucket's other writers must go on.
 */
static uint32_t *lock_values_locked(struct chain *c, struct chain_bucket *b)
{
	const struct bpfmap *map = &c->map;
	struct chain_elem *e, *held;

	for (e = b->head; e; e = e->next) {
		uint32_t *word = &value_lock(map, elem_value(c, e))->val;

		if (value_lock_try(word))
			continue;
		for (held = b->head; held != e; held = held->next)
			value_lock_drop(&value_lock(map, elem_value(c, held))->val);
		return word;
	}
	return NULL;
}

/* Copy (and maybe delete) the elements of locked bucket b, with F_LOCK
 * under the value locks lock_values_locked took (released here); returns
 * how many. */
static uint32_t copy_bucket_locked(struct chain *c, struct chain_bucket *b, char *keys,
				   char *values, bool with_lock, bool do_delete)
{
	const struct bpfmap *map = &c->map;
	struct chain_elem **link = &b->head, *e;
	uint32_t n = 0;

	while ((e = *link)) {
		char *value = values + (size_t)n * map->value_size;

		memcpy(keys + (size_t)n * map->key_size, elem_key(e), map->key_size);
		if (with_lock) {
			value_copy_out_held(map, value, elem_value(c, e));
			value_clear_lock(map, value);
		} else {
			chain_copy_value_out(c, e, value, false, NULL);
		}
		n++;
		if (do_delete)
			chain_unlink_elem(c, link, e); /* *link now holds e's successor */
		else
			link = &e->next;
	}
	return n;
}

int chain_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch,
		      void *keys, void *values, uint32_t *count, uint64_t elem_flags,
		      bool do_delete)
{
	struct chain *c = to_chain(map);
	bool with_lock = elem_flags & BPFMAP_F_LOCK;
	uint32_t max_count = *count, total = 0, batch = 0;
	unsigned int spins = 0;
	int ret = 0;

	*count = 0;
	if (do_delete)
		chain_stop_lockfree_stores(c);
	if (in_batch)
		memcpy(&batch, in_batch, sizeof(batch));
	if (batch >= c->n_buckets)
		return -ENOENT;

	for (;;) {
		struct chain_bucket *b = &c->buckets[batch];

		chain_bucket_lock(b);
		uint32_t len = bucket_len_locked(b);

		if (len > max_count - total) {
			chain_bucket_unlock(b);
			if (total == 0)
				ret = -ENOSPC;
			break;
		}
		uint32_t *busy = with_lock ? lock_values_locked(c, b) : NULL;

		if (unlikely(busy)) {
			chain_value_wait(c, b, busy, &spins);
			continue;
		}
		total += copy_bucket_locked(c, b, (char *)keys + (size_t)total * map->key_size,
					    (char *)values + (size_t)total * map->value_size,
					    with_lock, do_delete);
		chain_bucket_unlock(b);
		if (do_delete)
			chain_reclaim_throttle(c);
		if (++batch >= c->n_buckets) {
			ret = -ENOENT;
			break;
		}
	}
	memcpy(out_batch, &batch, sizeof(batch));
	*count = total;
	return ret;
}
