/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * White-box invariants of the flat table's eviction (tables/flat_lru.h)
 * after concurrent churn: two threads insert new keys into a full
 * LRU_HASH (each insert evicts), delete, overwrite and look keys up
 * through the program view (which marks them), all at once.  Once they
 * have stopped, the queues' counters must agree with the states they
 * count, and every small element must still be reachable from the ring:
 *  - `small`, `demoted` and each epoch's count equal the number of states
 *    with SMALL, with DEMOTED, and with DEMOTED in that epoch;
 *  - a position that holds no live element has neither bit;
 *  - each live small element has a live ring entry (one of its
 *    generation; in the ring, or in a CPU's buffer on its way there), so
 *    an eviction can still reach it; a small element the
 *    ring lost could never be evicted (the main queue's hand passes small
 *    elements by), and the map would keep it for ever.
 * The writes to a state byte are of three kinds (the fill's store, the
 * delete's exchange, and the atomic read-modify-writes of lookups and
 * evictions), and each count moves by what the writer replaced: a lost or
 * doubled count shows up here.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_rng.h"
#include "test_util.h"
#include "tables/flat_lru.h"
#include "util/cpu.h"

#define MAX_ENTRIES 2048
#define KEY_SPACE (MAX_ENTRIES * 8)
#define OPS_PER_THREAD 200000

struct churn {
	struct bpfmap *map;
	unsigned int cpu;
	uint64_t seed;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	uint64_t rng = c->seed;

	(void)test_pin_cpu(c->cpu);
	for (int i = 0; i < OPS_PER_THREAD; i++) {
		uint64_t k = rng_below(&rng, KEY_SPACE), v = rng_next(&rng);
		unsigned int op = (unsigned int)rng_below(&rng, 100);

		if (op < 55) {
			(void)bpfmap_update_elem(c->map, &k, &v, BPFMAP_ANY);
		} else if (op < 70) {
			(void)bpfmap_delete_elem(c->map, &k);
		} else if (op < 75) {
			(void)bpfmap_update_elem(c->map, &k, &v, BPFMAP_EXIST);
		} else {
			uint64_t *p;

			bpfmap_read_lock();
			p = bpfmap_lookup(c->map, &k);
			if (p)
				(void)__atomic_load_n(p, __ATOMIC_RELAXED);
			bpfmap_read_unlock();
		}
	}
	return NULL;
}

/* The queue entries (ring or buffers) of value index @vi's generation
 * @gen, live. */
static uint32_t ring_entries(const struct flat *f, uint32_t pos, uint32_t gen)
{
	const struct flat_lru *l = f->lru;
	uint32_t n = 0;

	for (uint32_t i = 0, r = l->head; i < l->len; i++, r = r + 1 == l->cap ? 0 : r + 1) {
		uint32_t e = l->ring[r];

		if ((e & (FLAT_LRU_POS_MAX - 1)) == pos && e >> FLAT_LRU_POS_BITS == gen)
			n++;
	}
	/* or still in a CPU's buffer, on its way to the ring */
	for (uint32_t c = 0; l->pend && c <= l->pend_mask; c++)
		for (uint32_t i = 0; i < l->pend[c].n; i++)
			if ((l->pend[c].e[i] & (FLAT_LRU_POS_MAX - 1)) == pos &&
			    l->pend[c].e[i] >> FLAT_LRU_POS_BITS == gen)
				n++;
	return n;
}

static void check_queues(const struct flat *f)
{
	const struct flat_lru *l = f->lru;
	uint32_t end = f->pool_base + __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
	uint32_t small = 0, demoted = 0, epochs[FLAT_LRU_EPOCHS] = { 0 }, live = 0;

	for (uint32_t pos = 0; pos < end; pos++) {
		uint32_t st = flat_lru_state(l, flat_elem_of(f, pos));
		bool is_live = flat_tag_at(f, pos) >= FLAT_TAG_MIN;

		if (!is_live) {
			assert_int_equal(st & (FLAT_LRU_SMALL | FLAT_LRU_DEMOTED), 0);
			continue;
		}
		live++;
		if (st & FLAT_LRU_SMALL) {
			small++;
			/* At least one: the generation has 2 bits, so a stale
			 * entry of a position filled a multiple of 4 times since
			 * looks live too (the eviction that pops it second finds
			 * the element gone, or no longer small, and drops it). */
			assert_true(ring_entries(f, pos, (st & FLAT_LRU_GEN_MASK) >>
							     FLAT_LRU_GEN_SHIFT) >= 1);
		}
		if (st & FLAT_LRU_DEMOTED) {
			demoted++;
			epochs[st >> FLAT_LRU_EPOCH_SHIFT]++;
		}
	}
	assert_int_equal(live, count_elements(&f->count));
	assert_int_equal(small, l->small);
	assert_int_equal(demoted, l->demoted);
	for (int e = 0; e < FLAT_LRU_EPOCHS; e++)
		assert_int_equal(epochs[e], l->epoch_count[e]);
}

static void test_queues_after_churn(void **state)
{
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_LRU_HASH, "lru", 8, 8, MAX_ENTRIES, NULL);
	struct churn c[2];
	pthread_t th[2];

	(void)state;
	assert_non_null(map);
	assert_ptr_equal(map->ops, &flat_ops); /* the common LRU on the flat table */
	assert_non_null(to_flat(map)->lru);
	/* new elements wait in per-CPU buffers on their way to the ring */
	assert_true(!cpu_shards() || to_flat(map)->lru->pend);
	for (uint64_t k = 0; k < MAX_ENTRIES; k++) /* full: every insert evicts */
		assert_int_equal(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), 0);
	check_queues(to_flat(map));
	for (int i = 0; i < 2; i++) {
		c[i] = (struct churn){ map, (unsigned int)i, 0x9e3779b97f4a7c15ULL * (i + 1) };
		assert_int_equal(pthread_create(&th[i], NULL, churn_thread, &c[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	check_queues(to_flat(map));
	bpfmap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_queues_after_churn),
	};

	return run_test_group(tests);
}
