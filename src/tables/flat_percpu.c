/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program view of the flat table's per-CPU maps (PERCPU_HASH,
 * LRU_PERCPU_HASH).  The values array holds CPU 0's slots, laid out as a
 * shared value would be, so every lookup of flat_lookup.c and
 * flat_words_x86.c finds CPU 0's slot unchanged (f->pcpu_inner; for an
 * evicting map the marking one); CPU c's slot is cpu_region bytes per CPU
 * further (tables/flat.h).  A thread may move to another CPU right after
 * it read its CPU number: it then writes the slot of the CPU it was on,
 * which another thread on that CPU may be writing too, so plain increments
 * can be lost; atomic ones, and flat_percpu_add, never are.
 */
#include <errno.h>

#include "sync/reentry.h"
#include "sync/store_switch.h"
#include "sync/store_window.h"
#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/flat_lru.h"
#include "util/test_hook.h"

static ALWAYS_INLINE void *flat_percpu_lookup_view(struct bpfmap *map, const void *key,
						    bool rseq)
{
	struct flat *f = to_flat(map);
	char *v = f->pcpu_inner(map, key);

	return likely(v) ? flat_pcpu_here(f, v, rseq) : NULL;
}

void *flat_percpu_lookup(struct bpfmap *map, const void *key)
{
	return flat_percpu_lookup_view(map, key, false);
}

void *flat_percpu_lookup_rseq(struct bpfmap *map, const void *key)
{
	return flat_percpu_lookup_view(map, key, true);
}

void *flat_lookup_percpu(struct bpfmap *map, const void *key, uint32_t cpu)
{
	struct flat *f = to_flat(map);
	char *v = f->pcpu_inner(map, key);

	return likely(v) ? v + cpu * f->cpu_region : NULL;
}

/* flat_percpu_add under the key's home lock, as flat_take copies and
 * kills: after the map's lock-free stores are off.  A signal handler's
 * answers -EBUSY only if that lock is held (reentry_lock_or_busy). */
static int flat_percpu_add_locked(struct flat *f, const void *key, uint64_t delta)
{
	uint32_t ks = f->map.key_size, pos;
	struct flat_place pl = flat_place_of(f, flat_hash(f, key));
	uint32_t *lock = &f->homes[pl.home].lock;
	bool marked;

	store_window_ensure(); /* lock-free from the next one on */
	if (!reentry_lock_or_busy(lock, &marked))
		return -EBUSY;
	rcu_lock(); /* a long key's element is read under it */
	pos = flat_find(f, pl.home, pl.tag, key, ks, ks <= 8 ? flat_small_key(key, ks) : 0, false);
	if (pos != FLAT_NONE) {
		map_pcpu_add(&f->map, flat_value_at(f, pos), f->cpu_region, delta);
		flat_lru_touch_pos(f, pos);
	}
	rcu_unlock();
	seq_spin_unlock(lock);
	if (marked)
		reentry_end();
	return pos != FLAT_NONE ? 0 : -ENOENT;
}

/*
 * The add lands in a store window, a window the map's switch of lock-free
 * stores waits for when a lookup_and_delete (or a position's reuse at once)
 * turns it off (flat_stores_off): an add that found the element before the
 * value was copied out lands before the copy.  It used to land after it
 * at times, and its delta was lost though the add returned 0 (22-26% of
 * the adds of a two-thread loop of adds and lookup_and_delete, an
 * adversarial helper's linearizability checker).  Once the stores are
 * off, adds take the home lock, as the copy does.
 */
int flat_percpu_add(struct bpfmap *map, const void *key, uint64_t delta)
{
	struct flat *f = to_flat(map);
	struct store_window *win;
	bool inside;
	char *v;
	int ret = 0;

	rcu_lock();
	win = stores_open_on(&f->stores, &inside, store_window_owner(&f->map));
	if (likely(win)) {
		v = f->pcpu_inner(map, key);
		if (v) {
			TEST_HOOK(HOOK_PCPU_ADD, map);
			map_pcpu_add(map, v, f->cpu_region, delta);
		} else {
			ret = -errno; /* ENOENT, or EBUSY (sync/reentry.h) */
		}
		stores_close(win, inside);
		rcu_unlock();
		return ret;
	}
	rcu_unlock();
	return flat_percpu_add_locked(f, key, delta);
}

int flat_percpu_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	struct flat *f = to_flat(map);
	int found = flat_lookup_bulk(map, keys, n, values);
	size_t off = map_cpu_current(map) * f->cpu_region;

	for (uint32_t i = 0; i < n; i++)
		if (values[i])
			values[i] = (char *)values[i] + off;
	return found;
}
