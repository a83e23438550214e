/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat layout's element and dead-slot counts, sharded per CPU in large
 * maps: design in maps/flat_count.h.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "core/map.h"
#include "maps/flat.h"

uint32_t flat_cpu_slow(void)
{
	return (uint32_t)sched_getcpu();
}

uint32_t flat_shards_for(uint32_t max_entries)
{
	int cpus = bpfmap_num_possible_cpus();
	uint32_t n = 1;

	if (cpus < 2)
		return 0;
	while (n < (uint32_t)cpus && n < 64)
		n *= 2;
	return max_entries / n >= FLAT_SHARDED_MIN ? n : 0;
}

/* Take every shard's credits back into f->count; were there any? */
static bool flat_count_steal(struct flat *f)
{
	int64_t got = 0;

	__atomic_store_n(&f->credits_out, 0, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i <= f->shard_mask; i++)
		got += __atomic_exchange_n(&f->shards[i].credits, 0, __ATOMIC_SEQ_CST);
	if (got)
		__atomic_fetch_sub(&f->count, (uint32_t)got, __ATOMIC_RELAXED);
	return got != 0;
}

bool flat_count_reserve_slow(struct flat *f, struct flat_shard *s)
{
	uint32_t max = f->map.max_entries, n = __atomic_load_n(&f->count, __ATOMIC_RELAXED);

	if (n <= max - FLAT_CREDIT_CHUNK) {
		/* A chunk: one for this insert, the rest this shard's credits;
		 * counted as moving meanwhile (see below). */
		bool got = false;

		__atomic_fetch_add(&f->credits_moving, 1, __ATOMIC_SEQ_CST);
		while (!got && n <= max - FLAT_CREDIT_CHUNK)
			got = __atomic_compare_exchange_n(&f->count, &n, n + FLAT_CREDIT_CHUNK, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		if (got) {
			__atomic_fetch_add(&s->credits, FLAT_CREDIT_CHUNK - 1, __ATOMIC_SEQ_CST);
			flat_credits_added(f);
		}
		__atomic_fetch_sub(&f->credits_moving, 1, __ATOMIC_SEQ_CST);
		if (got)
			return true;
	}
	/*
	 * Near max_entries: one at a time, and the shards' credits count as
	 * room (each steal that finds some frees that much).  -E2BIG only when
	 * a steal found none and no chunk was moving before it: a chunk taken
	 * from f->count and not yet in its shard, or back on its way, is room
	 * the steal cannot see.
	 */
	for (;;) {
		uint32_t moving;

		if (map_count_reserve(&f->count, max))
			return true;
		moving = __atomic_load_n(&f->credits_moving, __ATOMIC_SEQ_CST);
		if (flat_count_steal(f))
			continue;
		if (!moving)
			return false;
		while (__atomic_load_n(&f->credits_moving, __ATOMIC_SEQ_CST))
			sched_yield();
	}
}

void flat_count_trim(struct flat *f, struct flat_shard *s, int32_t c)
{
	/* More than two chunks: one back to f->count (unless stolen since),
	 * counted as moving on the way. */
	__atomic_fetch_add(&f->credits_moving, 1, __ATOMIC_SEQ_CST);
	if (__atomic_compare_exchange_n(&s->credits, &c, c - FLAT_CREDIT_CHUNK, false,
					__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		__atomic_fetch_sub(&f->count, FLAT_CREDIT_CHUNK, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&f->credits_moving, 1, __ATOMIC_SEQ_CST);
}

int32_t flat_dead_flush(struct flat *f, struct flat_shard *s)
{
	int32_t d = __atomic_exchange_n(&s->dead, 0, __ATOMIC_RELAXED);

	return __atomic_add_fetch(&f->dead, d, __ATOMIC_RELAXED);
}

uint32_t flat_count_elements(const struct flat *f)
{
	int64_t n = __atomic_load_n(&f->count, __ATOMIC_SEQ_CST);

	for (uint32_t i = 0; f->sharded && i <= f->shard_mask; i++)
		n -= __atomic_load_n(&f->shards[i].credits, __ATOMIC_SEQ_CST);
	return (uint32_t)n;
}

int32_t flat_dead_total(const struct flat *f)
{
	int64_t d = __atomic_load_n(&f->dead, __ATOMIC_RELAXED);

	for (uint32_t i = 0; f->sharded && i <= f->shard_mask; i++)
		d += __atomic_load_n(&f->shards[i].dead, __ATOMIC_RELAXED);
	return (int32_t)d;
}
