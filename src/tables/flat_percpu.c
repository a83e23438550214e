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

#include "tables/flat.h"

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

int flat_percpu_add(struct bpfmap *map, const void *key, uint64_t delta)
{
	struct flat *f = to_flat(map);
	char *v;
	int ret = 0;

	rcu_lock();
	v = f->pcpu_inner(map, key);
	if (v)
		map_pcpu_add(map, v, f->cpu_region, delta);
	else
		ret = -errno; /* ENOENT, or EBUSY (sync/reentry.h) */
	rcu_unlock();
	return ret;
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
