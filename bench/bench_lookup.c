// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf-hashmap-lookup (and bpf-rhashmap-lookup): the selftests' lookup
 * benchmark.  nr_entries keys are inserted (key i: u32 word 0 = i + 1, word
 * j >= 1 = 2654435761 * j, value i); one run is nr_loops / nr_entries passes
 * over the keys, each lookup preceded by patching word 0 with a 4-byte store;
 * the run is timed around the loop.  Every lookup must hit.
 *
 * The library side runs that loop in C over the program view, inside
 * bpfmap_read_lock/unlock as a BPF program runs inside RCU.  It calls the
 * map's own lookup function, which bpfmap_lookup_func() hands out once, as a
 * userspace runtime's JIT would: the counterpart of the kernel's verifier
 * inlining the hash map's lookup into the program.  --via_lookup calls
 * bpfmap_lookup() instead, which checks its arguments and jumps to the same
 * function.  The kernel side is bpf/lookup.bpf.c doing the loop with
 * bpf_loop.
 *
 * --full_width_keys (library side only) writes the changing head of the key
 * with one store as wide as the hash's loads (8 bytes for 8-15-byte keys, 16
 * from 16 on), so a hash reading 8 bytes at a time is not measured waiting on
 * a store-forwarding stall that the 4-byte patch causes (BENCHMARKS.md, "A
 * trap").
 *
 * --writer (both sides) adds a thread that overwrites the keys' values while
 * the producers look them up (bench_writer.c); bpfmap's lookups must still
 * all hit, the kernel's misses under it are counted, not fatal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "bench.h"
#include "bench_writer.h"
#include "kernel_backend.h"
#include "output.h"
#include "stats.h"

#define KEY_WORD_MULT 2654435761u

/* Selftest limits: bpf_loop runs at most 1 << 23 iterations. */
#define LOOKUP_MAX_LOOPS (1u << 23)

int lookup_args_fill(struct bench_args *a, char *err, size_t len)
{
	if (!a->map_type)
		a->map_type = BPFMAP_TYPE_HASH;
	if (!a->key_size)
		a->key_size = 4;
	if (!a->value_size)
		a->value_size = 8;
	if (!a->max_entries)
		a->max_entries = 1000;
	if (!a->nr_entries)
		a->nr_entries = a->max_entries < 500 ? a->max_entries : 500;
	if (!a->nr_loops)
		a->nr_loops = 1000000;
	if (a->key_size > LOOKUP_MAX_KEY) {
		snprintf(err, len, "--key_size must be 1..%d", LOOKUP_MAX_KEY);
		return -EINVAL;
	}
	if (a->value_size < 8) {
		snprintf(err, len, "--value_size must be at least 8 (the value holds i)");
		return -EINVAL;
	}
	if (a->nr_entries > a->max_entries) {
		snprintf(err, len, "--nr_entries (%u) must not exceed --max_entries (%u)",
			 a->nr_entries, a->max_entries);
		return -EINVAL;
	}
	if (a->writer && bench_value_bytes(a->map_type, a->value_size) != a->value_size) {
		snprintf(err, len, "--writer takes maps without per-CPU values");
		return -EINVAL;
	}
	if (a->nr_loops > LOOKUP_MAX_LOOPS) {
		snprintf(err, len, "--nr_loops must be at most %u", LOOKUP_MAX_LOOPS);
		return -EINVAL;
	}
	if (a->nr_loops < a->nr_entries) {
		snprintf(err, len, "--nr_loops (%u) must be at least --nr_entries (%u)",
			 a->nr_loops, a->nr_entries);
		return -EINVAL;
	}
	return 0;
}

/* The fixed part of every key: word j >= 1 = 2654435761 * j. */
void lookup_key_pattern(uint8_t *key)
{
	for (uint32_t j = 0; j < LOOKUP_MAX_KEY / 4; j++) {
		uint32_t w = j ? KEY_WORD_MULT * j : 0;

		memcpy(key + 4 * j, &w, 4);
	}
}

void lookup_key_set(uint8_t *key, uint32_t i)
{
	uint32_t w = i + 1;

	memcpy(key, &w, 4);
}

/* ---- library backend ---- */

struct lookup_lib {
	struct bpfmap *map;
	uint32_t key_size, nr_entries, nr_outer;
	uint32_t bulk; /* keys per bpfmap_lookup_bulk(), 0: bpfmap_lookup() */
	bool full_width;
	bpfmap_lookup_fn lookup; /* bpfmap_lookup_func(map), or bpfmap_lookup */
	bool copy_out;		 /* --copy_out: bpfmap_lookup_elem() */
	bool writer; /* --writer: w runs */
	struct bench_writer w;
	struct bench_cpu_stats stats[BENCH_MAX_PRODUCERS];
};

/* --copy_out: the syscall view, bpfmap_lookup_elem(), as a lookup function
 * (non-NULL when found), into a per-thread buffer as large as a value may
 * be here. */
static void *lookup_copy_out(struct bpfmap *map, const void *key)
{
	static __thread uint64_t buf[BENCH_MAX_VALUE / 8];

	return bpfmap_lookup_elem(map, key, buf) ? NULL : buf;
}

static void *lookup_lib_setup(const struct bench_args *a, const struct bench_env *env,
			      struct cell_result *r)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = a->map_flags);
	uint8_t key[LOOKUP_MAX_KEY], *value;
	struct lookup_lib *st;

	st = aligned_alloc(64, sizeof(*st));
	if (st) /* before any goto fail, which frees st->map */
		memset(st, 0, sizeof(*st));
	value = calloc(1, bench_value_bytes(a->map_type, a->value_size));
	if (!st || !value) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		goto fail;
	}
	if (a->copy_out && bench_value_bytes(a->map_type, a->value_size) > BENCH_MAX_VALUE) {
		snprintf(r->error, sizeof(r->error), "--copy_out takes values up to %d bytes",
			 BENCH_MAX_VALUE);
		goto fail;
	}
	st->key_size = a->key_size;
	st->nr_entries = a->nr_entries;
	st->nr_outer = a->nr_loops / a->nr_entries;
	st->full_width = a->full_width_keys;
	st->bulk = a->bulk;
	st->map = bpfmap_create(a->map_type, "bench", a->key_size, a->value_size, a->max_entries,
				&opts);
	if (!st->map) {
		snprintf(r->error, sizeof(r->error), "bpfmap_create(%s): %s",
			 map_type_name(a->map_type), strerror(errno));
		goto fail;
	}
	lookup_key_pattern(key);
	for (uint32_t i = 0; i < a->nr_entries; i++) {
		uint64_t v = i;
		int ret;

		lookup_key_set(key, i);
		bench_value_fill(value, a->map_type, a->value_size, v);
		ret = bpfmap_update_elem(st->map, key, value, BPFMAP_ANY);
		if (ret) {
			snprintf(r->error, sizeof(r->error), "inserting key %u: %s", i,
				 strerror(-ret));
			goto fail;
		}
	}
	st->copy_out = a->copy_out;
	st->lookup = a->copy_out     ? lookup_copy_out
		     : a->via_lookup ? bpfmap_lookup
				     : bpfmap_lookup_func(st->map);
	if (a->writer) {
		if (writer_start(&st->w, env, st->map, -1, a, r))
			goto fail;
		st->writer = true;
	}
	free(value);
	return st;
fail:
	if (st)
		bpfmap_free(st->map);
	free(st);
	free(value);
	return NULL;
}

/*
 * One run, the selftest's way: a 4-byte store of i + 1, then the lookup.
 * The lookup is an out-of-line call into the library, so the store really
 * reaches memory before the hash reads the key, as in the kernel.
 */
static uint64_t lookup_run_patched(struct bpfmap *map, bpfmap_lookup_fn lookup, uint8_t *key,
				   uint32_t nr_outer, uint32_t nr_entries)
{
	for (uint32_t o = 0; o < nr_outer; o++)
		for (uint32_t i = 0; i < nr_entries; i++) {
			lookup_key_set(key, i);
			if (__builtin_expect(!lookup(map, key), 0))
				return 1;
		}
	return 0;
}

/* The same with bpfmap_lookup_elem() called directly, as a C program calls
 * it: no adapter to the lookup-function shape between the loop and it. */
static uint64_t lookup_run_copy(struct bpfmap *map, uint8_t *key, uint32_t nr_outer,
				uint32_t nr_entries)
{
	uint64_t value[BENCH_MAX_VALUE / 8];

	for (uint32_t o = 0; o < nr_outer; o++)
		for (uint32_t i = 0; i < nr_entries; i++) {
			lookup_key_set(key, i);
			if (__builtin_expect(bpfmap_lookup_elem(map, key, value) != 0, 0))
				return 1;
		}
	return 0;
}

typedef uint32_t v4u32 __attribute__((vector_size(16)));

/* One run with the changing head of the key written by one wide store. */
static uint64_t lookup_run_wide(struct bpfmap *map, bpfmap_lookup_fn lookup, uint8_t *key,
				uint32_t key_size, uint32_t nr_outer, uint32_t nr_entries)
{
	if (key_size >= 16) {
		v4u32 head;

		memcpy(&head, key, sizeof(head));
		for (uint32_t o = 0; o < nr_outer; o++)
			for (uint32_t i = 0; i < nr_entries; i++) {
				head[0] = i + 1;
				memcpy(key, &head, sizeof(head)); /* one 16-byte store */
				if (__builtin_expect(!lookup(map, key), 0))
					return 1;
			}
		return 0;
	}
	if (key_size >= 8) {
		uint32_t w1;

		memcpy(&w1, key + 4, 4);
		for (uint32_t o = 0; o < nr_outer; o++)
			for (uint32_t i = 0; i < nr_entries; i++) {
				uint64_t head = (uint64_t)(i + 1) | (uint64_t)w1 << 32;

				memcpy(key, &head, 8); /* one 8-byte store (little-endian) */
				if (__builtin_expect(!lookup(map, key), 0))
					return 1;
			}
		return 0;
	}
	return lookup_run_patched(map, lookup, key, nr_outer, nr_entries);
}

/*
 * One run in groups of `bulk` keys: each key of the group gets word 0 patched
 * with a 4-byte store (the selftest's per-lookup work), then one
 * bpfmap_lookup_bulk() call looks the group up.
 */
static uint64_t lookup_run_bulk(struct bpfmap *map, const uint8_t *pattern, uint32_t key_size,
				uint32_t bulk, uint32_t nr_outer, uint32_t nr_entries)
{
	uint8_t keys[BENCH_MAX_BULK * LOOKUP_MAX_KEY] __attribute__((aligned(64)));
	void *values[BENCH_MAX_BULK];
	uint64_t misses = 0;

	for (uint32_t j = 0; j < bulk; j++)
		memcpy(keys + (size_t)j * key_size, pattern, key_size);
	for (uint32_t o = 0; o < nr_outer; o++)
		for (uint32_t i = 0; i < nr_entries; i += bulk) {
			uint32_t m = nr_entries - i < bulk ? nr_entries - i : bulk;

			for (uint32_t j = 0; j < m; j++)
				lookup_key_set(keys + (size_t)j * key_size, i + j);
			misses += m - (uint32_t)bpfmap_lookup_bulk(map, keys, m, values);
		}
	return misses;
}

static void lookup_lib_producer(void *arg, int idx, int nr, atomic_bool *stop)
{
	struct lookup_lib *st = arg;
	uint8_t key[LOOKUP_MAX_KEY] __attribute__((aligned(64)));
	bool wide = st->full_width && st->key_size >= 8 &&
		    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

	(void)nr;
	lookup_key_pattern(key);
	/* At least one run, however short -d is. */
	do {
		uint64_t t0, misses;

		t0 = thread_cpu_ns();
		bpfmap_read_lock();
		if (st->bulk)
			misses = lookup_run_bulk(st->map, key, st->key_size, st->bulk, st->nr_outer,
						 st->nr_entries);
		else if (wide)
			misses = lookup_run_wide(st->map, st->lookup, key, st->key_size,
						 st->nr_outer, st->nr_entries);
		else if (st->copy_out)
			misses = lookup_run_copy(st->map, key, st->nr_outer, st->nr_entries);
		else
			misses = lookup_run_patched(st->map, st->lookup, key, st->nr_outer,
						    st->nr_entries);
		bpfmap_read_unlock();
		/* A run with a miss counts none of its lookups (a rate of
		 * nothing), and the producer stops: every key should hit.  The
		 * kernel's program counts its misses and goes on. */
		seq_stats_add(&st->stats[idx], misses ? 0 : (uint64_t)st->nr_outer * st->nr_entries,
			      thread_cpu_ns() - t0, misses);
		if (misses)
			break; /* a bug in the map: stop, the result line says so */
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
}

static void lookup_lib_measure(void *arg, struct counters *c)
{
	struct lookup_lib *st = arg;

	for (int i = 0; i < BENCH_MAX_PRODUCERS; i++)
		stats_read(&st->stats[i], c);
}

static void lookup_lib_finish(void *arg, struct cell_result *r)
{
	struct lookup_lib *st = arg;

	r->mem_bytes = (double)bpfmap_mem_usage(st->map);
	if (st->writer)
		writer_finish(&st->w, r);
	if (st->bulk)
		snprintf(r->note, sizeof(r->note), "bpfmap_lookup_bulk, %u keys a call", st->bulk);
	else if (st->copy_out)
		snprintf(r->note, sizeof(r->note), "bpfmap_lookup_elem(), each value copied out");
	else
		snprintf(r->note, sizeof(r->note), "%s%s",
			 st->lookup == bpfmap_lookup ? "through bpfmap_lookup()" : "bpfmap_lookup_func()",
			 st->full_width ? ", full-width key stores" : "");
}

static void lookup_lib_teardown(void *arg)
{
	struct lookup_lib *st = arg;

	if (st->writer)
		writer_stop(&st->w);
	bpfmap_free(st->map);
	free(st);
}

const struct cell_ops lookup_lib_ops = {
	.backend = "lib",
	.setup = lookup_lib_setup,
	.producer = lookup_lib_producer,
	.measure = lookup_lib_measure,
	.finish = lookup_lib_finish,
	.teardown = lookup_lib_teardown,
};

/* ---- kernel backend ---- */

struct lookup_kern {
	struct kbpf k;
	struct lookup_state *s;
	int fd;      /* hash_map */
	bool writer; /* --writer: w runs */
	struct bench_writer w;
};

static int lookup_configure(struct bpf_object *obj, void *arg, char *err, size_t len)
{
	const struct bench_args *a = arg;
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "hash_map");

	if (!map) {
		snprintf(err, len, "no hash_map in the object");
		return -ENOENT;
	}
	if (bpf_map__set_type(map, a->map_type) || bpf_map__set_key_size(map, a->key_size) ||
	    bpf_map__set_value_size(map, a->value_size) ||
	    bpf_map__set_max_entries(map, a->max_entries) ||
	    bpf_map__set_map_flags(map, a->map_flags)) {
		snprintf(err, len, "cannot size the map");
		return -EINVAL;
	}
	return 0;
}

struct lookup_fill {
	uint32_t map_type, key_size, value_size;
	uint8_t key[LOOKUP_MAX_KEY]; /* the pattern, word 0 patched per key */
};

/* Key i and value i, for kbpf_fill(): only key_size bytes of the key (the
 * keys are packed), the low ones of word 0 for keys shorter than 4 bytes. */
static void lookup_make(void *key, void *value, uint32_t i, void *arg)
{
	struct lookup_fill *f = arg;
	uint64_t v = i;

	lookup_key_set(f->key, i);
	memcpy(key, f->key, f->key_size);
	bench_value_fill(value, f->map_type, f->value_size, v);
}

static void *lookup_kern_setup(const struct bench_args *a, const struct bench_env *env,
			       struct cell_result *r)
{
	struct lookup_kern *st = aligned_alloc(64, sizeof(*st));
	struct lookup_fill fill = { .map_type = a->map_type, .key_size = a->key_size,
				    .value_size = a->value_size };

	if (!st) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return NULL;
	}
	memset(st, 0, sizeof(*st));
	if (kbpf_load(&st->k, bpf_obj_lookup, bpf_obj_lookup_len, "lookup", lookup_configure,
		      (void *)a, r->error, sizeof(r->error)))
		goto fail_free;
	if (st->k.bss_size < sizeof(*st->s)) {
		snprintf(r->error, sizeof(r->error), ".bss is %zu bytes, expected %zu",
			 st->k.bss_size, sizeof(*st->s));
		goto fail;
	}
	st->s = st->k.bss;
	st->s->key_size = a->key_size;
	st->s->nr_entries = a->nr_entries;
	st->s->nr_outer = a->nr_loops / a->nr_entries;
	lookup_key_pattern(fill.key);
	for (int c = 0; c < BENCH_MAX_CPUS; c++)
		memcpy(st->s->key[c], fill.key, LOOKUP_MAX_KEY);

	st->fd = kbpf_map_fd(&st->k, "hash_map");
	if (kbpf_fill(st->fd, a->nr_entries, a->key_size,
		      bench_value_bytes(a->map_type, a->value_size), lookup_make, &fill,
		      r->error, sizeof(r->error)))
		goto fail;
	snprintf(r->note, sizeof(r->note), "%s", st->k.note);
	if (a->writer) {
		if (writer_start(&st->w, env, NULL, st->fd, a, r))
			goto fail;
		st->writer = true;
	}
	kbpf_gate_open(&st->s->gate);
	return st;
fail:
	kbpf_close(&st->k);
fail_free:
	free(st);
	return NULL;
}

static void lookup_kern_measure(void *arg, struct counters *c)
{
	struct lookup_kern *st = arg;

	for (int i = 0; i < BENCH_MAX_CPUS; i++)
		stats_read(&st->s->cpu[i], c);
}

static void lookup_kern_finish(void *arg, struct cell_result *r)
{
	struct lookup_kern *st = arg;
	long long m = kbpf_memlock(st->fd);

	if (m >= 0)
		r->mem_bytes = (double)m;
	if (st->writer)
		writer_finish(&st->w, r);
}

static void lookup_kern_teardown(void *arg)
{
	struct lookup_kern *st = arg;

	if (st->writer)
		writer_stop(&st->w);
	kbpf_gate_close(&st->s->gate);
	kbpf_close(&st->k);
	free(st);
}

const struct cell_ops lookup_kernel_ops = {
	.backend = "kernel",
	.setup = lookup_kern_setup,
	.producer = kbpf_producer,
	.measure = lookup_kern_measure,
	.finish = lookup_kern_finish,
	.teardown = lookup_kern_teardown,
};

/* ---- the benchmarks ---- */

static int rlookup_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	uint32_t flags_given = a->map_flags;
	struct bench_args ka;
	char err[160];

	/* As the rhash seed: RHASH is never preallocated; the kernel has no
	 * RHASH, so its column is its fixed HASH of the same max_entries. */
	a->map_type = BPFMAP_TYPE_RHASH;
	a->map_flags |= BPFMAP_F_NO_PREALLOC;
	/* RHASH refuses ZERO_SEED (the kernel's too): the kernel's HASH keeps
	 * it, as the seeds' runs pass it. */
	a->map_flags &= ~(uint32_t)BPFMAP_F_ZERO_SEED;
	if (lookup_args_fill(a, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", b->name, err);
		return 2;
	}
	ka = *a;
	ka.map_type = BPFMAP_TYPE_HASH;
	ka.map_flags &= ~BPFMAP_F_NO_PREALLOC;
	ka.map_flags |= flags_given & BPFMAP_F_ZERO_SEED;
	ka.full_width_keys = false;
	return run_pair(b, env, a, &ka, &lookup_lib_ops, &lookup_kernel_ops, "lookup");
}

static int lookup_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	struct bench_args ka;
	char err[160];

	if (a->map_type == BPFMAP_TYPE_RHASH) /* --map_type rhash: as bpf-rhashmap-lookup */
		return rlookup_run(b, env, a);
	if (lookup_args_fill(a, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", b->name, err);
		return 2;
	}
	/* The kernel program always patches the key with the selftest's
	 * 4-byte store. */
	ka = *a;
	ka.full_width_keys = false;
	return run_pair(b, env, a, &ka, &lookup_lib_ops, &lookup_kernel_ops, "lookup");
}

static bool type_is_percpu(uint32_t type)
{
	return type == BPFMAP_TYPE_PERCPU_HASH || type == BPFMAP_TYPE_LRU_PERCPU_HASH;
}

uint32_t bench_value_bytes(uint32_t type, uint32_t value_size)
{
	int cpus = bpfmap_num_possible_cpus();

	if (!type_is_percpu(type))
		return value_size;
	return (value_size + 7) / 8 * 8 * (uint32_t)(cpus > 0 ? cpus : 1);
}

void bench_value_fill(void *buf, uint32_t type, uint32_t value_size, uint64_t v)
{
	uint32_t bytes = bench_value_bytes(type, value_size);
	uint32_t stride = type_is_percpu(type) ? (value_size + 7) / 8 * 8 : bytes;

	memset(buf, 0, bytes);
	for (uint32_t off = 0; off < bytes; off += stride)
		memcpy((char *)buf + off, &v, sizeof(v));
}

/* Available once bpfmap_create() accepts the type. */
bool bench_map_type_available(uint32_t type, char *why, size_t len)
{
	struct bpfmap *m = bpfmap_create(type, NULL, 4, 8, 16, NULL);

	if (m) {
		bpfmap_free(m);
		return true;
	}
	snprintf(why, len, "bpfmap has no %s map yet (bpfmap_create: %s)", map_type_name(type),
		 strerror(errno));
	return false;
}

bool bench_rhash_available(char *why, size_t len)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 4, 8, 16, &o);

	if (m) {
		bpfmap_free(m);
		return true;
	}
	snprintf(why, len, "bpfmap has no RHASH map (bpfmap_create: %s)", strerror(errno));
	return false;
}

const struct bench bench_lookup = {
	.name = "bpf-hashmap-lookup",
	.summary = "HASH lookups of nr_entries keys, M lookups/s (the lookup seeds' grid)",
	.run = lookup_run,
};

const struct bench bench_rlookup = {
	.name = "bpf-rhashmap-lookup",
	.summary = "the same on RHASH (kernel column: its fixed HASH)",
	.run = rlookup_run,
	.available = bench_rhash_available,
};
