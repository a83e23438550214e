// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf-hashmap-full-update, bpf-rhashmap-full-update, bpf-hashmap-overwrite.
 *
 * A u32 -> u64 map of max_entries (1000) keys 0 .. 999, filled from user space
 * (preallocated HASH, as the selftest).  One run is UPDATE_RUN updates with
 * BPF_ANY, timed around the loop:
 *  - full update: producer p (the kernel: CPU p) updates the absent key
 *    p + max_entries; every update fails with -E2BIG, so the figure is the
 *    cost of a failed insert into a full map;
 *  - overwrite: the keys cycle over the present ones from p * 97, so every
 *    update replaces a value in place (or, in the kernel, swaps in a new
 *    element);
 *  - evict (bpf-lru-full-update, LRU maps): each update inserts a key never
 *    seen before, so every update evicts one.
 * The library side calls bpfmap_update_elem(), or for per-CPU maps the
 * program view's bpfmap_update() (the calling CPU's slot, as the kernel
 * side's program updates it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "bench.h"
#include "bpf/bench_shared.h"
#include "kernel_backend.h"
#include "output.h"
#include "stats.h"

#define UPDATE_RUN 10000 /* updates per timed run, as the selftest */

int update_args_fill(struct bench_args *a, int mode, char *err, size_t len)
{
	if (!a->map_type)
		a->map_type = mode == UPDATE_EVICT ? BPFMAP_TYPE_LRU_HASH : BPFMAP_TYPE_HASH;
	if (mode == UPDATE_EVICT && a->map_type != BPFMAP_TYPE_LRU_HASH &&
	    a->map_type != BPFMAP_TYPE_LRU_PERCPU_HASH) {
		snprintf(err, len, "new keys into a full map evict only in LRU maps: "
				   "--map_type lru_hash or lru_percpu_hash");
		return -EINVAL;
	}
	if ((a->key_size && a->key_size != 4) || (a->value_size && a->value_size != 8)) {
		snprintf(err, len, "the map is u32 -> u64 (as in the selftest): "
				   "--key_size 4 --value_size 8 only");
		return -EINVAL;
	}
	a->key_size = 4;
	a->value_size = 8;
	if (!a->max_entries)
		a->max_entries = 1000;
	if (a->max_entries >= 1u << UPDATE_EVICT_BITS) {
		snprintf(err, len, "--max_entries must be below %u", 1u << UPDATE_EVICT_BITS);
		return -EINVAL;
	}
	a->nr_entries = a->max_entries; /* full */
	a->update_mode = mode;
	return 0;
}

/* ---- library backend ---- */

struct update_lib {
	struct bpfmap *map;
	uint32_t max_entries;
	int mode;
	bool prog; /* per-CPU maps: the program view's update, one slot */
	struct bench_cpu_stats stats[BENCH_MAX_PRODUCERS];
};

/* bpfmap_update_elem, as before there were per-CPU maps, whose syscall
 * view takes every CPU's slot: they take the program view's one. */
static inline int update_one(struct bpfmap *map, bool prog, const uint32_t *key,
			     const uint64_t *v)
{
	return prog ? bpfmap_update(map, key, v, BPFMAP_ANY)
		    : bpfmap_update_elem(map, key, v, BPFMAP_ANY);
}

static void *update_lib_setup(const struct bench_args *a, const struct bench_env *env,
			      struct cell_result *r)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = a->map_flags);
	struct update_lib *st = aligned_alloc(64, sizeof(*st));

	(void)env;
	if (!st) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return NULL;
	}
	memset(st, 0, sizeof(*st));
	st->max_entries = a->max_entries;
	st->mode = a->update_mode;
	st->prog = bench_value_bytes(a->map_type, 8) != 8;
	st->map = bpfmap_create(a->map_type, "bench", 4, 8, a->max_entries, &opts);
	if (!st->map) {
		snprintf(r->error, sizeof(r->error), "bpfmap_create(%s): %s",
			 map_type_name(a->map_type), strerror(errno));
		free(st);
		return NULL;
	}
	for (uint32_t k = 0; k < a->max_entries; k++) {
		uint64_t v = k;
		int ret = update_one(st->map, st->prog, &k, &v);

		if (ret) {
			snprintf(r->error, sizeof(r->error), "filling key %u: %s", k,
				 strerror(-ret));
			bpfmap_free(st->map);
			free(st);
			return NULL;
		}
	}
	return st;
}

static uint64_t run_absent(struct bpfmap *map, bool prog, uint32_t key)
{
	uint64_t errors = 0;

	for (uint32_t i = 0; i < UPDATE_RUN; i++) {
		uint64_t v = i;

		if (update_one(map, prog, &key, &v) != -E2BIG)
			errors++;
	}
	return errors;
}

static uint64_t run_present(struct bpfmap *map, bool prog, uint32_t *key, uint32_t max_entries)
{
	uint64_t errors = 0;
	uint32_t k = *key;

	for (uint32_t i = 0; i < UPDATE_RUN; i++) {
		uint64_t v = i;

		if (update_one(map, prog, &k, &v))
			errors++;
		if (++k >= max_entries)
			k = 0;
	}
	*key = k;
	return errors;
}

static uint64_t run_new(struct bpfmap *map, bool prog, uint32_t idx, uint32_t *n)
{
	uint64_t errors = 0;

	for (uint32_t i = 0; i < UPDATE_RUN; i++) {
		uint32_t k = UPDATE_EVICT_KEY(idx, *n);
		uint64_t v = i;

		++*n;
		if (update_one(map, prog, &k, &v))
			errors++;
	}
	return errors;
}

static void update_lib_producer(void *arg, int idx, int nr, atomic_bool *stop)
{
	struct update_lib *st = arg;
	uint32_t key = st->mode == UPDATE_OVERWRITE ? (uint32_t)idx * 97 % st->max_entries
						    : (uint32_t)idx + st->max_entries, n = 0;

	(void)nr;
	do { /* at least one run, however short -d is */
		uint64_t t0 = thread_cpu_ns(), errors;

		if (st->mode == UPDATE_OVERWRITE)
			errors = run_present(st->map, st->prog, &key, st->max_entries);
		else if (st->mode == UPDATE_EVICT)
			errors = run_new(st->map, st->prog, (uint32_t)idx, &n);
		else
			errors = run_absent(st->map, st->prog, key);
		seq_stats_add(&st->stats[idx], UPDATE_RUN, thread_cpu_ns() - t0, errors);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
}

static void update_lib_measure(void *arg, struct counters *c)
{
	struct update_lib *st = arg;

	for (int i = 0; i < BENCH_MAX_PRODUCERS; i++)
		stats_read(&st->stats[i], c);
}

static void update_lib_finish(void *arg, struct cell_result *r)
{
	struct update_lib *st = arg;

	r->mem_bytes = (double)bpfmap_mem_usage(st->map);
}

static void update_lib_teardown(void *arg)
{
	struct update_lib *st = arg;

	bpfmap_free(st->map);
	free(st);
}

const struct cell_ops update_lib_ops = {
	.backend = "lib",
	.setup = update_lib_setup,
	.producer = update_lib_producer,
	.measure = update_lib_measure,
	.finish = update_lib_finish,
	.teardown = update_lib_teardown,
};

/* ---- kernel backend ---- */

struct update_kern {
	struct kbpf k;
	struct update_state *s;
};

static int update_configure(struct bpf_object *obj, void *arg, char *err, size_t len)
{
	const struct bench_args *a = arg;
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "hash_map");

	if (!map || bpf_map__set_type(map, a->map_type) ||
	    bpf_map__set_max_entries(map, a->max_entries) ||
	    bpf_map__set_map_flags(map, a->map_flags)) {
		snprintf(err, len, "cannot size the map");
		return -EINVAL;
	}
	return 0;
}

static void *update_kern_setup(const struct bench_args *a, const struct bench_env *env,
			       struct cell_result *r)
{
	struct update_kern *st = calloc(1, sizeof(*st));
	int fd;

	(void)env;
	if (!st) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return NULL;
	}
	if (kbpf_load(&st->k, bpf_obj_update, bpf_obj_update_len, "update", update_configure,
		      (void *)a, r->error, sizeof(r->error))) {
		free(st);
		return NULL;
	}
	if (st->k.bss_size < sizeof(*st->s)) {
		snprintf(r->error, sizeof(r->error), ".bss is %zu bytes, expected %zu",
			 st->k.bss_size, sizeof(*st->s));
		goto fail;
	}
	st->s = st->k.bss;
	fd = kbpf_map_fd(&st->k, "hash_map");
	for (uint32_t k = 0; k < a->max_entries; k++) {
		uint64_t v[BENCH_MAX_VALUE / 8];

		if (bench_value_bytes(a->map_type, 8) > sizeof(v)) {
			snprintf(r->error, sizeof(r->error), "too many CPUs for the value buffer");
			goto fail;
		}
		bench_value_fill(v, a->map_type, 8, k);
		if (bpf_map_update_elem(fd, &k, v, BPF_ANY)) {
			snprintf(r->error, sizeof(r->error), "filling key %u: %s", k,
				 strerror(errno));
			goto fail;
		}
	}
	st->s->mode = (uint32_t)a->update_mode;
	st->s->nr_updates = UPDATE_RUN;
	st->s->max_entries = a->max_entries;
	snprintf(r->note, sizeof(r->note), "%s", st->k.note);
	kbpf_gate_open(&st->s->gate);
	return st;
fail:
	kbpf_close(&st->k);
	free(st);
	return NULL;
}

static void update_kern_measure(void *arg, struct counters *c)
{
	struct update_kern *st = arg;

	for (int i = 0; i < BENCH_MAX_CPUS; i++)
		stats_read(&st->s->cpu[i], c);
}

static void update_kern_finish(void *arg, struct cell_result *r)
{
	struct update_kern *st = arg;
	long long m = kbpf_memlock(kbpf_map_fd(&st->k, "hash_map"));

	if (m >= 0)
		r->mem_bytes = (double)m;
}

static void update_kern_teardown(void *arg)
{
	struct update_kern *st = arg;

	kbpf_gate_close(&st->s->gate);
	kbpf_close(&st->k);
	free(st);
}

const struct cell_ops update_kernel_ops = {
	.backend = "kernel",
	.setup = update_kern_setup,
	.producer = kbpf_producer,
	.measure = update_kern_measure,
	.finish = update_kern_finish,
	.teardown = update_kern_teardown,
};

/* ---- the benchmarks ---- */

static int update_run(const struct bench *b, const struct bench_env *env, struct bench_args *a,
		      int mode, bool rhash)
{
	struct bench_args ka;
	char err[160];

	rhash = rhash || a->map_type == BPFMAP_TYPE_RHASH; /* --map_type rhash */
	if (rhash) {
		a->map_type = BPFMAP_TYPE_RHASH;
		a->map_flags |= BPFMAP_F_NO_PREALLOC;
	}
	if (update_args_fill(a, mode, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", b->name, err);
		return 2;
	}
	ka = *a;
	if (rhash) {
		/* The kernel has no RHASH: its column is its fixed HASH. */
		ka.map_type = BPFMAP_TYPE_HASH;
		ka.map_flags &= ~BPFMAP_F_NO_PREALLOC;
	}
	return run_pair(b, env, a, &ka, &update_lib_ops, &update_kernel_ops,
			mode == UPDATE_OVERWRITE ? "overwrite" : "update");
}

static int full_update_run(const struct bench *b, const struct bench_env *env,
			   struct bench_args *a)
{
	return update_run(b, env, a, UPDATE_FULL, false);
}

static int lru_full_update_run(const struct bench *b, const struct bench_env *env,
			       struct bench_args *a)
{
	return update_run(b, env, a, UPDATE_EVICT, false);
}

static int rfull_update_run(const struct bench *b, const struct bench_env *env,
			    struct bench_args *a)
{
	return update_run(b, env, a, UPDATE_FULL, true);
}

static int overwrite_run(const struct bench *b, const struct bench_env *env,
			 struct bench_args *a)
{
	return update_run(b, env, a, UPDATE_OVERWRITE, false);
}

const struct bench bench_full_update = {
	.name = "bpf-hashmap-full-update",
	.summary = "failed inserts (-E2BIG) into a full 1000-entry HASH, M/s per producer",
	.run = full_update_run,
};

const struct bench bench_lru_full_update = {
	.name = "bpf-lru-full-update",
	.summary = "new keys into a full 1000-entry LRU_HASH, each one evicting, M/s per producer",
	.run = lru_full_update_run,
};

const struct bench bench_rfull_update = {
	.name = "bpf-rhashmap-full-update",
	.summary = "the same on RHASH (kernel column: its fixed HASH)",
	.run = rfull_update_run,
	.available = bench_rhash_available,
};

const struct bench bench_overwrite = {
	.name = "bpf-hashmap-overwrite",
	.summary = "BPF_ANY updates of present keys of a full HASH, M/s per producer",
	.run = overwrite_run,
};
