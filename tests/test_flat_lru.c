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
 *    generation; in the ring, in a CPU's buffer on its way there, or among
 *    a CPU's picked victims), so an eviction can still reach it; a small element the
 *    ring lost could never be evicted (the main queue's hand passes small
 *    elements by), and the map would keep it for ever.
 * The writes to a state byte are of three kinds (the fill's store, the
 * delete's exchange, and the atomic read-modify-writes of lookups and
 * evictions), and each count moves by what the writer replaced: a lost or
 * doubled count shows up here.  And at rest, after a reclamation, no
 * position may be left dead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_rng.h"
#include "test_util.h"
#include "sync/rcu.h"
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
	/* or in a CPU's buffer, on its way to the ring, or its victims (small
	 * ones with their generation; main ones are picked with 0x40) */
	for (uint32_t c = 0; l->cpu && c <= l->cpu_mask; c++) {
		const struct flat_lru_cpu *cc = &l->cpu[c];

		for (uint32_t i = 0; i < cc->n; i++)
			if ((cc->e[i] & (FLAT_LRU_POS_MAX - 1)) == pos &&
			    cc->e[i] >> FLAT_LRU_POS_BITS == gen)
				n++;
		for (uint32_t i = 0; i < cc->nc; i++)
			if (cc->cand[i] == pos && (cc->cexp[i] & 0x7f) == gen)
				n++;
	}
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

/* At rest, every deleted position is reclaimed: no delete's mark on its
 * bucket (flat_reclaim.c, flat_take_mark) was lost to a reclamation that
 * ran beside it, which would leave its position dead for good. */
static void check_reclaimed(struct flat *f)
{
	uint32_t dead = 0;

	rcu_wait_deferred();
	flat_reclaim_sync(f);
	rcu_wait_deferred();
	for (uint32_t pos = 0; pos < f->n_buckets * FLAT_SLOTS; pos++) {
		uint32_t t = flat_tag_at(f, pos);

		dead += t == FLAT_WAIT || t == FLAT_QUEUED || t == FLAT_SYNCQ;
	}
	assert_int_equal(dead, 0);
	assert_int_equal(flat_dead_total(f), 0);
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
	/* per-CPU buffers and victims */
	assert_true(!cpu_shards() || to_flat(map)->lru->cpu);
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
	check_reclaimed(to_flat(map));
	bpfmap_free(map);
}

struct one_insert {
	struct bpfmap *map;
	uint64_t key;
};

/* Inserts one new key from CPU 1 (so that CPU 1 picks a batch of victims
 * and buffers the new key's ring entry), then leaves CPU 1 idle. */
static void *insert_on_cpu1(void *arg)
{
	struct one_insert *o = arg;

	pin_to(1);
	assert_int_equal(bpfmap_update_elem(o->map, &o->key, &o->key, BPFMAP_NOEXIST), 0);
	return NULL;
}

/*
 * What an idle CPU holds ages like the rest: after CPU 1's one eviction,
 * it keeps seven picked victims (elements out of the ring) and its new
 * key's entry in its buffer.  Should nobody take them back, those eight
 * keys would stay in the map for ever however many keys CPU 0 inserts
 * (the main queue's hand passes small elements by).  After three times
 * max_entries new keys from CPU 0, none of the first keys may be left.
 */
static void test_idle_cpu_ages(void **state)
{
	struct bpfmap *map;
	struct one_insert o;
	pthread_t th;
	uint64_t left = 0;
	cpu_set_t saved;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	if (cpu_shards() < 2 || !CPU_ISSET(0, &saved) || !CPU_ISSET(1, &saved)) {
		print_message("skipped: needs CPUs 0 and 1 (per-CPU victims)\n");
		skip();
	}
	pin_to(0);
	map = bpfmap_create(BPFMAP_TYPE_LRU_HASH, "idle", 8, 8, MAX_ENTRIES, NULL);
	assert_non_null(map);
	assert_non_null(to_flat(map)->lru->cpu);
	for (uint64_t k = 0; k < MAX_ENTRIES; k++)
		assert_int_equal(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), 0);
	o = (struct one_insert){ map, 1u << 30 };
	assert_int_equal(pthread_create(&th, NULL, insert_on_cpu1, &o), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(to_flat(map)->lru->cpu[1].nc > 0); /* the premise */
	for (uint64_t k = 1u << 31; k < (1u << 31) + 3 * MAX_ENTRIES; k++)
		assert_int_equal(bpfmap_update_elem(map, &k, &k, BPFMAP_NOEXIST), 0);
	for (uint64_t k = 0; k < MAX_ENTRIES; k++) {
		uint64_t v;

		left += bpfmap_lookup_elem(map, &k, &v) == 0;
	}
	assert_int_equal(left, 0);
	assert_int_equal(bpfmap_lookup_elem(map, &o.key, &left), -ENOENT);
	bpfmap_free(map);
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

/*
 * Two threads insert new keys into a map of a few elements, one outside
 * any read-side section, the other inside one section per insert.  The
 * outside one evicted the last element and then waited for a grace period
 * (its insert found only deleted positions) holding the victim's room; the
 * inside one found the map full with nothing to evict, and yielded inside
 * its section for that room: both hung for ever (a map of one element, 6
 * runs of 6, within a thousand inserts).  The watchdog turns a hang into a
 * failure.
 */
struct sectioned {
	struct bpfmap *map;
	unsigned int cpu;
	bool inside;
	int fails;
	int done;
};

static void *insert_new_keys(void *arg)
{
	struct sectioned *a = arg;
	/* a syscall-view value: every CPU's slot (LRU_PERCPU_HASH) */
	uint64_t *v = calloc((size_t)bpfmap_num_possible_cpus(), sizeof(*v));

	if (!v)
		abort();
	(void)test_pin_cpu(a->cpu);
	for (uint64_t i = 0; i < 30000; i++) {
		uint64_t k = (uint64_t)a->cpu << 40 | i;

		if (a->inside) {
			bpfmap_read_lock();
			a->fails += bpfmap_update(a->map, &k, v, BPFMAP_NOEXIST) != 0;
			bpfmap_read_unlock();
		} else {
			a->fails += bpfmap_update_elem(a->map, &k, v, BPFMAP_NOEXIST) != 0;
		}
	}
	free(v);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool wait_done(const int *flag, int seconds)
{
	struct timespec ms = { 0, 1000000 };

	for (long i = 0; i < seconds * 1000L; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

static void test_inserts_in_and_out_of_sections(void **state)
{
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_LRU_HASH,
						  BPFMAP_TYPE_LRU_PERCPU_HASH };

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		for (uint32_t max = 1; max <= 3; max++) {
			struct bpfmap *map = bpfmap_create(types[t], "pair", 8, 8, max, NULL);
			struct sectioned a[2] = { { map, 0, false, 0, 0 }, { map, 1, true, 0, 0 } };
			pthread_t th[2];

			assert_non_null(map);
			for (int i = 0; i < 2; i++)
				assert_int_equal(pthread_create(&th[i], NULL, insert_new_keys, &a[i]),
						 0);
			for (int i = 0; i < 2; i++) {
				if (!wait_done(&a[i].done, 60)) {
					print_error("type %d, max_entries %u: the %s inserter hung\n",
						    types[t], max, a[i].inside ? "inside" : "outside");
					fail();
				}
				assert_int_equal(pthread_join(th[i], NULL), 0);
				assert_int_equal(a[i].fails, 0);
			}
			bpfmap_free(map);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_queues_after_churn),
		test_entry(test_idle_cpu_ages),
		test_entry(test_inserts_in_and_out_of_sections),
	};

	if (test_chain_forced())
		return test_chain_forced_skipped("the flat table's LRU queues");

	return run_test_group(tests);
}
