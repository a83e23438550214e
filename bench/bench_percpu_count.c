// SPDX-License-Identifier: BSD-2-Clause
/*
 * percpu-count: per-CPU counters incremented through the program view, as a
 * runtime's counting program does: each producer looks up one of 64 keys of
 * a PERCPU_HASH map and adds 1 to the slot it gets, with an atomic add (a
 * thread may move to another CPU between the lookup and the add, so a plain
 * increment could lose counts; see README, "Per-CPU maps").  M increments/s
 * per producer; after the run the slots must add up to every increment made,
 * or the cell counts the difference as errors.  --percpu_add increments with
 * bpfmap_percpu_add() instead (the key looked up and its slot added to in
 * a restartable sequence, no locked instruction).  bpfmap only: the kernel's
 * programs increment per-CPU values with preemption off, a guarantee user
 * space does not have, so no kernel column would measure the same thing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "bench.h"
#include "output.h"
#include "stats.h"

#define COUNT_KEYS 64
#define COUNT_PASSES 1000 /* passes over the keys per timed run */

struct count_lib {
	struct bpfmap *map;
	bpfmap_lookup_fn lookup;
	bool add; /* --percpu_add */
	uint64_t done[BENCH_MAX_PRODUCERS]; /* atomic: increments made, warm-up too */
	struct bench_cpu_stats stats[BENCH_MAX_PRODUCERS];
};

static void *count_setup(const struct bench_args *a, const struct bench_env *env,
			 struct cell_result *r)
{
	struct count_lib *st = aligned_alloc(64, sizeof(*st));
	uint64_t *zero = calloc(1, bench_value_bytes(BPFMAP_TYPE_PERCPU_HASH, 8));

	(void)env;
	if (!st || !zero) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		goto fail;
	}
	memset(st, 0, sizeof(*st));
	st->map = bpfmap_create(BPFMAP_TYPE_PERCPU_HASH, "count", 4, 8, COUNT_KEYS, NULL);
	if (!st->map) {
		snprintf(r->error, sizeof(r->error), "bpfmap_create(PERCPU_HASH): %s",
			 strerror(errno));
		goto fail;
	}
	for (uint32_t k = 0; k < COUNT_KEYS; k++)
		if (bpfmap_update_elem(st->map, &k, zero, BPFMAP_NOEXIST)) {
			snprintf(r->error, sizeof(r->error), "insert: %s", strerror(errno));
			bpfmap_free(st->map);
			goto fail;
		}
	st->lookup = bpfmap_lookup_func(st->map);
	st->add = a->percpu_add;
	free(zero);
	return st;
fail:
	free(st);
	free(zero);
	return NULL;
}

static void count_producer(void *arg, int idx, int nr, atomic_bool *stop)
{
	struct count_lib *st = arg;

	(void)nr;
	do {
		uint64_t t0 = thread_cpu_ns(), misses = 0;

		for (uint32_t p = 0; p < COUNT_PASSES && st->add; p++)
			for (uint32_t k = 0; k < COUNT_KEYS; k++)
				misses += bpfmap_percpu_add(st->map, &k, 1) != 0;
		for (uint32_t p = 0; p < COUNT_PASSES && !st->add; p++) {
			bpfmap_read_lock();
			for (uint32_t k = 0; k < COUNT_KEYS; k++) {
				uint64_t *v = st->lookup(st->map, &k);

				if (v)
					__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
				else
					misses++;
			}
			bpfmap_read_unlock();
		}
		__atomic_fetch_add(&st->done[idx], (uint64_t)COUNT_PASSES * COUNT_KEYS - misses,
				   __ATOMIC_RELAXED);
		seq_stats_add(&st->stats[idx], (uint64_t)COUNT_PASSES * COUNT_KEYS,
			      thread_cpu_ns() - t0, misses);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
}

static void count_measure(void *arg, struct counters *c)
{
	struct count_lib *st = arg;

	for (int i = 0; i < BENCH_MAX_PRODUCERS; i++)
		stats_read(&st->stats[i], c);
}

/* Every increment made must be in the slots. */
static void count_finish(void *arg, struct cell_result *r)
{
	struct count_lib *st = arg;
	int cpus = bpfmap_num_possible_cpus();
	uint64_t *v = calloc((size_t)(cpus > 0 ? cpus : 1), 8), made = 0, found = 0;

	if (!v)
		return;
	for (int i = 0; i < BENCH_MAX_PRODUCERS; i++)
		made += __atomic_load_n(&st->done[i], __ATOMIC_RELAXED);
	for (uint32_t k = 0; k < COUNT_KEYS; k++) {
		if (bpfmap_lookup_elem(st->map, &k, v))
			continue;
		for (int c = 0; c < cpus; c++)
			found += v[c];
	}
	if (found != made)
		r->errors += found > made ? found - made : made - found;
	free(v);
}

static void count_teardown(void *arg)
{
	struct count_lib *st = arg;

	bpfmap_free(st->map);
	free(st);
}

const struct cell_ops percpu_count_lib_ops = {
	.backend = "lib",
	.setup = count_setup,
	.producer = count_producer,
	.measure = count_measure,
	.finish = count_finish,
	.teardown = count_teardown,
};

static int count_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	struct cell_result r;

	if (!(env->backends & BACKEND_LIB)) {
		fprintf(env->out, "%s: the kernel backend does not apply (bpfmap's program view "
				  "only)\n", b->name);
		return 0;
	}
	if ((a->map_type && a->map_type != BPFMAP_TYPE_PERCPU_HASH) ||
	    (a->key_size && a->key_size != 4) || (a->max_entries && a->max_entries != COUNT_KEYS)) {
		fprintf(stderr, "%s: the map is fixed (PERCPU_HASH, key_size 4, %u entries)\n",
			b->name, COUNT_KEYS);
		return 2;
	}
	a->map_type = BPFMAP_TYPE_PERCPU_HASH;
	a->key_size = 4;
	a->value_size = 8;
	a->max_entries = COUNT_KEYS;
	fprintf(env->out, "%s: PERCPU_HASH, %u keys, %s; %d producer%s%s\n", b->name, COUNT_KEYS,
		a->percpu_add ? "bpfmap_percpu_add()" : "lookup + atomic add", env->producers,
		env->producers > 1 ? "s" : "", env->affinity || env->nr_prod_cpus ? " (pinned)" : "");
	snprintf(a->tag, sizeof(a->tag), "%s", a->percpu_add ? "percpu_add" : "atomic");
	cell_run(&percpu_count_lib_ops, a, env, "increment", &r);
	print_cell(env->out, "lib", "increment", &r);
	json_cell(env, b->name, "lib", a, &r);
	if (r.ok && r.errors)
		fprintf(env->out, "  %llu increments lost or misplaced\n",
			(unsigned long long)r.errors);
	return r.ok && !r.errors ? 0 : 1; /* lost increments fail the run */
}

const struct bench bench_percpu_count = {
	.name = "percpu-count",
	.summary = "per-CPU counters incremented through the program view, M/s per producer "
		   "(bpfmap only)",
	.run = count_run,
};
