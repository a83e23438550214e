/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PERCPU_HASH and the LRU maps under threads (also run under TSan): per-CPU
 * counters incremented through the program view lose nothing, evicting
 * inserts from two threads keep the map at capacity without an error, keys
 * in use survive, and updates of present keys never evict.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static uint32_t nr_cpus;

#ifdef BPFMAP_TSAN
#define SCALE 10
#else
#define SCALE 1
#endif

struct counter_arg {
	struct bpfmap *map;
	unsigned int cpu; /* UINT32_MAX: not pinned, so the thread migrates */
	uint32_t keys, rounds;
	bool add;         /* bpfmap_percpu_add() rather than the pointer's atomic */
};

static void *count_thread(void *p)
{
	struct counter_arg *a = p;

	if (a->cpu != UINT32_MAX)
		test_pin_cpu(a->cpu);
	for (uint32_t r = 0; r < a->rounds; r++) {
		for (uint32_t k = 0; k < a->keys; k++) {
			uint64_t *v;

			if (a->add) {
				if (bpfmap_percpu_add(a->map, &k, 1))
					return (void *)1;
				continue;
			}
			bpfmap_read_lock();
			v = bpfmap_lookup(a->map, &k);
			if (v)
				__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
			bpfmap_read_unlock();
			if (!v)
				return (void *)1;
		}
	}
	return NULL;
}

/* A per-CPU map of @keys counters, every slot zero. */
static struct bpfmap *counter_map(enum bpfmap_type type, uint32_t keys)
{
	struct bpfmap *map = must_create(type, 4, 8, keys, 0);
	uint64_t *zero = calloc(nr_cpus, 8);

	assert_non_null(zero);
	for (uint32_t k = 0; k < keys; k++)
		assert_int_equal(bpfmap_update_elem(map, &k, zero, BPFMAP_NOEXIST), 0);
	free(zero);
	return map;
}

static void join_counters(pthread_t *th, int n)
{
	for (int i = 0; i < n; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		assert_null(ret);
	}
}

/* Every key's slots add up to @want; the map is freed. */
static void assert_counts(struct bpfmap *map, uint32_t keys, uint64_t want)
{
	uint64_t *out = calloc(nr_cpus, 8);

	assert_non_null(out);
	for (uint32_t k = 0; k < keys; k++) {
		uint64_t sum = 0;

		assert_int_equal(bpfmap_lookup_elem(map, &k, out), 0);
		for (uint32_t c = 0; c < nr_cpus; c++)
			sum += out[c];
		assert_int_equal(sum, want);
	}
	free(out);
	bpfmap_free(map);
}

/* Two threads increment every key's counter through the program view;
 * the slots add up to every increment, pinned or migrating. */
static void counters(enum bpfmap_type type, bool pinned, bool add)
{
	const uint32_t keys = 64, rounds = 20000 / SCALE;
	struct bpfmap *map = counter_map(type, keys);
	struct counter_arg a[2];
	pthread_t th[2];

	for (int i = 0; i < 2; i++) {
		a[i] = (struct counter_arg){ map, pinned ? (unsigned int)i : UINT32_MAX, keys,
					     rounds, add };
		assert_int_equal(pthread_create(&th[i], NULL, count_thread, &a[i]), 0);
	}
	join_counters(th, 2);
	assert_counts(map, keys, 2ULL * rounds);
}

static void test_percpu_counters_pinned(void **state)
{
	(void)state;
	counters(BPFMAP_TYPE_PERCPU_HASH, true, false);
	counters(BPFMAP_TYPE_LRU_PERCPU_HASH, true, false);
	counters(BPFMAP_TYPE_PERCPU_HASH, true, true);
}

static void test_percpu_counters_migrating(void **state)
{
	(void)state;
	counters(BPFMAP_TYPE_PERCPU_HASH, false, false);
	counters(BPFMAP_TYPE_LRU_PERCPU_HASH, false, false);
	/* bpfmap_percpu_add: restartable sequences, no locked instruction,
	 * exact for threads that move between CPUs and share them. */
	counters(BPFMAP_TYPE_PERCPU_HASH, false, true);
	counters(BPFMAP_TYPE_LRU_PERCPU_HASH, false, true);
}

static void on_signal(int sig)
{
	(void)sig;
}

struct storm_arg {
	pthread_t *targets;
	int n;
	bool stop; /* atomic */
	unsigned long sent;
};

/* Signals to the adders, non-stop: a signal delivered inside a restartable
 * sequence aborts it, so the abort path runs thousands of times. */
static void *storm_thread(void *p)
{
	struct storm_arg *s = p;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		for (int i = 0; i < s->n; i++, s->sent++)
			pthread_kill(s->targets[i], SIGUSR1);
	return NULL;
}

/* Four threads on two CPUs, unpinned, under a storm of signals: they share
 * CPUs and are interrupted inside bpfmap_percpu_add's sequence; no add is
 * lost or doubled (an abort path that gave up instead of restarting fails
 * this). */
static void test_percpu_add_oversubscribed(void **state)
{
	const uint32_t keys = 8, rounds = 40000 / SCALE;
	struct bpfmap *map = counter_map(BPFMAP_TYPE_PERCPU_HASH, keys);
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct storm_arg storm = { 0 };
	struct counter_arg a[4];
	pthread_t th[4], stormer;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int i = 0; i < 4; i++) {
		a[i] = (struct counter_arg){ map, UINT32_MAX, keys, rounds, true };
		assert_int_equal(pthread_create(&th[i], NULL, count_thread, &a[i]), 0);
	}
	storm.targets = th;
	storm.n = 4;
	assert_int_equal(pthread_create(&stormer, NULL, storm_thread, &storm), 0);
	join_counters(th, 4);
	__atomic_store_n(&storm.stop, true, __ATOMIC_RELAXED);
	pthread_join(stormer, NULL);
	print_message("%lu signals sent to the adders\n", storm.sent);
	assert_counts(map, keys, 4ULL * rounds);
}

struct churn_arg {
	struct bpfmap *map;
	unsigned int id;
	uint64_t inserts, hot;
	int bad;
};

/* New keys (each insert evicts once the map is full), with the hot keys
 * looked up through the program view between them. */
static void *churn_thread(void *p)
{
	struct churn_arg *a = p;
	uint64_t value[1024] = { 0 };

	test_pin_cpu(a->id);
	for (uint64_t i = 0; i < a->inserts; i++) {
		uint64_t key = (uint64_t)(a->id + 1) << 40 | i;
		int ret = bpfmap_update_elem(a->map, &key, value, BPFMAP_NOEXIST);

		if (ret) {
			a->bad = ret;
			return NULL;
		}
		for (uint64_t h = 0; h < a->hot; h++) {
			bpfmap_read_lock();
			if (!bpfmap_lookup(a->map, &h))
				a->bad = -1000 - (int)h;
			bpfmap_read_unlock();
		}
		/* A present key's update in a full map evicts nothing (and
		 * the hot keys are present). */
		key = i % a->hot;
		if (bpfmap_update_elem(a->map, &key, value, BPFMAP_EXIST))
			a->bad = -2000;
	}
	return NULL;
}

static void churn(enum bpfmap_type type, uint32_t flags)
{
	const uint32_t max = 1024, hot = 16;
	struct bpfmap *map = must_create(type, 8, 8, max, flags);
	uint64_t value[1024] = { 0 };
	struct churn_arg a[2];
	pthread_t th[2];

	assert_true(nr_cpus <= 1024);
	for (uint64_t h = 0; h < hot; h++)
		assert_int_equal(bpfmap_update_elem(map, &h, value, BPFMAP_NOEXIST), 0);
	for (unsigned int i = 0; i < 2; i++) {
		a[i] = (struct churn_arg){ map, i, 20000 / SCALE, hot, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, churn_thread, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].bad, 0);
	}
	assert_int_equal(walk_count(map, 8), max);
	for (uint64_t h = 0; h < hot; h++)
		assert_int_equal(bpfmap_lookup_elem(map, &h, value), 0);
	bpfmap_free(map);
}

static void test_lru_churn(void **state)
{
	(void)state;
	churn(BPFMAP_TYPE_LRU_HASH, 0);
	churn(BPFMAP_TYPE_LRU_PERCPU_HASH, 0);
}

/* Per-CPU lists: each thread's own list holds max / CPUs. */
static void test_lru_churn_per_cpu_lists(void **state)
{
	(void)state;
	churn(BPFMAP_TYPE_LRU_HASH, BPFMAP_F_NO_COMMON_LRU);
}

/* Updates of present keys of a full map, from two threads, evict nothing,
 * and deletes meanwhile make room that no insert needs to evict for. */
struct overwrite_arg {
	struct bpfmap *map;
	unsigned int id;
	uint32_t keys, rounds;
	int bad;
};

static void *overwrite_thread(void *p)
{
	struct overwrite_arg *a = p;

	test_pin_cpu(a->id);
	for (uint32_t r = 0; r < a->rounds; r++) {
		for (uint32_t k = a->id; k < a->keys; k += 2) {
			uint64_t v = r;

			if (bpfmap_update(a->map, &k, &v, r & 1 ? BPFMAP_EXIST : BPFMAP_ANY))
				a->bad = 1;
		}
	}
	return NULL;
}

static void test_lru_overwrites_keep_keys(void **state)
{
	const uint32_t max = 512;
	struct bpfmap *map = must_create(BPFMAP_TYPE_LRU_HASH, 4, 8, max, 0);
	struct overwrite_arg a[2];
	pthread_t th[2];
	uint64_t v = 0;

	(void)state;
	for (uint32_t k = 0; k < max; k++)
		assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
	for (unsigned int i = 0; i < 2; i++) {
		a[i] = (struct overwrite_arg){ map, i, max, 200 / SCALE, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, overwrite_thread, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].bad, 0);
	}
	for (uint32_t k = 0; k < max; k++)
		assert_int_equal(bpfmap_lookup_elem(map, &k, &v), 0);
	assert_int_equal(walk_count(map, 4), max);
	bpfmap_free(map);
}

/*
 * Maps of every kind created, used and freed by two threads at once: the
 * registry of fork guards and the first reads of the CPUs are shared.
 * ThreadSanitizer saw the unlocked test of a guard's link in
 * fork_guard_remove race another thread's add (9 runs in 10 of an
 * adversarial helper's probe), and the rseq offset read plainly.
 */
static void *create_free_thread(void *p)
{
	static const struct {
		enum bpfmap_type type;
		uint32_t flags;
	} kinds[] = {
		{ BPFMAP_TYPE_HASH, 0 },
		{ BPFMAP_TYPE_HASH, BPFMAP_F_NO_PREALLOC },
		{ BPFMAP_TYPE_PERCPU_HASH, 0 },
		{ BPFMAP_TYPE_LRU_HASH, 0 },
		{ BPFMAP_TYPE_LRU_PERCPU_HASH, BPFMAP_F_NO_COMMON_LRU },
		{ BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC },
	};
	uint64_t *vals = calloc(nr_cpus, sizeof(*vals)); /* a per-CPU value or one */
	uintptr_t fails = !vals;

	(void)p;
	for (int r = 0; r < 40 && vals; r++) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			BPFMAP_CREATE_OPTS(o, .map_flags = kinds[i].flags);
			struct bpfmap *map = bpfmap_create(kinds[i].type, NULL, 8, 8, 64, &o);
			uint64_t k = (uint64_t)r;

			if (!map) {
				fails++;
				continue;
			}
			fails += bpfmap_update_elem(map, &k, vals, BPFMAP_ANY) != 0;
			fails += !bpfmap_lookup(map, &k);
			bpfmap_free(map);
		}
	}
	free(vals);
	return (void *)fails;
}

static void test_create_free_concurrently(void **state)
{
	pthread_t t[2];
	void *ret;

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, create_free_thread, NULL), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_int_equal((uintptr_t)ret, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_percpu_counters_pinned),
		test_entry(test_percpu_counters_migrating),
		test_entry(test_percpu_add_oversubscribed),
		test_entry(test_lru_churn),
		test_entry(test_lru_churn_per_cpu_lists),
		test_entry(test_lru_overwrites_keep_keys),
		test_entry(test_create_free_concurrently),
	};
	int n = bpfmap_num_possible_cpus();

	if (n <= 0)
		return 1;
	nr_cpus = (uint32_t)n;
	return run_test_group(tests);
}
